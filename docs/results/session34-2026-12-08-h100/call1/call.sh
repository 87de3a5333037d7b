#!/usr/bin/env bash
G=.devrun/gb
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/device.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu | head -1)
echo "ncu=$NCU" >> $OUT/device.txt
for r in 1 2; do for b in gemm_bench gemm_bench_cluster; do for p in tensorwise_8192x4096x28672 blockmm_8192x4096x28672 tensorwise_4096x4096x4096; do echo "== $b $p"; timeout 60 $G/$b --only $p | grep -E "perf_|FAIL" ; done; done; done > $OUT/ab.txt 2>&1
cat $OUT/ab.txt | sed -E 's/rel_l2.*time/time/'
for b in gemm_bench_cluster gemm_bench; do
timeout 120 $NCU --launch-count 1 -k regex:tensorwise_8192x4096x28672 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section SourceCounters $G/$b --only tensorwise_8192x4096x28672 > $OUT/ncu-$b.txt 2>&1
echo "ncu $b rc=$?"
done
grep -E "Max Active Clusters|Cluster Size|Duration|L2 Cache Throughput|Compute \(SM\)|Warp Cycles Per Issued" $OUT/ncu-*.txt
mkdir -p /tmp/res
timeout 150 python3 bench/layer/layer_h200.py .devrun/lb7 /tmp/res/layer > /tmp/res/layer.txt 2>&1
echo "layer rc=$?"
tar -C /tmp -czf $OUT/res.tar.gz res
grep -v Warning /tmp/res/layer.txt | tail -6
