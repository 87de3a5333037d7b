//===- GemmPlan.h - What an FP8 GEMM computes and how -----------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// A GemmPlan is everything the kernel generator reads: the problem (types,
// shapes, scale layouts, bias, activation: what the function computes) and
// the configuration (tile sizes, pipeline stages, warpgroups, cluster,
// swizzle, loader and epilogue kinds: how the kernel computes it). The
// builders (SmemLayout, TileLoaders, Mainloop, Promotion, Epilogue) take
// every decision from the plan; `chooseGemmConfig` is the only heuristic.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMPLAN_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMPLAN_H

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

#include <optional>
#include <string>

namespace mlir::fp8::gemm {

/// M of one wgmma instruction (rows per consumer warpgroup and M step).
constexpr int64_t kWgmmaM = 64;
/// Bytes of K of one wgmma instruction: k32 for FP8, k16 for BF16.
constexpr int64_t kMmaK = 32;
/// Threads of a warpgroup.
constexpr int64_t kWarpgroupThreads = 128;

/// How one operand's scale tensor is indexed. For data [batch..., R, K] with
/// blocks of `rowBlock` x `kBlock` over the trailing dims the scale of
/// element (b, r, k) is at ((b' * numRowBlocks + r / rowBlock) * numKBlocks
/// + k / kBlock), with b' = b when the scale has the batch dims and 0
/// otherwise. Per-tensor scales are rank 0.
struct SideScale {
  bool perTensor = false;
  int64_t rowBlock = 1, kBlock = 1;
  int64_t numRowBlocks = 1, numKBlocks = 1;
  bool batched = false;
  /// M-major storage (scaled_matmul m_major): [batch..., Kb, mMajorStride],
  /// the scale of (b, r, k) at ((b' * numKBlocks + k / kBlock) *
  /// mMajorStride + r / rowBlock); 0 for the layout's own order.
  int64_t mMajorStride = 0;
  /// The rows are a run-time value (GemmProblem::dynamicM; the lhs, with
  /// one row per block): numRowBlocks is the planned rows', and the
  /// M-major stride is align(M, mMajorPad) at run time
  /// (KernelBuilder::lhsMMajorStride).
  bool dynamicRows = false;
  int64_t mMajorPad = 0;
  Type elementType;
  /// The scale varies along K: applied at every promotion, not once.
  bool dependsOnK() const { return !perTensor && numKBlocks > 1; }
};

/// What the function computes, derived and checked from its signature and
/// its `fp8.gemm` dictionary. Independent of any kernel configuration.
struct GemmProblem {
  Type lhsType, rhsType, outType, biasType;
  int64_t batch = 1; // grid.z (1 when the batch folds into M)
  /// `k` counts bytes of a row (K elements x elementBytes): the loaders,
  /// shared-memory tiles and wgmma descriptors address bytes, so FP8 (1
  /// byte) and BF16 (2 bytes, unit per-tensor scales) share every builder
  /// but the wgmma instruction's type and K.
  int64_t m = 0, n = 0, k = 0;
  /// M is a run-time value: the lhs's and the output's row dimension is
  /// `?` (decode steps and prompts of any length). `m` is then the rows the
  /// plan's configuration was chosen for (planGemms makes one plan for M <=
  /// kWgmmaM and one for any M); the host reads M from the lhs and passes
  /// it to the kernel (KernelValues::rowsM). Served with lhs scales per
  /// tensor or per row or 1 x K-block of a row (rowwise, block, mxfp8:
  /// their scale rows are M's too), a rank-2 rhs, no cluster and no fused
  /// consumer.
  bool dynamicM = false;
  int64_t elementBytes = 1;
  bool rhsBatched = false;
  /// Every call passes a constant global as B (the weights): no kernel of
  /// a run writes it, so its tiles may load before the kernel waits for
  /// its stream predecessor (GemmConfig::prefetchB).
  bool rhsConstant = false;
  SideScale lhsScale, rhsScale;
  enum class Bias { None, Row, Full } bias = Bias::None;
  Epilogue epilogue = Epilogue::None;
  /// An element-wise consumer fused by fp8-fuse-gemm-epilogues: its
  /// `linalg.generic` in the function's reference body (valid until the
  /// body is replaced), which the epilogue applies to each output element
  /// after rounding the product to `productType`; `outType` is then the
  /// consumer's. For each of its inputs, what the kernel reads there.
  struct EpilogueInput {
    enum class Kind {
      Product, ///< the product's element
      Full,    ///< argument `arg` at the output element's linear index
      Row,     ///< argument `arg` ([N]) at the output element's column
      Scalar,  ///< argument `arg`, rank 0
    } kind = Kind::Product;
    unsigned arg = 0;
    /// The argument's element type (null for the product).
    Type elementType;
  };
  Operation *fusedEpilogue = nullptr;
  SmallVector<EpilogueInput> epilogueInputs;
  Type productType;
  /// K bytes per FP32 promotion unit: the gcd of 128 and the K-blocks of
  /// the scales that vary along K (a multiple of kMmaK).
  int64_t promo = 128;
};

/// Which shared-memory layout the K-major operand tiles use (and the
/// matching wgmma descriptor mode).
enum class Swizzle {
  /// Core matrices of 8 rows x 16 bytes stored as 128 contiguous bytes.
  None,
  /// 128-byte rows, 16-byte chunk c of row r at chunk c ^ (r % 8); 8-row
  /// atoms of 1024 bytes, 1024-aligned (what TMA writes with
  /// CU_TENSOR_MAP_SWIZZLE_128B).
  B128,
};

/// How tiles move from global to shared memory.
enum class LoaderKind {
  /// Every thread copies bytes (K not a multiple of 16).
  ThreadScalar,
  /// Every thread copies 16-byte chunks (ld.global.v4 / st.shared.v4).
  ThreadVector,
  /// cp.async.bulk.tensor (TMA) issued by one thread, completing on the
  /// stage's mbarrier; needs Swizzle::B128 and K % 16 == 0 (16-byte row
  /// strides), the host encodes one tensor map per operand.
  TMA,
};

/// The kernel's warp organization.
enum class KernelKind {
  /// Every warpgroup loads and multiplies.
  SingleWarpgroup,
  /// A producer warpgroup (one thread issues the TMA loads) feeds consumer
  /// warpgroups (wgmma, promotion, epilogue) through full/empty mbarriers.
  WarpSpecialized,
};

/// Where the output tile goes through.
enum class EpilogueKind {
  /// Bounds-checked stores from the accumulator registers.
  Registers,
  /// Each consumer warpgroup writes its finished rows into a 128B-swizzled
  /// staging tile in shared memory (stmatrix for 16-bit outputs) and one of
  /// its threads stores it with TMA (boxes of 64 rows x 128 bytes, clipped
  /// at M and N by the tensor map), not waited for until the warpgroup's
  /// next tile needs the staging tile: the consumers go on to the next
  /// tile's products while the output drains (warp-specialized kernel).
  SharedTMA,
};

/// The scale values that vary along K which one K tile's promotion reads,
/// copied into shared memory with the tile (warp-specialized kernel): a
/// producer warp copies them (cp.async, completing on the stage's full
/// mbarrier), so the consumers read them from the stage instead of waiting
/// on global loads between their wgmma groups. Served for the block layouts
/// whose scales are f32, one promotion unit per K tile (K blocks of 128)
/// and at most one rhs scale per CTA tile (rhs row blocks of whole tiles):
/// 4-byte slots per stage, slot r the lhs scale of the tile's row r (r <
/// lhsRows), then the rhs scale (when `rhs`).
struct StagedScales {
  int64_t lhsRows = 0;
  bool rhs = false;

  int64_t count() const { return lhsRows + (rhs ? 1 : 0); }
  bool enabled() const { return count() > 0; }
  /// Bytes of one stage's slots (16-byte multiples).
  int64_t stageBytes() const { return (4 * count() + 15) / 16 * 16; }
  bool operator==(const StagedScales &o) const {
    return lhsRows == o.lhsRows && rhs == o.rhs;
  }
};

/// Lanes of the producer warp that copies the staged scales (the producer
/// warpgroup's second warp), each arriving on a stage's full mbarrier.
constexpr int64_t kScaleCopyLanes = 32;

/// How the kernel computes the product: every knob of the generator.
struct GemmConfig {
  KernelKind kind = KernelKind::SingleWarpgroup;
  /// CTA tile: BM rows (a multiple of 64) x BN columns (the wgmma N, a
  /// multiple of 8 up to 256) x BK bytes of K per stage.
  int64_t bm = kWgmmaM, bn = 128, bk = 128;
  /// Shared-memory stages of the A/B tiles.
  int64_t stages = 1;
  /// Warpgroups running wgmma.
  int64_t consumerWarpgroups = 1;
  /// Row bands of 64 that each consumer warpgroup computes, one after the
  /// other, on every stage (1 or 2): BM = 64 x consumerWarpgroups x
  /// mWaves, band b = wave * consumerWarpgroups + warpgroup at rows 64 b of
  /// the tile (DeepGEMM's "waves"). With two, a promoting consumer keeps a
  /// total per band and one partial (3 x BN / 2 registers), so a 256 x 128
  /// tile loads 3/4 of the A and B bytes per FLOP of a 128 x 128 one (block
  /// scales: the total and partial of a 192-wide tile spill).
  int64_t mWaves = 1;
  /// setmaxnreg for the producer and consumer warpgroups (0: none).
  int64_t producerRegisters = 0, consumerRegisters = 0;
  /// wgmma descriptors as one 32-bit add to the stage base's low word per
  /// step (none of the 64-bit arithmetic of the full form; buildDescriptor).
  /// Off for the two-band kernels without staged scales, where the added
  /// live words spilled under setmaxnreg 224 (bandRegisters).
  bool wordDescriptors = true;
  /// Thread-block cluster (TMA multicast of B along M, of A along N).
  int64_t clusterM = 1, clusterN = 1;
  Swizzle swizzle = Swizzle::None;
  LoaderKind loader = LoaderKind::ThreadVector;
  EpilogueKind epilogue = EpilogueKind::Registers;
  /// SharedTMA: bytes of one output element in the staging tile (BM x BN /
  /// storeChunks of them after the stages; 0 for the register epilogue).
  int64_t storeBytes = 0;
  /// SharedTMA: the staging tile holds BN / storeChunks columns; a tile is
  /// written out in that many column chunks, each waiting until the TMA
  /// engine has read the previous one (128 x 256 tiles keep 4 stages).
  int64_t storeChunks = 1;
  /// SharedTMA with a fused consumer whose one Full input has 16-bit
  /// elements (the output's width): each consumer's issuing thread loads
  /// the input's boxes of its bands into the staging tile with TMA when
  /// the tile starts (later chunks: once the previous one is stored),
  /// completing on the warpgroup's input mbarrier; the epilogue reads them
  /// with ldmatrix from where it then writes the outputs.
  bool stagedInput = false;
  /// K-dependent scales staged in shared memory with each K tile (none:
  /// the consumers load them from global memory).
  StagedScales stagedScales;
  /// Scales independent of K only: the wgmmas accumulate the whole K into
  /// the FP32 total (no promotion units), a K tile's wgmmas stay in flight
  /// while the next tile's issue (wait_group 1). Always for BF16 operands,
  /// whose wgmma accumulates in FP32 (FP8's keeps fewer bits: promotion).
  bool fastAccumulation = false;
  /// Persistent CTAs: a grid of this many CTAs (at most the number of
  /// tiles) walks the tiles (0: one CTA per tile, grid N x M x batch).
  int64_t persistentCtas = 0;
  /// The persistent walk's tile order: tile ids run down a band of this
  /// many M tiles, then on to the band's next N tile, then to the next band
  /// (batch outermost), so that the CTAs running at once share A and B
  /// tiles in L2.
  int64_t rasterGroup = 8;

  /// Warpgroups per CTA, producer included.
  int64_t warpgroups() const {
    return computeWarpgroups() + (kind == KernelKind::WarpSpecialized ? 1 : 0);
  }
  /// Warpgroups running wgmma: every band's K groups.
  int64_t computeWarpgroups() const { return consumerWarpgroups * kGroups; }
  /// TMA: rows of A each tile loads (1..BM; 0: BM). Decode products (a
  /// static M below 64, one row band) load their M rows instead of a
  /// 64-row box whose rows past M the TMA unit fills with zeros (measured
  /// slower than loading real rows: docs/GPU.md); the tile's other rows
  /// hold whatever the shared memory held, and their products are never
  /// stored. Up to 8 rows, the tile is one 1024-byte swizzle atom that
  /// every 8-row group of the wgmma reads (descriptor SBO 0), so a stage
  /// costs 1 KB of A instead of 8.
  int64_t aRows = 0;
  /// Warp-specialized kernel with a constant B and a static M, launched
  /// with programmatic dependent launch: the producer loads the B tiles of
  /// its first tile's first `stages` K steps, then waits for the stream
  /// predecessor (griddepcontrol.wait) before A's; the consumers wait
  /// before they read scales or write. The weights stream while the
  /// predecessor finishes.
  bool prefetchB = false;
  /// Promoting warp-specialized consumer of one row band and one promotion
  /// unit per K tile (the decode plan): the K tiles go in groups
  /// (pipelinedPromotionGroup: 4, or 2 past 48 columns) whose wgmmas are all
  /// issued, each into a fresh partial, before the first is waited for
  /// (wait_group 3..0), so a group costs one wgmma round trip instead of
  /// one per tile (buildPipelinedPromotingLoop; the same promotions in the
  /// same order).
  bool pipelinedPromotion = false;
  /// Consumer warpgroups that share each row band's K tiles (split K inside
  /// the CTA; the decode plan, with pipelinedPromotion): group g of a band
  /// takes the band's K tiles g, g + kGroups, ..., which live in the stages
  /// s with s % kGroups == g (stages and K tiles are multiples of
  /// kGroups), keeps its own FP32 total, and groups 1.. hand theirs to
  /// group 0 through shared memory (SmemLayout::reduceOffset) before its
  /// epilogue. At a decode tile's few columns a K tile's wgmma round trip,
  /// not the bytes, bounds a consumer: two consumers stream twice the K
  /// tiles. 1: one consumer per band.
  int64_t kGroups = 1;

  /// 64-row bands of the CTA tile (BM / 64).
  int64_t rowBands() const { return consumerWarpgroups * mWaves; }
  /// Rows of A loaded per tile.
  int64_t loadedARows() const { return aRows ? aRows : bm; }
  int64_t threads() const { return warpgroups() * kWarpgroupThreads; }
};

/// Most pipeline stages a kernel uses (mbarrier phases are tracked per K
/// tile, so more would only cost shared memory).
constexpr int64_t kMaxStages = 8;
/// ... except for decode products (GemmOptions::decodeWarpSpecialized):
/// their CTAs stream B with one consumer and few FLOPs per byte, so more
/// bytes in flight is what hides the DRAM latency (GemmOptions::decodeStages'
/// default; 32 measured no faster on an H200, 2026-12-07).
constexpr int64_t kMaxDecodeStages = 16;
/// The most stages any TMA pipeline may have (GemmOptions::decodeStages).
constexpr int64_t kMaxPipelineStages = 32;

/// Options of convert-fp8-gemm-to-gpu that reach the heuristic.
struct GemmOptions {
  /// TMA loads into 128B-swizzled stages behind mbarriers (K % 16 == 0).
  bool tmaPipeline = false;
  /// Stages of that pipeline (at most the number of K tiles).
  int64_t stages = 4;
  /// The warp-specialized kernel where it serves (TMA, M >= 128).
  bool warpSpecialized = true;
  /// Its stages; 0: as many as fit in shared memory (at most kMaxStages).
  int64_t wsStages = 0;
  /// Persistent warp-specialized CTAs, one per SM (`smCount`, the H100 and
  /// H200 SXM have 132): the next tile's loads overlap a tile's promotion
  /// and epilogue; any count is correct, fewer or more only slower.
  bool persistent = true;
  int64_t smCount = 132;
  /// Persistent CTAs in clusters of this many along M (1 or 2) that load
  /// each B tile once for the cluster (TMA multicast), to cut the L2 -> SM
  /// traffic of 128 x 128 tiles. Off by default: correct on the H200
  /// (gemm_test_tma, memcheck) but 1.8x slower at 4096^3 (docs/GPU.md).
  int64_t clusterM = 1;
  /// Products whose scales do not vary along K (per-tensor, rowwise)
  /// accumulate the whole K in the tensor cores with 128 x 256 tiles
  /// (GemmConfig::fastAccumulation; opt-in: less accurate).
  bool fastAccumulation = false;
  /// The warp-specialized kernel's tile N (0: chooseBn's).
  int64_t tileN = 0;
  /// The two-consumer warp-specialized kernel's tile M, 128 or 256 (two
  /// row bands per consumer: GemmConfig::mWaves); 0: the heuristic's
  /// (256 for promoting products with scales that vary along K, where the
  /// tiles still fill the SMs' rounds).
  int64_t tileM = 0;
  /// The heuristic may give fused consumers three consumer warpgroups
  /// (convert-fp8-gemm-to-gpu{fused-three-consumers}).
  bool fusedThreeConsumers = false;
  /// The warp-specialized kernel's epilogue through shared memory and TMA
  /// stores (EpilogueKind::SharedTMA) where the output rows are 16-byte
  /// multiples; false: stores from the registers.
  bool tmaStore = true;
  /// The TMA-store epilogue loads a fused consumer's 16-bit Full input
  /// into its staging tile ahead of the epilogue (GemmConfig::stagedInput);
  /// false: the epilogue loads each element from global memory.
  bool stageEpilogueInput = true;
  /// The warp-specialized kernel with 256-row tiles stages the f32 scales
  /// that vary along K (block scales) in shared memory with each K tile
  /// (GemmConfig::stagedScales); false: its consumers load them.
  bool stageScales = true;
  /// Products of at most 64 rows whose 128-wide tiles leave SMs idle
  /// (decode steps) run the persistent warp-specialized kernel with one
  /// consumer warpgroup, tiles just narrow enough to cover the SMs once
  /// (decodeTileN), and up to kMaxDecodeStages stages; false: the
  /// single-warpgroup kernel with narrowed tiles.
  bool decodeWarpSpecialized = true;
  /// Decode products with a static M below 64 load only alignTo(M, 8) rows
  /// of A per tile (GemmConfig::aRows); false: 64-row boxes.
  bool clipLhsRows = true;
  /// The decode plan's consumer promotes with several K tiles in flight
  /// (GemmConfig::pipelinedPromotion) where they fit its registers.
  bool pipelinedPromotion = true;
  /// The pipelined decode consumer's K tiles split over this many consumer
  /// warpgroups (GemmConfig::kGroups; 1 or 2) where the K tiles divide.
  int64_t decodeKGroups = 1;
  /// Most stages of the decode plan (makeDecodeWarpSpecialized), at most
  /// kMaxPipelineStages.
  int64_t decodeStages = kMaxDecodeStages;
  /// Kernels control their grid dependency (programmatic dependent launch,
  /// sm_90): warp-specialized kernels with a constant B prefetch it before
  /// waiting (GemmConfig::prefetchB).
  bool gridDependency = false;
};

/// Shared memory a CTA may use on sm_90 (227 KB, opt-in).
constexpr int64_t kMaxSmemBytes = 232448;

/// A problem and the configuration chosen for it.
struct GemmPlan {
  GemmProblem problem;
  GemmConfig config;
  /// Dynamic M: this plan's kernel runs when M <= maxRows (0: any M).
  int64_t maxRows = 0;
};

/// The rows a dynamic-M product's general plan is chosen for (a prompt's
/// worth: persistent CTAs on every SM, 128-row tiles).
constexpr int64_t kDynamicPlanRows = 8192;

/// Checks the function against what the generator serves; on failure `why`
/// says what did not fit (for the remark) and the body stays as it is.
FailureOr<GemmProblem> analyzeGemm(func::FuncOp func, std::string &why);

/// The heuristic: the configuration for `problem`.
/// The K tiles a pipelined-promotion consumer issues before retiring them
/// (GemmConfig::pipelinedPromotion): 4 partials of tiles up to 48 columns
/// (at most 96 registers), else 2.
int64_t pipelinedPromotionGroup(const GemmConfig &config);

GemmConfig chooseGemmConfig(const GemmProblem &problem,
                            const GemmOptions &options);

/// Checks that the generator implements `config` for `problem`.
LogicalResult verifyGemmConfig(const GemmProblem &problem,
                               const GemmConfig &config, std::string &why);

/// analyzeGemm + chooseGemmConfig + verifyGemmConfig: one plan, or for a
/// dynamic M two, tried in order at run time: M <= kWgmmaM (the decode
/// configuration) and any M (chosen for kDynamicPlanRows rows).
FailureOr<SmallVector<GemmPlan, 2>>
planGemms(func::FuncOp func, const GemmOptions &options, std::string &why);

/// The remark text that names the kernel a plan gives.
std::string describeGemmPlan(const GemmPlan &plan);

// What a fused consumer (fp8-fuse-gemm-epilogues) must be for the kernel's
// epilogue: one set of rules for the pass that fuses (on tensors) and for
// analyzeGemm, which checks a function again (on memrefs).

/// Whether the consumer's body is scalar arith/math code that captures
/// nothing from outside but constants.
bool isScalarEpilogueBody(linalg::GenericOp g);

/// The input of `p`'s fused consumer that a TMA-store epilogue can stage
/// (GemmConfig::stagedInput): its one Full input, when it has 16-bit
/// elements; null otherwise.
const GemmProblem::EpilogueInput *stageableInput(const GemmProblem &p);

/// How the epilogue reads `input` (one of `g`'s inputs other than the
/// product) per output element, the product having `n` columns: Full (the
/// output's shape, identity map), Row ([n] through the output's last
/// dimension, which is the product's N), Scalar (rank 0); none otherwise.
std::optional<GemmProblem::EpilogueInput::Kind>
epilogueInputKind(linalg::GenericOp g, OpOperand &input, int64_t n);

/// Clones at `b` the defining op of every value `region` uses from outside
/// that `map` does not map yet (a fused consumer's constants), and maps it.
void cloneCapturedValues(Region &region, OpBuilder &b, IRMapping &map);

/// The staged scales of `problem` for tiles of `config`'s shape (BM, BN,
/// BK): the slots its K-dependent scales need, or none where staging is
/// not served (no scale varies along K, one is not f32, several promotion
/// units per K tile, several rhs scales per tile).
StagedScales stagedScalesFor(const GemmProblem &problem,
                             const GemmConfig &config);

/// The wgmma operand type of an FP8 or BF16 element type.
std::optional<NVVM::WGMMATypes> wgmmaType(Type t);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMPLAN_H
