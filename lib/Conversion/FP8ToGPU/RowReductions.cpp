//===- RowReductions.cpp - Row reductions as warp reductions --------------===//
//
// Part of fp8-opt. Softmax's row max and sum, RMSNorm's and LayerNorm's
// means and block amaxes are linalg reductions over a contiguous row; one
// thread per row (what upstream's loops and fp8-gpu-map-loops give) reads
// each row serially with a stride of a whole row between neighbouring
// threads. Here the 32 lanes of a warp share a row instead. The lowering
// is written by hand (not upstream's vector.multi_reduction ->
// gpu.subgroup_reduce route, docs/GPU.md says why): it keeps the
// structure fp8-gpu-map-loops already linearizes and needs no vector
// dialect on the device.
//
//===----------------------------------------------------------------------===//

#include "RowReductions.h"
#include "VectorAccess.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;

namespace {

/// The combiner of a row reduction: the op that yields combine(x, out).
struct Combiner {
  Operation *op = nullptr;
  /// Operand index of the output's block argument in `op`.
  unsigned outOperand = 0;
  /// The combiner's identity, of the output's type (f32 or i32: what a warp
  /// shuffle moves).
  TypedAttr identity;
};

std::optional<Combiner> matchCombiner(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1)
    return std::nullopt;
  Operation *comb = yield.getValues()[0].getDefiningOp();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  if (!comb || comb->getBlock() != &body || comb->getNumOperands() != 2 ||
      !out.hasOneUse() || *out.getUsers().begin() != comb ||
      comb->getOperand(0) == comb->getOperand(1))
    return std::nullopt;
  Combiner c;
  c.op = comb;
  c.outOperand = comb->getOperand(0) == out ? 0 : 1;
  if (comb->getOperand(c.outOperand) != out)
    return std::nullopt;
  Builder b(op.getContext());
  Type t = out.getType();
  if (t.isF32()) {
    const float inf = std::numeric_limits<float>::infinity();
    if (isa<arith::AddFOp>(comb))
      c.identity = b.getF32FloatAttr(0.0f);
    else if (isa<arith::MulFOp>(comb))
      c.identity = b.getF32FloatAttr(1.0f);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(comb))
      c.identity = b.getF32FloatAttr(-inf);
    else if (isa<arith::MinimumFOp, arith::MinNumFOp>(comb))
      c.identity = b.getF32FloatAttr(inf);
    else
      return std::nullopt;
    return c;
  }
  // Integer reductions of i32 (a first failing position, a count).
  if (!t.isInteger(32))
    return std::nullopt;
  if (isa<arith::AddIOp, arith::MaxUIOp, arith::OrIOp>(comb))
    c.identity = b.getI32IntegerAttr(0);
  else if (isa<arith::MinSIOp>(comb))
    c.identity = b.getI32IntegerAttr(std::numeric_limits<int32_t>::max());
  else if (isa<arith::MaxSIOp>(comb))
    c.identity = b.getI32IntegerAttr(std::numeric_limits<int32_t>::min());
  else if (isa<arith::MinUIOp, arith::AndIOp>(comb))
    c.identity = b.getI32IntegerAttr(-1);
  else
    return std::nullopt;
  return c;
}

/// `combine(x, acc)` with the combiner's operand order and flags.
Value combine(OpBuilder &b, const Combiner &c, Value x, Value acc) {
  IRMapping map;
  map.map(c.op->getOperand(1 - c.outOperand), x);
  map.map(c.op->getOperand(c.outOperand), acc);
  return b.clone(*c.op, map)->getResult(0);
}

/// The indices `map` gives for the loop values `dims`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange dims) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), dims));
  return indices;
}

/// V for a row reduction's lanes: the widest power of two <= vectorWidth
/// that divides the row, leaves every lane of the warp at least one vector,
/// and keeps the vector loads of every input the reduction dimension
/// indexes aligned (VectorAccess.h); 1 when none does.
int64_t laneVectorWidth(linalg::GenericOp op, int64_t rowLength,
                        int64_t vectorWidth) {
  const unsigned red = op.getNumLoops() - 1;
  for (int64_t v = llvm::bit_floor<uint64_t>(std::max<int64_t>(vectorWidth, 1));
       v >= 2; v /= 2) {
    if (rowLength % v != 0 || rowLength / v < fp8::kReductionLanes)
      continue;
    if (llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
          if (!op.getMatchingIndexingMap(in).isFunctionOfDim(red))
            return true;
          auto t = dyn_cast<MemRefType>(in->get().getType());
          return t && fp8::vectorAccessAlignment(t, v).has_value();
        }))
      return v;
  }
  return 1;
}

/// One step of a lane at loop position `dims` (the row's indices, then the
/// step's first element k): the `width` elements k, k + 1, ... of every
/// input the reduction dimension indexes (one vector load when width > 1),
/// the others' element once, and the body folded over them into `acc`.
Value foldLaneStep(OpBuilder &b, Location l, linalg::GenericOp op,
                   ArrayRef<Value> dims, int64_t width, Value acc) {
  Block &body = op.getRegion().front();
  const unsigned numInputs = op.getNumDpsInputs();
  const unsigned red = op.getNumLoops() - 1;
  SmallVector<Value> loaded(numInputs);
  for (unsigned j = 0; j < numInputs; ++j) {
    OpOperand *in = op.getDpsInputOperand(j);
    Value v = in->get();
    if (!isa<MemRefType>(v.getType())) {
      loaded[j] = v;
      continue;
    }
    AffineMap m = op.getMatchingIndexingMap(in);
    SmallVector<Value> at = applyMap(b, l, m, dims);
    if (width > 1 && m.isFunctionOfDim(red)) {
      auto t = cast<MemRefType>(v.getType());
      loaded[j] = vector::LoadOp::create(
          b, l, VectorType::get({width}, t.getElementType()), v, at,
          /*nontemporal=*/false,
          llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width)));
    } else {
      loaded[j] = memref::LoadOp::create(b, l, v, at);
    }
  }
  for (int64_t e = 0; e < width; ++e) {
    IRMapping map;
    for (unsigned j = 0; j < numInputs; ++j) {
      Value v = loaded[j];
      if (isa<VectorType>(v.getType()))
        v = vector::ExtractOp::create(b, l, v, ArrayRef<int64_t>{e});
      map.map(body.getArgument(j), v);
    }
    map.map(body.getArgument(numInputs), acc);
    Value ke = dims.back();
    if (e != 0)
      ke = arith::AddIOp::create(b, l, ke,
                                 arith::ConstantIndexOp::create(b, l, e));
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(),
                index.getDim() == red ? ke : dims[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    acc = map.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
  }
  return acc;
}

} // namespace

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

linalg::GenericOp fp8::rowReductionEpilogue(linalg::GenericOp op) {
  // The epilogue runs once per element the reduction writes: all of them.
  if (!coversOutput(op))
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(out.getType());
  if (!outType.getLayout().isIdentity())
    return {};
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next))
    next = next->getNextNode();
  auto epi = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!epi || !epi.hasPureBufferSemantics() || epi.getNumDpsInputs() != 1 ||
      epi.getNumDpsInits() != 1 || epi.getNumLoops() != outType.getRank() ||
      epi.getNumReductionLoops() != 0)
    return {};
  OpOperand *in = epi.getDpsInputOperand(0);
  OpOperand *res = epi.getDpsInitOperand(0);
  auto resType = dyn_cast<MemRefType>(res->get().getType());
  if (in->get() != out || !resType ||
      resType.getShape() != outType.getShape() ||
      !resType.getLayout().isIdentity() ||
      !epi.getMatchingIndexingMap(in).isIdentity() ||
      !epi.getMatchingIndexingMap(res).isIdentity())
    return {};
  // It writes while other rows still read the reduction's inputs: its
  // buffer is the reduction's output (in place) or a fresh allocation, so
  // that it cannot alias them.
  if (res->get() != out &&
      !isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
          res->get().getDefiningOp()))
    return {};
  Block &body = epi.getRegion().front();
  if (!body.getArgument(1).use_empty())
    return {};
  for (Operation &inner : body.without_terminator())
    if (isa<linalg::IndexOp>(inner) || !isMemoryEffectFree(&inner) ||
        inner.getNumRegions() != 0)
      return {};
  return epi;
}

LogicalResult fp8::lowerRowReductionToWarps(RewriterBase &rewriter,
                                            linalg::GenericOp op,
                                            int64_t vectorWidth,
                                            linalg::FillOp init,
                                            linalg::GenericOp epilogue) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return failure();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  const unsigned numLoops = iters.size();
  if (numLoops == 0 || iters.back() != utils::IteratorType::reduction)
    return failure();
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges.back() < kReductionLanes)
    return failure();
  // Lanes stride the reduction dimension: every input it indexes must be
  // contiguous along it (the reduction dimension is its innermost index), so
  // a warp's loads are coalesced. This keeps contractions (a matmul's right
  // operand is K x N: strided along K) one thread per output, where
  // neighbouring threads read neighbouring columns.
  const AffineExpr red = getAffineDimExpr(numLoops - 1, op.getContext());
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!m.isFunctionOfDim(numLoops - 1))
      continue;
    ArrayRef<AffineExpr> results = m.getResults();
    if (results.back() != red ||
        llvm::any_of(results.drop_back(), [&](AffineExpr e) {
          return e.isFunctionOfDim(numLoops - 1);
        }))
      return failure();
  }
  OpOperand *output = op.getDpsInitOperand(0);
  linalg::FillOp initFill = init;
  AffineMap outMap = op.getMatchingIndexingMap(output);
  if (outMap.isFunctionOfDim(numLoops - 1))
    return failure();
  auto outType = dyn_cast<MemRefType>(output->get().getType());
  if (!outType || !(outType.getElementType().isF32() ||
                    outType.getElementType().isInteger(32)))
    return failure();
  std::optional<Combiner> comb = matchCombiner(op);
  if (!comb)
    return failure();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  SmallVector<Value> lbs(numLoops, idx(0)), steps(numLoops, idx(1)), ubs;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    ubs.push_back(idx(ranges[i]));
  ubs.push_back(idx(kReductionLanes));
  const int64_t rowLength = ranges.back();

  const int64_t width = laneVectorWidth(op, rowLength, vectorWidth);

  scf::ParallelOp::create(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value lane = ivs.back();
        SmallVector<Value> rowIvs(ivs.drop_back());
        Value identity = arith::ConstantOp::create(b, l, comb->identity);
        // Lane `lane` folds elements [lane * V, lane * V + V), then the
        // same 32 * V further on, ...
        Value start = arith::MulIOp::create(
            b, l, lane, arith::ConstantIndexOp::create(b, l, width));
        auto kLoop = scf::ForOp::create(
            b, l, start, arith::ConstantIndexOp::create(b, l, rowLength),
            arith::ConstantIndexOp::create(b, l, kReductionLanes * width),
            ValueRange{identity},
            [&](OpBuilder &fb, Location fl, Value k, ValueRange acc) {
              SmallVector<Value> dims(rowIvs);
              dims.push_back(k);
              scf::YieldOp::create(fb, fl,
                                   foldLaneStep(fb, fl, op, dims, width, acc[0]));
            });
        // The warp's 32 partials: a butterfly leaves the total in every lane.
        Value total = kLoop.getResult(0);
        Value lanes = arith::ConstantIntOp::create(b, l, kReductionLanes, 32);
        for (int64_t offset = kReductionLanes / 2; offset >= 1; offset /= 2) {
          Value other =
              gpu::ShuffleOp::create(
                  b, l, total,
                  arith::ConstantIntOp::create(b, l, offset, 32).getResult(),
                  lanes, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
          total = combine(b, *comb, other, total);
        }
        // Lane 0 folds the total into the output's initial value: the
        // fill's (when the fill is folded), else the output's.
        Value first = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, lane,
            arith::ConstantIndexOp::create(b, l, 0));
        auto store = scf::IfOp::create(b, l, first, /*withElseRegion=*/false);
        OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
        SmallVector<Value> outIdx = applyMap(sb, l, outMap, ivs);
        Value old = initFill ? initFill.getDpsInputOperand(0)->get()
                             : Value(memref::LoadOp::create(
                                   sb, l, output->get(), outIdx));
        Value updated = combine(sb, *comb, total, old);
        memref::StoreOp::create(sb, l, updated, output->get(), outIdx);
        if (epilogue) {
          // The element-wise consumer of the total, at the same index.
          Block &eb = epilogue.getRegion().front();
          IRMapping map;
          map.map(eb.getArgument(0), updated);
          for (Operation &inner : eb.without_terminator())
            sb.clone(inner, map);
          Value r = map.lookupOrDefault(
              cast<linalg::YieldOp>(eb.getTerminator()).getValues()[0]);
          memref::StoreOp::create(sb, l, r,
                                  epilogue.getDpsInitOperand(0)->get(), outIdx);
        }
      });
  rewriter.eraseOp(op);
  return success();
}
