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

// sequence_major: out is [B, Sq, Hq, Dv]; a row starts at ((b * Sq + r) *
// Hq + h) * Dv (the head-major kernel: ((b * Hq + h) * Sq + r) * Dv).
// CHECK-LABEL: func.func private @__fp8_attention_seq_major
// CHECK-NOT:     func.func
// CHECK:         gpu.launch_func
// CHECK-LABEL: gpu.func @__fp8_attention_seq_major_kernel
// CHECK:           llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// A mismatched out shape keeps the reference body.
func.func private @__fp8_attention_seq_major(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x256x4x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, sequence_major = true}} {
  // expected-remark @-2 {{fp8 attention: fused attention kernel: 4 heads (2 kv heads), 256 x 256 keys, head dim 128, causal, output [B, Sq, Hq, Dv]; 128 x 128 tiles, 2 stages, 2 consumer warpgroups + a TMA producer}}
  return
}
func.func private @__fp8_attention_seq_major_bad(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x4x256x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, sequence_major = true}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] and out [B, Sq, Hq, Dv] do not agree}}
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
  // expected-remark @-2 {{fp8 attention: keeping the reference body: q, k and v must share a bf16, f16, f8E4M3FN or f8E5M2 element type}}
  return
}
// CHECK-LABEL: func.func private @__fp8_attention_f32
// CHECK-NOT:     fp8.attention
// CHECK-NOT:     gpu.launch_func
// CHECK:         return

// -----

// FP8 q, k, v (E4M3) with their scales and the workspace. The host launches
// the value transpose first (one thread per workspace byte: 2 planes x 128
// rows x 224 keys = 57344 threads in blocks of 256), then the attention
// kernel, whose V tensor map reads the workspace: [2 planes, 128 rows, 224
// key bytes], boxes of 1 x 128 rows x 128 keys. Shared memory: Q 16 KB, 4
// stages of K + V^T (16 KB each), 13 mbarriers, 1008 bytes of slack =
// 148568 bytes.
// CHECK-LABEL: func.func private @__fp8_attention_fp8
// CHECK-COUNT-3: llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         gpu.launch_func @__fp8_attention_fp8_kernel::@__fp8_attention_fp8_kernel_vt blocks in (%c224{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c256{{.*}}, %c1{{.*}}, %c1{{.*}}) args(%{{.*}} : memref<51200xf8E4M3FN>, %{{.*}} : memref<57344xf8E4M3FN>)
// CHECK:         gpu.launch_func @__fp8_attention_fp8_kernel::@__fp8_attention_fp8_kernel blocks in (%c2{{.*}}, %c4{{.*}}, %c1{{.*}}) threads in (%c384{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c148568_i32
// The producer: Q (one 16 KB box), then per key block K and V^T (one box
// each).
// With ping-pong (FP8 kernels' default) the producer keeps 24 registers.
// CHECK:           nvvm.setmaxregister  decrease 24
// CHECK:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK:           cp.async.bulk.tensor
// CHECK-NOT:       cp.async.bulk.tensor
// CHECK:           scf.for
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK:             cp.async.bulk.tensor
// CHECK-NOT:         cp.async.bulk.tensor
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK:             cp.async.bulk.tensor
// CHECK-NOT:         cp.async.bulk.tensor
// The consumers (240 registers) read q_scale once; consumer 1 hands consumer
// 0 its first turn (named barrier 1); then per key block each waits for its
// turn, issues S = Q K^T in four k32 E4M3 steps, hands the other its turn
// and waits for the products; k_scale joins q_scale in the softmax's
// exponent ...
// CHECK:           nvvm.setmaxregister  increase 240
// (A zero, negative or NaN scale reads as the smallest normal float.)
// CHECK:           %[[QL:.*]] = memref.load %arg3[] : memref<f32>
// CHECK:           %[[QS:.*]] = arith.maxnumf %[[QL]], %{{.*}} : f32
// CHECK:           scf.if
// CHECK:             nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK:           scf.for
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK:             nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-COUNT-3:     nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK:             nvvm.wgmma.commit.group.sync.aligned
// CHECK:             nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK-NEXT:        nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:             %[[KL:.*]] = memref.load %arg4[] : memref<f32>
// CHECK:             %[[KS:.*]] = arith.maxnumf %[[KL]], %{{.*}} : f32
// CHECK:             arith.mulf %[[QS]], %[[KS]]
// ... P rounded to E4M3 in pairs, packed four to a register (the first
// register: values 0, 1 low, 4, 5 high) ...
// CHECK:             %[[P01:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK:             %[[LO:.*]] = arith.extui %[[P01]] : i16 to i32
// CHECK:             %[[P45:.*]] = nvvm.convert.f32x2.to.f8x2
// CHECK:             %[[HI:.*]] = arith.extui %[[P45]] : i16 to i32
// CHECK:             %[[SH:.*]] = arith.shli %[[HI]], %{{.*}} : i32
// CHECK:             arith.ori %[[LO]], %[[SH]] : i32
// ... and O += P V^T: four register-A k32 wgmmas, no transpose immediate.
// CHECK-COUNT-4:     llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;
// The output is O * v_scale / l.
// CHECK:           memref.load %arg5[] : memref<f32>
// The transpose: workspace byte (plane, d, c) is v's key 32 (c / 32) +
// fp8ValueKey(c % 32) of column d, or 0 past the 200 keys.
// CHECK:       gpu.func @__fp8_attention_fp8_kernel_vt(%{{.*}}: memref<51200xf8E4M3FN>, %{{.*}}: memref<57344xf8E4M3FN>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:         arith.cmpi ult, %{{.*}}, %c57344
// CHECK:         arith.cmpi ult, %{{.*}}, %c200
// CHECK:         scf.if %{{.*}} -> (i8)
// CHECK:           llvm.load %{{.*}} : !llvm.ptr<1> -> i8
// CHECK:         llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr<1>
func.func private @__fp8_attention_fp8(%q: memref<1x4x256x128xf8E4M3FN>, %k: memref<1x2x200x128xf8E4M3FN>, %v: memref<1x2x200x128xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x128x224xf8E4M3FN>, %out: memref<1x4x256x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: fused attention kernel (FP8 q, k, v, scales per tensor; P in E4M3): 4 heads (2 kv heads), 256 x 200 keys, head dim 128, causal; 128 x 128 tiles, 4 stages, 2 consumer warpgroups + a TMA producer, ping-pong}}
  return
}

// -----

// FP8 scales per block of 128 positions (scale_block): the CTA's query
// block scale (plane * 2 + m0 / 128), per key tile j the key scale (times
// the query scale, into the softmax's exponent) and the value scales'
// ratio v_scale(max(j - 1, 0)) / v_scale(j) (O is kept in the units of the
// last tile's value scale), and the last tile's value scale for the output.
// CHECK-LABEL: func.func private @__fp8_attention_fp8_blocks
// CHECK:       gpu.func @__fp8_attention_fp8_blocks_kernel(
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:           %[[QB:.*]] = arith.divui %{{.*}}, %c128{{.*}} : index
// CHECK:           %[[QI:.*]] = arith.addi %{{.*}}, %[[QB]] : index
// CHECK:           %[[QL:.*]] = memref.load %arg3[%[[QI]]] : memref<8xf32>
// CHECK:           %[[QS:.*]] = arith.maxnumf %[[QL]]
// CHECK:           scf.for %[[J:.*]] = {{.*}} iter_args
// CHECK:             %[[KI:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK:             %[[KL:.*]] = memref.load %arg4[%[[KI]]] : memref<4xf32>
// CHECK:             %[[KS:.*]] = arith.maxnumf %[[KL]]
// CHECK:             arith.mulf %[[QS]], %[[KS]] : f32
// The tile's P V goes to a fresh accumulator (the first chunk's scale-d
// operand 0), then O * alpha * ratio + tile in FP32.
// CHECK:             llvm.inline_asm {{.*}}, %c0_i32{{[_0-9]*}}, %{{.*}} : (i32, i32, i32, i32, i64, i32,
// CHECK-COUNT-3:     llvm.inline_asm {{.*}}, %c1_i32{{[_0-9]*}}, %{{.*}} : (i32, i32, i32, i32, i64, i32,
// CHECK:             %[[JM1:.*]] = arith.addi %[[J]], %c-1{{.*}} : index
// CHECK:             %[[PREV:.*]] = arith.maxsi %[[JM1]], %c0{{.*}} : index
// CHECK:             %[[VJ:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK:             %[[VL:.*]] = memref.load %arg5[%[[VJ]]] : memref<4xf32>
// CHECK:             %[[VS:.*]] = arith.maxnumf %[[VL]]
// CHECK:             %[[VI:.*]] = arith.addi %{{.*}}, %[[PREV]] : index
// CHECK:             %[[VPL:.*]] = memref.load %arg5[%[[VI]]] : memref<4xf32>
// CHECK:             %[[VPS:.*]] = arith.maxnumf %[[VPL]]
// CHECK:             arith.divf %[[VPS]], %[[VS]] : f32
// CHECK-COUNT-64:    arith.addf
// CHECK:           arith.maxsi
// CHECK:           memref.load %arg5[%{{.*}}] : memref<4xf32>
func.func private @__fp8_attention_fp8_blocks(%q: memref<1x4x256x128xf8E4M3FN>, %k: memref<1x2x200x128xf8E4M3FN>, %v: memref<1x2x200x128xf8E4M3FN>, %qs: memref<1x4x2x1xf32>, %ks: memref<1x2x2x1xf32>, %vs: memref<1x2x2x1xf32>, %ws: memref<1x2x128x224xf8E4M3FN>, %out: memref<1x4x256x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, scale_block = 128 : i64}} {
  // expected-remark @-2 {{fp8 attention: fused attention kernel (FP8 q, k, v, scales per 128 positions; P in E4M3): 4 heads (2 kv heads), 256 x 200 keys, head dim 128, causal; 128 x 128 tiles, 4 stages, 2 consumer warpgroups + a TMA producer}}
  return
}

// -----

// Scale blocks the tiles do not match, or scales of the wrong shape: the
// reference body stays.
func.func private @__fp8_attention_fp8_block64(%q: memref<1x2x128x128xf8E4M3FN>, %k: memref<1x2x128x128xf8E4M3FN>, %v: memref<1x2x128x128xf8E4M3FN>, %qs: memref<1x2x2x1xf32>, %ks: memref<1x2x2x1xf32>, %vs: memref<1x2x2x1xf32>, %ws: memref<1x2x128x128xf8E4M3FN>, %out: memref<1x2x128x128xf32>)
    attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false, scale_block = 64 : i64}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: FP8 scale blocks of 64 positions: the kernel's tiles take blocks of 128}}
  return
}

// -----

func.func private @__fp8_attention_fp8_block_shape(%q: memref<1x2x128x128xf8E4M3FN>, %k: memref<1x2x128x128xf8E4M3FN>, %v: memref<1x2x128x128xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x128x128xf8E4M3FN>, %out: memref<1x2x128x128xf32>)
    attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false, scale_block = 128 : i64}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: FP8 block scales must be contiguous f32 [B, H, ceil(S / 128), 1] memrefs}}
  return
}

// -----

// FP8 at head dim 64 (64-byte rows) or without its workspace: the
// reference body stays.
func.func private @__fp8_attention_fp8_d64(%q: memref<1x2x64x64xf8E4M3FN>, %k: memref<1x2x64x64xf8E4M3FN>, %v: memref<1x2x64x64xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x64x64xf8E4M3FN>, %out: memref<1x2x64x64xf32>)
    attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: head dim 64 (value 64): the FP8 kernel serves 128 (one 128-byte swizzled row)}}
  return
}

// -----

func.func private @__fp8_attention_fp8_e5m2(%q: memref<1x2x128x128xf8E5M2>, %k: memref<1x2x128x128xf8E5M2>, %v: memref<1x2x128x128xf8E5M2>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x128x128xf8E5M2>, %out: memref<1x2x128x128xf32>)
    attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: E5M2 q, k and v: the FP8 kernel serves E4M3 (its E5M2 build spills at 232 registers)}}
  return
}

// -----

func.func private @__fp8_attention_fp8_no_ws(%q: memref<1x2x64x128xf8E4M3FN>, %k: memref<1x2x64x128xf8E4M3FN>, %v: memref<1x2x64x128xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %out: memref<1x2x64x128xf32>)
    attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: expected 8 memref arguments and no result}}
  return
}


// -----

// A decode step (one query per head, the split workspace): the split-key
// kernel -- a split's K and V rows read once for the query heads that
// share them, 16 bytes a lane, scores reduced over the row's 16 lanes,
// the states merged in shared memory, the split's output, max and sum
// written -- then one CTA per (batch, head) combines the 32 splits (their
// maxima and sums staged in shared memory).
// CHECK-LABEL: func.func private @__fp8_attention_decode
// CHECK:         gpu.launch_func  @__fp8_attention_decode_kernel::@__fp8_attention_decode_kernel blocks in (%c32, %c2, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}})  dynamic_shared_memory_size %c16640_i32
// CHECK:         gpu.launch_func  @__fp8_attention_decode_kernel::@__fp8_attention_decode_kernel_combine blocks in (%c8,
// CHECK-LABEL: gpu.func @__fp8_attention_decode_kernel(
// CHECK:           llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:           scf.for
// CHECK-COUNT-4:     gpu.shuffle  xor
// CHECK:             llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK:           gpu.barrier
// CHECK-LABEL: gpu.func @__fp8_attention_decode_kernel_combine(
// CHECK:           gpu.barrier
// CHECK:           scf.for
// CHECK:           arith.divf
func.func private @__fp8_attention_decode(%q: memref<1x8x1x128xbf16>, %k: memref<1x2x1000x128xbf16>, %v: memref<1x2x1000x128xbf16>, %m: memref<1x1x1x1000xf32>, %ws: memref<1x8x32x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true}} {
  // expected-remark @-2 {{fp8 attention: split-key decode attention kernel: 8 heads (2 kv heads), 1 x 1000 keys, head dim 128, additive mask; 32 splits of 32 keys x 2 kv heads x 1 sequences, 4 warps per CTA, then a kernel that combines the splits}}
  return
}

// -----

// The same step over an E4M3 cache (fp8-outline-attention absorbed its
// dequantization: (k8, k_scale, v8, v_scale, q, mask, workspace, out)): the
// kernel takes (q, k8, v8, mask, k_scale, v_scale, workspace, out), loads
// 8 bytes of a row per lane, decodes pairs to f16, scales, and rounds
// through f16 and bf16 as kv_dequant says -- unless both scales are powers
// of two 2^e with -15 <= e <= 7 (every x * 2^e of an E4M3 value exact in
// f16: the casts round nothing; checked at run time, uniform): then a
// tensor-core loop takes the cache's values unscaled, per warp 16 keys at a
// time -- K rows r and r + 8 as 32 bytes each, four V rows as 16 bytes --
// S^T = K Q^T in 8 mma k-steps, the scores times k_scale * scale, the online
// softmax on S^T's fragment, P^T transposed by two movmatrix, and O^T +=
// V^T P^T in 8 m-tiles whose A operand interleaves two key rows' bytes
// (prmt); the outputs times v_scale when they go to shared memory.
// CHECK-LABEL: func.func private @__fp8_attention_decode_cache
// CHECK:         gpu.launch_func  @__fp8_attention_decode_cache_kernel::@__fp8_attention_decode_cache_kernel blocks in (%c32, %c2, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}})  dynamic_shared_memory_size %c16640_i32 args(%{{.*}} : memref<1024xbf16>, %{{.*}} : memref<256000xf8E4M3FN>, %{{.*}} : memref<256000xf8E4M3FN>, %{{.*}} : memref<1000xf32>, %{{.*}} : memref<f32>, %{{.*}} : memref<f32>, %{{.*}} : memref<33280xf32>, %{{.*}} : memref<1024xbf16>)
// CHECK-LABEL: gpu.func @__fp8_attention_decode_cache_kernel(
// CHECK:         %[[KS:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:         %[[VS:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// A power of two 2^e, -15 <= e <= 7: sign and mantissa 0 (mask 0x807fffff),
// the biased exponent 112 + [0, 22].
// CHECK:         %[[KB:.*]] = arith.bitcast %[[KS]] : f32 to i32
// CHECK:         arith.andi %[[KB]], %c-2139095041_i32
// CHECK:         %[[KE:.*]] = arith.subi %[[KB]], %c939524096_i32
// CHECK:         arith.cmpi ule, %[[KE]], %c184549376_i32
// CHECK:         %[[KF:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:         arith.bitcast %[[VS]] : f32 to i32
// CHECK:         %[[VF:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    %[[FOLD:.*]] = arith.andi %[[KF]], %[[VF]] : i1
// CHECK:         scf.if %[[FOLD]] {
// CHECK-NOT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:           %[[FACTOR:.*]] = arith.mulf %[[KS]], %{{.*}} : f32
// CHECK-NOT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:           scf.for
// CHECK-COUNT-2:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xi32>
// CHECK-COUNT-4:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:             nvvm.convert.f8x2.to.f16x2
// CHECK-COUNT-8:     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:             arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK-COUNT-2:     "movmatrix.sync.aligned.m8n8.trans.b16
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:             nvvm.prmt <default> %c20800_i32
// CHECK-COUNT-8:     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:             scf.yield
// CHECK-NOT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:           arith.mulf %{{.*}}, %[[VS]] : f32
// CHECK-NOT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:           gpu.barrier
// CHECK-NOT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:         } else {
// CHECK:           scf.for
// CHECK:             llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<8xi8>
// CHECK:             nvvm.convert.f8x2.to.f16x2
// CHECK:             arith.mulf %{{.*}}, %[[KS]]
// CHECK-NEXT:        arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT:        arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:             llvm.intr.fma
// CHECK:           gpu.barrier
func.func private @__fp8_attention_decode_cache(%k: memref<1x2x1000x128xf8E4M3FN>, %ks: memref<f32>, %v: memref<1x2x1000x128xf8E4M3FN>, %vs: memref<f32>, %q: memref<1x8x1x128xbf16>, %m: memref<1x1x1x1000xf32>, %ws: memref<1x8x32x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, kv_dequant = [f16, f32, bf16]}} {
  // expected-remark @-2 {{fp8 attention: split-key decode attention kernel: 8 heads (2 kv heads), 1 x 1000 keys, head dim 128, additive mask, reading a f8E4M3FN cache (scaled, rounded to f16 f32 bf16; scales 2^-15..2^7 fold out: tensor-core loop); 32 splits of 32 keys x 2 kv heads x 1 sequences, 4 warps per CTA, then a kernel that combines the splits}}
  return
}

// -----

// A cast chain arith cannot express (f16 straight to bf16) keeps the
// reference body.
func.func private @__fp8_attention_decode_cache_bad(%k: memref<1x2x1000x128xf8E4M3FN>, %ks: memref<f32>, %v: memref<1x2x1000x128xf8E4M3FN>, %vs: memref<f32>, %q: memref<1x8x1x128xbf16>, %ws: memref<1x8x32x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false, kv_dequant = [f16, bf16]}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: kv_dequant lists float element types, each wider or narrower than the one before (from f32)}}
  return
}

// -----

// A workspace whose split count leaves a split empty (30 splits of 1000
// keys are 16 of 64 keys and 14 empty ones), or without one query per head,
// keeps the reference body. Any other count serves (16 here: the kernel
// reads the count from the workspace; the outliner chooses 32).
func.func private @__fp8_attention_decode_bad(%q: memref<1x8x1x128xbf16>, %k: memref<1x2x1000x128xbf16>, %v: memref<1x2x1000x128xbf16>, %ws: memref<1x8x30x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: the decode kernel's workspace is a contiguous f32 [B, Hq, splits, Dv + 2] = [1, 8, splits, 130] memref whose splits of whole 32-key steps are none of them empty (fp8-outline-attention chooses 32)}}
  return
}
func.func private @__fp8_attention_decode_16(%q: memref<1x8x1x128xbf16>, %k: memref<1x2x1000x128xbf16>, %v: memref<1x2x1000x128xbf16>, %ws: memref<1x8x16x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: split-key decode attention kernel: 8 heads (2 kv heads), 1 x 1000 keys, head dim 128; 16 splits of 64 keys x 2 kv heads x 1 sequences}}
  return
}
func.func private @__fp8_attention_decode_rows(%q: memref<1x8x2x128xbf16>, %k: memref<1x2x1000x128xbf16>, %v: memref<1x2x1000x128xbf16>, %ws: memref<1x8x32x130xf32>, %out: memref<1x8x2x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false}} {
  // expected-remark @-2 {{fp8 attention: keeping the reference body: a workspace without FP8 operands is the decode kernel's: one query per (batch, head), bf16/f16 operands, head dim 64 or 128}}
  return
}
