//===- SanitizerDefaults.cpp - Default sanitizer options -------------------===//
//
// Part of fp8-opt. Linked into every executable of a sanitizer or fuzzer
// build (cmake/Sanitizers.cmake), so that the binaries behave the same
// whether ctest, lit, scripts/fuzz.sh or a developer runs them. Options in
// ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS are applied after these.
//
//===----------------------------------------------------------------------===//

extern "C" {

// allow_user_poisoning=0: LLVM's BumpPtrAllocator (llvm/Support/Allocator.h)
// poisons the unused tail of each slab and unpoisons what Allocate hands
// out, but only where it is compiled with ASan. MLIR's StorageUniquer and
// other allocators are shared between our instrumented code and Debian's
// uninstrumented libMLIR.so/libLLVM.so: a slab poisoned by our inline
// AllocateSlow is then carved by libMLIR's Allocate without unpoisoning,
// and its memcpy into that memory is reported as use-after-poison (seen on
// the first model with fp8.amax folding). No code of ours poisons memory
// by hand; heap, stack and global checks are unaffected.
const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=1:check_initialization_order=1:"
         "strict_init_order=1";
}

const char *__ubsan_default_options() { return "print_stacktrace=1"; }

// Leaks that are not ours and not bugs (docs/Fuzzing.md). Keep it short:
// every entry needs a reason here.
const char *__lsan_default_suppressions() { return ""; }

} // extern "C"
