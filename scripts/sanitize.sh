#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (with
# LeakSanitizer): a second build with -DFP8_SANITIZE="address;undefined"
# (g++; cmake/Sanitizers.cmake), then lit and the other ctest entries.
# Run before landing importer, runtime or tool changes. docs/Fuzzing.md.
#
# usage: scripts/sanitize.sh [build-dir] [-- lit args...]
#        (default ./build-asan; e.g. `-- --filter Import` runs a subset)
# FP8_SANITIZE overrides the sanitizers (default "address;undefined").
#
# Every sanitizer report fails the run, whichever process made it: reports
# go to <build>/sanitizer-logs/ (ASan aborts, UBSan and LSan report), and
# the run fails when that directory is not empty afterwards, even if the
# test that ran the process passed (a `not` test, a pipeline, a Python
# helper). Not run: consumer-package (it links the installed, instrumented
# static libraries into a plain build, which cannot resolve the sanitizer
# runtime). Compiled models link the runtime shim uninstrumented (see
# cmake/Sanitizers.cmake); the sanitized fp8-run still checks their heap
# use and memcpy/memset through ASan's allocator and interceptors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-asan
if (($#)) && [[ $1 != -- ]]; then build=$1; shift; fi
[[ ${1:-} == -- ]] && shift
lit_args=("$@")
mkdir -p "$build"
build=$(cd "$build" && pwd) # log_path must not depend on a test's cwd
sanitizers=${FP8_SANITIZE:-address;undefined}

bash "$root/scripts/setup.sh"
start=$(date +%s)
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "-DFP8_SANITIZE=$sanitizers" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
cmake --build "$build" -- -j2
built=$(date +%s)
bash "$root/scripts/ort/install.sh" "$build/ort" ||
  echo "sanitize.sh: no onnxruntime-node: test/ORT is unsupported" >&2

logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
symbolizer=$(command -v llvm-symbolizer || echo /usr/lib/llvm-22/bin/llvm-symbolizer)
# abort_on_error: a report is a SIGABRT, which `not` does not accept as a
# failure. The binaries' built-in defaults (fuzz/SanitizerDefaults.cpp)
# come first; these are added.
export ASAN_OPTIONS="abort_on_error=1:log_path=$logs/asan:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:log_path=$logs/ubsan:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan-suppressions.txt:print_suppressions=0:${LSAN_OPTIONS:-}"
export ASAN_SYMBOLIZER_PATH=$symbolizer

status=0
/usr/lib/llvm-22/bin/lit -sv "${lit_args[@]}" "$build/test" ||
  status=$?
lit_done=$(date +%s)
if ((${#lit_args[@]} == 0)); then
  ctest --test-dir "$build" --output-on-failure -j 2 \
    -E '^(lit|consumer-package)$' || status=$?
fi
end=$(date +%s)

echo "sanitize.sh: build $((built - start)) s, lit $((lit_done - built)) s," \
     "other ctest entries $((end - lit_done)) s"
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize.sh: sanitizer reports in $logs:" >&2
  for f in "$logs"/*; do
    echo "=== $f" >&2
    head -n 60 "$f" >&2
  done
  exit 1
fi
if ((status)); then
  echo "sanitize.sh: tests failed (exit $status)" >&2
  exit "$status"
fi
echo "sanitize.sh: clean (no sanitizer report, every test passed)"
