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
}
