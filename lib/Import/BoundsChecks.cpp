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
//    (seen as one row) for the smallest position of an out-of-range value
//    -- associative, so the GPU reduces it a warp at a time -- then a
//    scalar step that records that value into a run-time status
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

#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

Value fp8::onnx_import::safeIndex(OpBuilder &bb, Location l, Value idx,
                                  int64_t dim, bool isUnsigned) {
  Value zero = arith::ConstantIndexOp::create(bb, l, 0);
  Value last =
      arith::ConstantIndexOp::create(bb, l, std::max<int64_t>(dim - 1, 0));
  if (isUnsigned) {
    // No wrapping: every unsigned value is an index as it is.
    Value i = arith::IndexCastUIOp::create(bb, l, bb.getIndexType(), idx);
    return arith::MinUIOp::create(bb, l, i, last);
  }
  Value i = arith::IndexCastOp::create(bb, l, bb.getIndexType(), idx);
  Value d = arith::ConstantIndexOp::create(bb, l, dim);
  Value neg = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(bb, l, i, d);
  Value w = arith::SelectOp::create(bb, l, neg, wrapped, i);
  Value lo = arith::MaxSIOp::create(bb, l, w, zero);
  return arith::MinSIOp::create(bb, l, lo, last);
}

Value fp8::onnx_import::safeIndex(OpBuilder &bb, Location l, Value idx,
                                  Value dim, bool isUnsigned) {
  Value zero = arith::ConstantIndexOp::create(bb, l, 0);
  Value one = arith::ConstantIndexOp::create(bb, l, 1);
  Value last = arith::MaxSIOp::create(
      bb, l, arith::SubIOp::create(bb, l, dim, one), zero);
  if (isUnsigned) {
    Value i = arith::IndexCastUIOp::create(bb, l, bb.getIndexType(), idx);
    return arith::MinUIOp::create(bb, l, i, last);
  }
  Value i = arith::IndexCastOp::create(bb, l, bb.getIndexType(), idx);
  Value neg = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(bb, l, i, dim);
  Value w = arith::SelectOp::create(bb, l, neg, wrapped, i);
  Value lo = arith::MaxSIOp::create(bb, l, w, zero);
  return arith::MinSIOp::create(bb, l, lo, last);
}

/// Whether a linalg.generic only moves or converts elements (a Cast, a
/// broadcast, a transpose): its result is "the same data" as its input.
static bool isElementwiseCopy(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return false;
  // A body that reads other tensors (Gather's tensor.extract) computes new
  // values from its input; do not blame the input for them.
  return !g.getBody()
              ->walk([](Operation *op) {
                return isa<tensor::ExtractOp>(op) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
              })
              .wasInterrupted();
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
    if (!generic || !isElementwiseCopy(generic))
      return {};
    v = generic.getDpsInputs()[0];
  }
  return {};
}

/// `text` with newlines and NULs escaped: check messages travel as lines of
/// the model's signature text.
static std::string escapeForSignature(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\0')
      out += "\\0";
    else
      out.push_back(c);
  }
  return out;
}

/// Compile-time check of constant indices: every one must be in
/// [-dim, dim) (unsigned ones in [0, dim)), whatever the tensor's size.
static LogicalResult checkConstantIndices(NodeContext &nc,
                                          DenseElementsAttr values,
                                          ArrayRef<int64_t> dims,
                                          int64_t firstDim, bool perComponent,
                                          bool isUnsigned, bool quiet = false) {
  int64_t k = dims.size(), n = 0;
  for (const APInt &raw : values.getValues<APInt>()) {
    int64_t c = perComponent ? n % k : 0;
    ++n;
    int64_t dim = dims[c];
    bool bad =
        isUnsigned
            ? raw.getActiveBits() > 63 || int64_t(raw.getZExtValue()) >= dim
            : raw.getSExtValue() < -dim || raw.getSExtValue() >= dim;
    if (!bad)
      continue;
    if (quiet)
      return failure();
    auto diag = nc.error() << "index ";
    if (isUnsigned)
      diag << raw.getZExtValue();
    else
      diag << raw.getSExtValue();
    return diag << " out of range for dimension " << firstDim + c << " of size "
                << dim;
  }
  return success();
}

/// "the dimension has 512 entries (valid: -512 to 511)", or with a dynamic
/// size "the dimension has s53 entries (valid: -s53 to s53 - 1)".
static void describeBound(raw_ostream &os, const ShapeSymbols &symbols,
                          const SymExpr &dim) {
  if (std::optional<int64_t> d = dim.getConstant()) {
    os << "the dimension has " << *d << " entries (valid: " << -*d << " to "
       << *d - 1 << ")";
    return;
  }
  std::string n = symbols.str(dim);
  os << "the dimension has " << n << " entries, a run-time size (valid: -("
     << n << ") to " << n << " - 1)";
}

LogicalResult Importer::checkIndices(NodeContext &nc, Value indices,
                                     ArrayRef<SymExpr> symDims,
                                     int64_t firstDim, bool perComponent) {
  bool uns = isUnsigned(indices);
  SmallVector<SymExpr> canon;
  SmallVector<int64_t> dims; // the static sizes, when all are
  for (const SymExpr &d : symDims) {
    canon.push_back(symbols.canonical(d));
    if (std::optional<int64_t> c = canon.back().getConstant())
      dims.push_back(*c);
  }
  const bool staticDims = dims.size() == symDims.size();
  DenseElementsAttr constValues = getConst(indices);
  if (constValues && staticDims)
    return checkConstantIndices(nc, constValues, dims, firstDim, perComponent,
                                uns);
  // Constant indices into a dynamic dimension: in range for every size the
  // bounds allow, or checked at run time like any other.
  if (constValues && llvm::all_of(canon, [&](const SymExpr &d) {
        SmallVector<int64_t> lows{symbols.range(d).first};
        return succeeded(checkConstantIndices(nc, constValues, lows, firstDim,
                                              false, uns, /*quiet=*/true));
      }))
    return success();
  auto type = tensorType(indices);
  int64_t rank = type.getRank();
  SymShape indexShape = symShape(indices);
  SymExpr countExpr(1);
  for (const SymExpr &e : indexShape)
    countExpr = symbols.canonical(countExpr * e);
  if (!opts.boundsChecks || countExpr.getConstant() == std::optional<int64_t>(0))
    return success();
  Location loc = nc.loc;
  Type i64 = b.getI64Type();

  // The status accumulators start at 0 (no failure) with the first site.
  if (!checkFlag) {
    checkFlag = filled(loc, ArrayRef<int64_t>{}, b.getIntegerAttr(i64, 0));
    checkValue = filled(loc, ArrayRef<int64_t>{}, b.getIntegerAttr(i64, 0));
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
  if (perComponent && canon.size() > 1) {
    os << "index tuples address dimensions of sizes ";
    llvm::interleave(canon, os, [&](const SymExpr &d) { os << symbols.str(d); },
                     ", ");
    os << " (component j must be in [-size_j, size_j))";
  } else {
    describeBound(os, symbols, canon[0]);
  }
  checkMessages.push_back(escapeForSignature(msg));
  // Run-time sizes are read before the reductions' bodies use them.
  SmallVector<Value> boundValues;
  for (const SymExpr &d : canon)
    boundValues.push_back(
        d.isConstant() ? Value()
                       : Value(arith::IndexCastOp::create(
                             b, loc, i64, symbols.materialize(b, loc, d))));

  MLIRContext *mctx = b.getContext();
  // The site's first out-of-range element, as an associative reduction
  // (what a GPU reduces a warp per row): the smallest linear position whose
  // index is out of range, over the indices seen as one row. The positions
  // are i32 where they fit (a warp shuffle moves 32 bits).
  const int64_t count = symbols.range(countExpr).second;
  const bool narrow = count < std::numeric_limits<int32_t>::max();
  Type posType = narrow ? Type(b.getI32Type()) : Type(i64);
  const int64_t none = narrow ? std::numeric_limits<int32_t>::max()
                              : std::numeric_limits<int64_t>::max();
  Value flat = indices;
  if (rank != 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    auto flatType = typeFor({countExpr}, type.getElementType());
    flat =
        rank == 0
            ? Value(tensor::ExpandShapeOp::create(
                  b, loc, flatType, indices, ArrayRef<ReassociationIndices>{}))
            : Value(tensor::CollapseShapeOp::create(
                  b, loc, flatType, indices,
                  ArrayRef<ReassociationIndices>{all}));
    withShape(flat, {countExpr});
  }
  const int64_t lastDim = rank ? type.getShape().back() : 1;
  auto widen = [&](OpBuilder &bb, Location l, Value idx) -> Value {
    if (idx.getType() == i64)
      return idx;
    return uns ? Value(arith::ExtUIOp::create(bb, l, i64, idx))
               : Value(arith::ExtSIOp::create(bb, l, i64, idx));
  };
  Value noneInit = filled(loc, ArrayRef<int64_t>{}, b.getIntegerAttr(posType, none));
  auto firstBad = linalg::GenericOp::create(
      b, loc, TypeRange{noneInit.getType()}, ValueRange{flat},
      ValueRange{noneInit},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, mctx),
                             AffineMap::get(1, 0, {}, mctx)},
      SmallVector<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value idx = widen(bb, l, args[0]);
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(v));
        };
        Value pos = linalg::IndexOp::create(bb, l, 0);
        // The bound of this element: one per component of the last axis
        // (GatherND's index tuples), else one for all.
        auto boundOf = [&](size_t c) {
          return boundValues[c] ? boundValues[c]
                                : cst(*canon[c].getConstant());
        };
        Value bound = boundOf(0);
        if (perComponent && canon.size() > 1) {
          Value j = arith::RemUIOp::create(
              bb, l, pos, arith::ConstantIndexOp::create(bb, l, lastDim));
          for (size_t c = 1; c < canon.size(); ++c) {
            Value isC =
                arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, j,
                                      arith::ConstantIndexOp::create(bb, l, c));
            bound = arith::SelectOp::create(bb, l, isC, boundOf(c), bound);
          }
        }
        // Signed: [-bound, bound). Unsigned: [0, bound), compared unsigned
        // (a uint64 above 2^63 is not a negative index).
        Value bad;
        if (uns) {
          bad = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::uge, idx,
                                      bound);
        } else {
          Value negBound = arith::SubIOp::create(bb, l, cst(0), bound);
          Value low = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt,
                                            idx, negBound);
          Value high = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::sge,
                                             idx, bound);
          bad = arith::OrIOp::create(bb, l, low, high);
        }
        Value p = arith::IndexCastOp::create(bb, l, posType, pos);
        Value candidate = arith::SelectOp::create(
            bb, l, bad, p,
            arith::ConstantOp::create(bb, l, bb.getIntegerAttr(posType, none)));
        linalg::YieldOp::create(
            bb, l,
            ValueRange{arith::MinSIOp::create(bb, l, candidate, args[1])});
      });
  // Chained from site to site: the first failing site records its first
  // out-of-range value ({site, value}); later sites leave it.
  AffineMap scalar = AffineMap::get(0, 0, {}, mctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{checkFlag.getType(), checkValue.getType()},
      ValueRange{firstBad.getResult(0)}, ValueRange{checkFlag, checkValue},
      SmallVector<AffineMap>{scalar, scalar, scalar},
      SmallVector<utils::IteratorType>{},
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value first = args[0];
        Value found = arith::CmpIOp::create(
            bb, l, arith::CmpIPredicate::ne, first,
            arith::ConstantOp::create(bb, l, bb.getIntegerAttr(posType, none)));
        Value clean = arith::CmpIOp::create(
            bb, l, arith::CmpIPredicate::eq, args[1],
            arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(0)));
        Value take = arith::AndIOp::create(bb, l, found, clean);
        // The offending element itself (position 0 when none: unused).
        Value at = arith::SelectOp::create(
            bb, l, found, first,
            arith::ConstantOp::create(bb, l, bb.getIntegerAttr(posType, 0)));
        Value idx = widen(
            bb, l,
            tensor::ExtractOp::create(bb, l, flat,
                                      ValueRange{arith::IndexCastOp::create(
                                          bb, l, bb.getIndexType(), at)}));
        Value flag = arith::SelectOp::create(
            bb, l, take,
            arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(site)),
            args[1]);
        Value value = arith::SelectOp::create(bb, l, take, idx, args[2]);
        linalg::YieldOp::create(bb, l, ValueRange{flag, value});
      });
  checkFlag = generic.getResult(0);
  checkValue = generic.getResult(1);
  return success();
}

Value Importer::finishChecks(Location loc) {
  if (!checkFlag)
    return {};
  Type i64 = b.getI64Type();
  MLIRContext *mctx = b.getContext();
  AffineMap scalar = AffineMap::get(1, 0, {}, mctx);
  Value init = emptyTensor(loc, ArrayRef<int64_t>{2}, i64);
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
               linalg::YieldOp::create(bb, l,
                                       ValueRange{arith::SelectOp::create(
                                           bb, l, isFlag, args[0], args[1])});
             })
      .getResult(0);
}
