//===- KernelIR.h - IR helpers of the generated GPU kernels -----*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// What the kernel generators (Gemm/, Attention/) share: KernelIR wraps the
// OpBuilder with the index/integer/float helpers (constants folded into
// `x * 1`, `x + 0` shortcuts), and the Hopper pieces both kernels are made
// of -- shared-memory matrix descriptors for wgmma, TMA tensor maps encoded
// by the CUDA runtime and the copies that use them, mbarriers.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_KERNELIR_H
#define FP8_LIB_CONVERSION_FP8TOGPU_KERNELIR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::fp8 {

struct KernelIR {
  OpBuilder &b;
  Location loc;
  Type f32, i32, i64, idx;

  KernelIR(OpBuilder &b, Location loc);

  Value cIdx(int64_t v);
  Value cI32(int64_t v);
  Value cI64(int64_t v);
  Value cF32(float v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  Value addC(Value x, int64_t c) { return c ? add(x, cIdx(c)) : x; }
  Value mulC(Value x, int64_t c) { return c == 1 ? x : mul(x, cIdx(c)); }
  Value divC(Value x, int64_t c);
  Value remC(Value x, int64_t c);
  Value minC(Value x, int64_t c);
  Value ult(Value x, Value y);
  Value ultC(Value x, int64_t c) { return ult(x, cIdx(c)); }
  Value fmul(Value x, Value y);
  /// 2^x with PTX's ex2.approx.ftz.f32 (softmax in the attention kernels).
  Value exp2Approx(Value x);
  /// Inline PTX `text` (AT&T operand syntax, $0 ...) with `constraints`,
  /// kept in place (has_side_effects: the warp-synchronous instructions it
  /// holds must not move or merge); its one result of `type`.
  Value inlinePtx(Type type, ValueRange operands, StringRef text,
                  StringRef constraints);
  /// `lo` and `hi` (f32) rounded to `elem` (f16 or bf16) and packed into one
  /// 32-bit register, `lo` in the low half: an mma / wgmma operand pair.
  Value packPair(Type elem, Value lo, Value hi);
  Value toI64(Value index);
  Value toI32(Value index);
  Value eqC(Value x, int64_t c);

  /// A scale element as f32. E8M0 is 2^(byte - 127) with 0xFF = NaN; byte 0
  /// is the subnormal 2^-127 (0x00400000), which a plain `byte << 23` would
  /// turn into zero.
  Value toF32(Value v);

  /// Loads element `linear` of a rank-0 or rank-1 memref.
  Value load(Value mem, Value linear);
};

/// The gpu.module `name` of a generated kernel, inserted after `func` (the
/// host function that launches it) into `symbols`; the module becomes a
/// GPU container module.
gpu::GPUModuleOp createKernelModule(func::FuncOp func, StringRef name,
                                    SymbolTable &symbols);

/// A kernel gpu.func `name` of `params` at the end of `module`, of
/// `threads` threads per block (known block size).
gpu::GPUFuncOp createKernelFunc(gpu::GPUModuleOp module, StringRef name,
                                TypeRange params, int64_t threads);

/// A static, contiguous memref collapsed to rank 1 (the kernels' view of
/// their operands); a rank-0 one (a scale) stays as it is.
Value flattenMemRef(KernelIR &k, Value memref);

/// An LLVM pointer in `addressSpace` to the aligned data of `memref`.
/// `fromGeneric`: the memref's address is a generic one (global memory).
Value llvmPointer(KernelIR &k, Value memref, unsigned addressSpace,
                  bool fromGeneric);

//===----------------------------------------------------------------------===//
// Hopper building blocks
//===----------------------------------------------------------------------===//

/// The bits of a wgmma matrix descriptor that do not depend on the address:
/// `lbo` >> 4 in [16,30), `sbo` >> 4 in [32,46), the swizzle mode in [62,64).
int64_t matrixDescriptorFixedBits(int64_t lbo, int64_t sbo,
                                  int64_t swizzleMode);

/// The 64-bit wgmma matrix descriptor of the shared-memory bytes at
/// `smemAddr` (i64 shared-window address) + `byteOffset`: start address >> 4
/// in bits [0,14), `lbo` >> 4 in [16,30), `sbo` >> 4 in [32,46), the swizzle
/// mode in [62,64) (0 none, 1 128B; base offset 0: operands start on their
/// swizzle atom).
Value buildMatrixDescriptor(KernelIR &k, Value smemAddr, int64_t byteOffset,
                            int64_t lbo, int64_t sbo, int64_t swizzleMode);

/// A call to the CUDA runtime's tensor-map encoder
/// (`fp8rt_cuda_tensor_map_encode_tiled`) for the bytes of `data` (a memref
/// of global memory) seen as a row-major UINT8 tensor of `dims` (outermost
/// first, innermost contiguous) with boxes of `box`, 128B swizzle, 256-byte
/// L2 promotion and zero fill out of bounds. Returns the device address of
/// the map (!llvm.ptr), a value of the host code. `outerDim` (index), when
/// given, replaces dims[0] by a run-time size.
Value encodeByteTensorMap(KernelIR &k, Value data, ArrayRef<int64_t> dims,
                          ArrayRef<int64_t> box, Value outerDim = {});

/// One TMA copy of the box at `coords` (innermost first, i32 or index) of
/// `map` into the shared bytes at `dst` (!llvm.ptr<3>), completing on the
/// mbarrier `bar` (!llvm.ptr<3>); to the cluster CTAs of `multicastMask`
/// (i16) when given.
void tmaLoad(KernelIR &k, Value map, ValueRange coords, Value dst, Value bar,
             Value multicastMask = Value());

/// Programmatic dependent launch: the calling thread waits until the
/// kernel's stream predecessor completed (its writes visible;
/// griddepcontrol.wait), then lets the successor launch
/// (griddepcontrol.launch_dependents). A kernel runs it in every thread
/// before it touches memory a predecessor may write or read.
void waitForGridDependency(OpBuilder &b, Location loc);

/// mbarrier helpers (barriers are !llvm.ptr<3>).
void mbarrierInit(KernelIR &k, Value bar, int64_t count);
/// The calling thread arrives and the phase expects `bytes` of TMA copies.
void mbarrierArriveExpectTx(KernelIR &k, Value bar, int64_t bytes);
void mbarrierArrive(KernelIR &k, Value bar);
/// Waits until the phase of parity `parity` (i32) completed.
void mbarrierWait(KernelIR &k, Value bar, Value parity);

/// Named barrier `id` (i32; 0 is the CTA's) of `threads` threads: the
/// calling warp waits (bar.sync) or only arrives (bar.arrive).
void namedBarrierSync(KernelIR &k, Value id, int64_t threads);
void namedBarrierArrive(KernelIR &k, Value id, int64_t threads);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_KERNELIR_H
