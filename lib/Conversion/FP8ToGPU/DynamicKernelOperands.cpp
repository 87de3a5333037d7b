//===- DynamicKernelOperands.cpp - Dynamic memrefs into kernels ----------===//
//
// Part of fp8-opt. Kernels take one pointer per memref (the bare-pointer
// calling convention of convert-gpu-to-nvvm and gpu-to-llvm), which MLIR
// only has for memrefs of static shape and layout. A kernel of a model with
// dynamic dimensions reads memref<?x...>: it takes the base buffer
// (memref<T>, one pointer) and the dynamic offset, sizes and strides (index
// arguments), and rebuilds the memref with reinterpret_cast; its launches
// pass them from extract_strided_metadata.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/BitVector.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUDYNAMICKERNELOPERANDS
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// A memref argument passed as its base buffer and dynamic metadata.
struct SplitArg {
  MemRefType type;
  SmallVector<int64_t> strides;
  int64_t offset = 0;

  /// The base buffer's type: rank 0, the element type and memory space.
  MemRefType baseType() const {
    return MemRefType::get({}, type.getElementType(),
                           MemRefLayoutAttrInterface(), type.getMemorySpace());
  }
  /// Index arguments after the base: dynamic offset, sizes, strides.
  unsigned numIndices() const {
    return ShapedType::isDynamic(offset) + type.getNumDynamicDims() +
           llvm::count_if(strides, ShapedType::isDynamic);
  }
};

/// The split of `type` when it has no bare-pointer form (a dynamic size,
/// offset or stride) and a strided layout; none otherwise.
std::optional<SplitArg> splitOf(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return std::nullopt;
  SplitArg s;
  s.type = memref;
  if (failed(memref.getStridesAndOffset(s.strides, s.offset)))
    return std::nullopt;
  if (memref.hasStaticShape() && ShapedType::isStatic(s.offset) &&
      llvm::none_of(s.strides, ShapedType::isDynamic))
    return std::nullopt;
  return s;
}

/// A static entry, or else the next of `dynamic`.
OpFoldResult staticOr(Builder &b, int64_t fromType, ValueRange dynamic,
                      unsigned &next) {
  if (ShapedType::isStatic(fromType))
    return b.getIndexAttr(fromType);
  return dynamic[next++];
}

/// Rewrites kernel `func`'s split arguments (index -> split, in the
/// original numbering) in place.
void rewriteKernel(gpu::GPUFuncOp func,
                   const SmallVector<std::pair<unsigned, SplitArg>> &splits) {
  MLIRContext *ctx = func.getContext();
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  IndexType index = IndexType::get(ctx);
  // Last first, so that earlier indices stay valid.
  for (auto &[i, s] : llvm::reverse(splits)) {
    const unsigned n = s.numIndices();
    SmallVector<unsigned> at(n + 1, i + 1);
    SmallVector<Type> types = {s.baseType()};
    types.append(n, index);
    SmallVector<DictionaryAttr> attrs(n + 1, DictionaryAttr::get(ctx));
    SmallVector<Location> locs(n + 1, loc);
    if (failed(func.insertArguments(at, types, attrs, locs)))
      llvm_unreachable("gpu.func takes inserted arguments");
    Value base = entry.getArgument(i + 1);
    ValueRange dynamic = entry.getArguments().slice(i + 2, n);
    unsigned next = 0;
    OpFoldResult offset = staticOr(b, s.offset, dynamic, next);
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < s.type.getRank(); ++d)
      sizes.push_back(staticOr(b, s.type.getDimSize(d), dynamic, next));
    for (int64_t stride : s.strides)
      strides.push_back(staticOr(b, stride, dynamic, next));
    auto rebuilt = memref::ReinterpretCastOp::create(b, loc, s.type, base,
                                                     offset, sizes, strides);
    entry.getArgument(i).replaceAllUsesWith(rebuilt);
    llvm::BitVector erase(func.getNumArguments());
    erase.set(i);
    if (failed(func.eraseArguments(erase)))
      llvm_unreachable("gpu.func erases an argument");
  }
}

/// Passes launch's operands of the split arguments as their base and
/// dynamic metadata.
void rewriteLaunch(gpu::LaunchFuncOp launch,
                   const SmallVector<std::pair<unsigned, SplitArg>> &splits) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  SmallVector<Value> operands;
  unsigned next = 0;
  for (auto [i, v] : llvm::enumerate(launch.getKernelOperands())) {
    if (next == splits.size() || splits[next].first != i) {
      operands.push_back(v);
      continue;
    }
    const SplitArg &s = splits[next++].second;
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
    operands.push_back(meta.getBaseBuffer());
    if (ShapedType::isDynamic(s.offset))
      operands.push_back(meta.getOffset());
    for (int64_t d = 0; d < s.type.getRank(); ++d)
      if (s.type.isDynamicDim(d))
        operands.push_back(meta.getSizes()[d]);
    for (auto [d, stride] : llvm::enumerate(s.strides))
      if (ShapedType::isDynamic(stride))
        operands.push_back(meta.getStrides()[d]);
  }
  launch.getKernelOperandsMutable().assign(operands);
}

struct DynamicKernelOperandsPass
    : fp8::impl::FP8GPUDynamicKernelOperandsBase<DynamicKernelOperandsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernel (module, name) -> its split arguments, in order.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>,
                   SmallVector<std::pair<unsigned, SplitArg>>>
        kernels;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!func.isKernel())
          continue;
        SmallVector<std::pair<unsigned, SplitArg>> splits;
        for (auto [i, t] : llvm::enumerate(func.getArgumentTypes()))
          if (std::optional<SplitArg> s = splitOf(t))
            splits.push_back({unsigned(i), std::move(*s)});
        if (splits.empty())
          continue;
        rewriteKernel(func, splits);
        kernels[{gpuModule.getSymNameAttr(), func.getNameAttr()}] =
            std::move(splits);
      }
    if (kernels.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          kernels.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it != kernels.end())
        rewriteLaunch(launch, it->second);
    });
  }
};

} // namespace
