//===- ScaleLayoutTest.cpp - #fp8.layout shape rules ----------------------===//
//
// Part of fp8-opt. The C++ API that passes use to size scale tensors.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8;

namespace {
class ScaleLayoutTest : public ::testing::Test {
protected:
  ScaleLayoutTest() { ctx.loadDialect<FP8Dialect>(); }
  ScaleLayoutAttr layout(Granularity g, ArrayRef<int64_t> block = {}) {
    return ScaleLayoutAttr::get(&ctx, g, block);
  }
  MLIRContext ctx;
};

using Shape = SmallVector<int64_t>;

TEST_F(ScaleLayoutTest, ScaleShapes) {
  EXPECT_EQ(*layout(Granularity::Tensor).getScaleShape({4, 256}), Shape{});
  EXPECT_EQ(*layout(Granularity::Row).getScaleShape({4, 256}), (Shape{4, 1}));
  EXPECT_EQ(*layout(Granularity::Col).getScaleShape({4, 256}),
            (Shape{1, 256}));
  EXPECT_EQ(*layout(Granularity::Block, {1, 128}).getScaleShape({4, 256}),
            (Shape{4, 2}));
  // Non-divisible dimensions round up (the last block is partial).
  EXPECT_EQ(*layout(Granularity::Block, {1, 128}).getScaleShape({3, 130}),
            (Shape{3, 2}));
  EXPECT_EQ(*layout(Granularity::Block, {128, 128}).getScaleShape({130, 3}),
            (Shape{2, 1}));
  // Leading (batch) dimensions keep one scale per index.
  EXPECT_EQ(*layout(Granularity::Block, {32}).getScaleShape({2, 8, 64}),
            (Shape{2, 8, 2}));
  // Dynamic dims stay dynamic where blocks split them.
  EXPECT_EQ(*layout(Granularity::Row).getScaleShape({ShapedType::kDynamic, 64}),
            (Shape{ShapedType::kDynamic, 1}));
  EXPECT_EQ(*layout(Granularity::Block, {1, 128})
                 .getScaleShape({4, ShapedType::kDynamic}),
            (Shape{4, ShapedType::kDynamic}));
}

TEST_F(ScaleLayoutTest, RankMismatch) {
  EXPECT_TRUE(failed(layout(Granularity::Col).getScaleShape({8})));
  EXPECT_TRUE(
      failed(layout(Granularity::Block, {1, 1, 32}).getScaleShape({8, 32})));
}

TEST_F(ScaleLayoutTest, ExpandedBlocks) {
  EXPECT_EQ(*layout(Granularity::Row).getExpandedBlock({4, 256}),
            (Shape{1, 256}));
  EXPECT_EQ(*layout(Granularity::Col).getExpandedBlock({4, 256}),
            (Shape{4, 1}));
  EXPECT_EQ(*layout(Granularity::Block, {128}).getExpandedBlock({2, 4, 256}),
            (Shape{1, 1, 128}));
}

TEST_F(ScaleLayoutTest, VerifyScaleType) {
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto f32 = Float32Type::get(&ctx);
  auto data = RankedTensorType::get({4, 256}, f32);
  auto l = layout(Granularity::Block, {1, 128});
  auto emit = [&] { return emitError(UnknownLoc::get(&ctx)); };
  EXPECT_TRUE(succeeded(
      l.verifyScaleType(emit, data, RankedTensorType::get({4, 2}, f32))));
  EXPECT_TRUE(failed(
      l.verifyScaleType(emit, data, RankedTensorType::get({4, 3}, f32))));
  EXPECT_NE(message.find("expected 4x2"), std::string::npos) << message;
}

TEST_F(ScaleLayoutTest, AttributeVerifier) {
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto emit = [&] { return emitError(UnknownLoc::get(&ctx)); };
  EXPECT_FALSE(ScaleLayoutAttr::getChecked(emit, &ctx, Granularity::Block,
                                           ArrayRef<int64_t>{}));
  EXPECT_FALSE(ScaleLayoutAttr::getChecked(emit, &ctx, Granularity::Row,
                                           ArrayRef<int64_t>{4}));
  EXPECT_FALSE(ScaleLayoutAttr::getChecked(emit, &ctx, Granularity::Block,
                                           ArrayRef<int64_t>{0, 4}));
}
} // namespace
