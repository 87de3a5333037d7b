// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-attention-to-gpu="remarks=true" | FileCheck %s

// The fused kernel of a causal grouped-query attention (4 query heads on 2
// kv heads, 256 x 256, head dim 128, bf16): a grid of Sq / 128 query
// blocks x heads x batch, 384 threads (consumer warpgroups 0 and 1, the TMA
// producer 2). Shared memory: Q 128 rows x 256 bytes (2 column blocks of
// 16 KB), 2 stages of K + V (64 KB each), 7 mbarriers (1 Q, 2 K, 2 V, 2
// empty) and 1008 bytes of alignment slack = 164904 bytes.

// CHECK-LABEL: func.func private @__fp8_attention_causal
// Three tensor maps over the bytes: [planes, rows, row bytes], boxes of
// 1 x tile rows x 128 bytes.
// CHECK-COUNT-3: llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         gpu.launch_func @__fp8_attention_causal_kernel::@__fp8_attention_causal_kernel blocks in (%c2{{.*}}, %c4{{.*}}, %c1{{.*}}) threads in (%c384{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c164904_i32
// CHECK:       gpu.func @__fp8_attention_causal_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 384, 1, 1>, known_grid_size = array<i32: 2, 4, 1>, nvvm.minctasm = 1 : i32}
// Causal: the last query blocks (most keys) run first.
// CHECK:         %[[BX:.*]] = gpu.block_id x
// CHECK:         arith.subi %c1{{.*}}, %[[BX]]
// Q full (1 arrival), per stage K and V full (1), empty (8 consumer warps).
// CHECK:             nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK-COUNT-2:     nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:             nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK:             nvvm.fence.mbarrier.init
// The producer gives registers back and one thread loads Q (two boxes),
// then per key block K and V (two boxes each) after the stage is empty.
// CHECK:           nvvm.setmaxregister  decrease 40
// CHECK:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2:   nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:           scf.for
// CHECK:             nvvm.mbarrier.try_wait.parity
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// The consumers: S = Q K^T as 8 k16 steps from shared memory ...
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:           scf.for
// CHECK:             nvvm.wgmma.fence.aligned
// CHECK:             nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7:     nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:             nvvm.wgmma.commit.group.sync.aligned
// CHECK:             nvvm.wgmma.wait.group.sync.aligned 0
// ... the causal mask only on key blocks that reach past the diagonal ...
// CHECK:             scf.if %{{.*}} -> (f32
// CHECK:               arith.select %{{.*}}, %{{.*}}, %cst
// Row maxima across the quad (xor 1, 2), exp2, ...
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK:             llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// ... and O += P V: P from registers, V MN-major (the last 1: transposed B).
// CHECK:             nvvm.wgmma.fence.aligned
// CHECK-COUNT-8:     llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK:             nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:             nvvm.mbarrier.arrive
// Rows past Sq are not stored; pairs of columns per store.
// CHECK:           llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
func.func private @__fp8_attention_causal(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x4x256x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: fused attention kernel: 4 heads (2 kv heads), 256 x 256 keys, head dim 128, causal; 128 x 128 tiles, 2 stages, 2 consumer warpgroups + a TMA producer}}
  return
}

// -----

// What the kernel does not serve keeps its reference body.
func.func private @__fp8_attention_d96(%q: memref<1x2x64x96xbf16>, %k: memref<1x2x64x96xbf16>, %v: memref<1x2x64x96xbf16>, %out: memref<1x2x64x96xf32>)
    attributes {fp8.attention = {scale = 0.1 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: head dim 96 (value 96): the kernel serves 64 and 128, equal for keys and values}}
  return
}

// -----

func.func private @__fp8_attention_f32(%q: memref<1x2x64x64xf32>, %k: memref<1x2x64x64xf32>, %v: memref<1x2x64x64xf32>, %out: memref<1x2x64x64xf32>)
    attributes {fp8.attention = {scale = 0.1 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: q, k and v must share a bf16 or f16 element type}}
  return
}
// CHECK-LABEL: func.func private @__fp8_attention_f32
// CHECK-NOT:     fp8.attention
// CHECK-NOT:     gpu.launch_func
// CHECK:         return
