//===- GemmPlanTest.cpp - The FP8 GEMM heuristic and its verifier ---------===//
//
// Part of fp8-opt. chooseGemmConfig / verifyGemmConfig / SmemLayout
// (lib/Conversion/FP8ToGPU/Gemm) on hand-made problems: the 256-row tiles
// of block-scaled products, their staged scales, and the setmaxnreg counts
// a CTA may ask for.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"
#include "SmemLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8::gemm;

namespace {
class GemmPlanTest : public ::testing::Test {
protected:
  /// M x K x N, E4M3 operands, bf16 output; 1x128 activation and 128x128
  /// weight block scales (f32), or per-tensor scales.
  GemmProblem problem(int64_t m, int64_t k, int64_t n, bool block = true) {
    Builder b(&ctx);
    GemmProblem p;
    p.lhsType = p.rhsType = b.getType<Float8E4M3FNType>();
    p.outType = b.getBF16Type();
    p.m = m, p.k = k, p.n = n;
    auto side = [&](int64_t rows, int64_t rowBlock) {
      SideScale s;
      s.perTensor = !block;
      s.rowBlock = block ? rowBlock : 1;
      s.kBlock = block ? 128 : 1;
      s.numRowBlocks = block ? (rows + rowBlock - 1) / rowBlock : 1;
      s.numKBlocks = block ? (k + 127) / 128 : 1;
      s.elementType = b.getF32Type();
      return s;
    };
    p.lhsScale = side(m, 1);
    p.rhsScale = side(n, 128);
    p.promo = 128;
    return p;
  }
  GemmOptions options() {
    GemmOptions o;
    o.tmaPipeline = true;
    return o;
  }
  /// chooseGemmConfig's configuration of `p`, which verifyGemmConfig must
  /// accept.
  GemmConfig verified(const GemmProblem &p, const GemmOptions &o) {
    GemmConfig c = chooseGemmConfig(p, o);
    std::string why;
    EXPECT_TRUE(succeeded(verifyGemmConfig(p, c, why))) << why;
    return c;
  }
  MLIRContext ctx;
};

TEST_F(GemmPlanTest, BlockScalesTake256RowTilesWithStagedScales) {
  // K = 14336 (the down projection): two bands (192 rows only to K = 8192).
  GemmConfig c = verified(problem(8192, 14336, 4096), options());
  EXPECT_EQ(c.bm, 256);
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.mWaves, 2);
  // With staged scales 64/216 (56/224 spilled 4 bytes in ptxas).
  EXPECT_EQ(c.producerRegisters, 64);
  EXPECT_EQ(c.consumerRegisters, 216);
  // 256 row scales and the tile's one column-block scale per K tile.
  EXPECT_EQ(c.stagedScales.lhsRows, 256);
  EXPECT_TRUE(c.stagedScales.rhs);
  EXPECT_EQ(c.stagedScales.count(), 257);
  EXPECT_EQ(c.stages, 3);
  EXPECT_EQ(c.epilogue, EpilogueKind::SharedTMA);
  SmemLayout l = SmemLayout::get(c);
  EXPECT_EQ(l.scaleOffset, 3 * 49152);
  EXPECT_EQ(l.scaleStageBytes, 1040);
  // The staging tile starts on a 1024-byte swizzle atom after the scales.
  EXPECT_EQ(l.storeOffset, 151552);
  EXPECT_LE(l.totalBytes, kMaxSmemBytes);
}

TEST_F(GemmPlanTest, ThreeConsumersForBlockScalesUpToK8192) {
  // 8192 x 4096 x 4096: 11 rounds of 192-row tiles (11 x 192 / 1.18 =
  // 1790) against 8 of 256 (8 x 256 / 1.1 = 1862) and 16 of 128.
  GemmProblem p = problem(8192, 4096, 4096);
  GemmConfig c = verified(p, options());
  EXPECT_EQ(c.bm, 192);
  EXPECT_EQ(c.consumerWarpgroups, 3);
  EXPECT_EQ(c.mWaves, 1);
  EXPECT_EQ(c.threads(), 512);
  // 32 + 3 x 160 = the 4 x 128 registers a 512-thread CTA is launched with.
  EXPECT_EQ(c.producerRegisters, 32);
  EXPECT_EQ(c.consumerRegisters, 160);
  EXPECT_EQ(c.stagedScales.count(), 193);
  EXPECT_EQ(c.stages, 4);
  EXPECT_EQ(c.epilogue, EpilogueKind::SharedTMA);
  EXPECT_LE(SmemLayout::get(c).totalBytes, kMaxSmemBytes);
  // The gate+up (N = 28672) and QKV (N = 6144) products and 8192^3 too;
  // 4096^3 keeps 256 rows (6 rounds of 192 rows cost more than 4 of 256),
  // K = 14336 too (measured slower there).
  EXPECT_EQ(chooseGemmConfig(problem(8192, 4096, 28672), options()).bm, 192);
  EXPECT_EQ(chooseGemmConfig(problem(8192, 4096, 6144), options()).bm, 192);
  EXPECT_EQ(chooseGemmConfig(problem(8192, 8192, 8192), options()).bm, 192);
  EXPECT_EQ(chooseGemmConfig(problem(4096, 4096, 4096), options()).bm, 256);
  EXPECT_EQ(chooseGemmConfig(problem(8192, 14336, 4096), options()).bm, 256);
  // Only with staged scales (unstaged three consumers measured slower).
  GemmOptions o = options();
  o.stageScales = false;
  EXPECT_EQ(chooseGemmConfig(p, o).bm, 256);
  // tile-m=192 forces them, past K = 8192 with 40/152 (the producer spilled
  // at 32); one more register each is more than the CTA was launched with.
  o = options();
  o.tileM = 192;
  GemmConfig forced = verified(problem(8192, 14336, 4096), o);
  EXPECT_EQ(forced.bm, 192);
  EXPECT_EQ(forced.producerRegisters, 40);
  EXPECT_EQ(forced.consumerRegisters, 152);
  std::string why;
  c.consumerRegisters = 168;
  EXPECT_TRUE(failed(verifyGemmConfig(p, c, why)));
  EXPECT_NE(why.find("setmaxnreg"), std::string::npos) << why;
  // Three consumers with two bands each are not served.
  c = chooseGemmConfig(p, options());
  c.mWaves = 2;
  c.bm = 384;
  EXPECT_TRUE(failed(verifyGemmConfig(p, c, why)));
}

TEST_F(GemmPlanTest, WordDescriptorsExceptUnstagedBands) {
  // Staged scales (two bands or three consumers) and per-tensor scales:
  // each wgmma's descriptors are one 32-bit add to the stage base's word.
  EXPECT_TRUE(verified(problem(8192, 14336, 4096), options()).wordDescriptors);
  EXPECT_TRUE(verified(problem(8192, 4096, 4096), options()).wordDescriptors);
  EXPECT_TRUE(verified(problem(8192, 4096, 4096, /*block=*/false), options())
                  .wordDescriptors);
  // Two bands loading their scales from global memory keep the full form
  // (the word form spilled there under setmaxnreg 56/224).
  GemmOptions o = options();
  o.stageScales = false;
  GemmConfig c = verified(problem(8192, 14336, 4096), o);
  EXPECT_EQ(c.mWaves, 2);
  EXPECT_FALSE(c.stagedScales.enabled());
  EXPECT_FALSE(c.wordDescriptors);
  EXPECT_EQ(c.consumerRegisters, 224);
}

TEST_F(GemmPlanTest, RowBandsOnlyWhereTheyPay) {
  // One round of 128-row tiles: 256 rows would idle half the SMs.
  EXPECT_EQ(chooseGemmConfig(problem(512, 512, 4096), options()).bm, 128);
  // 256-row tiles in a single round (each CTA one tile): 128 rows.
  EXPECT_EQ(chooseGemmConfig(problem(2048, 512, 2048), options()).bm, 128);
  // 3 rounds of 256-row tiles cost more than 5 of 128-row ones at the
  // measured ~1.1x; 4 against 8 less.
  EXPECT_EQ(chooseGemmConfig(problem(2560, 4096, 4096), options()).bm, 128);
  EXPECT_EQ(chooseGemmConfig(problem(4096, 4096, 4096), options()).bm, 256);
  // Measured only with persistent CTAs, the TMA-store epilogue and staged
  // (f32) scales.
  GemmOptions o = options();
  o.persistent = false;
  EXPECT_EQ(chooseGemmConfig(problem(8192, 4096, 4096), o).bm, 128);
  o = options();
  o.tmaStore = false;
  EXPECT_EQ(chooseGemmConfig(problem(8192, 4096, 4096), o).bm, 128);
  GemmProblem mx = problem(8192, 4096, 4096);
  mx.lhsScale.elementType = mx.rhsScale.elementType =
      Builder(&ctx).getType<Float8E8M0FNUType>();
  EXPECT_EQ(chooseGemmConfig(mx, options()).bm, 128);
  // Per-tensor scales: 128 x 192, no staged scales.
  GemmConfig pt =
      chooseGemmConfig(problem(8192, 4096, 4096, /*block=*/false), options());
  EXPECT_EQ(pt.bm, 128);
  EXPECT_EQ(pt.bn, 192);
  EXPECT_FALSE(pt.stagedScales.enabled());
  // The options override.
  o = options();
  o.tileM = 128;
  EXPECT_EQ(chooseGemmConfig(problem(8192, 4096, 4096), o).bm, 128);
  o = options();
  o.stageScales = false;
  GemmConfig unstaged = chooseGemmConfig(problem(8192, 4096, 4096), o);
  EXPECT_EQ(unstaged.bm, 256);
  EXPECT_FALSE(unstaged.stagedScales.enabled());
  EXPECT_EQ(unstaged.producerRegisters, 56);
  EXPECT_EQ(unstaged.consumerRegisters, 224);
}

TEST_F(GemmPlanTest, SetmaxnregCountsFitTheLaunchedRegisters) {
  GemmProblem p = problem(8192, 14336, 4096);
  GemmConfig c = chooseGemmConfig(p, options());
  std::string why;
  // 64 + 2 x 224 = 512 per thread of a warpgroup > 168 x 3: the consumers'
  // setmaxnreg.inc would wait forever (it hung on the H200).
  c.producerRegisters = 64;
  c.consumerRegisters = 224;
  EXPECT_TRUE(failed(verifyGemmConfig(p, c, why)));
  EXPECT_NE(why.find("setmaxnreg"), std::string::npos) << why;
  c.producerRegisters = 40;
  c.consumerRegisters = 232;
  EXPECT_TRUE(succeeded(verifyGemmConfig(p, c, why))) << why;
}

TEST_F(GemmPlanTest, StagedScalesMustMatchTheProblem) {
  GemmProblem p = problem(8192, 4096, 4096);
  GemmConfig c = chooseGemmConfig(p, options());
  std::string why;
  c.stagedScales.lhsRows = 128;
  EXPECT_TRUE(failed(verifyGemmConfig(p, c, why)));
  EXPECT_NE(why.find("staged scales"), std::string::npos) << why;
  // Per-tensor scales have nothing to stage; 1x32 blocks promote 4 times
  // per K tile (not served: loaded a unit ahead).
  EXPECT_FALSE(
      stagedScalesFor(problem(8192, 4096, 4096, false), c).enabled());
  GemmProblem k32 = problem(8192, 4096, 4096);
  k32.lhsScale.kBlock = 32;
  k32.lhsScale.numKBlocks = 4096 / 32;
  k32.promo = 32;
  EXPECT_FALSE(stagedScalesFor(k32, c).enabled());
  // Weight blocks narrower than the tile: several column scales per tile.
  GemmProblem narrow = problem(8192, 4096, 4096);
  narrow.rhsScale.rowBlock = 64;
  EXPECT_FALSE(stagedScalesFor(narrow, c).enabled());
}
} // namespace

TEST_F(GemmPlanTest, WideDecodeProductsLoadOnlyTheirRowsOfA) {
  // The merged gate+up of a batch-1 decode step: 224 tiles of 128 columns
  // cover the SMs, so it keeps the single-warpgroup kernel -- loading one
  // row of A a stage (a 1 KB swizzle atom, 128 transaction bytes).
  GemmProblem p = problem(1, 4096, 28672, /*block=*/false);
  GemmConfig c = chooseGemmConfig(p, options());
  std::string why;
  ASSERT_TRUE(succeeded(verifyGemmConfig(p, c, why))) << why;
  EXPECT_EQ(c.kind, KernelKind::SingleWarpgroup);
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.aRows, 1);
  SmemLayout l = SmemLayout::get(c);
  EXPECT_EQ(l.a.bytes(), 1024);
  EXPECT_EQ(l.a.loadBytes(), 128);
  // clip-lhs-rows=0: the 64-row box the TMA unit zero-fills past M.
  GemmOptions o = options();
  o.clipLhsRows = false;
  GemmConfig full = chooseGemmConfig(p, o);
  EXPECT_EQ(full.aRows, 0);
  EXPECT_EQ(SmemLayout::get(full).a.loadBytes(), 64 * 128);
  // 8 rows: still one atom; 64 rows and a dynamic M: whole boxes.
  EXPECT_EQ(chooseGemmConfig(problem(8, 4096, 28672, false), options()).aRows,
            8);
  EXPECT_EQ(chooseGemmConfig(problem(64, 4096, 28672, false), options()).aRows,
            0);
  GemmProblem dynamic = problem(1, 4096, 28672, false);
  dynamic.dynamicM = true;
  EXPECT_EQ(chooseGemmConfig(dynamic, options()).aRows, 0);
}

TEST_F(GemmPlanTest, DecodeConsumersPromoteWithSeveralTilesInFlight) {
  // The narrow decode products (o, q/k/v, down at batches 1-64; rowwise
  // and block scales): one row band, one promotion unit a K tile, tiles
  // of 16-48 columns -- four K tiles' partials in flight.
  for (bool block : {false, true})
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 4096, 4096},
                           {8, 4096, 6144},
                           {1, 14336, 4096},
                           {64, 4096, 1024}}) {
      GemmProblem p = problem(m, k, n, block);
      GemmOptions on = options();
      on.pipelinedPromotion = true;
      GemmConfig c = chooseGemmConfig(p, on);
      std::string why;
      ASSERT_TRUE(succeeded(verifyGemmConfig(p, c, why))) << why;
      EXPECT_EQ(c.kind, KernelKind::WarpSpecialized) << m << "x" << n;
      EXPECT_TRUE(c.pipelinedPromotion) << m << "x" << k << "x" << n;
      EXPECT_LE(c.bn, 48);
      EXPECT_EQ(pipelinedPromotionGroup(c), 4);
      // On by default; pipelined-promotion=0 keeps a round trip per tile.
      EXPECT_TRUE(chooseGemmConfig(p, options()).pipelinedPromotion);
      GemmOptions off = options();
      off.pipelinedPromotion = false;
      EXPECT_FALSE(chooseGemmConfig(p, off).pipelinedPromotion);
    }
  // Fast accumulation keeps its own in-flight accumulator; a prefill's
  // two-band tiles and the wide single-warpgroup decode products keep
  // the wait per K tile.
  GemmOptions on = options();
  on.pipelinedPromotion = true;
  GemmOptions fast = on;
  fast.fastAccumulation = true;
  EXPECT_FALSE(
      chooseGemmConfig(problem(1, 4096, 4096, false), fast).pipelinedPromotion);
  EXPECT_FALSE(chooseGemmConfig(problem(4096, 4096, 4096, false), on)
                   .pipelinedPromotion);
  EXPECT_FALSE(
      chooseGemmConfig(problem(1, 4096, 28672, false), on).pipelinedPromotion);
  // Tiles wider than 48 columns take two K tiles at a time.
  GemmConfig wide;
  wide.bn = 64;
  EXPECT_EQ(pipelinedPromotionGroup(wide), 2);
}

TEST_F(GemmPlanTest, DecodeKTilesSplitOverTwoConsumers) {
  // decode-k-groups=2: the pipelined decode consumers split each tile's K
  // tiles (even and odd ones, in stages of the same parity): 2 consumer
  // warpgroups + the producer (384 threads), an even number of stages, the
  // register epilogue, and a reduction buffer of one 64 x BN f32 total.
  GemmOptions on = options();
  on.pipelinedPromotion = true;
  on.decodeKGroups = 2;
  for (bool block : {false, true})
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 4096, 4096},
                           {8, 4096, 6144},
                           {1, 14336, 4096},
                           {64, 4096, 1024}}) {
      GemmProblem p = problem(m, k, n, block);
      GemmConfig c = chooseGemmConfig(p, on);
      std::string why;
      ASSERT_TRUE(succeeded(verifyGemmConfig(p, c, why))) << why;
      EXPECT_EQ(c.kGroups, 2) << m << "x" << k << "x" << n;
      EXPECT_EQ(c.consumerWarpgroups, 1);
      EXPECT_EQ(c.computeWarpgroups(), 2);
      EXPECT_EQ(c.threads(), 384);
      EXPECT_EQ(c.stages % 2, 0);
      EXPECT_EQ(c.epilogue, EpilogueKind::Registers);
      EXPECT_EQ(SmemLayout::get(c).reduceBytes, 64 * c.bn * 4);
      // One consumer per band without the option or pipelined promotion.
      GemmOptions pipelinedOnly = on;
      pipelinedOnly.decodeKGroups = 1;
      EXPECT_EQ(chooseGemmConfig(p, pipelinedOnly).kGroups, 1);
      GemmOptions plain = on;
      plain.pipelinedPromotion = false;
      EXPECT_EQ(chooseGemmConfig(p, plain).kGroups, 1);
    }
  // An odd number of K tiles (33) keeps one consumer; more than two groups
  // asked for get two.
  EXPECT_EQ(chooseGemmConfig(problem(1, 4224, 4096, false), on).kGroups, 1);
  GemmOptions three = on;
  three.decodeKGroups = 3;
  EXPECT_EQ(chooseGemmConfig(problem(1, 4096, 4096, false), three).kGroups, 2);
  // The verifier: K groups only with the pipelined consumer, whole pairs of
  // stages and K tiles, the register epilogue.
  GemmProblem p = problem(1, 4096, 4096, false);
  GemmConfig c = chooseGemmConfig(p, on);
  std::string why;
  GemmConfig bad = c;
  bad.pipelinedPromotion = false;
  EXPECT_TRUE(failed(verifyGemmConfig(p, bad, why)));
  bad = c;
  bad.stages = c.stages - 1;
  EXPECT_TRUE(failed(verifyGemmConfig(p, bad, why)));
  bad = c;
  bad.kGroups = 3;
  EXPECT_TRUE(failed(verifyGemmConfig(p, bad, why)));
}
