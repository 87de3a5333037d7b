//===- Activation.cpp - Activations with attributes -----------------------===//
//
// Part of fp8-opt. The activations ONNX defines with attributes
// (LeakyRelu, Elu, Selu, HardSigmoid, ...), composed from element-wise
// pieces, and Gelu (opset 20) as one linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

/// Gelu (opset 20): approximate = "none": 0.5 x (1 + erf(x / sqrt 2));
/// "tanh": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Computed in
/// f32 for narrower float types.
static LogicalResult importGelu(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (!isa<FloatType>(et))
    return nc.error() << "expects a floating-point input, got " << x.getType();
  std::string approx = nc.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return nc.error() << "unsupported approximate '" << approx
                      << "' (expected 'none' or 'tanh')";
  bool useTanh = approx == "tanh";
  nc.results.push_back(imp.generic(
      nc.loc, {x}, imp.symShape(x), et,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Type ct = et.getIntOrFloatBitWidth() < 32 ? bb.getF32Type() : et;
        Value v = Importer::castScalar(bb, l, a[0], false, ct, false);
        auto cst = [&](double d) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(ct, d));
        };
        Value inner;
        if (useTanh) {
          Value cube = arith::MulFOp::create(
              bb, l, v, arith::MulFOp::create(bb, l, v, v));
          Value sum = arith::AddFOp::create(
              bb, l, v, arith::MulFOp::create(bb, l, cst(0.044715), cube));
          inner = math::TanhOp::create(
              bb, l, arith::MulFOp::create(bb, l, cst(std::sqrt(2.0 / M_PI)), sum));
        } else {
          inner = math::ErfOp::create(
              bb, l, arith::MulFOp::create(bb, l, v, cst(M_SQRT1_2)));
        }
        Value onePlus = arith::AddFOp::create(bb, l, cst(1.0), inner);
        Value half = arith::MulFOp::create(bb, l, cst(0.5), v);
        Value r = arith::MulFOp::create(bb, l, half, onePlus);
        return Importer::castScalar(bb, l, r, false, et, false);
      }));
  return success();
}

namespace {

/// Builds activations that ONNX defines with attributes from element-wise
/// pieces (each one linalg.generic; later fusion merges them): `x` is the
/// float input, `c(v)` a scalar constant of its type, `ew` one element-wise
/// op.
class Composer {
public:
  explicit Composer(NodeContext &nc) : nc(nc) {}
  LogicalResult init() {
    x = nc.in(0);
    if (!x)
      return nc.error() << "expects an input";
    if (!isa<FloatType>(Importer::elemOf(x)))
      return nc.error() << "expects floating-point input, got "
                        << Importer::elemOf(x);
    return success();
  }
  Value c(double v) { return scalarTensor(nc, Importer::elemOf(x), v); }
  Value ew(EwKind k, ArrayRef<Value> ins) {
    if (failed(status))
      return {};
    FailureOr<Value> r = nc.imp.elementwise(nc, k, ins);
    if (failed(r)) {
      status = failure();
      return {};
    }
    return *r;
  }
  LogicalResult finish(Value result) {
    if (failed(status))
      return failure();
    nc.results.push_back(result);
    return success();
  }

  NodeContext &nc;
  Value x;
  LogicalResult status = success();
};

/// A handler from `body(composer)`, which returns the result.
Handler composed(std::function<Value(Composer &)> body) {
  return [body](NodeContext &nc) -> LogicalResult {
    Composer cp(nc);
    if (failed(cp.init()))
      return failure();
    Value r = body(cp);
    return cp.finish(r);
  };
}

} // namespace

void onnx_import::registerActivationOps(OpRegistry &r) {
  // Every activation is element-wise (composed or one generic).
  constexpr ShapeSupport dyn = ShapeSupport::Dynamic;
  using K = EwKind;
  // x < 0 ? alpha x : x
  r.add("LeakyRelu", {6, 16}, composed([](Composer &p) {
    Value x = p.x;
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}),
                           p.ew(K::Mul, {x, p.c(p.nc.attrFloat("alpha", 0.01f))}),
                           x});
  }), dyn);
  // x > alpha ? x : 0
  r.add("ThresholdedRelu", {10}, composed([](Composer &p) {
    Value x = p.x;
    return p.ew(K::Where,
                {p.ew(K::Greater, {x, p.c(p.nc.attrFloat("alpha", 1.0f))}), x,
                 p.c(0)});
  }), dyn);
  // max(0, min(1, a x + b))
  r.add("HardSigmoid", {6}, composed([](Composer &p) {
    Value y = p.ew(K::Add, {p.ew(K::Mul, {p.x, p.c(p.nc.attrFloat("alpha", 0.2f))}),
                            p.c(p.nc.attrFloat("beta", 0.5f))});
    return p.ew(K::Max, {p.c(0), p.ew(K::Min, {p.c(1), y})});
  }), dyn);
  // x max(0, min(1, x / 6 + 1/2))
  r.add("HardSwish", {14}, composed([](Composer &p) {
    Value y = p.ew(K::Add, {p.ew(K::Mul, {p.x, p.c(1.0 / 6.0)}), p.c(0.5)});
    return p.ew(K::Mul,
                {p.x, p.ew(K::Max, {p.c(0), p.ew(K::Min, {p.c(1), y})})});
  }), dyn);
  // Elu: x < 0 ? alpha (exp(x) - 1) : x; Selu: gamma times Elu(alpha).
  auto elu = [](Composer &p, double alpha) {
    Value x = p.x;
    Value neg = p.ew(K::Mul, {p.c(alpha), p.ew(K::Sub, {p.ew(K::Exp, {x}), p.c(1)})});
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}), neg, x});
  };
  r.add("Elu", {6}, composed([elu](Composer &p) {
    return elu(p, p.nc.attrFloat("alpha", 1.0f));
  }), dyn);
  r.add("Selu", {6}, composed([elu](Composer &p) {
    return p.ew(K::Mul, {p.c(p.nc.attrFloat("gamma", 1.05070102214813232421875f)),
                         elu(p, p.nc.attrFloat("alpha", 1.67326319217681884765625f))});
  }), dyn);
  // max(0,x) + min(0, a (exp(x/a) - 1))
  r.add("Celu", {12}, composed([](Composer &p) {
    const double a = p.nc.attrFloat("alpha", 1.0f);
    Value x = p.x;
    Value e = p.ew(K::Mul, {p.c(a), p.ew(K::Sub, {p.ew(K::Exp, {p.ew(K::Div, {x, p.c(a)})}),
                                                  p.c(1)})});
    return p.ew(K::Add, {p.ew(K::Max, {p.c(0), x}), p.ew(K::Min, {p.c(0), e})});
  }), dyn);
  r.add("Shrink", {9}, composed([](Composer &p) {
    // x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
    const double l = p.nc.attrFloat("lambd", 0.5f), b = p.nc.attrFloat("bias", 0.0f);
    Value x = p.x;
    Value upper = p.ew(K::Where, {p.ew(K::Greater, {x, p.c(l)}),
                                  p.ew(K::Sub, {x, p.c(b)}), p.c(0)});
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(-l)}), p.ew(K::Add, {x, p.c(b)}),
                           upper});
  }), dyn);
  // x < 0 ? slope x : x
  r.add("PRelu", {9, 16}, composed([](Composer &p) -> Value {
    Value slope = p.nc.in(1);
    if (!slope) {
      p.status = p.nc.error() << "expects a slope input";
      return {};
    }
    Value x = p.x;
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}), p.ew(K::Mul, {x, slope}), x});
  }), dyn);
  // ln(exp(x) + 1)
  r.add("Softplus", {1}, composed([](Composer &p) {
    return p.ew(K::Log, {p.ew(K::Add, {p.ew(K::Exp, {p.x}), p.c(1)})});
  }), dyn);
  r.add("Gelu", {20}, importGelu, dyn);
}
