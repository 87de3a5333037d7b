//===- Attention.h - Attention chains as fp8.attention ----------*- C++ -*-===//
//
// Part of fp8-opt. Recognizes the attention chains exporters write
// (MatMul -> scale -> mask -> Softmax [-> IsNaN/Where] -> MatMul, with the
// grouped-query Expand of keys and values) in the ONNX graph and imports each
// as one fp8.attention (Attention.cpp). Not a public header.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_ATTENTION_H
#define FP8_LIB_IMPORT_ATTENTION_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <memory>

namespace mlir::fp8::onnx_import {

class Importer;
class NodeContext;

/// One per imported graph. The graph walk calls `fuse` for every node before
/// its handler; nodes before it have been imported (the chain's too: they
/// become dead and the importer's final clean-up erases them).
class AttentionFusion {
public:
  /// `values` is the importer's map from ONNX names to imported values.
  AttentionFusion(Importer &imp, const onnx::GraphProto &graph,
                  const llvm::StringMap<Value> &values);
  ~AttentionFusion();

  /// When `nc`'s node is the final MatMul of an attention chain that
  /// fp8.attention computes exactly (up to the op's stated rounding), puts
  /// the op's result in `nc.results` and returns true. Otherwise returns
  /// false and changes nothing: the node is imported as usual. Never
  /// reports an error.
  bool fuse(NodeContext &nc);

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_ATTENTION_H
