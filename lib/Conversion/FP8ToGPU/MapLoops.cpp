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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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
  Mapper(func::FuncOp func, int64_t blockSize, int64_t vectorWidth,
         bool registerRows)
      : func(func), blockSize(blockSize), vectorWidth(vectorWidth),
        registerRows(registerRows) {}

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
      // that initializes the output, if one does just before, and the
      // element-wise ops after it that need only its rows (RMSNorm's rsqrt
      // and normalization, a per-row quantization).
      linalg::FillOp init = fp8::initializingFill(generic);
      SmallVector<fp8::RowStage> stages =
          fp8::rowReductionStages(generic, init);
      if (succeeded(fp8::lowerRowReductionToWarps(
              rewriter, generic, vectorWidth, init, stages, registerRows))) {
        if (init) {
          folded.insert(init);
          rewriter.eraseOp(init);
        }
        for (fp8::RowStage &stage : stages) {
          folded.insert(stage.op);
          rewriter.eraseOp(stage.op);
          if (stage.fill) {
            folded.insert(stage.fill);
            rewriter.eraseOp(stage.fill);
          }
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

  /// The buffers `loop` reads and writes: the allocation (or model output,
  /// isOwnBuffer) under every view, or one "shared" key for everything
  /// else -- other function arguments (which may alias), globals (two
  /// get_global of one symbol are one buffer), block arguments, selects -- so
  /// that those never count as distinct.
  struct Footprint {
    llvm::SmallPtrSet<const void *, 8> reads, writes;
  };
  static const void *bufferOf(Value memref) {
    static const char shared = 0;
    Value root = fp8::aliasRoot(memref);
    if (fp8::isOwnBuffer(root))
      return root.getAsOpaquePointer();
    return &shared;
  }
  static Footprint footprintOf(scf::ParallelOp loop) {
    Footprint f;
    loop->walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        if (!isa<MemRefType>(v.getType()))
          continue;
        // A load's or store's one buffer operand is what it reads or
        // writes; anything else that takes a buffer reads and writes it.
        const void *buffer = bufferOf(v);
        const bool load = isa<memref::LoadOp, vector::LoadOp>(op);
        const bool store = isa<memref::StoreOp, vector::StoreOp>(op);
        if (!store)
          f.reads.insert(buffer);
        if (!load)
          f.writes.insert(buffer);
      }
    });
    return f;
  }
  /// Whether `next` may run in the same launch as the nests of `run`: it
  /// touches nothing they write and writes nothing they read.
  static bool independent(ArrayRef<Footprint> run, const Footprint &next) {
    for (const Footprint &f : run) {
      for (const void *w : f.writes)
        if (next.reads.contains(w) || next.writes.contains(w))
          return false;
      for (const void *r : f.reads)
        if (next.writes.contains(r))
          return false;
    }
    return true;
  }

  LogicalResult mapBlock(Block &block) {
    // Independent parallel nests in a row, separated only by pure ops and
    // allocations, launch as one kernel (launchMerged).
    SmallVector<scf::ParallelOp> run;
    SmallVector<Footprint> runFootprints;
    auto flushRun = [&]() -> LogicalResult {
      LogicalResult r = success();
      if (run.size() == 1)
        r = launchParallel(run.front());
      else if (!run.empty())
        r = launchMerged(run);
      run.clear();
      runFootprints.clear();
      return r;
    };
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
          if (failed(flushRun()))
            return failure();
          group.push_back(op);
          inGroup.insert(op);
          continue;
        }
        if (failed(flush()))
          return failure();
        Footprint f = footprintOf(loop);
        if (!independent(runFootprints, f) && failed(flushRun()))
          return failure();
        run.push_back(loop);
        runFootprints.push_back(std::move(f));
        continue;
      }
      // Pure ops and allocations may stand between the nests of a run.
      if (!run.empty() && !isMemoryEffectFree(op) &&
          !isa<memref::AllocOp, memref::AllocaOp>(op) && failed(flushRun()))
        return failure();
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
    if (failed(flushRun()))
      return failure();
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

  /// Reductions accumulate in registers; V elements per thread along the
  /// innermost dimension, moved as vectors (VectorAccess.h); nests the
  /// coarsening does not apply to keep one per thread. Returns the nest to
  /// launch (the coarsened one replaces `loop`).
  FailureOr<scf::ParallelOp> prepare(scf::ParallelOp loop) {
    if (loop.getNumReductions() != 0 || !loop.getInitVals().empty())
      return loop.emitOpError("parallel loop with reductions is not mapped "
                              "to the GPU");
    IRRewriter rewriter(loop.getContext());
    fp8::promoteLoopAccumulators(rewriter, loop);
    // A wide row's lanes are its block's threads (already vectorized).
    if (vectorWidth > 1 && !loop->hasAttr(fp8::kBlockThreadsAttr)) {
      FailureOr<scf::ParallelOp> coarse =
          fp8::coarsenInnermostLoop(rewriter, loop, vectorWidth);
      if (succeeded(coarse))
        loop = *coarse;
    }
    return loop;
  }

  /// A nest's trip counts (host arithmetic, folded to constants for static
  /// shapes: the kernel then divides by compile-time constants) and its
  /// threads per block.
  struct NestShape {
    SmallVector<Value> counts;
    Value total;
    int64_t staticTotal = 1;
    bool isStatic = true;
    int64_t threadsPerBlock = 0;
  };

  NestShape shapeOf(OpBuilder &b, scf::ParallelOp loop) {
    Location loc = loop.getLoc();
    NestShape s;
    s.total = indexConst(b, loc, 1);
    for (unsigned i = 0; i < loop.getNumLoops(); ++i) {
      Value lb = loop.getLowerBound()[i], ub = loop.getUpperBound()[i],
            step = loop.getStep()[i];
      Value n = b.createOrFold<arith::CeilDivSIOp>(
          loc, b.createOrFold<arith::SubIOp>(loc, ub, lb), step);
      s.counts.push_back(n);
      s.total = b.createOrFold<arith::MulIOp>(loc, s.total, n);
      auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
           st = getConstantIntValue(step);
      if (s.isStatic && l && u && st && *st > 0)
        s.staticTotal *= std::max<int64_t>(0, (*u - *l + *st - 1) / *st);
      else
        s.isStatic = false;
    }
    s.threadsPerBlock = blockSize;
    if (auto rowThreads =
            loop->getAttrOfType<IntegerAttr>(fp8::kBlockThreadsAttr))
      s.threadsPerBlock = rowThreads.getInt(); // a wide row: a block a row
    else if (s.isStatic && s.staticTotal < blockSize)
      s.threadsPerBlock = std::max<int64_t>(32, (s.staticTotal + 31) / 32 * 32);
    return s;
  }

  LogicalResult launchParallel(scf::ParallelOp loop) {
    FailureOr<scf::ParallelOp> prepared = prepare(loop);
    if (failed(prepared))
      return failure();
    OpBuilder b(*prepared);
    return launchAlone(*prepared, shapeOf(b, *prepared));
  }

  /// A prepared nest of shape `s` (computed before it) as a launch of its
  /// own, where the nest is.
  LogicalResult launchAlone(scf::ParallelOp loop, const NestShape &s) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Value threads = indexConst(b, loc, s.threadsPerBlock);
    Value blocks = b.createOrFold<arith::CeilDivSIOp>(loc, s.total, threads);
    blocks = b.createOrFold<arith::MaxSIOp>(loc, blocks, indexConst(b, loc, 1));
    gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);
    b.setInsertionPointToStart(&launch.getBody().front());
    emitNest(b, loop, s, launch.getBlockIds().x, launch.getThreadIds().x);
    return finishLaunch(launch);
  }

  /// Independent nests in a row -- none reads or writes what an earlier one
  /// writes, nor writes what it reads (mergeable) -- as one launch: block b
  /// runs nest i's block b - (blocks of nests 0..i-1). Fewer launches, and
  /// the small ones (RoPE on 8 KV heads beside 32 query heads) fill the
  /// GPU together. Nests whose shapes are not static or need their own
  /// block size (fewer threads than one block) launch alone. The launch
  /// goes where the last nest was: what stands between them is pure or an
  /// allocation (mapBlock).
  LogicalResult launchMerged(ArrayRef<scf::ParallelOp> run) {
    SmallVector<scf::ParallelOp> loops;
    for (scf::ParallelOp loop : run) {
      FailureOr<scf::ParallelOp> prepared = prepare(loop);
      if (failed(prepared))
        return failure();
      loops.push_back(*prepared);
    }
    // Each nest's counts just before it: they dominate the launch, which
    // goes where the last nest is.
    SmallVector<NestShape> shapes;
    for (scf::ParallelOp loop : loops) {
      OpBuilder lb(loop);
      shapes.push_back(shapeOf(lb, loop));
    }
    OpBuilder b(loops.back());
    SmallVector<scf::ParallelOp> merged;
    SmallVector<NestShape> mergedShapes;
    for (auto [loop, s] : llvm::zip(loops, shapes)) {
      if (s.isStatic && s.threadsPerBlock == blockSize) {
        merged.push_back(loop);
        mergedShapes.push_back(s);
        continue;
      }
      if (failed(launchAlone(loop, s)))
        return failure();
    }
    if (merged.empty())
      return success();
    SmallVector<int64_t> firstBlock;
    int64_t totalBlocks = 0;
    for (const NestShape &s : mergedShapes) {
      firstBlock.push_back(totalBlocks);
      totalBlocks += std::max<int64_t>(1, llvm::divideCeil(s.staticTotal, blockSize));
    }
    Location loc = merged.front().getLoc();
    b.setInsertionPoint(merged.back());
    gpu::LaunchOp launch =
        createLaunch(b, loc, indexConst(b, loc, totalBlocks),
                     indexConst(b, loc, blockSize));
    b.setInsertionPointToStart(&launch.getBody().front());
    Value block = launch.getBlockIds().x;
    for (auto [i, loop] : llvm::enumerate(merged)) {
      const int64_t end = i + 1 < merged.size() ? firstBlock[i + 1] : totalBlocks;
      Value lo = indexConst(b, loc, firstBlock[i]);
      Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         block, indexConst(b, loc, end));
      if (firstBlock[i] != 0)
        mine = arith::AndIOp::create(
            b, loc, mine,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, block,
                                  lo));
      auto owner = scf::IfOp::create(b, loc, mine, /*withElse=*/false);
      OpBuilder nb = OpBuilder::atBlockBegin(&owner.getThenRegion().front());
      Value local = arith::SubIOp::create(nb, loc, block, lo);
      emitNest(nb, loop, mergedShapes[i], local, launch.getThreadIds().x);
    }
    return finishLaunch(launch);
  }

  /// A launch's workgroup buffers (the allocas in the workgroup address
  /// space a wide row's reduction places in its nest: one per block, which
  /// is the row's) become its workgroup attributions; then sinkConstants.
  static LogicalResult finishLaunch(gpu::LaunchOp launch) {
    SmallVector<memref::AllocaOp> shared;
    launch.getBody().walk([&](memref::AllocaOp a) {
      if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(a.getType()))
        shared.push_back(a);
    });
    for (memref::AllocaOp a : shared) {
      if (!a.getDynamicSizes().empty() || !a.getSymbolOperands().empty())
        return a.emitOpError("workgroup buffer of dynamic size in a kernel");
      BlockArgument buffer =
          launch.addWorkgroupAttribution(a.getType(), a.getLoc());
      a.getResult().replaceAllUsesWith(buffer);
      a.erase();
    }
    return sinkConstants(launch);
  }

  /// `loop`'s iterations for block `blockId` and thread `threadId` of a
  /// launch with `s.threadsPerBlock` threads per block, at b's insertion
  /// point: the linear index, the range guard, the induction variables and
  /// the body. Erases `loop`.
  void emitNest(OpBuilder &b, scf::ParallelOp loop, const NestShape &s,
                Value blockId, Value threadId) {
    Location loc = loop.getLoc();
    const unsigned rank = loop.getNumLoops();
    const int64_t threadsPerBlock = s.threadsPerBlock;
    Value threads = indexConst(b, loc, threadsPerBlock);
    // A static nest whose threads all fit in 31 bits is indexed in i32: the
    // index arithmetic (one division and remainder by a constant per
    // dimension) is then 32-bit, which is what costs most in an element-wise
    // kernel; the induction variables are widened once for addressing.
    // (blocks * threadsPerBlock <= INT32_MAX, without forming the product.)
    const bool narrow =
        s.isStatic &&
        static_cast<int64_t>(llvm::divideCeil(
            std::max<int64_t>(s.staticTotal, 1), threadsPerBlock)) <=
            INT32_MAX / threadsPerBlock &&
        llvm::all_of(s.counts, [](Value n) { return getConstantIntValue(n); });
    auto toIdx = [&](Value v) -> Value {
      return narrow ? b.createOrFold<arith::IndexCastUIOp>(
                          loc, b.getI32Type(), v)
                    : v;
    };
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, toIdx(blockId),
                              constOrValue(b, loc, threads, narrow)),
        toIdx(threadId));
    Value bound = constOrValue(b, loc, s.total, narrow);
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
        Value count = constOrValue(b, loc, s.counts[i], narrow);
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
  bool registerRows;
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
    // A row reduction's 32 lanes must be one warp of one block.
    if (blockSize % 32 != 0) {
      func.emitError() << "fp8-gpu-map-loops: block-size "
                       << static_cast<int64_t>(blockSize)
                       << " is not a multiple of 32 (a warp)";
      return signalPassFailure();
    }
    if (vectorWidth < 1 || vectorWidth > 16 ||
        (vectorWidth & (vectorWidth - 1)) != 0) {
      func.emitError() << "fp8-gpu-map-loops: vector-width "
                       << static_cast<int64_t>(vectorWidth)
                       << " is not a power of two in 1..16";
      return signalPassFailure();
    }
    if (failed(Mapper(func, blockSize, vectorWidth, registerRows).run()))
      signalPassFailure();
  }
};
} // namespace
