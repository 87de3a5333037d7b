#!/usr/bin/env bash
# usage: run.sh <fp8-opt build dir> <consumer source dir> <scratch dir> <MLIR_DIR> <model dir>
# Installs fp8-opt into <scratch>/prefix, then configures, builds and runs
# the consumer project against that prefix alone.
set -euo pipefail
build=$1 src=$2 work=$3 mlir_dir=$4 model=$5
rm -rf "$work/prefix" "$work/build"
mkdir -p "$work"
log="$work/log.txt"
step() {
  if ! "$@" >"$log" 2>&1; then
    echo "consumer-package: step failed: $*" >&2
    cat "$log" >&2
    exit 1
  fi
}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
step cmake --install "$build" --prefix "$work/prefix"
step cmake -G Ninja -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DMLIR_DIR="$mlir_dir" "${launcher[@]}"
step cmake --build "$work/build"
# The compile API: the consumer compiles the model into a library (block
# recipe, the runtime archive from the prefix), and fp8-run runs it.
"$work/build/fp8-consumer" "$model/model.onnx" "$work/api.so" "$work/prefix/lib"
"$work/prefix/bin/fp8-run" "$work/api.so" --data "$model/test_data_set_0" --rtol 0.1
# The installed tools work from the prefix alone: fp8-compile finds the
# runtime archive in <prefix>/lib, and the library runs under fp8-run.
step "$work/prefix/bin/fp8-compile" "$model/model.onnx" -o "$work/model.so" --quiet
"$work/prefix/bin/fp8-run" "$work/model.so" --data "$model/test_data_set_0"
