//===- GemmKernel.cpp - The FP8 GEMM kernel generator ---------------------===//
//
// Part of fp8-opt.
//
// Assembles a kernel from the builders: the launch and the values every
// builder reads, the tile loader, the mainloop (wgmma + promotion), the
// epilogue. Every decision comes from the GemmPlan.
//
//===----------------------------------------------------------------------===//

#include "GemmKernel.h"

#include "Epilogue.h"
#include "Mainloop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// Drops the reference body of `func` (keeping its arguments) and returns a
/// builder at the end of the now empty entry block.
OpBuilder resetBody(func::FuncOp func) {
  Block &entry = func.getBody().front();
  func.getBody().getBlocks().erase(std::next(func.getBody().begin()),
                                   func.getBody().end());
  while (!entry.empty())
    entry.back().erase();
  return OpBuilder::atBlockEnd(&entry);
}

/// Every argument of `entry` collapsed to rank 1 (rank 0/1 stay).
SmallVector<Value> flattenOperands(KernelBuilder &kb, Block &entry) {
  SmallVector<Value> flat;
  for (BlockArgument arg : entry.getArguments()) {
    auto t = cast<MemRefType>(arg.getType());
    if (t.getRank() <= 1) {
      flat.push_back(arg);
      continue;
    }
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    auto flatType = MemRefType::get({t.getNumElements()}, t.getElementType());
    flat.push_back(memref::CollapseShapeOp::create(
        kb.b, kb.loc, flatType, arg, ArrayRef<ReassociationIndices>{all}));
  }
  return flat;
}

/// The gpu.launch (grid: N tiles x M tiles x batch) and the function's
/// return after it.
gpu::LaunchOp createLaunch(KernelBuilder &kb, const GemmPlan &plan,
                           const SmemLayout &layout) {
  const GemmProblem &p = plan.problem;
  const GemmConfig &c = plan.config;
  Value gridX = kb.cIdx(llvm::divideCeil(p.n, c.bn));
  Value gridY = kb.cIdx(llvm::divideCeil(p.m, c.bm));
  Value gridZ = kb.cIdx(p.batch);
  Value one = kb.cIdx(1);
  Value smemSize = kb.cI32(layout.totalBytes);
  auto launch = gpu::LaunchOp::create(kb.b, kb.loc, gridX, gridY, gridZ,
                                      kb.cIdx(c.threads()), one, one, smemSize);
  func::ReturnOp::create(kb.b, kb.loc);
  return launch;
}

/// Ids, the CTA tile's origin and the shared-memory buffer with its typed
/// stage-0 tile views.
void setupKernelValues(KernelBuilder &kb, const GemmPlan &plan,
                       const SmemLayout &layout, gpu::LaunchOp launch,
                       KernelValues &kv) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = plan.problem;
  kv.bx = launch.getBlockIds().x;
  kv.by = launch.getBlockIds().y;
  kv.bz = launch.getBlockIds().z;
  kv.tid = launch.getThreadIds().x;
  kv.n0 = kb.mulC(kv.bx, plan.config.bn);
  kv.m0 = kb.mulC(kv.by, plan.config.bm);

  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), wg);
  kv.smem = gpu::DynamicSharedMemoryOp::create(b, loc, rawType);
  auto aType = MemRefType::get({layout.a.bytes()}, p.lhsType,
                               MemRefLayoutAttrInterface(), wg);
  auto bType = MemRefType::get({layout.b.bytes()}, p.rhsType,
                               MemRefLayoutAttrInterface(), wg);
  kv.tileA = memref::ViewOp::create(
      b, loc, aType, kv.smem, kb.cIdx(layout.aTileOffset(0)), ValueRange{});
  kv.tileB = memref::ViewOp::create(
      b, loc, bType, kv.smem, kb.cIdx(layout.bTileOffset(0)), ValueRange{});
  // The shared-window address of the buffer (ptrtoint of an addrspace(3)
  // pointer), for the wgmma descriptors.
  kv.smemBase =
      kb.toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kv.smem));
  if (layout.alignment > 16) {
    // Round up to the swizzle atom; SmemLayout reserved the slack.
    Value raw = kv.smemBase;
    Value bumped =
        arith::AddIOp::create(b, loc, raw, kb.cI64(layout.alignment - 1));
    kv.smemBase =
        arith::AndIOp::create(b, loc, bumped, kb.cI64(~(layout.alignment - 1)));
    kv.smemAlignOffset = arith::SubIOp::create(b, loc, kv.smemBase, raw);
  }
}

/// Element offsets of this CTA's batch in lhs, rhs and out.
void setupBatchOffsets(KernelBuilder &kb, const GemmProblem &p,
                       KernelValues &kv) {
  kv.lhsBase = kb.mulC(kv.bz, p.m * p.k);
  kv.rhsBase = p.rhsBatched ? kb.mulC(kv.bz, p.n * p.k) : kb.cIdx(0);
  kv.outBase = kb.mulC(kv.bz, p.m * p.n);
}

} // namespace

void gemm::buildGemmKernel(func::FuncOp func, const GemmPlan &plan) {
  Block &entry = func.getBody().front();
  OpBuilder b = resetBody(func);
  KernelBuilder kb(b, func.getLoc(), plan.problem);
  SmallVector<Value> flat = flattenOperands(kb, entry);
  KernelValues kv;
  kv.lhs = flat[0];
  kv.lhsScale = flat[1];
  kv.rhs = flat[2];
  kv.rhsScale = flat[3];
  kv.bias = plan.problem.bias != GemmProblem::Bias::None ? flat[4] : Value();
  kv.out = flat.back();
  SmemLayout layout = SmemLayout::get(plan.config);
  std::unique_ptr<TileLoader> loader = createTileLoader(plan, layout);
  loader->prepareHost(kb, kv);
  gpu::LaunchOp launch = createLaunch(kb, plan, layout);

  b.setInsertionPointToStart(&launch.getBody().front());
  setupKernelValues(kb, plan, layout, launch, kv);
  loader->prepare(kb, kv);
  setupBatchOffsets(kb, plan.problem, kv);
  AccumulatorFragment frag = AccumulatorFragment::build(kb, kv, plan.config.bn);
  Promotion promotion(plan, kv, frag);
  Value acc = buildMainloop(kb, plan, layout, kv, frag, *loader, promotion);
  buildRegisterEpilogue(kb, plan, kv, frag, acc);
  gpu::TerminatorOp::create(b, kb.loc);
}
