//===- Quantize.cpp - QuantizeLinear and DequantizeLinear -----------------===//
//
// Part of fp8-opt. QuantizeLinear and DequantizeLinear: per-tensor,
// per-axis and blocked (opset 21) scales, integer and FP8 types.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// The scale and zero point of QuantizeLinear/DequantizeLinear, checked
/// against the input shape `s`, with the indexing map that reads them from
/// the iteration space of the input:
///   per-tensor  scalar (or one element)        -> rank 0, map ()
///   per-axis    1-D [s[axis]]                  -> map (d_axis)
///   blocked     rank of x, s[axis] replaced by -> map (.., d_axis floordiv B, ..)
///               ceil(s[axis] / B) (opset 21, block_size = B; the last block
///               may be partial)
/// A zero point, when given, must have the scale's shape.
static LogicalResult quantOperands(NodeContext &nc, ArrayRef<int64_t> s,
                                   Value scale, Value zp,
                                   SmallVectorImpl<Value> &ins,
                                   SmallVectorImpl<AffineMap> &maps) {
  Importer &imp = nc.imp;
  int64_t rank = s.size();
  ArrayRef<int64_t> ss = Importer::shapeOf(scale);
  if (zp && Importer::shapeOf(zp) != ss)
    return nc.error() << "zero point shape " << dims(Importer::shapeOf(zp))
                      << " differs from scale shape " << dims(ss);
  int64_t block = nc.attrInt("block_size", 0);
  if (block < 0)
    return nc.error() << "block_size must be positive, got " << block;
  SmallVector<Value> operands{scale};
  if (zp)
    operands.push_back(zp);

  if (block > 0) {
    if (nc.version < 21)
      return nc.error() << "blocked quantization (block_size) needs opset 21, "
                           "the model has opset "
                        << imp.opset;
    if (static_cast<int64_t>(ss.size()) != rank)
      return nc.error() << "blocked quantization: scale has rank " << ss.size()
                        << " but the input has rank " << rank;
    FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 1), rank);
    if (failed(axis))
      return failure();
    SmallVector<int64_t> expected = llvm::to_vector(s);
    expected[*axis] = (s[*axis] + block - 1) / block;
    if (ss != ArrayRef<int64_t>(expected))
      return nc.error() << "blocked quantization: scale shape " << dims(ss)
                        << " does not match " << dims(expected) << " (input "
                        << dims(s) << ", axis " << *axis << ", block_size "
                        << block << ")";
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(d == *axis ? imp.b.getAffineDimExpr(d).floorDiv(block)
                                 : imp.b.getAffineDimExpr(d));
    for (Value v : operands) {
      ins.push_back(v);
      maps.push_back(AffineMap::get(rank, 0, exprs, imp.ctx));
    }
    return success();
  }

  if (ss.empty() || (ss.size() == 1 && ss[0] == 1)) {
    for (Value v : operands) {
      ins.push_back(imp.reshape(nc.loc, v, ArrayRef<int64_t>{}));
      maps.push_back(AffineMap::get(rank, 0, {}, imp.ctx));
    }
    return success();
  }
  if (ss.size() != 1)
    return nc.error() << "scale has rank " << ss.size()
                      << ": blocked quantization needs the block_size "
                         "attribute, per-axis a 1-D scale";
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  if (ss[0] != s[*axis])
    return nc.error() << "scale has " << ss[0]
                      << " elements but the quantization axis " << *axis
                      << " has " << s[*axis];
  for (Value v : operands) {
    ins.push_back(v);
    maps.push_back(AffineMap::get(rank, 0, imp.b.getAffineDimExpr(*axis)));
  }
  return success();
}

/// A linalg.generic over the shape of `ins[0]` (identity map) reading the
/// other inputs through `maps`.
static Value quantGeneric(
    Importer &imp, Location loc, ArrayRef<Value> ins, ArrayRef<AffineMap> maps,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  ArrayRef<int64_t> s = Importer::shapeOf(ins[0]);
  int64_t rank = s.size();
  SmallVector<AffineMap> all{imp.b.getMultiDimIdentityMap(rank)};
  llvm::append_range(all, maps);
  all.push_back(imp.b.getMultiDimIdentityMap(rank));
  Value init = imp.emptyTensor(loc, s, outElem);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             imp.b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, all,
             iters,
             [&](OpBuilder &bb, Location l, ValueRange a) {
               linalg::YieldOp::create(bb, l, body(bb, l, a.drop_back()));
             })
      .getResult(0);
}

/// A float8 zero point must be (a constant) zero: the reference
/// implementation does not apply it.
static LogicalResult checkFloat8ZeroPoint(NodeContext &nc, Value zp) {
  if (!zp || !isFloat8(Importer::elemOf(zp)))
    return success();
  std::optional<Lit> z = nc.imp.getLit(zp);
  if (!z)
    return nc.error() << "a float8 zero point must be a constant";
  if (llvm::any_of(z->floats, [](double d) { return d != 0.0; }))
    return nc.error() << "a float8 zero point must be zero";
  return success();
}

/// QuantizeLinear (opsets 13, 19, 21): y = saturate(round(x / scale) + zp)
/// for integers (round half to even, clamp to the type's range); float8:
/// y = cast(x / scale) with the `saturate` attribute (Cast's table).
static LogicalResult importQuantizeLinear(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), scale = nc.in(1), zp = nc.in(2);
  Type xt = Importer::elemOf(x);
  if (!isa<FloatType>(xt))
    return nc.error() << "input must be floating point";
  if (!isa<FloatType>(Importer::elemOf(scale)))
    return nc.error() << "scale must be floating point";
  Type qt;
  bool qUns;
  int outDt = nc.attrInt("output_dtype", 0);
  if (zp) {
    qt = Importer::elemOf(zp);
    qUns = imp.isUnsigned(zp);
    if (outDt && (imp.elementType(outDt) != qt ||
                  Importer::isUnsignedONNXType(outDt) != qUns))
      return nc.error() << "output_dtype " << Importer::onnxTypeName(outDt)
                        << " differs from the zero point's type "
                        << (isa<IntegerType>(qt)
                                ? (qUns ? "UINT" : "INT") +
                                      std::to_string(qt.getIntOrFloatBitWidth())
                                : [&] {
                                    std::string str;
                                    llvm::raw_string_ostream(str) << qt;
                                    return str;
                                  }());
  } else if (outDt) {
    qt = imp.elementType(outDt);
    qUns = Importer::isUnsignedONNXType(outDt);
    if (!qt)
      return nc.error() << "unsupported quantized type "
                        << Importer::onnxTypeName(outDt);
  } else {
    qt = imp.b.getI8Type();
    qUns = true;
  }
  bool fp8 = isFloat8(qt);
  if (!fp8 && !(isa<IntegerType>(qt) && qt.getIntOrFloatBitWidth() <= 16 &&
                !qt.isInteger(1)))
    return nc.error() << "unsupported quantized type " << qt;
  if (failed(checkFloat8ZeroPoint(nc, zp)))
    return failure();
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps;
  if (failed(quantOperands(nc, s, scale, fp8 ? Value() : zp, ins, maps)))
    return failure();
  bool saturate = nc.attrInt("saturate", 1) != 0;
  unsigned w = qt.getIntOrFloatBitWidth();
  double qmin = fp8 ? 0 : (qUns ? 0.0 : -std::ldexp(1.0, w - 1));
  double qmax = fp8 ? 0 : (qUns ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1);
  Value r = quantGeneric(
      imp, nc.loc, ins, maps, qt,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value sv = Importer::castScalar(bb, l, a[1], false, xt, false);
        Value v = arith::DivFOp::create(bb, l, a[0], sv);
        if (fp8)
          return toFloat8(bb, l, v, qt, saturate);
        auto cst = [&](double d) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(xt, d));
        };
        v = math::RoundEvenOp::create(bb, l, v);
        if (a.size() > 2)
          v = arith::AddFOp::create(
              bb, l, v, Importer::castScalar(bb, l, a[2], qUns, xt, false));
        v = arith::MinimumFOp::create(
            bb, l, arith::MaximumFOp::create(bb, l, v, cst(qmin)), cst(qmax));
        return Importer::castScalar(bb, l, v, false, qt, qUns);
      });
  if (qUns)
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

/// DequantizeLinear (opsets 13, 19, 21): y = (x - zp) * scale, in the
/// scale's type; float8 inputs are widened exactly.
static LogicalResult importDequantizeLinear(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), scale = nc.in(1), zp = nc.in(2);
  Type ft = Importer::elemOf(scale);
  if (!isa<FloatType>(ft))
    return nc.error() << "scale must be floating point";
  Type xt = Importer::elemOf(x);
  if (!isFloat8(xt) && !(isa<IntegerType>(xt) && !xt.isInteger(1)))
    return nc.error() << "unsupported quantized input type " << xt;
  if (zp && Importer::elemOf(zp) != xt)
    return nc.error() << "zero point type " << Importer::elemOf(zp)
                      << " differs from the input type " << xt;
  if (failed(checkFloat8ZeroPoint(nc, zp)))
    return failure();
  bool xUns = imp.isUnsigned(x);
  bool fp8 = isFloat8(xt);
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps;
  if (failed(quantOperands(nc, Importer::shapeOf(x), scale,
                           fp8 ? Value() : zp, ins, maps)))
    return failure();
  bool zpUns = zp && imp.isUnsigned(zp);
  Value r = quantGeneric(
      imp, nc.loc, ins, maps, ft,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value v = Importer::castScalar(bb, l, a[0], xUns, ft, false);
        if (a.size() > 2)
          v = arith::SubFOp::create(
              bb, l, v, Importer::castScalar(bb, l, a[2], zpUns, ft, false));
        return arith::MulFOp::create(bb, l, v, a[1]);
      });
  nc.results.push_back(r);
  return success();
}

void onnx_import::registerQuantizeOps(OpRegistry &r) {
  r.add("QuantizeLinear", {13, 19, 21}, importQuantizeLinear);
  r.add("DequantizeLinear", {13, 19, 21}, importDequantizeLinear);
}
