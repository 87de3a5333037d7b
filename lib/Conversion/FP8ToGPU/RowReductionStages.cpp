//===- RowReductionStages.cpp - What joins a row reduction's kernel -------===//
//
// Part of fp8-opt. A row reduction's warp holds the row's total in every
// lane once its butterfly is done; the ops right after it that only need
// that total per row (RMSNorm's rsqrt(mean + eps), a recipe's scale) or the
// row's elements again with it (RMSNorm's x * rsqrt * w, a per-row
// quantization) run in the same warp instead of a kernel each. This file
// decides which ops may (RowReductions.h); RowReductions.cpp emits them.
//
//===----------------------------------------------------------------------===//

#include "RowReductions.h"

#include "fp8/Support/MemRefViews.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace {

/// The buffer under a chain of expand_shape / collapse_shape views (the
/// same elements at the same linear offsets, for identity layouts).
Value viewRoot(Value v) { return fp8::reshapeRoot(v); }

/// The element-wise view of a per-row or per-element op in terms of the
/// reduction's loops: its loop dimensions as expressions of the reduction's
/// dimensions, and whether it runs per element (every loop of the
/// reduction, the reduced one as its innermost) or per row.
struct StageView {
  SmallVector<AffineExpr> dims;
  bool perElement = false;
};

/// `stage`'s loops as the reduction's: the same static ranges (per element),
/// or the same with the last two merged (per element: a block quantization
/// over [M, K] after its amax over [M, K / b, b], the merged index
/// (K / b index) * b + (b index)), or the ranges of the reduction's parallel
/// loops up to unit loops and their order (per row; a unit loop stands for
/// index 0: the scales' M-major copy after a block amax).
std::optional<StageView> viewStage(linalg::GenericOp stage,
                                   ArrayRef<int64_t> redRanges) {
  SmallVector<int64_t> ranges = stage.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  MLIRContext *ctx = stage.getContext();
  StageView view;
  if (ArrayRef<int64_t>(ranges) == redRanges) {
    view.perElement = true;
    for (unsigned i = 0; i < ranges.size(); ++i)
      view.dims.push_back(getAffineDimExpr(i, ctx));
    return view;
  }
  // Per element up to unit loops: the loops of more than one iteration
  // are the reduction's, in order, the reduced one last (a chained amax
  // over [M, K] after a norm over [1, M, K]).
  auto nonUnit = [](ArrayRef<int64_t> r) {
    SmallVector<int64_t> v;
    llvm::copy_if(r, std::back_inserter(v), [](int64_t x) { return x != 1; });
    return v;
  };
  if (!ranges.empty() && ranges.back() == redRanges.back() &&
      nonUnit(ranges) == nonUnit(redRanges)) {
    view.perElement = true;
    unsigned j = 0;
    for (int64_t r : ranges) {
      if (r == 1) {
        view.dims.push_back(getAffineConstantExpr(0, ctx));
        continue;
      }
      while (redRanges[j] == 1)
        ++j;
      view.dims.push_back(getAffineDimExpr(j++, ctx));
    }
    return view;
  }
  const size_t n = redRanges.size();
  if (n >= 2 && ranges.size() + 1 == n &&
      ArrayRef<int64_t>(ranges).drop_back() == redRanges.drop_back(2) &&
      ranges.back() == redRanges[n - 2] * redRanges[n - 1]) {
    view.perElement = true;
    for (unsigned i = 0; i + 2 < n; ++i)
      view.dims.push_back(getAffineDimExpr(i, ctx));
    view.dims.push_back(getAffineDimExpr(n - 2, ctx) * redRanges[n - 1] +
                        getAffineDimExpr(n - 1, ctx));
    return view;
  }
  // Per row: each loop of more than one iteration is the first unused
  // parallel loop of the reduction with its range (in order among equal
  // ranges; any such one-to-one correspondence computes every element
  // once, and the forwarded reads are checked against it).
  SmallVector<bool> used(n, false);
  unsigned matched = 0, rowDims = 0;
  for (unsigned i = 0; i + 1 < n; ++i)
    rowDims += redRanges[i] != 1;
  for (int64_t r : ranges) {
    if (r == 1) {
      view.dims.push_back(getAffineConstantExpr(0, ctx));
      continue;
    }
    unsigned i = 0;
    while (i + 1 < n && (used[i] || redRanges[i] != r))
      ++i;
    if (i + 1 >= n)
      return std::nullopt;
    used[i] = true;
    ++matched;
    view.dims.push_back(getAffineDimExpr(i, ctx));
  }
  if (matched != rowDims)
    return std::nullopt;
  return view;
}

/// `e` with `d floordiv c` as 0 and `d mod c` as d where dimension d's range
/// is at most c (MLIR's simplification does not know the ranges): the
/// block index of a merged column, `(kb * 128 + k) floordiv 128`, is kb.
AffineExpr foldByRanges(AffineExpr e, ArrayRef<int64_t> ranges) {
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return e;
  AffineExpr lhs = foldByRanges(bin.getLHS(), ranges);
  AffineExpr rhs = foldByRanges(bin.getRHS(), ranges);
  auto dim = dyn_cast<AffineDimExpr>(lhs);
  auto c = dyn_cast<AffineConstantExpr>(rhs);
  const bool within =
      dim && c && c.getValue() > 0 && ranges[dim.getPosition()] <= c.getValue();
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return lhs + rhs;
  case AffineExprKind::Mul:
    return lhs * rhs;
  case AffineExprKind::FloorDiv:
    return within ? getAffineConstantExpr(0, e.getContext())
                  : lhs.floorDiv(rhs);
  case AffineExprKind::CeilDiv:
    return lhs.ceilDiv(rhs);
  case AffineExprKind::Mod:
    return within ? lhs : lhs % rhs;
  default:
    return e;
  }
}

/// The linear element offset, over the reduction's dimensions (unit ones
/// read as 0), of an access through `map` (over `dims`) to a buffer of
/// static identity layout `type`; std::nullopt for other layouts.
std::optional<AffineExpr> linearOffset(Type type, AffineMap map,
                                       ArrayRef<AffineExpr> dims,
                                       ArrayRef<int64_t> redRanges) {
  if (!fp8::isStaticIdentity(type))
    return std::nullopt;
  auto m = cast<MemRefType>(type);
  MLIRContext *ctx = m.getContext();
  SmallVector<AffineExpr> unitToZero;
  for (unsigned i = 0; i < redRanges.size(); ++i)
    unitToZero.push_back(redRanges[i] == 1 ? getAffineConstantExpr(0, ctx)
                                           : getAffineDimExpr(i, ctx));
  AffineExpr offset = getAffineConstantExpr(0, ctx);
  int64_t stride = 1;
  for (int64_t i = m.getRank() - 1; i >= 0; --i) {
    AffineExpr index = simplifyAffineExpr(
        map.getResult(i).replaceDims(dims).replaceDims(unitToZero),
        redRanges.size(), 0);
    index = foldByRanges(index, redRanges);
    offset = offset + index * stride;
    stride *= m.getDimSize(i);
  }
  return simplifyAffineExpr(offset, redRanges.size(), 0);
}

} // namespace

Value fp8::aliasRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool fp8::isOwnBuffer(Value root) {
  if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(root.getDefiningOp()))
    return true;
  auto arg = dyn_cast<BlockArgument>(root);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  return func && func.isPublic() && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), "bufferize.result");
}

/// Whether `op` (one output) writes every element of its (static) output
/// once: the output map is a permutation of the parallel dimensions, whose
/// ranges are the output's sizes.
static bool coversOutput(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return false;
  auto outType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outType || !outType.hasStaticShape())
    return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Fills and stages join reductions of static rows only (one of run-time
  // sizes is a warp per row on its own: lowerRowReductionToWarps).
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  unsigned parallel = 0;
  for (utils::IteratorType it : iters)
    parallel += it == utils::IteratorType::parallel;
  if (outMap.getNumResults() != parallel ||
      static_cast<int64_t>(parallel) != outType.getRank())
    return false;
  for (auto [i, e] : llvm::enumerate(outMap.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || iters[dim.getPosition()] != utils::IteratorType::parallel ||
        ranges[dim.getPosition()] != outType.getDimSize(i))
      return false;
  }
  return true;
}

linalg::FillOp fp8::initializingFill(linalg::GenericOp op) {
  if (!coversOutput(op))
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(out.getType());
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isMemoryEffectFree(prev))
      continue;
    // The fill's value of the output's type: what lane 0 would have loaded.
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == out &&
        fill.getDpsInputOperand(0)->get().getType() ==
            outType.getElementType())
      return fill;
    return {};
  }
  return {};
}

SmallVector<fp8::RowStage>
fp8::rowReductionStages(linalg::GenericOp op, linalg::FillOp init) {
  SmallVector<RowStage> stages;
  if (!coversOutput(op))
    return stages;
  SmallVector<int64_t> redRanges = op.getStaticLoopRanges();
  const unsigned numLoops = redRanges.size();
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> identity;
  for (unsigned i = 0; i < numLoops; ++i)
    identity.push_back(getAffineDimExpr(i, ctx));

  // The per-row values the warp holds: which buffer element each is, and
  // where it comes from (kFromTotal or a stage's index).
  struct RowValue {
    Value root;
    AffineExpr offset;
    int source;
  };
  OpOperand *output = op.getDpsInitOperand(0);
  Value outRoot = viewRoot(output->get());
  if (fp8::aliasRoot(output->get()) != outRoot)
    return stages;
  std::optional<AffineExpr> outOffset =
      linearOffset(output->get().getType(), op.getMatchingIndexingMap(output),
                   identity, redRanges);
  if (!outOffset || !fp8::isStaticIdentity(outRoot.getType()))
    return stages;
  SmallVector<RowValue> rowValues{{outRoot, *outOffset, kFromTotal}};
  // Buffers the kernel reads from memory, and buffers it writes.
  llvm::SmallPtrSet<Value, 8> readRoots, writtenRoots{outRoot};
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType()))
      readRoots.insert(fp8::aliasRoot(in->get()));

  // Per per-element stage: the buffer and linear offset its element goes
  // to (a chained reduction forwards it), when written through reshaping
  // views only.
  struct ElementValue {
    Value root;
    std::optional<AffineExpr> offset;
  };
  SmallVector<ElementValue> elementValues;

  // The next op with memory effects after `from`; pure ops and fresh
  // allocations (a stage's buffer) may stand between.
  auto nextEffect = [](Operation *from) {
    Operation *next = from->getNextNode();
    while (next && (isMemoryEffectFree(next) ||
                    isa<memref::AllocOp, memref::AllocaOp>(next)))
      next = next->getNextNode();
    return next;
  };
  Operation *cursor = op;
  while (true) {
    Operation *next = nextEffect(cursor);
    // A chained reduction: its fill, then it, right after a per-element
    // stage.
    linalg::FillOp chainFill = dyn_cast_or_null<linalg::FillOp>(next);
    if (chainFill) {
      next = nextEffect(chainFill);
      auto red = dyn_cast_or_null<linalg::GenericOp>(next);
      if (!red || stages.empty() || !stages.back().perElement ||
          initializingFill(red) != chainFill || !hasWarpCombiner(red))
        break;
    }
    auto g = dyn_cast_or_null<linalg::GenericOp>(next);
    if (!g || !g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
        g.getNumReductionLoops() != (chainFill ? 1 : 0))
      break;
    if (chainFill &&
        (g.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
         g.getStaticLoopRanges().back() != redRanges.back()))
      break;
    Block &body = g.getRegion().front();
    if (!chainFill && !body.getArgument(g.getNumDpsInputs()).use_empty())
      break;
    bool pure = true, indexed = false;
    for (Operation &inner : body.without_terminator()) {
      if (isa<linalg::IndexOp>(inner))
        indexed = true;
      else if (!isMemoryEffectFree(&inner) || inner.getNumRegions() != 0)
        pure = false;
    }
    std::optional<StageView> view = viewStage(g, redRanges);
    // Without a folded fill only lane 0 has the row's value: per-row
    // stages only, computed there.
    if (!pure || !view || (!view->perElement && indexed) ||
        (view->perElement && !init))
      break;

    // A chained reduction runs per element, in the previous stage's loop.
    if (chainFill && !view->perElement)
      break;

    RowStage stage;
    stage.op = g;
    stage.perElement = view->perElement && !chainFill;
    stage.dims = view->dims;
    if (chainFill) {
      stage.fill = chainFill;
      stage.joins = stages.size() - 1;
    }
    bool ok = true;
    SmallVector<Value> newReads;
    for (OpOperand *in : g.getDpsInputOperands()) {
      Value v = in->get();
      if (!isa<MemRefType>(v.getType())) {
        stage.sources.push_back(kFromOperand);
        continue;
      }
      Value root = fp8::aliasRoot(v);
      if (!writtenRoots.contains(root)) {
        stage.sources.push_back(kFromOperand);
        newReads.push_back(root);
        continue;
      }
      // A buffer this kernel writes: only a per-row value of the same row,
      // which the warp forwards (through reshaping views only, whose linear
      // offsets are the buffer's), or, in a chained reduction, the element
      // the stage it joins computes at the same position.
      std::optional<AffineExpr> offset = linearOffset(
          v.getType(), g.getMatchingIndexingMap(in), view->dims, redRanges);
      const bool reshapesOnly = viewRoot(v) == root;
      if (!offset || !reshapesOnly) {
        ok = false;
        break;
      }
      if (chainFill && elementValues.back().root == root &&
          elementValues.back().offset == *offset) {
        stage.sources.push_back(kFromElement);
        continue;
      }
      // Per element: an element an earlier per-element stage wrote at the
      // same position, read back by the lane that wrote it.
      if (!chainFill && view->perElement) {
        auto same = llvm::find_if(elementValues, [&](const ElementValue &e) {
          return e.root == root && e.offset == *offset;
        });
        const int writer = same - elementValues.begin();
        if (same != elementValues.end() &&
            (stage.sameLanesAs < 0 || stage.sameLanesAs == writer)) {
          stage.sameLanesAs = writer;
          stage.readBack.push_back(stage.sources.size());
          stage.sources.push_back(kFromOperand);
          continue;
        }
      }
      auto it = llvm::find_if(rowValues, [&](const RowValue &r) {
        return r.root == root && r.offset == *offset;
      });
      if (it == rowValues.end()) {
        ok = false;
        break;
      }
      stage.sources.push_back(it->source);
    }
    if (!ok)
      break;
    readRoots.insert(newReads.begin(), newReads.end());

    // Its buffer: each element written once, and never one the kernel reads
    // (another warp may still read it) -- a fresh allocation, or for a
    // per-row value the reduction's own element in place.
    OpOperand *res = g.getDpsInitOperand(0);
    AffineMap resMap = g.getMatchingIndexingMap(res);
    Value resRoot = fp8::aliasRoot(res->get());
    // A reduction's output: one element per row (its map a permutation of
    // the parallel loops; initializingFill checked it covers the output).
    if (!chainFill && !resMap.isPermutation())
      break;
    const bool fresh = fp8::isOwnBuffer(resRoot) &&
                       !readRoots.contains(resRoot) &&
                       !writtenRoots.contains(resRoot);
    if (stage.perElement) {
      if (!fresh)
        break;
      std::optional<AffineExpr> resOffset;
      if (viewRoot(res->get()) == resRoot)
        resOffset =
            linearOffset(res->get().getType(), resMap, view->dims, redRanges);
      elementValues.push_back({resRoot, resOffset});
      writtenRoots.insert(resRoot);
      stages.push_back(std::move(stage));
      cursor = g;
      continue;
    }
    elementValues.push_back({Value(), std::nullopt});
    // A per-row value written through a subview of a fresh buffer (the
    // M-major scales' copy into their 16-byte aligned buffer at a decode
    // step's M < 4): a stage, but not a value later stages may read (no
    // linear offset of the buffer to match their reads against).
    if (viewRoot(res->get()) != resRoot) {
      if (!fresh)
        break;
      writtenRoots.insert(resRoot);
      stages.push_back(std::move(stage));
      cursor = g;
      continue;
    }
    // A per-row value later stages may read: written through reshaping
    // views only, so that its linear offset is the buffer's.
    std::optional<AffineExpr> resOffset =
        linearOffset(res->get().getType(), resMap, view->dims, redRanges);
    if (!resOffset)
      break;
    const bool inPlace = resRoot == outRoot &&
                         viewRoot(res->get()) == outRoot &&
                         *resOffset == *outOffset;
    if (!fresh && (chainFill || !inPlace))
      break;
    const int index = stages.size();
    auto it = llvm::find_if(rowValues, [&](const RowValue &r) {
      return r.root == resRoot && r.offset == *resOffset;
    });
    if (it != rowValues.end())
      it->source = index;
    else
      rowValues.push_back({resRoot, *resOffset, index});
    writtenRoots.insert(resRoot);
    stages.push_back(std::move(stage));
    cursor = g;
  }
  return stages;
}
