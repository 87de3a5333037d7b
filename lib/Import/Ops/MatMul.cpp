//===- MatMul.cpp - MatMul and Gemm ---------------------------------------===//
//
// Part of fp8-opt. MatMul (numpy batch broadcasting, 1-D operands; FP16
// and BF16 products accumulate in FP32) and Gemm (transA/transB, alpha,
// beta, bias), both through Importer::matmul.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

/// A product whose contraction has one element is an outer product:
/// `a[..., M, 1] * b[..., 1, N]` with numpy broadcasting -- the same values
/// (one rounding of one product, as the FP32-accumulated matmul gives) as
/// an element-wise Mul, not a contraction. Imported so, no recipe or
/// high-precision policy takes it for a linear layer: the exporters'
/// rotary embedding (`inv_freq[:, None] @ positions[None, :]`) quantized
/// to FP8 or BF16 put positions up to 8191 on 3 or 8 mantissa bits.
/// (1-D operands were promoted to [1, K] / [K, 1] by the caller.)
static Value outerProduct(NodeContext &nc, Value a, Value bm) {
  FailureOr<Value> r = nc.imp.elementwise(nc, EwKind::Mul, {a, bm});
  return succeeded(r) ? *r : Value();
}

/// Importer::matmul with dynamic dimensions: the same structure (batch
/// folded into M against a 2-D right operand, else broadcast batch dims
/// and one batch_matmul) on sizes known symbolically; the contraction and
/// batch sizes must agree (equal at run time).
static Value matmulDynamic(NodeContext &nc, Value a, Value bm) {
  Importer &imp = nc.imp;
  const ShapeSymbols &symbols = imp.symbols;
  Location loc = nc.loc;
  OpBuilder &b = imp.b;
  bool aVec = Importer::shapeOf(a).size() == 1,
       bVec = Importer::shapeOf(bm).size() == 1;
  if (aVec)
    a = imp.reshape(loc, a, SymShape{1, imp.symShape(a)[0]});
  if (bVec)
    bm = imp.reshape(loc, bm, SymShape{imp.symShape(bm)[0], 1});
  SymShape sa = imp.symShape(a), sb = imp.symShape(bm);
  SymExpr m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  std::string what = "contraction dimensions differ: " + imp.describe(a) +
                     " x " + imp.describe(bm);
  if (failed(imp.requireEqual(nc, k, sb[sb.size() - 2], what)))
    return {};
  Type et = Importer::elemOf(a);
  if (Importer::elemOf(bm) != et) {
    nc.error() << "operand element types differ: " << et << " vs "
               << Importer::elemOf(bm);
    return {};
  }
  // Drops the unit dims that promoted 1-D operands.
  auto unpromote = [&](Value r) -> Value {
    if (!r || !(aVec || bVec))
      return r;
    SymShape s = imp.symShape(r);
    if (bVec)
      s.pop_back();
    if (aVec)
      s.erase(s.end() - (bVec ? 1 : 2));
    return imp.reshape(loc, r, s);
  };
  if (symbols.canonical(k).getConstant() == std::optional<int64_t>(1))
    return unpromote(outerProduct(nc, a, bm));
  const bool narrow = isa<Float16Type, BFloat16Type>(et);
  Type accType = narrow ? b.getF32Type() : et;
  TypedAttr zero = isa<FloatType>(et)
                       ? TypedAttr(b.getFloatAttr(accType, 0.0))
                       : TypedAttr(b.getIntegerAttr(et, 0));
  auto product = [&](ArrayRef<SymExpr> xs) {
    SymExpr p(1);
    for (const SymExpr &x : xs)
      p = p * x;
    return symbols.canonical(p);
  };
  SymShape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  SymShape outShape;
  Value r;
  if (batchB.empty()) {
    SymExpr rows = symbols.canonical(product(batchA) * m);
    Value a2 = imp.reshape(loc, a, SymShape{rows, k});
    Value acc = imp.filled(loc, SymShape{rows, n}, zero);
    Value mm = linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                        ValueRange{a2, bm}, ValueRange{acc})
                   .getResult(0);
    imp.withShape(mm, {rows, n});
    outShape = batchA;
    outShape.append({m, n});
    r = imp.reshape(loc, mm, outShape);
  } else {
    FailureOr<SymShape> batch = imp.broadcastSymShapes(nc, {batchA, batchB});
    if (failed(batch))
      return {};
    SymExpr nb = product(*batch);
    SymShape fullA = *batch, fullB = *batch;
    fullA.append({m, k});
    fullB.append({k, n});
    Value a3 = imp.reshape(loc, imp.broadcastTo(loc, a, fullA), SymShape{nb, m, k});
    Value b3 = imp.reshape(loc, imp.broadcastTo(loc, bm, fullB), SymShape{nb, k, n});
    Value acc = imp.filled(loc, SymShape{nb, m, n}, zero);
    Value mm = linalg::BatchMatmulOp::create(b, loc, TypeRange{acc.getType()},
                                             ValueRange{a3, b3},
                                             ValueRange{acc})
                   .getResult(0);
    imp.withShape(mm, {nb, m, n});
    outShape = *batch;
    outShape.append({m, n});
    r = imp.reshape(loc, mm, outShape);
  }
  if (narrow)
    r = imp.generic(loc, {r}, imp.symShape(r), et,
                    [&](OpBuilder &bb, Location l, ValueRange v) -> Value {
                      return arith::TruncFOp::create(bb, l, et, v[0]);
                    });
  return unpromote(r);
}

Value Importer::matmul(NodeContext &nc, Value a, Value bm) {
  if (isDynamic(a) || isDynamic(bm))
    return matmulDynamic(nc, a, bm);
  Location loc = nc.loc;
  bool aVec = shapeOf(a).size() == 1, bVec = shapeOf(bm).size() == 1;
  if (aVec)
    a = reshape(loc, a, ArrayRef<int64_t>{1, shapeOf(a)[0]});
  if (bVec)
    bm = reshape(loc, bm, ArrayRef<int64_t>{shapeOf(bm)[0], 1});
  ArrayRef<int64_t> sa = shapeOf(a), sb = shapeOf(bm);
  int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2],
          n = sb.back();
  if (k != k2) {
    nc.error() << "contraction dimensions differ: " << a.getType() << " x "
               << bm.getType();
    return {};
  }
  Type et = elemOf(a);
  if (elemOf(bm) != et) {
    nc.error() << "operand element types differ: " << et << " vs "
               << elemOf(bm);
    return {};
  }
  // Drops the unit dims that promoted 1-D operands.
  auto unpromote = [&](Value r) -> Value {
    if (!r || !(aVec || bVec))
      return r;
    SmallVector<int64_t> s(shapeOf(r));
    if (bVec)
      s.pop_back();
    if (aVec)
      s.erase(s.end() - (bVec ? 1 : 2));
    return reshape(loc, r, s);
  };
  if (k == 1)
    return unpromote(outerProduct(nc, a, bm));
  // FP16/BF16 products accumulate in FP32 (as cuBLAS, onnxruntime and
  // torch do; K-long sums in FP16 lose ~sqrt(K) ulps), then round once.
  const bool narrow = isa<Float16Type, BFloat16Type>(et);
  Type accType = narrow ? b.getF32Type() : et;
  TypedAttr zero = isa<FloatType>(et)
                       ? TypedAttr(b.getFloatAttr(accType, 0.0))
                       : TypedAttr(b.getIntegerAttr(et, 0));
  SmallVector<int64_t> batchA(sa.drop_back(2)), batchB(sb.drop_back(2));
  SmallVector<int64_t> outShape;
  Value r;
  if (batchB.empty()) {
    // [..., M, K] x [K, N]: fold the batch into M, one 2-D matmul.
    int64_t rows = numElements(batchA) * m;
    Value a2 = reshape(loc, a, ArrayRef<int64_t>{rows, k});
    Value acc = filled(loc, ArrayRef<int64_t>{rows, n}, zero);
    Value mm = linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                        ValueRange{a2, bm}, ValueRange{acc})
                   .getResult(0);
    outShape = batchA;
    outShape.append({m, n});
    r = reshape(loc, mm, outShape);
  } else {
    // Broadcast the batch dims, flatten them, one batch_matmul.
    SmallVector<int64_t> batch;
    size_t rank = std::max(batchA.size(), batchB.size());
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i + batchA.size() >= rank ? batchA[i + batchA.size() - rank] : 1;
      int64_t db = i + batchB.size() >= rank ? batchB[i + batchB.size() - rank] : 1;
      if (da != db && da != 1 && db != 1) {
        nc.error() << "batch dimensions are not broadcast-compatible: "
                   << a.getType() << " x " << bm.getType();
        return {};
      }
      // Not max: a 1 broadcasts to 0 (fuzzing: batch 0 x 1 gave 1).
      batch.push_back(da == 1 ? db : da);
    }
    int64_t nb = numElements(batch);
    SmallVector<int64_t> fullA = batch, fullB = batch;
    fullA.append({m, k});
    fullB.append({k, n});
    Value a3 = reshape(loc, broadcastTo(loc, a, fullA), ArrayRef<int64_t>{nb, m, k});
    Value b3 = reshape(loc, broadcastTo(loc, bm, fullB), ArrayRef<int64_t>{nb, k, n});
    Value acc = filled(loc, ArrayRef<int64_t>{nb, m, n}, zero);
    Value mm = linalg::BatchMatmulOp::create(b, loc, TypeRange{acc.getType()},
                                             ValueRange{a3, b3},
                                             ValueRange{acc})
                   .getResult(0);
    outShape = batch;
    outShape.append({m, n});
    r = reshape(loc, mm, outShape);
  }
  if (narrow)
    r = generic(loc, {r}, shapeOf(r), et,
                [&](OpBuilder &bb, Location l, ValueRange v) -> Value {
                  return arith::TruncFOp::create(bb, l, et, v[0]);
                });
  return unpromote(r);
}

static LogicalResult importMatMul(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  if (Importer::shapeOf(nc.in(0)).empty() || Importer::shapeOf(nc.in(1)).empty())
    return nc.error() << "operands must have rank >= 1";
  Value r = nc.imp.matmul(nc, nc.in(0), nc.in(1));
  if (!r)
    return failure();
  nc.results.push_back(r);
  return success();
}

static LogicalResult importGemm(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value a = nc.in(0), bm = nc.in(1);
  if (Importer::shapeOf(a).size() != 2 || Importer::shapeOf(bm).size() != 2)
    return nc.error() << "A and B must be 2-D, got " << a.getType() << " and "
                      << bm.getType();
  if (nc.attrInt("transA", 0))
    a = imp.transpose(nc.loc, a, {1, 0});
  if (nc.attrInt("transB", 0))
    bm = imp.transpose(nc.loc, bm, {1, 0});
  Value r = imp.matmul(nc, a, bm);
  if (!r)
    return failure();
  Type et = Importer::elemOf(r);
  float alpha = nc.attrFloat("alpha", 1.0f), beta = nc.attrFloat("beta", 1.0f);
  if (alpha != 1.0f) {
    auto m = imp.elementwise(nc, EwKind::Mul, {r, scalarTensor(nc, et, alpha)});
    if (failed(m))
      return failure();
    r = *m;
  }
  if (Value c = nc.in(2); c && beta != 0.0f) {
    if (beta != 1.0f) {
      auto m = imp.elementwise(nc, EwKind::Mul, {c, scalarTensor(nc, et, beta)});
      if (failed(m))
        return failure();
      c = *m;
    }
    auto s = imp.elementwise(nc, EwKind::Add, {r, c});
    if (failed(s))
      return failure();
    r = *s;
  }
  nc.results.push_back(r);
  return success();
}

void onnx_import::registerMatMulOps(OpRegistry &r) {
  r.add("MatMul", {13}, importMatMul, ShapeSupport::Dynamic);
  r.add("Gemm", {13}, importGemm, ShapeSupport::Dynamic);
}
