#!/bin/bash
# issue 11 table (HEAD kernels) + the s29 patch A/B and correctness
cd "$(dirname "$0")/.."; R=$OUT
T0=$(date +%s); t() { echo "$1 $(( $(date +%s) - T0 )) s" >> $R/logB.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/logB.txt
(cd gb4 && for t in gemm_test_tma gemm_test_wg3 gemm_test_bands; do
  timeout 60 ./$t --no-perf > $R/$t.txt 2>&1; echo "$t rc=$? pass=$(grep -c ^PASS $R/$t.txt) fail=$(grep -c ^FAIL $R/$t.txt)" >> $R/logB.txt
done); t tests
for r in 1 2; do for b in gemm_bench_new gemm_bench_head; do for o in blockmm_8192 blockmm_4096 tensorwise_8192x4096x28672; do
  echo "== $b $o r$r" >> $R/ab.txt; timeout 60 ./gb4/$b --only $o 2>&1 | grep "perf_" >> $R/ab.txt
done; done; done; t ab
cd ..; timeout 300 python3 bench/gemm/gemm_table.py .devrun/gb4/gemm_bench_head - --json $R/table.json > $R/table.txt 2>&1; t table
