//===- SymbolicShapes.h - Dynamic dimensions as symbols ---------*- C++ -*-===//
//
// Part of fp8-opt. The importer's view of dynamic dimensions (issue 14):
// every dynamic dimension of a graph input is a symbol with bounds (a
// `dim_param` of the model, or the input's own dimension), and every size
// the importer computes from them -- a tensor's dimension, an element of a
// shape tensor (Shape, Gather, Concat, ...) -- is a SymExpr: a polynomial
// with integer coefficients over the symbols (`48`, `s0`, `4*s0 + 1`,
// `s2 + s1`, `64*s0*s1`). Not a public header.
//
// Where the graph needs two different symbols to be equal (the operands of
// an element-wise op, the contraction of a MatMul, the pieces of a
// Concat), ShapeSymbols::unify makes one the other's: the model then
// requires them to be equal at run time, which the model library checks
// before it runs (docs/RuntimeABI.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_SYMBOLICSHAPES_H
#define FP8_LIB_IMPORT_SYMBOLICSHAPES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::fp8::onnx_import {

/// A polynomial with int64 coefficients over symbols (their indices in a
/// ShapeSymbols table), kept in a canonical form: terms sorted by their
/// monomials, no zero coefficients, so that equal polynomials compare
/// equal. Arithmetic that overflows int64 leaves an invalid expression
/// (isValid() false), which every comparison treats as unequal.
class SymExpr {
public:
  /// One term: `coef` times the product of `symbols` (sorted, repeated for
  /// powers; empty for the constant term).
  struct Term {
    SmallVector<unsigned, 2> symbols;
    int64_t coef = 0;
  };

  SymExpr() = default;
  SymExpr(int64_t constant);
  static SymExpr symbol(unsigned id);
  static SymExpr invalid();

  bool isValid() const { return valid; }
  std::optional<int64_t> getConstant() const;
  bool isConstant() const { return getConstant().has_value(); }
  /// The symbol when the expression is exactly one symbol.
  std::optional<unsigned> getSymbol() const;
  ArrayRef<Term> terms() const { return termList; }

  SymExpr operator+(const SymExpr &o) const;
  SymExpr operator-(const SymExpr &o) const;
  SymExpr operator-() const;
  SymExpr operator*(const SymExpr &o) const;
  /// `*this / d` when the division is exact as polynomials: `d` a constant
  /// or a single term dividing every term, or `*this` a constant multiple
  /// of `d`; nothing otherwise.
  std::optional<SymExpr> divExact(const SymExpr &d) const;
  bool operator==(const SymExpr &o) const;
  bool operator!=(const SymExpr &o) const { return !(*this == o); }

  /// Every symbol replaced by `f(symbol)`.
  SymExpr substitute(function_ref<SymExpr(unsigned)> f) const;
  /// The value for the symbols' values `values[id]` (int64, wrapping is
  /// the caller's concern: sizes are bounded).
  int64_t evaluate(function_ref<int64_t(unsigned)> value) const;
  /// `2*s0*s1 + s2 + -1`, with `name(os, id)` printing a symbol.
  void print(raw_ostream &os,
             function_ref<void(raw_ostream &, unsigned)> name) const;

private:
  void normalize();
  SmallVector<Term, 1> termList;
  bool valid = true;
};

using SymShape = SmallVector<SymExpr, 4>;

/// The symbols of one import: their names, bounds, the index value that
/// holds each at run time, and which symbols were made equal.
class ShapeSymbols {
public:
  struct Symbol {
    std::string name;
    int64_t lo = 0, hi = 0;
    /// Where it comes from, for messages: "input 'x' dimension 1".
    std::string origin;
    /// The `index` value of its size in the imported function (a tensor.dim
    /// of the input), or null.
    Value size;
    /// The symbol it was made equal to (itself when it is free).
    unsigned parent = 0;
  };

  unsigned add(StringRef name, int64_t lo, int64_t hi, std::string origin,
               Value size);
  size_t size() const { return symbols.size(); }
  bool empty() const { return symbols.empty(); }
  const Symbol &get(unsigned id) const { return symbols[id]; }
  /// The symbol `id` stands for: itself, or the one it was made equal to.
  unsigned representative(unsigned id) const;
  /// Whether `id` is its own representative (a symbol the ABI reports).
  bool isFree(unsigned id) const { return representative(id) == id; }

  /// `e` over representatives only.
  SymExpr canonical(const SymExpr &e) const;
  bool equal(const SymExpr &a, const SymExpr &b) const;
  /// Makes `a` and `b` equal. Equal expressions are; two different single
  /// symbols become one (the later the earlier's, bounds intersected);
  /// anything else fails with `why` saying what differs.
  bool unify(const SymExpr &a, const SymExpr &b, std::string &why);

  /// Bounds of `e` over the symbols' bounds (interval arithmetic, sound but
  /// not always tight), saturated to int64.
  std::pair<int64_t, int64_t> range(const SymExpr &e) const;
  /// Whether `e` >= 0 (resp. > 0, == 0) for every value of the symbols
  /// within their bounds, as far as range() can tell.
  bool provablyNonNegative(const SymExpr &e) const;
  bool provablyPositive(const SymExpr &e) const;

  /// `s10 + s70`: the expression with the symbols' names.
  std::string str(const SymExpr &e) const;
  /// `s0 + s3`: the expression with representatives numbered in the order
  /// of `order` (the ABI's symbol list); every symbol of `e` must be in it.
  std::string abiStr(const SymExpr &e, ArrayRef<unsigned> order) const;

  /// The value of `e` as an `index` at the builder's insertion point
  /// (constants as arith.constant, symbols as their size values).
  Value materialize(OpBuilder &b, Location loc, const SymExpr &e) const;

private:
  SmallVector<Symbol> symbols;
};

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_SYMBOLICSHAPES_H
