//===- BoundsChecks.cpp - Run-time checks of data-dependent indices -------===//
//
// Part of fp8-opt. ONNX makes an out-of-range index of Gather,
// GatherElements and GatherND an error (negative indices wrap once), and
// onnxruntime refuses such inputs. A compiled model cannot refuse at import
// time when the indices come from the graph's inputs (token ids), so:
//
//  * every data-dependent index is wrapped and then clamped into its
//    dimension before it addresses memory (safeIndex): generated code never
//    reads out of bounds, whatever the input;
//  * each such use is a "check site": a linalg reduction over the indices
//    that records the first out-of-range value into a run-time status
//    {site + 1, value}, chained from site to site;
//  * the status leaves the function as one more result (kCheckStatusAttr),
//    and the site messages as a function attribute (kChecksAttr). The model
//    library's ABI (runtime/cpu/model_shim.c) turns a non-zero status into
//    FP8RT_INVALID_ARGUMENT with the site's message and the value.
//
// Everything is plain linalg on tensors, so the CPU and GPU pipelines lower
// it like any other reduction.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

Value fp8::onnx_import::safeIndex(OpBuilder &bb, Location l, Value idx,
                                  int64_t dim, bool isUnsigned) {
  Value i = isUnsigned
                ? Value(arith::IndexCastUIOp::create(bb, l, bb.getIndexType(), idx))
                : Value(arith::IndexCastOp::create(bb, l, bb.getIndexType(), idx));
  Value zero = arith::ConstantIndexOp::create(bb, l, 0);
  Value d = arith::ConstantIndexOp::create(bb, l, dim);
  Value last = arith::ConstantIndexOp::create(bb, l, std::max<int64_t>(dim - 1, 0));
  Value neg = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(bb, l, i, d);
  Value w = arith::SelectOp::create(bb, l, neg, wrapped, i);
  Value lo = arith::MaxSIOp::create(bb, l, w, zero);
  return arith::MinSIOp::create(bb, l, lo, last);
}

/// "graph input 'x'" when `v` is a graph input, or is computed from exactly
/// one through shape-only and element-wise ops (Cast, Reshape, Unsqueeze);
/// empty otherwise.
static std::string describeSource(Value v) {
  for (int steps = 0; v && steps < 16; ++steps) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func)
        return {};
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         "onnx.name"))
        return ("graph input '" + name.getValue() + "'").str();
      return "graph input #" + std::to_string(arg.getArgNumber());
    }
    Operation *op = v.getDefiningOp();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
            tensor::CastOp>(op)) {
      v = op->getOperand(0);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || generic.getNumDpsInputs() != 1)
      return {};
    v = generic.getDpsInputs()[0];
  }
  return {};
}

void Importer::addIndexCheck(NodeContext &nc, Value indices,
                             ArrayRef<int64_t> dims, bool perComponent) {
  if (!opts.boundsChecks || getConst(indices))
    return;
  auto type = tensorType(indices);
  int64_t rank = type.getRank();
  if (numElementsSat(type.getShape()) == 0)
    return;
  Location loc = nc.loc;
  Type i64 = b.getI64Type();
  bool uns = isUnsigned(indices);

  // The status accumulators start at 0 (no failure) with the first site.
  if (!checkFlag) {
    checkFlag = filled(loc, {}, b.getIntegerAttr(i64, 0));
    checkValue = filled(loc, {}, b.getIntegerAttr(i64, 0));
  }
  int64_t site = checkMessages.size() + 1;

  // The message the ABI reports (it appends the offending value).
  std::string msg;
  llvm::raw_string_ostream os(msg);
  std::string source = describeSource(indices);
  if (!source.empty())
    os << source << ": ";
  os << "index out of range in " << nc.opType() << " node \"" << nc.name
     << "\": ";
  if (perComponent && dims.size() > 1) {
    os << "index tuples address dimensions of sizes ";
    llvm::interleave(dims, os, ", ");
    os << " (component j must be in [-size_j, size_j))";
  } else {
    os << "the dimension has " << dims[0] << " entries (valid: " << -dims[0]
       << " to " << dims[0] - 1 << ")";
  }
  checkMessages.push_back(msg);

  MLIRContext *mctx = b.getContext();
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, mctx),
                              AffineMap::get(rank, 0, {}, mctx),
                              AffineMap::get(rank, 0, {}, mctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{checkFlag.getType(), checkValue.getType()},
      ValueRange{indices}, ValueRange{checkFlag, checkValue}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value idx = args[0];
        if (idx.getType() != i64)
          idx = uns ? Value(arith::ExtUIOp::create(bb, l, i64, idx))
                    : Value(arith::ExtSIOp::create(bb, l, i64, idx));
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(v));
        };
        // The bound of this element: one per component of the last axis
        // (GatherND's index tuples), else one for all.
        Value bound = cst(dims[0]);
        if (perComponent && dims.size() > 1) {
          Value j = linalg::IndexOp::create(bb, l, rank - 1);
          for (auto [c, dim] : llvm::enumerate(dims)) {
            if (c == 0)
              continue;
            Value isC = arith::CmpIOp::create(
                bb, l, arith::CmpIPredicate::eq, j,
                arith::ConstantIndexOp::create(bb, l, c));
            bound = arith::SelectOp::create(bb, l, isC, cst(dim), bound);
          }
        }
        Value negBound = arith::SubIOp::create(bb, l, cst(0), bound);
        Value low = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt,
                                          idx, negBound);
        Value high = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::sge,
                                           idx, bound);
        // Unsigned indices above 2^63 read as negative here: also bad.
        Value bad = arith::OrIOp::create(bb, l, low, high);
        Value first = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                            args[1], cst(0));
        Value take = arith::AndIOp::create(bb, l, bad, first);
        Value flag = arith::SelectOp::create(bb, l, take, cst(site), args[1]);
        Value value = arith::SelectOp::create(bb, l, take, idx, args[2]);
        linalg::YieldOp::create(bb, l, ValueRange{flag, value});
      });
  checkFlag = generic.getResult(0);
  checkValue = generic.getResult(1);
}

Value Importer::finishChecks(Location loc) {
  if (!checkFlag)
    return {};
  Type i64 = b.getI64Type();
  MLIRContext *mctx = b.getContext();
  AffineMap scalar = AffineMap::get(1, 0, {}, mctx);
  Value init = emptyTensor(loc, {2}, i64);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()},
             ValueRange{checkFlag, checkValue}, ValueRange{init},
             SmallVector<AffineMap>{scalar, scalar,
                                    AffineMap::getMultiDimIdentityMap(1, mctx)},
             SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &bb, Location l, ValueRange args) {
               Value i = linalg::IndexOp::create(bb, l, 0);
               Value isFlag = arith::CmpIOp::create(
                   bb, l, arith::CmpIPredicate::eq, i,
                   arith::ConstantIndexOp::create(bb, l, 0));
               linalg::YieldOp::create(
                   bb, l,
                   ValueRange{arith::SelectOp::create(bb, l, isFlag, args[0],
                                                      args[1])});
             })
      .getResult(0);
}
