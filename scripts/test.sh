#!/usr/bin/env bash
# The whole test suite: setup, build, then every test under one ctest
# (lit regression and execution tests, GTest unit tests, the installed-
# package consumer). usage: scripts/test.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${FP8_BUILD_DIR:-$root/build}}
bash "$root/scripts/build.sh" "$build"
# onnxruntime-node, the independent CPU reference of the test suite.
bash "$root/scripts/ort/install.sh" "$build/ort"
ctest --test-dir "$build" --output-on-failure -j 2
