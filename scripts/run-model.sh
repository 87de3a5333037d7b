#!/usr/bin/env bash
# The main job: install what is missing, build, then compile a bundled ONNX
# transformer (GPT-2, 2 layers, random weights; models/) for the CPU, in FP32
# and with FP8 block scaling (1x128 activations, 128x128 weights), run both
# on the stored inputs and compare with onnxruntime's FP32 outputs. Where the
# CUDA toolkit is, also compile FP8 block for Hopper (sm_90a), and run it
# when this machine has a Hopper GPU.
# usage: scripts/run-model.sh [MODEL_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=${1:-$root/models/gpt2_tiny_dynamo}
build=${FP8_BUILD_DIR:-$root/build}
# The build's progress goes to a log (installs still report on stderr); a
# failed build shows the log's end.
mkdir -p "$build"
if ! bash "$root/scripts/build.sh" "$build" >"$build/run-model-build.log"; then
  echo "run-model.sh: the build failed; the end of $build/run-model-build.log:" >&2
  tail -n 40 "$build/run-model-build.log" >&2
  exit 1
fi
echo "== FP32 (must match onnxruntime: relative L2 <= 1e-5)"
/usr/bin/python3 "$root/scripts/run_onnx_model.py" "$model" --build "$build"
echo "== FP8 E4M3, block scaling (bound: relative L2 <= 0.1)"
/usr/bin/python3 "$root/scripts/run_onnx_model.py" "$model" --build "$build" \
  --recipe block --rtol 0.1
if [ -x /usr/local/cuda/bin/ptxas ] || [ -n "${CUDA_ROOT:-}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 &&
     nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -q '^9\.0'; then
    echo "== FP8 E4M3, block scaling, on the GPU (sm_90a, wgmma) (bound: relative L2 <= 0.1)"
    /usr/bin/python3 "$root/scripts/run_onnx_model.py" "$model" --build "$build" \
      --recipe block --rtol 0.1 --target sm_90a
  else
    echo "== FP8 E4M3, block scaling, compiled for the GPU (sm_90a; no Hopper GPU here to run it)"
    /usr/bin/python3 "$root/scripts/run_onnx_model.py" "$model" --build "$build" \
      --recipe block --target sm_90a --compile-only
  fi
fi
