//===- KernelBuilder.h - IR helpers of the FP8 GEMM generator ---*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// KernelBuilder is the kernel generators' KernelIR (../KernelIR.h) with the
// GEMM problem and its scale loads. KernelValues holds the values the
// launch body computes once and every builder reads; AccumulatorFragment
// maps a thread's wgmma accumulator registers to rows and columns.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_KERNELBUILDER_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_KERNELBUILDER_H

#include "GemmPlan.h"

#include "../KernelIR.h"

#include "mlir/IR/Builders.h"

namespace mlir::fp8::gemm {

/// The GEMM generator's builder: the shared kernel helpers (KernelIR) and
/// the problem every builder reads.
struct KernelBuilder : KernelIR {
  const GemmProblem &p;

  KernelBuilder(OpBuilder &b, Location loc, const GemmProblem &p)
      : KernelIR(b, loc), p(p) {}

  /// M at run time with M-major lhs scales (SideScale::dynamicRows): their
  /// row stride, align(M, pad), computed once at the kernel's entry.
  Value lhsMMajorStride;

  /// The f32 scale of (batch, row, k) for one operand; `row` and `k` must be
  /// in range (callers clamp).
  Value scaleAt(Value mem, const SideScale &s, Value batch, Value row,
                Value kIdx);
  /// Its element's linear index in the flat scale memref (null for a
  /// per-tensor scale).
  Value scaleIndex(const SideScale &s, Value batch, Value row, Value kIdx);
};

/// Values the launch body computes once.
struct KernelValues {
  /// The operands flattened to rank 0/1 (identity layouts: contiguous); the
  /// kernel computes linear indices itself. `bias` is null without bias.
  Value lhs, lhsScale, rhs, rhsScale, bias, out;
  /// The CTA tile's batch (grid.z, or the persistent walk's) and the
  /// thread id.
  Value bz, tid;
  /// First row (of M) and column (of N) of the CTA tile.
  Value m0, n0;
  /// The dynamic shared-memory buffer (memref<?xi8, workgroup>) and the
  /// shared-window address (i64, for wgmma descriptors) of the tiles' base:
  /// the buffer's, rounded up to SmemLayout::alignment.
  Value smem, smemBase;
  /// Bytes from the buffer to the tiles' base (i64; null when the layout
  /// needs no more than the buffer's 16-byte alignment).
  Value smemAlignOffset;
  /// TMA: the device addresses of the operands' tensor maps (host values
  /// the launch captures; null for thread copies), and of the output's for
  /// the TMA-store epilogue (null otherwise).
  Value tensorMapA, tensorMapB, tensorMapD;
  /// The staged epilogue input's tensor map (GemmConfig::stagedInput; null
  /// otherwise).
  Value tensorMapIn;
  /// Typed views of the A and B tiles of stage 0 (element-wise copies).
  Value tileA, tileB;
  /// Element offsets of this CTA's batch in lhs, rhs and out.
  Value lhsBase, rhsBase, outBase;
  /// A fused consumer's inputs besides the product (flat memrefs, in
  /// GemmProblem::epilogueInputs order) and its body (null without one).
  SmallVector<Value> epilogueArgs;
  const class FusedEpilogue *fused = nullptr;
  /// M at run time (index; GemmProblem::dynamicM), null for a static M.
  Value rowsM;
};

/// Whether `row` (index) is below M, and `row` clamped to M - 1: constants
/// for a static M, `kv.rowsM` for a dynamic one.
Value rowInRange(KernelBuilder &kb, const KernelValues &kv, Value row);
Value clampRow(KernelBuilder &kb, const KernelValues &kv, Value row);

/// The tiles' base in shared memory (the dynamic buffer rounded up to
/// SmemLayout::alignment) as !llvm.ptr<3>.
Value tilesPointer(KernelBuilder &kb, const KernelValues &kv);

/// Points `kv` at one CTA tile: N tile `nb`, M tile `mb` and batch `bz`
/// (indices): bz, m0, n0 and the batch offsets.
void setTile(KernelBuilder &kb, const GemmConfig &config, KernelValues &kv,
             Value nb, Value mb, Value bz);

/// The wgmma D fragment (f32) of one warpgroup for a 64 x BN tile: register
/// i of thread t holds row 16 * warp + lane / 4 + 8 * ((i / 2) % 2), column
/// 8 * (i / 4) + 2 * (lane % 4) + i % 2, with warp = t / 32, lane = t % 32.
struct AccumulatorFragment {
  int64_t numRegs = 0;
  /// The two global rows a thread holds (rows[1] = rows[0] + 8).
  Value rows[2];
  /// The global column of register 0.
  Value col0;
  /// !llvm.struct of numRegs f32.
  Type type;

  static AccumulatorFragment build(KernelBuilder &kb, const KernelValues &kv,
                                   int64_t bn);
  Value rowOf(int64_t i) const { return rows[(i / 2) % 2]; }
  Value colOf(KernelBuilder &kb, int64_t i) const {
    return kb.addC(col0, 8 * (i / 4) + i % 2);
  }
};

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_KERNELBUILDER_H
