// Kernels and host code for fp8rt_cuda's on-GPU check (test/GPU/gpu_runtime_test.cpp).
// Lowered by gpu-lower-to-nvvm-pipeline to sm_90a cubin (ptxas) and host LLVM IR
// that calls our runtime's mgpu* functions. See test/GPU/CMakeLists.txt.
module attributes {gpu.container_module} {
  gpu.module @fp8_kernels {
    // out[p] = e4m3(in[2p]) << 8 | e4m3(in[2p+1]) with cvt.rn.satfinite.e4m3x2.f32;
    // back[2p], back[2p+1] = the two bytes decoded again with cvt.rn.f16x2.e4m3x2.
    gpu.func @cvt_e4m3(%in: memref<4096xf32>, %out: memref<2048xi16>,
                       %back: memref<4096xf16>) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %t = arith.muli %bid, %bdim : index
      %p = arith.addi %t, %tid : index
      %i0 = arith.muli %p, %c2 : index
      %i1 = arith.addi %i0, %c1 : index
      %a = memref.load %in[%i0] : memref<4096xf32>
      %b = memref.load %in[%i1] : memref<4096xf32>
      %q = nvvm.convert.f32x2.to.f8x2 %a, %b {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16 (f8E4M3FN)
      memref.store %q, %out[%p] : memref<2048xi16>
      %qv1 = vector.broadcast %q : i16 to vector<1xi16>
      %qv = vector.bitcast %qv1 : vector<1xi16> to vector<2xi8>
      %h = nvvm.convert.f8x2.to.f16x2 %qv : vector<2xi8> (f8E4M3FN) -> vector<2xf16>
      %hlo = vector.extract %h[0] : f16 from vector<2xf16>
      %hhi = vector.extract %h[1] : f16 from vector<2xf16>
      memref.store %hhi, %back[%i0] : memref<4096xf16>
      memref.store %hlo, %back[%i1] : memref<4096xf16>
      gpu.return
    }

    // out = alpha * x + y
    gpu.func @axpy(%alpha: f32, %x: memref<4096xf32>, %y: memref<4096xf32>,
                   %out: memref<4096xf32>) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %t = arith.muli %bid, %bdim : index
      %i = arith.addi %t, %tid : index
      %xv = memref.load %x[%i] : memref<4096xf32>
      %yv = memref.load %y[%i] : memref<4096xf32>
      %m = arith.mulf %alpha, %xv : f32
      %s = arith.addf %m, %yv : f32
      memref.store %s, %out[%i] : memref<4096xf32>
      gpu.return
    }

    // One block of 1024 threads reverses 32768 floats through 128 KiB of
    // dynamic shared memory (needs the > 48 KiB opt-in).
    gpu.func @reverse_smem(%in: memref<32768xf32>, %out: memref<32768xf32>) kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c1024 = arith.constant 1024 : index
      %clast = arith.constant 32767 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %sm = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32768xf32, #gpu.address_space<workgroup>>
      scf.for %k = %c0 to %c32 step %c1 {
        %o = arith.muli %k, %c1024 : index
        %i = arith.addi %o, %tid : index
        %v = memref.load %in[%i] : memref<32768xf32>
        memref.store %v, %sm[%i] : memref<32768xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      scf.for %k = %c0 to %c32 step %c1 {
        %o = arith.muli %k, %c1024 : index
        %i = arith.addi %o, %tid : index
        %j = arith.subi %clast, %i : index
        %v = memref.load %sm[%j] : memref<32768xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%i] : memref<32768xf32>
      }
      gpu.return
    }
  }

  func.func @run_cvt(%in: memref<4096xf32>, %out: memref<2048xi16>,
                     %back: memref<4096xf16>) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c256 = arith.constant 256 : index
    %t0 = gpu.wait async
    %din, %t1 = gpu.alloc async [%t0] () : memref<4096xf32>
    %t2 = gpu.memcpy async [%t1] %din, %in : memref<4096xf32>, memref<4096xf32>
    %dout, %t3 = gpu.alloc async [%t2] () : memref<2048xi16>
    %dback, %t4 = gpu.alloc async [%t3] () : memref<4096xf16>
    %t5 = gpu.launch_func async [%t4] @fp8_kernels::@cvt_e4m3
        blocks in (%c8, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%din : memref<4096xf32>, %dout : memref<2048xi16>, %dback : memref<4096xf16>)
    %t6 = gpu.memcpy async [%t5] %out, %dout : memref<2048xi16>, memref<2048xi16>
    %t7 = gpu.memcpy async [%t6] %back, %dback : memref<4096xf16>, memref<4096xf16>
    %t8 = gpu.dealloc async [%t7] %din : memref<4096xf32>
    %t9 = gpu.dealloc async [%t8] %dout : memref<2048xi16>
    %t10 = gpu.dealloc async [%t9] %dback : memref<4096xf16>
    gpu.wait [%t10]
    return
  }

  // Also exercises gpu.host_register (mgpuMemHostRegisterMemRef) and
  // gpu.memset (mgpuMemset32): `filled` comes back as 4096 copies of `fill`.
  func.func @run_axpy(%alpha: f32, %x: memref<4096xf32>, %y: memref<4096xf32>,
                      %out: memref<4096xf32>, %fill: f32, %filled: memref<4096xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %xu = memref.cast %x : memref<4096xf32> to memref<*xf32>
    gpu.host_register %xu : memref<*xf32>
    %t0 = gpu.wait async
    %dx, %t1 = gpu.alloc async [%t0] () : memref<4096xf32>
    %t2 = gpu.memcpy async [%t1] %dx, %x : memref<4096xf32>, memref<4096xf32>
    %dy, %t3 = gpu.alloc async [%t2] () : memref<4096xf32>
    %t4 = gpu.memcpy async [%t3] %dy, %y : memref<4096xf32>, memref<4096xf32>
    %dout, %t5 = gpu.alloc async [%t4] () : memref<4096xf32>
    %t6 = gpu.launch_func async [%t5] @fp8_kernels::@axpy
        blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%alpha : f32, %dx : memref<4096xf32>, %dy : memref<4096xf32>, %dout : memref<4096xf32>)
    %t7 = gpu.memcpy async [%t6] %out, %dout : memref<4096xf32>, memref<4096xf32>
    %t8 = gpu.memset async [%t7] %dy, %fill : memref<4096xf32>, f32
    %t9 = gpu.memcpy async [%t8] %filled, %dy : memref<4096xf32>, memref<4096xf32>
    %t10 = gpu.dealloc async [%t9] %dx : memref<4096xf32>
    %t11 = gpu.dealloc async [%t10] %dy : memref<4096xf32>
    %t12 = gpu.dealloc async [%t11] %dout : memref<4096xf32>
    gpu.wait [%t12]
    gpu.host_unregister %xu : memref<*xf32>
    return
  }

  func.func @run_reverse(%in: memref<32768xf32>, %out: memref<32768xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c1024 = arith.constant 1024 : index
    %smem = arith.constant 131072 : i32
    %t0 = gpu.wait async
    %din, %t1 = gpu.alloc async [%t0] () : memref<32768xf32>
    %t2 = gpu.memcpy async [%t1] %din, %in : memref<32768xf32>, memref<32768xf32>
    %dout, %t3 = gpu.alloc async [%t2] () : memref<32768xf32>
    %t4 = gpu.launch_func async [%t3] @fp8_kernels::@reverse_smem
        blocks in (%c1, %c1, %c1) threads in (%c1024, %c1, %c1)
        dynamic_shared_memory_size %smem
        args(%din : memref<32768xf32>, %dout : memref<32768xf32>)
    %t5 = gpu.memcpy async [%t4] %out, %dout : memref<32768xf32>, memref<32768xf32>
    %t6 = gpu.dealloc async [%t5] %din : memref<32768xf32>
    %t7 = gpu.dealloc async [%t6] %dout : memref<32768xf32>
    gpu.wait [%t7]
    return
  }
}
