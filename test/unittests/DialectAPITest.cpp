//===- DialectAPITest.cpp - Building and folding fp8 IR from C++ ----------===//
//
// Part of fp8-opt. What an embedder does: build ops with the C++ builders,
// run the canonicalizer and read the folded constants back.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

namespace {
class DialectAPITest : public ::testing::Test {
protected:
  DialectAPITest() {
    DialectRegistry registry;
    registerAllFP8Dialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
  MLIRContext ctx;
};

TEST_F(DialectAPITest, RecipeInterface) {
  auto delayed = DelayedScalingAttr::get(&ctx, 16, AmaxAlgo::Max, 0, false);
  auto current = CurrentScalingAttr::get(&ctx, 0.0f, true);
  auto mx = MXScalingAttr::get(&ctx, E8M0Rounding::RCeil);
  auto r = cast<RecipeAttrInterface>(delayed);
  EXPECT_TRUE(r.usesHistory());
  EXPECT_EQ(r.getRecipeName(), "delayed");
  EXPECT_TRUE(cast<RecipeAttrInterface>(current).usesPowerOfTwoScales());
  EXPECT_TRUE(cast<RecipeAttrInterface>(mx).usesE8M0Scales());
}

// Builds amax -> compute_scale -> quantize on a constant and checks that the
// canonicalizer folds the chain to the FP8 constant the definitions give.
TEST_F(DialectAPITest, FoldsQuantizationOfConstants) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto f32 = b.getF32Type();
  auto f8 = b.getType<Float8E4M3FNType>();
  auto dataType = RankedTensorType::get({1, 4}, f32);
  auto qType = RankedTensorType::get({1, 4}, f8);
  auto scalar = RankedTensorType::get({}, f32);
  auto func = func::FuncOp::create(b, loc, "f",
                                   b.getFunctionType({}, {qType, scalar}));
  b.setInsertionPointToStart(func.addEntryBlock());
  auto data = DenseElementsAttr::get(dataType, ArrayRef<float>{1, -2, 3, 8});
  Value x = arith::ConstantOp::create(b, loc, data);
  auto perTensor = ScaleLayoutAttr::get(&ctx, Granularity::Tensor);
  Value amax = AmaxOp::create(b, loc, scalar, x, perTensor);
  Value scale = ComputeScaleOp::create(
      b, loc, scalar, amax, Value(),
      cast<RecipeAttrInterface>(CurrentScalingAttr::get(&ctx, 0.0f, false)),
      Format::E4M3);
  Value q = QuantizeOp::create(b, loc, qType, x, scale, perTensor);
  func::ReturnOp::create(b, loc, ValueRange{q, scale});
  ASSERT_TRUE(succeeded(verify(module)));

  PassManager pm(&ctx);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(module)));

  // amax 8 -> e = 56 -> s = 1/56; q = cast(x * 56).
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto qConst = ret.getOperand(0).getDefiningOp<arith::ConstantOp>();
  auto sConst = ret.getOperand(1).getDefiningOp<arith::ConstantOp>();
  ASSERT_TRUE(qConst && sConst);
  const float s = *cast<DenseElementsAttr>(sConst.getValue())
                       .getValues<float>()
                       .begin();
  EXPECT_EQ(s, 1.0f / 56.0f);
  SmallVector<uint8_t> expected;
  for (float v : {1.0f, -2.0f, 3.0f, 8.0f})
    expected.push_back(numerics::castToFP8(v / s, numerics::Fmt::E4M3));
  SmallVector<uint8_t> actual;
  for (APFloat v : cast<DenseElementsAttr>(qConst.getValue()).getValues<APFloat>())
    actual.push_back(v.bitcastToAPInt().getZExtValue());
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(actual[3], 0x7E); // 8 * 56 = 448 exactly
  module->erase();
}
} // namespace
