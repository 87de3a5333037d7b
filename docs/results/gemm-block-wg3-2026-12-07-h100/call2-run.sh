#!/bin/bash
# session 29 call 2: three consumer warpgroups (192-row tiles) for block-scaled GEMMs vs 256-row two-band tiles
cd "$(dirname "$0")"; R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/ab.txt
./gemm_test_wg3 > $R/wg3.txt 2>&1; echo "wg3 rc=$?" >> $R/ab.txt
grep -c PASS $R/wg3.txt >> $R/ab.txt; grep FAIL $R/wg3.txt >> $R/ab.txt
for r in 1 2 3; do for b in gemm_bench gemm_bench_c3u gemm_bench_c3s; do for o in block_8192 block_4096; do
  echo "== $b $o r$r" >> $R/ab.txt; ./$b --only $o 2>&1 | grep "perf_" >> $R/ab.txt
done; done; done
cd ../..; timeout 200 python3 bench/gemm/gemm_table.py .devrun/gb2/gemm_bench_c3u - --only block_8 --only block_4 > $R/table.txt 2>&1
