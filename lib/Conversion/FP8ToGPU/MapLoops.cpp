//===- MapLoops.cpp - Host loop nests to gpu.launch -----------------------===//
//
// Part of fp8-opt. Upstream's route (scf-parallel-loop-tiling,
// gpu-map-parallel-loops, convert-parallel-loops-to-gpu) maps each dimension
// of an scf.parallel to its own grid/block dimension: untiled loops get
// one-thread blocks and tiled ones waste threads whenever the innermost
// extent is small (a [1, 8, 64] attention slice). Transformer graphs are
// many small element-wise and row-wise nests of every rank, so this pass
// linearizes each nest instead: one index over all its parallel
// dimensions, split into blocks of `block-size` threads. Loops themselves
// come from upstream (linalg interchange + linalgOpToParallelLoops), and the
// kernels are outlined and lowered by upstream passes afterwards.
//
// Invariant established: no op outside a gpu.launch reads or writes memory,
// so every buffer of the function may live in device memory.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "RowReductions.h"
#include "VectorAccess.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

#include <cctype>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUMAPLOOPS
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Ops that touch memory contents (not just allocate or free it).
bool touchesMemory(Operation *op) {
  WalkResult r = op->walk([](Operation *inner) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
            memref::GenericAtomicRMWOp, memref::CopyOp, linalg::LinalgOp>(
            inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}


Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Parallel dimensions first, reduction dimensions last, so that
/// linalgOpToParallelLoops makes one outer scf.parallel over all of them.
LogicalResult parallelDimsFirst(RewriterBase &rewriter, linalg::GenericOp op) {
  SmallVector<unsigned> perm;
  auto iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i < iters.size(); ++i)
    if (iters[i] == utils::IteratorType::parallel)
      perm.push_back(i);
  for (unsigned i = 0; i < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::parallel)
      perm.push_back(i);
  bool identity = true;
  for (unsigned i = 0; i < perm.size(); ++i)
    identity &= perm[i] == i;
  if (identity)
    return success();
  rewriter.setInsertionPoint(op);
  return interchangeGenericOp(rewriter, op, perm);
}

class Mapper {
public:
  Mapper(func::FuncOp func, int64_t blockSize, int64_t vectorWidth)
      : func(func), blockSize(blockSize), vectorWidth(vectorWidth) {}

  LogicalResult run() {
    if (failed(toParallelLoops()))
      return failure();
    for (Block &block : func.getBody())
      if (failed(mapBlock(block)))
        return failure();
    return success();
  }

private:
  /// memref.copy -> linalg.copy; every linalg op -> loops (parallel first).
  LogicalResult toParallelLoops() {
    IRRewriter rewriter(func.getContext());
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies) {
      rewriter.setInsertionPoint(c);
      linalg::CopyOp::create(rewriter, c.getLoc(), c.getSource(),
                             c.getTarget());
      rewriter.eraseOp(c);
    }
    // Fills last: a row reduction whose output a fill has just initialized
    // takes the fill's value itself (one kernel instead of two).
    SmallVector<linalg::LinalgOp> ops, fills;
    func.walk([&](linalg::LinalgOp op) {
      (isa<linalg::FillOp>(op.getOperation()) ? fills : ops).push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 8> folded;
    for (linalg::LinalgOp fill : fills)
      ops.push_back(fill);
    for (linalg::LinalgOp op : ops) {
      if (folded.contains(op.getOperation()))
        continue;
      linalg::LinalgOp current = op;
      if (!isa<linalg::GenericOp>(op.getOperation())) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          return op->emitOpError("cannot be generalized for the GPU");
        current = *g;
      }
      auto generic = cast<linalg::GenericOp>(current.getOperation());
      if (!generic.hasPureBufferSemantics())
        return generic->emitOpError("expected buffers after bufferization");
      if (failed(parallelDimsFirst(rewriter, generic)))
        return generic->emitOpError("cannot reorder loops for the GPU");
      // Row reductions: a warp per row (RowReductions.h), folding the fill
      // that initializes the output, if one does just before.
      linalg::FillOp init = fp8::initializingFill(generic);
      linalg::GenericOp epilogue = fp8::rowReductionEpilogue(generic);
      if (succeeded(fp8::lowerRowReductionToWarps(rewriter, generic,
                                                  vectorWidth, init,
                                                  epilogue))) {
        for (Operation *done : {init.getOperation(), epilogue.getOperation()})
          if (done) {
            folded.insert(done);
            rewriter.eraseOp(done);
          }
        continue;
      }
      // interchangeGenericOp rewrites in place.
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, generic)))
        return generic->emitOpError("cannot be lowered to loops");
      rewriter.eraseOp(generic);
    }
    return success();
  }

  LogicalResult mapBlock(Block &block) {
    SmallVector<Operation *> group;
    llvm::SmallPtrSet<Operation *, 16> inGroup;
    auto usesGroup = [&](Operation *op) {
      bool uses = false;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp())
            if (inGroup.count(def))
              uses = true;
      });
      return uses;
    };
    auto flush = [&]() -> LogicalResult {
      if (group.empty())
        return success();
      LogicalResult r = launchSequential(group);
      group.clear();
      inGroup.clear();
      return r;
    };
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (op->hasTrait<OpTrait::IsTerminator>())
        break; // flushed below, before the terminator
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        if (usesGroup(op)) {
          group.push_back(op);
          inGroup.insert(op);
          continue;
        }
        if (failed(flush()) || failed(launchParallel(loop)))
          return failure();
        continue;
      }
      bool device = touchesMemory(op);
      if (device || (!group.empty() && usesGroup(op) && isMemoryEffectFree(op))) {
        group.push_back(op);
        inGroup.insert(op);
        continue;
      }
      if (!group.empty() && usesGroup(op))
        return op->emitOpError()
               << "uses a value computed from memory by a GPU kernel on the "
                  "host; the GPU lowering keeps all memory on the device";
      if (isMemoryEffectFree(op))
        continue; // host arithmetic on scalars; captured by kernels
      if (failed(flush()))
        return failure();
    }
    return flush();
  }

  /// Values defined in `ops` and used after them, outside of `ops`.
  LogicalResult checkNoEscapes(ArrayRef<Operation *> ops) {
    llvm::SmallPtrSet<Operation *, 16> set(ops.begin(), ops.end());
    for (Operation *op : ops)
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers()) {
          Operation *top = user;
          while (top && !set.count(top) && top->getBlock() != op->getBlock())
            top = top->getParentOp();
          if (!top || !set.count(top))
            return op->emitOpError()
                   << "result is used on the host after the GPU kernel that "
                      "computes it";
        }
    return success();
  }

  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value grid,
                             Value threads) {
    Value one = indexConst(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, threads, one,
                                        one);
    // Kernels named after the ONNX node they compute (profiles, PTX):
    // k_<node>_<n> in the model function, <function>_<node>_<n> elsewhere.
    std::string name =
        func.getName().starts_with("__fp8_model_main") || func.getName() == "main"
            ? std::string("k_")
            : func.getName().str() + "_";
    for (char c : fp8::getNodeName(loc).substr(0, 48))
      name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    name += "_" + std::to_string(counter++);
    launch.setFunctionAttr(FlatSymbolRefAttr::get(b.getContext(), name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }

  /// A nest with no parallel loop (a full reduction, scalar code): one thread.
  LogicalResult launchSequential(ArrayRef<Operation *> ops) {
    if (failed(checkNoEscapes(ops)))
      return failure();
    Operation *last = ops.back();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    Location loc = ops.front()->getLoc();
    Value one = indexConst(b, loc, 1);
    gpu::LaunchOp launch = createLaunch(b, loc, one, one);
    Operation *terminator = launch.getBody().front().getTerminator();
    for (Operation *op : ops)
      op->moveBefore(terminator);
    return sinkConstants(launch);
  }

  LogicalResult launchParallel(scf::ParallelOp loop) {
    if (loop.getNumReductions() != 0 || !loop.getInitVals().empty())
      return loop.emitOpError("parallel loop with reductions is not mapped "
                              "to the GPU");
    // Reductions accumulate in registers; V elements per thread along the
    // innermost dimension, moved as vectors (VectorAccess.h); nests the
    // coarsening does not apply to keep one per thread.
    IRRewriter rewriter(loop.getContext());
    fp8::promoteLoopAccumulators(rewriter, loop);
    if (vectorWidth > 1) {
      FailureOr<scf::ParallelOp> coarse =
          fp8::coarsenInnermostLoop(rewriter, loop, vectorWidth);
      if (succeeded(coarse))
        loop = *coarse;
    }
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    unsigned rank = loop.getNumLoops();
    // Trip counts (host arithmetic, folded to constants for static shapes:
    // the kernel then divides by compile-time constants).
    SmallVector<Value> counts;
    Value total = indexConst(b, loc, 1);
    int64_t staticTotal = 1;
    bool isStatic = true;
    for (unsigned i = 0; i < rank; ++i) {
      Value lb = loop.getLowerBound()[i], ub = loop.getUpperBound()[i],
            step = loop.getStep()[i];
      Value n = b.createOrFold<arith::CeilDivSIOp>(
          loc, b.createOrFold<arith::SubIOp>(loc, ub, lb), step);
      counts.push_back(n);
      total = b.createOrFold<arith::MulIOp>(loc, total, n);
      auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
           s = getConstantIntValue(step);
      if (isStatic && l && u && s && *s > 0)
        staticTotal *= std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
      else
        isStatic = false;
    }
    int64_t threadsPerBlock = blockSize;
    if (isStatic && staticTotal < blockSize)
      threadsPerBlock = std::max<int64_t>(32, (staticTotal + 31) / 32 * 32);
    Value threads = indexConst(b, loc, threadsPerBlock);
    Value blocks = b.createOrFold<arith::CeilDivSIOp>(loc, total, threads);
    blocks = b.createOrFold<arith::MaxSIOp>(loc, blocks, indexConst(b, loc, 1));
    gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);

    b.setInsertionPointToStart(&launch.getBody().front());
    // A static nest whose threads all fit in 31 bits is indexed in i32: the
    // index arithmetic (one division and remainder by a constant per
    // dimension) is then 32-bit, which is what costs most in an element-wise
    // kernel; the induction variables are widened once for addressing.
    // (blocks * threadsPerBlock <= INT32_MAX, without forming the product.)
    const bool narrow =
        isStatic &&
        static_cast<int64_t>(llvm::divideCeil(
            std::max<int64_t>(staticTotal, 1), threadsPerBlock)) <=
            INT32_MAX / threadsPerBlock &&
        llvm::all_of(counts, [](Value n) { return getConstantIntValue(n); });
    auto toIdx = [&](Value v) -> Value {
      return narrow ? b.createOrFold<arith::IndexCastUIOp>(
                          loc, b.getI32Type(), v)
                    : v;
    };
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, toIdx(launch.getBlockIds().x),
                              constOrValue(b, loc, threads, narrow)),
        toIdx(launch.getThreadIds().x));
    Value bound = constOrValue(b, loc, total, narrow);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, linear, bound);
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping map;
    Value rest = linear;
    SmallVector<Value> ivs(rank);
    for (int i = rank - 1; i >= 0; --i) {
      Value idx = rest;
      if (i > 0) {
        Value count = constOrValue(b, loc, counts[i], narrow);
        idx = b.createOrFold<arith::RemUIOp>(loc, rest, count);
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, count);
      }
      if (narrow)
        idx = b.createOrFold<arith::IndexCastUIOp>(loc, b.getIndexType(), idx);
      ivs[i] = b.createOrFold<arith::AddIOp>(
          loc, loop.getLowerBound()[i],
          b.createOrFold<arith::MulIOp>(loc, idx, loop.getStep()[i]));
    }
    for (unsigned i = 0; i < rank; ++i)
      map.map(loop.getInductionVars()[i], ivs[i]);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, map);
    loop.erase();
    return sinkConstants(launch);
  }

  /// `v` (an index) as an i32 constant when `narrow` (then `v` is a
  /// constant: narrow nests have constant trip counts), else `v` itself.
  static Value constOrValue(OpBuilder &b, Location loc, Value v, bool narrow) {
    std::optional<int64_t> c = getConstantIntValue(v);
    if (!narrow || !c)
      return v;
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), *c);
  }

  /// Constants the kernel body uses are cloned into it (upstream's
  /// sinkOperationsIntoLaunchOp), so that outlining does not pass them as
  /// kernel parameters, which would hide the divisors and bounds from the
  /// device compiler.
  static LogicalResult sinkConstants(gpu::LaunchOp launch) {
    return sinkOperationsIntoLaunchOp(
        launch, [](Operation *op) { return matchPattern(op, m_Constant()); });
  }

  func::FuncOp func;
  int64_t blockSize;
  int64_t vectorWidth;
  unsigned counter = 0;
};

struct FP8GPUMapLoopsPass
    : fp8::impl::FP8GPUMapLoopsBase<FP8GPUMapLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (blockSize <= 0 || blockSize > 1024) {
      func.emitError() << "fp8-gpu-map-loops: block-size "
                       << static_cast<int64_t>(blockSize)
                       << " is outside 1..1024";
      return signalPassFailure();
    }
    if (vectorWidth < 1 || vectorWidth > 16 ||
        (vectorWidth & (vectorWidth - 1)) != 0) {
      func.emitError() << "fp8-gpu-map-loops: vector-width "
                       << static_cast<int64_t>(vectorWidth)
                       << " is not a power of two in 1..16";
      return signalPassFailure();
    }
    if (failed(Mapper(func, blockSize, vectorWidth).run()))
      signalPassFailure();
  }
};
} // namespace
