//===- TileLoaders.cpp - Global -> shared tile movers ---------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "TileLoaders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

TileLoader::~TileLoader() = default;

namespace {

/// One operand's side of a copy: where its rows come from and go to.
struct CopySide {
  /// Global source: a flat memref (scalar copies) or !llvm.ptr<1> (vector).
  Value src;
  /// Element offset of the batch in `src`.
  Value srcBase;
  /// First global row of the tile and rows that exist (M or N).
  Value rowBase;
  int64_t validRows;
  const TileLayout *tile;
  /// M at run time (index), replacing validRows; null when static.
  Value runtimeRows = {};

  Value rowValid(KernelBuilder &kb, Value row) const {
    return runtimeRows ? kb.ult(row, runtimeRows) : kb.ultC(row, validRows);
  }
};

/// Every thread of the CTA copies, zero-filling rows >= M (N) and columns
/// >= K; the single-warpgroup kernel's loader. Vector mode (K a multiple of
/// 16): 16-byte chunks; scalar mode: one byte per thread and row.
class ThreadCopyLoader : public TileLoader {
public:
  ThreadCopyLoader(const GemmPlan &plan, const SmemLayout &layout, bool vector)
      : TileLoader(plan, layout), vector(vector) {}

  void prepare(KernelBuilder &kb, const KernelValues &kv) override {
    if (!vector)
      return;
    lhsPtr = llvmPointer(kb, kv.lhs, 1, /*fromGeneric=*/true);
    rhsPtr = llvmPointer(kb, kv.rhs, 1, /*fromGeneric=*/true);
    smemPtr = llvmPointer(kb, kv.smem, 3, /*fromGeneric=*/false);
  }

  void load(KernelBuilder &kb, const KernelValues &kv, Value stage,
            Value k0) override {
    if (vector) {
      CopySide a{lhsPtr, kv.lhsBase, kv.m0, kb.p.m, &layout.a, kv.rowsM};
      CopySide b{rhsPtr, kv.rhsBase, kv.n0, kb.p.n, &layout.b};
      copyVectorized(kb, a, stageOffset(kb, stage, 0), kv.tid, k0);
      copyVectorized(kb, b, stageOffset(kb, stage, layout.bOffset), kv.tid, k0);
      return;
    }
    assert(!stage && "element-wise copies serve a single stage");
    CopySide a{kv.lhs, kv.lhsBase, kv.m0, kb.p.m, &layout.a, kv.rowsM};
    CopySide b{kv.rhs, kv.rhsBase, kv.n0, kb.p.n, &layout.b};
    copyScalar(kb, a, kv.tileA, kv.tid, k0);
    copyScalar(kb, b, kv.tileB, kv.tid, k0);
  }

  void acquire(KernelBuilder &kb, const KernelValues &, Value, Value) override {
    // Generic-proxy stores -> async-proxy (wgmma) reads.
    NVVM::FenceProxyOp::create(
        kb.b, kb.loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(kb.b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(kb.b, kb.loc);
  }

  void release(KernelBuilder &kb, const KernelValues &, Value) override {
    // The stage may be overwritten once every warp got here.
    gpu::BarrierOp::create(kb.b, kb.loc);
  }

private:
  /// Byte offset of a tile at `tileOffset` in stage `stage`: a constant
  /// (folded into the copy's address) for the single stage.
  struct StageOffset {
    Value dynamic;
    int64_t constant;
  };
  StageOffset stageOffset(KernelBuilder &kb, Value stage, int64_t tileOffset) {
    if (!stage)
      return {Value(), tileOffset};
    return {kb.addC(kb.mulC(stage, layout.stageStride), tileOffset), 0};
  }

  void copyScalar(KernelBuilder &kb, const CopySide &side, Value tile,
                  Value tid, Value k0);
  void copyVectorized(KernelBuilder &kb, const CopySide &side, StageOffset dst,
                      Value tid, Value k0);
  void storeChunk(KernelBuilder &kb, const CopySide &side, StageOffset dst,
                  Value r, Value kInTile, Value gk, Value kOk);

  bool vector;
  Value lhsPtr, rhsPtr, smemPtr;
};

/// Copies rows [rowBase, rowBase + rows) x K [k0, k0 + BK) of `side.src`
/// (rank 1, row stride K) into the typed tile view `tile`, one byte per
/// thread (thread t: column k0 + t) and row.
void ThreadCopyLoader::copyScalar(KernelBuilder &kb, const CopySide &side,
                                  Value tile, Value tid, Value k0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type elt = cast<MemRefType>(tile.getType()).getElementType();
  Value gk = kb.add(k0, tid);
  Value kOk = kb.ultC(gk, kb.p.k);
  Value zero = arith::ConstantFloatOp::create(
      b, loc, cast<FloatType>(elt),
      APFloat::getZero(cast<FloatType>(elt).getFloatSemantics()));
  auto loop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(side.tile->rows),
                                 kb.cIdx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = loop.getInductionVar();
  Value gr = kb.add(side.rowBase, r);
  Value ok = arith::AndIOp::create(b, loc, kOk, side.rowValid(kb, gr));
  auto ifOp = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location l) {
        Value lin = kb.add(side.srcBase, kb.add(kb.mulC(gr, kb.p.k), gk));
        Value v = memref::LoadOp::create(tb, l, side.src, ValueRange{lin});
        scf::YieldOp::create(tb, l, v);
      },
      [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, zero); });
  memref::StoreOp::create(b, loc, ifOp.getResult(0), tile,
                          ValueRange{side.tile->offset(kb, r, tid)});
}

/// The 16-byte copy used when K is a multiple of 16 (every 16-byte chunk of
/// a row is then entirely in or out of range, and 16-byte aligned): thread t
/// moves chunk t / 16 of row t % 16 of each group of 16 rows, so the eight
/// threads of one shared-memory phase write the eight rows of one core
/// matrix (128 contiguous bytes, no bank conflicts). Plain llvm.load/store
/// with align 16 (ld.global.v4 / st.shared.v4): the pass does not depend on
/// the vector dialect.
void ThreadCopyLoader::copyVectorized(KernelBuilder &kb, const CopySide &side,
                                      StageOffset dst, Value tid, Value k0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t rows = side.tile->rows;
  Value r16 = kb.remC(tid, 16), chunk = kb.divC(tid, 16);
  Value kInTile = kb.mulC(chunk, 16);
  Value gk = kb.add(k0, kInTile);
  Value kOk = kb.ultC(gk, kb.p.k);
  auto loop = scf::ForOp::create(
      b, loc, kb.cIdx(0), kb.cIdx(llvm::divideCeil(rows, 16)), kb.cIdx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = kb.add(kb.mulC(loop.getInductionVar(), 16), r16);
  if (rows % 16 == 0) {
    storeChunk(kb, side, dst, r, kInTile, gk, kOk);
    return;
  }
  // A tile of N rows that is not a multiple of 16 (BN = 72, ...).
  auto inTile = scf::IfOp::create(b, loc, kb.ultC(r, rows),
                                  /*withElseRegion=*/false);
  b.setInsertionPointToStart(&inTile.getThenRegion().front());
  storeChunk(kb, side, dst, r, kInTile, gk, kOk);
}

/// One 16-byte chunk: row `r` of the tile, bytes [kInTile, kInTile + 16),
/// global column `gk`; zeros when out of range.
void ThreadCopyLoader::storeChunk(KernelBuilder &kb, const CopySide &side,
                                  StageOffset dst, Value r, Value kInTile,
                                  Value gk, Value kOk) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto vecType = VectorType::get({4}, kb.i32);
  Value gr = kb.add(side.rowBase, r);
  Value ok = arith::AndIOp::create(b, loc, kOk, side.rowValid(kb, gr));
  auto ifOp = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location l) {
        Value lin = kb.add(side.srcBase, kb.add(kb.mulC(gr, kb.p.k), gk));
        lin = arith::IndexCastOp::create(tb, l, kb.i64, lin);
        Value ptr =
            LLVM::GEPOp::create(tb, l, side.src.getType(), tb.getI8Type(),
                                side.src, ArrayRef<LLVM::GEPArg>{lin});
        Value v = LLVM::LoadOp::create(tb, l, vecType, ptr, 16);
        scf::YieldOp::create(tb, l, v);
      },
      [&](OpBuilder &eb, Location l) {
        scf::YieldOp::create(eb, l,
                             ValueRange{LLVM::ZeroOp::create(eb, l, vecType)});
      });
  Value off = kb.addC(side.tile->offset(kb, r, kInTile), dst.constant);
  if (dst.dynamic)
    off = kb.add(off, dst.dynamic);
  off = arith::IndexCastOp::create(b, loc, kb.i64, off);
  Value ptr = LLVM::GEPOp::create(b, loc, smemPtr.getType(), b.getI8Type(),
                                  smemPtr, ArrayRef<LLVM::GEPArg>{off});
  LLVM::StoreOp::create(b, loc, ifOp.getResult(0), ptr, 16);
}

} // namespace

Value TmaLoader::encodeTensorMap(KernelBuilder &kb, Value data, int64_t rows,
                                 int64_t boxRows, Value runtimeRows) {
  return encodeByteTensorMap(kb, data, {rows, kb.p.k},
                             {boxRows, plan.config.bk}, runtimeRows);
}

void TmaLoader::prepareHost(KernelBuilder &kb, KernelValues &kv) {
  const GemmProblem &p = kb.p;
  // Rows of every batch, one after the other: a box that crosses from one
  // batch into the next reads rows whose products are never stored (rows
  // >= M of A, columns >= N of B); K beyond the end is zero-filled.
  kv.tensorMapA =
      encodeTensorMap(kb, kv.lhs, p.batch * p.m, layout.a.loadRows(), kv.rowsM);
  kv.tensorMapB =
      encodeTensorMap(kb, kv.rhs, (p.rhsBatched ? p.batch : 1) * p.n,
                      layout.b.rows / plan.config.clusterM);
}

Value TmaLoader::smemAt(KernelBuilder &kb, Value offset) {
  return LLVM::GEPOp::create(kb.b, kb.loc, base.getType(), kb.b.getI8Type(),
                             base, ArrayRef<LLVM::GEPArg>{kb.toI64(offset)});
}

void TmaLoader::prepare(KernelBuilder &kb, const KernelValues &kv) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  base = tilesPointer(kb, kv);
  // Thread 0 initializes every stage's mbarriers and makes the
  // initialization visible to the async proxy; the CTA barrier publishes it
  // to the other threads.
  const bool withEmpty = plan.config.kind == KernelKind::WarpSpecialized;
  const int64_t consumerWarps = plan.config.consumerWarpgroups *
                                (kWarpgroupThreads / 32) *
                                plan.config.clusterM;
  if (plan.config.clusterM > 1)
    rank = kb.remC(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                   plan.config.clusterM);
  auto init = scf::IfOp::create(b, loc, kb.eqC(kv.tid, 0),
                                /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&init.getThenRegion().front());
    for (int64_t s = 0; s < layout.stages; ++s) {
      // The issuing thread's arrive.expect_tx, and with staged scales the
      // copying warp's 32 lanes' (cp.async.mbarrier.arrive.noinc).
      mbarrierInit(kb, fullBarrier(kb, kb.cIdx(s)),
                   1 + (plan.config.stagedScales.enabled() ? kScaleCopyLanes
                                                           : 0));
      if (withEmpty)
        mbarrierInit(kb, emptyBarrier(kb, kb.cIdx(s)), consumerWarps);
    }
    // A staged epilogue input's barriers: the issuing thread's
    // arrive.expect_tx (TmaStore.h).
    if (plan.config.stagedInput)
      for (int64_t w = 0; w < plan.config.consumerWarpgroups; ++w)
        mbarrierInit(
            kb, smemAt(kb, kb.cIdx(layout.inputBarrierOffset() + 8 * w)), 1);
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  // Peers arrive on (and multicast into) this CTA's barriers: the cluster
  // barrier publishes the initialization cluster-wide.
  if (rank)
    clusterSync(kb);
  else
    gpu::BarrierOp::create(b, loc);
}

void TmaLoader::clusterSync(KernelBuilder &kb) {
  NVVM::ClusterArriveOp::create(kb.b, kb.loc, kb.b.getUnitAttr());
  NVVM::ClusterWaitOp::create(kb.b, kb.loc, kb.b.getUnitAttr());
}

void TmaLoader::finish(KernelBuilder &kb) {
  if (rank)
    clusterSync(kb);
}

void TmaLoader::copyTile(KernelBuilder &kb, Value map, Value row, Value k0,
                         Value dstOffset, Value bar, Value multicastMask) {
  // Coordinates innermost first: (k, row).
  tmaLoad(kb, map, ValueRange{k0, row}, smemAt(kb, dstOffset), bar,
          multicastMask);
}

void TmaLoader::load(KernelBuilder &kb, const KernelValues &kv, Value stage,
                     Value k0) {
  auto only = scf::IfOp::create(kb.b, kb.loc, kb.eqC(kv.tid, 0),
                                /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(kb.b);
  kb.b.setInsertionPointToStart(&only.getThenRegion().front());
  issue(kb, kv, stage, k0);
}

void TmaLoader::release(KernelBuilder &kb, const KernelValues &, Value) {
  gpu::BarrierOp::create(kb.b, kb.loc);
}

Value TmaLoader::rowA(KernelBuilder &kb, const KernelValues &kv) {
  const GemmProblem &p = kb.p;
  return p.batch > 1 ? kb.add(kb.mulC(kv.bz, p.m), kv.m0) : kv.m0;
}

Value TmaLoader::rowB(KernelBuilder &kb, const KernelValues &kv) {
  const GemmProblem &p = kb.p;
  return p.rhsBatched ? kb.add(kb.mulC(kv.bz, p.n), kv.n0) : kv.n0;
}

void TmaLoader::copyA(KernelBuilder &kb, const KernelValues &kv, Value stage,
                      Value k0, Value bar) {
  copyTile(kb, kv.tensorMapA, rowA(kb, kv), k0,
           kb.mulC(stage, layout.stageStride), bar);
}

void TmaLoader::copyB(KernelBuilder &kb, const KernelValues &kv, Value stage,
                      Value k0, Value bar) {
  copyTile(kb, kv.tensorMapB, rowB(kb, kv), k0,
           kb.addC(kb.mulC(stage, layout.stageStride), layout.bOffset), bar);
}

void TmaLoader::prefetchB(KernelBuilder &kb, const KernelValues &kv,
                          Value stage, Value k0) {
  assert(!rank && "prefetchB serves kernels without clusters");
  Value bar = fullBarrier(kb, stage);
  NVVM::MBarrierExpectTxOp::create(kb.b, kb.loc, bar,
                                   kb.cI32(layout.b.loadBytes()));
  copyB(kb, kv, stage, k0, bar);
}

void TmaLoader::issueA(KernelBuilder &kb, const KernelValues &kv, Value stage,
                       Value k0) {
  Value bar = fullBarrier(kb, stage);
  mbarrierArriveExpectTx(kb, bar, layout.a.loadBytes());
  copyA(kb, kv, stage, k0, bar);
}

void TmaLoader::issue(KernelBuilder &kb, const KernelValues &kv, Value stage,
                      Value k0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value bar = fullBarrier(kb, stage);
  mbarrierArriveExpectTx(kb, bar, layout.a.loadBytes() + layout.b.loadBytes());
  copyA(kb, kv, stage, k0, bar);
  if (!rank) {
    copyB(kb, kv, stage, k0, bar);
    return;
  }
  // This CTA's slice of B, multicast to the whole cluster (same offset and
  // barrier offset in every CTA).
  const int64_t sliceRows = layout.b.rows / plan.config.clusterM;
  Value slice = kb.mulC(rank, sliceRows);
  Value mask = arith::ConstantIntOp::create(
      b, loc, b.getI16Type(), (1 << plan.config.clusterM) - 1);
  copyTile(kb, kv.tensorMapB, kb.add(rowB(kb, kv), slice), k0,
           kb.add(kb.addC(kb.mulC(stage, layout.stageStride), layout.bOffset),
                  kb.mulC(slice, layout.b.kBytes)),
           bar, mask);
}

void TmaLoader::waitFull(KernelBuilder &kb, Value stage, Value parity) {
  mbarrierWait(kb, fullBarrier(kb, stage), parity);
}

void TmaLoader::waitEmpty(KernelBuilder &kb, Value stage, Value parity) {
  mbarrierWait(kb, emptyBarrier(kb, stage), parity);
}

void TmaLoader::arriveEmpty(KernelBuilder &kb, Value stage, Value lane) {
  Value bar = emptyBarrier(kb, stage);
  if (!rank) {
    // Lane 0 of the warp; release semantics: the warp's reads of the stage
    // (its completed wgmmas) happen before the producer's refill.
    auto leader = scf::IfOp::create(kb.b, kb.loc, kb.eqC(lane, 0),
                                    /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(kb.b);
    kb.b.setInsertionPointToStart(&leader.getThenRegion().front());
    mbarrierArrive(kb, bar);
    return;
  }
  // Every CTA's producer multicasts into this stage: lane q releases it to
  // CTA q (the barrier at the same offset there, through mapa), the C
  // arrivals in parallel, each with the default release.cta semantics of a
  // remote arrive (what CUTLASS's cluster barriers issue; a cluster-scope
  // release per arrival is a heavier fence).
  auto member = scf::IfOp::create(kb.b, kb.loc,
                                  kb.ultC(lane, plan.config.clusterM),
                                  /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(kb.b);
  kb.b.setInsertionPointToStart(&member.getThenRegion().front());
  auto clusterPtr = LLVM::LLVMPointerType::get(kb.b.getContext(), 7);
  Value remote = NVVM::MapaOp::create(kb.b, kb.loc, clusterPtr, bar,
                                      kb.toI32(lane));
  NVVM::MBarrierArriveOp::create(kb.b, kb.loc, /*res=*/Type(), remote,
                                 /*count=*/Value(), NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
}

std::unique_ptr<TileLoader> gemm::createTileLoader(const GemmPlan &plan,
                                                   const SmemLayout &layout) {
  switch (plan.config.loader) {
  case LoaderKind::ThreadScalar:
    return std::make_unique<ThreadCopyLoader>(plan, layout, /*vector=*/false);
  case LoaderKind::ThreadVector:
    return std::make_unique<ThreadCopyLoader>(plan, layout, /*vector=*/true);
  case LoaderKind::TMA:
    return std::make_unique<TmaLoader>(plan, layout);
  }
  return nullptr;
}
