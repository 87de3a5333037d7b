#!/usr/bin/env bash
# Installs missing system packages, then configures and builds fp8-opt.
# usage: scripts/build.sh [build-dir]   (default: ./build, or $FP8_BUILD_DIR)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${FP8_BUILD_DIR:-$root/build}}
bash "$root/scripts/setup.sh"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
cmake --build "$build"
