//===- GemmPlan.cpp - What an FP8 GEMM computes and how -------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"
#include "SmemLayout.h"

#include "fp8/Conversion/Passes.h"
#include "fp8/Support/MemRefViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

std::optional<NVVM::WGMMATypes> gemm::wgmmaType(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (isa<Float8E5M2Type>(t))
    return NVVM::WGMMATypes::e5m2;
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  return std::nullopt;
}

namespace {

/// Identity layout, static but for the row dimension (rank - 2): the lhs or
/// the output of a product with M at run time.
bool isDynamicRowsIdentity(MemRefType t) {
  if (!t || !t.getLayout().isIdentity() || t.getRank() < 2)
    return false;
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (t.isDynamicDim(d) != (d == t.getRank() - 2))
      return false;
  return true;
}

/// An identity-layout memref of rank >= 2 whose one dynamic dimension is
/// one of its last two (the scales of rows whose count is dynamic).
bool isDynamicScaleRows(MemRefType t) {
  if (!t || !t.getLayout().isIdentity() || t.getRank() < 2 ||
      t.getNumDynamicDims() != 1)
    return false;
  return t.isDynamicDim(t.getRank() - 2) || t.isDynamicDim(t.getRank() - 1);
}

/// The `fp8.gemm` dictionary, read.
struct GemmAttrs {
  ScaleLayoutAttr lhsLayout, rhsLayout;
  EpilogueAttr epilogue;
  BoolAttr transposeRhs, hasBias;
  IntegerAttr lhsMMajor;
  /// A fused consumer (`epilogue_inputs` present) and its inputs besides
  /// the product.
  bool fused = false;
  int64_t epilogueInputs = 0;
};

/// Fills `s` for one operand: `data` [batch..., rows, k] scaled by `scale`
/// with `layout`; `mMajor` is the M-major padding (lhs only) or null.
/// `rows` is the planned rows when the data's rows are dynamic (the lhs
/// with M at run time): the scale's row dimension is then dynamic too, one
/// row per data row.
LogicalResult analyzeSide(ScaleLayoutAttr layout, MemRefType data,
                          MemRefType scale, int64_t rows, int64_t k,
                          IntegerAttr mMajor, StringRef name, SideScale &s,
                          std::string &why) {
  s.elementType = scale.getElementType();
  if (!s.elementType.isF32() && !s.elementType.isF16() &&
      !s.elementType.isBF16() && !isa<Float8E8M0FNUType>(s.elementType)) {
    why = (name + " scale must be f32, f16, bf16 or f8E8M0FNU").str();
    return failure();
  }
  if (layout.isPerTensor()) {
    s.perTensor = true;
    if (scale.getNumElements() != 1) {
      why = (name + " per-tensor scale must have one element").str();
      return failure();
    }
    return success();
  }
  FailureOr<SmallVector<int64_t>> block =
      layout.getExpandedBlock(data.getShape());
  if (failed(block)) {
    why = (name + " layout does not fit its rank").str();
    return failure();
  }
  s.rowBlock = (*block)[block->size() - 2];
  s.kBlock = (*block)[block->size() - 1];
  for (int64_t d : ArrayRef<int64_t>(*block).drop_back(2))
    if (d != 1) {
      why = (name + " layout blocks over batch dims").str();
      return failure();
    }
  s.numRowBlocks = llvm::divideCeil(rows, s.rowBlock);
  s.numKBlocks = llvm::divideCeil(k, s.kBlock);
  s.batched = data.getRank() > 2;
  int64_t dataBatch = 1;
  for (int64_t d : data.getShape().drop_back(2))
    dataBatch *= d;
  if (ShapedType::isDynamic(data.getShape()[data.getRank() - 2])) {
    // [batch..., ?, Kb], or M-major [batch..., Kb, ?]: one row per row.
    s.dynamicRows = true;
    const int64_t r = scale.getRank();
    ArrayRef<int64_t> ss = scale.getShape();
    const bool shaped =
        s.rowBlock == 1 && r == data.getRank() &&
        ss.drop_back(2) == data.getShape().drop_back(2) &&
        (mMajor
             ? ShapedType::isDynamic(ss[r - 1]) && ss[r - 2] == s.numKBlocks
             : ShapedType::isDynamic(ss[r - 2]) && ss[r - 1] == s.numKBlocks);
    if (!shaped) {
      why = (name + " scale of dynamic rows must be [batch..., rows, Kb] "
                    "(or M-major [batch..., Kb, rows]) with one row per row")
                .str();
      return failure();
    }
    if (mMajor) {
      s.mMajorPad = mMajor.getInt();
      s.mMajorStride = llvm::alignTo(s.numRowBlocks, s.mMajorPad);
    }
    return success();
  }
  int64_t rowEntries = s.numRowBlocks;
  if (mMajor) {
    s.mMajorStride = llvm::alignTo(s.numRowBlocks, mMajor.getInt());
    rowEntries = s.mMajorStride;
  }
  if (scale.getNumElements() != dataBatch * rowEntries * s.numKBlocks) {
    why = (name + " scale shape does not match its layout").str();
    return failure();
  }
  return success();
}

/// Reads the dictionary and checks the signature; fills `args` with the
/// memref types of (lhs, lhs_scale, rhs, rhs_scale, [bias], out).
LogicalResult checkSignature(func::FuncOp func, GemmAttrs &attrs,
                             SmallVectorImpl<MemRefType> &args,
                             std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  auto info = func->getAttrOfType<DictionaryAttr>(kGemmAttrName);
  attrs.lhsLayout = info.getAs<ScaleLayoutAttr>("lhs_layout");
  attrs.rhsLayout = info.getAs<ScaleLayoutAttr>("rhs_layout");
  attrs.epilogue = info.getAs<EpilogueAttr>("epilogue");
  attrs.transposeRhs = info.getAs<BoolAttr>("transpose_rhs");
  attrs.lhsMMajor = info.getAs<IntegerAttr>("lhs_scale_m_major");
  attrs.hasBias = info.getAs<BoolAttr>("has_bias");
  if (auto n = info.getAs<IntegerAttr>(kGemmEpilogueInputsKey)) {
    attrs.fused = true;
    attrs.epilogueInputs = n.getInt();
  }
  if (!attrs.lhsLayout || !attrs.rhsLayout || !attrs.epilogue ||
      !attrs.transposeRhs || !attrs.hasBias ||
      (attrs.lhsMMajor && attrs.lhsMMajor.getInt() < 1) ||
      attrs.epilogueInputs < 0 || attrs.epilogueInputs > 16)
    return fail("malformed fp8.gemm attribute");
  if (func.isExternal())
    return fail("function has no body");
  if (!attrs.transposeRhs.getValue())
    return fail("rhs is not K-major (transpose_rhs = false); FP8 wgmma "
                "needs a K-major B operand");

  FunctionType type = func.getFunctionType();
  const unsigned expected =
      (attrs.hasBias.getValue() ? 6 : 5) + attrs.epilogueInputs;
  if (type.getNumInputs() != expected || type.getNumResults() != 0)
    return fail("signature is not (lhs, lhs_scale, rhs, rhs_scale, [bias], "
                "[epilogue inputs], out) memrefs; run bufferization with "
                "buffer-results-to-out-params first");
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto mt = dyn_cast<MemRefType>(t);
    // The lhs scales of a dynamic M have its rows too: [batch..., ?, Kb],
    // or M-major [batch..., Kb, ?] (analyzeSide checks which).
    const bool rowsOnly = ((i == 0 || i + 1 == type.getNumInputs()) &&
                           isDynamicRowsIdentity(mt)) ||
                          (i == 1 && isDynamicScaleRows(mt));
    if (!isStaticIdentity(mt) && !rowsOnly)
      return fail("operands must be memrefs with identity layout, statically "
                  "shaped but for M (the lhs's and the output's row "
                  "dimension)");
    args.push_back(mt);
  }
  if (args.front().hasStaticShape() != args.back().hasStaticShape())
    return fail("M is dynamic in one of the lhs and the output only");
  return success();
}

/// Element types and shapes: fills everything but the scales, the bias and
/// the batch folding; `batch` is the product of the lhs batch dims.
LogicalResult analyzeShapes(ArrayRef<MemRefType> args, GemmProblem &p,
                            int64_t &batch, std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  MemRefType lhs = args[0], rhs = args[2], out = args.back();
  p.lhsType = lhs.getElementType();
  p.rhsType = rhs.getElementType();
  p.outType = out.getElementType();
  if (!wgmmaType(p.lhsType) || !wgmmaType(p.rhsType) ||
      p.lhsType.isBF16() != p.rhsType.isBF16())
    return fail("operands must be f8E4M3FN or f8E5M2, or both bf16");
  p.elementBytes = p.lhsType.isBF16() ? 2 : 1;
  if (!p.outType.isF32() && !p.outType.isF16() && !p.outType.isBF16())
    return fail("result element type must be f32, f16 or bf16");
  if (lhs.getRank() < 2 || out.getRank() != lhs.getRank())
    return fail("lhs must be [batch..., M, K] with a result of the same rank");
  if (rhs.getRank() != 2 && rhs.getRank() != lhs.getRank())
    return fail("rhs must be [N, K] or [batch..., N, K] like lhs");

  ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape(),
                    os = out.getShape();
  const int64_t rank = ls.size();
  batch = 1;
  for (int64_t d : ls.drop_back(2))
    batch *= d;
  p.dynamicM = ShapedType::isDynamic(ls[rank - 2]);
  p.m = p.dynamicM ? kDynamicPlanRows : ls[rank - 2];
  p.k = ls[rank - 1];
  p.n = rs[rs.size() - 2];
  if (rs.back() != p.k)
    return fail("lhs and rhs K differ");
  p.rhsBatched = rhs.getRank() > 2;
  if (p.rhsBatched && rs.drop_back(2) != ls.drop_back(2))
    return fail("batched rhs must have the batch dims of lhs");
  SmallVector<int64_t> outShape(ls.drop_back(1));
  outShape.push_back(p.n);
  if (os != ArrayRef<int64_t>(outShape))
    return fail("result shape is not [batch..., M, N]");
  if (p.m == 0 || p.n == 0 || p.k == 0)
    return fail("empty product");
  p.k *= p.elementBytes;
  return success();
}

/// Promotion unit: every unit must lie inside one K-block of each scale.
LogicalResult choosePromotionUnit(GemmProblem &p, std::string &why) {
  int64_t unit = 128;
  for (const SideScale *s : {&p.lhsScale, &p.rhsScale})
    if (s->dependsOnK())
      unit = std::gcd(unit, s->kBlock);
  if (unit % kMmaK != 0) {
    why = ("K-blocks of the scale layouts (lhs " + Twine(p.lhsScale.kBlock) +
           ", rhs " + Twine(p.rhsScale.kBlock) +
           ") do not nest into whole k32 wgmma steps")
              .str();
    return failure();
  }
  p.promo = unit;
  return success();
}

LogicalResult analyzeBias(MemRefType bias, MemRefType out, GemmProblem &p,
                          std::string &why) {
  Type bt = bias.getElementType();
  if (!bt.isF32() && !bt.isF16() && !bt.isBF16()) {
    why = "bias must be f32, f16 or bf16";
    return failure();
  }
  p.biasType = bt;
  if (bias.getRank() == 1 && bias.getShape()[0] == p.n)
    p.bias = GemmProblem::Bias::Row;
  else if (bias.getShape() == out.getShape())
    p.bias = GemmProblem::Bias::Full;
  else {
    why = "bias must be [N] or the result shape";
    return failure();
  }
  return success();
}

/// The memref a fused consumer's product input reads, back through
/// reshapes to the buffer the reference product writes.
Value productBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The fused consumer (fp8-fuse-gemm-epilogues) of `func`, checked again
/// here (a hand-written function may claim one): each input is the product
/// or an argument the kernel can index, the output is `out`, the body
/// scalar arith/math code. Sets the epilogue fields of `p`; `productOut` is
/// the type the product itself has (what the shape analysis reads).
LogicalResult analyzeFusedEpilogue(func::FuncOp func, unsigned firstExtra,
                                   unsigned numExtras, GemmProblem &p,
                                   MemRefType &productOut, std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = ("fused epilogue: " + reason).str();
    return failure();
  };
  linalg::GenericOp g;
  func.walk([&](linalg::GenericOp op) {
    if (op->hasAttr(kGemmEpilogueAttrName))
      g = op;
  });
  Block &entry = func.getBody().front();
  // It writes the output argument, or a buffer that is then copied whole
  // into it (what bufferization makes where it does not write in place).
  auto writesOutput = [&](Value init) {
    Value outArg = entry.getArguments().back();
    return init == outArg || llvm::any_of(init.getUsers(), [&](Operation *u) {
             auto copy = dyn_cast<memref::CopyOp>(u);
             return copy && copy.getSource() == init &&
                    copy.getTarget() == outArg;
           });
  };
  if (!g || g->getBlock() != &entry || g.getNumDpsInits() != 1 ||
      !writesOutput(g.getDpsInitOperand(0)->get()) ||
      g.getNumParallelLoops() != g.getNumLoops())
    return fail("no element-wise consumer writing the output");
  auto out = cast<MemRefType>(entry.getArguments().back().getType());
  // The product: the one input that is not an argument.
  for (OpOperand *input : g.getDpsInputOperands()) {
    auto arg = dyn_cast<BlockArgument>(input->get());
    if (arg && arg.getOwner() == &entry)
      continue;
    if (productOut || !g.getMatchingIndexingMap(input).isIdentity())
      return fail("reads the product twice or not elementwise");
    productOut = cast<MemRefType>(productBuffer(input->get()).getType());
    if (productOut.getNumElements() != out.getNumElements())
      return fail("the product and the output differ in size");
  }
  if (!productOut)
    return fail("does not read the product");
  const int64_t n = productOut.getShape().back();
  for (OpOperand *input : g.getDpsInputOperands()) {
    GemmProblem::EpilogueInput in;
    auto arg = dyn_cast<BlockArgument>(input->get());
    if (arg && arg.getOwner() == &entry) {
      if (arg.getArgNumber() < firstExtra ||
          arg.getArgNumber() >= firstExtra + numExtras)
        return fail("reads an argument that is not one of its inputs");
      std::optional<GemmProblem::EpilogueInput::Kind> kind =
          epilogueInputKind(g, *input, n);
      if (!kind)
        return fail("an input is neither the output's shape, a row nor a "
                    "scalar");
      in.kind = *kind;
      in.arg = arg.getArgNumber();
      in.elementType = cast<MemRefType>(arg.getType()).getElementType();
    }
    p.epilogueInputs.push_back(in);
  }
  if (!isScalarEpilogueBody(g))
    return fail("its body is not scalar arith/math code with constants");
  p.fusedEpilogue = g;
  p.productType = productOut.getElementType();
  return success();
}

/// Folds lhs batch dims into M when the rows stay contiguous for every
/// operand: rank-2 rhs, and lhs scale blocks that never straddle batches.
void foldBatch(GemmProblem &p, int64_t batch) {
  const bool foldable = !p.rhsBatched &&
                        !(p.lhsScale.mMajorStride && batch > 1) &&
                        (p.lhsScale.perTensor || p.lhsScale.rowBlock == 1 ||
                         p.m % p.lhsScale.rowBlock == 0);
  if (!foldable) {
    p.batch = batch;
    return;
  }
  p.batch = 1;
  p.m = batch * p.m;
  if (!p.lhsScale.perTensor) {
    p.lhsScale.numRowBlocks = llvm::divideCeil(p.m, p.lhsScale.rowBlock);
    p.lhsScale.batched = false;
  }
}

} // namespace

/// Whether every call of `func` passes a constant global (memref.get_global
/// of a `constant` memref.global) as its B operand (argument 2).
static bool isConstantRhs(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return false;
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  if (!uses || uses->empty())
    return false;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call || call.getNumOperands() < 3)
      return false;
    auto get = call.getOperand(2).getDefiningOp<memref::GetGlobalOp>();
    if (!get)
      return false;
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        call, get.getNameAttr());
    if (!global || !global.getConstant())
      return false;
  }
  return true;
}

FailureOr<GemmProblem> gemm::analyzeGemm(func::FuncOp func, std::string &why) {
  GemmAttrs attrs;
  SmallVector<MemRefType> args;
  if (failed(checkSignature(func, attrs, args, why)))
    return failure();
  GemmProblem p;
  p.epilogue = attrs.epilogue.getValue();
  int64_t batch = 1;
  if (attrs.fused) {
    // A fused consumer: the shapes are the product's, the output type the
    // consumer's.
    if (p.epilogue != Epilogue::None) {
      why = "a fused consumer and an activation epilogue";
      return failure();
    }
    MemRefType productOut;
    if (failed(analyzeFusedEpilogue(func, attrs.hasBias.getValue() ? 5 : 4,
                                    attrs.epilogueInputs, p, productOut, why)))
      return failure();
    args.back() = productOut;
  }
  if (failed(analyzeShapes(args, p, batch, why)))
    return failure();
  if (p.dynamicM) {
    const char *refusal =
        attrs.fused    ? "dynamic M with a fused consumer is not served yet"
        : p.rhsBatched ? "dynamic M with a batched rhs is not served yet"
                       : nullptr;
    if (refusal) {
      why = refusal;
      return failure();
    }
  }
  if (p.fusedEpilogue) {
    p.outType =
        cast<MemRefType>(func.getArguments().back().getType()).getElementType();
    if (!p.outType.isF32() && !p.outType.isF16() && !p.outType.isBF16()) {
      why = "fused epilogue: output must be f32, f16 or bf16";
      return failure();
    }
  }
  MemRefType lhs = args[0], lhsS = args[1], rhs = args[2], rhsS = args[3];
  if (failed(analyzeSide(attrs.lhsLayout, lhs, lhsS, p.m, p.k, attrs.lhsMMajor,
                         "lhs", p.lhsScale, why)) ||
      failed(analyzeSide(attrs.rhsLayout, rhs, rhsS, p.n, p.k, IntegerAttr(),
                         "rhs", p.rhsScale, why)))
    return failure();
  if (p.elementBytes == 2 &&
      (!p.lhsScale.perTensor || !p.rhsScale.perTensor ||
       !p.lhsScale.elementType.isF32() || !p.rhsScale.elementType.isF32())) {
    why = "bf16 operands take per-tensor f32 scales";
    return failure();
  }
  // M-major scales of a batch are a stride apart per batch (not foldable
  // into M): with M at run time that stride would be a run-time value too.
  if (p.dynamicM && p.lhsScale.mMajorStride && batch > 1) {
    why = "dynamic M with M-major lhs scales over a batch is not served yet";
    return failure();
  }
  if (failed(choosePromotionUnit(p, why)))
    return failure();
  if (attrs.hasBias.getValue() &&
      failed(analyzeBias(args[4], args.back(), p, why)))
    return failure();
  foldBatch(p, batch);
  p.rhsConstant = isConstantRhs(func);
  return p;
}

namespace {

/// The widest tile N: 128, or 64 when the rhs scales are per column (or per
/// group of fewer than 8 columns) and vary along K -- MXFP8's 1x32 weight
/// blocks give each thread one scale per two accumulator registers at every
/// promotion: with BN = 128 that is 32 scales next to 128 accumulators,
/// which spills; BN = 64 halves both. N rounded up to 8 when smaller.
int64_t chooseBn(const GemmProblem &p) {
  const bool columnScalesAlongK =
      p.rhsScale.dependsOnK() && p.rhsScale.rowBlock % 8 != 0;
  const int64_t maxBn = columnScalesAlongK ? 64 : 128;
  return p.n >= maxBn ? maxBn : llvm::alignTo(p.n, 8);
}

/// The most stages (at most `most` and the number of K tiles) whose tiles
/// and barriers fit in shared memory.
int64_t maxStages(const GemmProblem &p, GemmConfig c,
                  int64_t most = kMaxStages) {
  const int64_t limit = std::min<int64_t>(most, llvm::divideCeil(p.k, c.bk));
  int64_t best = 1;
  for (c.stages = 1; c.stages <= limit; ++c.stages)
    if (SmemLayout::get(c).totalBytes <= kMaxSmemBytes)
      best = c.stages;
  return best;
}

/// Fewest pipeline stages the TMA-store epilogue's staging tile may leave:
/// 4, or 3 for 256-row tiles (48 KB stages: 4 of them, their staged scales
/// and even half the 64 KB staging tile exceed 227 KB, and their register
/// epilogue spills).
int64_t minStagedStages(const GemmConfig &c) { return c.mWaves > 1 ? 3 : 4; }

/// Bytes of one element of the product's output.
int64_t outputBytes(const GemmProblem &p) {
  return p.outType.getIntOrFloatBitWidth() / 8;
}

/// Whether the TMA-store epilogue of `c` can take `p`'s fused input
/// through its staging tile (GemmConfig::stagedInput): the input's 16-bit
/// elements are laid out as the 16-bit outputs that replace them.
bool servesStagedInput(const GemmProblem &p, const GemmConfig &c) {
  return p.fusedEpilogue && c.epilogue == EpilogueKind::SharedTMA &&
         c.storeBytes == 2 && !p.dynamicM && stageableInput(p);
}

/// The epilogue through shared memory and TMA stores where its boxes fit
/// -- output rows that are 16-byte multiples (the tensor map's row stride)
/// and tiles of whole 128-byte box columns -- and where the staging tile,
/// whole or in column chunks, still leaves the pipeline 4 stages
/// (`ws-stages` when set; at most every K tile): a 128 x 256 f32 tile (128
/// KB) would leave two, in four 32 KB chunks it leaves four.
void chooseEpilogue(const GemmProblem &p, const GemmOptions &options,
                    GemmConfig &c) {
  const int64_t bytes = outputBytes(p);
  if (!options.tmaStore || (p.n * bytes) % 16 != 0 ||
      (c.bn * bytes) % 128 != 0)
    return;
  GemmConfig staged = c;
  staged.epilogue = EpilogueKind::SharedTMA;
  staged.storeBytes = bytes;
  const int64_t wanted = std::min<int64_t>(
      options.wsStages > 0 ? options.wsStages : minStagedStages(c),
      llvm::divideCeil(p.k, c.bk));
  // The whole tile staged at once, else in as few column chunks of whole
  // 128-byte boxes as leave the stages (a 128 x 256 bf16 tile's 64 KB
  // would leave 3 stages; two 32 KB chunks leave 4).
  const int64_t boxes = c.bn * bytes / 128;
  for (staged.storeChunks = 1; staged.storeChunks <= boxes;
       ++staged.storeChunks) {
    if (boxes % staged.storeChunks != 0)
      continue;
    if (maxStages(p, staged) >= wanted) {
      c = staged;
      c.stagedInput = options.stageEpilogueInput && servesStagedInput(p, c);
      return;
    }
  }
}

/// DeepGEMM's FP8 kernel shape: one producer warpgroup (its first thread
/// issues the TMA loads; setmaxnreg.dec to 40) and two consumer warpgroups
/// (setmaxnreg.inc to 232; each owns 64 of the BM = 128 rows), as many
/// stages as fit. 40 x 128 + 232 x 256 = 64512 of the SM's 65536 registers.
/// The warp-specialized kernel's warpgroups (a producer and `consumers`,
/// setmaxnreg 40/232) and whether it accumulates the whole K in the tensor
/// cores: BF16 always, FP8 on request, when no scale varies along K.
void setWarpSpecialized(const GemmProblem &p, const GemmOptions &options,
                        int64_t consumers, GemmConfig &c) {
  c.kind = KernelKind::WarpSpecialized;
  c.consumerWarpgroups = consumers;
  c.bm = kWgmmaM * consumers;
  c.producerRegisters = 40;
  c.consumerRegisters = 232;
  const bool kIndependent =
      !p.lhsScale.dependsOnK() && !p.rhsScale.dependsOnK();
  c.fastAccumulation =
      (options.fastAccumulation || p.elementBytes == 2) && kIndependent;
}

/// The stages of a warp-specialized kernel: `ws-stages` (at most the K
/// tiles), or as many as fit up to `most`.
int64_t warpSpecializedStages(const GemmProblem &p, const GemmOptions &options,
                              const GemmConfig &c, int64_t most) {
  if (options.wsStages > 0)
    return std::min<int64_t>(options.wsStages, llvm::divideCeil(p.k, c.bk));
  return maxStages(p, c, most);
}

/// The most stages of the decode plan: GemmOptions::decodeStages within
/// 1..kMaxPipelineStages.
int64_t decodeStages(const GemmOptions &options) {
  return std::clamp<int64_t>(options.decodeStages, 1, kMaxPipelineStages);
}

/// GemmConfig::prefetchB: a constant B, M static (every persistent CTA
/// has a tile, whose loads it must not leave in flight when it exits), no
/// cluster, kernels that control their grid dependency.
bool servesPrefetchB(const GemmProblem &p, const GemmOptions &options,
                     const GemmConfig &c) {
  return options.gridDependency && p.rhsConstant && !p.dynamicM &&
         c.kind == KernelKind::WarpSpecialized && c.clusterM == 1;
}

/// Rounds of `smCount` CTAs that `tiles` output tiles take.
int64_t rounds(int64_t tiles, const GemmOptions &options) {
  return llvm::divideCeil(tiles, options.smCount);
}

/// Longest K (bytes) for which three consumer warpgroups are chosen: at K =
/// 14336 their 192-row tiles were 1 % slower than 256-row ones (H100,
/// docs/PERFORMANCE.md), at K = 4096 and 8192 6-10 % faster.
constexpr int64_t kThreeConsumersMaxK = 8192;

/// Whether ptxas assembles three consumers at setmaxnreg 32/160 without
/// spilling: measured (ptxas 13, 2026-12-08, block scales, 4200 x K x 1408)
/// clean where the K tiles are a power of two -- 2..64 tiles, and with a
/// fused consumer (a residual add staged through the store tile) 8..64 --
/// and spilling 16-188 bytes at 6, 9, 12, 22, 24, 40 and 48 K tiles (2, 3, 4
/// too with the fused consumer), at 40/152 as well for several of them.
/// ptxas's allocation at this register count is not monotonic in K.
bool threeConsumersAssemble(const GemmProblem &p, const GemmConfig &c) {
  const int64_t kTiles = llvm::divideCeil(p.k, c.bk);
  return p.k <= kThreeConsumersMaxK && llvm::isPowerOf2_64(kTiles) &&
         (!p.fusedEpilogue || kTiles >= 8);
}

/// The row tiles of promoting products whose f32 scales vary along K (the
/// block recipe's), whose 128-wide tiles are bound by the bytes they load
/// per FLOP and by each consumer's wgmma round trip before every promotion:
/// * 256 rows, two row bands per consumer (GemmConfig::mWaves): a 256 x 128
///   tile loads 3/4 of the bytes per FLOP of a 128 x 128 one; measured
///   1.06-1.12x the 128-row tiles' speed per FLOP;
/// * 192 rows, three consumer warpgroups of one band each (setmaxnreg
///   32/160): while one consumer waits for its wgmmas and promotes, two
///   others' wgmmas keep the tensor cores busy (with two consumers, one);
///   measured ~1.07x the 256-row tiles' speed per FLOP at K <= 8192.
/// Both measured (docs/PERFORMANCE.md) with persistent CTAs, staged scales
/// and the TMA-store epilogue, so taken only with those (their register
/// epilogues spill; three consumers loading their scales from global
/// memory ran 3-10 % slower than staged), where the rounds of tiles over the
/// SMs times the tile's rows, over its speed, cost least and there are at least
/// two rounds (8192 x 4096 x 4096: 11 rounds of 192 rows vs 8 of 256 and 16 of
/// 128; 4096^3: 6 / 4 / 8, 256 rows; 512 x 4096 x 4096: 64 tiles of 256 rows
/// would leave half the SMs idle; 2560 x 4096 x 4096: 128 rows). `tile-m`
/// overrides where served (promoting, BN <= 128, M static; 192 with a fused
/// consumer only where threeConsumersAssemble). The heuristic takes three
/// consumers only where threeConsumersAssemble (since 2026-12-08; before,
/// any K up to 8192 could take them, and some of those kernels spilled),
/// and for a fused consumer only with `fused-three-consumers`: such kernels
/// assemble clean at 8-64 K tiles (the Llama-3-8B layer's o product with
/// its residual add), but have not yet run on a GPU.
void chooseRowBands(const GemmProblem &p, const GemmOptions &options,
                    GemmConfig &c) {
  // Served: promoting consumers, tiles up to 128 wide, a static M.
  if (c.fastAccumulation || c.bn > 128 || p.dynamicM)
    return;
  auto setRows = [&](int64_t consumers, int64_t waves) {
    c.consumerWarpgroups = consumers;
    c.mWaves = waves;
    c.bm = kWgmmaM * consumers * waves;
  };
  if (options.tileM) {
    if (options.tileM == 3 * kWgmmaM &&
        (!p.fusedEpilogue || threeConsumersAssemble(p, c)))
      setRows(3, 1);
    else
      setRows(2, options.tileM == 4 * kWgmmaM ? 2 : 1);
    return;
  }
  GemmConfig wide = c;
  wide.mWaves = 2;
  wide.bm = 4 * kWgmmaM;
  const int64_t bytes = outputBytes(p);
  if (!options.persistent || !options.tmaStore || (p.n * bytes) % 16 != 0 ||
      (c.bn * bytes) % 128 != 0 || !stagedScalesFor(p, wide).enabled())
    return;
  const int64_t nTiles = p.batch * llvm::divideCeil(p.n, c.bn);
  auto roundsOf = [&](int64_t rows) {
    return rounds(nTiles * llvm::divideCeil(p.m, rows), options);
  };
  const int64_t r128 = roundsOf(128), r192 = roundsOf(192),
                r256 = roundsOf(256);
  // 2 x r256 / 1.1 < r128, and at least two rounds: with one the CTAs'
  // single tiles save no loads across tiles, and ptxas spills the
  // straight-line code of a one-tile walk with two totals live.
  const bool two = r256 >= 2 && 20 * r256 < 11 * r128;
  // Rows x rounds over the speed per FLOP relative to 128-row tiles.
  const double best = two ? r256 * 256 / 1.1 : r128 * 128.0;
  GemmConfig three = c;
  three.consumerWarpgroups = 3;
  three.bm = 3 * kWgmmaM;
  if (options.stageScales && threeConsumersAssemble(p, c) &&
      (!p.fusedEpilogue || options.fusedThreeConsumers) && r192 >= 2 &&
      stagedScalesFor(p, three).enabled() && r192 * 192 / 1.18 < best)
    setRows(3, 1);
  else
    setRows(2, two ? 2 : 1);
}

/// setmaxnreg of two-band tiles (once staged scales are decided): two totals
/// and a partial take 192 registers of the consumers' 224, the producer
/// keeps 56 -- 56 + 2 x 224 per thread of a warpgroup are the 168 x 3 the
/// CTA is launched with. With staged scales 64/216: at 224 the consumers
/// spilled 4 bytes (ptxas, the Llama-3-8B layer's four block products,
/// 2026-12-05) and at 216 none, while without them 216 spills ~80 bytes
/// and 224 none (ptxas's allocation under setmaxnreg is not monotonic);
/// the producer's second warp, which copies the scales, keeps 8 more.
/// A fused epilogue (a residual add staged through the store tile) spilled
/// 36 bytes at 64/216 and none at 56/224 (the layer's o and down products,
/// 2026-12-07): those keep 56/224 with staged scales too.
void bandRegisters(int64_t k, bool fusedEpilogue, GemmConfig &c) {
  // Three consumers (512 threads, launched with 128 registers each): a
  // total and a partial of a 128-wide tile take 128 of the consumers' 160,
  // the producer keeps 32 -- 32 + 3 x 160 = 4 x 128. Past K = 8192 bytes
  // (tile-m=192 only) the producer spilled 24 bytes at 32 (K = 14336), so
  // there 40/152: measured 3-4 % slower than 32/160 at K = 4096 and 8192.
  if (c.consumerWarpgroups == 3) {
    const bool longK = k > kThreeConsumersMaxK;
    c.producerRegisters = longK ? 40 : 32;
    c.consumerRegisters = longK ? 152 : 160;
    return;
  }
  if (c.mWaves < 2)
    return;
  const bool staged = c.stagedScales.enabled();
  c.producerRegisters = staged && !fusedEpilogue ? 64 : 56;
  c.consumerRegisters = staged && !fusedEpilogue ? 216 : 224;
  // Without staged scales (each unit's loaded from global memory a unit
  // ahead) the word-add descriptors spilled 4 bytes at 224 and 24 at 216
  // (ptxas, the layer's four block products with stage-scales=0,
  // 2026-12-07): those kernels keep the full descriptors.
  c.wordDescriptors = staged;
}

void makeWarpSpecialized(const GemmProblem &p, const GemmOptions &options,
                         GemmConfig &c) {
  setWarpSpecialized(p, options, 2, c);
  // Without promotion a consumer holds one accumulator (BN / 2 registers
  // per thread), so tiles may be 256 wide: half the shared-memory and L2
  // traffic per FLOP of 128-wide ones.
  // (Where whole 256-column tiles cover N, or N is wide enough that the
  // last, partial one matters little.)
  if (c.fastAccumulation && p.n >= 256 && (p.n % 256 == 0 || p.n >= 2048))
    c.bn = 256;
  // Promoting with scales independent of K (no scale registers): the total
  // and the partial of a 192-wide tile fit (192 of the 232 registers; with
  // block scales they spill), and each k32 step reads 85 instead of 96
  // bytes of shared memory per tensor-core cycle.
  else if (!c.fastAccumulation && !p.lhsScale.dependsOnK() &&
           !p.rhsScale.dependsOnK() && p.n >= 192 &&
           (p.n % 192 == 0 || p.n >= 2048))
    c.bn = 192;
  if (options.tileN)
    c.bn = options.tileN;
  chooseRowBands(p, options, c);
  // Staged scales for two bands and three consumers only: 128-row tiles
  // did not gain from them and would give up a stage (docs/GPU.md).
  if (options.stageScales && (c.mWaves > 1 || c.consumerWarpgroups == 3))
    c.stagedScales = stagedScalesFor(p, c);
  bandRegisters(p.k, static_cast<bool>(p.fusedEpilogue), c);
  chooseEpilogue(p, options, c);
  if (options.persistent) {
    const int64_t numM = llvm::divideCeil(p.m, c.bm);
    // Clusters take adjacent M tiles (the last one may be past M: computed,
    // not stored); B tiles split into one multicast slice per CTA.
    if (options.clusterM == 2 && numM >= 2 && c.bn % 16 == 0)
      c.clusterM = 2;
    const int64_t clusterTiles = p.batch *
                                 llvm::divideCeil(numM, c.clusterM) *
                                 llvm::divideCeil(p.n, c.bn);
    c.persistentCtas =
        std::min<int64_t>(options.smCount / c.clusterM, clusterTiles) *
        c.clusterM;
  }
  c.stages = warpSpecializedStages(p, options, c, kMaxStages);
  c.prefetchB = servesPrefetchB(p, options, c);
}

/// Whether a product of few rows (decode steps: M <= 64 tokens) leaves SMs
/// idle with tiles `c.bn` wide, i.e. is bound by streaming B through too
/// few CTAs: the decode plan of the warp-specialized kernel. (Wider
/// products -- a merged gate+up projection's 28672 columns, a 128256-word
/// head -- were measured on it with tiles from decodeTileN on 2026-12-06:
/// no faster than the single-warpgroup kernel's 224 and 1002 CTAs of 128
/// columns, the rowwise head 11 % slower: they keep that kernel.)
bool isNarrowDecode(const GemmProblem &p, const GemmOptions &options,
                    const GemmConfig &c) {
  const int64_t rowTiles = p.batch * llvm::divideCeil(p.m, kWgmmaM);
  return p.m <= kWgmmaM &&
         rowTiles * llvm::divideCeilSigned(p.n, c.bn) < options.smCount;
}

/// The widest tile a promoting (or fast-accumulating) consumer of one row
/// band holds without spilling (verifyGemmConfig's limits).
int64_t widestDecodeTile(const GemmProblem &p, const GemmConfig &c) {
  if (c.fastAccumulation)
    return 256;
  return p.lhsScale.dependsOnK() || p.rhsScale.dependsOnK() ? 128 : 192;
}

/// The tile width of a decode product: B is read once and its bytes bound
/// the time, which is that of the SM that streams the most columns --
/// rounds x (BN + a tile's fixed cost, its epilogue and shorter boxes,
/// taken as 8 columns), with rounds = ceil(tiles / SMs). The cheapest over
/// the widths a consumer holds (multiples of 8 from 16; the wider on ties).
/// For the narrow products served (isNarrowDecode) that is one round: N =
/// 4096 -> 32 (128 tiles), 6144 -> 48, 14336 -> 112, 1024 -> 16.
int64_t decodeTileN(const GemmProblem &p, const GemmOptions &options,
                    const GemmConfig &c) {
  constexpr int64_t kTileCost = 8;
  const int64_t rowTiles = p.batch * llvm::divideCeil(p.m, kWgmmaM);
  const int64_t widest = std::max<int64_t>(
      16, std::min<int64_t>(widestDecodeTile(p, c), llvm::alignTo(p.n, 8)));
  int64_t best = 16, bestCost = std::numeric_limits<int64_t>::max();
  for (int64_t bn = 16; bn <= widest; bn += 8) {
    const int64_t tiles = rowTiles * llvm::divideCeil(p.n, bn);
    const int64_t cost =
        llvm::divideCeil(tiles, options.smCount) * (bn + kTileCost);
    if (cost <= bestCost) {
      best = bn;
      bestCost = cost;
    }
  }
  return best;
}

/// A static M below 64 loads only its rows of A (GemmConfig::aRows; one
/// swizzle atom up to 8 rows), on either kernel's decode configuration.
void clipLhsRows(const GemmProblem &p, const GemmOptions &options,
                 GemmConfig &c) {
  if (options.clipLhsRows && !p.dynamicM && p.m < kWgmmaM)
    c.aRows = std::max<int64_t>(p.m, 1);
}

/// Whether the decode plan's consumer promotes with several K tiles in
/// flight (GemmConfig::pipelinedPromotion): a promoting kernel (fast
/// accumulation keeps one accumulator in flight already) of one row band
/// and one promotion unit per K tile, without staged scales, with tiles up
/// to kMaxPipelinedPromotionTile columns (the total and 4 partials of 48
/// columns, or 2 of 64: BN / 2 registers each).
constexpr int64_t kMaxPipelinedPromotionTile = 64;
bool servesPipelinedPromotion(const GemmProblem &p, const GemmOptions &options,
                              const GemmConfig &c) {
  return options.pipelinedPromotion && !c.fastAccumulation &&
         c.rowBands() == 1 && c.bk == p.promo && !c.stagedScales.enabled() &&
         c.bn <= kMaxPipelinedPromotionTile;
}

/// GemmConfig::kGroups for the pipelined decode consumer: the K tiles
/// split over `decodeKGroups` consumers (at most kMaxKGroups) where they
/// divide and at least one stage per consumer fits beside the reduction
/// buffer (the stages rounded down to a multiple). Their epilogue is the
/// register one: a decode tile's few rows leave the TMA-store epilogue
/// nothing to gain, and only the first consumer writes.
constexpr int64_t kMaxKGroups = 2;
void splitDecodeK(const GemmProblem &p, const GemmOptions &options,
                  GemmConfig &c) {
  const int64_t groups = std::min(options.decodeKGroups, kMaxKGroups);
  if (groups <= 1 || !c.pipelinedPromotion ||
      llvm::divideCeil(p.k, c.bk) % groups != 0)
    return;
  GemmConfig split = c;
  split.kGroups = groups;
  split.epilogue = EpilogueKind::Registers;
  split.storeBytes = 0;
  split.storeChunks = 1;
  split.stagedInput = false;
  split.stages =
      warpSpecializedStages(p, options, split, decodeStages(options)) / groups *
      groups;
  if (split.stages >= groups)
    c = split;
}

/// The warp-specialized kernel for such a product: one consumer warpgroup
/// (64 rows), persistent CTAs over tiles decodeTileN wide, and as many
/// stages as fit (up to GemmOptions::decodeStages). The producer runs ahead of
/// the consumer, so a K tile costs the consumer its wgmmas and a barrier wait
/// instead of a CTA barrier and a refill. With a static M (below 64) the
/// tiles load only its rows of A (GemmConfig::aRows).
void makeDecodeWarpSpecialized(const GemmProblem &p,
                               const GemmOptions &options, GemmConfig &c) {
  setWarpSpecialized(p, options, 1, c);
  c.bn = decodeTileN(p, options, c);
  clipLhsRows(p, options, c);
  chooseEpilogue(p, options, c);
  const int64_t rowTiles = p.batch * llvm::divideCeil(p.m, kWgmmaM);
  if (options.persistent)
    c.persistentCtas = std::min<int64_t>(
        options.smCount, rowTiles * llvm::divideCeil(p.n, c.bn));
  c.stages = warpSpecializedStages(p, options, c, decodeStages(options));
  c.prefetchB = servesPrefetchB(p, options, c);
  c.pipelinedPromotion = servesPipelinedPromotion(p, options, c);
  splitDecodeK(p, options, c);
}

/// Products of few rows (decode steps: M <= 64 tokens) read B once and
/// are bound by its bytes. 128-wide N tiles would leave most SMs idle
/// (N / 128 = 32-48 CTAs at Llama-3-8B's projections on 132 SMs): narrow
/// the tiles (multiples of 8, at least 16) until the CTAs cover the SMs,
/// and give each as many stages as fit in half the shared memory (two CTAs
/// per SM keep more loads in flight).
void makeDecode(const GemmProblem &p, const GemmOptions &options,
                GemmConfig &c) {
  const int64_t rowTiles = p.batch * llvm::divideCeil(p.m, c.bm);
  if (p.m > kWgmmaM ||
      rowTiles * llvm::divideCeilSigned(p.n, c.bn) >= options.smCount)
    return;
  const int64_t wanted = llvm::divideCeil(options.smCount, rowTiles);
  const int64_t bn = std::max<int64_t>(16, p.n / wanted / 8 * 8);
  if (bn >= c.bn)
    return;
  c.bn = bn;
  const int64_t limit =
      std::min<int64_t>(kMaxStages, llvm::divideCeil(p.k, c.bk));
  for (int64_t s = std::max<int64_t>(c.stages, 1); s <= limit; ++s) {
    GemmConfig t = c;
    t.stages = s;
    if (SmemLayout::get(t).totalBytes > kMaxSmemBytes / 2)
      break;
    c.stages = s;
  }
}

} // namespace

int64_t gemm::pipelinedPromotionGroup(const GemmConfig &config) {
  return config.bn <= 48 ? 4 : 2;
}

GemmConfig gemm::chooseGemmConfig(const GemmProblem &p,
                                  const GemmOptions &options) {
  GemmConfig c;
  c.kind = KernelKind::SingleWarpgroup;
  c.bm = kWgmmaM;
  c.bn = chooseBn(p);
  c.bk = 128;
  c.stages = 1;
  c.consumerWarpgroups = 1;
  c.swizzle = Swizzle::None;
  // 16-byte copies need whole, aligned 16-byte chunks in every row.
  c.loader =
      p.k % 16 == 0 ? LoaderKind::ThreadVector : LoaderKind::ThreadScalar;
  c.epilogue = EpilogueKind::Registers;
  // TMA needs 16-byte global row strides.
  if (!options.tmaPipeline || p.k % 16 != 0)
    return c;
  c.loader = LoaderKind::TMA;
  c.swizzle = Swizzle::B128;
  // Fewer than 128 rows would leave a consumer warpgroup idle: those keep
  // the single-warpgroup pipeline (64-row tiles).
  if (options.warpSpecialized && p.m >= 2 * kWgmmaM) {
    makeWarpSpecialized(p, options, c);
    return c;
  }
  if (options.warpSpecialized && options.decodeWarpSpecialized &&
      !options.tileN && isNarrowDecode(p, options, c)) {
    makeDecodeWarpSpecialized(p, options, c);
    return c;
  }
  c.stages =
      std::clamp<int64_t>(options.stages, 1, llvm::divideCeil(p.k, c.bk));
  // The decode products wider than the SMs (a merged gate+up, a head) stay
  // on this kernel (isNarrowDecode) and clip A's rows as the other does.
  clipLhsRows(p, options, c);
  if (!options.tileN)
    makeDecode(p, options, c);
  return c;
}

LogicalResult gemm::verifyGemmConfig(const GemmProblem &p, const GemmConfig &c,
                                     std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  if (c.mWaves < 1 || c.mWaves > 2 || c.bm != kWgmmaM * c.rowBands())
    return fail("BM must be 64 rows per consumer warpgroup, or 128 per "
                "consumer warpgroup in two row bands");
  if (c.mWaves > 1 &&
      (c.kind != KernelKind::WarpSpecialized || c.fastAccumulation ||
       p.dynamicM))
    return fail("two row bands per consumer are for the promoting "
                "warp-specialized kernel with a static M");
  if (c.kind == KernelKind::SingleWarpgroup &&
      (c.consumerWarpgroups != 1 || c.producerRegisters ||
       c.consumerRegisters))
    return fail("the single-warpgroup kernel has one warpgroup and keeps "
                "its registers");
  if (c.kind == KernelKind::WarpSpecialized) {
    if (c.loader != LoaderKind::TMA)
      return fail("the warp-specialized kernel loads with TMA");
    if (c.consumerWarpgroups < 1 || c.consumerWarpgroups > 3)
      return fail("the warp-specialized kernel has 1 to 3 consumer "
                  "warpgroups");
    if (c.consumerWarpgroups == 3 &&
        (c.fastAccumulation || c.mWaves != 1 || c.bn > 128 || c.kGroups != 1))
      return fail("three consumer warpgroups are for promoting products "
                  "with one row band each and tiles up to 128 wide");
    for (int64_t r : {c.producerRegisters, c.consumerRegisters})
      if (r < 24 || r > 256 || r % 8 != 0)
        return fail("setmaxnreg counts must be multiples of 8 in [24, 256]");
    // setmaxnreg moves registers within what the CTA was launched with:
    // the per-thread limit of its block size (65536 / threads, a multiple
    // of 8: 168 for 384 threads) times its threads. Asking for more blocks
    // the consumers' setmaxnreg.inc forever.
    const int64_t launched =
        std::min<int64_t>(255, 65536 / c.threads()) / 8 * 8 * c.threads();
    if ((c.producerRegisters + c.consumerRegisters * c.computeWarpgroups()) *
            kWarpgroupThreads >
        launched)
      return fail("the warpgroups' setmaxnreg counts exceed the registers "
                  "the CTA is launched with");
  }
  if (c.bn % 8 != 0 || c.bn < 8 || c.bn > 256)
    return fail("wgmma N must be a multiple of 8 in [8, 256]");
  if (c.kGroups < 1 || c.kGroups > kMaxKGroups)
    return fail("a row band's K tiles split over 1 or 2 consumers");
  if (c.kGroups > 1 &&
      (!c.pipelinedPromotion || c.epilogue != EpilogueKind::Registers ||
       c.stages % c.kGroups != 0 ||
       llvm::divideCeil(p.k, c.bk) % c.kGroups != 0 || c.clusterM != 1))
    return fail("K tiles split over consumers are for the pipelined "
                "promoting consumer with the register epilogue, stages and "
                "K tiles in multiples of the consumers, without clusters");
  if (c.fastAccumulation &&
      (c.kind != KernelKind::WarpSpecialized || p.lhsScale.dependsOnK() ||
       p.rhsScale.dependsOnK()))
    return fail("fast accumulation is for the warp-specialized kernel and "
                "scales that do not vary along K");
  // A promoting consumer holds a total per row band and a partial: (bands
  // + 1) x BN / 2 registers per thread, which must leave room for addresses
  // and scales.
  if (!c.fastAccumulation && c.kind == KernelKind::WarpSpecialized &&
      (c.bn > 192 || (c.mWaves > 1 && c.bn > 128) ||
       (c.bn > 128 && (p.lhsScale.dependsOnK() || p.rhsScale.dependsOnK()))))
    return fail("a promoting consumer holds (bands + 1) x BN / 2 accumulator "
                "registers: tiles up to 192 wide, 128 with scales that vary "
                "along K or two row bands");
  if (c.aRows && (c.aRows > c.bm || c.loader != LoaderKind::TMA ||
                  c.rowBands() != 1 || p.dynamicM || p.m > c.aRows))
    return fail("loading fewer rows of A than the tile's is for TMA loads "
                "of one row band with a static M of at most those rows");
  if (c.prefetchB && (!p.rhsConstant || p.dynamicM || c.clusterM != 1 ||
                      c.kind != KernelKind::WarpSpecialized))
    return fail("B is prefetched before the grid dependency wait only when "
                "it is constant, M static, by the warp-specialized kernel "
                "without clusters");
  if (c.bk != 128 || c.bk % p.promo != 0)
    return fail("BK must be 128 bytes and hold whole promotion units");
  if (c.stagedScales.enabled() &&
      (c.kind != KernelKind::WarpSpecialized ||
       !(c.stagedScales == stagedScalesFor(p, c))))
    return fail("staged scales are the warp-specialized kernel's, with a "
                "slot for each f32 scale that varies along K");
  if (c.clusterN != 1 || c.clusterM < 1 || c.clusterM > 2)
    return fail("configuration not implemented yet");
  if (c.epilogue == EpilogueKind::SharedTMA) {
    if (c.kind != KernelKind::WarpSpecialized)
      return fail("the TMA-store epilogue is the warp-specialized kernel's");
    if (c.storeBytes != outputBytes(p) || (p.n * c.storeBytes) % 16 != 0 ||
        (c.bn * c.storeBytes) % 128 != 0 || c.storeChunks < 1 ||
        (c.bn * c.storeBytes / 128) % c.storeChunks != 0)
      return fail("the TMA-store epilogue needs output rows of 16-byte "
                  "multiples and column chunks of whole 128-byte boxes");
  } else if (c.storeBytes != 0 || c.storeChunks != 1) {
    return fail("a staging tile without the TMA-store epilogue");
  }
  if (c.stagedInput && !servesStagedInput(p, c))
    return fail("a staged epilogue input is one Full input of 16-bit "
                "elements of a fused consumer, through the TMA-store "
                "epilogue of 16-bit outputs");
  if (c.clusterM > 1 &&
      (!c.persistentCtas || c.persistentCtas % c.clusterM != 0 ||
       c.bn % (8 * c.clusterM) != 0))
    return fail("clusters need persistent CTAs (a multiple of the cluster) "
                "and B slices of whole 8-row swizzle atoms");
  if (c.persistentCtas &&
      (c.kind != KernelKind::WarpSpecialized || c.rasterGroup < 1))
    return fail("only the warp-specialized kernel is persistent");
  if (c.loader == LoaderKind::TMA) {
    // The swizzle span is the box's inner extent: 128 bytes of K.
    if (c.swizzle != Swizzle::B128 || c.bk != 128)
      return fail("TMA loads need 128B swizzle and BK = 128");
    if (p.k % 16 != 0)
      return fail("TMA needs K to be a multiple of 16 (16-byte row strides)");
    if (c.stages < 1 || c.stages > kMaxPipelineStages)
      return fail("TMA pipeline stages must be 1..32");
  } else if (c.stages != 1 || c.swizzle != Swizzle::None) {
    return fail("thread copies serve one unswizzled stage");
  }
  if (c.loader == LoaderKind::ThreadVector && p.k % 16 != 0)
    return fail("16-byte copies need K to be a multiple of 16");
  if (c.loader == LoaderKind::ThreadScalar && p.elementBytes != 1)
    return fail("bf16 rows must be 16-byte multiples (K % 8 == 0)");
  // 227 KB of shared memory per block on sm_90 (opt-in).
  if (SmemLayout::get(c).totalBytes > kMaxSmemBytes)
    return fail("the tiles of all stages exceed 227 KB of shared memory");
  if (!c.persistentCtas && p.m > 65535 * c.bm)
    return fail("M too large for grid.y");
  if (p.dynamicM && c.clusterM != 1)
    return fail("dynamic M is not served with clusters yet");
  return success();
}

FailureOr<SmallVector<GemmPlan, 2>>
gemm::planGemms(func::FuncOp func, const GemmOptions &options,
                std::string &why) {
  FailureOr<GemmProblem> problem = analyzeGemm(func, why);
  if (failed(problem))
    return failure();
  SmallVector<GemmPlan, 2> plans;
  // The cluster walk assumes M tiles known at compile time: M at run time
  // runs without (cluster-m is an experimental speed option).
  GemmOptions opts = options;
  if (problem->dynamicM)
    opts.clusterM = 1;
  auto add = [&](GemmProblem p, int64_t maxRows) {
    GemmPlan plan{p, chooseGemmConfig(p, opts), maxRows};
    // Any M: a CTA per SM (those without a tile at run time exit).
    if (p.dynamicM && !maxRows && plan.config.persistentCtas)
      plan.config.persistentCtas = opts.smCount;
    if (failed(verifyGemmConfig(plan.problem, plan.config, why)))
      return failure();
    plans.push_back(plan);
    return success();
  };
  if (!problem->dynamicM) {
    if (failed(add(*problem, 0)))
      return failure();
    return plans;
  }
  // Decode steps (M <= 64 rows: one row band) and everything else.
  GemmProblem decode = *problem;
  decode.m = kWgmmaM;
  if (failed(add(decode, kWgmmaM)) || failed(add(*problem, 0)))
    return failure();
  return plans;
}

StagedScales gemm::stagedScalesFor(const GemmProblem &p,
                                   const GemmConfig &c) {
  const bool lhs = p.lhsScale.dependsOnK(), rhs = p.rhsScale.dependsOnK();
  if ((!lhs && !rhs) || (lhs && !p.lhsScale.elementType.isF32()) ||
      (rhs && (!p.rhsScale.elementType.isF32() ||
               p.rhsScale.rowBlock % c.bn != 0)) ||
      c.bk != p.promo)
    return {};
  StagedScales s;
  s.lhsRows = lhs ? c.bm : 0;
  s.rhs = rhs;
  return s;
}

std::string gemm::describeGemmPlan(const GemmPlan &plan) {
  const GemmProblem &p = plan.problem;
  const GemmConfig &c = plan.config;
  std::string s;
  llvm::raw_string_ostream os(s);
  if (p.dynamicM)
    os << (plan.maxRows ? "M <= " + std::to_string(plan.maxRows)
                        : std::string("larger M"))
       << " (M at run time): ";
  os << "wgmma kernel m64n" << c.bn << "k" << kMmaK / p.elementBytes
     << (p.elementBytes == 2 ? " bf16" : "");
  if (c.kind == KernelKind::WarpSpecialized)
    os << ", warp-specialized (1 producer + " << c.computeWarpgroups()
       << " consumer warpgroups, setmaxnreg " << c.producerRegisters << "/"
       << c.consumerRegisters << ")";
  if (c.mWaves > 1)
    os << ", " << c.mWaves << " row bands per consumer";
  os << ", CTA tile " << c.bm << "x" << c.bn << "x" << c.bk / p.elementBytes
     << (c.fastAccumulation
             ? std::string(", fast accumulation (no promotion)")
             : ", promotion every " + std::to_string(p.promo / p.elementBytes) +
                   " K")
     << (c.pipelinedPromotion
             ? " (" + std::to_string(pipelinedPromotionGroup(c)) +
                   " K tiles in flight" +
                   (c.kGroups > 1 ? " per consumer, K tiles split over " +
                                        std::to_string(c.kGroups) + " consumers"
                                  : std::string()) +
                   ")"
             : std::string())
     << ", grid ";
  if (c.persistentCtas)
    os << c.persistentCtas << " persistent CTAs"
       << (c.clusterM > 1 ? " in clusters of " + std::to_string(c.clusterM) +
                                " along M (B multicast)"
                          : std::string())
       << " over "
       << p.batch * llvm::divideCeil(p.m, c.bm) * llvm::divideCeil(p.n, c.bn)
       << " tiles";
  else
    os << llvm::divideCeil(p.n, c.bn) << "x" << llvm::divideCeil(p.m, c.bm)
       << "x" << p.batch;
  if (c.loader == LoaderKind::TMA)
    os << ", TMA into " << c.stages << " 128B-swizzled stages";
  if (c.aRows)
    os << " loading " << c.aRows << (c.aRows == 1 ? " row" : " rows")
       << " of A";
  if (c.prefetchB)
    os << ", B prefetched before the grid dependency wait";
  if (c.stagedScales.enabled())
    os << " with " << c.stagedScales.count() << " staged scales each";
  if (c.epilogue == EpilogueKind::SharedTMA)
    os << ", TMA-store epilogue"
       << (c.storeChunks > 1
               ? " in " + std::to_string(c.storeChunks) + " column chunks"
               : std::string());
  if (p.fusedEpilogue)
    os << ", fused element-wise epilogue (" << p.epilogueInputs.size() - 1
       << " more inputs)";
  if (c.stagedInput)
    os << ", its input staged by TMA";
  return s;
}

bool gemm::isScalarEpilogueBody(linalg::GenericOp g) {
  Region &body = g.getRegion();
  for (Operation &op : body.getOps()) {
    if (isa<linalg::YieldOp>(op))
      continue;
    Dialect *d = op.getDialect();
    if (!d || !isa<arith::ArithDialect, math::MathDialect>(d) ||
        op.getNumRegions() != 0)
      return false;
    for (Type t : op.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return false;
    for (Value v : op.getOperands())
      if (!body.isAncestor(v.getParentRegion()) &&
          !matchPattern(v, m_Constant()))
        return false;
  }
  return true;
}

const GemmProblem::EpilogueInput *gemm::stageableInput(const GemmProblem &p) {
  const GemmProblem::EpilogueInput *full = nullptr;
  for (const GemmProblem::EpilogueInput &in : p.epilogueInputs) {
    if (in.kind != GemmProblem::EpilogueInput::Kind::Full)
      continue;
    if (full)
      return nullptr;
    full = &in;
  }
  return full && full->elementType.isIntOrFloat() &&
                 full->elementType.getIntOrFloatBitWidth() == 16
             ? full
             : nullptr;
}

std::optional<GemmProblem::EpilogueInput::Kind>
gemm::epilogueInputKind(linalg::GenericOp g, OpOperand &input, int64_t n) {
  using Kind = GemmProblem::EpilogueInput::Kind;
  auto type = dyn_cast<ShapedType>(input.get().getType());
  auto outType = cast<ShapedType>(g.getDpsInitOperand(0)->get().getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  AffineMap map = g.getMatchingIndexingMap(&input);
  if (map.isIdentity() && type.getShape() == outType.getShape())
    return Kind::Full;
  if (type.getRank() == 0 && map.getNumResults() == 0)
    return Kind::Scalar;
  const unsigned last = outType.getRank() - 1;
  if (type.getRank() == 1 && map.getNumResults() == 1 &&
      map.getResult(0) == getAffineDimExpr(last, g.getContext()) &&
      type.getDimSize(0) == n && outType.getDimSize(last) == n)
    return Kind::Row;
  return std::nullopt;
}

void gemm::cloneCapturedValues(Region &region, OpBuilder &b, IRMapping &map) {
  region.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!region.isAncestor(v.getParentRegion()) && !map.contains(v))
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  });
}
