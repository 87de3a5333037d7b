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

/// The loader `plan.config.loader` names.
std::unique_ptr<TileLoader> createTileLoader(const GemmPlan &plan,
                                             const SmemLayout &layout);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TILELOADERS_H
