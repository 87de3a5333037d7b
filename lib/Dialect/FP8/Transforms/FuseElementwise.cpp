//===- FuseElementwise.cpp - Element-wise fusion without recomputation ----===//
//
// Part of fp8-opt. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "fp8-fuse-elementwise"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSEELEMENTWISE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
bool isReshape(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op);
}

bool isAllParallel(linalg::GenericOp g) {
  return g.getNumParallelLoops() == g.getNumLoops();
}

/// Whether a producer's body is only arithmetic (no math-library call such
/// as exp or tanh) on its elements and indices (linalg.index: attention's
/// causal test): cheap enough to evaluate once per consumer.
bool isCheapBody(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  for (Operation &op : generic.getRegion().front().without_terminator())
    if (op.getDialect() != producer->getContext()->getLoadedDialect("arith") &&
        !isa<linalg::IndexOp>(op))
      return false;
  return true;
}

/// Whether a producer only moves elements: one input, parallel loops, and a
/// body of casts at most (a transpose, a layout copy, a widening or
/// narrowing). Evaluated in an element-wise consumer, it costs the one load
/// the consumer made of its result (possibly less coalesced), whatever the
/// consumer's indexing: RoPE reads the transposed q at (d + 64) mod 128.
bool movesElementsOnly(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !isAllParallel(generic))
    return false;
  Block &body = generic.getRegion().front();
  if (!body.getArgument(1).use_empty())
    return false;
  return llvm::all_of(body.without_terminator(), [](Operation &op) {
    return isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp>(op);
  });
}

/// The most tensors a consumer may read after a producer with other uses is
/// recomputed in it (distinct values, rank-0 scalars not counted). Each
/// recomputation adds the producer's inputs to the consumer's, so a chain
/// of such producers -- a decoder's residual stream, h(l+1) = h(l) + f(l),
/// read by each layer's norm and by the next add -- would otherwise grow
/// one input per layer: the norm of layer l re-read every earlier layer's
/// outputs (32 layers: kernels of up to 60 inputs, ~20 ms of a 2048-token
/// prefill on an H100). With this bound the stream is written out instead
/// (in a Llama-3-8B-shaped decoder: two add kernels a layer); fusions of
/// single-use producers afterwards may still add inputs (no op of a long
/// chain reads more than 6: fuse-residual-stream.mlir).
constexpr unsigned kMaxDuplicatedInputs = 4;

/// The distinct tensors (not rank-0) `consumer` reads once `producer` is
/// fused into its `operand`.
unsigned tensorsAfterFusion(linalg::GenericOp consumer,
                            linalg::GenericOp producer, OpOperand *operand) {
  llvm::SmallDenseSet<Value, 8> read;
  auto add = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (type && type.getRank() > 0)
      read.insert(v);
  };
  for (OpOperand *in : consumer.getDpsInputOperands())
    if (in != operand)
      add(in->get());
  for (Value v : producer.getDpsInputs())
    add(v);
  return read.size();
}

/// A GEMM function's epilogue (fp8-fuse-gemm-epilogues marks it with
/// Conversion's kGemmEpilogueAttrName): convert-fp8-gemm-to-gpu reads it as
/// it was cloned, reading the product rounded to its type, so nothing fuses
/// into it or moves a reshape past it (a fused op would lose the mark).
bool isGemmEpilogue(Operation *op) {
  return op && op->hasAttr("fp8.gemm_epilogue");
}

/// Fusing `operand`'s producer into its consumer evaluates the producer's
/// body once per consumer iteration: done only when every consumer
/// iteration reads a distinct producer element exactly once (a permutation
/// map: no broadcast; in a reduction consumer, only with `intoReductions`).
/// A producer with other uses is fused (its body then runs once per
/// consumer) only with `duplicateCheap`, an arithmetic-only body, and where
/// the fused consumer reads at most kMaxDuplicatedInputs tensors.
bool fusesWithoutRecomputation(OpOperand *operand, bool intoReductions,
                               bool duplicateCheap) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || isGemmEpilogue(consumer) ||
      isGemmEpilogue(producer))
    return false;
  // Into element-wise consumers only: a reduction or contraction reading a
  // transpose's source would read its rows strided.
  if (duplicateCheap && movesElementsOnly(producer) &&
      consumer.getNumReductionLoops() == 0)
    return true;
  if (!producer->hasOneUse() &&
      !(duplicateCheap && isCheapBody(producer) &&
        tensorsAfterFusion(consumer, cast<linalg::GenericOp>(producer),
                           operand) <= kMaxDuplicatedInputs))
    return false;
  if (consumer.getNumReductionLoops() != 0 && !intoReductions)
    return false;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Whether a reshape between `operand`'s owner and its producer may be
/// moved past an element-wise generic (upstream's fold-by-expansion): only
/// element-wise ops (parallel loops, permutation maps) and a reshape that
/// nothing else reads, so that each op still computes each element once.
bool movesReshape(OpOperand *operand) {
  auto isElementwise = [](Operation *op) {
    auto g = dyn_cast_or_null<linalg::GenericOp>(op);
    return g && isAllParallel(g) &&
           llvm::all_of(g.getIndexingMapsArray(),
                        [](AffineMap m) { return m.isPermutation(); });
  };
  Operation *producer = operand->get().getDefiningOp();
  Operation *consumer = operand->getOwner();
  if (!producer || !operand->get().hasOneUse() || isGemmEpilogue(consumer) ||
      isGemmEpilogue(producer))
    return false;
  if (isReshape(producer))
    return isElementwise(consumer);
  return isElementwise(producer);
}

/// Every operand that reads `v`, directly or through reshapes; false if
/// anything else uses it.
bool collectReaders(Value v, SmallVectorImpl<OpOperand *> &readers) {
  for (OpOperand &use : v.getUses()) {
    Operation *owner = use.getOwner();
    if (isReshape(owner)) {
      if (!collectReaders(owner->getResult(0), readers))
        return false;
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(owner);
    if (!g || !g.isDpsInput(&use))
      return false;
    readers.push_back(&use);
  }
  return true;
}

/// Whether `v` is computed from `root` by element-wise generics and
/// reshapes (and from values that do not depend on it).
bool derivesElementwise(Value v, Value root, int depth = 0) {
  if (v == root)
    return true;
  if (depth > 4)
    return false;
  if (Operation *def = v.getDefiningOp(); def && isReshape(def))
    return derivesElementwise(def->getOperand(0), root, depth + 1);
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || !isAllParallel(g))
    return false;
  return llvm::any_of(g.getDpsInputOperands(), [&](OpOperand *in) {
    return derivesElementwise(in->get(), root, depth + 1);
  });
}

/// How a chain of reshapes (same elements, row-major order) turns a
/// producer's static shape `from` into a reader's `to`: for each dimension
/// of `from`, the dimensions of `to` it is split into -- a run of them whose
/// sizes multiply to its size, unit dimensions of `to` left out; none for a
/// unit dimension of `from`. Nothing where a dimension of `to` spans two of
/// `from` (then the producer's loops are not the reader's).
std::optional<SmallVector<SmallVector<unsigned, 2>>>
splitDims(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (llvm::any_of(from, [](int64_t d) { return d <= 0; }) ||
      llvm::any_of(to, [](int64_t d) { return d <= 0; }))
    return std::nullopt;
  SmallVector<SmallVector<unsigned, 2>> groups(from.size());
  unsigned j = 0;
  for (auto [i, size] : llvm::enumerate(from)) {
    int64_t product = 1;
    while (product < size) {
      if (j == to.size())
        return std::nullopt;
      if (to[j] != 1) {
        product *= to[j];
        groups[i].push_back(j);
      }
      ++j;
    }
    if (product != size)
      return std::nullopt;
  }
  for (; j < to.size(); ++j)
    if (to[j] != 1)
      return std::nullopt;
  return groups;
}

/// An operand that reads `p`'s result (through reshapes) with the split of
/// `p`'s loops into its dimensions.
struct SplitReader {
  OpOperand *operand;
  SmallVector<SmallVector<unsigned, 2>> groups;
};

/// The split (splitDims) of `p`'s loops into `reader`'s dimensions.
std::optional<SmallVector<SmallVector<unsigned, 2>>>
readerSplit(linalg::GenericOp p, OpOperand *reader) {
  auto from = cast<RankedTensorType>(p.getResult(0).getType());
  auto to = dyn_cast<RankedTensorType>(reader->get().getType());
  if (!from.hasStaticShape() || !to || !to.hasStaticShape())
    return std::nullopt;
  return splitDims(from.getShape(), to.getShape());
}

bool hasIndexOps(linalg::GenericOp g) {
  return !g.getRegion().front().getOps<linalg::IndexOp>().empty();
}

/// recompute-into-row-kernels: the readers of `p` to give a clone of it
/// each, or nothing. `p` is element-wise (its result at its loops' indices,
/// its inputs at projected permutations of them: a norm's weight per
/// column, its per-row factor), its readers one row reduction and
/// element-wise ops that read what that reduction's rows give. A body that
/// calls the math library (SiLU(gate) * up) qualifies with any rows; an
/// arithmetic-only one (RMSNorm's x * rsqrt * w) only where the reduction's
/// rows are parts of p's rows (the 1 x 128 blocks of a block quantization):
/// a reduction over p's whole rows joins the kernel of the reduction p's
/// factor comes from as a chained reduction instead (RowReductions.h).
SmallVector<SplitReader> rowKernelReaders(linalg::GenericOp p) {
  if (!isAllParallel(p) || p.getNumResults() != 1 ||
      !p.getMatchingIndexingMap(p.getDpsInitOperand(0)).isIdentity() ||
      !llvm::all_of(p.getDpsInputOperands(), [&](OpOperand *in) {
        return p.getMatchingIndexingMap(in).isProjectedPermutation(
            /*allowZeroInResults=*/true);
      }))
    return {};
  SmallVector<OpOperand *> readers;
  if (!collectReaders(p.getResult(0), readers) || readers.size() < 2)
    return {};
  // One row reduction (parallel loops, then the reduced one) reading each
  // element once...
  linalg::GenericOp reduction;
  SmallVector<SplitReader> split;
  for (OpOperand *r : readers) {
    std::optional<SmallVector<SmallVector<unsigned, 2>>> groups =
        readerSplit(p, r);
    if (!groups)
      return {};
    // Indices change meaning once the loops are split.
    if (hasIndexOps(p) &&
        llvm::any_of(*groups, [](const auto &g) { return g.size() > 1; }))
      return {};
    split.push_back({r, std::move(*groups)});
    auto g = cast<linalg::GenericOp>(r->getOwner());
    if (isAllParallel(g))
      continue;
    auto iters = g.getIteratorTypesArray();
    if (reduction || g.getNumReductionLoops() != 1 ||
        iters.back() != utils::IteratorType::reduction ||
        g.getNumResults() != 1 || !g.getMatchingIndexingMap(r).isIdentity())
      return {};
    reduction = g;
    if (isCheapBody(p)) {
      // The reduced loop must be part of p's innermost non-unit loop.
      const SmallVector<SmallVector<unsigned, 2>> &gs = split.back().groups;
      auto last = llvm::find_if(llvm::reverse(gs),
                                [](const auto &g) { return !g.empty(); });
      if (last == gs.rend() || last->size() < 2 ||
          last->back() + 1 != g.getNumLoops())
        return {};
    }
  }
  if (!reduction)
    return {};
  // ... and element-wise readers that also read what its rows give.
  for (OpOperand *r : readers) {
    auto g = cast<linalg::GenericOp>(r->getOwner());
    if (g == reduction)
      continue;
    if (!g.getMatchingIndexingMap(r).isPermutation() ||
        llvm::none_of(g.getDpsInputOperands(), [&](OpOperand *in) {
          return in != r &&
                 derivesElementwise(in->get(), reduction.getResult(0));
        }))
      return {};
  }
  return split;
}

/// `in` (an input of element-wise `p`) as the clone for a reader reads it,
/// and the clone's indexing map of it (over the reader's loops): its unit
/// dimensions that p indexes by a unit loop or 0 dropped (a
/// tensor.collapse_shape), each other dimension that p's loop d indexes
/// split as d is (`groups`: a tensor.expand_shape).
std::pair<Value, AffineMap>
splitInput(RewriterBase &rewriter, linalg::GenericOp p, OpOperand *in,
           ArrayRef<SmallVector<unsigned, 2>> groups, ArrayRef<int64_t> to) {
  MLIRContext *ctx = p.getContext();
  Location loc = p.getLoc();
  AffineMap map = p.getMatchingIndexingMap(in);
  auto type = dyn_cast<RankedTensorType>(in->get().getType());
  if (!type)
    return {in->get(), AffineMap::get(to.size(), 0, ctx)};
  SmallVector<int64_t> kept, shape;
  // Each dropped unit dimension joins the next kept one (the last kept one
  // at the end).
  SmallVector<ReassociationIndices> collapse;
  ReassociationIndices pending;
  SmallVector<ReassociationIndices> expansion;
  SmallVector<AffineExpr> exprs;
  for (auto [k, expr] : llvm::enumerate(map.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(expr);
    const bool split = d && !groups[d.getPosition()].empty();
    pending.push_back(k);
    if (!split && type.getDimSize(k) == 1)
      continue;
    collapse.push_back(std::move(pending));
    pending.clear();
    kept.push_back(type.getDimSize(k));
    ReassociationIndices dims;
    if (split) {
      for (unsigned t : groups[d.getPosition()]) {
        dims.push_back(shape.size());
        shape.push_back(to[t]);
        exprs.push_back(getAffineDimExpr(t, ctx));
      }
    } else {
      dims.push_back(shape.size());
      shape.push_back(type.getDimSize(k));
      exprs.push_back(getAffineConstantExpr(0, ctx));
    }
    expansion.push_back(dims);
  }
  Value v = in->get();
  Type element = type.getElementType();
  if (ArrayRef<int64_t>(kept) != type.getShape()) {
    if (!collapse.empty())
      collapse.back().append(pending.begin(), pending.end());
    v = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get(kept, element), v, collapse);
  }
  if (shape != kept)
    v = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, element), v, expansion);
  return {v, AffineMap::get(to.size(), 0, exprs, ctx)};
}

/// A clone of element-wise `p` that computes the value `reader` reads:
/// `p`'s body over the reader's shape, its inputs split as its loops are.
Value cloneForReader(RewriterBase &rewriter, linalg::GenericOp p,
                     const SplitReader &r) {
  Location loc = p.getLoc();
  auto type = cast<RankedTensorType>(r.operand->get().getType());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : p.getDpsInputOperands()) {
    auto [v, map] = splitInput(rewriter, p, in, r.groups, type.getShape());
    inputs.push_back(v);
    maps.push_back(map);
  }
  const unsigned rank = type.getRank();
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                       type.getElementType());
  maps.push_back(rewriter.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto clone = linalg::GenericOp::create(rewriter, loc, TypeRange{type}, inputs,
                                         ValueRange{init}, maps, iters);
  rewriter.cloneRegionBefore(p.getRegion(), clone.getRegion(),
                             clone.getRegion().begin());
  return clone.getResult(0);
}

/// recompute-into-row-kernels, after the fusions: each qualifying producer
/// becomes a clone per reader (each with one use, which the element-wise
/// fusion then takes). Returns whether any did.
bool cloneIntoRowKernels(Operation *root) {
  SmallVector<linalg::GenericOp> producers;
  root->walk([&](linalg::GenericOp g) { producers.push_back(g); });
  IRRewriter rewriter(root->getContext());
  bool changed = false;
  for (linalg::GenericOp p : producers) {
    SmallVector<SplitReader> readers = rowKernelReaders(p);
    if (readers.empty())
      continue;
    for (const SplitReader &r : readers) {
      rewriter.setInsertionPoint(r.operand->getOwner());
      r.operand->set(cloneForReader(rewriter, p, r));
    }
    changed = true;
  }
  return changed;
}

struct FP8FuseElementwisePass
    : fp8::impl::FP8FuseElementwiseBase<FP8FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (throughReshapes) {
      // A transpose is an element-wise generic with a permutation map: as
      // one, it fuses with the casts and element-wise ops around it.
      SmallVector<linalg::TransposeOp> transposes;
      getOperation()->walk(
          [&](linalg::TransposeOp t) { transposes.push_back(t); });
      IRRewriter rewriter(&getContext());
      for (linalg::TransposeOp t : transposes) {
        rewriter.setInsertionPoint(t);
        if (failed(linalg::generalizeNamedOp(rewriter, t)))
          return signalPassFailure();
      }
    }
    RewritePatternSet patterns(&getContext());
    fp8::populateFP8FoldRotateHalfPatterns(patterns);
    const bool reductions = intoReductions, duplicate = duplicateCheap;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [reductions, duplicate](OpOperand *operand) {
          return fusesWithoutRecomputation(operand, reductions, duplicate);
        });
    if (throughReshapes)
      linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                        movesReshape);
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    // Producers the fusions have finished (SiLU(gate) * up is six ops
    // before) and that qualify are cloned per reader; the clones fuse.
    if (recomputeIntoRowKernels && cloneIntoRowKernels(getOperation()) &&
        failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// fp8-contiguous-inner-loops
//===----------------------------------------------------------------------===//

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8CONTIGUOUSINNERLOOPS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

namespace {
/// The loop to move innermost: the last parallel loop that appears in every
/// output, and in each operand only as its last (contiguous) index.
std::optional<unsigned> contiguousParallelLoop(linalg::GenericOp op) {
  auto iters = op.getIteratorTypesArray();
  if (iters.empty() || iters.back() != utils::IteratorType::reduction)
    return std::nullopt;
  for (int64_t p = int64_t(iters.size()) - 1; p >= 0; --p) {
    if (iters[p] != utils::IteratorType::parallel)
      continue;
    bool ok = true;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      const bool isOutput = op.isDpsInit(&operand);
      unsigned uses = 0;
      for (auto [i, expr] : llvm::enumerate(map.getResults())) {
        if (!expr.isFunctionOfDim(p))
          continue;
        auto dim = dyn_cast<AffineDimExpr>(expr);
        ok &= dim && i + 1 == map.getNumResults();
        ++uses;
      }
      ok &= uses <= 1 && (!isOutput || uses == 1);
    }
    if (ok)
      return unsigned(p);
  }
  return std::nullopt;
}

struct FP8ContiguousInnerLoopsPass
    : fp8::impl::FP8ContiguousInnerLoopsBase<FP8ContiguousInnerLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      std::optional<unsigned> p = contiguousParallelLoop(op);
      if (!p)
        continue;
      SmallVector<unsigned> order;
      for (unsigned i = 0; i < op.getNumLoops(); ++i)
        if (i != *p)
          order.push_back(i);
      order.push_back(*p);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        return signalPassFailure();
    }
  }
};
} // namespace
