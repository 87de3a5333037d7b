//===- KVCache.cpp - FP8 KV-cache inputs and outputs ----------------------===//
//
// Part of fp8-opt. See Passes.td (fp8-kv-cache) for the contract. Written
// here because nothing upstream changes a function's signature to FP8: the
// pass is a signature rewrite plus one local push of `fp8.quantize` through
// the importer's Concat (a tensor.insert_slice chain), so that the cached
// part of a `present` output is the `past` input's bytes, verbatim.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/InputFiles.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8KVCACHE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

bool isHighPrecision(Type t) {
  return isa<Float32Type, Float16Type, BFloat16Type>(t);
}

/// A scale as diagnostics print it (shortest round-tripping form).
std::string text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string nameOf(DictionaryAttr attrs, StringRef fallback) {
  if (attrs)
    if (auto n = attrs.getAs<StringAttr>("onnx.name"))
      return n.str();
  return fallback.str();
}

/// Walks the Concat that builds `v` (insert_slice sources and destinations)
/// and returns the block arguments among the pieces.
void collectPieces(Value v, SmallVectorImpl<BlockArgument> &args) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    args.push_back(arg);
    return;
  }
  if (auto ins = v.getDefiningOp<tensor::InsertSliceOp>()) {
    collectPieces(ins.getSource(), args);
    collectPieces(ins.getDest(), args);
  }
}

struct FP8KVCachePass : fp8::impl::FP8KVCacheBase<FP8KVCachePass> {
  using Base::Base;

  /// One cache tensor: a graph input (argument index) or output (result
  /// index), and the scale chosen for it.
  struct Entry {
    std::string name;
    unsigned index;
    int pair = -1;               // index into the other list
    bool byName = false;         // paired by name, not through a Concat
    bool hasCachePiece = false;  // (outputs) its Concat holds a cache input
  };

  /// What fp8-kv-cache decided for a function (decide), and rewrites
  /// (rewrite).
  struct CachePlan {
    SmallVector<Entry> ins, outs;
    SmallVector<float> inScale, outScale;
  };

  LogicalResult readScales(func::FuncOp func, Format fmt,
                           llvm::StringMap<float> &scales) {
    if (scalesFile.empty())
      return success();
    FailureOr<llvm::json::Value> json = readJSONFile(scalesFile, "scales", [&] {
      return func.emitError() << "fp8-kv-cache: ";
    });
    if (failed(json))
      return failure();
    const llvm::json::Object *object = json->getAsObject();
    if (!object)
      return func.emitError()
             << "fp8-kv-cache: scales file " << scalesFile
             << " must be a JSON object mapping tensor names to a scale or "
                "to {\"amax\": A}";
    for (const auto &[key, value] : *object) {
      std::optional<double> number = value.getAsNumber();
      if (number) {
        scales[key.str()] = static_cast<float>(*number);
        continue;
      }
      const llvm::json::Object *entry = value.getAsObject();
      std::optional<double> amax =
          entry ? entry->getNumber("amax") : std::nullopt;
      if (!amax)
        return func.emitError()
               << "fp8-kv-cache: scales file " << scalesFile << ", entry '"
               << key.str() << "': expected a number (the dequantization "
               << "scale) or {\"amax\": A}";
      // Current scaling's rule (fp8::numerics), which also maps amax 0,
      // inf and NaN to scale 1.
      scales[key.str()] = numerics::currentScale(
          static_cast<float>(*amax), toNumericsFormat(fmt));
    }
    return success();
  }

  /// The round trip through the cache is exact only if every FP8 value
  /// times s is a normal number of the cache's own type (f32, f16, bf16).
  LogicalResult checkScale(func::FuncOp func, StringRef name, float s,
                           Format fmt, Type cacheType) {
    auto type = cast<FloatType>(getElementTypeOrSelf(cacheType));
    if (!isExactRoundTripScale(s, fmt, type))
      return func.emitError()
             << "fp8-kv-cache: scale " << text(s) << " of '" << name
             << "' is not usable: a cache scale must be a positive normal "
                "float with "
             << text(getMaxFinite(fmt)) << "*s and the smallest subnormal "
             << "times s "
             << "in the normal range of the cache's type ("
             << getElementTypeOrSelf(cacheType) << ")";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "fp8-kv-cache: no function @" << entry;
      return signalPassFailure();
    }
    // The option parser admits e4m3 and e5m2 only; a C++ caller may set
    // any Format.
    const Format fmt = format;
    if (fmt == Format::Hybrid) {
      func.emitError() << "fp8-kv-cache: format 'hybrid' is not e4m3 or e5m2";
      return signalPassFailure();
    }
    CachePlan plan;
    if (failed(decide(func, fmt, plan)))
      return signalPassFailure();
    rewrite(func, fmt, plan);
  }

  /// The cache tensors of `func` (graph inputs and outputs whose names the
  /// expressions select), each output paired with the cache input its
  /// Concat starts from (or by name), and every scale (the file's, else the
  /// default; a pair shares one), checked; an error names what is wrong.
  LogicalResult decide(func::FuncOp func, Format fmt, CachePlan &plan) {
    llvm::Regex inRe(inputs), outRe(outputs);
    std::string reError;
    if (!inRe.isValid(reError) || !outRe.isValid(reError)) {
      func.emitError() << "fp8-kv-cache: bad regular expression: " << reError;
      return failure();
    }
    llvm::StringMap<float> fileScales;
    if (failed(readScales(func, fmt, fileScales)))
      return failure();

    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<Entry> &ins = plan.ins, &outs = plan.outs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string name = nameOf(func.getArgAttrDict(i), "");
      if (!name.empty() && inRe.match(name))
        ins.push_back({name, i});
    }
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      std::string name = nameOf(func.getResultAttrDict(i), "");
      if (!name.empty() && outRe.match(name))
        outs.push_back({name, i});
    }
    if (ins.empty() && outs.empty()) {
      func.emitError() << "fp8-kv-cache: no graph input matches '" << inputs
                       << "' and no output matches '" << outputs
                       << "'; name the cache tensors with the inputs= and "
                          "outputs= options (fp8-compile --kv-cache-inputs, "
                          "--kv-cache-outputs)";
      return failure();
    }
    auto checkType = [&](Type t, StringRef kind,
                         StringRef name) -> LogicalResult {
      auto tensor = dyn_cast<RankedTensorType>(t);
      if (tensor && isHighPrecision(tensor.getElementType()))
        return success();
      return func.emitError()
             << "fp8-kv-cache: " << kind << " '" << name << "' has type " << t
             << "; a KV cache must be a f32, f16 or bf16 tensor (exclude it "
                "with the inputs=/outputs= expressions)";
    };
    for (Entry &e : ins)
      if (failed(checkType(func.getArgument(e.index).getType(), "input",
                           e.name)))
        return failure();
    for (Entry &e : outs)
      if (failed(checkType(ret.getOperand(e.index).getType(), "output",
                           e.name)))
        return failure();

    // Pair each output with the cache input its Concat starts from.
    for (auto [oi, o] : llvm::enumerate(outs)) {
      SmallVector<BlockArgument> pieces;
      collectPieces(ret.getOperand(o.index), pieces);
      for (BlockArgument arg : pieces)
        for (auto [ii, in] : llvm::enumerate(ins)) {
          if (in.index != arg.getArgNumber())
            continue;
          o.hasCachePiece = true;
          if (o.pair < 0 && in.pair < 0) {
            o.pair = ii;
            in.pair = oi;
          }
        }
    }

    // An output whose Concat holds no cache input (the importer drops an
    // empty past, e.g. on a first step with past length 0) pairs by name:
    // "present" -> "past_key_values" or "past" (the exporters' convention),
    // so that it gets the scale the next step reads it with.
    for (auto [oi, o] : llvm::enumerate(outs)) {
      size_t at = o.name.find("present");
      if (o.pair >= 0 || o.hasCachePiece || at == std::string::npos)
        continue;
      for (StringRef past : {"past_key_values", "past"}) {
        std::string candidate = o.name;
        candidate.replace(at, strlen("present"), past.str());
        for (auto [ii, in] : llvm::enumerate(ins))
          if (o.pair < 0 && in.pair < 0 && in.name == candidate) {
            o.pair = ii;
            in.pair = oi;
            o.byName = true;
          }
      }
    }

    // Scales: per tensor from the file, else the default; pairs share one.
    auto lookup = [&](StringRef name) -> std::optional<float> {
      auto it = fileScales.find(name);
      if (it == fileScales.end())
        return std::nullopt;
      return it->second;
    };
    SmallVector<float> &inScale = plan.inScale, &outScale = plan.outScale;
    inScale.assign(ins.size(), 0.0f);
    outScale.assign(outs.size(), 0.0f);
    for (auto [ii, in] : llvm::enumerate(ins)) {
      std::optional<float> s = lookup(in.name);
      if (in.pair >= 0) {
        std::optional<float> t = lookup(outs[in.pair].name);
        if (s && t && *s != *t) {
          func.emitError() << "fp8-kv-cache: '" << in.name << "' and '"
                           << outs[in.pair].name << "' are one cache ("
                           << (outs[in.pair].byName
                                   ? "paired by name"
                                   : "the output is built from the input")
                           << ") but the scales file gives them scales "
                           << text(*s) << " and "
                           << text(*t) << "; give one of them";
          return failure();
        }
        if (!s)
          s = t;
      }
      inScale[ii] = s ? *s : static_cast<float>(scale);
      if (in.pair >= 0)
        outScale[in.pair] = inScale[ii];
    }
    for (auto [oi, o] : llvm::enumerate(outs))
      if (o.pair < 0) {
        std::optional<float> s = lookup(o.name);
        outScale[oi] = s ? *s : static_cast<float>(scale);
      }
    for (auto [ii, in] : llvm::enumerate(ins))
      if (failed(checkScale(func, in.name, inScale[ii], fmt,
                            func.getArgument(in.index).getType())))
        return failure();
    for (auto [oi, o] : llvm::enumerate(outs))
      if (failed(checkScale(func, o.name, outScale[oi], fmt,
                            ret.getOperand(o.index).getType())))
        return failure();
    auto named = [](ArrayRef<Entry> entries, StringRef name) {
      return llvm::any_of(entries,
                          [&](const Entry &e) { return e.name == name; });
    };
    for (const auto &kv : fileScales) {
      if (!named(ins, kv.first()) && !named(outs, kv.first())) {
        func.emitError() << "fp8-kv-cache: scales file " << scalesFile
                         << " names '" << kv.first()
                         << "', which is not a cache input or output";
        return failure();
      }
    }
    return success();
  }

  /// Rewrites `func` as `plan` says: FP8 cache inputs read through a
  /// dequantize, FP8 cache outputs quantized once (the cached part of a
  /// Concat passed through verbatim), the function type updated.
  void rewrite(func::FuncOp func, Format fmt, const CachePlan &plan) {
    MLIRContext *ctx = &getContext();
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    ArrayRef<Entry> ins = plan.ins, outs = plan.outs;
    ArrayRef<float> inScale = plan.inScale, outScale = plan.outScale;
    // One scale constant per distinct value, at the top of the function:
    // equal scales are then the same SSA value, which the verbatim rule
    // below relies on.
    Block &body = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Location loc = func.getLoc();
    auto scaleType = RankedTensorType::get({}, b.getF32Type());
    llvm::MapVector<uint32_t, Value> constants;
    auto scaleValue = [&](float s) {
      uint32_t bits;
      std::memcpy(&bits, &s, sizeof(bits));
      Value &c = constants[bits];
      if (!c) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&body);
        c = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(scaleType, s));
      }
      return c;
    };
    auto tensorLayout = ScaleLayoutAttr::get(ctx, Granularity::Tensor);
    FloatType fp8Type = getFloatType(ctx, fmt);

    // Inputs: FP8 arguments, read through a dequantize.
    llvm::DenseMap<Value, std::pair<BlockArgument, Value>> dequantized;
    for (auto [ii, in] : llvm::enumerate(ins)) {
      BlockArgument arg = func.getArgument(in.index);
      auto type = cast<RankedTensorType>(arg.getType());
      Value s = scaleValue(inScale[ii]);
      arg.setType(type.clone(fp8Type));
      b.setInsertionPointAfterValue(s);
      auto deq = DequantizeOp::create(b, arg.getLoc(), type, arg, s,
                                      tensorLayout);
      arg.replaceAllUsesExcept(deq.getResult(), deq);
      dequantized[deq.getResult()] = {arg, s};
      func.removeArgAttr(in.index, StringAttr::get(ctx, "onnx.dtype"));
    }

    // Outputs: quantize once, in-graph users read the quantized values.
    for (auto [oi, o] : llvm::enumerate(outs)) {
      Value v = ret.getOperand(o.index);
      Value s = scaleValue(outScale[oi]);
      auto type = cast<RankedTensorType>(v.getType());
      // Scale constants sit at the top of the body, before any other op.
      if (Operation *def = v.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointAfterValue(s);
      auto q = QuantizeOp::create(b, v.getLoc(), type.clone(fp8Type), v, s,
                                  tensorLayout);
      auto deq = DequantizeOp::create(b, v.getLoc(), type, q, s, tensorLayout);
      v.replaceAllUsesExcept(deq.getResult(), q);
      ret.setOperand(o.index, q);
      // `v` now feeds only `q`: push the quantize into its Concat.
      b.setInsertionPoint(q);
      Value pushed = push(b, v, s, fp8Type, tensorLayout, dequantized);
      if (pushed != q.getResult()) {
        ret.setOperand(o.index, pushed);
        deq.getInputMutable().assign(pushed);
        q.erase();
      }
      func.removeResultAttr(o.index, StringAttr::get(ctx, "onnx.dtype"));
      if (remarks) {
        std::string how = ", quantized whole";
        if (o.pair >= 0 && o.byName)
          how += " (no cached part), the scale of '" + ins[o.pair].name + "'";
        else if (o.pair >= 0)
          how = ", cached part verbatim from '" + ins[o.pair].name + "'";
        emitRemark(v.getLoc())
            << "fp8-kv-cache: '" << o.name << "' " << stringifyFormat(fmt)
            << " scale " << text(outScale[oi]) << how;
      }
    }
    if (remarks)
      for (auto [ii, in] : llvm::enumerate(ins))
        if (in.pair < 0)
          emitRemark(func.getArgument(in.index).getLoc())
              << "fp8-kv-cache: '" << in.name << "' " << stringifyFormat(fmt)
              << " scale " << text(inScale[ii])
              << ", read only (no output is built from it)";

    // Erase what the push left without users (old Concat pieces). Users
    // follow their operands in the block, so one backward sweep frees a
    // whole chain.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (op.use_empty() &&
          isa<tensor::InsertSliceOp, tensor::EmptyOp, DequantizeOp>(op))
        op.erase();
    func.setType(FunctionType::get(ctx, body.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

  /// The FP8 value of quantize(v, s), built without re-rounding what is
  /// already FP8 with this scale: insert_slice chains (single-use) are
  /// quantized piece by piece, a dequantized cache input with scale `s`
  /// gives its own bytes, tensor.empty stays empty.
  Value push(OpBuilder &b, Value v, Value s, FloatType fp8Type,
             ScaleLayoutAttr layout,
             const llvm::DenseMap<Value, std::pair<BlockArgument, Value>>
                 &dequantized) {
    auto type = cast<RankedTensorType>(v.getType());
    auto it = dequantized.find(v);
    if (it != dequantized.end() && it->second.second == s)
      return it->second.first;
    // An empty tensor has no data: a new FP8 one, whoever else uses it.
    if (auto empty = v.getDefiningOp<tensor::EmptyOp>())
      return tensor::EmptyOp::create(b, empty.getLoc(), type.getShape(),
                                     fp8Type, empty.getDynamicSizes());
    if (v.hasOneUse())
      if (auto ins = v.getDefiningOp<tensor::InsertSliceOp>()) {
        Value src = push(b, ins.getSource(), s, fp8Type, layout, dequantized);
        Value dst = push(b, ins.getDest(), s, fp8Type, layout, dequantized);
        return tensor::InsertSliceOp::create(
            b, ins.getLoc(), src, dst, ins.getMixedOffsets(),
            ins.getMixedSizes(), ins.getMixedStrides());
      }
    return QuantizeOp::create(b, v.getLoc(), type.clone(fp8Type), v, s,
                              layout);
  }
};
} // namespace
