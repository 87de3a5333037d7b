#!/bin/bash
# session 28 call 1: decode attention: tensor-core loop for power-of-two cache scales (new) vs session 27 (base) vs CUDA-core fold + fma (fma) vs fold only (d2 identity);
# attention_test decode cases; 2-layer agreement; 32-layer b1/b8 step; GEMV probe; ncu of decode GEMMs; profiles
cd "$(dirname "$0")"
R=$OUT; mkdir -p /tmp/o
T0=$(date +%s); t() { echo "$1 $(( $(date +%s) - T0 )) s" >> $R/log.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/log.txt
timeout 40 gt/attention_test --only decode > $R/attention-test.txt 2>&1; t atest
( python3 l32/decode_h200.py l32 /tmp/o/l32w --phases weights --libs 'decode-b[18]$' > $R/l32-weights.txt 2>&1 ) &
python3 d2/decode_h200.py d2 /tmp/o/d2 --phases weights --libs 'decode-b[18]$' > $R/d2-weights.txt 2>&1; t d2w
P=$(pwd); mkdir -p d2/base d2f/libs
for x in $(ls d2); do [ $x = libs ] || ln -sfn $P/d2/$x d2f/$x; done
for b in 1 8; do
  ln -sf $P/d2/libs/decode-base-b$b.so d2/base/decode-b$b.so; ln -sf $P/d2/libs/decode-b$b.fp8w.json d2/base/
  cp d2/fold/decode-b$b.so d2f/libs/; ln -sf $P/d2/libs/decode-b$b.fp8w.json $P/d2/libs/decode-b$b.fp8w d2f/libs/
done
{ echo "== new (tensor-core loop) vs base (session 27)"; timeout 60 python3 d2/compare_decode_libs.py d2 d2/base --steps 8
  echo "== fold only vs base: expect identical"; timeout 60 python3 d2f/compare_decode_libs.py d2f d2/base --steps 8; } > $R/d2-compare.txt 2>&1; t d2cmp
wait; t l32w
for b in 1 8; do ln -sf decode-b$b.fp8w l32/libs/decode-base-b$b.fp8w; ln -sf decode-b$b.fp8w l32/libs/decode-fma-b$b.fp8w; done
round() { for b in 1 8; do for v in "" base; do
  n=decode-${v:+$v-}b$b; timeout 40 python3 l32/decode_h200.py l32 /tmp/o/d$b$1$v --phases decode --libs "$n\$" >> $R/l32-decode.txt 2>&1; t $n-$1
done; done; }
round 1
FP8RT_CUDA_PROFILE=1 FP8RT_CUDA_PROFILE_TOP=400 timeout 45 python3 l32/decode_h200.py l32 /tmp/o/p8 --phases decode --libs "decode-b8\$" --no-graph --steps 4 > $R/profile-b8.txt 2>&1; t prof-b8
round 2
for s in 1x14336x4096; do
  timeout 45 ncu --clock-control none --set full -k regex:rowwise_${s}_kernel --launch-skip 3 -c 1 gb/gemm_bench --only rowwise_$s > $R/ncu-$s.txt 2>&1; t ncu-$s
done
for b in 1; do
  FP8RT_CUDA_PROFILE=1 FP8RT_CUDA_PROFILE_TOP=400 timeout 60 python3 l32/decode_h200.py l32 /tmp/o/p$b --phases decode --libs "decode-b$b\$" --no-graph --steps 4 > $R/profile-b$b.txt 2>&1; t prof-b$b
done
timeout 30 probe/gemv > $R/gemv.txt 2>&1; t gemv
