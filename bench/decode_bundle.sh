#!/usr/bin/env bash
# bench/decode_bundle.sh - compile, here, the libraries of issue 14's
# end-to-end decode measurement (bench/decode_h200.py runs them on the GPU
# machine, against transformers, in one call).
#
# usage: bench/decode_bundle.sh MODEL_DIR OUT [RECIPE] [PREFILL] [CAPACITY]
#
# MODEL_DIR: a decoder step with its KV cache as tensors
# (bench/export_llama8b_decoder.py, grown to 32 layers by
# bench/grow_llama_layers.py) with model.onnx.data written by
# scripts/fill_external_data.py and constants.npz. OUT gets model.onnx,
# constants.npz, fill_external_data.py, the static fp8-pack, the fp8rt
# package, decode_h200.py and libs/: prefill-sPREFILL (batch 1, PREFILL
# tokens, nothing cached) and decode-b1, decode-b8 (one token per sequence
# over CAPACITY slots of an E4M3 KV cache updated in place:
# --kv-cache e4m3 --kv-cache-in-place), each RECIPE (default rowwise) for
# sm_90a with its weights manifest (--pack-weights=false: packed there).
# FP8_BUNDLE_FLAGS: more fp8-compile flags for every library (e.g.
# --attention-decode-kernel=false, the build bench/compare_decode_libs.py
# checks the decode kernel against).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FP8_BUILD_DIR:-$root/build}
src=$1 out=$2 recipe=${3:-rowwise} prefill=${4:-2048} capacity=${5:-2080}
mkdir -p "$out/libs"
cp "$src/model.onnx" "$src/constants.npz" "$root/scripts/fill_external_data.py" \
  "$build/bin/fp8-pack" "$root/bench/decode_h200.py" "$out/"
cp -r "$root/runtime/python/fp8rt" "$out/"
# --input-shape for BATCH sequences of TOKENS new tokens over PAST slots.
shapes() {
  /usr/bin/python3 - "$src/model.onnx" "$@" <<'PY'
import sys, onnx
model, batch, tokens, past = sys.argv[1], *map(int, sys.argv[2:])
out = []
for i in onnx.load(model, load_external_data=False).graph.input:
    d = [x.dim_value or x.dim_param for x in i.type.tensor_type.shape.dim]
    if i.name.startswith("past_key_values."):
        d = [batch, d[1], past, d[3]]
    elif i.name == "attention_mask":
        d = [batch, past + tokens]
    else:
        d = [batch, tokens]
    out.append(f"{i.name}={'x'.join(map(str, d))}")
print(",".join(out))
PY
}
compile() { # NAME SHAPES FLAGS...
  local name=$1 shape=$2; shift 2
  /usr/bin/time -f "$name: %e s, %M KB" "$build/bin/fp8-compile" "$src/model.onnx" \
    -o "$out/libs/$name.so" --target=sm_90a --recipe="$recipe" --pack-weights=false \
    --kv-cache e4m3 --input-shape "$shape" --quiet ${FP8_BUNDLE_FLAGS:-} "$@"
}
compile "prefill-s$prefill" "$(shapes 1 "$prefill" 0)" &
prefill_job=$!
compile decode-b1 "$(shapes 1 1 $((capacity - 1)))" --kv-cache-in-place
wait "$prefill_job" # (a bare wait would hide its failure)
compile decode-b8 "$(shapes 8 1 $((capacity - 1)))" --kv-cache-in-place
du -sh "$out" "$out"/libs/*
