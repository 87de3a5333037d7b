//===- KVCacheInPlace.cpp - A decode step's cache updated in place --------===//
//
// Part of fp8-opt. See Passes.td (fp8-kv-cache-in-place) for the contract.
// Written here because it changes the model's signature (a new input, the
// cache outputs tied to their inputs) and replaces the importer's Concat
// (a tensor.insert_slice chain) by an update at data-dependent positions:
// an scf.forall whose threads each move one element, which bufferizes in
// place into the cache argument and which the GPU pipeline maps to one
// kernel (scf-forall-to-parallel, then fp8-gpu-map-loops).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Import/ONNXImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/Support/Regex.h"

#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8KVCACHEINPLACE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// One cache: `present` (result `result`) = Concat(past (argument `arg`),
/// fresh) along `axis`, fresh holding one token.
struct CachePair {
  std::string name;
  unsigned result;
  unsigned arg;
  int64_t axis;
  Value fresh;
  tensor::InsertSliceOp outer, inner;
};

std::string onnxName(DictionaryAttr attrs) {
  if (attrs)
    if (auto n = attrs.getAs<StringAttr>("onnx.name"))
      return n.str();
  return "";
}

bool isZero(OpFoldResult v) { return isConstantIntValue(v, 0); }

/// Whether `value` is Concat(arg, fresh) as the importer writes it:
/// insert_slice(fresh into insert_slice(arg into tensor.empty) at 0) at
/// the arg's extent along one axis. Fills `pair` or says what differs.
std::string matchConcat(Value value, func::FuncOp func, CachePair &pair) {
  auto outer = value.getDefiningOp<tensor::InsertSliceOp>();
  auto inner = outer ? outer.getDest().getDefiningOp<tensor::InsertSliceOp>()
                     : tensor::InsertSliceOp();
  if (!inner || !inner.getDest().getDefiningOp<tensor::EmptyOp>() ||
      !inner->hasOneUse())
    return "it is not a Concat of two pieces";
  auto arg = dyn_cast<BlockArgument>(inner.getSource());
  if (!arg || arg.getOwner() != &func.getBody().front())
    return "the first piece of its Concat is not a graph input";
  auto type = cast<RankedTensorType>(value.getType());
  auto past = cast<RankedTensorType>(arg.getType());
  // [batch, heads, sequence, head_dim], what the exporters write for a
  // transformers cache (a stacked [2, batch, ...] cache would read the
  // slots by its first axis: refused).
  if (!type.hasStaticShape() || !past.hasStaticShape() ||
      past.getRank() != type.getRank() || type.getRank() != 4 ||
      outer.getSourceType().getRank() != 4)
    return "the cache must be a static [batch, heads, sequence, head_dim] "
           "tensor";
  if (!llvm::all_of(inner.getMixedOffsets(), isZero) ||
      !outer.hasUnitStride() || !inner.hasUnitStride() ||
      ShapedType::isDynamicShape(outer.getStaticSizes()))
    return "its Concat is not a plain Concat";
  int64_t axis = -1;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> off =
        getConstantIntValue(outer.getMixedOffsets()[d]);
    if (!off)
      return "its Concat is not a plain Concat";
    if (*off == 0 && outer.getStaticSizes()[d] == type.getDimSize(d) &&
        past.getDimSize(d) == type.getDimSize(d))
      continue;
    if (axis >= 0 || *off != past.getDimSize(d))
      return "its Concat is not a plain Concat";
    axis = d;
  }
  if (axis != 2)
    return "its Concat must join along the sequence axis (2) of [batch, "
           "heads, sequence, head_dim]";
  int64_t fresh = type.getDimSize(axis) - past.getDimSize(axis);
  if (fresh != 1)
    return "the step adds " + std::to_string(fresh) +
           " tokens; an in-place cache takes a step of one token (compile a "
           "prefill without the in-place cache)";
  pair.result = 0;
  pair.arg = arg.getArgNumber();
  pair.axis = axis;
  pair.fresh = outer.getSource();
  pair.outer = outer;
  pair.inner = inner;
  return "";
}

struct FP8KVCacheInPlacePass
    : fp8::impl::FP8KVCacheInPlaceBase<FP8KVCacheInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "fp8-kv-cache-in-place: no function @" << entry;
      return signalPassFailure();
    }
    SmallVector<CachePair> pairs;
    if (failed(decide(func, pairs)))
      return signalPassFailure();
    rewrite(func, pairs);
  }

  /// The cache outputs and their inputs; an error names what does not fit.
  LogicalResult decide(func::FuncOp func, SmallVectorImpl<CachePair> &pairs) {
    llvm::Regex inRe(inputs), outRe(outputs);
    std::string reError;
    if (!inRe.isValid(reError) || !outRe.isValid(reError))
      return func.emitError()
             << "fp8-kv-cache-in-place: bad regular expression: " << reError;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (onnxName(func.getArgAttrDict(i)) == positionInput)
        return func.emitError()
               << "fp8-kv-cache-in-place: the graph already has an input '"
               << positionInput << "'; name the positions input otherwise "
               << "(position-input=)";
    for (unsigned r = 0; r < ret.getNumOperands(); ++r) {
      std::string name = onnxName(func.getResultAttrDict(r));
      if (name.empty() || !outRe.match(name))
        continue;
      CachePair pair;
      std::string why = matchConcat(ret.getOperand(r), func, pair);
      std::string argName =
          why.empty() ? onnxName(func.getArgAttrDict(pair.arg)) : "";
      if (why.empty() && !inRe.match(argName))
        why = "its Concat starts from input '" + argName +
              "', which the inputs expression does not select";
      if (why.empty() && !func.getArgument(pair.arg).hasOneUse())
        why = "input '" + argName + "' has other uses than the Concat";
      if (why.empty() && !ret.getOperand(r).hasOneUse() &&
          llvm::count(ret.getOperands(), ret.getOperand(r)) > 1)
        why = "it is returned twice";
      if (!why.empty())
        return func.emitError() << "fp8-kv-cache-in-place: output '" << name
                                << "' cannot be updated in place: " << why;
      pair.name = name;
      pair.result = r;
      pairs.push_back(pair);
    }
    if (pairs.empty())
      return func.emitError()
             << "fp8-kv-cache-in-place: no output matches '" << outputs
             << "'; name the cache outputs with outputs= (fp8-compile "
                "--kv-cache-outputs)";
    // One batch (axis 0) and one slot count (axis 2) for every cache.
    for (auto [axis, what] :
         {std::pair<int64_t, StringRef>(0, "the batch size"),
          std::pair<int64_t, StringRef>(2, "their slots")}) {
      int64_t want = pairs.front().outer.getType().getDimSize(axis);
      for (CachePair &p : pairs)
        if (int64_t got = p.outer.getType().getDimSize(axis); got != want)
          return func.emitError()
                 << "fp8-kv-cache-in-place: the caches disagree on " << what
                 << " (axis " << axis << "): '" << p.name << "' has " << got
                 << ", '" << pairs.front().name << "' " << want;
    }
    return success();
  }

  /// Each of `caches` with its `freshes`' element (ivs, 0 along `axis`)
  /// written at slot positions[b] along `axis`, in one scf.forall (one GPU
  /// kernel for a layer's keys and values). When any position is outside
  /// the caches (`firstBad` is not `count`), every slot keeps its value:
  /// the check refuses the run, and a refused run changes no cache.
  ValueRange buildUpdate(OpBuilder &b, Location loc, ValueRange caches,
                         ValueRange freshes, Value positions, Value firstBad,
                         int64_t count, int64_t axis, Value priorStatus) {
    auto type = cast<RankedTensorType>(caches.front().getType());
    auto freshType = cast<RankedTensorType>(freshes.front().getType());
    SmallVector<OpFoldResult> ubs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        ubs.push_back(b.getIndexAttr(freshType.getDimSize(d)));
    auto forall = scf::ForallOp::create(b, loc, ubs, caches, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    // (A copy: getInductionVars returns a temporary vector.)
    SmallVector<Value> ivs = forall.getInductionVars();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value pos =
        tensor::ExtractOp::create(b, loc, positions, ValueRange{ivs[0]});
    Value slots = arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(type.getDimSize(axis)));
    Value zero64 = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    // Unsigned: a negative position is huge, so one compare says both.
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos, slots);
    Value allValid = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        tensor::ExtractOp::create(b, loc, firstBad, ValueRange{}),
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(count)));
    Value write = arith::AndIOp::create(b, loc, inRange, allValid);
    // The graph's own checks (a token id out of range) refuse the run too.
    if (priorStatus) {
      Value flag = tensor::ExtractOp::create(
          b, loc, priorStatus,
          ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});
      write = arith::AndIOp::create(
          b, loc, write,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, flag,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0))));
    }
    Value slot = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::SelectOp::create(b, loc, inRange, pos, zero64));
    SmallVector<Value> at, from;
    for (int64_t d = 0, k = 0; d < type.getRank(); ++d) {
      at.push_back(d == axis ? slot : ivs[k]);
      from.push_back(d == axis ? zero : ivs[k]);
      if (d != axis)
        ++k;
    }
    // One element: a linalg.generic from the fresh value into the slot's
    // slice of the shared cache (the form tiling gives: it bufferizes in
    // place, with no temporary).
    SmallVector<OpFoldResult> at_(at.begin(), at.end()),
        from_(from.begin(), from.end());
    SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<Value> moved;
    for (auto [fresh, shared] :
         llvm::zip(freshes, forall.getRegionIterArgs())) {
      Value src =
          tensor::ExtractSliceOp::create(b, loc, fresh, from_, ones, ones);
      Value dst =
          tensor::ExtractSliceOp::create(b, loc, shared, at_, ones, ones);
      moved.push_back(
          linalg::GenericOp::create(
              b, loc, TypeRange{dst.getType()}, ValueRange{src},
              ValueRange{dst}, SmallVector<AffineMap>{id, id},
              SmallVector<utils::IteratorType>(type.getRank(),
                                               utils::IteratorType::parallel),
              [&](OpBuilder &bb, Location l, ValueRange args) {
                linalg::YieldOp::create(bb, l,
                                        ValueRange{arith::SelectOp::create(
                                            bb, l, write, args[0], args[1])});
              })
              .getResult(0));
    }
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    for (auto [value, shared] : llvm::zip(moved, forall.getRegionIterArgs()))
      tensor::ParallelInsertSliceOp::create(b, loc, value, shared, at_, ones,
                                            ones);
    return forall.getResults();
  }

  /// The first op of `block` at or after which `v` is used (its users'
  /// ancestors in `block`).
  static Operation *firstUse(Value v, Block &block) {
    Operation *first = nullptr;
    for (Operation *user : v.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      if (op && (!first || op->isBeforeInBlock(first)))
        first = op;
    }
    return first;
  }

  /// Whether `v` is available before `op` (an argument, or defined by an
  /// op of `op`'s block before it), moving the pure op that defines it
  /// there if its operands are (an FP8 cache's new token is quantized where
  /// its Concat was; `budget` bounds the ops moved). Nothing computed from
  /// a `forbidden` op (the Concats the update replaces) qualifies.
  static bool
  availableBefore(Value v, Operation *op,
                  const llvm::SmallPtrSetImpl<Operation *> &forbidden,
                  int budget = 4) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return true;
    if (def->getBlock() != op->getBlock() || forbidden.contains(def))
      return false;
    if (def->isBeforeInBlock(op))
      return true;
    if (budget == 0 || !isMemoryEffectFree(def))
      return false;
    // Its operands and what its regions read from above.
    llvm::SetVector<Value> used(def->getOperands().begin(),
                                def->getOperands().end());
    for (Region &region : def->getRegions())
      getUsedValuesDefinedAbove(region, used);
    for (Value operand : used)
      if (!availableBefore(operand, op, forbidden, budget - 1))
        return false;
    def->moveBefore(op);
    return true;
  }

  /// The index of the first position outside [0, slots), or the positions'
  /// count when none is (a 0-d i64 tensor, as a linalg reduction).
  Value buildFirstBad(OpBuilder &b, Location loc, Value positions,
                      int64_t slots) {
    MLIRContext *ctx = &getContext();
    Type i64 = b.getI64Type();
    auto posType = cast<RankedTensorType>(positions.getType());
    const int64_t count = posType.getDimSize(0);
    Value initEmpty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64);
    Value init =
        linalg::FillOp::create(b, loc,
                               ValueRange{arith::ConstantOp::create(
                                   b, loc, b.getI64IntegerAttr(count))},
                               ValueRange{initEmpty})
            .getResult(0);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{positions},
               ValueRange{init},
               SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx),
                                      AffineMap::get(1, 0, {}, ctx)},
               SmallVector<utils::IteratorType>{utils::IteratorType::reduction},
               [&](OpBuilder &bb, Location l, ValueRange args) {
                 Value bad = arith::CmpIOp::create(
                     bb, l, arith::CmpIPredicate::uge, args[0],
                     arith::ConstantOp::create(bb, l,
                                               bb.getI64IntegerAttr(slots)));
                 Value i = arith::IndexCastOp::create(
                     bb, l, i64, linalg::IndexOp::create(bb, l, 0));
                 Value cand = arith::SelectOp::create(
                     bb, l, bad, i,
                     arith::ConstantOp::create(bb, l,
                                               bb.getI64IntegerAttr(count)));
                 linalg::YieldOp::create(
                     bb, l,
                     ValueRange{arith::MinSIOp::create(bb, l, cand, args[1])});
               })
        .getResult(0);
  }

  /// Appends a run-time check: the first position outside [0, slots)
  /// (`firstBad`) fails the run (chained after the graph's own checks, or
  /// the first).
  void addCheck(func::FuncOp func, OpBuilder &b, Value positions,
                Value firstBad, int64_t slots) {
    MLIRContext *ctx = &getContext();
    Location loc = func.getLoc();
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    Type i64 = b.getI64Type();
    int statusIndex = -1;
    for (unsigned r = 0; r < func.getNumResults(); ++r)
      if (func.getResultAttr(r, kCheckStatusAttr))
        statusIndex = r;
    SmallVector<Attribute> messages;
    if (auto old = func->getAttrOfType<ArrayAttr>(kChecksAttr))
      messages.assign(old.begin(), old.end());
    const int64_t site = messages.size() + 1;
    messages.push_back(StringAttr::get(
        ctx, "graph input '" + positionInput +
                 "': a cache slot out of range (the cache has " +
                 std::to_string(slots) + " slots, valid: 0 to " +
                 std::to_string(slots - 1) + ")"));
    b.setInsertionPoint(ret);
    auto statusType = RankedTensorType::get({2}, i64);
    Value status;
    if (statusIndex >= 0) {
      status = ret.getOperand(statusIndex);
    } else {
      Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{2}, i64);
      status = linalg::FillOp::create(b, loc,
                                      ValueRange{arith::ConstantOp::create(
                                          b, loc, b.getI64IntegerAttr(0))},
                                      ValueRange{empty})
                   .getResult(0);
    }
    const int64_t count =
        cast<RankedTensorType>(positions.getType()).getDimSize(0);
    // status' = status[0] != 0 ? status : (found ? {site, value} : {0, 0}).
    Value outEmpty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{2}, i64);
    auto update = linalg::GenericOp::create(
        b, loc, TypeRange{statusType}, ValueRange{firstBad},
        ValueRange{outEmpty},
        SmallVector<AffineMap>{AffineMap::get(1, 0, {}, ctx),
                               AffineMap::getMultiDimIdentityMap(1, ctx)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &bb, Location l, ValueRange args) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(v));
          };
          auto idx = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(bb, l, v);
          };
          Value flag = tensor::ExtractOp::create(bb, l, status, idx(0));
          Value value = tensor::ExtractOp::create(bb, l, status, idx(1));
          Value first = args[0];
          Value found = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::ne,
                                              first, cst(count));
          Value clean = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                              flag, cst(0));
          Value take = arith::AndIOp::create(bb, l, found, clean);
          Value at = arith::IndexCastOp::create(
              bb, l, bb.getIndexType(),
              arith::SelectOp::create(bb, l, found, first, cst(0)));
          Value bad = tensor::ExtractOp::create(bb, l, positions, at);
          Value newFlag = arith::SelectOp::create(bb, l, take, cst(site), flag);
          Value newValue = arith::SelectOp::create(bb, l, take, bad, value);
          Value isFlag =
              arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                    linalg::IndexOp::create(bb, l, 0), idx(0));
          linalg::YieldOp::create(bb, l,
                                  ValueRange{arith::SelectOp::create(
                                      bb, l, isFlag, newFlag, newValue)});
        });
    Value newStatus = update.getResult(0);
    if (statusIndex >= 0) {
      ret.setOperand(statusIndex, newStatus);
    } else {
      ret->insertOperands(ret.getNumOperands(), ValueRange{newStatus});
      (void)func.insertResult(
          func.getNumResults(), statusType,
          DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(ctx, kCheckStatusAttr),
                                   UnitAttr::get(ctx))}));
    }
    func->setAttr(kChecksAttr, ArrayAttr::get(ctx, messages));
  }

  void rewrite(func::FuncOp func, MutableArrayRef<CachePair> pairs) {
    MLIRContext *ctx = &getContext();
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    int64_t batch =
        cast<RankedTensorType>(ret.getOperand(pairs.front().result).getType())
            .getDimSize(0);
    // The positions input, after the graph's inputs.
    auto posType = RankedTensorType::get({batch}, IntegerType::get(ctx, 64));
    unsigned posIndex = func.getNumArguments();
    if (failed(func.insertArgument(
            posIndex, posType,
            DictionaryAttr::get(
                ctx, {NamedAttribute(StringAttr::get(ctx, "onnx.name"),
                                     StringAttr::get(ctx, positionInput))}),
            func.getLoc())))
      return signalPassFailure();
    Value positions = func.getArgument(posIndex);
    // Every cache has the same slots (decide checks it).
    const int64_t slots =
        cast<RankedTensorType>(pairs.front().outer.getType()).getDimSize(2);
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Value firstBad = buildFirstBad(b, func.getLoc(), positions, slots);
    int statusIndex = -1;
    for (unsigned r = 0; r < func.getNumResults(); ++r)
      if (func.getResultAttr(r, kCheckStatusAttr))
        statusIndex = r;
    // Caches whose new values have one shape go into one update, placed
    // before the first use of any of them, while every member's new value
    // is available there (a layer's keys and values: one kernel).
    llvm::sort(pairs, [](const CachePair &x, const CachePair &y) {
      return x.outer->isBeforeInBlock(y.outer);
    });
    SmallVector<SmallVector<CachePair *>> groups;
    SmallVector<Operation *> places;
    llvm::SmallPtrSet<Operation *, 8> concats;
    for (CachePair &p : pairs)
      concats.insert(p.outer);
    for (CachePair &p : pairs) {
      Operation *use = firstUse(p.outer.getResult(), body);
      if (!groups.empty()) {
        CachePair &lead = *groups.back().front();
        Operation *&place = places.back();
        if (p.axis == lead.axis && p.fresh.getType() == lead.fresh.getType() &&
            p.outer.getType() == lead.outer.getType() &&
            availableBefore(p.fresh, place, concats)) {
          groups.back().push_back(&p);
          if (use->isBeforeInBlock(place))
            place = use;
          continue;
        }
      }
      groups.push_back({&p});
      places.push_back(use);
    }
    for (auto [group, place] : llvm::zip(groups, places)) {
      SmallVector<Value> caches, freshes;
      for (CachePair *p : group) {
        BlockArgument cache = func.getArgument(p->arg);
        cache.setType(p->outer.getType());
        caches.push_back(cache);
        freshes.push_back(p->fresh);
      }
      // A run the graph's own checks refuse must not write either: their
      // status, when it can be computed before the update (the embedding's
      // token-id check is), gates the writes.
      Value prior;
      if (statusIndex >= 0 &&
          availableBefore(ret.getOperand(statusIndex), place, concats, 32))
        prior = ret.getOperand(statusIndex);
      else if (statusIndex >= 0)
        emitWarning(place->getLoc())
            << "fp8-kv-cache-in-place: the graph's run-time checks are "
               "computed after this cache update: a run they refuse may "
               "still write the step's new token into its slot";
      b.setInsertionPoint(place);
      ValueRange updated =
          buildUpdate(b, group.front()->outer.getLoc(), caches, freshes,
                      positions, firstBad, batch, group.front()->axis, prior);
      for (auto [p, value] : llvm::zip(group, updated)) {
        p->outer.getResult().replaceAllUsesWith(value);
        Operation *empty = p->inner.getDest().getDefiningOp();
        p->outer.erase();
        p->inner.erase();
        if (empty->use_empty())
          empty->erase();
        func.setResultAttr(p->result, kTiedInputAttr,
                           IntegerAttr::get(IntegerType::get(ctx, 64), p->arg));
      }
    }
    addCheck(func, b, positions, firstBad, slots);
    func.setType(
        FunctionType::get(ctx, body.getArgumentTypes(), ret.getOperandTypes()));
  }
};
} // namespace
