// Fused attention kernels of convert-fp8-attention-to-gpu, checked on the
// GPU by test/GPU/attention_test.cpp (scripts/gpu-check suite `attention`).
// Each @__fp8_attention_* function has the form fp8-outline-attention +
// bufferization give (q, k, v, [mask], out) with the fp8.attention
// dictionary; its body is a placeholder the pass replaces (a function the
// pass did not serve would leave `out` poisoned and fail the check). Keep
// attention_test.cpp's table in sync.
module {
  func.func private @__fp8_attention_causal_gqa(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x4x256x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
    return
  }
  func.func @run_causal_gqa(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x4x256x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_causal_gqa(%q, %k, %v, %out) : (memref<1x4x256x128xbf16>, memref<1x2x256x128xbf16>, memref<1x2x256x128xbf16>, memref<1x4x256x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_partial_d64_f32(%q: memref<2x2x200x64xbf16>, %k: memref<2x2x333x64xbf16>, %v: memref<2x2x333x64xbf16>, %out: memref<2x2x200x64xf32>)
      attributes {fp8.attention = {scale = 0.125 : f32, causal = false, has_mask = false}} {
    return
  }
  func.func @run_partial_d64_f32(%q: memref<2x2x200x64xbf16>, %k: memref<2x2x333x64xbf16>, %v: memref<2x2x333x64xbf16>, %out: memref<2x2x200x64xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_partial_d64_f32(%q, %k, %v, %out) : (memref<2x2x200x64xbf16>, memref<2x2x333x64xbf16>, memref<2x2x333x64xbf16>, memref<2x2x200x64xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_mask_f16(%q: memref<1x2x130x128xf16>, %k: memref<1x2x257x128xf16>, %v: memref<1x2x257x128xf16>, %mask: memref<1x1x130x257xf32>, %out: memref<1x2x130x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true}} {
    return
  }
  func.func @run_mask_f16(%q: memref<1x2x130x128xf16>, %k: memref<1x2x257x128xf16>, %v: memref<1x2x257x128xf16>, %mask: memref<1x1x130x257xf32>, %out: memref<1x2x130x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_mask_f16(%q, %k, %v, %mask, %out) : (memref<1x2x130x128xf16>, memref<1x2x257x128xf16>, memref<1x2x257x128xf16>, memref<1x1x130x257xf32>, memref<1x2x130x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_causal_cache(%q: memref<1x2x100x128xbf16>, %k: memref<1x1x300x128xbf16>, %v: memref<1x1x300x128xbf16>, %out: memref<1x2x100x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
    return
  }
  func.func @run_causal_cache(%q: memref<1x2x100x128xbf16>, %k: memref<1x1x300x128xbf16>, %v: memref<1x1x300x128xbf16>, %out: memref<1x2x100x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_causal_cache(%q, %k, %v, %out) : (memref<1x2x100x128xbf16>, memref<1x1x300x128xbf16>, memref<1x1x300x128xbf16>, memref<1x2x100x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_causal_mask_rows(%q: memref<2x2x96x64xbf16>, %k: memref<2x2x96x64xbf16>, %v: memref<2x2x96x64xbf16>, %mask: memref<2x1x96x96xf32>, %out: memref<2x2x96x64xf32>)
      attributes {fp8.attention = {scale = 0.125 : f32, causal = true, has_mask = true}} {
    return
  }
  func.func @run_causal_mask_rows(%q: memref<2x2x96x64xbf16>, %k: memref<2x2x96x64xbf16>, %v: memref<2x2x96x64xbf16>, %mask: memref<2x1x96x96xf32>, %out: memref<2x2x96x64xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_causal_mask_rows(%q, %k, %v, %mask, %out) : (memref<2x2x96x64xbf16>, memref<2x2x96x64xbf16>, memref<2x2x96x64xbf16>, memref<2x1x96x96xf32>, memref<2x2x96x64xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_causal_8k(%q: memref<1x32x8192x128xbf16>, %k: memref<1x8x8192x128xbf16>, %v: memref<1x8x8192x128xbf16>, %out: memref<1x32x8192x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
    return
  }
  func.func @run_perf_causal_8k(%q: memref<1x32x8192x128xbf16>, %k: memref<1x8x8192x128xbf16>, %v: memref<1x8x8192x128xbf16>, %out: memref<1x32x8192x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_causal_8k(%q, %k, %v, %out) : (memref<1x32x8192x128xbf16>, memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>, memref<1x32x8192x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_full_4k(%q: memref<1x32x4096x128xbf16>, %k: memref<1x32x4096x128xbf16>, %v: memref<1x32x4096x128xbf16>, %out: memref<1x32x4096x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false}} {
    return
  }
  func.func @run_perf_full_4k(%q: memref<1x32x4096x128xbf16>, %k: memref<1x32x4096x128xbf16>, %v: memref<1x32x4096x128xbf16>, %out: memref<1x32x4096x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_full_4k(%q, %k, %v, %out) : (memref<1x32x4096x128xbf16>, memref<1x32x4096x128xbf16>, memref<1x32x4096x128xbf16>, memref<1x32x4096x128xbf16>) -> ()
    return
  }
  // FP8 q, k, v (E4M3; scales per tensor, or per block of 128 positions
  // with scale_block) and the kernel's workspace.
  func.func private @__fp8_attention_fp8_causal_gqa(%q: memref<1x4x256x128xf8E4M3FN>, %k: memref<1x2x256x128xf8E4M3FN>, %v: memref<1x2x256x128xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x128x256xf8E4M3FN>, %out: memref<1x4x256x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false}} {
    return
  }
  func.func @run_fp8_causal_gqa(%q: memref<1x4x256x128xf8E4M3FN>, %k: memref<1x2x256x128xf8E4M3FN>, %v: memref<1x2x256x128xf8E4M3FN>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x2x128x256xf8E4M3FN>, %out: memref<1x4x256x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_causal_gqa(%q, %k, %v, %qs, %ks, %vs, %ws, %out) : (memref<1x4x256x128xf8E4M3FN>, memref<1x2x256x128xf8E4M3FN>, memref<1x2x256x128xf8E4M3FN>, memref<f32>, memref<f32>, memref<f32>, memref<1x2x128x256xf8E4M3FN>, memref<1x4x256x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_fp8_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x2x130x128xf32>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true}} {
    return
  }
  func.func @run_fp8_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x2x130x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_partial_mask(%q, %k, %v, %mask, %qs, %ks, %vs, %ws, %out) : (memref<2x2x130x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x130x333xf32>, memref<f32>, memref<f32>, memref<f32>, memref<2x1x128x352xf8E4M3FN>, memref<2x2x130x128xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_fp8_blocks_causal_gqa(%q: memref<1x4x384x128xf8E4M3FN>, %k: memref<1x2x384x128xf8E4M3FN>, %v: memref<1x2x384x128xf8E4M3FN>, %qs: memref<1x4x3x1xf32>, %ks: memref<1x2x3x1xf32>, %vs: memref<1x2x3x1xf32>, %ws: memref<1x2x128x384xf8E4M3FN>, %out: memref<1x4x384x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, scale_block = 128 : i64}} {
    return
  }
  func.func @run_fp8_blocks_causal_gqa(%q: memref<1x4x384x128xf8E4M3FN>, %k: memref<1x2x384x128xf8E4M3FN>, %v: memref<1x2x384x128xf8E4M3FN>, %qs: memref<1x4x3x1xf32>, %ks: memref<1x2x3x1xf32>, %vs: memref<1x2x3x1xf32>, %ws: memref<1x2x128x384xf8E4M3FN>, %out: memref<1x4x384x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_blocks_causal_gqa(%q, %k, %v, %qs, %ks, %vs, %ws, %out) : (memref<1x4x384x128xf8E4M3FN>, memref<1x2x384x128xf8E4M3FN>, memref<1x2x384x128xf8E4M3FN>, memref<1x4x3x1xf32>, memref<1x2x3x1xf32>, memref<1x2x3x1xf32>, memref<1x2x128x384xf8E4M3FN>, memref<1x4x384x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_fp8_blocks_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<2x2x2x1xf32>, %ks: memref<2x1x3x1xf32>, %vs: memref<2x1x3x1xf32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x2x130x128xf32>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, scale_block = 128 : i64}} {
    return
  }
  func.func @run_fp8_blocks_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<2x2x2x1xf32>, %ks: memref<2x1x3x1xf32>, %vs: memref<2x1x3x1xf32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x2x130x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_blocks_partial_mask(%q, %k, %v, %mask, %qs, %ks, %vs, %ws, %out) : (memref<2x2x130x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x130x333xf32>, memref<2x2x2x1xf32>, memref<2x1x3x1xf32>, memref<2x1x3x1xf32>, memref<2x1x128x352xf8E4M3FN>, memref<2x2x130x128xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_fp8_blocks_causal_cache(%q: memref<1x2x100x128xf8E4M3FN>, %k: memref<1x1x300x128xf8E4M3FN>, %v: memref<1x1x300x128xf8E4M3FN>, %qs: memref<1x2x1x1xf32>, %ks: memref<1x1x3x1xf32>, %vs: memref<1x1x3x1xf32>, %ws: memref<1x1x128x320xf8E4M3FN>, %out: memref<1x2x100x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, scale_block = 128 : i64}} {
    return
  }
  func.func @run_fp8_blocks_causal_cache(%q: memref<1x2x100x128xf8E4M3FN>, %k: memref<1x1x300x128xf8E4M3FN>, %v: memref<1x1x300x128xf8E4M3FN>, %qs: memref<1x2x1x1xf32>, %ks: memref<1x1x3x1xf32>, %vs: memref<1x1x3x1xf32>, %ws: memref<1x1x128x320xf8E4M3FN>, %out: memref<1x2x100x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_blocks_causal_cache(%q, %k, %v, %qs, %ks, %vs, %ws, %out) : (memref<1x2x100x128xf8E4M3FN>, memref<1x1x300x128xf8E4M3FN>, memref<1x1x300x128xf8E4M3FN>, memref<1x2x1x1xf32>, memref<1x1x3x1xf32>, memref<1x1x3x1xf32>, memref<1x1x128x320xf8E4M3FN>, memref<1x2x100x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_fp8_causal_8k(%q: memref<1x32x8192x128xf8E4M3FN>, %k: memref<1x8x8192x128xf8E4M3FN>, %v: memref<1x8x8192x128xf8E4M3FN>, %qs: memref<1x32x64x1xf32>, %ks: memref<1x8x64x1xf32>, %vs: memref<1x8x64x1xf32>, %ws: memref<1x8x128x8192xf8E4M3FN>, %out: memref<1x32x8192x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, scale_block = 128 : i64}} {
    return
  }
  func.func @run_perf_fp8_causal_8k(%q: memref<1x32x8192x128xf8E4M3FN>, %k: memref<1x8x8192x128xf8E4M3FN>, %v: memref<1x8x8192x128xf8E4M3FN>, %qs: memref<1x32x64x1xf32>, %ks: memref<1x8x64x1xf32>, %vs: memref<1x8x64x1xf32>, %ws: memref<1x8x128x8192xf8E4M3FN>, %out: memref<1x32x8192x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_fp8_causal_8k(%q, %k, %v, %qs, %ks, %vs, %ws, %out) : (memref<1x32x8192x128xf8E4M3FN>, memref<1x8x8192x128xf8E4M3FN>, memref<1x8x8192x128xf8E4M3FN>, memref<1x32x64x1xf32>, memref<1x8x64x1xf32>, memref<1x8x64x1xf32>, memref<1x8x128x8192xf8E4M3FN>, memref<1x32x8192x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_fp8_full_4k(%q: memref<1x32x4096x128xf8E4M3FN>, %k: memref<1x32x4096x128xf8E4M3FN>, %v: memref<1x32x4096x128xf8E4M3FN>, %qs: memref<1x32x32x1xf32>, %ks: memref<1x32x32x1xf32>, %vs: memref<1x32x32x1xf32>, %ws: memref<1x32x128x4096xf8E4M3FN>, %out: memref<1x32x4096x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false, scale_block = 128 : i64}} {
    return
  }
  func.func @run_perf_fp8_full_4k(%q: memref<1x32x4096x128xf8E4M3FN>, %k: memref<1x32x4096x128xf8E4M3FN>, %v: memref<1x32x4096x128xf8E4M3FN>, %qs: memref<1x32x32x1xf32>, %ks: memref<1x32x32x1xf32>, %vs: memref<1x32x32x1xf32>, %ws: memref<1x32x128x4096xf8E4M3FN>, %out: memref<1x32x4096x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_fp8_full_4k(%q, %k, %v, %qs, %ks, %vs, %ws, %out) : (memref<1x32x4096x128xf8E4M3FN>, memref<1x32x4096x128xf8E4M3FN>, memref<1x32x4096x128xf8E4M3FN>, memref<1x32x32x1xf32>, memref<1x32x32x1xf32>, memref<1x32x32x1xf32>, memref<1x32x128x4096xf8E4M3FN>, memref<1x32x4096x128xbf16>) -> ()
    return
  }
  // sequence_major: out [B, Sq, Hq, Dv] (the transpose before the output
  // projection folded into the kernel).
  func.func private @__fp8_attention_seq_major_causal_gqa(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x256x4x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = true, has_mask = false, sequence_major = true}} {
    return
  }
  func.func @run_seq_major_causal_gqa(%q: memref<1x4x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %out: memref<1x256x4x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_seq_major_causal_gqa(%q, %k, %v, %out) : (memref<1x4x256x128xbf16>, memref<1x2x256x128xbf16>, memref<1x2x256x128xbf16>, memref<1x256x4x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_fp8_seq_major_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x130x2x128xf32>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, sequence_major = true}} {
    return
  }
  func.func @run_fp8_seq_major_partial_mask(%q: memref<2x2x130x128xf8E4M3FN>, %k: memref<2x1x333x128xf8E4M3FN>, %v: memref<2x1x333x128xf8E4M3FN>, %mask: memref<2x1x130x333xf32>, %qs: memref<f32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<2x1x128x352xf8E4M3FN>, %out: memref<2x130x2x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_fp8_seq_major_partial_mask(%q, %k, %v, %mask, %qs, %ks, %vs, %ws, %out) : (memref<2x2x130x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x333x128xf8E4M3FN>, memref<2x1x130x333xf32>, memref<f32>, memref<f32>, memref<f32>, memref<2x1x128x352xf8E4M3FN>, memref<2x130x2x128xf32>) -> ()
    return
  }
  // Decode steps (one query per head, bf16/f16, a workspace [B, Hq,
  // splits, D + 2] f32: decodeAttentionSplits): the split-key kernels.
  func.func private @__fp8_attention_decode_gqa_b1(%q: memref<1x32x1x128xbf16>, %k: memref<1x8x2080x128xbf16>, %v: memref<1x8x2080x128xbf16>, %mask: memref<1x1x1x2080xf32>, %ws: memref<1x32x65x130xf32>, %out: memref<1x1x32x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, sequence_major = true}} {
    return
  }
  func.func @run_decode_gqa_b1(%q: memref<1x32x1x128xbf16>, %k: memref<1x8x2080x128xbf16>, %v: memref<1x8x2080x128xbf16>, %mask: memref<1x1x1x2080xf32>, %ws: memref<1x32x65x130xf32>, %out: memref<1x1x32x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_gqa_b1(%q, %k, %v, %mask, %ws, %out) : (memref<1x32x1x128xbf16>, memref<1x8x2080x128xbf16>, memref<1x8x2080x128xbf16>, memref<1x1x1x2080xf32>, memref<1x32x65x130xf32>, memref<1x1x32x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_decode_mask_f32(%q: memref<3x4x1x64xbf16>, %k: memref<3x2x333x64xbf16>, %v: memref<3x2x333x64xbf16>, %mask: memref<3x1x1x333xf32>, %ws: memref<3x4x6x66xf32>, %out: memref<3x4x1x64xf32>)
      attributes {fp8.attention = {scale = 0.1250000000 : f32, causal = false, has_mask = true}} {
    return
  }
  func.func @run_decode_mask_f32(%q: memref<3x4x1x64xbf16>, %k: memref<3x2x333x64xbf16>, %v: memref<3x2x333x64xbf16>, %mask: memref<3x1x1x333xf32>, %ws: memref<3x4x6x66xf32>, %out: memref<3x4x1x64xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_mask_f32(%q, %k, %v, %mask, %ws, %out) : (memref<3x4x1x64xbf16>, memref<3x2x333x64xbf16>, memref<3x2x333x64xbf16>, memref<3x1x1x333xf32>, memref<3x4x6x66xf32>, memref<3x4x1x64xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_decode_mixed_f16(%q: memref<1x2x1x128xf16>, %k: memref<1x1x257x128xf16>, %v: memref<1x1x257x128xf16>, %mask: memref<1x1x1x257xf32>, %ws: memref<1x2x9x130xf32>, %out: memref<1x2x1x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true}} {
    return
  }
  func.func @run_decode_mixed_f16(%q: memref<1x2x1x128xf16>, %k: memref<1x1x257x128xf16>, %v: memref<1x1x257x128xf16>, %mask: memref<1x1x1x257xf32>, %ws: memref<1x2x9x130xf32>, %out: memref<1x2x1x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_mixed_f16(%q, %k, %v, %mask, %ws, %out) : (memref<1x2x1x128xf16>, memref<1x1x257x128xf16>, memref<1x1x257x128xf16>, memref<1x1x1x257xf32>, memref<1x2x9x130xf32>, memref<1x2x1x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_decode_one_split(%q: memref<2x8x1x128xbf16>, %k: memref<2x8x30x128xbf16>, %v: memref<2x8x30x128xbf16>, %ws: memref<2x8x1x130xf32>, %out: memref<2x8x1x128xf32>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = false}} {
    return
  }
  func.func @run_decode_one_split(%q: memref<2x8x1x128xbf16>, %k: memref<2x8x30x128xbf16>, %v: memref<2x8x30x128xbf16>, %ws: memref<2x8x1x130xf32>, %out: memref<2x8x1x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_one_split(%q, %k, %v, %ws, %out) : (memref<2x8x1x128xbf16>, memref<2x8x30x128xbf16>, memref<2x8x30x128xbf16>, memref<2x8x1x130xf32>, memref<2x8x1x128xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_decode_b8(%q: memref<8x32x1x128xbf16>, %k: memref<8x8x2080x128xbf16>, %v: memref<8x8x2080x128xbf16>, %mask: memref<8x1x1x2080xf32>, %ws: memref<8x32x6x130xf32>, %out: memref<8x1x32x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, sequence_major = true}} {
    return
  }
  func.func @run_perf_decode_b8(%q: memref<8x32x1x128xbf16>, %k: memref<8x8x2080x128xbf16>, %v: memref<8x8x2080x128xbf16>, %mask: memref<8x1x1x2080xf32>, %ws: memref<8x32x6x130xf32>, %out: memref<8x1x32x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_decode_b8(%q, %k, %v, %mask, %ws, %out) : (memref<8x32x1x128xbf16>, memref<8x8x2080x128xbf16>, memref<8x8x2080x128xbf16>, memref<8x1x1x2080xf32>, memref<8x32x6x130xf32>, memref<8x1x32x128xbf16>) -> ()
    return
  }
  // Decode steps reading an FP8 cache (fp8-outline-attention absorbed the
  // cache's dequantization: (k8, k_scale, v8, v_scale, q, [mask],
  // workspace, out), `kv_dequant` the element type after each step). The
  // run_ wrappers take (q, k, v, [mask], k_scale, v_scale, ws, out).
  func.func private @__fp8_attention_decode_cache_b1(%k: memref<1x8x2080x128xf8E4M3FN>, %ks: memref<f32>, %v: memref<1x8x2080x128xf8E4M3FN>, %vs: memref<f32>, %q: memref<1x32x1x128xbf16>, %mask: memref<1x1x1x2080xf32>, %ws: memref<1x32x33x130xf32>, %out: memref<1x1x32x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, sequence_major = true, kv_dequant = [f16, f32, bf16]}} {
    return
  }
  func.func @run_decode_cache_b1(%q: memref<1x32x1x128xbf16>, %k: memref<1x8x2080x128xf8E4M3FN>, %v: memref<1x8x2080x128xf8E4M3FN>, %mask: memref<1x1x1x2080xf32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<1x32x33x130xf32>, %out: memref<1x1x32x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_cache_b1(%k, %ks, %v, %vs, %q, %mask, %ws, %out) : (memref<1x8x2080x128xf8E4M3FN>, memref<f32>, memref<1x8x2080x128xf8E4M3FN>, memref<f32>, memref<1x32x1x128xbf16>, memref<1x1x1x2080xf32>, memref<1x32x33x130xf32>, memref<1x1x32x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_decode_cache_f16(%k: memref<3x2x333x64xf8E4M3FN>, %ks: memref<f32>, %v: memref<3x2x333x64xf8E4M3FN>, %vs: memref<f32>, %q: memref<3x4x1x64xf16>, %ws: memref<3x4x6x66xf32>, %out: memref<3x4x1x64xf32>)
      attributes {fp8.attention = {scale = 0.1250000000 : f32, causal = false, has_mask = false, kv_dequant = [f16]}} {
    return
  }
  func.func @run_decode_cache_f16(%q: memref<3x4x1x64xf16>, %k: memref<3x2x333x64xf8E4M3FN>, %v: memref<3x2x333x64xf8E4M3FN>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<3x4x6x66xf32>, %out: memref<3x4x1x64xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_cache_f16(%k, %ks, %v, %vs, %q, %ws, %out) : (memref<3x2x333x64xf8E4M3FN>, memref<f32>, memref<3x2x333x64xf8E4M3FN>, memref<f32>, memref<3x4x1x64xf16>, memref<3x4x6x66xf32>, memref<3x4x1x64xf32>) -> ()
    return
  }
  func.func private @__fp8_attention_perf_decode_cache_b8(%k: memref<8x8x2080x128xf8E4M3FN>, %ks: memref<f32>, %v: memref<8x8x2080x128xf8E4M3FN>, %vs: memref<f32>, %q: memref<8x32x1x128xbf16>, %mask: memref<8x1x1x2080xf32>, %ws: memref<8x32x6x130xf32>, %out: memref<8x1x32x128xbf16>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, sequence_major = true, kv_dequant = [f16, f32, bf16]}} {
    return
  }
  func.func @run_perf_decode_cache_b8(%q: memref<8x32x1x128xbf16>, %k: memref<8x8x2080x128xf8E4M3FN>, %v: memref<8x8x2080x128xf8E4M3FN>, %mask: memref<8x1x1x2080xf32>, %ks: memref<f32>, %vs: memref<f32>, %ws: memref<8x32x6x130xf32>, %out: memref<8x1x32x128xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_perf_decode_cache_b8(%k, %ks, %v, %vs, %q, %mask, %ws, %out) : (memref<8x8x2080x128xf8E4M3FN>, memref<f32>, memref<8x8x2080x128xf8E4M3FN>, memref<f32>, memref<8x32x1x128xbf16>, memref<8x1x1x2080xf32>, memref<8x32x6x130xf32>, memref<8x1x32x128xbf16>) -> ()
    return
  }
  func.func private @__fp8_attention_decode_tail_inf(%q: memref<2x4x1x128xbf16>, %k: memref<2x1x520x128xbf16>, %v: memref<2x1x520x128xbf16>, %mask: memref<2x1x1x520xf32>, %ws: memref<2x4x17x130xf32>, %out: memref<2x4x1x128xf32>)
      attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true}} {
    return
  }
  func.func @run_decode_tail_inf(%q: memref<2x4x1x128xbf16>, %k: memref<2x1x520x128xbf16>, %v: memref<2x1x520x128xbf16>, %mask: memref<2x1x1x520xf32>, %ws: memref<2x4x17x130xf32>, %out: memref<2x4x1x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_attention_decode_tail_inf(%q, %k, %v, %mask, %ws, %out) : (memref<2x4x1x128xbf16>, memref<2x1x520x128xbf16>, memref<2x1x520x128xbf16>, memref<2x1x1x520xf32>, memref<2x4x17x130xf32>, memref<2x4x1x128xf32>) -> ()
    return
  }
}
