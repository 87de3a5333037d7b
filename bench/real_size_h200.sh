#!/usr/bin/env bash
# Issue 12's check on the H200, from the repo root of a device run:
#   bench/real_size_h200.sh BUNDLE OUT [LAYERS]
# BUNDLE holds fp8-pack (static) and libraries of the Llama-3-8B-shaped model
# compiled here with --pack-weights=false (NAME.so and their manifests
# NAME.fp8w.json; e.g. sm_90a-block, cpu-none). On the GPU machine: export the model
# with its weights (torch, seed 0: the same graph, byte for byte, as
# bench/llama3-8b-2layer/model.onnx), pack each library's weights file from
# that data with fp8-pack, and run the libraries against torch on the same
# weights (bench/llama8b_logits.py). Results go to OUT.
set -euo pipefail
bundle=$1 out=$2 layers=${3:-2}
work=/tmp/llama8b-$layers
mkdir -p "$out" "$work"
python3 bench/export_llama8b.py "$work" --layers "$layers" --seq 128 | tee "$out/export.json"
md5sum "$work/model.onnx" | tee "$out/model.md5"
builds=()
for lib in "$bundle"/*.so; do
  name=$(basename "$lib" .so)
  "$bundle/fp8-pack" "$bundle/$name.fp8w.json" --data-dir "$work" -o "$work/$name.fp8w" 2>&1 | tee -a "$out/pack.txt"
  builds+=("$name=$lib:$work/$name.fp8w")
done
python3 bench/llama8b_logits.py --layers "$layers" --onnx "$work/model.onnx" "${builds[@]}" 2>&1 | tee "$out/logits.txt"
