// Input of test/GPU/abi.test: a TMA descriptor for an fp8 tensor.
!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x128xf8E4M3FN, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
func.func @make(%d: memref<*xf8E4M3FN>) -> !llvm.ptr {
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %t = nvgpu.tma.create.descriptor %d box[%c64, %c128] : memref<*xf8E4M3FN> -> !tmap
  %p = builtin.unrealized_conversion_cast %t : !tmap to !llvm.ptr
  return %p : !llvm.ptr
}
