#!/bin/bash
# session 29 call 3: the Llama-3-8B layer (block, 192-row tiles by default vs 256), then the GEMM A/B
cd "$(dirname "$0")/../.."; R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/ab.txt
T0=$(date +%s)
timeout 320 python3 bench/layer/layer_h200.py .devrun/lb $R/layer --peer .devrun/peers/h200_layer.py > $R/layer.txt 2>&1
echo "layer rc=$? $(( $(date +%s) - T0 )) s" >> $R/ab.txt
cd .devrun/gb2
./gemm_test_wg3 > $R/wg3.txt 2>&1; echo "wg3 rc=$? pass $(grep -c PASS $R/wg3.txt)" >> $R/ab.txt; grep FAIL $R/wg3.txt >> $R/ab.txt
for r in 1 2; do for b in gemm_bench gemm_bench_bands gemm_bench_c3s; do for o in block_8192 block_4096; do
  echo "== $b $o r$r" >> $R/ab.txt; ./$b --only $o 2>&1 | grep "perf_" >> $R/ab.txt
done; done; done
echo "end $(( $(date +%s) - T0 )) s" >> $R/ab.txt
