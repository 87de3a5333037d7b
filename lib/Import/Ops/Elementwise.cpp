//===- Elementwise.cpp - Element-wise ONNX ops ----------------------------===//
//
// Part of fp8-opt. Arithmetic, math, comparison and logic ops (one
// linalg.generic each, folded for small constant inputs), the variadic
// Sum/Mean/Max/Min, Mod, Sign, Clip, Cast/CastLike (FP8 targets with
// `saturate`), IsNaN/IsInf, and the pass-through Identity and Dropout.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

static LogicalResult importIdentity(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  nc.results.push_back(nc.in(0));
  return success();
}

static LogicalResult importDropout(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 3)))
    return failure();
  if (nc.wantsOutput(1))
    return nc.error() << "the mask output is not supported (inference only)";
  if (Value train = nc.in(2)) {
    std::optional<Lit> t = nc.imp.getLit(train);
    if (!t || t->ints.empty() || t->ints[0] != 0)
      return nc.error() << "training_mode must be a constant false";
  }
  nc.results.push_back(nc.in(0));
  return success();
}

/// Cast of input #0 to `t` (`outUns`: the ONNX target type is unsigned).
static LogicalResult castTo(NodeContext &nc, Type t, bool outUns) {
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  bool inUns = imp.isUnsigned(x);
  bool saturate = nc.attrInt("saturate", 1) != 0;
  bool toF8 = isa<Float8E4M3FNType, Float8E5M2Type>(t);
  Type inT = Importer::elemOf(x);
  Value r;
  std::optional<Lit> sizes = imp.getSymLit(x);
  if (!toF8 && (imp.getConst(x) || (sizes && sizes->isSymbolic()))) {
    FailureOr<Value> f = imp.elementwise(nc, EwKind::Cast, {x}, t);
    if (failed(f))
      return failure();
    r = *f;
  } else {
    r = imp.generic(
        nc.loc, {x}, imp.symShape(x), t,
        [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
          Value v = a[0];
          if (toF8) {
            // Through FP32 (exact for every ONNX input type but f64 and
            // large integers), then Cast's FP8 table with `saturate`.
            if (!isa<FloatType>(inT))
              v = Importer::castScalar(bb, l, v, inUns, bb.getF32Type(), false);
            return toFloat8(bb, l, v, t, saturate);
          }
          return Importer::castScalar(bb, l, v, inUns, t, outUns);
        });
  }
  if (outUns)
    imp.unsignedValues.insert(r);
  else
    imp.unsignedValues.erase(r);
  nc.results.push_back(r);
  return success();
}

static LogicalResult importCast(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  int to = nc.attrInt("to", 0);
  Type t = nc.imp.elementType(to);
  if (!t)
    return nc.error() << "unsupported target type " << Importer::onnxTypeName(to);
  return castTo(nc, t, Importer::isUnsignedONNXType(to));
}

/// CastLike (opset 15): Cast to the element type of input #1.
static LogicalResult importCastLike(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  return castTo(nc, Importer::elemOf(nc.in(1)), nc.imp.isUnsigned(nc.in(1)));
}

/// Clip (opset 11+): optional scalar `min` and `max` inputs; max(x, min)
/// then min(., max), so min > max yields max as in the reference.
static LogicalResult importClip(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 3)))
    return failure();
  Value r = nc.in(0);
  for (auto [i, kind] : {std::pair<size_t, EwKind>{1, EwKind::Max},
                         std::pair<size_t, EwKind>{2, EwKind::Min}}) {
    Value bound = nc.in(i);
    if (!bound)
      continue;
    if (!Importer::shapeOf(bound).empty())
      return nc.error() << "min/max must be scalars, got " << bound.getType();
    FailureOr<Value> v = nc.imp.elementwise(nc, kind, {r, bound});
    if (failed(v))
      return failure();
    r = *v;
  }
  nc.results.push_back(r);
  return success();
}

/// Sign: 1, -1 or 0 (NaN stays NaN: x * 0 where x is neither above nor
/// below 0).
static LogicalResult importSign(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (et.isInteger(1))
    return nc.error() << "bool input is not supported";
  auto ew = [&](EwKind k, ArrayRef<Value> ins) { return imp.elementwise(nc, k, ins); };
  Value zero = scalarTensor(nc, et, 0), one = scalarTensor(nc, et, 1);
  FailureOr<Value> pos = ew(EwKind::Greater, {x, zero});
  FailureOr<Value> neg = ew(EwKind::Less, {x, zero});
  FailureOr<Value> rest = ew(EwKind::Mul, {x, zero});
  if (failed(pos) || failed(neg) || failed(rest))
    return failure();
  Value minusOne = imp.isUnsigned(x) ? zero : scalarTensor(nc, et, -1);
  FailureOr<Value> lower = ew(EwKind::Where, {*neg, minusOne, *rest});
  if (failed(lower))
    return failure();
  FailureOr<Value> r = ew(EwKind::Where, {*pos, one, *lower});
  if (failed(r))
    return failure();
  nc.results.push_back(*r);
  return success();
}

//===----------------------------------------------------------------------===//
// Float predicates and activations
//===----------------------------------------------------------------------===//

/// IsNaN (opsets 13, 20) and IsInf (10, 20; detect_positive/detect_negative):
/// bool tensors, folded for constant inputs.
static LogicalResult importFloatClass(NodeContext &nc, bool isNaN) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (!isa<FloatType>(et))
    return nc.error() << "expects a floating-point input, got " << x.getType();
  bool pos = nc.attrInt("detect_positive", 1) != 0;
  bool neg = nc.attrInt("detect_negative", 1) != 0;
  auto test = [&](double v) {
    if (isNaN)
      return std::isnan(v);
    return std::isinf(v) && (v > 0 ? pos : neg);
  };
  if (std::optional<Lit> lit = imp.getLit(x); lit && lit->size() <= 4096) {
    Lit out;
    out.shape = lit->shape;
    out.elemType = imp.b.getI1Type();
    for (double v : lit->floats)
      out.ints.push_back(test(v));
    nc.results.push_back(imp.litConstant(nc.loc, out));
    return success();
  }
  nc.results.push_back(imp.generic(
      nc.loc, {x}, imp.symShape(x), imp.b.getI1Type(),
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        if (isNaN)
          return arith::CmpFOp::create(bb, l, arith::CmpFPredicate::UNO, a[0],
                                       a[0]);
        const llvm::fltSemantics &sem = cast<FloatType>(et).getFloatSemantics();
        auto inf = [&](bool negative) {
          return arith::ConstantOp::create(
              bb, l, bb.getFloatAttr(et, APFloat::getInf(sem, negative)));
        };
        Value r = arith::ConstantOp::create(bb, l, bb.getBoolAttr(false));
        if (pos)
          r = arith::OrIOp::create(
              bb, l, r,
              arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ, a[0], inf(false)));
        if (neg)
          r = arith::OrIOp::create(
              bb, l, r,
              arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ, a[0], inf(true)));
        return r;
      }));
  return success();
}

/// Pow. A floating-point base squared by a constant exponent 2 (every
/// element; a scalar or all-ones shape, so the result keeps the base's
/// shape) is imported as x * x: powf rounds x^2 once, as the product does,
/// so the value is the same -- except where libm's or libdevice's powf is
/// not correctly rounded -- and it is what onnxruntime computes for this
/// exponent. RMSNorm's Pow(x, 2) would otherwise expand into ~60 device
/// instructions per element (exp2/log2 with range reduction).
static LogicalResult importPow(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Value base = nc.in(0), exp = nc.in(1);
  auto baseT = dyn_cast<RankedTensorType>(base.getType());
  std::optional<Lit> e = nc.imp.getLit(exp);
  bool square = baseT && isa<FloatType>(baseT.getElementType()) && e &&
                e->isFloat() && !e->floats.empty() &&
                static_cast<int64_t>(e->shape.size()) <= baseT.getRank() &&
                llvm::all_of(e->shape, [](int64_t d) { return d == 1; }) &&
                llvm::all_of(e->floats, [](double v) { return v == 2.0; });
  FailureOr<Value> r = square
                           ? nc.imp.elementwise(nc, EwKind::Mul, {base, base})
                           : nc.imp.elementwise(nc, EwKind::Pow, nc.inputs);
  if (failed(r))
    return failure();
  nc.results.push_back(*r);
  return success();
}

void onnx_import::registerElementwiseOps(OpRegistry &r) {
  // Every handler here builds through Importer::elementwise/generic, which
  // take dynamic dimensions.
  constexpr ShapeSupport dyn = ShapeSupport::Dynamic;
  struct Ew {
    const char *name;
    EwKind kind;
    size_t arity;
    SmallVector<int, 4> versions;
  };
  for (Ew e : std::initializer_list<Ew>{
           {"Add", EwKind::Add, 2, {13, 14}},
           {"Sub", EwKind::Sub, 2, {13, 14}},
           {"Mul", EwKind::Mul, 2, {13, 14}},
           {"Div", EwKind::Div, 2, {13, 14}},
           {"Neg", EwKind::Neg, 1, {13}},
           {"Abs", EwKind::Abs, 1, {13}},
           {"Sqrt", EwKind::Sqrt, 1, {13}},
           {"Reciprocal", EwKind::Reciprocal, 1, {13}},
           {"Erf", EwKind::Erf, 1, {13}},
           {"Tanh", EwKind::Tanh, 1, {13}},
           {"Sigmoid", EwKind::Sigmoid, 1, {13}},
           {"Relu", EwKind::Relu, 1, {13, 14}},
           {"Exp", EwKind::Exp, 1, {13}},
           {"Log", EwKind::Log, 1, {13}},
           {"Floor", EwKind::Floor, 1, {13}},
           {"Ceil", EwKind::Ceil, 1, {13}},
           {"Sin", EwKind::Sin, 1, {7}},
           {"Cos", EwKind::Cos, 1, {7}},
           {"Tan", EwKind::Tan, 1, {7}},
           {"Asin", EwKind::Asin, 1, {7}},
           {"Acos", EwKind::Acos, 1, {7}},
           {"Atan", EwKind::Atan, 1, {7}},
           {"Sinh", EwKind::Sinh, 1, {9}},
           {"Cosh", EwKind::Cosh, 1, {9}},
           {"Asinh", EwKind::Asinh, 1, {9}},
           {"Acosh", EwKind::Acosh, 1, {9}},
           {"Atanh", EwKind::Atanh, 1, {9}},
           {"Round", EwKind::Round, 1, {11}},
           {"Softsign", EwKind::Softsign, 1, {1}},
           {"Equal", EwKind::Equal, 2, {13, 19}},
           {"Greater", EwKind::Greater, 2, {13}},
           {"GreaterOrEqual", EwKind::GreaterOrEqual, 2, {12, 16}},
           {"Less", EwKind::Less, 2, {13}},
           {"LessOrEqual", EwKind::LessOrEqual, 2, {12, 16}},
           {"And", EwKind::And, 2, {7}},
           {"Or", EwKind::Or, 2, {7}},
           {"Xor", EwKind::Xor, 2, {7}},
           {"Not", EwKind::Not, 1, {1}},
           {"Where", EwKind::Where, 3, {9, 16}},
       })
    r.add(e.name, e.versions, elementwiseHandler(e.kind, e.arity), dyn);
  r.add("Pow", {13, 15}, importPow, dyn);
  r.add("Sign", {13}, importSign, dyn);
  r.add("Sum", {13}, variadicHandler(EwKind::Add), dyn);
  r.add("Mean", {13}, [](NodeContext &nc) -> LogicalResult {
    if (failed(variadicHandler(EwKind::Add)(nc)))
      return failure();
    Value sum = nc.results.pop_back_val();
    if (!isa<FloatType>(Importer::elemOf(sum)))
      return nc.error() << "expects floating-point inputs";
    auto r = nc.imp.elementwise(
        nc, EwKind::Div,
        {sum, scalarTensor(nc, Importer::elemOf(sum), nc.numInputs())});
    if (failed(r))
      return failure();
    nc.results.push_back(*r);
    return success();
  }, dyn);
  r.add("Max", {13}, variadicHandler(EwKind::Max), dyn);
  r.add("Min", {13}, variadicHandler(EwKind::Min), dyn);
  r.add("Mod", {13}, [](NodeContext &nc) -> LogicalResult {
    if (nc.attrInt("fmod", 0) == 0 && nc.in(0) &&
        isa<FloatType>(Importer::elemOf(nc.in(0))))
      return nc.error() << "fmod=0 is only defined for integer inputs";
    // fmod=1 is C's fmod (sign of the dividend); fmod=0 takes the divisor's.
    return elementwiseHandler(
        nc.attrInt("fmod", 0) ? EwKind::FMod : EwKind::Mod, 2)(nc);
  }, dyn);
  r.add("Identity", {13, 14, 16, 19, 21}, importIdentity, dyn);
  r.add("Dropout", {13}, importDropout, dyn);
  r.add("Cast", {13, 19, 21}, importCast, dyn);
  r.add("CastLike", {15, 19, 21}, importCastLike, dyn);
  r.add("Clip", {13}, importClip, dyn);
  r.add("IsNaN", {13, 20},
        [](NodeContext &nc) { return importFloatClass(nc, true); }, dyn);
  r.add("IsInf", {10, 20},
        [](NodeContext &nc) { return importFloatClass(nc, false); }, dyn);
}
