#!/usr/bin/env bash
# The main job: install what is missing, build, then compile a bundled ONNX
# transformer (GPT-2, 2 layers, random weights; models/) for the CPU, run it
# on its stored inputs and compare with onnxruntime's outputs.
# usage: scripts/run-model.sh [MODEL_DIR] [run_onnx_model.py options]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=${1:-$root/models/gpt2_tiny_dynamo}
shift || true
build=${FP8_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh" "$build" >/dev/null
/usr/bin/python3 "$root/scripts/run_onnx_model.py" "$model" --build "$build" "$@"
