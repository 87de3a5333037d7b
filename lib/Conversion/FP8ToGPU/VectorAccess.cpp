//===- VectorAccess.cpp - Vector loads and stores in GPU loop nests -------===//
//
// Part of fp8-opt. An element-wise kernel that gives each thread one
// element moves 1, 2 or 4 bytes per load and store, and on the H200 such
// kernels reach a quarter to a half of the memory bandwidth (a 8192 x 4096
// FP16 -> FP8 quantization: 0.089 ms against a 0.023 ms floor). Giving each
// thread V consecutive elements, loaded and stored as one vector, is the
// usual remedy. Upstream's route to it is linalg tiling + vectorization of
// whole bodies, which would put vector arithmetic -- FP8 conversions,
// libdevice math -- in front of lowerings that only handle scalars; here
// only the memory accesses become vectors and the arithmetic stays scalar,
// cloned per element (docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#include "VectorAccess.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;

std::optional<int64_t> fp8::vectorAccessAlignment(MemRefType type,
                                                  int64_t width) {
  if (width < 2 || type.getRank() == 0)
    return std::nullopt;
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat())
    return std::nullopt;
  const unsigned bits = elem.getIntOrFloatBitWidth();
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || strides.back() != 1 ||
      offset % width != 0)
    return std::nullopt;
  for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(s) || s % width != 0)
      return std::nullopt;
  int64_t last = type.getShape().back();
  if (ShapedType::isDynamic(last) || last % width != 0)
    return std::nullopt;
  return std::min<int64_t>(width * (bits / 8), fp8::kDeviceBufferAlignment);
}

namespace {

/// `v` without identity affine.apply ops (what linalg's loop lowering puts
/// on every index).
Value throughIdentityApplies(Value v) {
  while (auto apply = v.getDefiningOp<affine::AffineApplyOp>()) {
    AffineMap m = apply.getAffineMap();
    if (m.getNumResults() != 1 || m.getNumSymbols() != 0)
      break;
    auto d = dyn_cast<AffineDimExpr>(m.getResult(0));
    if (!d)
      break;
    v = apply.getMapOperands()[d.getPosition()];
  }
  return v;
}

/// Whether an access to `type` is a vector for some width: a static layout
/// with unit innermost stride and 1-, 2-, 4- or 8-byte elements.
bool canBeVector(MemRefType type) {
  for (int64_t w = 2; w <= 16; w *= 2)
    if (fp8::vectorAccessAlignment(type, w))
      return true;
  return false;
}

bool isAccess(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp>(op);
}

MemRefType accessType(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRefType();
  return cast<memref::StoreOp>(op).getMemRefType();
}

ValueRange accessIndices(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getIndices();
  return cast<memref::StoreOp>(op).getIndices();
}

bool containsAccess(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isAccess(inner) ? WalkResult::interrupt()
                               : WalkResult::advance();
      })
      .wasInterrupted();
}

/// A loop the coarsening enters (its clones become one loop, carrying each
/// clone's values): an scf.for whose bounds do not depend on the coarsened
/// induction variable.
bool isEnterableLoop(Operation *op, const llvm::SmallPtrSetImpl<Value> &deps) {
  auto loop = dyn_cast<scf::ForOp>(op);
  return loop && !deps.contains(loop.getLowerBound()) &&
         !deps.contains(loop.getUpperBound()) && !deps.contains(loop.getStep());
}

/// The accesses of a coarsenable body whose last index is the coarsened
/// induction variable and whose other indices do not depend on it.
struct BodyAccesses {
  SmallVector<Operation *> contiguous;
};

/// Checks one block of the body (recursively): every op is pure, an access,
/// or an enterable loop holding such a block; no access follows a store of
/// the same block (stores are gathered at the end of their block) and no
/// buffer is stored twice (the gathered store could then land last).
LogicalResult analyzeBlock(Block &block, Value iv,
                           const llvm::SmallPtrSetImpl<Value> &deps,
                           llvm::SmallPtrSetImpl<Value> &storedBuffers,
                           BodyAccesses &result) {
  bool stored = false;
  for (Operation &op : block.without_terminator()) {
    if (isAccess(&op)) {
      if (stored && isa<memref::LoadOp>(op))
        return failure();
      if (auto store = dyn_cast<memref::StoreOp>(op))
        if (!storedBuffers.insert(store.getMemRef()).second)
          return failure();
      stored |= isa<memref::StoreOp>(op);
      ValueRange indices = accessIndices(&op);
      if (!indices.empty() && throughIdentityApplies(indices.back()) == iv &&
          llvm::none_of(indices.drop_back(),
                        [&](Value i) { return deps.contains(i); }))
        result.contiguous.push_back(&op);
      continue;
    }
    if (!containsAccess(&op)) {
      bool pure = true;
      op.walk([&](Operation *inner) {
        if (!isMemoryEffectFree(inner) &&
            !inner->hasTrait<OpTrait::IsTerminator>())
          pure = false;
      });
      if (!pure)
        return failure();
      continue;
    }
    if (stored || !isEnterableLoop(&op, deps) ||
        failed(analyzeBlock(*cast<scf::ForOp>(op).getBody(), iv, deps,
                            storedBuffers, result)))
      return failure();
  }
  return success();
}

/// Values of `body` that depend on `iv` (through any operand, in any
/// nested region). Conservative for loops: their carried values and
/// results count as dependent (a value the body yields may depend on `iv`
/// even when the initial one does not); their induction variable depends
/// on `iv` only through the bounds.
llvm::SmallPtrSet<Value, 16> dependentsOf(Block &body, Value iv) {
  llvm::SmallPtrSet<Value, 16> deps;
  deps.insert(iv);
  auto dependent = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return deps.contains(v); });
  };
  for (Operation &top : body.without_terminator())
    top.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (Value arg : loop.getRegionIterArgs())
          deps.insert(arg);
        for (Value r : loop.getResults())
          deps.insert(r);
        if (dependent(ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep()}))
          deps.insert(loop.getInductionVar());
        return;
      }
      if (!dependent(op->getOperands()))
        return;
      for (Value r : op->getResults())
        deps.insert(r);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            deps.insert(arg);
    });
  return deps;
}

/// Emits the V clones of a block op by op (clone v maps the coarsened
/// induction variable to base + v through maps[v]); vectorized loads are
/// one vector.load and V extracts, vectorized stores one vector.store at
/// the end of the block, enterable loops one loop holding the V clones of
/// their body.
class CoarseBlockEmitter {
public:
  CoarseBlockEmitter(const llvm::SmallPtrSetImpl<Operation *> &vectorized,
                     int64_t width, Value base)
      : vectorized(vectorized), width(width), base(base) {}

  void emit(OpBuilder &b, Block &block, MutableArrayRef<IRMapping> maps) {
    llvm::MapVector<Operation *, SmallVector<Value>> stored;
    DenseMap<Operation *, SmallVector<Value>> storeAt;
    for (Operation &op : block.without_terminator()) {
      Location l = op.getLoc();
      if (vectorized.contains(&op)) {
        MemRefType t = accessType(&op);
        auto vecType = VectorType::get({width}, t.getElementType());
        SmallVector<Value> at;
        for (Value i : accessIndices(&op).drop_back())
          at.push_back(maps[0].lookupOrDefault(i));
        at.push_back(base);
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          Value vec = vector::LoadOp::create(
              b, l, vecType, load.getMemRef(), at, /*nontemporal=*/false,
              llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width)));
          for (int64_t v = 0; v < width; ++v)
            maps[v].map(load.getResult(), vector::ExtractOp::create(
                                              b, l, vec, ArrayRef<int64_t>{v}));
          continue;
        }
        auto store = cast<memref::StoreOp>(op);
        storeAt[&op] = at;
        for (int64_t v = 0; v < width; ++v)
          stored[&op].push_back(
              maps[v].lookupOrDefault(store.getValueToStore()));
        continue;
      }
      if (isa<scf::ForOp>(op) && containsAccess(&op)) {
        emitLoop(b, cast<scf::ForOp>(op), maps);
        continue;
      }
      for (IRMapping &m : maps)
        b.clone(op, m);
    }
    for (auto &[op, values] : stored) {
      auto store = cast<memref::StoreOp>(op);
      MemRefType t = store.getMemRefType();
      Value vec = vector::FromElementsOp::create(
          b, op->getLoc(), VectorType::get({width}, t.getElementType()),
          values);
      vector::StoreOp::create(
          b, op->getLoc(), vec, store.getMemRef(), storeAt[op],
          /*nontemporal=*/false,
          llvm::MaybeAlign(*fp8::vectorAccessAlignment(t, width)));
    }
  }

private:
  /// One loop for the V clones of `loop`: clone v's carried values are
  /// values [v n, v n + n) of the coarse loop's n V.
  void emitLoop(OpBuilder &b, scf::ForOp loop,
                MutableArrayRef<IRMapping> maps) {
    const unsigned n = loop.getNumRegionIterArgs();
    SmallVector<Value> inits;
    for (IRMapping &m : maps)
      for (Value init : loop.getInitArgs())
        inits.push_back(m.lookupOrDefault(init));
    auto coarse = scf::ForOp::create(
        b, loop.getLoc(), maps[0].lookupOrDefault(loop.getLowerBound()),
        maps[0].lookupOrDefault(loop.getUpperBound()),
        maps[0].lookupOrDefault(loop.getStep()), inits,
        [&](OpBuilder &ib, Location il, Value iv, ValueRange args) {
          for (auto [v, m] : llvm::enumerate(maps)) {
            m.map(loop.getInductionVar(), iv);
            for (unsigned i = 0; i < n; ++i)
              m.map(loop.getRegionIterArgs()[i], args[v * n + i]);
          }
          emit(ib, *loop.getBody(), maps);
          SmallVector<Value> yields;
          for (IRMapping &m : maps)
            for (Value y : loop.getBody()->getTerminator()->getOperands())
              yields.push_back(m.lookupOrDefault(y));
          scf::YieldOp::create(ib, il, yields);
        });
    for (auto [v, m] : llvm::enumerate(maps))
      for (unsigned i = 0; i < n; ++i)
        m.map(loop.getResult(i), coarse.getResult(v * n + i));
  }

  const llvm::SmallPtrSetImpl<Operation *> &vectorized;
  int64_t width;
  Value base;
};

/// Whether `op` (or an op nested in it) uses `memref`.
bool usesMemRef(Operation *op, Value memref) {
  return op
      ->walk([&](Operation *inner) {
        return llvm::is_contained(inner->getOperands(), memref)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether two index values are equal: the same value, or computed by
/// equivalent pure ops from the same operands (linalg's lowering computes
/// a load's and a store's indices separately).
bool sameIndex(Value a, Value b) {
  if (a == b)
    return true;
  Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
  return da && db && isPure(da) && isPure(db) &&
         OperationEquivalence::isEquivalentTo(
             da, db, OperationEquivalence::IgnoreLocations);
}

/// Promotes one accumulator of `loop` if it has one; returns the new loop.
FailureOr<scf::ForOp> promoteOneAccumulator(RewriterBase &rewriter,
                                            scf::ForOp loop) {
  Block &body = *loop.getBody();
  for (Operation &op : body) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load)
      continue;
    Value mem = load.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(mem) ||
        !llvm::all_of(load.getIndices(),
                      [&](Value i) { return loop.isDefinedOutsideOfLoop(i); }))
      continue;
    memref::StoreOp store;
    bool other = false;
    for (Operation &later : body) {
      if (&later == load.getOperation() || !usesMemRef(&later, mem))
        continue;
      auto s = dyn_cast<memref::StoreOp>(later);
      if (store || !s || s.getMemRef() != mem ||
          !llvm::equal(s.getIndices(), load.getIndices(), sameIndex) ||
          !load->isBeforeInBlock(s)) {
        other = true;
        break;
      }
      store = s;
    }
    if (other || !store)
      continue;
    // load before the loop -> carried value -> store after the loop.
    rewriter.setInsertionPoint(loop);
    Value init =
        memref::LoadOp::create(rewriter, load.getLoc(), mem, load.getIndices());
    Value stored = store.getValueToStore();
    FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
        rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{stored};
        });
    if (failed(grown))
      return failure();
    auto newLoop = cast<scf::ForOp>(grown->getOperation());
    rewriter.replaceAllUsesWith(load.getResult(),
                                newLoop.getRegionIterArgs().back());
    rewriter.eraseOp(load);
    rewriter.setInsertionPointAfter(newLoop);
    memref::StoreOp::create(rewriter, store.getLoc(),
                            newLoop.getResults().back(), mem,
                            store.getIndices());
    rewriter.eraseOp(store);
    return newLoop;
  }
  return failure();
}
} // namespace

void fp8::promoteLoopAccumulators(RewriterBase &rewriter, Operation *root) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) { loops.push_back(loop); }); // inner first
  for (scf::ForOp loop : loops) {
    // Index arithmetic out first (linalg's lowering computes the output's
    // indices in the innermost body).
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    FailureOr<scf::ForOp> current = loop;
    while (succeeded(current))
      if (FailureOr<scf::ForOp> next =
              promoteOneAccumulator(rewriter, *current);
          succeeded(next))
        current = next;
      else
        break;
  }
}

FailureOr<scf::ParallelOp> fp8::coarsenInnermostLoop(RewriterBase &rewriter,
                                                     scf::ParallelOp loop,
                                                     int64_t maxWidth) {
  if (maxWidth < 2 || loop.getNumReductions() != 0 ||
      !loop.getInitVals().empty())
    return failure();
  const unsigned inner = loop.getNumLoops() - 1;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[inner]),
                         ub = getConstantIntValue(loop.getUpperBound()[inner]),
                         step = getConstantIntValue(loop.getStep()[inner]);
  if (!lb || !ub || !step || *lb != 0 || *step != 1 || *ub <= 0)
    return failure();
  Block &body = *loop.getBody();
  Value iv = loop.getInductionVars()[inner];
  llvm::SmallPtrSet<Value, 16> deps = dependentsOf(body, iv);
  BodyAccesses accesses;
  llvm::SmallPtrSet<Value, 4> storedBuffers;
  if (failed(analyzeBlock(body, iv, deps, storedBuffers, accesses)) ||
      accesses.contiguous.empty())
    return failure();

  // The widest V that divides the trip count and keeps every contiguous
  // access that can be a vector at all aligned (the others -- a dynamic
  // layout, i1 -- stay scalar).
  int64_t width = 0;
  for (int64_t v = llvm::bit_floor<uint64_t>(maxWidth); v >= 2 && !width;
       v /= 2) {
    if (*ub % v != 0)
      continue;
    bool ok = llvm::all_of(accesses.contiguous, [&](Operation *op) {
      MemRefType t = accessType(op);
      return !canBeVector(t) || vectorAccessAlignment(t, v).has_value();
    });
    if (ok && llvm::any_of(accesses.contiguous, [&](Operation *op) {
          return vectorAccessAlignment(accessType(op), v).has_value();
        }))
      width = v;
  }
  if (!width)
    return failure();
  llvm::SmallPtrSet<Operation *, 8> vectorized;
  for (Operation *op : accesses.contiguous)
    if (vectorAccessAlignment(accessType(op), width))
      vectorized.insert(op);

  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> ubs(loop.getUpperBound());
  ubs[inner] = arith::ConstantIndexOp::create(rewriter, loc, *ub / width);
  auto coarse = scf::ParallelOp::create(
      rewriter, loc, loop.getLowerBound(), ubs, loop.getStep(),
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value base = arith::MulIOp::create(
            b, l, ivs[inner], arith::ConstantIndexOp::create(b, l, width));
        SmallVector<IRMapping> maps(width);
        for (int64_t v = 0; v < width; ++v) {
          for (unsigned i = 0; i < inner; ++i)
            maps[v].map(loop.getInductionVars()[i], ivs[i]);
          maps[v].map(
              iv, v == 0
                      ? base
                      : b.createOrFold<arith::AddIOp>(
                            l, base, arith::ConstantIndexOp::create(b, l, v)));
        }
        CoarseBlockEmitter(vectorized, width, base).emit(b, body, maps);
      });
  rewriter.eraseOp(loop);
  return coarse;
}
