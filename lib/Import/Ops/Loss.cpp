//===- Loss.cpp - Loss ONNX ops -------------------------------------------===//
//
// Part of fp8-opt. NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (reductions none, sum and mean; ignore_index; class weights).
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

/// NegativeLogLikelihoodLoss (opsets 12, 13): input [N, C, d...] (log
/// probabilities), target [N, d...] (class indices), optional weight [C].
/// Per element l = -input[n, t, d...] * w[t] (w = 1 without weights), and
/// 0 with weight 0 where t == ignore_index; reduction "none" returns l,
/// "sum" its sum, "mean" the sum over the sum of the elements' weights
/// (NaN when every target is ignored, as the reference computes). One
/// linalg.generic over [N, d...] yields l and the weights; a target out of
/// [0, C) that is not ignore_index reads a clamped class (no out-of-bounds
/// read).
static LogicalResult negativeLogLikelihood(NodeContext &nc, Value input,
                                           Value target, Value weight) {
  Importer &imp = nc.imp;
  ArrayRef<int64_t> s = Importer::shapeOf(input), ts = Importer::shapeOf(target);
  Type et = Importer::elemOf(input);
  if (!isa<FloatType>(et))
    return nc.error() << "expects floating-point input, got " << et;
  if (!isa<IntegerType>(Importer::elemOf(target)) ||
      Importer::elemOf(target).isInteger(1))
    return nc.error() << "target must be integers, got " << target.getType();
  if (s.size() < 2 || ts.size() + 1 != s.size() || ts[0] != s[0] ||
      ts.drop_front() != s.drop_front(2))
    return nc.error() << "target must have the input's shape without its "
                         "class dimension";
  const int64_t classes = s[1];
  if (weight && (Importer::shapeOf(weight) != ArrayRef<int64_t>{classes} ||
                 Importer::elemOf(weight) != et))
    return nc.error() << "weight must be [" << classes << "] of " << et;
  std::string reduction = nc.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return nc.error() << "unknown reduction '" << reduction << "'";
  const onnx::AttributeProto *ignoreAttr = nc.attr("ignore_index");
  std::optional<int64_t> ignore;
  if (ignoreAttr)
    ignore = ignoreAttr->i();
  if (classes == 0)
    return nc.error() << "has no classes";

  const int64_t rank = ts.size();
  bool unsignedIdx = imp.isUnsigned(target);
  Value lossInit = imp.emptyTensor(nc.loc, ts, et);
  Value weightInit = imp.emptyTensor(nc.loc, ts, et);
  SmallVector<AffineMap> maps(3, imp.b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      imp.b, nc.loc, TypeRange{lossInit.getType(), weightInit.getType()},
      ValueRange{target}, ValueRange{lossInit, weightInit}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange a) {
        Value t = a[0];
        Value cls = safeIndex(bb, l, t, classes, unsignedIdx);
        SmallVector<Value> coords{linalg::IndexOp::create(bb, l, 0), cls};
        for (int64_t d = 1; d < rank; ++d)
          coords.push_back(linalg::IndexOp::create(bb, l, d));
        Value x = tensor::ExtractOp::create(bb, l, input, coords);
        auto fc = [&](double v) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(et, v));
        };
        Value w = weight ? Value(tensor::ExtractOp::create(bb, l, weight,
                                                           ValueRange{cls}))
                         : Value(fc(1.0));
        if (ignore) {
          Value ig = arith::ConstantOp::create(
              bb, l, bb.getIntegerAttr(t.getType(), *ignore));
          Value isIgnored = arith::CmpIOp::create(
              bb, l, arith::CmpIPredicate::eq, t, ig);
          w = arith::SelectOp::create(bb, l, isIgnored, fc(0.0), w);
        }
        Value loss = arith::NegFOp::create(
            bb, l, arith::MulFOp::create(bb, l, x, w));
        linalg::YieldOp::create(bb, l, ValueRange{loss, w});
      });
  Value loss = generic.getResult(0), weights = generic.getResult(1);
  if (reduction == "none") {
    nc.results.push_back(loss);
    return success();
  }
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value sum = imp.reduce(nc.loc, loss, all, Importer::ReduceKind::Sum);
  if (reduction == "mean") {
    Value total = imp.reduce(nc.loc, weights, all, Importer::ReduceKind::Sum);
    FailureOr<Value> mean = imp.elementwise(nc, EwKind::Div, {sum, total});
    if (failed(mean))
      return failure();
    sum = *mean;
  }
  nc.results.push_back(sum);
  return success();
}

static LogicalResult importNegativeLogLikelihoodLoss(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  return negativeLogLikelihood(nc, nc.in(0), nc.in(1), nc.in(2));
}

/// SoftmaxCrossEntropyLoss (opsets 12, 13): log_prob = log softmax of the
/// scores along the class axis 1 (x - max - log sum exp(x - max)), then
/// NegativeLogLikelihoodLoss of log_prob with the same target, weight,
/// reduction and ignore_index; the optional second output is log_prob.
static LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value scores = nc.in(0);
  if (!isa<FloatType>(Importer::elemOf(scores)))
    return nc.error() << "expects floating-point scores, got "
                      << Importer::elemOf(scores);
  if (Importer::shapeOf(scores).size() < 2)
    return nc.error() << "scores must be [N, C, ...]";
  auto ew = [&](EwKind k, ArrayRef<Value> ins) { return imp.elementwise(nc, k, ins); };
  Value max = imp.reduceKeepDims(nc.loc, scores, {1}, Importer::ReduceKind::Max);
  FailureOr<Value> shifted = ew(EwKind::Sub, {scores, max});
  if (failed(shifted))
    return failure();
  FailureOr<Value> e = ew(EwKind::Exp, {*shifted});
  if (failed(e))
    return failure();
  Value sum = imp.reduceKeepDims(nc.loc, *e, {1}, Importer::ReduceKind::Sum);
  FailureOr<Value> logSum = ew(EwKind::Log, {sum});
  if (failed(logSum))
    return failure();
  FailureOr<Value> logProb = ew(EwKind::Sub, {*shifted, *logSum});
  if (failed(logProb) ||
      failed(negativeLogLikelihood(nc, *logProb, nc.in(1), nc.in(2))))
    return failure();
  if (nc.node.output_size() > 1)
    nc.results.push_back(*logProb);
  return success();
}

void onnx_import::registerLossOps(OpRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", {13}, importNegativeLogLikelihoodLoss);
  r.add("SoftmaxCrossEntropyLoss", {13}, importSoftmaxCrossEntropyLoss);
}
