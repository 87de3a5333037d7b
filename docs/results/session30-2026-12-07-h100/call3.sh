#!/bin/bash
# correctness of the word-descriptor / scale-order build (all gemm_test variants, in parallel), then the layer: new (lb3) vs c1bd202 (lb2)
cd "$(dirname "$0")/.."; R=$OUT
T0=$(date +%s); t() { echo "$1 $(( $(date +%s) - T0 )) s" >> $R/logC.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/logC.txt
(cd gb5 && for x in gemm_test gemm_test_tma gemm_test_wg3 gemm_test_bands gemm_test_fast; do
  (timeout 230 ./$x --no-perf > $R/$x.txt 2>&1; echo "$x rc=$? pass=$(grep -c ^PASS $R/$x.txt) fail=$(grep -c ^FAIL $R/$x.txt)" >> $R/logC.txt) &
done; wait); t tests
cd ..; timeout 200 python3 bench/layer/layer_h200.py .devrun/lb3 $R/layer3 --peer .devrun/peers/h200_layer.py > $R/layer3.txt 2>&1; t layer3
timeout 120 python3 bench/layer/layer_h200.py .devrun/lb2 $R/layer2 > $R/layer2.txt 2>&1; t layer2
