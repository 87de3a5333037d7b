//===- Outlining.h - Ops into private functions for the GPU kernels -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// The seam between graph-level lowering and the generated kernels: an op
// (fp8.scaled_matmul, fp8.attention) becomes a call to a private function
// whose body is the op -- the reference semantics, lowered like any other
// code where no kernel serves it -- and whose dictionary attribute tells
// the kernel generator what to compute. Functions survive one-shot
// bufferization (function boundaries) as destination-passing memref
// functions, the form the generators consume.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_OUTLINING_H
#define FP8_LIB_CONVERSION_FP8TOGPU_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::fp8 {

/// Outlines ops of one kind into functions `<prefix><n>` marked with
/// `attrName`; ops with the same operand/result types and description share
/// one function.
class KernelOutliner {
public:
  KernelOutliner(ModuleOp module, StringRef prefix, StringRef attrName)
      : module(module), symbols(module), prefix(prefix), attrName(attrName) {}

  /// Replaces `op` with a call of the function for (its types, `info`).
  /// `extra` operands follow the op's in the call and the signature; the
  /// body (the op) does not read them: a kernel's scratch space, which
  /// bufferization allocates in the caller (device memory on the GPU).
  /// A result of dynamic shape is not returned but written into a
  /// destination the call passes last (a tensor.empty of the op's reified
  /// sizes), so that the function is destination-passing after
  /// bufferization as for static results. Fails (with a diagnostic) when
  /// such an op cannot reify its result's sizes.
  /// `absorbed`: producers of the op's operands (in order, each reading
  /// values from outside the set or from earlier ones) cloned into the body
  /// before it; the function then takes their outside operands instead of
  /// the values they define (and they are erased where nothing else reads
  /// them). `info` must say what they compute: functions are shared by
  /// types and `info`.
  LogicalResult outline(Operation *op, DictionaryAttr info,
                        ValueRange extra = {},
                        ArrayRef<Operation *> absorbed = {});

private:
  ModuleOp module;
  SymbolTable symbols;
  std::string prefix, attrName;
  llvm::DenseMap<std::pair<Type, Attribute>, func::FuncOp> made;
  unsigned counter = 0;
};

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_OUTLINING_H
