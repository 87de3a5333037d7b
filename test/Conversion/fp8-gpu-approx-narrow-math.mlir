// RUN: fp8-opt %s -split-input-file --fp8-gpu-approx-narrow-math | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-gpu-approx-narrow-math \
// RUN:   --convert-gpu-to-nvvm | FileCheck %s --check-prefix=NVVM

// SiLU's sigmoid on f16 (an FP16 Llama's FFN): the exponential takes afn,
// 1 / (1 + e) is the approximate f32 reciprocal of the sum, rounded to f16.
gpu.module @k0 {
  // CHECK-LABEL: func.func @silu_f16
  // CHECK-SAME:    (%[[X:.*]]: f16)
  // CHECK:         %[[N:.*]] = arith.negf %[[X]] : f16
  // CHECK:         %[[E:.*]] = math.exp %[[N]] fastmath<afn> : f16
  // CHECK:         %[[D:.*]] = arith.addf %[[E]], %{{.*}} : f16
  // CHECK:         %[[D32:.*]] = arith.extf %[[D]] : f16 to f32
  // CHECK:         %[[R32:.*]] = nvvm.rcp.approx.ftz.f %[[D32]] : f32
  // CHECK:         %[[R:.*]] = arith.truncf %[[R32]] : f32 to f16
  // CHECK:         arith.mulf %[[X]], %[[R]] : f16
  // The f16 exponential becomes libdevice's approximate one on the f32
  // extension.
  // NVVM-LABEL: llvm.func @silu_f16
  // NVVM:         llvm.call @__nv_fast_expf
  // NVVM-NOT:     llvm.call @__nv_expf
  func.func @silu_f16(%x: f16) -> f16 {
    %one = arith.constant 1.0 : f16
    %n = arith.negf %x : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %r = arith.divf %one, %d : f16
    %y = arith.mulf %x, %r : f16
    return %y : f16
  }
}

// -----

// A general f16 quotient: a * rcp(b) in f32, rounded once to f16.
gpu.module @k1 {
  // CHECK-LABEL: func.func @quotient_f16
  // CHECK-SAME:    (%[[A:.*]]: f16, %[[B:.*]]: f16)
  // CHECK:         %[[B32:.*]] = arith.extf %[[B]] : f16 to f32
  // CHECK:         %[[R:.*]] = nvvm.rcp.approx.ftz.f %[[B32]] : f32
  // CHECK:         %[[A32:.*]] = arith.extf %[[A]] : f16 to f32
  // CHECK:         %[[Q:.*]] = arith.mulf %[[A32]], %[[R]] : f32
  // CHECK:         arith.truncf %[[Q]] : f32 to f16
  func.func @quotient_f16(%a: f16, %b: f16) -> f16 {
    %q = arith.divf %a, %b : f16
    return %q : f16
  }
}

// -----

// bf16 exponentials are approximated too; bf16 divisions (which can give
// f32 subnormals, that .ftz would flush) and all f32 math stay exact.
gpu.module @k2 {
  // CHECK-LABEL: func.func @left_exact
  // CHECK:         math.exp %{{.*}} fastmath<afn> : bf16
  // CHECK:         math.exp2 %{{.*}} fastmath<afn> : f16
  // CHECK:         math.exp %{{.*}} : f32
  // CHECK-NOT:     fastmath
  // CHECK:         arith.divf %{{.*}}, %{{.*}} : bf16
  // CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
  // CHECK-NOT:     nvvm.rcp
  // NVVM-LABEL: llvm.func @left_exact
  // NVVM:         llvm.call @__nv_fast_expf
  // NVVM:         llvm.call @__nv_exp2f
  // NVVM:         llvm.call @__nv_expf
  func.func @left_exact(%a: bf16, %b: bf16, %h: f16, %x: f32) -> (bf16, f16, f32, bf16, f32) {
    %0 = math.exp %a : bf16
    %1 = math.exp2 %h : f16
    %2 = math.exp %x : f32
    %3 = arith.divf %a, %b : bf16
    %4 = arith.divf %x, %2 : f32
    return %0, %1, %2, %3, %4 : bf16, f16, f32, bf16, f32
  }
}
