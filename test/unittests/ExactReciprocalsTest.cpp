//===- ExactReciprocalsTest.cpp - fp8-exact-reciprocals keeps every bit ---===//
//
// Part of fp8-opt. fp8-exact-reciprocals claims that x / s and the
// multiplication it writes instead round the same real for every scale it
// accepts. This test builds the scale computations the pipelines emit on
// constants (a power-of-two recipe's 1 / select(unusable, 1, bits & ~mantissa)
// and an E8M0 byte << 23), runs the pass on one copy, and lets the
// canonicalizer fold both copies with IEEE single-precision arithmetic
// (APFloat, no flushing): every quotient must be bit-identical, over
// exponents from one end of the range to the other, subnormal and special
// operands, and scales the pass must reject (mantissa bits left).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace mlir;

namespace {

class ExactReciprocalsTest : public ::testing::Test {
protected:
  ExactReciprocalsTest() {
    DialectRegistry registry;
    fp8::registerAllFP8Dialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Folds `module` to constants and returns the bits of what its one
  /// function returns.
  std::vector<uint32_t> foldedResults(ModuleOp module) {
    PassManager pm(&ctx);
    pm.addPass(createCanonicalizerPass());
    EXPECT_TRUE(succeeded(pm.run(module)));
    std::vector<uint32_t> bits;
    module.walk([&](func::ReturnOp ret) {
      for (Value v : ret.getOperands()) {
        auto c = v.getDefiningOp<arith::ConstantOp>();
        EXPECT_TRUE(c) << "a quotient did not fold";
        if (!c)
          continue;
        bits.push_back(static_cast<uint32_t>(cast<FloatAttr>(c.getValue())
                                                 .getValue()
                                                 .bitcastToAPInt()
                                                 .getZExtValue()));
      }
    });
    return bits;
  }

  MLIRContext ctx;
};

Value f32Const(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}
Value i32Const(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

bool sameResult(uint32_t a, uint32_t b) {
  float fa, fb;
  std::memcpy(&fa, &a, sizeof fa);
  std::memcpy(&fb, &b, sizeof fb);
  return a == b || (std::isnan(fa) && std::isnan(fb));
}

TEST_F(ExactReciprocalsTest, QuotientsKeepEveryBit) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {0.0f,    -0.0f,          1.0f,
                                 -1.5f,   3.14159274f,    447.9f,
                                 -1e-3f,  1e-40f,         -1.17549435e-38f,
                                 3.0e38f, -3.4028235e38f, 1.2345678e-20f,
                                 inf,     -inf,           nan};
  // Scales before rounding down to a power of two: every exponent, plus
  // subnormals, zero, infinities and NaN (which the mask turns into inf).
  std::vector<float> es = {
      0.0f, -0.0f, 1e-40f, 1e-45f,
      inf,  -inf,  nan,    std::numeric_limits<float>::max(),
      -3.0f};
  for (int k = -126; k <= 127; k += 3)
    es.push_back(std::ldexp(1.7f, k));

  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> resultTypes;
  auto func =
      func::FuncOp::create(b, loc, "quotients", b.getFunctionType({}, {}));
  b.setInsertionPointToEnd(func.addEntryBlock());
  SmallVector<Value> results;
  Value one = f32Const(b, loc, 1.0f);
  for (float e : es) {
    for (bool unusable : {false, true}) {
      // A power-of-two recipe's scale (FP8ToLinalg's compute_scale).
      Value bits =
          arith::BitcastOp::create(b, loc, b.getI32Type(), f32Const(b, loc, e));
      Value m =
          arith::AndIOp::create(b, loc, bits, i32Const(b, loc, 0xFF800000u));
      Value p = arith::BitcastOp::create(b, loc, b.getF32Type(), m);
      Value sel = arith::SelectOp::create(
          b, loc, arith::ConstantOp::create(b, loc, b.getBoolAttr(unusable)),
          one, p);
      Value s = arith::DivFOp::create(b, loc, one, sel);
      for (float x : xs)
        results.push_back(
            arith::DivFOp::create(b, loc, f32Const(b, loc, x), s));
    }
  }
  // E8M0 bytes decoded in place, each dividing every x.
  for (uint32_t byte : {0u, 1u, 2u, 100u, 127u, 200u, 253u, 254u, 255u}) {
    Value bits = arith::ShLIOp::create(b, loc, i32Const(b, loc, byte),
                                       i32Const(b, loc, 23));
    Value s = arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
    for (float x : xs)
      results.push_back(arith::DivFOp::create(b, loc, f32Const(b, loc, x), s));
  }
  for (Value r : results)
    resultTypes.push_back(r.getType());
  func::ReturnOp::create(b, loc, results);
  func.setType(b.getFunctionType({}, resultTypes));

  OwningOpRef<ModuleOp> rewritten(cast<ModuleOp>(module->clone()));
  PassManager pm(&ctx);
  pm.addPass(fp8::createFP8ExactReciprocals());
  ASSERT_TRUE(succeeded(pm.run(*rewritten)));
  // The pass must have rewritten the divisions it claims (all but the
  // reciprocals themselves).
  unsigned left = 0;
  rewritten->walk([&](arith::DivFOp div) {
    auto c = div.getLhs().getDefiningOp<arith::ConstantOp>();
    if (!c || !cast<FloatAttr>(c.getValue()).getValue().isExactlyValue(1.0))
      ++left;
  });
  EXPECT_EQ(left, 0u) << "divisions the pass should have rewritten";

  std::vector<uint32_t> expected = foldedResults(module);
  std::vector<uint32_t> actual = foldedResults(*rewritten);
  ASSERT_EQ(expected.size(), results.size());
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(sameResult(expected[i], actual[i]))
        << "quotient " << i << ": 0x" << std::hex << expected[i] << " became 0x"
        << actual[i];
  module->erase();
}

// A divisor that keeps a mantissa bit (so its reciprocal may round) is left
// alone: were it rewritten, some quotient would change.
TEST_F(ExactReciprocalsTest, InexactScalesStay) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, loc, "inexact", b.getFunctionType({}, {}));
  b.setInsertionPointToEnd(func.addEntryBlock());
  Value one = f32Const(b, loc, 1.0f);
  Value bits =
      arith::BitcastOp::create(b, loc, b.getI32Type(), f32Const(b, loc, 3.0f));
  Value m = arith::AndIOp::create(b, loc, bits, i32Const(b, loc, 0xFFC00000u));
  Value p = arith::BitcastOp::create(b, loc, b.getF32Type(), m);
  Value s = arith::DivFOp::create(b, loc, one, p);
  Value q = arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0f), s);
  Value r = arith::DivFOp::create(b, loc, f32Const(b, loc, 5.0f), s);
  func::ReturnOp::create(b, loc, ValueRange{q, r});
  func.setType(b.getFunctionType({}, {q.getType(), r.getType()}));
  PassManager pm(&ctx);
  pm.addPass(fp8::createFP8ExactReciprocals());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  unsigned products = 0;
  module->walk([&](arith::MulFOp) { ++products; });
  EXPECT_EQ(products, 0u);
}

} // namespace
