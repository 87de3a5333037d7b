#!/usr/bin/env bash
# Builds the libFuzzer target (clang, -fsanitize=fuzzer,address,undefined)
# in its own build directory and fuzzes ONNX import + verification +
# fp8-quantize-pipeline from the seed corpus. docs/Fuzzing.md.
#
# usage: scripts/fuzz.sh [options] [-- libFuzzer flags...]
#   --build DIR     build directory (default: ./build-fuzz)
#   --runs N        stop after N executions (libFuzzer -runs)
#   --time S        stop after S seconds (default 60; -max_total_time)
#   --jobs N        N fuzzing processes (libFuzzer -jobs/-workers)
#   --no-build      use the fuzzer already built
# The corpus grows in DIR/corpus (kept between runs); seeds are rebuilt in
# DIR/seeds by scripts/fuzz-seeds.py; crashes, leaks, timeouts and OOMs are
# written to DIR/artifacts/. Exit status: libFuzzer's (0: nothing found).
# Each finding becomes a file in test/Import/fuzz-regressions/ (replayed by
# the test suite).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-fuzz
runs=""
time_s=60
jobs=""
do_build=1
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; time_s=""; shift 2 ;;
    --time) time_s=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --) shift; break ;;
    *) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in clang clang++; do
  command -v $tool >/dev/null || {
    echo "fuzz.sh: needs $tool (apt-get install clang libclang-rt-dev)" >&2
    exit 2
  }
done
if [[ ! -f $(clang -print-file-name=libclang_rt.fuzzer-x86_64.a) ]]; then
  echo "fuzz.sh: no libFuzzer runtime for clang (apt-get install libclang-rt-14-dev)" >&2
  exit 2
fi

if ((do_build)); then
  if [[ ! -f $build/build.ninja ]]; then
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DFP8_ENABLE_FUZZER=ON -DFP8_ENABLE_TESTS=OFF >/dev/null
  fi
  cmake --build "$build" --target fp8-onnx-fuzzer fp8-fuzz-replay -- -j2
fi

mkdir -p "$build/corpus" "$build/artifacts"
/usr/bin/python3 "$root/scripts/fuzz-seeds.py" "$build/seeds" \
  --dict "$build/onnx.dict" --max-len 65536

args=(
  "$build/corpus" "$build/seeds"
  -dict="$build/onnx.dict"
  -max_len=65536
  # Out of memory is a finding only past 2 GiB: the importer's budgets (the
  # fuzz target sets 2^20 elements for constants) keep honest models far
  # below it.
  -rss_limit_mb=2048
  -timeout=25
  -artifact_prefix="$build/artifacts/"
  -print_final_stats=1
)
[[ -n $runs ]] && args+=(-runs="$runs")
[[ -n $time_s ]] && args+=(-max_total_time="$time_s")
[[ -n $jobs ]] && args+=(-jobs="$jobs" -workers="$jobs")
set -x
exec "$build/bin/fp8-onnx-fuzzer" "${args[@]}" "$@"
