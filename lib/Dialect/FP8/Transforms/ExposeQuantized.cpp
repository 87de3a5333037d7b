//===- ExposeQuantized.cpp - Quantized activations as results -------------===//
//
// Part of fp8-opt. A checking aid: the CPU and GPU targets must compute the
// same FP8 bytes and scales for the same inputs; exposing them as model
// outputs lets a test compare them without a debugger or a dump format.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXPOSEQUANTIZED
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// "layout=block 1x128;fmt=e4m3;scale=<how>": what a checker needs to
/// recompute the op from its exposed input with a reference implementation.
/// <how> is "current eps=E pow2=P", "block eps=E pow2=P" or "mxfp8 R" when
/// the scale is compute_scale(amax(input)) over the same layout, else
/// "given" (delayed histories, calibration, constants).
std::string describe(QuantizeOp q) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ScaleLayoutAttr layout = q.getLayoutAttr();
  os << "layout=" << stringifyGranularity(layout.getGranularity());
  if (layout.getGranularity() == Granularity::Block) {
    os << " ";
    llvm::interleave(layout.getBlock(), os, "x");
  }
  os << ";fmt="
     << stringifyFormat(
            *getFormat(q.getResult().getType().getElementType()));
  os << ";scale=";
  auto cs = q.getScale().getDefiningOp<ComputeScaleOp>();
  auto amax = cs ? cs.getAmax().getDefiningOp<AmaxOp>() : AmaxOp();
  if (!amax || amax.getInput() != q.getInput() ||
      amax.getLayoutAttr() != layout) {
    os << "given";
    return text;
  }
  Attribute recipe = cs.getRecipeAttr();
  if (auto c = dyn_cast<CurrentScalingAttr>(recipe))
    os << "current eps=" << llvm::format("%.9g", c.getEps().convertToDouble())
       << " pow2=" << int(c.getPow2());
  else if (auto b = dyn_cast<BlockScalingAttr>(recipe))
    os << "block eps=" << llvm::format("%.9g", b.getEps().convertToDouble())
       << " pow2=" << int(b.getPow2());
  else if (auto m = dyn_cast<MXScalingAttr>(recipe))
    os << "mxfp8 " << stringifyE8M0Rounding(m.getRounding());
  else
    os << "given";
  return text;
}

struct ExposeQuantizedPass
    : fp8::impl::FP8ExposeQuantizedBase<ExposeQuantizedPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "fp8-expose-quantized: no function @" << entry;
      return signalPassFailure();
    }
    SmallVector<QuantizeOp> quantizes;
    func.walk([&](QuantizeOp q) { quantizes.push_back(q); });
    if (quantizes.empty())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    OpBuilder b(ret);
    SmallVector<Value> results(ret.getOperands());
    SmallVector<DictionaryAttr> attrs;
    for (unsigned i = 0; i < results.size(); ++i)
      attrs.push_back(func.getResultAttrDict(i));
    auto add = [&](Value v, const std::string &name, int64_t dtype) {
      SmallVector<NamedAttribute> entries = {
          b.getNamedAttr("onnx.name", b.getStringAttr(name))};
      if (dtype >= 0)
        entries.push_back(
            b.getNamedAttr("onnx.dtype", b.getI64IntegerAttr(dtype)));
      results.push_back(v);
      attrs.push_back(b.getDictionaryAttr(entries));
    };
    for (auto [i, q] : llvm::enumerate(quantizes)) {
      std::string suffix = std::to_string(i) + ":" + getNodeName(q.getLoc()) +
                           ":" + describe(q);
      Value x = q.getInput();
      auto xType = cast<RankedTensorType>(x.getType());
      if (!xType.getElementType().isF32()) // exact
        x = arith::ExtFOp::create(b, q.getLoc(), xType.clone(b.getF32Type()),
                                  x);
      add(x, "fp8:x" + suffix, -1);
      add(q.getResult(), "fp8:q" + suffix, -1);
      Value scale = q.getScale();
      auto type = cast<RankedTensorType>(scale.getType());
      if (isa<Float8E8M0FNUType>(type.getElementType())) {
        // The ABI has no E8M0 type: return the exponent bytes.
        scale = arith::BitcastOp::create(b, q.getLoc(),
                                         type.clone(b.getI8Type()), scale);
        add(scale, "fp8:s" + suffix, /*UINT8=*/2);
      } else {
        add(scale, "fp8:s" + suffix, -1);
      }
    }
    ret->setOperands(results);
    func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    func.setAllResultAttrs(attrs);
  }
};
} // namespace
