//===- FuseGemmEpilogues.cpp - Consumers into the GEMM functions ----------===//
//
// Part of fp8-opt. A product's element-wise consumer moves into the
// product's outlined GEMM function, whose kernel then computes it in its
// epilogue (Gemm/Epilogue.cpp): the product never goes to memory. The
// consumer is cloned as it is (marked fp8.gemm_epilogue), so the reference
// body of the new function -- the product, then the consumer -- is what the
// graph computed, and the kernel applies the same scalar operations.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "Gemm/GemmPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSEGEMMEPILOGUES
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// A GEMM call whose result reaches an element-wise consumer.
struct Candidate {
  func::CallOp call;
  func::FuncOp callee;
  /// Single-use reshapes from the call's result to the consumer, in order.
  SmallVector<Operation *> reshapes;
  linalg::GenericOp consumer;
  /// The consumer's input that reads the product.
  unsigned productInput = 0;
};

bool isReshape(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

/// A residual add's body: additions and subtractions, and the casts between
/// float types around them (residual-only).
bool isResidualBody(linalg::GenericOp g) {
  return llvm::all_of(g.getRegion().getOps(), [](Operation &op) {
    return isa<linalg::YieldOp, arith::AddFOp, arith::SubFOp, arith::ExtFOp,
               arith::TruncFOp, arith::ConstantOp>(op);
  });
}

/// The consumer of `call`'s result if it qualifies (the pass's rules).
std::optional<Candidate> findCandidate(func::CallOp call, SymbolTable &symbols,
                                       int64_t maxRows, bool residualOnly) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee || !callee->hasAttr(kGemmAttrName) || call.getNumResults() != 1)
    return std::nullopt;
  auto info = callee->getAttrOfType<DictionaryAttr>(kGemmAttrName);
  if (!info || info.get(kGemmEpilogueInputsKey))
    return std::nullopt; // already fused
  Candidate c;
  c.call = call;
  c.callee = callee;
  auto productType = dyn_cast<RankedTensorType>(call.getResult(0).getType());
  if (!productType || !productType.hasStaticShape() ||
      productType.getRank() < 2)
    return std::nullopt;
  if (maxRows > 0 &&
      productType.getNumElements() / productType.getShape().back() > maxRows)
    return std::nullopt;
  Value v = call.getResult(0);
  while (v.hasOneUse() && isReshape(*v.getUsers().begin())) {
    c.reshapes.push_back(*v.getUsers().begin());
    v = c.reshapes.back()->getResult(0);
  }
  if (!v.hasOneUse())
    return std::nullopt;
  OpOperand &use = *v.getUses().begin();
  auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!g || !g.isDpsInput(&use) || g.getNumDpsInits() != 1 ||
      g.getNumResults() != 1 || g.getNumParallelLoops() != g.getNumLoops())
    return std::nullopt;
  c.consumer = g;
  c.productInput = use.getOperandNumber();
  auto outType = cast<RankedTensorType>(g.getResult(0).getType());
  Type outElem = outType.getElementType();
  if (!outType.hasStaticShape() ||
      !(outElem.isF32() || outElem.isF16() || outElem.isBF16()))
    return std::nullopt;
  OpOperand *init = g.getDpsInitOperand(0);
  if (!g.getMatchingIndexingMap(init).isIdentity() ||
      !g.getMatchingBlockArgument(init).use_empty() ||
      !g.getMatchingIndexingMap(&use).isIdentity() ||
      cast<RankedTensorType>(v.getType()).getShape() != outType.getShape())
    return std::nullopt;
  const int64_t productN = productType.getShape().back();
  int64_t fullInputs = 0;
  for (OpOperand *input : g.getDpsInputOperands()) {
    if (input == &use)
      continue;
    auto kind = gemm::epilogueInputKind(g, *input, productN);
    if (input->get() == v || !kind)
      return std::nullopt;
    fullInputs += *kind == gemm::GemmProblem::EpilogueInput::Kind::Full;
  }
  if (!gemm::isScalarEpilogueBody(g))
    return std::nullopt;
  if (residualOnly && (fullInputs > 1 || !isResidualBody(g)))
    return std::nullopt;
  return c;
}

/// The value `v` (of a reshape chain's result type) through the chain's
/// inverse, to its source's type: collapse what an expand_shape expanded,
/// expand what a collapse_shape collapsed, last reshape first.
Value throughInverse(OpBuilder &b, Location loc, ArrayRef<Operation *> chain,
                     Value v) {
  for (Operation *r : llvm::reverse(chain)) {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(r))
      v = tensor::CollapseShapeOp::create(b, loc, e.getSrcType(), v,
                                          e.getReassociationIndices());
    else {
      auto c = cast<tensor::CollapseShapeOp>(r);
      v = tensor::ExpandShapeOp::create(b, loc, c.getSrcType(), v,
                                        c.getReassociationIndices());
    }
  }
  return v;
}

/// A consumer that reads the product through reshapes (a decode step's
/// [M, N] product read as [B, S, N] by a residual add) is rebuilt at the
/// product's shape -- its tensors of the output's shape reshaped back
/// through the chain's inverse, its rows and scalars as they are -- and its
/// result reshaped forward for its users: the GEMM function then returns
/// the consumer's value in the product's shape, as the kernel writes it.
/// Fails (nothing changed) where a row input's length is not the product's
/// last dimension.
LogicalResult retargetToProductShape(Candidate &c) {
  if (c.reshapes.empty())
    return success();
  linalg::GenericOp g = c.consumer;
  auto productType = cast<RankedTensorType>(c.call.getResult(0).getType());
  auto outType = cast<RankedTensorType>(g.getResult(0).getType());
  const int64_t n = productType.getShape().back();
  if (outType.getShape().back() != n)
    return failure();
  using Kind = gemm::GemmProblem::EpilogueInput::Kind;
  MLIRContext *ctx = g.getContext();
  const unsigned rank = productType.getRank();
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : g.getDpsInputOperands()) {
    if (input->getOperandNumber() == c.productInput) {
      inputs.push_back(c.call.getResult(0));
      maps.push_back(b.getMultiDimIdentityMap(rank));
      continue;
    }
    switch (*gemm::epilogueInputKind(g, *input, n)) {
    case Kind::Full:
      inputs.push_back(throughInverse(b, loc, c.reshapes, input->get()));
      maps.push_back(b.getMultiDimIdentityMap(rank));
      break;
    case Kind::Row:
      inputs.push_back(input->get());
      maps.push_back(
          AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx), ctx));
      break;
    case Kind::Scalar:
      inputs.push_back(input->get());
      maps.push_back(AffineMap::get(rank, 0, ctx));
      break;
    case Kind::Product:
      llvm_unreachable("the product's operand is handled above");
    }
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(b, loc, productType.getShape(),
                                       outType.getElementType());
  auto rebuilt = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  rebuilt.getRegion().takeBody(g.getRegion());
  // The result in the consumer's shape, for its users.
  IRMapping forward;
  Value result = rebuilt.getResult(0);
  for (Operation *r : c.reshapes) {
    forward.map(r->getOperand(0), result);
    Operation *clone = b.clone(*r, forward);
    clone->getResult(0).setType(RankedTensorType::get(
        cast<RankedTensorType>(r->getResult(0).getType()).getShape(),
        outType.getElementType()));
    result = clone->getResult(0);
  }
  g->replaceAllUsesWith(ValueRange{result});
  g->erase();
  for (Operation *r : llvm::reverse(c.reshapes))
    r->erase();
  c.reshapes.clear();
  c.consumer = rebuilt;
  return success();
}

/// Text that identifies what a fused function computes: the function
/// printed (numbering is local to it) with its name left out, so that
/// identical fusions share one function.
std::string fusionKey(func::FuncOp fused) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fused.print(os);
  std::string name = ("@" + fused.getSymName()).str();
  size_t at = text.find(name);
  if (at != std::string::npos)
    text.erase(at, name.size());
  return text;
}

/// The function that computes the product and then the consumer: the GEMM
/// function's body, the reshapes, the consumer's captured constants and the
/// consumer (marked), returning its result; arguments: the GEMM function's,
/// then the consumer's other inputs.
func::FuncOp buildFusedFunction(Candidate &c, SymbolTable &symbols,
                                unsigned &counter) {
  MLIRContext *ctx = c.call.getContext();
  linalg::GenericOp g = c.consumer;
  SmallVector<Type> inputs(c.callee.getArgumentTypes());
  SmallVector<Value> extras;
  for (OpOperand *input : g.getDpsInputOperands())
    if (input->getOperandNumber() != c.productInput)
      extras.push_back(input->get());
  for (Value e : extras)
    inputs.push_back(e.getType());
  auto type = FunctionType::get(ctx, inputs, g.getResult(0).getType());

  std::string name;
  do
    name = (kGemmFuncPrefix + Twine(counter++)).str();
  while (symbols.lookup(name));
  OpBuilder mb(c.callee);
  mb.setInsertionPointAfter(c.callee);
  auto fused = func::FuncOp::create(mb, c.callee.getLoc(), name, type);
  fused.setPrivate();
  auto info = c.callee->getAttrOfType<DictionaryAttr>(kGemmAttrName);
  NamedAttrList entries(info);
  entries.set(kGemmEpilogueInputsKey,
              mb.getI64IntegerAttr(static_cast<int64_t>(extras.size())));
  fused->setAttr(kGemmAttrName, entries.getDictionary(ctx));
  symbols.insert(fused);

  Block *entry = fused.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  map.map(c.callee.getArguments(),
          entry->getArguments().take_front(c.callee.getNumArguments()));
  Value product;
  for (Operation &op : c.callee.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      product = map.lookup(ret.getOperand(0));
      break;
    }
    b.clone(op, map);
  }
  map.map(c.call.getResult(0), product);
  for (Operation *r : c.reshapes)
    b.clone(*r, map);
  // The consumer's inputs: the product, then the new arguments; its init a
  // fresh empty tensor (the body never reads it); its captured constants
  // cloned beside it.
  unsigned next = c.callee.getNumArguments();
  for (OpOperand *input : g.getDpsInputOperands())
    if (input->getOperandNumber() != c.productInput)
      map.map(input->get(), entry->getArgument(next++));
  auto outType = cast<RankedTensorType>(g.getResult(0).getType());
  map.map(g.getDpsInitOperand(0)->get(),
          tensor::EmptyOp::create(b, g.getLoc(), outType.getShape(),
                                  outType.getElementType())
              .getResult());
  gemm::cloneCapturedValues(g.getRegion(), b, map);
  Operation *clone = b.clone(*g, map);
  clone->setAttr(kGemmEpilogueAttrName, UnitAttr::get(ctx));
  func::ReturnOp::create(b, g.getLoc(), clone->getResult(0));
  return fused;
}

struct FuseGemmEpiloguesPass
    : fp8::impl::FP8FuseGemmEpiloguesBase<FuseGemmEpiloguesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Candidate> candidates;
    module.walk([&](func::CallOp call) {
      if (std::optional<Candidate> c =
              findCandidate(call, symbols, maxRows, residualOnly))
        candidates.push_back(*c);
    });
    // Two products read by one consumer (SiLU(gate) * up): it fuses once,
    // into the first of them found.
    llvm::SmallPtrSet<Operation *, 16> taken;
    llvm::StringMap<func::FuncOp> made;
    unsigned counter = 0;
    llvm::SetVector<Operation *> oldCallees;
    for (Candidate &c : candidates) {
      if (!taken.insert(c.consumer).second || failed(retargetToProductShape(c)))
        continue;
      func::FuncOp fused = buildFusedFunction(c, symbols, counter);
      func::FuncOp &same = made[fusionKey(fused)];
      if (same)
        symbols.erase(fused);
      else
        same = fused;
      fused = same;
      SmallVector<Value> operands(c.call.getOperands());
      for (OpOperand *input : c.consumer.getDpsInputOperands())
        if (input->getOperandNumber() != c.productInput)
          operands.push_back(input->get());
      OpBuilder b(c.consumer);
      auto call = func::CallOp::create(b, c.call.getLoc(), fused, operands);
      c.consumer->replaceAllUsesWith(call);
      c.consumer->erase();
      for (Operation *r : llvm::reverse(c.reshapes))
        r->erase();
      c.call->erase();
      oldCallees.insert(c.callee);
    }
    // GEMM functions no call uses any more would still become kernels.
    for (Operation *f : oldCallees)
      if (SymbolTable::symbolKnownUseEmpty(f, module))
        symbols.erase(f);
  }
};

} // namespace
