//===- RowReductions.cpp - Row reductions as warp reductions --------------===//
//
// Part of fp8-opt. Softmax's row max and sum, RMSNorm's and LayerNorm's
// means and block amaxes are linalg reductions over a contiguous row; one
// thread per row (what upstream's loops and fp8-gpu-map-loops give) reads
// each row serially with a stride of a whole row between neighbouring
// threads. Here the 32 lanes of a warp share a row instead (or aligned
// groups of them share a short row each). The lowering
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
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

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

/// The values of a row's `rowLanes` lanes (the whole warp, or an aligned
/// group of it: a short row) folded by a butterfly of xor shuffles: the
/// total in every lane of the group; with `fromLaneZero`, then the group's
/// first lane's total in all of them (so that lanes agree bit for bit even
/// where the combiner's result depends on its operands' order: maxnumf of
/// +0 and -0). The shuffles span the whole warp (every lane takes part);
/// offsets below `rowLanes` stay inside each group.
Value warpAllReduce(OpBuilder &b, Location l, const Combiner &c, Value v,
                    int64_t rowLanes, bool fromLaneZero = true) {
  Value lanes = arith::ConstantIntOp::create(b, l, fp8::kReductionLanes, 32);
  for (int64_t offset = rowLanes / 2; offset >= 1; offset /= 2) {
    Value other =
        gpu::ShuffleOp::create(
            b, l, v, arith::ConstantIntOp::create(b, l, offset, 32).getResult(),
            lanes, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = combine(b, c, other, v);
  }
  if (!fromLaneZero)
    return v;
  Value leader = arith::ConstantIntOp::create(b, l, 0, 32);
  if (rowLanes < fp8::kReductionLanes) {
    Value laneId = arith::IndexCastUIOp::create(
        b, l, b.getI32Type(),
        gpu::LaneIdOp::create(b, l, b.getIndexAttr(fp8::kReductionLanes)));
    leader = arith::AndIOp::create(
        b, l, laneId, arith::ConstantIntOp::create(b, l, ~(rowLanes - 1), 32));
  }
  return gpu::ShuffleOp::create(b, l, v, leader, lanes, gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

/// The total of a row's `rowLanes` lanes in every lane of the row: the
/// warp's butterfly (warpAllReduce), and for a wide row (rowLanes > 32: W
/// warps of one block) each warp's total through workgroup memory -- lane 0
/// of warp w stores it at w, a barrier, then every lane folds the W totals
/// in warp order, so that all lanes hold the same value bit for bit. `lane`
/// is the row's lane index (the block's thread index for a wide row).
Value rowAllReduce(OpBuilder &b, Location l, const Combiner &c, Value v,
                   int64_t rowLanes, Value lane, bool fromLaneZero = true) {
  if (rowLanes <= fp8::kReductionLanes)
    return warpAllReduce(b, l, c, v, rowLanes, fromLaneZero);
  const int64_t warps = rowLanes / fp8::kReductionLanes;
  Value partial = warpAllReduce(b, l, c, v, fp8::kReductionLanes,
                                /*fromLaneZero=*/false);
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type =
      MemRefType::get({warps}, v.getType(), MemRefLayoutAttrInterface{}, space);
  Value totals = memref::AllocaOp::create(b, l, type);
  Value laneCount = arith::ConstantIndexOp::create(b, l, fp8::kReductionLanes);
  Value warp = arith::DivUIOp::create(b, l, lane, laneCount);
  Value leader =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                            arith::RemUIOp::create(b, l, lane, laneCount),
                            arith::ConstantIndexOp::create(b, l, 0));
  auto store = scf::IfOp::create(b, l, leader, /*withElseRegion=*/false);
  {
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    memref::StoreOp::create(sb, l, partial, totals, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, l);
  Value total = memref::LoadOp::create(
      b, l, totals, ValueRange{arith::ConstantIndexOp::create(b, l, 0)});
  for (int64_t w = 1; w < warps; ++w)
    total = combine(
        b, c,
        memref::LoadOp::create(
            b, l, totals, ValueRange{arith::ConstantIndexOp::create(b, l, w)}),
        total);
  return total;
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

/// V for a row reduction's `rowLanes` lanes: the widest power of two <=
/// vectorWidth that divides the row, leaves every lane at least one vector,
/// and keeps the vector loads of every input the reduction dimension
/// indexes aligned (VectorAccess.h); 1 when none does.
int64_t laneVectorWidth(linalg::GenericOp op, int64_t rowLength,
                        int64_t vectorWidth,
                        int64_t rowLanes = fp8::kReductionLanes) {
  const unsigned red = op.getNumLoops() - 1;
  for (int64_t v = llvm::bit_floor<uint64_t>(std::max<int64_t>(vectorWidth, 1));
       v >= 2; v /= 2) {
    if (rowLength % v != 0 || rowLength / v < rowLanes)
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

/// The loads of one step of a lane at loop position `dims` (the row's
/// indices, then the step's first element k): the `width` elements k, k +
/// 1, ... of every input the reduction dimension indexes (one vector load
/// when width > 1), the others' element once; a non-buffer input as it is.
SmallVector<Value> loadLaneStep(OpBuilder &b, Location l, linalg::GenericOp op,
                                ArrayRef<Value> dims, int64_t width) {
  const unsigned red = op.getNumLoops() - 1;
  SmallVector<Value> loaded;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (!isa<MemRefType>(v.getType())) {
      loaded.push_back(v);
      continue;
    }
    AffineMap m = op.getMatchingIndexingMap(in);
    SmallVector<Value> at = applyMap(b, l, m, dims);
    if (width > 1 && m.isFunctionOfDim(red)) {
      auto t = cast<MemRefType>(v.getType());
      loaded.push_back(vector::LoadOp::create(
          b, l, VectorType::get({width}, t.getElementType()), v, at,
          /*nontemporal=*/false,
          llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width))));
    } else {
      loaded.push_back(memref::LoadOp::create(b, l, v, at));
    }
  }
  return loaded;
}

/// The body folded over a step's `loaded` inputs (loadLaneStep) into `acc`,
/// element k, k + 1, ... in order.
Value foldLoadedStep(OpBuilder &b, Location l, linalg::GenericOp op,
                     ArrayRef<Value> dims, int64_t width,
                     ArrayRef<Value> loaded, Value acc) {
  Block &body = op.getRegion().front();
  const unsigned numInputs = op.getNumDpsInputs();
  const unsigned red = op.getNumLoops() - 1;
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

/// A lane's steps over a row of static length, unrolled (unrolledSteps):
/// step t at column `start` + t L V (L = rowLanes, V = width). The lanes
/// with a last, partial step (the row not a multiple of L V) take it under
/// `column < rowLength`.
struct LaneSteps {
  Value start;
  int64_t rowLength, stride, count;
  /// The step's first column.
  Value column(OpBuilder &b, Location l, int64_t t) const {
    if (t == 0)
      return start;
    return arith::AddIOp::create(
        b, l, start, arith::ConstantIndexOp::create(b, l, t * stride));
  }
  /// Whether step t is every lane's (no guard).
  bool whole(int64_t t) const { return (t + 1) * stride <= rowLength; }
  Value inRow(OpBuilder &b, Location l, Value column) const {
    return arith::CmpIOp::create(
        b, l, arith::CmpIPredicate::ult, column,
        arith::ConstantIndexOp::create(b, l, rowLength));
  }
};

/// Unrolling: a lane's steps issue all their loads before the first
/// step's arithmetic, so that a few long rows (a decode step's) wait for
/// memory once rather than once a step -- what LLVM's loop unroller does
/// not do for a loop whose trip count depends on the lane. Up to
/// kMaxUnrolledSteps steps, while the loaded vectors stay within
/// kMaxUnrolledRegisters 32-bit registers.
constexpr int64_t kMaxUnrolledSteps = 8;
constexpr int64_t kMaxUnrolledRegisters = 64;

/// The 32-bit registers a step's loads of `width` elements of `buffers`
/// take.
int64_t stepRegisters(ArrayRef<Value> buffers, int64_t width) {
  int64_t bits = 0;
  for (Value v : buffers)
    if (auto t = dyn_cast<MemRefType>(v.getType()))
      bits += std::max<int64_t>(
          32, width * static_cast<int64_t>(t.getElementTypeBitWidth()));
  return llvm::divideCeil(bits, 32);
}

/// The unrolled steps of a lane starting at `start` over a static row, or
/// nothing (a loop) when there are too many or they would hold too many
/// registers.
std::optional<LaneSteps> unrolledSteps(Value start, int64_t rowLength,
                                       int64_t rowLanes, int64_t width,
                                       int64_t registersPerStep) {
  if (ShapedType::isDynamic(rowLength))
    return std::nullopt;
  const int64_t stride = rowLanes * width;
  const int64_t count = llvm::divideCeil(rowLength, stride);
  if (count > kMaxUnrolledSteps ||
      count * registersPerStep > kMaxUnrolledRegisters)
    return std::nullopt;
  return LaneSteps{start, rowLength, stride, count};
}

/// The loaded registers a loop iteration's steps may hold together
/// (loopUnrollSteps): half of kMaxUnrolledRegisters, since the loop's
/// other values live beside them.
constexpr int64_t kMaxLoopUnrollRegisters = 32;

/// The steps a lane's loop over a static row too long to unroll
/// (unrolledSteps) takes per iteration, loads first: the most, up to
/// kMaxUnrolledSteps within kMaxLoopUnrollRegisters, that divides the
/// steps of a row that is a whole number of them (a prefill's
/// 4096-element norm row: 16 steps of a warp, 2 iterations of 8); 1
/// otherwise, and for a body that calls the math library: a `rowwise`
/// prefill's FFN row (SiLU(gate) * up over 14336 columns) took 8 steps
/// an iteration at 91 registers a thread against 34 rolled, and its
/// kernel went from 0.425 to 0.556 ms on an H100 (2026-12-07).
int64_t loopUnrollSteps(linalg::GenericOp op, int64_t rowLength,
                        int64_t rowLanes, int64_t width,
                        int64_t registersPerStep) {
  const int64_t stride = rowLanes * width;
  if (ShapedType::isDynamic(rowLength) || rowLength % stride != 0 ||
      llvm::any_of(op.getRegion().front(), [](Operation &o) {
        return isa<math::MathDialect>(o.getDialect());
      }))
    return 1;
  const int64_t count = rowLength / stride;
  for (int64_t u = std::min(kMaxUnrolledSteps,
                            kMaxLoopUnrollRegisters /
                                std::max<int64_t>(1, registersPerStep));
       u > 1; --u)
    if (count % u == 0)
      return u;
  return 1;
}

/// Whether `g`'s body may run for a lane whose column is past the row (its
/// loads zeros, its result unused): every op free of memory effects and
/// speculatable (no integer division by a value that may be zero).
bool speculatable(linalg::GenericOp g) {
  return llvm::all_of(g.getRegion().front().without_terminator(),
                      [](Operation &op) {
                        return isMemoryEffectFree(&op) && isSpeculatable(&op);
                      });
}

/// `build` under `cond`, yielding its values, and `otherwise` (values of
/// the same types) when `cond` is false.
SmallVector<Value>
guarded(OpBuilder &b, Location l, Value cond,
        function_ref<SmallVector<Value>(OpBuilder &)> build,
        function_ref<SmallVector<Value>(OpBuilder &, TypeRange)> otherwise) {
  SmallVector<Value> inside;
  auto ifOp = scf::IfOp::create(
      b, l, cond,
      [&](OpBuilder &tb, Location tl) {
        inside = build(tb);
        scf::YieldOp::create(tb, tl, inside);
      },
      [&](OpBuilder &eb, Location el) {
        SmallVector<Type> types =
            llvm::map_to_vector(inside, [](Value v) { return v.getType(); });
        scf::YieldOp::create(eb, el, otherwise(eb, types));
      });
  return SmallVector<Value>(ifOp.getResults());
}

/// Zeros of `types` (what a lane without a partial step holds for its
/// loads; never used).
SmallVector<Value> zerosOf(OpBuilder &b, Location l, TypeRange types) {
  return llvm::map_to_vector(types, [&](Type t) -> Value {
    return arith::ConstantOp::create(b, l, cast<TypedAttr>(b.getZeroAttr(t)));
  });
}

/// The unrolled steps' loads, every step's before the first step's
/// arithmetic: `load` gives a step's values at its column (one per input;
/// those `isLoad` marks are loads, the others pass through as given), the
/// last step's loads under its guard where only some lanes have it.
/// Returns the steps' columns and values.
std::pair<SmallVector<Value>, SmallVector<SmallVector<Value>>>
loadSteps(OpBuilder &b, Location l, const LaneSteps &steps,
          ArrayRef<bool> isLoad,
          function_ref<SmallVector<Value>(OpBuilder &, Value, int64_t)> load) {
  SmallVector<Value> columns;
  SmallVector<SmallVector<Value>> loaded;
  for (int64_t t = 0; t < steps.count; ++t) {
    Value k = steps.column(b, l, t);
    columns.push_back(k);
    if (steps.whole(t)) {
      loaded.push_back(load(b, k, t));
      continue;
    }
    // Only the loads go through the guard; the rest are taken from the
    // unguarded values, which are not loads.
    SmallVector<Value> outside;
    SmallVector<Value> inside = guarded(
        b, l, steps.inRow(b, l, k),
        [&](OpBuilder &gb) {
          SmallVector<Value> all = load(gb, k, t), loads;
          for (auto [v, isL] : llvm::zip(all, isLoad)) {
            if (isL)
              loads.push_back(v);
            outside.push_back(isL ? Value() : v);
          }
          return loads;
        },
        [&](OpBuilder &gb, TypeRange types) { return zerosOf(gb, l, types); });
    unsigned next = 0;
    for (auto [i, isL] : llvm::enumerate(isLoad))
      if (isL)
        outside[i] = inside[next++];
    loaded.push_back(outside);
  }
  return {columns, loaded};
}

/// The vectors a lane's unrolled steps over a row loaded from a buffer or
/// wrote to one, by buffer, position and width, so that a later stage over
/// the same columns takes them instead of loading them again: a decode
/// step's FFN row (SiLU(gate) * up, then its per-row quantization) read
/// gate and up twice and evaluated SiLU twice; with the second pass's
/// inputs the first pass's values, the second evaluation is the first's
/// (CSE) wherever the two are in one block (the whole steps). Recorded:
/// the loads of the reduction's and the stages' inputs (buffers the kernel
/// never writes: rowReductionStages), and by stage, the vectors a stage
/// stored, each element once, which a later stage reads back where it was
/// written (RowStage::readBack).
class StepVectors {
public:
  /// The per-step vectors `buffer` holds at `map` (indices as a function
  /// of the reduction's loops) for steps of `width` elements, if recorded.
  ArrayRef<Value> lookup(Value buffer, AffineMap map, int64_t width) const {
    const Key key = Key::get(buffer, map, width);
    for (const Entry &e : entries)
      if (e.key == key)
        return e.steps;
    return {};
  }
  void record(Value buffer, AffineMap map, int64_t width,
              SmallVector<Value> steps) {
    if (lookup(buffer, map, width).empty())
      entries.push_back({Key::get(buffer, map, width), std::move(steps)});
  }
  /// The per-step vectors stage `stage` stored (RowStage::readBack reads
  /// them back, through views of the buffer), if recorded.
  ArrayRef<Value> storedBy(int stage) const {
    auto it = stored.find(stage);
    return it == stored.end() ? ArrayRef<Value>() : ArrayRef(it->second);
  }
  void recordStored(int stage, SmallVector<Value> steps) {
    stored[stage] = std::move(steps);
  }

private:
  /// Which elements a step reads: the buffer under views that keep a
  /// strided layout's meaning (subview, expand/collapse_shape, cast,
  /// transpose) with the element's offset in it as a function of the
  /// reduction's loops, when every layout on the way is static; else the
  /// buffer and map as given. The same elements through different views
  /// then match: the block quantization of SiLU(gate) * up reads gate and
  /// up as [rows, blocks, 128] views in its amax and as [rows, columns]
  /// subviews in its quantization. (Not aliasRoot's walk through every
  /// view: memref.view shifts bytes under a layout of its own, so offsets
  /// above it would not compare.)
  struct Key {
    Value buffer;
    AffineMap map;
    AffineExpr offset;
    int64_t width = 0;
    bool operator==(const Key &o) const {
      return buffer == o.buffer && map == o.map && offset == o.offset &&
             width == o.width;
    }
    static Key get(Value buffer, AffineMap map, int64_t width) {
      if (std::optional<AffineExpr> offset = linearOffset(buffer, map)) {
        Value root = buffer;
        while (Operation *def = root.getDefiningOp()) {
          if (!isa<memref::SubViewOp, memref::ExpandShapeOp,
                   memref::CollapseShapeOp, memref::CastOp,
                   memref::TransposeOp>(def))
            break;
          root = def->getOperand(0);
        }
        return {root, {}, *offset, width};
      }
      return {buffer, map, {}, width};
    }
    /// The element offset `map` addresses in `buffer`'s static strided
    /// layout (with the layout's offset), simplified.
    static std::optional<AffineExpr> linearOffset(Value buffer, AffineMap map) {
      auto type = dyn_cast<MemRefType>(buffer.getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (!type || failed(type.getStridesAndOffset(strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic) ||
          map.getNumResults() != strides.size())
        return std::nullopt;
      AffineExpr e = getAffineConstantExpr(offset, map.getContext());
      for (auto [stride, index] : llvm::zip(strides, map.getResults()))
        e = e + index * stride;
      return simplifyAffineExpr(e, map.getNumDims(), map.getNumSymbols());
    }
  };
  struct Entry {
    Key key;
    SmallVector<Value> steps;
  };
  SmallVector<Entry> entries;
  llvm::SmallDenseMap<int, SmallVector<Value>> stored;
};

/// Input `j`'s value at every step of `loaded` (loadSteps' values).
SmallVector<Value> inputAcrossSteps(ArrayRef<SmallVector<Value>> loaded,
                                    size_t j) {
  SmallVector<Value> steps;
  for (ArrayRef<Value> step : loaded)
    steps.push_back(step[j]);
  return steps;
}

/// `stage`'s indexing map of `operand` as a function of the reduction's
/// loops (RowStage::dims), simplified; what StepVectors compares.
AffineMap mapOverReductionLoops(const fp8::RowStage &stage, OpOperand *operand,
                                unsigned numLoops) {
  linalg::GenericOp g = stage.op;
  AffineMap dims = AffineMap::get(numLoops, 0, stage.dims, g.getContext());
  return simplifyAffineMap(g.getMatchingIndexingMap(operand).compose(dims));
}

/// A lane's fold of row `rowIvs` from `identity`: lane `lane` folds
/// elements [lane V, lane V + V), then the same L V further on, ... (L =
/// rowLanes); unrolled where unrolledSteps allows, the loads first (and
/// recorded in `vectors`).
Value foldLane(OpBuilder &b, Location l, linalg::GenericOp op,
               ArrayRef<Value> rowIvs, Value lane, Value rowSize,
               int64_t rowLength, int64_t rowLanes, int64_t width,
               Value identity, StepVectors &vectors) {
  Value start = arith::MulIOp::create(
      b, l, lane, arith::ConstantIndexOp::create(b, l, width));
  SmallVector<Value> buffers;
  for (OpOperand *in : op.getDpsInputOperands())
    buffers.push_back(in->get());
  auto at = [&](Value k) {
    SmallVector<Value> dims(rowIvs);
    dims.push_back(k);
    return dims;
  };
  if (std::optional<LaneSteps> steps = unrolledSteps(
          start, rowLength, rowLanes, width, stepRegisters(buffers, width))) {
    SmallVector<bool> isLoad = llvm::map_to_vector(
        buffers, [](Value in) { return isa<MemRefType>(in.getType()); });
    // (Not a structured binding: lambdas below capture them.)
    SmallVector<Value> columns;
    SmallVector<SmallVector<Value>> loaded;
    std::tie(columns, loaded) =
        loadSteps(b, l, *steps, isLoad, [&](OpBuilder &gb, Value k, int64_t) {
          return loadLaneStep(gb, l, op, at(k), width);
        });
    for (auto [j, in] : llvm::enumerate(op.getDpsInputOperands()))
      if (isa<VectorType>(loaded.front()[j].getType()))
        vectors.record(in->get(),
                       simplifyAffineMap(op.getMatchingIndexingMap(in)), width,
                       inputAcrossSteps(loaded, j));
    Value acc = identity;
    for (int64_t t = 0; t < steps->count; ++t) {
      if (steps->whole(t)) {
        acc = foldLoadedStep(b, l, op, at(columns[t]), width, loaded[t], acc);
        continue;
      }
      Value inRow = steps->inRow(b, l, columns[t]);
      if (speculatable(op)) {
        // Every lane folds (a lane past the row on the zeros it loaded) and
        // keeps the result where the step is in the row: the evaluation is
        // then in the block a later stage's is (StepVectors).
        acc = arith::SelectOp::create(
            b, l, inRow,
            foldLoadedStep(b, l, op, at(columns[t]), width, loaded[t], acc),
            acc);
        continue;
      }
      acc = guarded(
          b, l, inRow,
          [&](OpBuilder &gb) {
            return SmallVector<Value>{foldLoadedStep(gb, l, op, at(columns[t]),
                                                     width, loaded[t], acc)};
          },
          [&](OpBuilder &, TypeRange) { return SmallVector<Value>{acc}; })[0];
    }
    return acc;
  }
  // A loop over chunks of `unroll` steps, each chunk's loads before its
  // arithmetic (the steps still folded in order: the same total).
  const int64_t unroll = loopUnrollSteps(op, rowLength, rowLanes, width,
                                         stepRegisters(buffers, width));
  const int64_t stride = rowLanes * width;
  auto kLoop = scf::ForOp::create(
      b, l, start, rowSize,
      arith::ConstantIndexOp::create(b, l, stride * unroll),
      ValueRange{identity},
      [&](OpBuilder &fb, Location fl, Value k, ValueRange acc) {
        SmallVector<Value> columns;
        SmallVector<SmallVector<Value>> loaded;
        for (int64_t t = 0; t < unroll; ++t) {
          columns.push_back(
              t == 0 ? k
                     : arith::AddIOp::create(
                           fb, fl, k,
                           arith::ConstantIndexOp::create(fb, fl, t * stride)));
          loaded.push_back(loadLaneStep(fb, fl, op, at(columns.back()), width));
        }
        Value folded = acc[0];
        for (int64_t t = 0; t < unroll; ++t)
          folded = foldLoadedStep(fb, fl, op, at(columns[t]), width, loaded[t],
                                  folded);
        scf::YieldOp::create(fb, fl, folded);
      });
  return kLoop.getResult(0);
}

/// The value of operand `j` of `stage` where its source is a value the warp
/// holds (RowStage::sources), else null.
Value forwarded(const fp8::RowStage &stage, unsigned j, Value total,
                ArrayRef<Value> stageValues) {
  int source = stage.sources[j];
  if (source == fp8::kFromTotal)
    return total;
  if (source >= 0)
    return stageValues[source];
  return {};
}

/// The stage's loop indices for the row `rowIvs` (and column `column`, per
/// element): its RowStage::dims evaluated there.
SmallVector<Value> stageIndices(OpBuilder &b, Location l,
                                const fp8::RowStage &stage,
                                ArrayRef<Value> rowIvs, Value column) {
  SmallVector<Value> loops(rowIvs);
  if (column)
    loops.push_back(column);
  SmallVector<Value> indices;
  for (AffineExpr e : stage.dims) {
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      indices.push_back(loops[dim.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      indices.push_back(arith::ConstantIndexOp::create(b, l, c.getValue()));
    else
      indices.push_back(affine::AffineApplyOp::create(
          b, l, AffineMap::get(loops.size(), 0, e), loops));
  }
  return indices;
}

/// Clones `stage`'s body with its inputs `inputs` (one per input operand) at
/// loop indices `indices`; returns the yielded value.
Value cloneStageBody(OpBuilder &b, const fp8::RowStage &stage,
                     ArrayRef<Value> inputs, ArrayRef<Value> indices,
                     Value acc = Value()) {
  linalg::GenericOp g = stage.op;
  Block &body = g.getRegion().front();
  IRMapping map;
  for (auto [j, v] : llvm::enumerate(inputs))
    map.map(body.getArgument(j), v);
  // A chained reduction's output argument: the lane's running value.
  if (acc)
    map.map(body.getArgument(inputs.size()), acc);
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), indices[index.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  return map.lookupOrDefault(
      cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

/// A per-row stage at row `rowIvs`, computed with `b` (every lane, or lane 0
/// only): its value, and its loop indices for the store.
std::pair<Value, SmallVector<Value>>
emitRowStage(OpBuilder &b, Location l, const fp8::RowStage &stage,
             ArrayRef<Value> rowIvs, Value total, ArrayRef<Value> stageValues) {
  linalg::GenericOp g = stage.op;
  SmallVector<Value> indices = stageIndices(b, l, stage, rowIvs, Value());
  SmallVector<Value> inputs;
  for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands())) {
    Value v = forwarded(stage, j, total, stageValues);
    if (!v && isa<MemRefType>(in->get().getType()))
      v = memref::LoadOp::create(
          b, l, in->get(),
          applyMap(b, l, g.getMatchingIndexingMap(in), indices));
    inputs.push_back(v ? v : in->get());
  }
  return {cloneStageBody(b, stage, inputs, indices), indices};
}

/// Whether `operand` of `g` is indexed by the reduced (last) loop only in
/// its last, contiguous, index: vector accesses of `width` elements.
bool vectorizable(linalg::GenericOp g, OpOperand *operand, int64_t width) {
  const unsigned red = g.getNumLoops() - 1;
  AffineMap m = g.getMatchingIndexingMap(operand);
  if (!m.isFunctionOfDim(red) || m.getNumResults() == 0)
    return false;
  ArrayRef<AffineExpr> results = m.getResults();
  auto dim = dyn_cast<AffineDimExpr>(results.back());
  auto t = dyn_cast<MemRefType>(operand->get().getType());
  return dim && dim.getPosition() == red && t &&
         llvm::none_of(results.drop_back(),
                       [&](AffineExpr e) { return e.isFunctionOfDim(red); }) &&
         fp8::vectorAccessAlignment(t, width).has_value();
}

/// The widest power of two <= maxWidth that divides the row and lets every
/// buffer operand of the per-element stage that the column indexes be
/// accessed as vectors; 1 when none does.
int64_t elementStageWidth(const fp8::RowStage &stage, int64_t rowLength,
                          int64_t maxWidth) {
  linalg::GenericOp g = stage.op;
  const unsigned red = g.getNumLoops() - 1;
  for (int64_t v = llvm::bit_floor<uint64_t>(std::max<int64_t>(maxWidth, 1));
       v >= 2; v /= 2) {
    if (rowLength % v != 0)
      continue;
    bool ok = true;
    for (OpOperand &operand : g->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()) ||
          !g.getMatchingIndexingMap(&operand).isFunctionOfDim(red))
        continue;
      if (g.isDpsInput(&operand) &&
          stage.sources[operand.getOperandNumber()] != fp8::kFromOperand)
        continue;
      ok &= vectorizable(g, &operand, v);
    }
    if (ok)
      return v;
  }
  return 1;
}

/// `stage`'s inputs at one element (loop indices `indices`, element `e` of
/// the step's vectors): a value the warp holds, `element` (the joined
/// stage's value there) for kFromElement, the element of a vector loaded for
/// the step, else a load (a buffer) or the operand itself.
SmallVector<Value>
elementInputs(OpBuilder &b, Location l, const fp8::RowStage &stage,
              ArrayRef<Value> indices, Value total, ArrayRef<Value> stageValues,
              ArrayRef<Value> vectors, int64_t e, Value element) {
  linalg::GenericOp g = stage.op;
  SmallVector<Value> inputs;
  for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands())) {
    if (stage.sources[j] == fp8::kFromElement)
      inputs.push_back(element);
    else if (Value f = forwarded(stage, j, total, stageValues))
      inputs.push_back(f);
    else if (!vectors.empty() && vectors[j])
      inputs.push_back(
          vector::ExtractOp::create(b, l, vectors[j], ArrayRef<int64_t>{e}));
    else if (isa<MemRefType>(in->get().getType()))
      inputs.push_back(memref::LoadOp::create(
          b, l, in->get(),
          applyMap(b, l, g.getMatchingIndexingMap(in), indices)));
    else
      inputs.push_back(in->get());
  }
  return inputs;
}

/// A chained reduction of a per-element stage, with its combiner.
struct Chained {
  const fp8::RowStage *stage;
  Combiner combiner;
};

/// A per-element stage over row `rowIvs`: lane `lane` computes columns
/// [lane V, lane V + V), then L V further on, ... (L = `rowLanes`, the
/// row's lanes; V = `width`: the
/// reduction's own order when V is its width); buffers the column indexes
/// contiguously are read and written as vectors of V. The loop also folds
/// each chained reduction over the values it computes (and other inputs,
/// loaded per element) into the lane's partial, which it returns. Unrolled,
/// it takes the vectors `stepVectors` holds for its inputs instead of
/// loading them (those an earlier pass loaded from the same buffer at the
/// same positions, those the stage it reads back stored), and records what
/// it loads and, as stage `index`'s, the vectors it stores.
SmallVector<Value>
emitElementStage(OpBuilder &b, Location l, const fp8::RowStage &stage,
                 ArrayRef<Value> rowIvs, Value lane, int64_t rowLength,
                 int64_t rowLanes, int64_t width, Value total,
                 ArrayRef<Value> stageValues, int index,
                 StepVectors &stepVectors, ArrayRef<Chained> chained = {}) {
  linalg::GenericOp g = stage.op;
  Value start = arith::MulIOp::create(
      b, l, lane, arith::ConstantIndexOp::create(b, l, width));
  SmallVector<Value> identities;
  for (const Chained &c : chained)
    identities.push_back(
        arith::ConstantOp::create(b, l, c.combiner.identity).getResult());
  // The inputs a step reads as vectors (contiguous along the column, not a
  // value the warp holds); the others are loaded per element or forwarded.
  SmallVector<bool> asVector;
  SmallVector<Value> vectorBuffers;
  for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands())) {
    asVector.push_back(!forwarded(stage, j, total, stageValues) &&
                       isa<MemRefType>(in->get().getType()) && width > 1 &&
                       vectorizable(g, in, width));
    if (asVector.back())
      vectorBuffers.push_back(in->get());
  }
  // A step's vector loads at column k of the inputs `load` marks (null
  // where an input is not one).
  auto loadStep = [&](OpBuilder &fb, Value k, ArrayRef<bool> load) {
    SmallVector<Value> at = stageIndices(fb, l, stage, rowIvs, k);
    SmallVector<Value> vectors;
    for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands())) {
      Value v;
      if (load[j]) {
        auto t = cast<MemRefType>(in->get().getType());
        v = vector::LoadOp::create(
            fb, l, VectorType::get({width}, t.getElementType()), in->get(),
            applyMap(fb, l, g.getMatchingIndexingMap(in), at),
            /*nontemporal=*/false,
            llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width)));
      }
      vectors.push_back(v);
    }
    return vectors;
  };
  // A step's elements at column k from its `vectors`: computed, stored,
  // folded into the chained reductions' partials `accs`; returns the
  // partials, then the vector stored (when the output is one).
  auto computeStep = [&](OpBuilder &fb, Value k, ArrayRef<Value> vectors,
                         SmallVector<Value> accs, Value inRow = Value()) {
    // With `inRow` (a partial step computed by every lane) the stores go
    // under it and the partials keep their value where it is false.
    auto effect = [&](function_ref<void(OpBuilder &)> build) {
      if (!inRow)
        return build(fb);
      auto ifOp = scf::IfOp::create(fb, l, inRow, /*withElseRegion=*/false);
      OpBuilder tb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
      build(tb);
    };
    SmallVector<Value> at = stageIndices(fb, l, stage, rowIvs, k);
    OpOperand *res = g.getDpsInitOperand(0);
    AffineMap resMap = g.getMatchingIndexingMap(res);
    const bool storeVector = width > 1 && vectorizable(g, res, width);
    SmallVector<Value> results;
    for (int64_t e = 0; e < width; ++e) {
      Value ke = k;
      if (e != 0)
        ke = arith::AddIOp::create(fb, l, k,
                                   arith::ConstantIndexOp::create(fb, l, e));
      SmallVector<Value> indices = stageIndices(fb, l, stage, rowIvs, ke);
      SmallVector<Value> inputs = elementInputs(fb, l, stage, indices, total,
                                                stageValues, vectors, e, {});
      Value r = cloneStageBody(fb, stage, inputs, indices);
      if (storeVector)
        results.push_back(r);
      else
        effect([&](OpBuilder &sb) {
          memref::StoreOp::create(sb, l, r, res->get(),
                                  applyMap(sb, l, resMap, indices));
        });
      // The chained reductions fold r (and their other inputs).
      for (auto [c, chain] : llvm::enumerate(chained)) {
        SmallVector<Value> cIndices =
            stageIndices(fb, l, *chain.stage, rowIvs, ke);
        SmallVector<Value> cInputs =
            elementInputs(fb, l, *chain.stage, cIndices, total, stageValues,
                          /*vectors=*/{}, e, r);
        Value next =
            cloneStageBody(fb, *chain.stage, cInputs, cIndices, accs[c]);
        accs[c] = inRow ? arith::SelectOp::create(fb, l, inRow, next, accs[c])
                              .getResult()
                        : next;
      }
    }
    if (storeVector) {
      auto t = cast<MemRefType>(res->get().getType());
      Value vec = vector::FromElementsOp::create(
          fb, l, VectorType::get({width}, t.getElementType()), results);
      effect([&](OpBuilder &sb) {
        vector::StoreOp::create(
            sb, l, vec, res->get(), applyMap(sb, l, resMap, at),
            /*nontemporal=*/false,
            llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width)));
      });
      accs.push_back(vec);
    }
    return accs;
  };
  // Unrolled: every step's vector loads, then the steps in order. Each
  // lane writes only its own columns, and a step's vectors are the
  // columns it computes, so no load moves above a store that writes what
  // it reads.
  if (std::optional<LaneSteps> steps =
          unrolledSteps(start, rowLength, rowLanes, width,
                        stepRegisters(vectorBuffers, width))) {
    // Inputs whose steps' vectors an earlier pass over the same columns
    // holds are taken from it; the others are loaded (and recorded).
    const unsigned numLoops = rowIvs.size() + 1;
    SmallVector<ArrayRef<Value>> held;
    SmallVector<bool> isLoad;
    for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands())) {
      ArrayRef<Value> h;
      if (asVector[j] && llvm::is_contained(stage.readBack, j))
        h = stepVectors.storedBy(stage.sameLanesAs);
      if (asVector[j] && h.empty())
        h = stepVectors.lookup(
            in->get(), mapOverReductionLoops(stage, in, numLoops), width);
      // (asVector: a buffer; held vectors must be what a load would give.)
      if (!h.empty() &&
          (static_cast<int64_t>(h.size()) != steps->count ||
           h.front().getType() !=
               VectorType::get(
                   {width},
                   cast<MemRefType>(in->get().getType()).getElementType())))
        h = {};
      held.push_back(h);
      isLoad.push_back(asVector[j] && held.back().empty());
    }
    SmallVector<Value> columns;
    SmallVector<SmallVector<Value>> loaded;
    std::tie(columns, loaded) =
        loadSteps(b, l, *steps, isLoad, [&](OpBuilder &gb, Value k, int64_t t) {
          SmallVector<Value> vectors = loadStep(gb, k, isLoad);
          for (auto [j, h] : llvm::enumerate(held))
            if (!h.empty())
              vectors[j] = h[t];
          return vectors;
        });
    for (auto [j, in] : llvm::enumerate(g.getDpsInputOperands()))
      if (isLoad[j])
        stepVectors.record(in->get(),
                           mapOverReductionLoops(stage, in, numLoops), width,
                           inputAcrossSteps(loaded, j));
    // A partial step is every lane's where the bodies allow it.
    const bool speculative =
        speculatable(g) && llvm::all_of(chained, [](const Chained &c) {
          return speculatable(c.stage->op);
        });
    // The partials, then each step's stored vector (if the output is one).
    SmallVector<Value> accs = identities, stored;
    auto takeStored = [&](SmallVector<Value> values) {
      if (values.size() > identities.size())
        stored.push_back(values.pop_back_val());
      accs = std::move(values);
    };
    for (int64_t t = 0; t < steps->count; ++t) {
      if (steps->whole(t)) {
        takeStored(computeStep(b, columns[t], loaded[t], accs));
        continue;
      }
      Value inRow = steps->inRow(b, l, columns[t]);
      if (speculative) {
        // As the reduction's partial step (foldLane): computed by every
        // lane, stored and folded where the step is in the row.
        takeStored(computeStep(b, columns[t], loaded[t], accs, inRow));
        continue;
      }
      takeStored(guarded(
          b, l, inRow,
          [&](OpBuilder &gb) {
            return computeStep(gb, columns[t], loaded[t], accs);
          },
          [&](OpBuilder &eb, TypeRange types) {
            SmallVector<Value> values(accs);
            if (types.size() > accs.size())
              values.push_back(zerosOf(eb, l, types.back()).front());
            return values;
          }));
    }
    if (stored.size() == static_cast<size_t>(steps->count))
      stepVectors.recordStored(index, std::move(stored));
    return accs;
  }
  auto loop = scf::ForOp::create(
      b, l, start, arith::ConstantIndexOp::create(b, l, rowLength),
      arith::ConstantIndexOp::create(b, l, rowLanes * width), identities,
      [&](OpBuilder &fb, Location fl, Value k, ValueRange partials) {
        SmallVector<Value> next = computeStep(fb, k, loadStep(fb, k, asVector),
                                              SmallVector<Value>(partials));
        next.resize(identities.size()); // (not the stored vector)
        scf::YieldOp::create(fb, fl, next);
      });
  return SmallVector<Value>(loop.getResults());
}
/// The lanes L that share a row and their vector width V: the warp's 32,
/// with V = laneVectorWidth; or, for a row too short to give each of 32
/// lanes a whole vector of the widest aligned width (block amaxes of 128
/// elements, 16-bit: 32 lanes of 4), fewer lanes -- L = row / V, a power
/// of two -- and 32 / L rows per warp, so that every lane still moves one
/// vector of V and no lane idles in the stages that read the row back.
/// Only where rows * L fills whole warps (the range guard of the
/// linearized nest then never splits a warp, whose shuffles need every
/// lane).
///
/// Register rows (`heldBuffers` not empty: every buffer the kernel's passes
/// read, where later passes read the row again): at
/// least as many warps a row (up to kMaxRowWarps) as make a lane's steps
/// few enough to unroll (unrolledSteps), whatever the number of rows (few
/// rows keep their wider blocks), so that every
/// pass after the first takes the first one's registers instead of reading
/// the row again (a prefill's SiLU(gate) * up row of 14336 elements, then
/// its per-row quantization: 8 warps, 7 steps a lane).
std::pair<int64_t, int64_t> chooseRowLanes(linalg::GenericOp op,
                                           int64_t rowLength, int64_t rows,
                                           int64_t vectorWidth,
                                           ArrayRef<Value> heldBuffers) {
  const int64_t full = laneVectorWidth(op, rowLength, vectorWidth);
  // Few long rows: W warps a row (kMaxRowWarps), each lane still at least
  // one vector of `full`, rows x W within the budget.
  int64_t warps = 1;
  while (rowLength / full >= fp8::kWideRowMinVectors &&
         warps * 2 <= fp8::kMaxRowWarps &&
         rows * warps * 2 <= fp8::kWideRowWarpBudget &&
         rowLength / full >= fp8::kReductionLanes * warps * 2)
    warps *= 2;
  // Register rows: at least the fewest warps whose lanes' steps unroll
  // (each lane then still has at least one vector: the warps are the
  // fewest with vectors <= 32 W kMaxUnrolledSteps).
  if (!heldBuffers.empty() && rowLength % full == 0) {
    const int64_t vectors = rowLength / full;
    int64_t held = 1;
    while (vectors > fp8::kReductionLanes * held * kMaxUnrolledSteps &&
           held * 2 <= fp8::kMaxRowWarps)
      held *= 2;
    const int64_t steps =
        llvm::divideCeil(vectors, fp8::kReductionLanes * held);
    if (held > warps && steps <= kMaxUnrolledSteps &&
        steps * stepRegisters(heldBuffers, full) <= kMaxUnrolledRegisters)
      warps = held;
  }
  if (warps > 1)
    return {fp8::kReductionLanes * warps, full};
  for (int64_t v = llvm::bit_floor<uint64_t>(std::max<int64_t>(vectorWidth, 1));
       v > full; v /= 2) {
    if (rowLength % v != 0)
      continue;
    const int64_t lanes = rowLength / v;
    if (!llvm::isPowerOf2_64(lanes) || lanes < 2 ||
        lanes >= fp8::kReductionLanes ||
        (rows * lanes) % fp8::kReductionLanes != 0)
      continue;
    if (laneVectorWidth(op, rowLength, v, lanes) == v)
      return {lanes, v};
  }
  return {fp8::kReductionLanes, full};
}
} // namespace

bool fp8::hasWarpCombiner(linalg::GenericOp op) {
  return matchCombiner(op).has_value();
}

LogicalResult
fp8::lowerRowReductionToWarps(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t vectorWidth, linalg::FillOp init,
                              ArrayRef<RowStage> stages, bool registerRows) {
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
  // Dynamic sizes (a softmax over a run-time key length): the warp folds
  // the row one element per lane per step (no vectors: the row's
  // alignment is unknown), without stages (they are fused for static rows
  // only); every row is a warp's, whatever its length.
  const bool dynamic = llvm::any_of(ranges, ShapedType::isDynamic);
  if (dynamic ? (init || !stages.empty()) : ranges.back() < kReductionLanes)
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

  // What stands between the reduction and its last stage (pure ops, fresh
  // allocations: rowReductionStages) moves before it, so that the kernel
  // sees the stages' buffers.
  if (!stages.empty()) {
    SmallVector<Operation *> between;
    Operation *last = linalg::GenericOp(stages.back().op).getOperation();
    for (Operation *it = op->getNextNode(); it != last; it = it->getNextNode())
      if (llvm::none_of(stages, [&](const fp8::RowStage &s) {
            return linalg::GenericOp(s.op).getOperation() == it ||
                   (s.fill && linalg::FillOp(s.fill).getOperation() == it);
          }))
        between.push_back(it);
    for (Operation *it : between)
      rewriter.moveOpBefore(it, op);
  }

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  const int64_t rowLength = ranges.back();
  int64_t rows = 1;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    rows *= ranges[i];
  // Register rows: every buffer the passes read, where a per-element stage
  // reads the row again.
  llvm::SetVector<Value> heldBuffers;
  if (registerRows && !dynamic &&
      llvm::any_of(stages, [](const RowStage &s) { return s.perElement; })) {
    for (OpOperand *in : op.getDpsInputOperands())
      heldBuffers.insert(in->get());
    for (const RowStage &s : stages)
      if (s.perElement)
        for (auto [j, in] :
             llvm::enumerate(linalg::GenericOp(s.op).getDpsInputOperands()))
          if (s.sources[j] == kFromOperand)
            heldBuffers.insert(in->get());
  }
  // (Not a structured binding: the lambdas below capture them, which
  // C++17 does not allow for bindings.)
  const std::pair<int64_t, int64_t> lanesAndWidth =
      dynamic ? std::pair<int64_t, int64_t>{kReductionLanes, 1}
              : chooseRowLanes(op, rowLength, rows, vectorWidth,
                               heldBuffers.getArrayRef());
  const int64_t rowLanes = lanesAndWidth.first;
  const int64_t width = lanesAndWidth.second;
  // The loops' sizes: constants, or (dynamic) read from the operands.
  SmallVector<Value> sizes;
  if (dynamic) {
    for (Range r : cast<linalg::LinalgOp>(op.getOperation())
                       .createLoopRanges(rewriter, loc))
      sizes.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, r.size));
  } else {
    for (int64_t r : ranges)
      sizes.push_back(idx(r));
  }
  SmallVector<Value> lbs(numLoops, idx(0)), steps(numLoops, idx(1)), ubs;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    ubs.push_back(sizes[i]);
  ubs.push_back(idx(rowLanes));

  auto nest = scf::ParallelOp::create(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value lane = ivs.back();
        SmallVector<Value> rowIvs(ivs.drop_back());
        Value identity = arith::ConstantOp::create(b, l, comb->identity);
        // What the lane's unrolled steps load (and the stages store), for
        // the stages that read the same columns again.
        StepVectors stepVectors;
        // Lane `lane` folds elements [lane * V, lane * V + V), then the
        // same L * V further on, ... (L = rowLanes)
        Value partial = foldLane(b, l, op, rowIvs, lane, sizes.back(),
                                 dynamic ? ShapedType::kDynamic : rowLength,
                                 rowLanes, width, identity, stepVectors);
        // The row's partials: a butterfly leaves the total in every lane.
        // With stages, every lane takes lane 0's total (warpAllReduce), so
        // that lanes agree bit for bit with what lane 0 stores.
        Value total = rowAllReduce(b, l, *comb, partial, rowLanes, lane,
                                   /*fromLaneZero=*/!stages.empty());
        // Lane 0 folds the total into the output's initial value: the
        // fill's (when the fill is folded), else the output's. With the
        // fill, every lane knows the row's value and computes the per-row
        // stages, lane 0 stores them, then the per-element stages run as
        // lane-strided loops. With chained reductions the stages run in
        // order (a per-row stage may need a chained total, which only the
        // loop of the stage it joins computes) and lane 0 stores every
        // per-row value at the end. Without the fill only lane 0 has the
        // value and computes the (per-row) stages.
        Value first = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, lane,
            arith::ConstantIndexOp::create(b, l, 0));
        SmallVector<Value> stageValues(stages.size());
        SmallVector<SmallVector<Value>> rowStageAt(stages.size());
        SmallVector<int64_t> stageWidths(stages.size(), 1);
        auto emitRowStages = [&](OpBuilder &rb, Value updated) {
          for (auto [i, stage] : llvm::enumerate(stages))
            if (!stage.perElement)
              std::tie(stageValues[i], rowStageAt[i]) =
                  emitRowStage(rb, l, stage, rowIvs, updated, stageValues);
        };
        // A per-element stage's vector width: its own, or that of the stage
        // whose elements it reads back.
        auto widthOf = [&](unsigned i) {
          const RowStage &stage = stages[i];
          stageWidths[i] =
              stage.sameLanesAs >= 0
                  ? stageWidths[stage.sameLanesAs]
                  : elementStageWidth(stage, rowLength, vectorWidth);
          return stageWidths[i];
        };
        Value updated;
        if (initFill)
          updated =
              combine(b, *comb, total, initFill.getDpsInputOperand(0)->get());
        const bool anyChained = llvm::any_of(
            stages, [](const RowStage &s) { return s.isReduction(); });
        if (initFill && !anyChained) {
          emitRowStages(b, updated);
        } else if (initFill) {
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (auto [i, stage] : llvm::enumerate(stages)) {
            if (stage.isReduction())
              continue; // in the loop of the stage it joins
            if (!stage.perElement) {
              std::tie(stageValues[i], rowStageAt[i]) =
                  emitRowStage(b, l, stage, rowIvs, updated, stageValues);
              continue;
            }
            SmallVector<unsigned> chainedIdx;
            SmallVector<Chained> chained;
            for (auto [j, other] : llvm::enumerate(stages))
              if (other.isReduction() && other.joins == static_cast<int>(i)) {
                chainedIdx.push_back(j);
                chained.push_back({&other, *matchCombiner(other.op)});
              }
            SmallVector<Value> partials = emitElementStage(
                b, l, stage, rowIvs, lane, rowLength, rowLanes, widthOf(i),
                updated, stageValues, i, stepVectors, chained);
            for (auto [c, j] : llvm::enumerate(chainedIdx)) {
              const Combiner &cc = chained[c].combiner;
              Value t = rowAllReduce(b, l, cc, partials[c], rowLanes, lane);
              stageValues[j] = combine(
                  b, cc, t,
                  linalg::FillOp(stages[j].fill).getDpsInputOperand(0)->get());
              rowStageAt[j] = stageIndices(b, l, stages[j], rowIvs, zero);
            }
          }
        }
        auto store = scf::IfOp::create(b, l, first, /*withElseRegion=*/false);
        OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
        SmallVector<Value> outIdx = applyMap(sb, l, outMap, ivs);
        if (!initFill) {
          updated = combine(
              sb, *comb, total,
              memref::LoadOp::create(sb, l, output->get(), outIdx));
          emitRowStages(sb, updated);
        }
        memref::StoreOp::create(sb, l, updated, output->get(), outIdx);
        for (auto [i, stage] : llvm::enumerate(stages)) {
          if (stage.perElement)
            continue;
          linalg::GenericOp g = stage.op;
          OpOperand *res = g.getDpsInitOperand(0);
          memref::StoreOp::create(
              sb, l, stageValues[i], res->get(),
              applyMap(sb, l, g.getMatchingIndexingMap(res), rowStageAt[i]));
        }
        // Without chained reductions the stages that read the row's
        // elements again come after the stores.
        if (initFill && !anyChained)
          for (auto [i, stage] : llvm::enumerate(stages))
            if (stage.perElement)
              emitElementStage(b, l, stage, rowIvs, lane, rowLength, rowLanes,
                               widthOf(i), updated, stageValues, i,
                               stepVectors);
      });
  if (rowLanes > kReductionLanes)
    nest->setAttr(kBlockThreadsAttr, rewriter.getI64IntegerAttr(rowLanes));
  rewriter.eraseOp(op);
  return success();
}
