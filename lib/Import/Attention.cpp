//===- Attention.cpp - Attention chains as fp8.attention ------------------===//
//
// Part of fp8-opt. Recognition of the attention chains PyTorch's exporters
// write, at the ONNX-graph level, with the importer's static shapes:
//
//   dynamo SDPA      Mul(q, c) . Mul(k^T, c) -> MatMul -> Add mask -> Softmax
//                    -> Where(IsNaN(p), 0, p) -> MatMul v
//   eager / TorchScript
//                    MatMul(q, k^T) -> Mul|Div c -> Add mask -> Softmax
//                    -> MatMul v
//
// with k^T and v reached through data movement only (Transpose, Reshape,
// Unsqueeze, Squeeze, Expand: grouped-query heads as Unsqueeze -> Expand ->
// Reshape). Each chain becomes one fp8.attention of the un-expanded key and
// value; scalar factors fold into `scale`; a mask that is a compile-time
// constant equal to the causal pattern becomes `causal`, an all-zero one
// disappears. "Constant" includes masks the graph computes from constants:
// element-wise compare/select chains and data movement are evaluated one
// row at a time, the small intermediates they read (Slice, CumSum and
// GatherND of position vectors, as transformers' packed-sequence check
// writes them) as whole tensors.
//
// Data movement is tracked as a layout: every dimension of a value is a list
// of (size, stride) atoms over the row-major elements of the chain's source.
// Reshape regroups atoms (splitting one where a new dimension boundary falls
// inside it), Transpose permutes dimensions, Expand adds stride-0 atoms.
// Key/value heads expanded for grouped-query attention show up as a head
// dimension whose last atom has stride 0; anything else that is not a plain
// permutation of the source is not attention as fp8.attention defines it.
//
// Anything that does not match -- another user of an intermediate, a
// non-constant or non-scalar factor, another softmax axis, rank != 4, a mask
// that could leave a row entirely -inf where the graph has no IsNaN guard
// (ONNX then gives NaN, the op 0) -- leaves the node to the ordinary
// handlers: the decomposition stays, never a different graph.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "Importer.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Numerics/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

namespace {

/// Longest chain of data movement or scalar factors walked back from an
/// operand; exporters write at most six.
constexpr int kMaxChain = 16;
/// Largest expression tree evaluated for a mask, and its depth.
constexpr int kMaxMaskNodes = 64, kMaxMaskDepth = 24;
/// Largest rank anything here indexes.
constexpr size_t kMaxRank = 8;
/// Mask elements examined at most (a 16384 x 16384 mask).
constexpr int64_t kMaxMaskElements = int64_t(1) << 28;
/// Largest intermediate a mask expression computes as a whole (Slice,
/// CumSum, GatherND and their operands): position vectors and the index
/// tuples exporters gather them with, never the [Sq, Skv] mask itself.
constexpr int64_t kMaxMaterialized = int64_t(1) << 22;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// Element `i` (row-major) of a constant tensor, as a double: floats
/// widened exactly, integers and booleans by value.
class ConstReader {
public:
  static std::optional<ConstReader> get(Value v) {
    auto cst = v ? v.getDefiningOp<arith::ConstantOp>() : nullptr;
    if (!cst)
      return std::nullopt;
    ConstReader r;
    auto type = cast<RankedTensorType>(cst.getType());
    r.elt = type.getElementType();
    r.count = type.getNumElements();
    if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue())) {
      AsmResourceBlob *blob = res.getRawHandle().getBlob();
      if (!blob || r.elt.isInteger(1))
        return std::nullopt;
      r.raw = blob->getData();
    } else if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue())) {
      r.dense = dense;
      if (dense.isSplat()) {
        r.splat = true;
        r.splatValue = readAttr(dense, 0);
      } else if (!r.elt.isInteger(1)) {
        r.raw = dense.getRawData();
      }
    } else {
      return std::nullopt;
    }
    if (!isa<FloatType, IntegerType>(r.elt))
      return std::nullopt;
    unsigned width = r.elt.getIntOrFloatBitWidth();
    if (!r.raw.empty() &&
        (width % 8 != 0 || int64_t(r.raw.size()) != r.count * (width / 8)))
      return std::nullopt;
    if (r.splat)
      r.kind = Kind::Splat;
    else if (r.elt.isInteger(1))
      r.kind = Kind::Bool;
    else if (r.elt.isF32())
      r.kind = Kind::F32;
    else if (r.elt.isF64())
      r.kind = Kind::F64;
    else if (r.elt.isF16())
      r.kind = Kind::F16;
    else if (r.elt.isBF16())
      r.kind = Kind::BF16;
    else if (isa<FloatType>(r.elt))
      return std::nullopt;
    else
      r.kind = width == 8    ? Kind::I8
               : width == 16 ? Kind::I16
               : width == 32 ? Kind::I32
                             : Kind::I64;
    if (!r.splat && !r.elt.isInteger(1) &&
        !llvm::is_contained({8u, 16u, 32u, 64u}, width))
      return std::nullopt;
    return r;
  }

  int64_t size() const { return count; }

  double at(int64_t i) const {
    const char *p = raw.data();
    switch (kind) {
    case Kind::Splat:
      return splatValue;
    case Kind::Bool:
      return readAttr(dense, i);
    case Kind::F32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case Kind::F64: {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      return d;
    }
    case Kind::F16:
    case Kind::BF16: {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * i, 2);
      return kind == Kind::F16 ? numerics::f16ToFloat(bits)
                               : numerics::bf16ToFloat(bits);
    }
    case Kind::I8:
      return static_cast<int8_t>(p[i]);
    case Kind::I16: {
      int16_t x;
      std::memcpy(&x, p + 2 * i, 2);
      return x;
    }
    case Kind::I32: {
      int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      return x;
    }
    case Kind::I64: {
      int64_t x;
      std::memcpy(&x, p + 8 * i, 8);
      return static_cast<double>(x);
    }
    }
    return 0;
  }

private:
  static double readAttr(DenseElementsAttr attr, int64_t i) {
    Type t = attr.getElementType();
    if (t.isInteger(1))
      return *(attr.value_begin<bool>() + i) ? 1.0 : 0.0;
    if (isa<FloatType>(t)) {
      APFloat f = *(attr.value_begin<APFloat>() + i);
      bool lost;
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      return f.convertToDouble();
    }
    return static_cast<double>((*(attr.value_begin<APInt>() + i)).getSExtValue());
  }

  enum class Kind { Splat, Bool, F32, F64, F16, BF16, I8, I16, I32, I64 };
  Kind kind = Kind::Splat;
  Type elt;
  int64_t count = 0;
  ArrayRef<char> raw;
  DenseElementsAttr dense;
  bool splat = false;
  double splatValue = 0;
};

/// The value of a constant holding one value (any shape), if finite.
std::optional<double> scalarConstant(Value v) {
  std::optional<ConstReader> r = ConstReader::get(v);
  if (!r || r->size() < 1 || r->size() > Importer::kFoldLimit)
    return std::nullopt;
  double x = r->at(0);
  for (int64_t i = 1; i < r->size(); ++i)
    if (r->at(i) != x)
      return std::nullopt;
  if (!std::isfinite(x))
    return std::nullopt;
  return x;
}

/// `x` rounded to the float type `t` (doubles computed by the evaluator).
double roundTo(double x, Type t) {
  if (t.isF64())
    return x;
  if (t.isF32())
    return static_cast<float>(x);
  if (auto ft = dyn_cast<FloatType>(t)) {
    APFloat f(x);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (t.isInteger(1))
    return x != 0 ? 1.0 : 0.0;
  return std::trunc(x);
}

//===----------------------------------------------------------------------===//
// Layouts: dimensions as (size, stride) atoms over a source
//===----------------------------------------------------------------------===//

struct Atom {
  int64_t size, stride;
  bool operator==(const Atom &o) const {
    return size == o.size && stride == o.stride;
  }
};
using Group = SmallVector<Atom, 2>;

struct Layout {
  SmallVector<int64_t> shape;
  SmallVector<Group> dims;
};

/// Without size-1 atoms, neighbours that address contiguously merged.
Group canonical(ArrayRef<Atom> atoms) {
  Group out;
  for (Atom a : atoms) {
    if (a.size == 1)
      continue;
    if (!out.empty() && out.back().stride == a.size * a.stride)
      out.back() = {out.back().size * a.size, a.stride};
    else
      out.push_back(a);
  }
  return out;
}

bool sameLayout(const Layout &a, const Layout &b) {
  if (a.shape != b.shape)
    return false;
  for (auto [x, y] : llvm::zip_equal(a.dims, b.dims))
    if (canonical(x) != canonical(y))
      return false;
  return true;
}

std::optional<Layout> identityLayout(ArrayRef<int64_t> shape) {
  if (shape.size() > kMaxRank || llvm::is_contained(shape, 0))
    return std::nullopt;
  Layout l;
  l.shape.assign(shape.begin(), shape.end());
  l.dims.resize(shape.size());
  int64_t stride = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    l.dims[d].push_back({shape[d], stride});
    stride *= shape[d];
  }
  return l;
}

std::optional<Layout> reshapeLayout(const Layout &in, ArrayRef<int64_t> shape) {
  if (shape.size() > kMaxRank || llvm::is_contained(shape, 0))
    return std::nullopt;
  SmallVector<Atom> atoms;
  for (const Group &g : in.dims)
    for (Atom a : g)
      if (a.size != 1)
        atoms.push_back(a);
  Layout out;
  out.shape.assign(shape.begin(), shape.end());
  size_t next = 0;
  for (int64_t n : shape) {
    Group g;
    int64_t have = 1;
    while (have < n) {
      if (next == atoms.size() || n % have != 0)
        return std::nullopt;
      int64_t need = n / have;
      Atom &a = atoms[next];
      if (a.size <= need) {
        if (need % a.size != 0)
          return std::nullopt;
        g.push_back(a);
        have *= a.size;
        ++next;
      } else {
        // The boundary falls inside this atom: its outer part ends the group.
        if (a.size % need != 0)
          return std::nullopt;
        g.push_back({need, a.stride * (a.size / need)});
        a = {a.size / need, a.stride};
        have *= need;
      }
    }
    out.dims.push_back(std::move(g));
  }
  if (next != atoms.size())
    return std::nullopt;
  return out;
}

std::optional<Layout> transposeLayout(const Layout &in, ArrayRef<int64_t> perm) {
  if (perm.size() != in.dims.size())
    return std::nullopt;
  Layout out;
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return std::nullopt;
    seen[p] = true;
    out.shape.push_back(in.shape[p]);
    out.dims.push_back(in.dims[p]);
  }
  return out;
}

/// Numpy broadcasting to `shape` (Expand; MatMul's batch dimensions).
std::optional<Layout> broadcastLayout(const Layout &in,
                                      ArrayRef<int64_t> shape) {
  if (shape.size() < in.shape.size() || shape.size() > kMaxRank)
    return std::nullopt;
  Layout out;
  out.shape.assign(shape.begin(), shape.end());
  const size_t lead = shape.size() - in.shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t from = d < lead ? 1 : in.shape[d - lead];
    Group g = d < lead ? Group() : in.dims[d - lead];
    if (from == shape[d]) {
      out.dims.push_back(g);
    } else if (from == 1 && shape[d] > 0) {
      out.dims.push_back(Group{Atom{shape[d], 0}});
    } else {
      return std::nullopt;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Masks evaluated at compile time
//===----------------------------------------------------------------------===//

/// The element-wise ONNX ops a mask expression may use.
enum class MaskOp {
  Where, Not, And, Or, Xor, Equal, Less, LessOrEqual, Greater,
  GreaterOrEqual, Add, Sub, Mul, Neg, Cast, Identity
};

std::optional<MaskOp> maskOp(StringRef op) {
  return llvm::StringSwitch<std::optional<MaskOp>>(op)
      .Case("Where", MaskOp::Where)
      .Case("Not", MaskOp::Not)
      .Case("And", MaskOp::And)
      .Case("Or", MaskOp::Or)
      .Case("Xor", MaskOp::Xor)
      .Case("Equal", MaskOp::Equal)
      .Case("Less", MaskOp::Less)
      .Case("LessOrEqual", MaskOp::LessOrEqual)
      .Case("Greater", MaskOp::Greater)
      .Case("GreaterOrEqual", MaskOp::GreaterOrEqual)
      .Case("Add", MaskOp::Add)
      .Case("Sub", MaskOp::Sub)
      .Case("Mul", MaskOp::Mul)
      .Case("Neg", MaskOp::Neg)
      .Case("Cast", MaskOp::Cast)
      .Case("Identity", MaskOp::Identity)
      .Default(std::nullopt);
}

unsigned maskOpArity(MaskOp op) {
  switch (op) {
  case MaskOp::Where:
    return 3;
  case MaskOp::Not:
  case MaskOp::Neg:
  case MaskOp::Cast:
  case MaskOp::Identity:
    return 1;
  default:
    return 2;
  }
}

/// An expression over constants that the graph computes a mask with
/// (Where/And/compare chains over constant tensors, data movement),
/// evaluated one element at a time: a causal mask of 8192^2 elements needs
/// no buffer.
class MaskExpr {
public:
  enum class Kind { Leaf, Elementwise, Reshape, Transpose, Expand };
  struct Node {
    Kind kind;
    MaskOp op = MaskOp::Identity; // Elementwise
    SmallVector<int64_t> shape;
    Type type;
    /// How a result rounds to `type`: none (f64), f32, another float type,
    /// an integer, a boolean.
    enum class Rounding { None, F32, Float, Int, Bool } rounding;
    SmallVector<unsigned> operands;
    SmallVector<int64_t> perm;
    /// A leaf's elements: a constant of the graph, or a tensor computed
    /// here (row-major doubles already rounded to `type`).
    std::optional<ConstReader> leaf;
    std::shared_ptr<const std::vector<double>> values;

    double at(int64_t i) const { return values ? (*values)[i] : leaf->at(i); }
  };

  std::vector<Node> nodes;

  static Node::Rounding roundingOf(Type t) {
    if (t.isF64())
      return Node::Rounding::None;
    if (t.isF32())
      return Node::Rounding::F32;
    if (isa<FloatType>(t))
      return Node::Rounding::Float;
    return t.isInteger(1) ? Node::Rounding::Bool : Node::Rounding::Int;
  }

  double eval(unsigned n, const int64_t *idx) const {
    const Node &node = nodes[n];
    int64_t sub[kMaxRank];
    switch (node.kind) {
    case Kind::Leaf: {
      int64_t lin = 0;
      for (size_t d = 0; d < node.shape.size(); ++d)
        lin = lin * node.shape[d] + idx[d];
      return node.at(lin);
    }
    case Kind::Reshape: {
      const Node &in = nodes[node.operands[0]];
      int64_t lin = 0;
      for (size_t d = 0; d < node.shape.size(); ++d)
        lin = lin * node.shape[d] + idx[d];
      for (int64_t d = int64_t(in.shape.size()) - 1; d >= 0; --d) {
        sub[d] = lin % in.shape[d];
        lin /= in.shape[d];
      }
      return eval(node.operands[0], sub);
    }
    case Kind::Transpose:
      for (size_t d = 0; d < node.perm.size(); ++d)
        sub[node.perm[d]] = idx[d];
      return eval(node.operands[0], sub);
    case Kind::Expand:
      broadcastIndex(node, nodes[node.operands[0]].shape, idx, sub);
      return eval(node.operands[0], sub);
    case Kind::Elementwise:
      break;
    }
    double a[3];
    for (auto [i, operand] : llvm::enumerate(node.operands)) {
      broadcastIndex(node, nodes[operand].shape, idx, sub);
      a[i] = eval(operand, sub);
    }
    return apply(node, a);
  }

  /// An element-wise node's value for its operands' values `a`.
  static double apply(const Node &node, const double *a) {
    double r = 0; // (every MaskOp sets it; gcc cannot tell)
    switch (node.op) {
    case MaskOp::Where:
      return a[0] != 0 ? a[1] : a[2];
    case MaskOp::Not:
      r = a[0] == 0;
      break;
    case MaskOp::And:
      r = a[0] != 0 && a[1] != 0;
      break;
    case MaskOp::Or:
      r = a[0] != 0 || a[1] != 0;
      break;
    case MaskOp::Xor:
      r = (a[0] != 0) != (a[1] != 0);
      break;
    case MaskOp::Equal:
      r = a[0] == a[1];
      break;
    case MaskOp::Less:
      r = a[0] < a[1];
      break;
    case MaskOp::LessOrEqual:
      r = a[0] <= a[1];
      break;
    case MaskOp::Greater:
      r = a[0] > a[1];
      break;
    case MaskOp::GreaterOrEqual:
      r = a[0] >= a[1];
      break;
    case MaskOp::Add:
      r = a[0] + a[1];
      break;
    case MaskOp::Sub:
      r = a[0] - a[1];
      break;
    case MaskOp::Mul:
      r = a[0] * a[1];
      break;
    case MaskOp::Neg:
      r = -a[0];
      break;
    case MaskOp::Cast:
    case MaskOp::Identity:
      r = a[0];
      break;
    }
    switch (node.rounding) {
    case Node::Rounding::None:
      return r;
    case Node::Rounding::F32:
      return static_cast<float>(r);
    case Node::Rounding::Bool:
      return r != 0 ? 1.0 : 0.0;
    default:
      return roundTo(r, node.type);
    }
  }

  /// Row `prefix` (every index but the innermost) of node `n` into
  /// out[0, innermost size): data movement that keeps the innermost
  /// dimension and broadcasts cost nothing per element.
  void evalRow(unsigned n, const int64_t *prefix, double *out) const {
    const Node &node = nodes[n];
    const size_t rank = node.shape.size();
    const int64_t len = rank ? node.shape.back() : 1;
    int64_t sub[kMaxRank] = {};
    auto linear = [&](ArrayRef<int64_t> shape, const int64_t *index) {
      int64_t lin = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        lin = lin * shape[d] + index[d];
      return lin;
    };
    switch (node.kind) {
    case Kind::Leaf: {
      int64_t base =
          rank ? linear(ArrayRef<int64_t>(node.shape).drop_back(), prefix) * len
               : 0;
      for (int64_t j = 0; j < len; ++j)
        out[j] = node.at(base + j);
      return;
    }
    case Kind::Transpose:
      if (rank && node.perm.back() == int64_t(rank) - 1) {
        for (size_t d = 0; d + 1 < rank; ++d)
          sub[node.perm[d]] = prefix[d];
        return evalRow(node.operands[0], sub, out);
      }
      break;
    case Kind::Reshape: {
      ArrayRef<int64_t> in = nodes[node.operands[0]].shape;
      if (rank && !in.empty() && in.back() == len) {
        int64_t lin = linear(ArrayRef<int64_t>(node.shape).drop_back(), prefix);
        for (int64_t d = int64_t(in.size()) - 2; d >= 0; --d) {
          sub[d] = lin % in[d];
          lin /= in[d];
        }
        return evalRow(node.operands[0], sub, out);
      }
      break;
    }
    case Kind::Expand:
    case Kind::Elementwise: {
      SmallVector<double> rows[3];
      bool broadcast[3];
      for (auto [i, operand] : llvm::enumerate(node.operands)) {
        ArrayRef<int64_t> in = nodes[operand].shape;
        const size_t lead = rank - in.size();
        for (size_t d = 0; d + 1 < in.size(); ++d)
          sub[d] = in[d] == 1 ? 0 : prefix[lead + d];
        broadcast[i] = in.empty() || in.back() != len;
        rows[i].resize(broadcast[i] ? 1 : len);
        evalRow(operand, sub, rows[i].data());
      }
      if (node.kind == Kind::Expand) {
        for (int64_t j = 0; j < len; ++j)
          out[j] = rows[0][broadcast[0] ? 0 : j];
        return;
      }
      double a[3];
      for (int64_t j = 0; j < len; ++j) {
        for (size_t i = 0; i < node.operands.size(); ++i)
          a[i] = rows[i][broadcast[i] ? 0 : j];
        out[j] = apply(node, a);
      }
      return;
    }
    }
    // Data movement across the innermost dimension: element by element.
    if (rank == 0) {
      out[0] = eval(n, sub);
      return;
    }
    std::copy(prefix, prefix + rank - 1, sub);
    for (int64_t j = 0; j < len; ++j) {
      sub[rank - 1] = j;
      out[j] = eval(n, sub);
    }
  }

  /// Every element of node `n` (row-major), if it has at most `limit`.
  std::optional<std::vector<double>> materialize(unsigned n,
                                                 int64_t limit) const {
    ArrayRef<int64_t> shape = nodes[n].shape;
    const int64_t count = numElementsSat(shape);
    if (count > limit)
      return std::nullopt;
    std::vector<double> out(count);
    if (count == 0)
      return out;
    const size_t rank = shape.size();
    const int64_t len = rank ? shape.back() : 1;
    int64_t prefix[kMaxRank] = {};
    for (int64_t row = 0; row < count / len; ++row) {
      int64_t rem = row;
      for (int64_t d = int64_t(rank) - 2; d >= 0; --d) {
        prefix[d] = rem % shape[d];
        rem /= shape[d];
      }
      evalRow(n, prefix, out.data() + row * len);
    }
    return out;
  }

private:
  static void broadcastIndex(const Node &node, ArrayRef<int64_t> in,
                             const int64_t *idx, int64_t *sub) {
    const size_t lead = node.shape.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      sub[d] = in[d] == 1 ? 0 : idx[lead + d];
  }
};

bool isDefaultDomain(const onnx::NodeProto &n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

bool isReshapeOp(StringRef op) {
  return llvm::is_contained({"Reshape", "Unsqueeze", "Squeeze", "Flatten"},
                            op);
}

/// What a constant mask is, for scores [.., Sq, Skv].
struct MaskKind {
  bool zero = false;   // every element 0: no mask
  bool causal = false; // 0 where j <= i + Skv - Sq, -inf or lowest above
  bool rowsFinite = false; // every row has an element above -inf
};

} // namespace

//===----------------------------------------------------------------------===//
// The recognizer
//===----------------------------------------------------------------------===//

struct AttentionFusion::Impl {
  Impl(Importer &imp, const onnx::GraphProto &graph,
       const llvm::StringMap<Value> &values)
      : imp(imp), values(values) {
    for (const onnx::NodeProto &node : graph.node()) {
      for (const std::string &out : node.output())
        if (!out.empty())
          producers[out] = &node;
      for (const std::string &in : node.input())
        if (!in.empty())
          ++uses[in];
    }
    for (const onnx::ValueInfoProto &out : graph.output())
      ++uses[out.name()];
  }

  Importer &imp;
  const llvm::StringMap<Value> &values;
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<unsigned> uses;
  /// Masks classified so far, by value and scores' (Sq, Skv): every layer
  /// of a decoder shares one.
  std::map<std::tuple<void *, int64_t, int64_t>, std::optional<MaskKind>>
      maskKinds;

  Value lookup(StringRef name) const { return values.lookup(name); }
  const onnx::NodeProto *producer(StringRef name) const {
    return producers.lookup(name);
  }
  /// The node producing `name` if it is an `op` whose only output is used
  /// exactly `count` times (by the chain).
  const onnx::NodeProto *single(StringRef name, StringRef op,
                                unsigned count = 1) const {
    const onnx::NodeProto *n = producer(name);
    if (!n || n->op_type() != op || !isDefaultDomain(*n) ||
        uses.lookup(name) != count)
      return nullptr;
    return n;
  }
  static std::optional<int64_t> attrInt(const onnx::NodeProto &n,
                                        StringRef name) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.name() == name)
        return a.i();
    return std::nullopt;
  }

  //===--- Operand chains -------------------------------------------------===//

  /// An operand reached from `source` by data movement and scalar factors.
  struct Chain {
    Value source;
    Layout layout; // of the operand over source
    double factor = 1.0;
    /// Values along the way, with their layouts over source, that a fused
    /// op may read instead of re-deriving them: those before every factor.
    SmallVector<std::pair<Value, Layout>> reusable;
  };

  std::optional<Chain> walk(StringRef name) const {
    struct Step {
      const onnx::NodeProto *node;
      std::string data; // the operand it transforms
      std::optional<double> factor; // none: data movement
    };
    SmallVector<Step> steps;
    std::string cur = name.str();
    for (int depth = 0; depth < kMaxChain; ++depth) {
      const onnx::NodeProto *n = producer(cur);
      if (!n || !isDefaultDomain(*n) || n->input_size() < 1)
        break;
      StringRef op = n->op_type();
      if (isReshapeOp(op) || op == "Identity" || op == "Transpose" ||
          op == "Expand") {
        steps.push_back({n, n->input(0), std::nullopt});
        cur = n->input(0);
        continue;
      }
      if ((op == "Mul" || op == "Div") && n->input_size() == 2) {
        Value out = lookup(n->output(0));
        int dataIdx = -1;
        std::optional<double> c;
        for (int i : {1, 0}) {
          if (op == "Div" && i == 0)
            break;
          Value in = lookup(n->input(i)), other = lookup(n->input(1 - i));
          if (!out || !in || !other ||
              Importer::shapeOf(other) != Importer::shapeOf(out))
            continue;
          if ((c = scalarConstant(in))) {
            dataIdx = 1 - i;
            break;
          }
        }
        if (dataIdx < 0 || (op == "Div" && *c == 0))
          break;
        steps.push_back({n, n->input(dataIdx), op == "Mul" ? *c : 1.0 / *c});
        cur = n->input(dataIdx);
        continue;
      }
      break;
    }
    Chain chain;
    chain.source = lookup(cur);
    if (!chain.source || !isa<RankedTensorType>(chain.source.getType()))
      return std::nullopt;
    std::optional<Layout> layout =
        identityLayout(Importer::shapeOf(chain.source));
    if (!layout)
      return std::nullopt;
    bool beforeFactors = true;
    chain.reusable.push_back({chain.source, *layout});
    for (const Step &step : llvm::reverse(steps)) {
      const onnx::NodeProto &n = *step.node;
      Value out = lookup(n.output(0));
      if (!out)
        return std::nullopt;
      ArrayRef<int64_t> shape = Importer::shapeOf(out);
      StringRef op = n.op_type();
      if (step.factor) {
        chain.factor *= *step.factor;
        beforeFactors = false;
        continue; // same layout
      }
      if (op == "Transpose") {
        SmallVector<int64_t> perm;
        for (const onnx::AttributeProto &a : n.attribute())
          if (a.name() == "perm")
            perm.assign(a.ints().begin(), a.ints().end());
        if (perm.empty())
          perm = llvm::to_vector(
              llvm::reverse(llvm::seq<int64_t>(0, layout->shape.size())));
        layout = transposeLayout(*layout, perm);
      } else if (op == "Expand") {
        layout = broadcastLayout(*layout, shape);
      } else {
        layout = reshapeLayout(*layout, shape);
      }
      if (!layout || layout->shape != SmallVector<int64_t>(shape))
        return std::nullopt;
      if (beforeFactors)
        chain.reusable.push_back({out, *layout});
    }
    chain.layout = std::move(*layout);
    return chain;
  }

  /// Splits the head dimension of a key or value operand broadcast to `Hq`
  /// heads: kv heads atoms and the group size (the trailing stride-0
  /// atoms). The other dimensions must not broadcast.
  static std::optional<std::pair<Group, int64_t>>
  splitHeads(const Layout &l) {
    for (size_t d : {0, 2, 3})
      if (llvm::any_of(canonical(l.dims[d]),
                       [](Atom a) { return a.stride == 0; }))
        return std::nullopt;
    Group heads = canonical(l.dims[1]);
    int64_t group = 1;
    while (!heads.empty() && heads.back().stride == 0) {
      group *= heads.back().size;
      heads.pop_back();
    }
    if (llvm::any_of(heads, [](Atom a) { return a.stride == 0; }))
      return std::nullopt;
    return std::make_pair(heads, group);
  }

  /// The value whose layout over `chain.source` is `target`: one the graph
  /// already computes, or reshape -> transpose -> reshape of the source
  /// (built only in `build` mode; otherwise a null Value means "possible").
  FailureOr<Value> materialize(const Chain &chain, const Layout &target,
                               Location loc, bool build) const {
    for (const auto &[value, layout] : chain.reusable)
      if (sameLayout(layout, target))
        return value;
    // A transpose of a value along the way (the earliest, so that the
    // graph's own transposes die; and no reshape, which would copy a
    // strided slice such as a Split output).
    for (const auto &[value, layout] : chain.reusable) {
      if (layout.shape.size() != target.shape.size())
        continue;
      SmallVector<int64_t> perm =
          llvm::to_vector(llvm::seq<int64_t>(0, target.shape.size()));
      do {
        std::optional<Layout> t = transposeLayout(layout, perm);
        if (t && sameLayout(*t, target))
          return build ? imp.transpose(loc, value, perm) : Value();
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
    // The target's atoms, sorted by stride, must tile the source.
    SmallVector<Atom> atoms;
    for (const Group &g : target.dims)
      for (Atom a : canonical(g))
        atoms.push_back(a);
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, atoms.size()));
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return atoms[a].stride > atoms[b].stride;
    });
    int64_t expected = 1;
    for (unsigned i : llvm::reverse(order)) {
      if (atoms[i].stride != expected)
        return failure();
      expected *= atoms[i].size;
    }
    if (expected != numElementsSat(Importer::shapeOf(chain.source)))
      return failure();
    if (!build)
      return Value();
    SmallVector<int64_t> sorted, perm(atoms.size());
    for (auto [pos, i] : llvm::enumerate(order)) {
      sorted.push_back(atoms[i].size);
      perm[i] = pos;
    }
    Value v = imp.reshape(loc, chain.source, sorted);
    v = imp.transpose(loc, v, perm);
    return imp.reshape(loc, v, target.shape);
  }

  //===--- Masks ------------------------------------------------------------===//

  /// Builds the expression computing `name` from constants, or fails.
  std::optional<unsigned> buildMask(MaskExpr &expr, StringRef name,
                                    int depth) const {
    Value v = lookup(name);
    if (!v || depth > kMaxMaskDepth ||
        expr.nodes.size() >= size_t(kMaxMaskNodes) || imp.isUnsigned(v))
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() > int64_t(kMaxRank) ||
        !isa<FloatType, IntegerType>(type.getElementType()))
      return std::nullopt;
    MaskExpr::Node node;
    node.shape.assign(type.getShape().begin(), type.getShape().end());
    node.type = type.getElementType();
    node.rounding = MaskExpr::roundingOf(node.type);
    if (std::optional<ConstReader> r = ConstReader::get(v)) {
      node.kind = MaskExpr::Kind::Leaf;
      node.leaf = r;
      expr.nodes.push_back(std::move(node));
      return expr.nodes.size() - 1;
    }
    const onnx::NodeProto *n = producer(name);
    if (!n || !isDefaultDomain(*n))
      return std::nullopt;
    StringRef op = n->op_type();
    if (op == "Slice" || op == "CumSum" || op == "GatherND")
      return buildComputed(expr, *n, std::move(node), depth);
    unsigned dataInputs;
    if (std::optional<MaskOp> ew = maskOp(op)) {
      node.kind = MaskExpr::Kind::Elementwise;
      node.op = *ew;
      dataInputs = maskOpArity(*ew);
      if (n->input_size() != int(dataInputs))
        return std::nullopt;
      if (op == "Cast" && !isa<FloatType>(node.type) &&
          !node.type.isInteger(1) && !node.type.isInteger(64))
        return std::nullopt; // narrow integer casts wrap
    } else if (isReshapeOp(op)) {
      node.kind = MaskExpr::Kind::Reshape;
      dataInputs = 1;
    } else if (op == "Expand") {
      node.kind = MaskExpr::Kind::Expand;
      dataInputs = 1;
    } else if (op == "Transpose") {
      node.kind = MaskExpr::Kind::Transpose;
      dataInputs = 1;
      for (const onnx::AttributeProto &a : n->attribute())
        if (a.name() == "perm")
          node.perm.assign(a.ints().begin(), a.ints().end());
      if (node.perm.empty())
        node.perm = llvm::to_vector(
            llvm::reverse(llvm::seq<int64_t>(0, node.shape.size())));
    } else {
      return std::nullopt;
    }
    if (dataInputs < 1 || dataInputs > 3 || n->input_size() < int(dataInputs))
      return std::nullopt;
    for (unsigned i = 0; i < dataInputs; ++i) {
      std::optional<unsigned> operand = buildMask(expr, n->input(i), depth + 1);
      if (!operand)
        return std::nullopt;
      ArrayRef<int64_t> in = expr.nodes[*operand].shape;
      // Broadcasts must be numpy's (the importer has checked it; the
      // evaluator relies on it).
      if (in.size() > node.shape.size())
        return std::nullopt;
      if (node.kind != MaskExpr::Kind::Reshape &&
          node.kind != MaskExpr::Kind::Transpose)
        for (size_t d = 0; d < in.size(); ++d)
          if (in[d] != 1 && in[d] != node.shape[node.shape.size() - in.size() + d])
            return std::nullopt;
      node.operands.push_back(*operand);
    }
    if (node.kind == MaskExpr::Kind::Transpose) {
      ArrayRef<int64_t> in = expr.nodes[node.operands[0]].shape;
      if (node.perm.size() != node.shape.size() || in.size() != node.shape.size())
        return std::nullopt;
      SmallVector<bool> seen(in.size(), false);
      for (auto [d, p] : llvm::enumerate(node.perm)) {
        if (p < 0 || p >= int64_t(in.size()) || seen[p] ||
            in[p] != node.shape[d])
          return std::nullopt;
        seen[p] = true;
      }
    }
    if (node.kind == MaskExpr::Kind::Reshape &&
        numElementsSat(expr.nodes[node.operands[0]].shape) !=
            numElementsSat(node.shape))
      return std::nullopt;
    expr.nodes.push_back(std::move(node));
    return expr.nodes.size() - 1;
  }

  /// The integers of a small integer constant `name` (Slice's starts, ends,
  /// axes and steps; CumSum's axis), saturated to int64.
  std::optional<SmallVector<int64_t>> constInts(StringRef name) const {
    Value v = lookup(name);
    std::optional<ConstReader> r = ConstReader::get(v);
    if (!r || !isa<IntegerType>(getElementTypeOrSelf(v.getType())) ||
        imp.isUnsigned(v) || r->size() > int64_t(kMaxRank))
      return std::nullopt;
    SmallVector<int64_t> out;
    for (int64_t i = 0; i < r->size(); ++i) {
      const double x = r->at(i);
      out.push_back(x >= 0x1p63    ? std::numeric_limits<int64_t>::max()
                    : x <= -0x1p63 ? std::numeric_limits<int64_t>::min()
                                   : static_cast<int64_t>(x));
    }
    return out;
  }

  /// A Slice, CumSum or GatherND of the mask expression computed here as a
  /// whole tensor (a leaf of `expr`): its operands are small (position
  /// vectors, index tuples), what it feeds is evaluated row by row. Any
  /// form the ONNX spec leaves to the runtime (an index out of range, an
  /// overflowing sum, a shape that is not the importer's) fails.
  std::optional<unsigned> buildComputed(MaskExpr &expr,
                                        const onnx::NodeProto &n,
                                        MaskExpr::Node node, int depth) const {
    StringRef op = n.op_type();
    if (n.input_size() < (op == "Slice" ? 3 : 2))
      return std::nullopt;
    auto operand = [&](int i)
        -> std::optional<std::pair<std::vector<double>, SmallVector<int64_t>>> {
      std::optional<unsigned> id = buildMask(expr, n.input(i), depth + 1);
      if (!id)
        return std::nullopt;
      std::optional<std::vector<double>> v =
          expr.materialize(*id, kMaxMaterialized);
      if (!v)
        return std::nullopt;
      return std::make_pair(std::move(*v), expr.nodes[*id].shape);
    };
    if (numElementsSat(node.shape) > kMaxMaterialized)
      return std::nullopt;
    auto data = operand(0);
    if (!data)
      return std::nullopt;
    std::optional<std::vector<double>> out;
    if (op == "Slice") {
      std::optional<SmallVector<int64_t>> starts = constInts(n.input(1)),
                                          ends = constInts(n.input(2)), axes,
                                          steps;
      if (n.input_size() > 3 && !n.input(3).empty() &&
          !(axes = constInts(n.input(3))))
        return std::nullopt;
      if (n.input_size() > 4 && !n.input(4).empty() &&
          !(steps = constInts(n.input(4))))
        return std::nullopt;
      if (!starts || !ends)
        return std::nullopt;
      out = sliceValues(data->first, data->second, *starts, *ends,
                        axes.value_or(SmallVector<int64_t>()),
                        steps.value_or(SmallVector<int64_t>()), node.shape);
    } else if (op == "CumSum") {
      std::optional<SmallVector<int64_t>> axis = constInts(n.input(1));
      if (!axis || axis->size() != 1 || !isa<IntegerType>(node.type) ||
          node.type.isInteger(1))
        return std::nullopt;
      out = cumSumValues(data->first, data->second, (*axis)[0],
                         attrInt(n, "exclusive").value_or(0) != 0,
                         attrInt(n, "reverse").value_or(0) != 0,
                         node.type.getIntOrFloatBitWidth(), node.shape);
    } else {
      auto indices = operand(1);
      if (!indices || attrInt(n, "batch_dims").value_or(0) != 0 ||
          !isa<IntegerType>(getElementTypeOrSelf(lookup(n.input(1)).getType())))
        return std::nullopt;
      out = gatherNDValues(data->first, data->second, indices->first,
                           indices->second, node.shape);
    }
    if (!out)
      return std::nullopt;
    node.kind = MaskExpr::Kind::Leaf;
    node.values = std::make_shared<const std::vector<double>>(std::move(*out));
    expr.nodes.push_back(std::move(node));
    return expr.nodes.size() - 1;
  }

  /// ONNX Slice (opset 10+) of `in`, if its result has shape `want`.
  static std::optional<std::vector<double>>
  sliceValues(ArrayRef<double> in, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
              ArrayRef<int64_t> axes, ArrayRef<int64_t> steps,
              ArrayRef<int64_t> want) {
    const int64_t rank = shape.size();
    if (starts.size() != ends.size() ||
        (!axes.empty() && axes.size() != starts.size()) ||
        (!steps.empty() && steps.size() != starts.size()))
      return std::nullopt;
    SmallVector<int64_t> first(rank, 0), step(rank, 1), size(shape);
    SmallVector<bool> seen(rank, false);
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t axis = axes.empty() ? int64_t(i) : axes[i];
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || seen[axis])
        return std::nullopt;
      seen[axis] = true;
      const int64_t dim = shape[axis], st = steps.empty() ? 1 : steps[i];
      if (st == 0 || st == std::numeric_limits<int64_t>::min())
        return std::nullopt;
      int64_t b = starts[i], e = ends[i], len = 0;
      if (b < 0)
        b += dim;
      if (e < 0)
        e += dim;
      if (dim > 0 && st > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        len = e > b ? (e - b + st - 1) / st : 0;
      } else if (dim > 0) {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        len = b > e ? (b - e - st - 1) / -st : 0;
      }
      first[axis] = b;
      step[axis] = st;
      size[axis] = len;
    }
    if (ArrayRef<int64_t>(size) != want)
      return std::nullopt;
    std::vector<double> out(numElementsSat(want));
    SmallVector<int64_t> idx(rank, 0);
    for (double &x : out) {
      int64_t lin = 0;
      for (int64_t d = 0; d < rank; ++d)
        lin = lin * shape[d] + first[d] + idx[d] * step[d];
      x = in[lin];
      for (int64_t d = rank - 1; d >= 0 && ++idx[d] == size[d]; --d)
        idx[d] = 0;
    }
    return out;
  }

  /// ONNX CumSum of integers of `width` bits; fails where a sum leaves the
  /// type (or the doubles' exact range).
  static std::optional<std::vector<double>>
  cumSumValues(ArrayRef<double> in, ArrayRef<int64_t> shape, int64_t axis,
               bool exclusive, bool reverse, unsigned width,
               ArrayRef<int64_t> want) {
    const int64_t rank = shape.size();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || shape != want)
      return std::nullopt;
    const double limit = std::min(0x1p53, std::ldexp(1.0, int(width) - 1));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= shape[d];
    const int64_t len = shape[axis];
    std::vector<double> out(in.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < len; ++k) {
          const int64_t at =
              (o * len + (reverse ? len - 1 - k : k)) * inner + i;
          if (exclusive)
            out[at] = acc;
          acc += in[at];
          if (acc >= limit || acc < -limit)
            return std::nullopt;
          if (!exclusive)
            out[at] = acc;
        }
      }
    return out;
  }

  /// ONNX GatherND with batch_dims 0; fails on an index out of range.
  static std::optional<std::vector<double>>
  gatherNDValues(ArrayRef<double> data, ArrayRef<int64_t> shape,
                 ArrayRef<double> indices, ArrayRef<int64_t> indexShape,
                 ArrayRef<int64_t> want) {
    if (indexShape.empty())
      return std::nullopt;
    const int64_t k = indexShape.back();
    if (k < 1 || k > int64_t(shape.size()))
      return std::nullopt;
    SmallVector<int64_t> outShape(indexShape.drop_back());
    llvm::append_range(outShape, shape.drop_front(k));
    if (ArrayRef<int64_t>(outShape) != want)
      return std::nullopt;
    const int64_t inner = numElementsSat(shape.drop_front(k));
    const int64_t tuples = numElementsSat(indexShape.drop_back());
    std::vector<double> out;
    out.reserve(tuples * inner);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int64_t d = 0; d < k; ++d) {
        double x = indices[t * k + d];
        if (x < 0)
          x += shape[d];
        if (x < 0 || x >= shape[d])
          return std::nullopt;
        offset = offset * shape[d] + int64_t(x);
      }
      out.insert(out.end(), data.begin() + offset * inner,
                 data.begin() + (offset + 1) * inner);
    }
    return out;
  }

  /// Classifies the mask `name` (rank <= 4, broadcast to [.., Sq, Skv]) when
  /// the graph computes it from constants.
  std::optional<MaskKind> classifyMask(StringRef name, int64_t sq,
                                       int64_t skv) const {
    MaskExpr expr;
    std::optional<unsigned> root = buildMask(expr, name, 0);
    if (!root)
      return std::nullopt;
    SmallVector<int64_t> shape = expr.nodes[*root].shape;
    auto type = dyn_cast<FloatType>(expr.nodes[*root].type);
    if (!type || shape.size() > 4)
      return std::nullopt;
    while (shape.size() < 4)
      shape.insert(shape.begin(), 1);
    const int64_t lead = shape[0] * shape[1];
    if (double(lead) * double(sq) * double(skv) > double(kMaxMaskElements))
      return std::nullopt;
    const double lowest =
        APFloat::getLargest(type.getFloatSemantics(), /*Negative=*/true)
            .convertToDouble();
    const size_t rank = expr.nodes[*root].shape.size();
    // Visits every element of the mask broadcast to [lead..., Sq, Skv] in
    // row order; `f(i, j, value)` returns false to stop.
    SmallVector<double> row(shape[3]);
    auto forEach = [&](auto f) {
      for (int64_t b = 0; b < shape[0]; ++b)
        for (int64_t h = 0; h < shape[1]; ++h)
          for (int64_t i = 0; i < sq; ++i) {
            // The mask's own row (its index without the innermost one).
            int64_t full[3] = {b, h, shape[2] == 1 ? 0 : i};
            expr.evalRow(*root, full + 3 - (rank ? rank - 1 : 0), row.data());
            for (int64_t j = 0; j < skv; ++j)
              if (!f(i, j, row[shape[3] == 1 ? 0 : j]))
                return false;
          }
      return true;
    };
    MaskKind kind;
    kind.zero = forEach([](int64_t, int64_t, double x) { return x == 0; });
    if (kind.zero) {
      kind.rowsFinite = true;
      return kind;
    }
    kind.causal = forEach([&](int64_t i, int64_t j, double x) {
      if (j <= i + skv - sq)
        return x == 0;
      return x == lowest || x == -std::numeric_limits<double>::infinity();
    });
    bool rowOk = false;
    kind.rowsFinite = forEach([&](int64_t, int64_t j, double x) {
      if (j == 0)
        rowOk = false;
      rowOk |= x > -std::numeric_limits<double>::infinity() || std::isnan(x);
      return j != skv - 1 || rowOk;
    });
    return kind;
  }

  /// Whether no element of `name` can be -inf, from how the graph computes
  /// it (selections and data movement of finite constants, casts of
  /// integers): an additive mask that cannot make a row all -inf.
  bool neverNegInf(StringRef name, int depth) const {
    Value v = lookup(name);
    if (!v || depth > kMaxMaskDepth)
      return false;
    if (std::optional<ConstReader> r = ConstReader::get(v)) {
      if (r->size() > kMaxMaskElements)
        return false;
      for (int64_t i = 0; i < r->size(); ++i)
        if (r->at(i) == -std::numeric_limits<double>::infinity())
          return false;
      return true;
    }
    const onnx::NodeProto *n = producer(name);
    if (!n || !isDefaultDomain(*n) || n->input_size() < 1)
      return false;
    StringRef op = n->op_type();
    if (op == "Where")
      return n->input_size() == 3 && neverNegInf(n->input(1), depth + 1) &&
             neverNegInf(n->input(2), depth + 1);
    if (isReshapeOp(op) || op == "Identity" || op == "Transpose" ||
        op == "Expand" || op == "Gather" || op == "Slice" ||
        op == "GatherElements")
      return neverNegInf(n->input(0), depth + 1);
    if (op == "Concat")
      return llvm::all_of(n->input(), [&](const std::string &in) {
        return neverNegInf(in, depth + 1);
      });
    if (op == "Max")
      return llvm::any_of(n->input(), [&](const std::string &in) {
        return neverNegInf(in, depth + 1);
      });
    if (op == "Cast") {
      Value in = lookup(n->input(0));
      if (!in)
        return false;
      Type from = Importer::elemOf(in), to = Importer::elemOf(v);
      // Integers fit f32 and bf16; widening keeps finite values finite.
      if (isa<IntegerType>(from))
        return to.isF32() || to.isBF16() || to.isF64();
      return isa<FloatType>(from) && isa<FloatType>(to) &&
             cast<FloatType>(to).getWidth() >= cast<FloatType>(from).getWidth() &&
             !(from.isBF16() && to.isF16()) &&
             neverNegInf(n->input(0), depth + 1);
    }
    return false;
  }

  //===--- The chain ----------------------------------------------------------===//

  bool fuse(NodeContext &nc) {
    const onnx::NodeProto &pv = nc.node;
    if (pv.op_type() != "MatMul" || pv.input_size() != 2 ||
        pv.output_size() != 1)
      return false;

    // Probabilities: Softmax, or Where(IsNaN(softmax), 0, softmax).
    std::string probs = pv.input(0);
    bool guarded = false;
    const onnx::NodeProto *softmax = single(probs, "Softmax");
    if (!softmax) {
      const onnx::NodeProto *where = single(probs, "Where");
      if (!where || where->input_size() != 3)
        return false;
      const onnx::NodeProto *isnan = single(where->input(0), "IsNaN");
      if (!isnan || isnan->input_size() != 1 ||
          isnan->input(0) != where->input(2))
        return false;
      softmax = single(where->input(2), "Softmax", /*count=*/2);
      std::optional<double> zero = scalarConstant(lookup(where->input(1)));
      Value p = lookup(probs), sm = lookup(where->input(2));
      if (!softmax || !zero || *zero != 0 || !p || !sm ||
          p.getType() != sm.getType())
        return false;
      guarded = true;
    }
    if (softmax->input_size() != 1)
      return false;
    Value scores = lookup(softmax->input(0));
    if (!scores)
      return false;
    auto scoresType = dyn_cast<RankedTensorType>(scores.getType());
    const int64_t axis = attrInt(*softmax, "axis").value_or(-1);
    if (!scoresType || scoresType.getRank() != 4 || (axis != -1 && axis != 3))
      return false;
    ArrayRef<int64_t> s = scoresType.getShape();
    const int64_t batch = s[0], hq = s[1], sq = s[2], skv = s[3];
    Type elt = scoresType.getElementType();
    if (!isa<Float32Type, Float16Type, BFloat16Type>(elt))
      return false;

    // Scores: [Add(mask)] over scalar factors over MatMul(q, k^T).
    double scale = 1.0;
    const onnx::NodeProto *qk = nullptr;
    std::string maskName;
    auto findProduct = [&](std::string cur) -> const onnx::NodeProto * {
      double factor = 1.0;
      for (int depth = 0; depth < kMaxChain; ++depth) {
        const onnx::NodeProto *n = producer(cur);
        Value v = lookup(cur);
        if (!n || !v || v.getType() != scoresType || uses.lookup(cur) != 1 ||
            !isDefaultDomain(*n))
          return nullptr;
        if (n->op_type() == "MatMul") {
          scale = factor;
          return n->input_size() == 2 ? n : nullptr;
        }
        if ((n->op_type() != "Mul" && n->op_type() != "Div") ||
            n->input_size() != 2)
          return nullptr;
        // A scalar factor: the other operand is a constant with one value
        // (that does not broadcast the scores).
        std::optional<double> c;
        int data = -1;
        for (int i : {1, 0}) {
          if (n->op_type() == "Div" && i == 0)
            break;
          Value in = lookup(n->input(i)), other = lookup(n->input(1 - i));
          if (in && other && other.getType() == scoresType &&
              (c = scalarConstant(in))) {
            data = 1 - i;
            break;
          }
        }
        if (data < 0 || (n->op_type() == "Div" && *c == 0))
          return nullptr;
        factor *= n->op_type() == "Mul" ? *c : 1.0 / *c;
        cur = n->input(data);
      }
      return nullptr;
    };
    if (const onnx::NodeProto *add = single(softmax->input(0), "Add")) {
      if (add->input_size() != 2)
        return false;
      for (int side : {0, 1}) {
        Value maskV = lookup(add->input(1 - side));
        if (!maskV || Importer::elemOf(maskV) != elt ||
            Importer::shapeOf(maskV).size() > 4)
          continue;
        if ((qk = findProduct(add->input(side)))) {
          maskName = add->input(1 - side);
          break;
        }
      }
    } else {
      qk = findProduct(softmax->input(0));
    }
    if (!qk)
      return false;

    // Operands.
    std::optional<Chain> qChain = walk(qk->input(0));
    std::optional<Chain> kChain = walk(qk->input(1));
    std::optional<Chain> vChain = walk(pv.input(1));
    if (!qChain || !kChain || !vChain)
      return false;
    Value qOperand = lookup(qk->input(0)), vOperand = lookup(pv.input(1));
    ArrayRef<int64_t> qs = Importer::shapeOf(qOperand);
    if (qs.size() != 4 || qs[0] != batch || qs[1] != hq || qs[2] != sq)
      return false;
    const int64_t d = qs[3];
    // A 1-D value operand would drop a dimension of the result.
    ArrayRef<int64_t> vs = Importer::shapeOf(vOperand);
    if (vs.size() < 2 || vs.size() > 4)
      return false;
    const int64_t dv = vs.back();
    std::optional<Layout> kt =
        broadcastLayout(kChain->layout, {batch, hq, d, skv});
    std::optional<Layout> vl =
        broadcastLayout(vChain->layout, {batch, hq, skv, dv});
    if (!kt || !vl)
      return false;
    auto kHeads = splitHeads(*transposeLayout(*kt, {0, 1, 3, 2}));
    auto vHeads = splitHeads(*vl);
    if (!kHeads || !vHeads || kHeads->second != vHeads->second)
      return false;
    const int64_t group = kHeads->second, hkv = hq / group;
    auto kvLayout = [&](const Layout &l, const Group &heads, int64_t last) {
      Layout r;
      r.shape = {batch, hkv, skv, last};
      r.dims = {l.dims[0], heads, l.dims[2], l.dims[3]};
      return r;
    };
    Layout kTarget = kvLayout(*transposeLayout(*kt, {0, 1, 3, 2}),
                              kHeads->first, d);
    Layout vTarget = kvLayout(*vl, vHeads->first, dv);
    Layout qTarget = qChain->layout;
    Location loc = nc.loc;
    if (failed(materialize(*qChain, qTarget, loc, false)) ||
        failed(materialize(*kChain, kTarget, loc, false)) ||
        failed(materialize(*vChain, vTarget, loc, false)))
      return false;
    // A factor on the values scales the output, not the scores.
    if (vChain->factor != 1.0)
      return false;
    scale *= qChain->factor * kChain->factor;
    const float scale32 = static_cast<float>(scale);
    if (!std::isfinite(scale32))
      return false;
    Type qElt = Importer::elemOf(qChain->source);
    if (Importer::elemOf(kChain->source) != qElt ||
        Importer::elemOf(vChain->source) != qElt || qElt != elt)
      return false;

    // The mask: dropped when zero, `causal` when it is the causal pattern
    // (and no row is entirely masked, which the pattern and the op would
    // treat differently), else an operand. Without the IsNaN guard a row of
    // -inf gives NaN in ONNX but 0 in the op: such masks stay unfused.
    bool causal = false;
    Value mask;
    if (!maskName.empty()) {
      auto key = std::make_tuple(lookup(maskName).getAsOpaquePointer(), sq, skv);
      auto cached = maskKinds.find(key);
      if (cached == maskKinds.end())
        cached = maskKinds.emplace(key, classifyMask(maskName, sq, skv)).first;
      std::optional<MaskKind> kind = cached->second;
      if (kind && kind->zero) {
        // nothing to add
      } else if (kind && kind->causal && sq <= skv) {
        causal = true;
      } else {
        if (!guarded && !(kind ? kind->rowsFinite : neverNegInf(maskName, 0)))
          return false;
        mask = lookup(maskName);
      }
    }

    // Build.
    FailureOr<Value> q = materialize(*qChain, qTarget, loc, true);
    FailureOr<Value> k = materialize(*kChain, kTarget, loc, true);
    FailureOr<Value> v = materialize(*vChain, vTarget, loc, true);
    if (failed(q) || failed(k) || failed(v))
      return false;
    if (mask) {
      SmallVector<int64_t> shape(Importer::shapeOf(mask));
      while (shape.size() < 4)
        shape.insert(shape.begin(), 1);
      mask = imp.reshape(loc, mask, shape);
    }
    auto resultType = RankedTensorType::get({batch, hq, sq, dv}, elt);
    OpBuilder &b = imp.b;
    Value out = AttentionOp::create(b, loc, resultType, *q, *k, *v, mask,
                                    /*query_scale=*/Value(),
                                    /*key_scale=*/Value(),
                                    /*value_scale=*/Value(),
                                    /*scale_layout=*/ScaleLayoutAttr(),
                                    b.getF32FloatAttr(scale32),
                                    causal ? b.getUnitAttr() : UnitAttr());
    nc.results.push_back(out);
    return true;
  }
};

AttentionFusion::AttentionFusion(Importer &imp, const onnx::GraphProto &graph,
                                 const llvm::StringMap<Value> &values)
    : impl(std::make_unique<Impl>(imp, graph, values)) {}

AttentionFusion::~AttentionFusion() = default;

bool AttentionFusion::fuse(NodeContext &nc) { return impl->fuse(nc); }
