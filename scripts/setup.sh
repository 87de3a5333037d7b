#!/usr/bin/env bash
# Installs every system package fp8-opt needs (Debian 12). Idempotent and quiet
# when everything is already present; run as root or with sudo available.
# PKGS lists every package whose files the build, the scripts and the tests
# use directly, not only what pulls them in: test/Tools/deps.test
# (scripts/check_deps.py) fails on any Python module or lit program that comes
# from a package not listed here (docs/Testing.md, "Dependencies").
set -euo pipefail

PKGS=(
  build-essential gcc-12 cmake ninja-build ccache git
  llvm-22 llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libzstd-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libonnx-testdata
  libgtest-dev nlohmann-json3-dev
  clang libclang-rt-14-dev
  python3 python3-minimal python3-numpy python3-onnx python3-protobuf
  python3-matplotlib
  python3-pip python3-setuptools python3-venv python3-wheel
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js (for the onnxruntime-node reference) may come from a non-Debian
# package that already bundles npm; only ask apt for it when absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "fp8-opt setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
