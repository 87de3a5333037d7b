//===- Conv.cpp - Convolution and pooling ---------------------------------===//
//
// Part of fp8-opt. 2-D Conv (NCHW, group 1, explicit and auto padding) as
// linalg.conv_2d_nchw_fchw, and GlobalAveragePool/GlobalMaxPool.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

/// GlobalAveragePool / GlobalMaxPool: the mean / max over every spatial
/// dim of [N, C, d...], kept as 1s.
static LogicalResult importGlobalPool(NodeContext &nc, bool isMax) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  if (s.size() < 2 || !isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point [N, C, ...] input";
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, s.size()));
  if (axes.empty()) {
    nc.results.push_back(x);
    return success();
  }
  Value r = imp.reduceKeepDims(nc.loc, x, axes,
                               isMax ? Importer::ReduceKind::Max
                                     : Importer::ReduceKind::Sum);
  if (!isMax) {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= s[a];
    FailureOr<Value> mean = imp.elementwise(
        nc, EwKind::Div, {r, scalarTensor(nc, Importer::elemOf(x), count)});
    if (failed(mean))
      return failure();
    r = *mean;
  }
  nc.results.push_back(r);
  return success();
}

static LogicalResult importConv(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), w = nc.in(1);
  ArrayRef<int64_t> xs = Importer::shapeOf(x), ws = Importer::shapeOf(w);
  if (xs.size() != 4 || ws.size() != 4)
    return nc.error() << "only 2-D convolution (NCHW input, FCHW weights) is "
                         "supported, got "
                      << x.getType() << " and " << w.getType();
  if (nc.attrInt("group", 1) != 1)
    return nc.error() << "unsupported group " << nc.attrInt("group", 1)
                      << " (only 1)";
  if (ws[1] != xs[1])
    return nc.error() << "weight channels " << ws[1]
                      << " do not match input channels " << xs[1];
  SmallVector<int64_t> strides = nc.attrInts("strides").value_or(SmallVector<int64_t>{1, 1});
  SmallVector<int64_t> dil = nc.attrInts("dilations").value_or(SmallVector<int64_t>{1, 1});
  SmallVector<int64_t> pads = nc.attrInts("pads").value_or(SmallVector<int64_t>{0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return nc.error() << "strides/dilations/pads have the wrong length";
  // A zero stride divided by zero below; a zero dilation built a convolution
  // that does not verify; negative dilations or pads made the generated code
  // address the input out of bounds (found by fuzzing).
  if (llvm::any_of(strides, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(dil, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return nc.error() << "strides and dilations must be positive and pads "
                         "non-negative";
  if (auto ks = nc.attrInts("kernel_shape");
      ks && (ks->size() != 2 || (*ks)[0] != ws[2] || (*ks)[1] != ws[3]))
    return nc.error() << "kernel_shape does not match the weights";
  if (nc.in(2) && Importer::shapeOf(nc.in(2)) != ArrayRef<int64_t>{ws[0]})
    return nc.error() << "bias has shape " << dims(Importer::shapeOf(nc.in(2)))
                      << ", expected [" << ws[0] << "] (one per output channel)";
  std::string autoPad = nc.attrString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = xs[2 + i], out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + dil[i] * (ws[2 + i] - 1) + 1 - in);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad == "VALID") {
    pads.assign(4, 0);
  } else if (autoPad != "NOTSET") {
    return nc.error() << "unsupported auto_pad '" << autoPad << "'";
  }
  Type et = Importer::elemOf(x);
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    SmallVector<int64_t> padded = llvm::to_vector(xs);
    padded[2] += pads[0] + pads[2];
    padded[3] += pads[1] + pads[3];
    auto idx = [&](int64_t v) -> OpFoldResult { return imp.b.getIndexAttr(v); };
    SmallVector<OpFoldResult> lo{idx(0), idx(0), idx(pads[0]), idx(pads[1])};
    SmallVector<OpFoldResult> hi{idx(0), idx(0), idx(pads[2]), idx(pads[3])};
    Value zero = imp.scalarConst(nc.loc, et, 0.0);
    x = tensor::PadOp::create(imp.b, nc.loc, RankedTensorType::get(padded, et),
                              x, lo, hi, zero);
    xs = Importer::shapeOf(x);
  }
  SmallVector<int64_t> outShape{xs[0], ws[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t o = (xs[2 + i] - dil[i] * (ws[2 + i] - 1) - 1) / strides[i] + 1;
    if (o <= 0)
      return nc.error() << "kernel larger than the padded input";
    outShape.push_back(o);
  }
  TypedAttr zero = imp.b.getFloatAttr(et, 0.0);
  Value acc = imp.filled(nc.loc, outShape, zero);
  auto i64x2 = RankedTensorType::get({2}, imp.b.getI64Type());
  Value r = linalg::Conv2DNchwFchwOp::create(
                imp.b, nc.loc, TypeRange{acc.getType()}, ValueRange{x, w},
                ValueRange{acc}, DenseIntElementsAttr::get(i64x2, strides),
                DenseIntElementsAttr::get(i64x2, dil))
                .getResult(0);
  if (Value bias = nc.in(2)) {
    Value b4 = imp.reshape(nc.loc, bias, ArrayRef<int64_t>{1, ws[0], 1, 1});
    auto s = imp.elementwise(nc, EwKind::Add, {r, b4});
    if (failed(s))
      return failure();
    r = *s;
  }
  nc.results.push_back(r);
  return success();
}

void onnx_import::registerConvOps(OpRegistry &r) {
  r.add("GlobalAveragePool", {1},
        [](NodeContext &nc) { return importGlobalPool(nc, false); });
  r.add("GlobalMaxPool", {1},
        [](NodeContext &nc) { return importGlobalPool(nc, true); });
  r.add("Conv", {11}, importConv);
}
