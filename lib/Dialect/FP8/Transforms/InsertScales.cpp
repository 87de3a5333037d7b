//===- InsertScales.cpp - Run chosen matrix products in FP8 ---------------===//
//
// Part of fp8-opt. See Passes.td for what the pass does; this file keeps the
// decision (policy) apart from the rewrite so that the report states exactly
// what was decided and why.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/IR/TorchModule.h"
#include "fp8/Dialect/FP8/Transforms/InputFiles.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Support/OutputFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <memory>

#define DEBUG_TYPE "fp8-insert-scales"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8INSERTSCALES
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// Of the --report JSON; fp8rt.report reads up to this version (1: the
/// first with one; "module"/"module_class" entries where the ONNX export
/// recorded torch modules).
constexpr int64_t kReportSchemaVersion = 1;

struct Rule {
  std::string pattern;
  llvm::Regex regex;
  /// An "exclude" entry: a glob instead of the regex, and the text it
  /// refers to (a GlobPattern keeps a StringRef into it: heap-allocated so
  /// that moving the rule keeps it in place).
  std::optional<llvm::GlobPattern> glob;
  std::unique_ptr<std::string> globText;
  std::optional<bool> skip;
  std::optional<RecipeKind> recipe;
  std::optional<Format> format;
  /// Products this rule decided (the first matching rule decides).
  unsigned uses = 0;
};

/// What to do with one product.
struct Decision {
  bool fp8 = false;
  RecipeKind recipe = RecipeKind::Current;
  Format format = Format::E4M3;
  std::string reason;
};

/// The only user of `v` when it is an element-wise FP32 -> FP16/BF16
/// rounding (a linalg.generic whose body is one arith.truncf): the importer
/// rounds FP16/BF16 products accumulated in FP32 so.
linalg::GenericOp roundingOf(Value v) {
  if (!v.hasOneUse())
    return {};
  auto g = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
  if (!g || g.getNumDpsInputs() != 1 || g.getNumResults() != 1 ||
      g.getDpsInputs()[0] != v || g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!trunc || trunc->getNextNode() != yield ||
      trunc.getIn() != body.getArgument(0) ||
      yield.getValues().size() != 1 || yield.getValues()[0] != trunc ||
      !isa<Float16Type, BFloat16Type>(trunc.getType()))
    return {};
  return g;
}

bool isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
         matchPattern(fill.getInputs()[0], m_Zero());
}

struct FP8InsertScalesPass
    : fp8::impl::FP8InsertScalesBase<FP8InsertScalesPass> {
  using Base::Base;

  /// Reads and parses a JSON file; `what` names it in diagnostics.
  FailureOr<llvm::json::Value> readJSON(StringRef path, StringRef what) {
    return readJSONFile(path, what, [&] { return getOperation().emitError(); });
  }

  LogicalResult loadPolicy(std::vector<Rule> &rules) {
    if (policyFile.empty())
      return success();
    FailureOr<llvm::json::Value> json = readJSON(policyFile, "policy");
    if (failed(json))
      return failure();
    auto *root = json->getAsObject();
    auto *list = root ? root->getArray("rules") : nullptr;
    auto *exclude = root ? root->getArray("exclude") : nullptr;
    for (auto &kv : root ? *root : llvm::json::Object())
      if (kv.first != "rules" && kv.first != "exclude")
        return getOperation().emitError()
               << "policy file " << policyFile << ": unknown key \""
               << StringRef(kv.first) << "\" (expected rules, exclude)";
    if (!list && !exclude)
      return getOperation().emitError()
             << "policy file " << policyFile
             << ": expected an object with a \"rules\" or \"exclude\" array";
    // "exclude": globs of ONNX node names or torch module paths kept out of
    // FP8, ModelOpt's "*lm_head*" style; they come before the rules.
    llvm::json::Array none;
    for (auto [i, value] : llvm::enumerate(exclude ? *exclude : none)) {
      std::optional<StringRef> text = value.getAsString();
      if (!text)
        return getOperation().emitError()
               << "policy file " << policyFile << ", exclude " << i
               << ": expected a string (a glob such as \"*lm_head*\")";
      Rule rule;
      rule.pattern = text->str();
      rule.globText = std::make_unique<std::string>(rule.pattern);
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(*rule.globText);
      if (!glob)
        return getOperation().emitError()
               << "policy file " << policyFile << ", exclude " << i
               << ": bad glob '" << *text
               << "': " << llvm::toString(glob.takeError());
      rule.glob = std::move(*glob);
      rule.skip = true;
      rules.push_back(std::move(rule));
    }
    for (auto [i, value] : llvm::enumerate(list ? *list : none)) {
      auto *obj = value.getAsObject();
      auto where = [&, i = i]() {
        return getOperation().emitError()
               << "policy file " << policyFile << ", rule " << i << ": ";
      };
      if (!obj)
        return where() << "expected an object";
      Rule rule;
      auto match = obj->getString("match");
      if (!match)
        return where() << "needs a \"match\" regular expression";
      rule.pattern = match->str();
      rule.regex = llvm::Regex(rule.pattern);
      std::string regexError;
      if (!rule.regex.isValid(regexError))
        return where() << "bad regular expression '" << rule.pattern
                       << "': " << regexError;
      for (auto &kv : *obj) {
        StringRef key = kv.first;
        if (key != "match" && key != "skip" && key != "recipe" &&
            key != "format")
          return where() << "unknown key \"" << key
                         << "\" (expected match, skip, recipe, format)";
      }
      rule.skip = obj->getBoolean("skip");
      if (auto r = obj->getString("recipe")) {
        rule.recipe = symbolizeRecipeKind(*r);
        if (!rule.recipe || *rule.recipe == RecipeKind::None)
          return where() << "unknown recipe '" << *r << "'";
      }
      if (auto f = obj->getString("format")) {
        rule.format = symbolizeFormat(*f);
        if (!rule.format)
          return where() << "unknown format '" << *f << "'";
      }
      rules.push_back(std::move(rule));
    }
    return success();
  }

  /// Calibrated activation amaxes by ONNX node name.
  LogicalResult loadCalibration(llvm::StringMap<float> &amax) {
    if (calibrationFile.empty())
      return success();
    FailureOr<llvm::json::Value> json =
        readJSON(calibrationFile, "calibration");
    if (failed(json))
      return failure();
    auto *root = json->getAsObject();
    if (!root)
      return getOperation().emitError()
             << "calibration file " << calibrationFile
             << ": expected an object {node: {\"amax\": value}}";
    for (auto &kv : *root) {
      auto *entry = kv.second.getAsObject();
      std::optional<double> value = entry ? entry->getNumber("amax") : std::nullopt;
      if (!value || !std::isfinite(*value) || *value < 0)
        return getOperation().emitError()
               << "calibration file " << calibrationFile << ": node '"
               << StringRef(kv.first) << "' needs a finite, non-negative \"amax\"";
      amax[kv.first] = static_cast<float>(*value);
    }
    return success();
  }

  /// Sum of squares of x (or of x - y) over all elements, as tensor<f32>.
  static Value energy(OpBuilder &b, Location loc, Value x, Value y = {}) {
    auto type = cast<RankedTensorType>(x.getType());
    MLIRContext *ctx = b.getContext();
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                         b.getF32Type());
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
    AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
    AffineMap scalar = AffineMap::get(type.getRank(), 0, {}, ctx);
    SmallVector<Value> ins{x};
    SmallVector<AffineMap> maps{id};
    if (y) {
      ins.push_back(y);
      maps.push_back(id);
    }
    maps.push_back(scalar);
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ins, ValueRange{init}, maps, iters,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 auto f32 = [&](Value v) -> Value {
                   return v.getType().isF32()
                              ? v
                              : arith::ExtFOp::create(nb, nl, nb.getF32Type(), v);
                 };
                 Value d = f32(args[0]);
                 if (args.size() == 3)
                   d = arith::SubFOp::create(nb, nl, d, f32(args[1]));
                 Value sq = arith::MulFOp::create(nb, nl, d, d);
                 linalg::YieldOp::create(
                     nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args.back(), sq)});
               })
        .getResult(0);
  }

  /// Accumulates this run's statistics of one FP8 product into a state
  /// global: energies added, the amax (last entry) maxed.
  void accumulateStats(OpBuilder &b, Location loc, SymbolTable &symbols,
                       StringRef name, ArrayRef<Value> stats) {
    auto type = RankedTensorType::get({int64_t(stats.size())}, b.getF32Type());
    OpBuilder mb(b.getContext());
    mb.setInsertionPointToStart(getOperation().getBody());
    auto global = ml_program::GlobalOp::create(
        mb, loc, name, type, /*is_mutable=*/true,
        DenseElementsAttr::get(type, 0.0f), mb.getStringAttr("private"));
    symbols.insert(global);
    auto ref = FlatSymbolRefAttr::get(global.getSymNameAttr());
    Value old = ml_program::GlobalLoadOp::create(b, loc, type, ref);
    SmallVector<Value> updated;
    for (auto [i, v] : llvm::enumerate(stats)) {
      Value idx = arith::ConstantIndexOp::create(b, loc, i);
      Value prev = tensor::ExtractOp::create(b, loc, old, ValueRange{idx});
      Value now = tensor::ExtractOp::create(b, loc, v, ValueRange{});
      updated.push_back(i + 1 == stats.size()
                            ? Value(arith::MaximumFOp::create(b, loc, prev, now))
                            : Value(arith::AddFOp::create(b, loc, prev, now)));
    }
    Value next = tensor::FromElementsOp::create(b, loc, type, updated);
    ml_program::GlobalStoreOp::create(b, loc, ref, next);
  }

  LogicalResult checkOptions() {
    // The option parser admits the FP8 recipes only; a C++ caller may set
    // any RecipeKind.
    if (recipe == RecipeKind::None)
      return getOperation().emitError()
             << "fp8-insert-scales: recipe 'none' inserts nothing (expected "
                "delayed, current, rowwise, block or mxfp8)";
    for (auto *list : {&actBlock, &weightBlock})
      if (!list->empty() &&
          (list->size() > 2 || llvm::any_of(*list, [](int64_t b) {
             return b < 1 || b > kMaxBlockSize;
           })))
        return getOperation().emitError()
               << "fp8-insert-scales: block shapes take 1 or 2 sizes in [1, "
               << kMaxBlockSize << "]";
    // The numeric options are the delayed recipe's parameters: its
    // attribute's verifier is the one rule for them.
    auto emit = [&] {
      return getOperation().emitError() << "fp8-insert-scales: ";
    };
    if (failed(DelayedScalingAttr::verify(emit, history, AmaxAlgo::Max, margin,
                                          pow2)))
      return failure();
    return success();
  }

  /// The recipe attribute for compute_scale, and the layouts of the two
  /// operands (lhs [..., M, K], rhs [..., K, N]).
  struct Plan {
    RecipeAttrInterface recipe;
    ScaleLayoutAttr lhsLayout, rhsLayout;
    Format format;
    Attribute delayed; // tag for fp8-track-amax
  };

  Plan plan(RecipeKind recipeKind, Format format, bool rhsIsWeight) {
    MLIRContext *ctx = &getContext();
    Plan p;
    p.format = format;
    // Inference graphs only have forward tensors: hybrid means E4M3 here.
    if (p.format == Format::Hybrid)
      p.format = Format::E4M3;
    auto tensor = ScaleLayoutAttr::get(ctx, Granularity::Tensor);
    auto block = [&](ArrayRef<int64_t> b) {
      return ScaleLayoutAttr::get(ctx, Granularity::Block, b);
    };
    if (recipeKind == RecipeKind::Current ||
        recipeKind == RecipeKind::Delayed) {
      p.recipe = CurrentScalingAttr::get(ctx, 0.0f, pow2);
      p.lhsLayout = p.rhsLayout = tensor;
      if (recipeKind == RecipeKind::Delayed)
        p.delayed =
            DelayedScalingAttr::get(ctx, history, amaxAlgo, margin, pow2);
      return p;
    }
    if (recipeKind == RecipeKind::Rowwise) {
      // torchao's rowwise: one scale per row of the lhs [..., M, K] (per
      // token) and per column of the rhs [..., K, N] (per output channel
      // of a weight), each from its own amax along K.
      p.recipe = CurrentScalingAttr::get(ctx, 0.0f, pow2);
      p.lhsLayout = ScaleLayoutAttr::get(ctx, Granularity::Row);
      p.rhsLayout = ScaleLayoutAttr::get(ctx, Granularity::Col);
      return p;
    }
    if (recipeKind == RecipeKind::Block) {
      SmallVector<int64_t> act(actBlock.begin(), actBlock.end());
      SmallVector<int64_t> weight(weightBlock.begin(), weightBlock.end());
      if (act.empty())
        act = {1, 128};
      if (weight.empty())
        weight = {128, 128};
      auto attr = BlockScalingAttr::get(ctx, act, weight, blockPow2,
                                        llvm::APFloat(0.0f));
      p.recipe = attr;
      p.lhsLayout = block(act);
      if (rhsIsWeight) {
        p.rhsLayout = block(weight);
      } else {
        // An activation on the right: the same blocks, along K.
        SmallVector<int64_t> t(act.rbegin(), act.rend());
        if (t.size() == 1)
          t = {act[0], 1};
        p.rhsLayout = block(t);
      }
      return p;
    }
    auto mx = MXScalingAttr::get(ctx, mxRounding);
    p.recipe = mx;
    p.lhsLayout = block({1, MXScalingAttr::kBlockSize});
    p.rhsLayout = block({MXScalingAttr::kBlockSize, 1});
    return p;
  }

  /// Quantizes `x` with `layout`, returning (q, scale). Constant weights
  /// never take delayed scaling: their amax is known, so current scaling
  /// folds to the exact scale at compile time.
  std::pair<Value, Value> quantize(OpBuilder &b, Location loc, Value x,
                                   const Plan &p, ScaleLayoutAttr layout,
                                   std::optional<float> calibrated = {}) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> scaleShape = *layout.getScaleShape(type.getShape());
    auto f32 = b.getF32Type();
    auto amaxType = RankedTensorType::get(scaleShape, f32);
    Type scaleElt = p.recipe.usesE8M0Scales()
                        ? Type(Float8E8M0FNUType::get(b.getContext()))
                        : Type(f32);
    auto scaleType = RankedTensorType::get(scaleShape, scaleElt);
    const bool activation = !isWeight(x);
    // A calibrated per-tensor current scale is static: no amax at run time.
    Value amax;
    if (calibrated && activation && layout.isPerTensor() && !p.delayed)
      amax = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(amaxType, *calibrated));
    else
      amax = AmaxOp::create(b, loc, amaxType, x, layout);
    auto scale =
        ComputeScaleOp::create(b, loc, scaleType, amax, Value(), p.recipe,
                               p.format);
    if (p.delayed && activation) {
      scale->setAttr("fp8.delayed", p.delayed);
      if (calibrated)
        scale->setAttr("fp8.calibrated_amax", b.getF32FloatAttr(*calibrated));
    }
    auto qType = type.clone(getFloatType(b.getContext(), p.format));
    Value q = QuantizeOp::create(b, loc, qType, x, scale, layout);
    return {q, scale};
  }

  /// Whether `op` becomes an FP8 product, with which recipe and format, and
  /// why: its structure first (which no rule can override), then the
  /// policy (keep-first-last, include-attention, the first matching rule).
  Decision decide(linalg::LinalgOp op, StringRef name, StringRef module,
                  Operation *firstLinear, Operation *lastLinear,
                  MutableArrayRef<Rule> rules) {
    const bool batched = isa<linalg::BatchMatmulOp>(op);
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    Value init = op.getDpsInits()[0];
    const bool rhsIsWeight = isWeight(rhs);
    Decision d;
    d.recipe = recipe;
    d.format = format;
    // Structural requirements first: they cannot be overridden.
    auto named = dyn_cast<linalg::MatmulOp>(op.getOperation());
    auto namedBatch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
    bool defaultMaps = (named && !named.hasUserDefinedMaps()) ||
                       (namedBatch && !namedBatch.hasUserDefinedMaps());
    auto elt = getElementTypeOrSelf(lhs.getType());
    if (!defaultMaps)
      d.reason = "transposed/broadcast indexing maps";
    else if (!isa<Float32Type, Float16Type, BFloat16Type>(elt) ||
             getElementTypeOrSelf(rhs.getType()) != elt ||
             (getElementTypeOrSelf(init.getType()) != elt &&
              !getElementTypeOrSelf(init.getType()).isF32()))
      d.reason = "not an f32/f16/bf16 product";
    else if (!isZeroFill(init))
      d.reason = "accumulates into a non-zero tensor";
    else {
      d.fp8 = true;
      if (batched && !includeAttention && !rhsIsWeight) {
        d.fp8 = false;
        d.reason = "activation x activation product (include-attention "
                   "is off)";
      } else if (keepFirstLast && (op == firstLinear || op == lastLinear)) {
        d.fp8 = false;
        d.reason = op == lastLinear ? "last linear layer kept in high "
                                      "precision (keep-first-last)"
                                    : "first linear layer kept in high "
                                      "precision (keep-first-last)";
      }
      for (Rule &rule : rules) {
        // Against the ONNX node name and the torch module path.
        auto matches = [&](StringRef key) {
          return rule.glob ? rule.glob->match(key) : rule.regex.match(key);
        };
        if (!matches(name) && (module.empty() || !matches(module)))
          continue;
        ++rule.uses;
        if (rule.glob) {
          d.fp8 = false;
          d.reason = "policy exclude '" + rule.pattern + "'";
        } else if (rule.skip.value_or(false)) {
          d.fp8 = false;
          d.reason = "policy rule '" + rule.pattern + "'";
        } else {
          d.fp8 = true;
          d.reason = "policy rule '" + rule.pattern + "'";
          if (rule.recipe)
            d.recipe = *rule.recipe;
          if (rule.format)
            d.format = *rule.format;
        }
        break;
      }
    }
    // Dynamic dimensions (issue 14): per-tensor scales take any; scales per
    // row or block take a dynamic M (the lhs rows, and batch dimensions:
    // one scale per index, a dynamic scale dimension), not a dynamic K or N
    // (blocks along them would have dynamic padding).
    auto lhsType = cast<ShapedType>(lhs.getType());
    auto rhsType = cast<ShapedType>(rhs.getType());
    const bool dynamic = !lhsType.hasStaticShape() || !rhsType.hasStaticShape();
    const bool dynamicKN = lhsType.isDynamicDim(lhsType.getRank() - 1) ||
                           rhsType.isDynamicDim(rhsType.getRank() - 1) ||
                           rhsType.isDynamicDim(rhsType.getRank() - 2);
    const bool dynamicRhsBatch =
        llvm::any_of(rhsType.getShape().drop_back(2), ShapedType::isDynamic);
    if (d.fp8 && dynamic && (dynamicKN || dynamicRhsBatch) &&
        d.recipe != RecipeKind::Current && d.recipe != RecipeKind::Delayed) {
      d.fp8 = false;
      d.reason = "dynamic K or N (only the per-tensor recipes, current and "
                 "delayed, take them; per-row and per-block scales take a "
                 "dynamic M)";
    }
    return d;
  }

  /// Replaces `op` by its FP8 product under plan `p` (with `analyze`, keeps
  /// it as the FP32 twin that feeds the statistics), noting what it did in
  /// the report `entry`.
  void rewriteProduct(linalg::LinalgOp op, const Plan &p, StringRef name,
                      const llvm::StringMap<float> &calibration,
                      SymbolTable &symbols, unsigned &statsIndex,
                      llvm::json::Object &entry) {
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    OpBuilder b(op);
    Location loc = op.getLoc();
    std::optional<float> calibrated;
    if (auto it = calibration.find(name); it != calibration.end()) {
      calibrated = it->second;
      entry["calibrated_amax"] = double(*calibrated);
    }
    auto [qa, sa] = quantize(b, loc, lhs, p, p.lhsLayout, calibrated);
    auto [qb, sb] = quantize(b, loc, rhs, p, p.rhsLayout);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // An FP16/BF16 product accumulated in FP32 and rounded once: the
    // scaled product rounds its FP32 accumulators to the narrow type
    // itself (the same single rounding).
    linalg::GenericOp rounding =
        analyze ? linalg::GenericOp() : roundingOf(op->getResult(0));
    if (rounding)
      resultType = cast<RankedTensorType>(rounding.getResult(0).getType());
    auto product = ScaledMatmulOp::create(
        b, loc, resultType, qa, sa, qb, sb, /*bias=*/Value(), p.lhsLayout,
        p.rhsLayout, /*transpose_rhs=*/false, Epilogue::None,
        /*lhs_scale_m_major=*/IntegerAttr());
    Value fp32 = op->getResult(0);
    if (rounding) {
      rounding.getResult(0).replaceAllUsesWith(product.getResult());
      rounding.erase();
    }
    fp32.replaceAllUsesWith(product.getResult());
    if (analyze) {
      // The FP32 twin stays, feeding only the statistics (and stays FP32:
      // fp8-high-precision-products leaves it alone).
      op->setAttr(kFP32ReferenceAttrName, b.getUnitAttr());
      b.setInsertionPointAfter(op);
      auto deq = [&](Value q, Value s, ScaleLayoutAttr l, Value like) {
        return DequantizeOp::create(b, loc, like.getType(), q, s, l)
            .getResult();
      };
      Value lhsAmax = AmaxOp::create(
          b, loc, RankedTensorType::get({}, b.getF32Type()), lhs,
          ScaleLayoutAttr::get(&getContext(), Granularity::Tensor));
      SmallVector<Value> stats{
          energy(b, loc, lhs),
          energy(b, loc, lhs, deq(qa, sa, p.lhsLayout, lhs)),
          energy(b, loc, rhs),
          energy(b, loc, rhs, deq(qb, sb, p.rhsLayout, rhs)),
          energy(b, loc, fp32),
          energy(b, loc, product.getResult(), fp32),
          lhsAmax};
      std::string stateName = "fp8_state_stats_" + std::to_string(statsIndex++);
      accumulateStats(b, loc, symbols, stateName, stats);
      entry["stats"] = stateName;
    } else {
      op->erase();
    }
  }

  void runOnOperation() override {
    if (failed(checkOptions()))
      return signalPassFailure();
    std::vector<Rule> rules;
    if (failed(loadPolicy(rules)))
      return signalPassFailure();
    llvm::StringMap<float> calibration;
    if (failed(loadCalibration(calibration)))
      return signalPassFailure();
    SymbolTable symbols(getOperation());
    unsigned statsIndex = 0;

    // Candidates in program order.
    SmallVector<linalg::LinalgOp> products;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        products.push_back(cast<linalg::LinalgOp>(op));
    });
    // The first and last linear layers (not attention products).
    Operation *firstLinear = nullptr, *lastLinear = nullptr;
    for (linalg::LinalgOp op : products)
      if (isa<linalg::MatmulOp>(op)) {
        if (!firstLinear)
          firstLinear = op;
        lastLinear = op;
      }

    llvm::json::Array report;
    for (linalg::LinalgOp op : products) {
      std::string name = getNodeName(op.getLoc());
      std::string module = getTorchModuleName(op);
      Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
      const bool rhsIsWeight = isWeight(rhs);
      Decision d = decide(op, name, module, firstLinear, lastLinear, rules);
      llvm::json::Object entry{
          {"node", name},
          {"op", op->getName().getStringRef()},
          {"lhs", formatShape(cast<ShapedType>(lhs.getType()).getShape())},
          {"rhs", formatShape(cast<ShapedType>(rhs.getType()).getShape())},
          {"rhs_is_weight", rhsIsWeight},
          {"fp8", d.fp8}};
      if (!module.empty()) {
        entry["module"] = module;
        if (std::string cls = getTorchModuleClass(op.getLoc()); !cls.empty())
          entry["module_class"] = cls;
      }
      if (!d.reason.empty())
        entry["reason"] = d.reason;
      if (!d.fp8) {
        report.push_back(std::move(entry));
        continue;
      }
      Plan p = plan(d.recipe, d.format, rhsIsWeight);
      rewriteProduct(op, p, name, calibration, symbols, statsIndex, entry);
      std::string la, lb;
      llvm::raw_string_ostream(la) << p.lhsLayout;
      llvm::raw_string_ostream(lb) << p.rhsLayout;
      entry["recipe"] = stringifyRecipeKind(d.recipe).str();
      entry["format"] = stringifyFormat(p.format).str();
      entry["lhs_layout"] = la;
      entry["rhs_layout"] = lb;
      report.push_back(std::move(entry));
    }

    // A rule that decides nothing is almost always a typo in a node name:
    // a warning, or under `strict` an error.
    unsigned numExcludes = llvm::count_if(rules, [](const Rule &r) {
      return r.glob.has_value();
    });
    for (auto [i, rule] : llvm::enumerate(rules)) {
      if (rule.uses)
        continue;
      InFlightDiagnostic diag =
          strict ? getOperation().emitError() : getOperation().emitWarning();
      diag << "policy file " << policyFile << ", "
           << (rule.glob ? "exclude " : "rule ")
           << (rule.glob ? i : i - numExcludes) << " ('" << rule.pattern
           << "') matches no FP8 candidate product (or only products an "
              "earlier rule decides); rules match ONNX node names and torch "
              "module paths, see --report";
      if (strict)
        return signalPassFailure();
    }

    if (!reportFile.empty()) {
      llvm::json::Value json(
          llvm::json::Object{{"schema_version", kReportSchemaVersion},
                             {"pass", "fp8-insert-scales"},
                             {"recipe", stringifyRecipeKind(recipe).str()},
                             {"format", stringifyFormat(format).str()},
                             {"products", std::move(report)}});
      // Atomically (never a half-written report), and never over one of
      // the pass's own inputs.
      OutputGuard guard;
      if (!policyFile.empty())
        guard.addInput(policyFile, "the policy file");
      if (!calibrationFile.empty())
        guard.addInput(calibrationFile, "the calibration file");
      std::string error = guard.checkOutput(reportFile, "the report");
      if (error.empty())
        error = writeOutput(reportFile, [&](raw_ostream &os) {
          os << llvm::formatv("{0:2}", json) << "\n";
        });
      if (!error.empty()) {
        getOperation().emitError() << "fp8-insert-scales: " << error;
        return signalPassFailure();
      }
    }
  }
};
} // namespace
