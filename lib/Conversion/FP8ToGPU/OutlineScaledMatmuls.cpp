//===- OutlineScaledMatmuls.cpp - FP8 ops into kernel functions -----------===//
//
// Part of fp8-opt. The GPU pipeline's seam between graph lowering and the
// generated kernels (Outlining.h): each fp8.scaled_matmul becomes a call to
// a private function whose body is the op and whose `fp8.gemm` dictionary
// tells convert-fp8-gemm-to-gpu what the kernel must compute.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "Outlining.h"
#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OUTLINESCALEDMATMULS
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

LogicalResult KernelOutliner::outline(Operation *op, DictionaryAttr info,
                                      ValueRange extra,
                                      ArrayRef<Operation *> absorbed) {
  MLIRContext *ctx = op->getContext();
  // The absorbed producers' operands, then the op's that they do not
  // define, in order: the function's arguments before `extra`.
  llvm::SmallPtrSet<Operation *, 8> inside(absorbed.begin(), absorbed.end());
  SmallVector<Operation *> bodyOps(absorbed.begin(), absorbed.end());
  bodyOps.push_back(op);
  SmallVector<Value> operands;
  for (Operation *o : bodyOps)
    for (Value v : o->getOperands())
      if (!inside.contains(v.getDefiningOp()))
        operands.push_back(v);
  llvm::append_range(operands, extra);
  // A result of dynamic shape gets a destination from the caller, which
  // knows its sizes (buffer-results-to-out-params cannot allocate it at
  // the call): a tensor.empty of the op's reified sizes, passed last.
  SmallVector<bool> hasInit;
  for (Type t : op->getResultTypes())
    hasInit.push_back(!cast<ShapedType>(t).hasStaticShape());
  if (llvm::is_contained(hasInit, true)) {
    OpBuilder cb(op);
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reifyResultShapes(cb, op, shapes)))
      return op->emitOpError("has a result of dynamic shape whose sizes "
                             "cannot be computed for the kernel's caller");
    // Of the result's type exactly (the reified sizes may know more than
    // the type: only its dynamic dimensions take them).
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      if (!hasInit[i])
        continue;
      auto type = cast<RankedTensorType>(r.getType());
      SmallVector<Value> dynamic;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamic.push_back(
              getValueOrCreateConstantIndexOp(cb, op->getLoc(), shapes[i][d]));
      operands.push_back(
          tensor::EmptyOp::create(cb, op->getLoc(), type, dynamic));
    }
  }
  SmallVector<Type> types;
  for (Value v : operands)
    types.push_back(v.getType());
  auto type = FunctionType::get(ctx, types, op->getResultTypes());
  func::FuncOp &callee = made[{type, info}];
  if (!callee) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    std::string name;
    do
      name = (prefix + Twine(counter++)).str();
    while (symbols.lookup(name));
    callee = func::FuncOp::create(mb, op->getLoc(), name, type);
    callee.setPrivate();
    callee->setAttr(attrName, info);
    symbols.insert(callee);
    Block *body = callee.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(body);
    // Operand i reads argument i, also where the op reads one value twice
    // (an IRMapping would keep one argument for both, wrong for a later call
    // sharing the function with two different values); absorbed producers'
    // results map to their clones.
    IRMapping cloned;
    unsigned next = 0;
    Operation *clone = nullptr;
    for (Operation *o : bodyOps) {
      clone = fb.clone(*o);
      for (OpOperand &use : clone->getOpOperands()) {
        Value v = o->getOperand(use.getOperandNumber());
        use.set(inside.contains(v.getDefiningOp()) ? cloned.lookup(v)
                                                   : body->getArgument(next++));
      }
      cloned.map(o->getResults(), clone->getResults());
    }
    assert(next == numInputs && "every outside operand is an argument");
    // Dynamic results are written into their destinations (destination-
    // passing: bufferization then drops them as results equivalent to an
    // argument, drop-equivalent-buffer-results).
    SmallVector<Value> results;
    unsigned init = operands.size() - llvm::count(hasInit, true);
    for (auto [i, r] : llvm::enumerate(clone->getResults()))
      results.push_back(
          hasInit[i] ? bufferization::MaterializeInDestinationOp::create(
                           fb, op->getLoc(), r, body->getArgument(init++))
                           ->getResult(0)
                     : Value(r));
    func::ReturnOp::create(fb, op->getLoc(), results);
  }
  OpBuilder cb(op);
  auto call = func::CallOp::create(cb, op->getLoc(), callee, operands);
  op->replaceAllUsesWith(call.getResults());
  op->erase();
  // Producers nothing else reads any more go with it.
  for (Operation *o : llvm::reverse(absorbed))
    if (o->use_empty())
      o->erase();
  return success();
}

namespace {
struct OutlineScaledMatmulsPass
    : fp8::impl::FP8OutlineScaledMatmulsBase<OutlineScaledMatmulsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ScaledMatmulOp> products;
    module.walk([&](ScaledMatmulOp op) {
      if (!op->getParentOfType<func::FuncOp>() ||
          !op->getParentOfType<func::FuncOp>()
               ->hasAttr(kGemmAttrName))
        products.push_back(op);
    });
    KernelOutliner outliner(module, kGemmFuncPrefix, kGemmAttrName);
    for (ScaledMatmulOp op : products) {
      Builder b(op.getContext());
      SmallVector<NamedAttribute> entries = {
          b.getNamedAttr("lhs_layout", op.getLhsLayoutAttr()),
          b.getNamedAttr("rhs_layout", op.getRhsLayoutAttr()),
          b.getNamedAttr("epilogue", op.getEpilogueAttr()),
          b.getNamedAttr("transpose_rhs", b.getBoolAttr(op.getTransposeRhs())),
          b.getNamedAttr("has_bias", b.getBoolAttr(bool(op.getBias())))};
      if (IntegerAttr pad = op.getLhsScaleMMajorAttr())
        entries.push_back(b.getNamedAttr("lhs_scale_m_major", pad));
      if (failed(outliner.outline(op, b.getDictionaryAttr(entries))))
        return signalPassFailure();
    }
  }
};
} // namespace
