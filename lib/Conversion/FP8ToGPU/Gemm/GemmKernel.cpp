//===- GemmKernel.cpp - The FP8 GEMM kernel generator ---------------------===//
//
// Part of fp8-opt.
//
// Assembles a kernel from the builders: the host side (operands flattened,
// tensor maps, the gpu.launch_func), the kernel function in its own
// gpu.module with the attributes ptxas needs, the values every builder
// reads, the tile loader, the mainloop (wgmma + promotion), the epilogue.
// Every decision comes from the GemmPlan.
//
// The kernel is built as a gpu.func rather than a gpu.launch body that
// gpu-kernel-outlining would move out: outlining keeps neither discardable
// attributes of the launch nor argument attributes, and warp-specialized
// kernels need `nvvm.minctasm` next to the block size (or ptxas ignores
// setmaxnreg, C7508); building the function here also fixes the kernel's
// parameter list (no constant captured by accident) and works the same in
// every pipeline, including upstream gpu-lower-to-nvvm-pipeline, which
// outlines internally and leaves existing gpu.modules alone.
//
//===----------------------------------------------------------------------===//

#include "GemmKernel.h"

#include "Epilogue.h"
#include "Mainloop.h"
#include "TmaStore.h"
#include "WarpSpecialized.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

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
    auto flatType = MemRefType::get(
        {t.hasStaticShape() ? t.getNumElements() : ShapedType::kDynamic},
        t.getElementType());
    flat.push_back(memref::CollapseShapeOp::create(
        kb.b, kb.loc, flatType, arg, ArrayRef<ReassociationIndices>{all}));
  }
  return flat;
}

/// The values the host passes to the kernel, in parameter order: lhs,
/// lhs_scale, rhs, rhs_scale, [bias], out (flat memrefs), [the tensor maps
/// of A and B], [the output's], [the staged epilogue input's], [M at run
/// time].
SmallVector<Value> kernelParams(const KernelValues &host) {
  SmallVector<Value> params = {host.lhs, host.lhsScale, host.rhs,
                               host.rhsScale};
  if (host.bias)
    params.push_back(host.bias);
  params.append(host.epilogueArgs.begin(), host.epilogueArgs.end());
  params.push_back(host.out);
  if (host.tensorMapA)
    params.append({host.tensorMapA, host.tensorMapB});
  if (host.tensorMapD)
    params.push_back(host.tensorMapD);
  if (host.tensorMapIn)
    params.push_back(host.tensorMapIn);
  if (host.rowsM)
    params.push_back(host.rowsM);
  return params;
}

/// The same values inside the kernel: its arguments, in kernelParams order.
KernelValues bindParams(const KernelValues &host, Block &kernelEntry) {
  KernelValues kv;
  auto args = kernelEntry.getArguments();
  unsigned i = 0;
  kv.lhs = args[i++];
  kv.lhsScale = args[i++];
  kv.rhs = args[i++];
  kv.rhsScale = args[i++];
  if (host.bias)
    kv.bias = args[i++];
  for (size_t e = 0; e < host.epilogueArgs.size(); ++e)
    kv.epilogueArgs.push_back(args[i++]);
  kv.out = args[i++];
  if (host.tensorMapA) {
    kv.tensorMapA = args[i++];
    kv.tensorMapB = args[i++];
  }
  if (host.tensorMapD)
    kv.tensorMapD = args[i++];
  if (host.tensorMapIn)
    kv.tensorMapIn = args[i++];
  if (host.rowsM)
    kv.rowsM = args[i++];
  return kv;
}

/// Grid: N tiles x M tiles x batch, or the persistent CTAs (M tiles from
/// the planned rows; createLaunch computes them from M at run time).
std::array<int64_t, 3> gridSize(const GemmPlan &plan) {
  const GemmProblem &p = plan.problem;
  const GemmConfig &c = plan.config;
  if (c.persistentCtas)
    return {c.persistentCtas, 1, 1};
  return {static_cast<int64_t>(llvm::divideCeil(p.n, c.bn)),
          static_cast<int64_t>(llvm::divideCeil(p.m, c.bm)), p.batch};
}

/// An empty kernel function taking `paramTypes`, alone in a new gpu.module
/// right after `func` (both named `<func>_kernel`, the module renamed if
/// that collides), with the launch geometry it is built for and, when it
/// resizes its warpgroups' registers, `nvvm.minctasm = 1` (ptxas honours
/// setmaxnreg only when it knows the block size and the CTAs per SM).
gpu::GPUFuncOp createKernelFunc(func::FuncOp func, const GemmPlan &plan,
                                TypeRange paramTypes, SymbolTable &symbols) {
  MLIRContext *ctx = func.getContext();
  std::string name = (func.getSymName() + "_kernel").str();
  if (plan.maxRows)
    name += "_m" + std::to_string(plan.maxRows);
  const GemmConfig &c = plan.config;
  gpu::GPUFuncOp kernel = fp8::createKernelFunc(
      createKernelModule(func, name, symbols), name, paramTypes, c.threads());
  OpBuilder b(ctx);
  std::array<int64_t, 3> grid = gridSize(plan);
  // A grid that follows M at run time has no known size.
  if (!plan.problem.dynamicM || c.persistentCtas)
    kernel.setKnownGridSizeAttr(b.getDenseI32ArrayAttr(
        {static_cast<int32_t>(grid[0]), static_cast<int32_t>(grid[1]),
         static_cast<int32_t>(grid[2])}));
  if (c.producerRegisters || c.consumerRegisters)
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(1));
  // .reqnctapercluster: a plain launch then runs in clusters.
  if (c.clusterM > 1)
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(c.clusterM), 1, 1}));
  return kernel;
}

/// The gpu.launch_func of `kernel` with `params`; `rowsM` (M at run time,
/// or null) sets a non-persistent grid's M tiles.
void createLaunch(KernelBuilder &kb, const GemmPlan &plan,
                  const SmemLayout &layout, gpu::GPUFuncOp kernel,
                  ValueRange params, Value rowsM) {
  std::array<int64_t, 3> grid = gridSize(plan);
  Value one = kb.cIdx(1);
  gpu::KernelDim3 gridDim{kb.cIdx(grid[0]), kb.cIdx(grid[1]),
                          kb.cIdx(grid[2])};
  if (rowsM && !plan.config.persistentCtas)
    gridDim.y = kb.divC(kb.addC(rowsM, plan.config.bm - 1), plan.config.bm);
  gpu::KernelDim3 blockDim{kb.cIdx(plan.config.threads()), one, one};
  gpu::LaunchFuncOp::create(kb.b, kb.loc, kernel, gridDim, blockDim,
                            kb.cI32(layout.totalBytes), params);
}

/// Ids, the CTA tile's origin and the shared-memory buffer with its typed
/// stage-0 tile views.
void setupKernelValues(KernelBuilder &kb, const GemmPlan &plan,
                       const SmemLayout &layout, KernelValues &kv) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = plan.problem;
  kv.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  // A persistent kernel's tiles are set per tile of its walk.
  if (!plan.config.persistentCtas)
    setTile(kb, plan.config, kv, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
            gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
            gpu::BlockIdOp::create(b, loc, gpu::Dimension::z));

  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), wg);
  kv.smem = gpu::DynamicSharedMemoryOp::create(b, loc, rawType);
  auto aType = MemRefType::get({layout.a.bytes() / p.elementBytes},
                               p.lhsType, MemRefLayoutAttrInterface(), wg);
  auto bType = MemRefType::get({layout.b.bytes() / p.elementBytes},
                               p.rhsType, MemRefLayoutAttrInterface(), wg);
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

/// The kernel's body after the setup: one warpgroup loads and multiplies.
void buildSingleWarpgroupBody(KernelBuilder &kb, const GemmPlan &plan,
                              const SmemLayout &layout, const KernelValues &kv,
                              TileLoader &loader) {
  AccumulatorFragment frag = AccumulatorFragment::build(kb, kv, plan.config.bn);
  Promotion promotion(plan, kv, frag);
  Value acc = buildMainloop(kb, plan, layout, kv, frag, loader, promotion);
  buildRegisterEpilogue(kb, plan, kv, frag, acc);
}

/// The host code of one plan at `kb`'s insertion point (tensor maps and
/// the launch) and its kernel; `host` holds the flat operands (and M at
/// run time).
void buildLaunchAndKernel(func::FuncOp func, const GemmPlan &plan,
                          KernelValues host, FusedEpilogue *fused,
                          OpBuilder &b, SymbolTable &symbols) {
  KernelBuilder kb(b, func.getLoc(), plan.problem);
  SmemLayout layout = SmemLayout::get(plan.config);
  std::unique_ptr<TileLoader> loader = createTileLoader(plan, layout);
  loader->prepareHost(kb, host);
  if (plan.config.epilogue == EpilogueKind::SharedTMA)
    host.tensorMapD = encodeOutputTensorMap(kb, plan, host.out, host.rowsM);
  if (plan.config.stagedInput) {
    // The input's boxes are the output's (both 16-bit, the output's shape);
    // epilogueArgs holds the inputs other than the product, in order.
    ArrayRef<GemmProblem::EpilogueInput> inputs = plan.problem.epilogueInputs;
    const GemmProblem::EpilogueInput *staged = stageableInput(plan.problem);
    const auto e = llvm::count_if(
        inputs.take_front(staged - inputs.begin()),
        [](const GemmProblem::EpilogueInput &in) {
          return in.kind != GemmProblem::EpilogueInput::Kind::Product;
        });
    host.tensorMapIn =
        encodeOutputTensorMap(kb, plan, host.epilogueArgs[e], host.rowsM);
  }
  SmallVector<Value> params = kernelParams(host);
  gpu::GPUFuncOp kernel =
      createKernelFunc(func, plan, ValueRange(params).getTypes(), symbols);
  createLaunch(kb, plan, layout, kernel, params, host.rowsM);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.front());
  KernelValues kv = bindParams(host, kernel.front());
  kv.fused = fused;
  if (plan.problem.lhsScale.dynamicRows && plan.problem.lhsScale.mMajorPad) {
    const int64_t pad = plan.problem.lhsScale.mMajorPad;
    kb.lhsMMajorStride = kb.mulC(kb.divC(kb.addC(kv.rowsM, pad - 1), pad), pad);
  }
  setupKernelValues(kb, plan, layout, kv);
  loader->prepare(kb, kv);
  if (plan.config.kind == KernelKind::WarpSpecialized)
    buildWarpSpecializedBody(kb, plan, layout, kv,
                             static_cast<TmaLoader &>(*loader));
  else
    buildSingleWarpgroupBody(kb, plan, layout, kv, *loader);
  gpu::ReturnOp::create(b, kb.loc);
}

/// M at run time: the lhs's rows times its (static) batch dims.
Value runtimeRows(KernelBuilder &kb, Value lhs) {
  auto t = cast<MemRefType>(lhs.getType());
  const int64_t rank = t.getRank();
  int64_t batch = 1;
  for (int64_t d : t.getShape().drop_back(2))
    batch *= d;
  Value rows = memref::DimOp::create(kb.b, kb.loc, lhs, rank - 2);
  return batch > 1 ? kb.mulC(rows, batch) : rows;
}

} // namespace

void gemm::buildGemmKernel(func::FuncOp func, ArrayRef<GemmPlan> plans,
                           SymbolTable &symbols) {
  assert(!plans.empty() && (plans.size() == 1 || plans[0].problem.dynamicM));
  const GemmProblem &p = plans.front().problem;
  Block &entry = func.getBody().front();
  // A fused consumer's body outlives the reference body it is part of.
  std::optional<FusedEpilogue> fused;
  if (p.fusedEpilogue)
    fused.emplace(p.fusedEpilogue);
  OpBuilder b = resetBody(func);
  KernelBuilder kb(b, func.getLoc(), p);
  SmallVector<Value> flat = flattenOperands(kb, entry);
  KernelValues host;
  host.lhs = flat[0];
  host.lhsScale = flat[1];
  host.rhs = flat[2];
  host.rhsScale = flat[3];
  host.bias = p.bias != GemmProblem::Bias::None ? flat[4] : Value();
  host.out = flat.back();
  for (const GemmProblem::EpilogueInput &in : p.epilogueInputs)
    if (in.kind != GemmProblem::EpilogueInput::Kind::Product)
      host.epilogueArgs.push_back(flat[in.arg]);
  FusedEpilogue *fusedPtr = fused ? &*fused : nullptr;
  if (!p.dynamicM) {
    buildLaunchAndKernel(func, plans.front(), host, fusedPtr, b, symbols);
    func::ReturnOp::create(b, kb.loc);
    return;
  }
  // M at run time: nothing to do for M = 0 (no launch of an empty grid,
  // no tensor map of 0 rows); else the first plan that admits M.
  host.rowsM = runtimeRows(kb, entry.getArgument(0));
  Value any = arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::ugt,
                                    host.rowsM, kb.cIdx(0));
  auto nonEmpty = scf::IfOp::create(b, kb.loc, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&nonEmpty.getThenRegion().front());
  for (const GemmPlan &plan : plans) {
    if (!plan.maxRows) {
      buildLaunchAndKernel(func, plan, host, fusedPtr, b, symbols);
      break;
    }
    Value fits = arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::ule,
                                       host.rowsM, kb.cIdx(plan.maxRows));
    auto ifOp = scf::IfOp::create(b, kb.loc, fits, /*withElseRegion=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    buildLaunchAndKernel(func, plan, host, fusedPtr, b, symbols);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  }
  b.setInsertionPointAfter(nonEmpty);
  func::ReturnOp::create(b, kb.loc);
}
