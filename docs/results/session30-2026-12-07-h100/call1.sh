#!/bin/bash
# 32-layer decode b1/b8 (tensor-core decode attention) + the transformers peer; the layer alone for block/rowwise/current
cd "$(dirname "$0")/.."; R=$OUT; mkdir -p /tmp/o
T0=$(date +%s); t() { echo "$1 $(( $(date +%s) - T0 )) s" >> $R/log.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/log.txt
python3 l32/decode_h200.py l32 /tmp/o/l32w --phases weights --libs 'decode-b[18]$' > $R/weights.txt 2>&1; t weights
for r in 1 2; do for b in 1 8; do
  timeout 30 python3 l32/decode_h200.py l32 /tmp/o/d$b$r --phases decode --libs "decode-b$b\$" >> $R/decode.txt 2>&1; t decode-b$b-$r
done; done
timeout 200 python3 l32/decode_h200.py l32 /tmp/o/peer --phases peer > $R/peer.txt 2>&1; t peer
cd ..; timeout 240 python3 bench/layer/layer_h200.py .devrun/lb2 $R/layer --peer .devrun/peers/h200_layer.py > $R/layer.txt 2>&1; t layer
