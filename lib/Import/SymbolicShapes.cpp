//===- SymbolicShapes.cpp - Dynamic dimensions as symbols -----------------===//
//
// Part of fp8-opt. SymExpr, the polynomials the importer computes sizes
// with, and ShapeSymbols, the table of one import's dynamic-dimension
// symbols (SymbolicShapes.h).
//
//===----------------------------------------------------------------------===//

#include "SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::fp8::onnx_import;

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t saturate(__int128 v) {
  return v > kMax ? kMax : v < kMin ? kMin : int64_t(v);
}
int64_t satAdd(int64_t a, int64_t b) { return saturate(__int128(a) + b); }
int64_t satMul(int64_t a, int64_t b) { return saturate(__int128(a) * b); }

/// Whether the sorted multiset `part` is contained in the sorted `whole`;
/// `rest` gets what remains.
bool containsMonomial(ArrayRef<unsigned> whole, ArrayRef<unsigned> part,
                      SmallVectorImpl<unsigned> &rest) {
  rest.clear();
  size_t j = 0;
  for (unsigned s : whole) {
    if (j < part.size() && part[j] == s) {
      ++j;
      continue;
    }
    rest.push_back(s);
  }
  return j == part.size();
}
} // namespace

//===----------------------------------------------------------------------===//
// SymExpr
//===----------------------------------------------------------------------===//

SymExpr::SymExpr(int64_t constant) {
  if (constant != 0)
    termList.push_back({{}, constant});
}

SymExpr SymExpr::symbol(unsigned id) {
  SymExpr e;
  e.termList.push_back({{id}, 1});
  return e;
}

SymExpr SymExpr::invalid() {
  SymExpr e;
  e.valid = false;
  return e;
}

std::optional<int64_t> SymExpr::getConstant() const {
  if (!valid)
    return std::nullopt;
  if (termList.empty())
    return 0;
  if (termList.size() == 1 && termList[0].symbols.empty())
    return termList[0].coef;
  return std::nullopt;
}

std::optional<unsigned> SymExpr::getSymbol() const {
  if (valid && termList.size() == 1 && termList[0].coef == 1 &&
      termList[0].symbols.size() == 1)
    return termList[0].symbols[0];
  return std::nullopt;
}

void SymExpr::normalize() {
  llvm::stable_sort(termList, [](const Term &a, const Term &b) {
    return a.symbols < b.symbols;
  });
  SmallVector<Term, 1> merged;
  for (Term &t : termList) {
    if (!merged.empty() && merged.back().symbols == t.symbols) {
      if (__builtin_add_overflow(merged.back().coef, t.coef,
                                 &merged.back().coef))
        valid = false;
      continue;
    }
    merged.push_back(std::move(t));
  }
  llvm::erase_if(merged, [](const Term &t) { return t.coef == 0; });
  termList = std::move(merged);
  if (!valid)
    termList.clear();
}

SymExpr SymExpr::operator+(const SymExpr &o) const {
  if (!valid || !o.valid)
    return invalid();
  SymExpr r = *this;
  llvm::append_range(r.termList, o.termList);
  r.normalize();
  return r;
}

SymExpr SymExpr::operator-() const {
  if (!valid)
    return invalid();
  SymExpr r = *this;
  for (Term &t : r.termList)
    if (__builtin_sub_overflow(int64_t(0), t.coef, &t.coef))
      return invalid();
  return r;
}

SymExpr SymExpr::operator-(const SymExpr &o) const { return *this + (-o); }

SymExpr SymExpr::operator*(const SymExpr &o) const {
  if (!valid || !o.valid)
    return invalid();
  SymExpr r;
  for (const Term &a : termList)
    for (const Term &b : o.termList) {
      Term t;
      std::merge(a.symbols.begin(), a.symbols.end(), b.symbols.begin(),
                 b.symbols.end(), std::back_inserter(t.symbols));
      if (__builtin_mul_overflow(a.coef, b.coef, &t.coef))
        return invalid();
      r.termList.push_back(std::move(t));
    }
  r.normalize();
  return r;
}

std::optional<SymExpr> SymExpr::divExact(const SymExpr &d) const {
  if (!valid || !d.valid || d.termList.empty())
    return std::nullopt;
  if (d.termList.size() == 1) {
    const Term &dt = d.termList[0];
    // Dividing by -1 or 1 is always exact; INT64_MIN / -1 is not.
    SymExpr q;
    for (const Term &t : termList) {
      Term qt;
      if (!containsMonomial(t.symbols, dt.symbols, qt.symbols) ||
          (dt.coef == -1 && t.coef == kMin) || t.coef % dt.coef != 0)
        return std::nullopt;
      qt.coef = t.coef / dt.coef;
      q.termList.push_back(std::move(qt));
    }
    q.normalize();
    return q;
  }
  // A polynomial divides another here only as a constant multiple of it.
  if (termList.size() != d.termList.size() ||
      termList[0].symbols != d.termList[0].symbols ||
      termList[0].coef % d.termList[0].coef != 0)
    return std::nullopt;
  SymExpr k(termList[0].coef / d.termList[0].coef);
  if (k * d != *this)
    return std::nullopt;
  return k;
}

bool SymExpr::operator==(const SymExpr &o) const {
  if (!valid || !o.valid || termList.size() != o.termList.size())
    return false;
  for (auto [a, b] : llvm::zip_equal(termList, o.termList))
    if (a.coef != b.coef || a.symbols != b.symbols)
      return false;
  return true;
}

SymExpr SymExpr::substitute(function_ref<SymExpr(unsigned)> f) const {
  if (!valid)
    return invalid();
  SymExpr r;
  for (const Term &t : termList) {
    SymExpr term(t.coef);
    for (unsigned s : t.symbols)
      term = term * f(s);
    r = r + term;
  }
  return r;
}

int64_t SymExpr::evaluate(function_ref<int64_t(unsigned)> value) const {
  uint64_t sum = 0; // wrapping arithmetic, no undefined behaviour
  for (const Term &t : termList) {
    uint64_t p = uint64_t(t.coef);
    for (unsigned s : t.symbols)
      p *= uint64_t(value(s));
    sum += p;
  }
  return int64_t(sum);
}

void SymExpr::print(raw_ostream &os,
                    function_ref<void(raw_ostream &, unsigned)> name) const {
  if (!valid) {
    os << "<invalid>";
    return;
  }
  if (termList.empty()) {
    os << 0;
    return;
  }
  for (auto [i, t] : llvm::enumerate(termList)) {
    if (i)
      os << " + ";
    if (t.symbols.empty()) {
      os << t.coef;
      continue;
    }
    if (t.coef != 1)
      os << t.coef << "*";
    llvm::interleave(
        t.symbols, os, [&](unsigned s) { name(os, s); }, "*");
  }
}

//===----------------------------------------------------------------------===//
// ShapeSymbols
//===----------------------------------------------------------------------===//

unsigned ShapeSymbols::add(StringRef name, int64_t lo, int64_t hi,
                           std::string origin, Value size) {
  Symbol s;
  s.name = name.str();
  s.lo = lo;
  s.hi = hi;
  s.origin = std::move(origin);
  s.size = size;
  s.parent = symbols.size();
  symbols.push_back(std::move(s));
  return symbols.size() - 1;
}

unsigned ShapeSymbols::representative(unsigned id) const {
  while (symbols[id].parent != id)
    id = symbols[id].parent;
  return id;
}

SymExpr ShapeSymbols::canonical(const SymExpr &e) const {
  return e.substitute(
      [&](unsigned s) { return SymExpr::symbol(representative(s)); });
}

bool ShapeSymbols::equal(const SymExpr &a, const SymExpr &b) const {
  return canonical(a) == canonical(b);
}

bool ShapeSymbols::unify(const SymExpr &a, const SymExpr &b,
                         std::string &why) {
  SymExpr ca = canonical(a), cb = canonical(b);
  if (ca == cb)
    return true;
  std::optional<unsigned> x = ca.getSymbol(), y = cb.getSymbol();
  // Sizes that differ by two symbols only (s70 + s15 and s70 + s89): those
  // symbols are equal.
  SymExpr d = ca - cb;
  if ((!x || !y) && d.isValid() && d.terms().size() == 2 &&
      d.terms()[0].symbols.size() == 1 && d.terms()[1].symbols.size() == 1 &&
      d.terms()[0].coef == -d.terms()[1].coef &&
      (d.terms()[0].coef == 1 || d.terms()[0].coef == -1)) {
    x = d.terms()[0].symbols[0];
    y = d.terms()[1].symbols[0];
  }
  if (!x || !y) {
    why = str(ca) + " and " + str(cb) + " differ";
    if (ca.isConstant() != cb.isConstant())
      why += " (a dynamic dimension cannot meet a static one other than 1; "
             "give it a static size with --dim or --input-shape)";
    return false;
  }
  unsigned keep = std::min(*x, *y), drop = std::max(*x, *y);
  int64_t lo = std::max(symbols[keep].lo, symbols[drop].lo);
  int64_t hi = std::min(symbols[keep].hi, symbols[drop].hi);
  if (lo > hi) {
    why = "'" + symbols[keep].name + "' (" + std::to_string(symbols[keep].lo) +
          ".." + std::to_string(symbols[keep].hi) + ") and '" +
          symbols[drop].name + "' (" + std::to_string(symbols[drop].lo) +
          ".." + std::to_string(symbols[drop].hi) +
          ") must be equal but their bounds do not meet";
    return false;
  }
  symbols[keep].lo = lo;
  symbols[keep].hi = hi;
  symbols[drop].parent = keep;
  return true;
}

std::pair<int64_t, int64_t> ShapeSymbols::range(const SymExpr &e) const {
  SymExpr c = canonical(e);
  if (!c.isValid())
    return {kMin, kMax};
  int64_t lo = 0, hi = 0;
  for (const SymExpr::Term &t : c.terms()) {
    // Symbols are sizes (lo >= 0), so a monomial is monotone in each.
    int64_t mlo = 1, mhi = 1;
    for (unsigned s : t.symbols) {
      mlo = satMul(mlo, symbols[s].lo);
      mhi = satMul(mhi, symbols[s].hi);
    }
    int64_t a = satMul(t.coef, mlo), b = satMul(t.coef, mhi);
    lo = satAdd(lo, std::min(a, b));
    hi = satAdd(hi, std::max(a, b));
  }
  return {lo, hi};
}

bool ShapeSymbols::provablyNonNegative(const SymExpr &e) const {
  return e.isValid() && range(e).first >= 0;
}

bool ShapeSymbols::provablyPositive(const SymExpr &e) const {
  return e.isValid() && range(e).first > 0;
}

std::string ShapeSymbols::str(const SymExpr &e) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  canonical(e).print(os,
                     [&](raw_ostream &o, unsigned id) { o << symbols[id].name; });
  return s;
}

std::string ShapeSymbols::abiStr(const SymExpr &e,
                                 ArrayRef<unsigned> order) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  SymExpr c = canonical(e);
  bool first = true;
  if (c.terms().empty())
    os << 0;
  // No spaces: a dimension is one token of the signature text.
  for (const SymExpr::Term &t : c.terms()) {
    if (!first)
      os << "+";
    first = false;
    bool factor = t.coef != 1 || t.symbols.empty();
    if (factor)
      os << t.coef;
    for (unsigned sym : t.symbols) {
      os << (factor ? "*s" : "s") << (llvm::find(order, sym) - order.begin());
      factor = true;
    }
  }
  return s;
}

Value ShapeSymbols::materialize(OpBuilder &b, Location loc,
                                const SymExpr &e) const {
  SymExpr c = canonical(e);
  Value sum;
  for (const SymExpr::Term &t : c.terms()) {
    Value term;
    for (unsigned s : t.symbols)
      term = term ? Value(arith::MulIOp::create(b, loc, term, symbols[s].size))
                  : symbols[s].size;
    if (!term || t.coef != 1) {
      Value k = arith::ConstantIndexOp::create(b, loc, t.coef);
      term = term ? Value(arith::MulIOp::create(b, loc, term, k)) : k;
    }
    sum = sum ? Value(arith::AddIOp::create(b, loc, sum, term)) : term;
  }
  return sum ? sum : Value(arith::ConstantIndexOp::create(b, loc, 0));
}
