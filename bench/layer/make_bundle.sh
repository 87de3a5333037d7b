#!/usr/bin/env bash
# Compiles issue 13's layer benchmark model here for bench/layer/layer_h200.py:
#   bench/layer/make_bundle.sh EXPORT_DIR TAG OUT [RECIPE...]
# EXPORT_DIR holds model.onnx (bench/export_llama8b.py --layers 1 --vocab 256
# --device cuda, brought back from the H200) with its weights regenerated
# here (scripts/fill_external_data.py model.onnx --constants constants.npz);
# TAG names the shape (b1-s8192, b4-s2048). Each recipe gives
# OUT/sm90-RECIPE-TAG.so + its weights manifest (--pack-weights=false: the
# weights are packed on the GPU machine from its own export), plus the static
# fp8-pack and the graph's md5 (layer_h200.py checks its export against it).
# RECIPE "bf16" is --recipe=none --high-precision=bf16 (every product BF16),
# "bf16-unfused" the same with attention decomposed (--fuse-attention=false),
# "fp32" --recipe=none (exact products). A suffix "-all" (current-all,
# rowwise-all, block-all) adds --keep-first-last=false: every linear layer
# in FP8, as in a layer in the middle of a model (the 1-layer export's
# first linear layer is the attention's q projection, its last the head).
# A suffix "-fast" (current-all-fast) adds --fast-accumulation: the whole K
# in the tensor cores' accumulator, as the torch FP8 peer's
# _scaled_mm(use_fast_accum=True) does (docs/Numerics.md: less accurate);
# "-epi" (current-all-epi, before any "-fast") adds --gemm-epilogues.
# A suffix "-fp8attn" (outermost: current-all-fast-fp8attn) adds
# --fp8-attention: the fused attention on FP8 q, k, v. A suffix "-nopp"
# (outermost of all: current-all-fast-fp8attn-nopp) adds
# --attention-ping-pong=false (the FP8 attention kernel without ping-pong).
# A suffix "-nomerge" (before "-layer": rowwise-all-fast-nomerge-layer) adds
# --merge-products=false (q, k, v and gate, up as separate GEMMs).
# A suffix "-res" / "-nores" (before "-layer" and "-tmN":
# block-all-res-layer) adds --residual-epilogues=true / =false.
# A suffix "-tmN" (before "-layer": block-all-tm256-layer) adds
# --gemm-tile-m=N: the promoting GEMMs' CTA tile M (128, 192 or 256).
# A suffix "-ieee" (before "-tmN" and "-layer": block-all-ieee-layer) adds
# --approx-narrow-math=false: f16 exp and divisions as IEEE f32 functions.
# A suffix "-warprows" (before "-ieee": rowwise-all-fast-warprows-layer)
# adds --register-rows=false (a warp a row where rows are many).
# A suffix "-fwg3" (after "-tmN", before "-warprows": block-all-fwg3-layer)
# adds --gemm-fused-three-consumers (the o product with its residual add in
# three consumer warpgroups).
# A suffix "-layer" (outermost of all: current-all-fast-layer) compiles the
# decoder layer alone (bench/layer/extract_layer.py: hidden states and
# rotary cos/sin in, the layer's output out; EXPORT_DIR/layer.onnx, made
# if absent), which is what the peer times: no embedding, final norm, head.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export_dir=$1 tag=$2 out=$3; shift 3
recipes=("$@")
[ ${#recipes[@]} -gt 0 ] || recipes=(block current rowwise bf16)
compile=${FP8_BUILD_DIR:-$root/build}/bin/fp8-compile
mkdir -p "$out"
cp "${FP8_BUILD_DIR:-$root/build}/bin/fp8-pack" "$out/"
md5sum "$export_dir/model.onnx" | awk '{print $1}' > "$out/model-$tag.md5"
for r0 in "${recipes[@]}"; do
  extra=()
  model=$export_dir/model.onnx
  r=${r0%-layer}
  if [ "$r" != "$r0" ]; then
    model=$export_dir/layer.onnx
    [ -f "$model" ] || /usr/bin/python3 "$root/bench/layer/extract_layer.py" \
      "$export_dir/model.onnx" "$model"
  fi
  if [[ $r =~ ^(.*)-tm([0-9]+)$ ]]; then
    r=${BASH_REMATCH[1]}
    extra+=(--gemm-tile-m="${BASH_REMATCH[2]}")
  fi
  rx=${r%-fwg3}
  [ "$rx" != "$r" ] && extra+=(--gemm-fused-three-consumers)
  r=$rx
  rx=${r%-warprows}
  [ "$rx" != "$r" ] && extra+=(--register-rows=false)
  r=$rx
  rx=${r%-ieee}
  [ "$rx" != "$r" ] && extra+=(--approx-narrow-math=false)
  r=$rx
  rx=${r%-nores}
  [ "$rx" != "$r" ] && extra+=(--residual-epilogues=false)
  r=$rx
  rx=${r%-res}
  [ "$rx" != "$r" ] && extra+=(--residual-epilogues=true)
  r=$rx
  rm=${r%-nomerge}
  [ "$rm" != "$r" ] && extra+=(--merge-products=false)
  r=$rm
  rp=${r%-nopp}
  [ "$rp" != "$r" ] && extra+=(--attention-ping-pong=false)
  rr=${rp%-fp8attn}
  [ "$rr" != "$rp" ] && extra+=(--fp8-attention)
  base=${rr%-fast}
  plain=${base%-epi}
  flags=(--recipe="$plain")
  case $plain in *-all) flags=(--recipe="${plain%-all}" --keep-first-last=false) ;; esac
  [ "$base" != "$rr" ] && flags+=(--fast-accumulation)
  [ "$plain" != "$base" ] && flags+=(--gemm-epilogues)
  [ "$rp" = bf16 ] && flags=(--recipe=none --high-precision=bf16)
  [ "$rp" = bf16-unfused ] && flags=(--recipe=none --high-precision=bf16 --fuse-attention=false)
  [ "$rp" = fp32 ] && flags=(--recipe=none)
  /usr/bin/time -f "$r0: %e s, %M KB" "$compile" "$model" \
    -o "$out/sm90-$r0-$tag.so" --target=sm_90a "${flags[@]}" ${extra[@]+"${extra[@]}"} \
    --pack-weights=false --quiet
done
ls -la "$out"
