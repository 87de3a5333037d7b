#!/bin/bash
# session 28 call 2: 32-layer b1/b8 step, tensor-core decode attention (new) vs session 27 (base), one process each, alternating; profile of new b8
cd "$(dirname "$0")"
R=$OUT; mkdir -p /tmp/o
T0=$(date +%s); t() { echo "$1 $(( $(date +%s) - T0 )) s" >> $R/log.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/log.txt
python3 l32/decode_h200.py l32 /tmp/o/l32w --phases weights --libs 'decode-b[18]$' > $R/weights.txt 2>&1; t l32w
for b in 1 8; do ln -sf decode-b$b.fp8w l32/libs/decode-base-b$b.fp8w; done
round() { for b in 1 8; do for v in "" base; do
  n=decode-${v:+$v-}b$b; timeout 40 python3 l32/decode_h200.py l32 /tmp/o/d$b$1$v --phases decode --libs "$n\$" >> $R/decode.txt 2>&1; t $n-$1
done; done; }
round 1
FP8RT_CUDA_PROFILE=1 FP8RT_CUDA_PROFILE_TOP=400 timeout 45 python3 l32/decode_h200.py l32 /tmp/o/p8 --phases decode --libs "decode-b8\$" --no-graph --steps 4 > $R/profile.txt 2>&1; t prof-b8
round 2
FP8RT_CUDA_PROFILE=1 FP8RT_CUDA_PROFILE_TOP=400 timeout 45 python3 l32/decode_h200.py l32 /tmp/o/p1 --phases decode --libs "decode-b1\$" --no-graph --steps 4 >> $R/profile.txt 2>&1; t prof-b1
