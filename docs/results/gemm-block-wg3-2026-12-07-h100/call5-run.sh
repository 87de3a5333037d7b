#!/bin/bash
# session 29 call 5: block products with M-major activation scales (as models and cuBLAS use them), three consumers vs two bands
cd "$(dirname "$0")"; R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $R/log.txt
cd ../..
timeout 200 python3 bench/gemm/gemm_table.py .devrun/gb3/gemm_bench - --only block_8 --only block_4 --only blockmm_ > $R/table.txt 2>&1; echo "table rc=$?" >> $R/log.txt
cd .devrun/gb3
for r in 1 2; do for b in gemm_bench gemm_bench_bands; do
  echo "== $b blockmm r$r" >> $R/ab.txt; ./$b --only blockmm_ 2>&1 | grep "perf_" >> $R/ab.txt
done; done
timeout 100 ncu --clock-control none --set full -k regex:blockmm_8192x4096x28672_kernel --launch-skip 2 -c 1 ./gemm_bench --only blockmm_8192x4096x28672 > $R/ncu-blockmm.txt 2>&1; echo "ncu rc=$?" >> $R/log.txt
