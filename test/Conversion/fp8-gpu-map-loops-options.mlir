// RUN: fp8-opt %s -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{vector-width=3}))'
// RUN: not fp8-opt %s \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=2048}))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not fp8-opt %s \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=48}))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=WARP

// Option values out of range are errors that name the option and value.
// expected-error @+1 {{fp8-gpu-map-loops: vector-width 3 is not a power of two in 1..16}}
func.func @f(%x: memref<4xf32>) {
  return
}
// BLOCK: fp8-gpu-map-loops: block-size 2048 is outside 1..1024
// WARP: fp8-gpu-map-loops: block-size 48 is not a multiple of 32 (a warp)
