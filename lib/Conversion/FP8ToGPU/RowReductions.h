//===- RowReductions.h - Row reductions as warp reductions ------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H
#define FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp8 {

/// A warp's lanes: those that share one row of a row reduction (fewer, in
/// aligned groups, for short rows: lowerRowReductionToWarps).
constexpr int64_t kReductionLanes = 32;

/// Wide rows: where few rows are long (a decode step's RMSNorm and
/// quantization rows: 1-64 rows of 4096 or more), a warp per row leaves
/// the GPU nearly idle and walks the row as a chain of dependent loads (a
/// 4096-element norm -> quantize kernel: ~21 us on an H100). A row of at
/// least kWideRowMinVectors vectors (8 steps of a warp) gets up to
/// kMaxRowWarps warps of one block instead (each lane still at least one
/// vector), while rows x warps stays within kWideRowWarpBudget; the warps'
/// totals meet in workgroup memory (lowerRowReductionToWarps).
constexpr int64_t kWideRowMinVectors = 256;
constexpr int64_t kMaxRowWarps = 16;
constexpr int64_t kWideRowWarpBudget = 1024;

/// On an scf.parallel whose innermost dimension is a wide row's lanes: the
/// threads per block fp8-gpu-map-loops must launch it with (one row per
/// block: its barriers and workgroup memory are the row's).
constexpr llvm::StringLiteral kBlockThreadsAttr = "fp8.block_threads";

/// Where a stage's input comes from (RowStage::sources).
constexpr int kFromElement = -3; ///< RowStage::joins' value, same element
constexpr int kFromOperand = -2; ///< the operand (loaded, for a buffer)
constexpr int kFromTotal = -1;   ///< the reduction's value for the row
// Otherwise the index of the earlier stage whose value for the row it is.

/// An op that runs in a row reduction's warp after the reduction.
struct RowStage {
  linalg::GenericOp op;
  /// Per element: its loops are the reduction's (the reduced one now
  /// parallel), or those with the last two merged; per row: the reduction's
  /// parallel loops up to unit loops and their order.
  bool perElement = false;
  /// Its loop dimensions as expressions of the reduction's: a dimension, 0
  /// for a unit loop, or `d[n-2] * L + d[n-1]` for a merged one.
  SmallVector<AffineExpr> dims;
  /// Per input operand: kFromOperand, kFromTotal, kFromElement or a
  /// stage's index.
  SmallVector<int> sources;
  /// A chained row reduction: a reduction over the same rows (its last loop
  /// the reduced one) of values the per-element stage `joins` computes (the
  /// amax of a norm's output), folded in that stage's loop from `fill`'s
  /// value, which it replaces; its total is a per-row value.
  linalg::FillOp fill;
  int joins = -1;
  /// A per-element stage that reads elements an earlier per-element stage
  /// of the kernel wrote (at the same positions) runs with that stage's
  /// lanes and vector width, so that each element is read back by the
  /// thread that wrote it; -1: its own width.
  int sameLanesAs = -1;
  /// The input operands (kFromOperand) that read back, at the positions it
  /// wrote them, elements stage `sameLanesAs` wrote: an unrolled stage
  /// takes that stage's stored vectors instead of loading them.
  SmallVector<unsigned> readBack;
  bool isReduction() const { return static_cast<bool>(fill); }
};

/// Whether `op`'s body is `combine(f(inputs...), out)` with a combiner a
/// warp butterfly can fold (lowerRowReductionToWarps).
bool hasWarpCombiner(linalg::GenericOp op);

/// Lowers a row reduction -- a bufferized linalg.generic with parallel
/// dimensions first and one reduction dimension last (at least
/// kReductionLanes long, static; or of run-time sizes, then with 32 lanes,
/// scalar loads and neither `init` nor `stages`) that is the innermost
/// index of every input
/// it indexes (rows contiguous: not a contraction's K x N operand), one f32
/// (or i32) output indexed by the parallel dimensions only, whose body
/// yields `combine(f(inputs...), out)` with `combine` one of addf, mulf,
/// maximumf, minimumf, maxnumf, minnumf (or an i32 add/min/max/and/or) -- to
/// an scf.parallel over (parallel dims..., lane in [0, L)) with L = 32, or
/// fewer for a row too short to give 32 lanes a whole vector each (then
/// 32 / L rows share a warp): lane l folds f over vectors l, l + L, ...
/// from the combiner's identity, the L partials meet through log2(L)
/// gpu.shuffle xor steps, and lane 0 combines the total into the output.
/// fp8-gpu-map-loops linearizes the lane innermost, so the lanes of a row
/// are L threads of one warp and their loads are coalesced. A wide row
/// (kMaxRowWarps) has L = 32 W lanes, W warps of one block
/// (kBlockThreadsAttr): after each warp's butterfly, lane 0 of every warp
/// writes its total to a workgroup buffer (a memref.alloca in the
/// workgroup address space, which fp8-gpu-map-loops makes the launch's
/// workgroup attribution), a gpu.barrier, and every lane folds the W totals
/// in warp order (the same value in every lane). The op is erased on
/// success; on failure (not such a reduction) nothing changed. With `init`, a
/// fill of the whole output (initializingFill), lane 0 stores combine(total,
/// the fill's value) instead of folding into the loaded output; the caller
/// erases the fill when this succeeds. `stages` (rowReductionStages) then run
/// in the same warp: per-row stages on the row's value (in every lane with
/// `init`, lane 0 storing; in lane 0 alone without), per-element stages as
/// lane-strided loops over the row; the caller erases them when this succeeds.
/// `registerRows`: where a per-element stage reads the row again, a row gets
/// at least as many warps (any number of rows) as let each lane's steps
/// unroll, and
/// the later passes take the first pass's registers (chooseRowLanes).
LogicalResult lowerRowReductionToWarps(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       int64_t vectorWidth,
                                       linalg::FillOp init = {},
                                       ArrayRef<RowStage> stages = {},
                                       bool registerRows = false);

/// The element-wise generics right after row reduction `op` (each the next
/// op with memory effects but allocations; `op` writes its whole output)
/// that can run in its warp, in order: each reads, of what the kernel
/// writes, only the per-row values of its own row (the reduction's total,
/// an earlier per-row stage's value: same buffer, same linear offset, through
/// views that only reshape), which the warp forwards instead of reloading;
/// reads anything else from buffers the kernel does not write; and writes a
/// fresh allocation that nothing in the kernel reads (or, per row, the
/// reduction's own element in place), each element once (a permutation
/// map). Bodies are scalar code without memory effects (linalg.index per
/// element only). Per-element stages need `init`. RMSNorm: the sum,
/// rsqrt(mean + eps), x * rsqrt * w; a per-row quantization: the amax, its
/// scale, the quantized row, the scale's M-major copy. A fill and a row
/// reduction over the same rows right after a per-element stage, reading
/// that stage's values at the same elements (and buffers the kernel does
/// not write), is a chained reduction in the stage's loop (the first level
/// of the per-tensor amax of a norm's output). A later per-element stage
/// may read elements an earlier one wrote, at the same positions: it runs
/// with that stage's lanes (a per-row quantization of a norm's output).
SmallVector<RowStage> rowReductionStages(linalg::GenericOp op,
                                         linalg::FillOp init);

/// The buffer under every view of `v` (ViewLikeOpInterface: casts,
/// subviews, transposes, reshapes): what `v` may alias.
Value aliasRoot(Value v);

/// Whether `root` (an aliasRoot) is a buffer nothing else aliases: an
/// allocation, or an output of the model's public function (an argument
/// that buffer-results-to-out-params marked `bufferize.result`: the runtime
/// refuses outputs that overlap an input or another output).
bool isOwnBuffer(Value root);

/// The linalg.fill that initializes `op`'s (single) output just before it:
/// the nearest preceding op in the block with memory effects is a fill of
/// the same buffer, and `op`'s output map is a permutation of its parallel
/// dimensions covering the whole (static) output -- every loop static --, so
/// every element the fill wrote is written once by `op`. Null otherwise.
linalg::FillOp initializingFill(linalg::GenericOp op);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H
