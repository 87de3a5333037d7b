//===- ScalarBuilders.cpp - Scalar bodies of element-wise ops -------------===//
//
// Part of fp8-opt. The scalar code inside the importer's linalg.generic
// bodies: ONNX casts (castScalar) and the body of every element-wise op
// (buildScalar), with integer division that never traps.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

Value Importer::castScalar(OpBuilder &bb, Location loc, Value x, bool inUns,
                           Type to, bool outUns) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromF) {
      Value zero = arith::ConstantOp::create(bb, loc, bb.getFloatAttr(from, 0));
      return arith::CmpFOp::create(bb, loc, arith::CmpFPredicate::UNE, x, zero);
    }
    Value zero = arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(bb, loc, to, x);
    if (fromF.getWidth() > toF.getWidth())
      return arith::TruncFOp::create(bb, loc, to, x);
    // Same width, different format (f16 <-> bf16): go through f32.
    Value wide = arith::ExtFOp::create(bb, loc, bb.getF32Type(), x);
    return arith::TruncFOp::create(bb, loc, to, wide);
  }
  if (fromF)
    return outUns ? Value(arith::FPToUIOp::create(bb, loc, to, x))
                  : Value(arith::FPToSIOp::create(bb, loc, to, x));
  if (toF)
    return (inUns || from.isInteger(1))
               ? Value(arith::UIToFPOp::create(bb, loc, to, x))
               : Value(arith::SIToFPOp::create(bb, loc, to, x));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return (inUns || from.isInteger(1))
               ? Value(arith::ExtUIOp::create(bb, loc, to, x))
               : Value(arith::ExtSIOp::create(bb, loc, to, x));
  if (fw > tw)
    return arith::TruncIOp::create(bb, loc, to, x);
  return x;
}

/// Integer x / y or x % y that never traps: a zero divisor gives 0 (as
/// numpy; ONNX leaves it undefined, x86's idiv raises SIGFPE), and for
/// signed types INT_MIN / -1 wraps to INT_MIN (remainder 0) instead of
/// trapping. The divisor the hardware sees is never 0 or -1.
static Value intDivRem(OpBuilder &bb, Location loc, Value x, Value y,
                       bool isUnsigned, bool rem) {
  Type t = y.getType();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(t, v));
  };
  Value zero = cst(0), one = cst(1);
  Value isZero =
      arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq, y, zero);
  Value special = isZero, isNegOne;
  if (!isUnsigned) {
    isNegOne =
        arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq, y, cst(-1));
    special = arith::OrIOp::create(bb, loc, isZero, isNegOne);
  }
  Value safe = arith::SelectOp::create(bb, loc, special, one, y);
  Value r;
  if (rem)
    r = isUnsigned ? Value(arith::RemUIOp::create(bb, loc, x, safe))
                   : Value(arith::RemSIOp::create(bb, loc, x, safe));
  else
    r = isUnsigned ? Value(arith::DivUIOp::create(bb, loc, x, safe))
                   : Value(arith::DivSIOp::create(bb, loc, x, safe));
  // x / -1 = -x (wrapping); x % -1 = 0.
  if (!isUnsigned)
    r = arith::SelectOp::create(
        bb, loc, isNegOne,
        rem ? zero : Value(arith::SubIOp::create(bb, loc, zero, x)), r);
  return arith::SelectOp::create(bb, loc, isZero, zero, r);
}

Value Importer::buildScalar(OpBuilder &bb, Location loc, EwKind kind,
                            ValueRange a, Type outType,
                            ArrayRef<bool> uns) {
  Type inT = a[kind == EwKind::Where ? 1 : 0].getType();
  bool f = isa<FloatType>(inT);
  bool u = !uns.empty() && uns[0];
  auto fconst = [&](double v) {
    return arith::ConstantOp::create(bb, loc, bb.getFloatAttr(inT, v));
  };
  auto iconst = [&](int64_t v) {
    return arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(inT, v));
  };
  switch (kind) {
  case EwKind::Add:
    return f ? Value(arith::AddFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::AddIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Sub:
    return f ? Value(arith::SubFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::SubIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Mul:
    return f ? Value(arith::MulFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MulIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Div:
    if (f)
      return arith::DivFOp::create(bb, loc, a[0], a[1]);
    return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/false);
  case EwKind::FMod:
    if (f)
      return arith::RemFOp::create(bb, loc, a[0], a[1]);
    return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
  case EwKind::Mod: {
    if (f)
      return arith::RemFOp::create(bb, loc, a[0], a[1]);
    if (u)
      return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
    // ONNX integer Mod (fmod=0) takes the divisor's sign, like Python.
    Value r = intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
    Value zero = iconst(0);
    Value rNeg = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, r, zero);
    Value dNeg = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, a[1], zero);
    Value rNonZero = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ne, r, zero);
    Value differ = arith::XOrIOp::create(bb, loc, rNeg, dNeg);
    Value fix = arith::AndIOp::create(bb, loc, differ, rNonZero);
    Value adj = arith::AddIOp::create(bb, loc, r, a[1]);
    return arith::SelectOp::create(bb, loc, fix, adj, r);
  }
  case EwKind::Pow: {
    Value base = a[0], exp = a[1];
    if (!f) {
      Type f64 = bb.getF64Type();
      base = castScalar(bb, loc, base, u, f64, false);
      exp = castScalar(bb, loc, exp, false, f64, false);
      Value p = math::PowFOp::create(bb, loc, base, exp);
      return castScalar(bb, loc, p, false, inT, u);
    }
    if (exp.getType() != inT)
      exp = castScalar(bb, loc, exp, uns.size() > 1 && uns[1], inT, false);
    return math::PowFOp::create(bb, loc, base, exp);
  }
  case EwKind::Max:
    if (f)
      return arith::MaximumFOp::create(bb, loc, a[0], a[1]);
    return u ? Value(arith::MaxUIOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MaxSIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Min:
    if (f)
      return arith::MinimumFOp::create(bb, loc, a[0], a[1]);
    return u ? Value(arith::MinUIOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MinSIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Neg:
    return f ? Value(arith::NegFOp::create(bb, loc, a[0]))
             : Value(arith::SubIOp::create(bb, loc, iconst(0), a[0]));
  case EwKind::Abs:
    return f ? Value(math::AbsFOp::create(bb, loc, a[0]))
             : Value(math::AbsIOp::create(bb, loc, a[0]));
  case EwKind::Sqrt:
    return math::SqrtOp::create(bb, loc, a[0]);
  case EwKind::Reciprocal:
    return arith::DivFOp::create(bb, loc, fconst(1.0), a[0]);
  case EwKind::Erf:
    return math::ErfOp::create(bb, loc, a[0]);
  case EwKind::Tanh:
    return math::TanhOp::create(bb, loc, a[0]);
  case EwKind::Sigmoid: {
    Value neg = arith::NegFOp::create(bb, loc, a[0]);
    Value e = math::ExpOp::create(bb, loc, neg);
    Value den = arith::AddFOp::create(bb, loc, fconst(1.0), e);
    return arith::DivFOp::create(bb, loc, fconst(1.0), den);
  }
  case EwKind::Relu:
    return f ? Value(arith::MaximumFOp::create(bb, loc, a[0], fconst(0.0)))
             : Value(arith::MaxSIOp::create(bb, loc, a[0], iconst(0)));
  case EwKind::Exp:
    return math::ExpOp::create(bb, loc, a[0]);
  case EwKind::Log:
    return math::LogOp::create(bb, loc, a[0]);
  case EwKind::Floor:
    return math::FloorOp::create(bb, loc, a[0]);
  case EwKind::Ceil:
    return math::CeilOp::create(bb, loc, a[0]);
  case EwKind::Sin:
    return math::SinOp::create(bb, loc, a[0]);
  case EwKind::Cos:
    return math::CosOp::create(bb, loc, a[0]);
  case EwKind::Tan:
    return math::TanOp::create(bb, loc, a[0]);
  case EwKind::Asin:
    return math::AsinOp::create(bb, loc, a[0]);
  case EwKind::Acos:
    return math::AcosOp::create(bb, loc, a[0]);
  case EwKind::Atan:
    return math::AtanOp::create(bb, loc, a[0]);
  case EwKind::Sinh:
    return math::SinhOp::create(bb, loc, a[0]);
  case EwKind::Cosh:
    return math::CoshOp::create(bb, loc, a[0]);
  case EwKind::Asinh:
    return math::AsinhOp::create(bb, loc, a[0]);
  case EwKind::Acosh:
    return math::AcoshOp::create(bb, loc, a[0]);
  case EwKind::Atanh:
    return math::AtanhOp::create(bb, loc, a[0]);
  case EwKind::Round: // ONNX rounds half to even
    return math::RoundEvenOp::create(bb, loc, a[0]);
  case EwKind::Softsign: {
    Value den =
        arith::AddFOp::create(bb, loc, fconst(1.0), math::AbsFOp::create(bb, loc, a[0]));
    return arith::DivFOp::create(bb, loc, a[0], den);
  }
  case EwKind::Equal:
  case EwKind::Greater:
  case EwKind::GreaterOrEqual:
  case EwKind::Less:
  case EwKind::LessOrEqual: {
    if (f) {
      arith::CmpFPredicate p =
          kind == EwKind::Equal            ? arith::CmpFPredicate::OEQ
          : kind == EwKind::Greater        ? arith::CmpFPredicate::OGT
          : kind == EwKind::GreaterOrEqual ? arith::CmpFPredicate::OGE
          : kind == EwKind::Less           ? arith::CmpFPredicate::OLT
                                           : arith::CmpFPredicate::OLE;
      return arith::CmpFOp::create(bb, loc, p, a[0], a[1]);
    }
    arith::CmpIPredicate p =
        kind == EwKind::Equal ? arith::CmpIPredicate::eq
        : kind == EwKind::Greater
            ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
        : kind == EwKind::GreaterOrEqual
            ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
        : kind == EwKind::Less
            ? (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
            : (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
    return arith::CmpIOp::create(bb, loc, p, a[0], a[1]);
  }
  case EwKind::And:
    return arith::AndIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Or:
    return arith::OrIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Xor:
    return arith::XOrIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Not: {
    Value t = arith::ConstantOp::create(bb, loc, bb.getBoolAttr(true));
    return arith::XOrIOp::create(bb, loc, a[0], t);
  }
  case EwKind::Where:
    return arith::SelectOp::create(bb, loc, a[0], a[1], a[2]);
  case EwKind::Cast:
    return castScalar(bb, loc, a[0], u, outType, false);
  case EwKind::Identity:
    return a[0];
  }
  llvm_unreachable("unhandled element-wise kind");
}
