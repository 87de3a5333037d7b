//===- TileLoaders.h - Global -> shared tile movers -------------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// A TileLoader fills the A and B tiles of one pipeline stage with the K
// slice [k0, k0 + BK) of the CTA's rows (zeros outside M, N and K) and
// tells the mainloop when a stage is ready for wgmma and when it may be
// refilled. The mainloop calls, per K tile:
//     load(stage, k0)         issue the copies
//     acquire(stage, phase)   wait until the tiles are visible to wgmma
//     ... wgmma on the stage ...
//     release(stage)          every wgmma reading the stage has completed
// Thread copies: load = the copies, acquire = fence.proxy.async + CTA
// barrier, release = CTA barrier. TMA: load = thread 0 arms the stage's
// mbarrier with the tiles' byte count (arrive.expect_tx) and issues one
// cp.async.bulk.tensor per tile, completing on it; acquire = every thread
// waits on the mbarrier's phase parity; release = CTA barrier (thread 0
// refills the stage only after every warp's wgmmas on it completed).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TILELOADERS_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TILELOADERS_H

#include "SmemLayout.h"

#include <memory>

namespace mlir::fp8::gemm {

class TileLoader {
public:
  TileLoader(const GemmPlan &plan, const SmemLayout &layout)
      : plan(plan), layout(layout) {}
  virtual ~TileLoader();

  /// Host code before the launch (TMA: the tensor maps, into `kv`).
  virtual void prepareHost(KernelBuilder &kb, KernelValues &kv) {}
  /// Kernel code before the K loop (pointers, barrier setup).
  virtual void prepare(KernelBuilder &kb, const KernelValues &kv) = 0;
  /// Issues the copies of the K tile starting at `k0` into `stage` (an
  /// index; null when the layout has a single stage).
  virtual void load(KernelBuilder &kb, const KernelValues &kv, Value stage,
                    Value k0) = 0;
  /// Waits until the tiles of `stage` are visible to wgmma; `phase` (i32)
  /// is the parity of the stage's use (K tile / stages) % 2.
  virtual void acquire(KernelBuilder &kb, const KernelValues &kv, Value stage,
                       Value phase) = 0;
  /// Called once every wgmma reading `stage` has completed.
  virtual void release(KernelBuilder &kb, const KernelValues &kv,
                       Value stage) = 0;

protected:
  const GemmPlan &plan;
  const SmemLayout &layout;
};

/// TMA loads (LoaderKind::TMA): the host encodes a tensor map per operand
/// (fp8rt_cuda_tensor_map_encode_tiled: UINT8 elements, 128B swizzle, boxes
/// of BM (BN) rows x 128 bytes, zero fill out of bounds, a device copy of
/// the map); the copies of a stage complete on the stage's full mbarrier.
/// In clusters of C CTAs along M (GemmConfig::clusterM), CTA r loads rows
/// [r BN / C, (r + 1) BN / C) of the B tile into that slice of every CTA's
/// stage (multicast), so each B byte leaves L2 once per cluster; every
/// CTA's full barrier still expects the whole A + B bytes, and its empty
/// barrier the consumer warps of the whole cluster.
/// The single-warpgroup kernel drives it through the TileLoader interface;
/// the warp-specialized kernel through issue / waitFull / arriveEmpty /
/// waitEmpty: the producer's thread waits until a stage is empty and issues
/// its copies, the consumers wait until it is full and, once their wgmmas on
/// it completed, release it on its empty mbarrier (no CTA barrier).
class TmaLoader : public TileLoader {
public:
  using TileLoader::TileLoader;

  void prepareHost(KernelBuilder &kb, KernelValues &kv) override;
  /// Thread 0 initializes the full mbarriers (one arrival: the issuing
  /// thread's arrive.expect_tx; 32 more with staged scales: the copying
  /// warp's lanes) and the empty ones (one arrival per consumer warp), then
  /// a CTA barrier publishes them.
  void prepare(KernelBuilder &kb, const KernelValues &kv) override;
  /// Thread 0 issues the stage's copies.
  void load(KernelBuilder &kb, const KernelValues &kv, Value stage,
            Value k0) override;
  void acquire(KernelBuilder &kb, const KernelValues &kv, Value stage,
               Value phase) override {
    waitFull(kb, stage, phase);
  }
  /// A CTA barrier: thread 0 refills the stage only after every warp's
  /// wgmmas on it completed.
  void release(KernelBuilder &kb, const KernelValues &, Value) override;

  /// Arms `stage`'s full mbarrier with the tiles' bytes and issues the
  /// copies of the K tile at `k0` (the caller is a single thread).
  void issue(KernelBuilder &kb, const KernelValues &kv, Value stage, Value k0);
  /// GemmConfig::prefetchB, before the grid dependency wait: raises
  /// `stage`'s full mbarrier's transaction count by B's bytes (no arrival)
  /// and issues the copy of B's K tile at `k0`.
  void prefetchB(KernelBuilder &kb, const KernelValues &kv, Value stage,
                 Value k0);
  /// After prefetchB: arms `stage`'s full mbarrier with A's bytes (its
  /// arrival) and issues A's copy.
  void issueA(KernelBuilder &kb, const KernelValues &kv, Value stage, Value k0);
  /// Waits until the phase of parity `parity` (i32) of `stage`'s full
  /// (empty) mbarrier completed.
  void waitFull(KernelBuilder &kb, Value stage, Value parity);
  void waitEmpty(KernelBuilder &kb, Value stage, Value parity);
  /// The calling warp arrives once on `stage`'s empty mbarrier (`lane`: the
  /// thread's lane, index): lane 0 -- or in a cluster, lane q on CTA q's
  /// barrier for every CTA q: a CTA multicasts into its peers' stages.
  void arriveEmpty(KernelBuilder &kb, Value stage, Value lane);
  /// The end of a clustered kernel: no CTA exits while a peer may still
  /// arrive on its barriers (a cluster barrier; nothing without clusters).
  void finish(KernelBuilder &kb);

  /// `stage`'s full mbarrier (!llvm.ptr<3>).
  Value fullBarrier(KernelBuilder &kb, Value stage) {
    return smemAt(kb, kb.addC(kb.mulC(stage, 8), layout.fullBarrierOffset()));
  }

private:
  /// A pointer into the tiles' region: byte `offset` (index) from its base.
  Value smemAt(KernelBuilder &kb, Value offset);
  Value emptyBarrier(KernelBuilder &kb, Value stage) {
    return smemAt(kb, kb.addC(kb.mulC(stage, 8), layout.emptyBarrierOffset()));
  }
  /// A call to the runtime's encoder for `data` (flat memref) seen as
  /// [rows, K] bytes, boxes of `boxRows` x BK; `runtimeRows` (index, or
  /// null) replaces `rows` with M at run time.
  Value encodeTensorMap(KernelBuilder &kb, Value data, int64_t rows,
                        int64_t boxRows, Value runtimeRows = {});
  /// One tile's copy: box at (row, k0) of `map` into `dstOffset` (index),
  /// to the CTAs of `multicastMask` (i16) when given.
  void copyTile(KernelBuilder &kb, Value map, Value row, Value k0,
                Value dstOffset, Value bar, Value multicastMask = Value());
  /// The K tile at `k0` of A (of B: this CTA's whole tile, without
  /// clusters) into `stage`, completing on `bar`.
  void copyA(KernelBuilder &kb, const KernelValues &kv, Value stage, Value k0,
             Value bar);
  void copyB(KernelBuilder &kb, const KernelValues &kv, Value stage, Value k0,
             Value bar);
  /// Row of the tile's first A (B) row in the operand's [rows, K] view.
  Value rowA(KernelBuilder &kb, const KernelValues &kv);
  Value rowB(KernelBuilder &kb, const KernelValues &kv);

  /// Both barriers of a clustered kernel's start and end.
  void clusterSync(KernelBuilder &kb);

  /// The tiles' base as !llvm.ptr<3>.
  Value base;
  /// The CTA's rank in its cluster (index; null without clusters).
  Value rank;
};

/// The loader `plan.config.loader` names.
std::unique_ptr<TileLoader> createTileLoader(const GemmPlan &plan,
                                             const SmemLayout &layout);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TILELOADERS_H
