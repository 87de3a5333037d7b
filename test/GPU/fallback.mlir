// A one-kernel module for the PTX JIT fallback check: test/GPU/CMakeLists.txt
// compiles it to sm_90 PTX and to an sm_100a cubin, which an H200 (sm_90)
// rejects, so fp8rt_cuda_module_load must fall back to the PTX.
module attributes {gpu.container_module} {
  gpu.module @fallback {
    // out[i] = value + i
    gpu.func @iota_plus(%out: memref<256xf32>, %value: f32) kernel {
      %tid = gpu.thread_id x
      %i = arith.index_cast %tid : index to i32
      %f = arith.sitofp %i : i32 to f32
      %v = arith.addf %f, %value : f32
      memref.store %v, %out[%tid] : memref<256xf32>
      gpu.return
    }
  }
}
