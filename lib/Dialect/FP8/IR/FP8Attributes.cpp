//===- FP8Attributes.cpp - FP8 recipe and scale-layout attributes ---------===//
//
// Part of fp8-opt. The recipe attributes use hand-written key = value
// syntax so that every parameter is optional and printed only when it
// differs from its default (`#fp8.current`, `#fp8.block<pow2 = false>`).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

#include "fp8/Dialect/FP8/IR/FP8AttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Attributes.cpp.inc"

void FP8Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fp8/Dialect/FP8/IR/FP8Attributes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Parsing helpers
//===----------------------------------------------------------------------===//

namespace {
/// Parses `<` key `=` value (`,` key `=` value)* `>` where the whole list is
/// optional; `parseValue(key)` parses the value of a known key and fails
/// (with a diagnostic) on an unknown one.
ParseResult
parseKeyValueList(AsmParser &parser,
                  llvm::function_ref<ParseResult(StringRef)> parseValue) {
  if (failed(parser.parseOptionalLess()))
    return success();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  llvm::StringSet<> seen; // NOLINT
  do {
    StringRef key;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(loc) << "duplicate parameter '" << key << "'";
    if (parseValue(key))
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseGreater();
}

ParseResult unknownKey(AsmParser &parser, StringRef attr, StringRef key,
                       StringRef expected) {
  return parser.emitError(parser.getCurrentLocation())
         << "unknown parameter '" << key << "' in #fp8." << attr
         << " (expected " << expected << ")";
}

ParseResult parseBool(AsmParser &parser, bool &value) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word))
    return failure();
  if (word != "true" && word != "false")
    return parser.emitError(loc) << "expected 'true' or 'false'";
  value = word == "true";
  return success();
}

ParseResult parseFloatValue(AsmParser &parser, llvm::APFloat &value) {
  double d;
  if (parser.parseFloat(d))
    return failure();
  value = llvm::APFloat(static_cast<float>(d));
  return success();
}

ParseResult parseShape(AsmParser &parser, SmallVector<int64_t> &shape) {
  return parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                   /*withTrailingX=*/false);
}

template <typename EnumT>
ParseResult parseEnum(AsmParser &parser, EnumT &value,
                      std::optional<EnumT> (*symbolize)(StringRef),
                      StringRef what) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<EnumT> parsed = symbolize(word);
  if (!parsed)
    return parser.emitError(loc) << "unknown " << what << " '" << word << "'";
  value = *parsed;
  return success();
}

/// Prints `<k = v, ...>` for the non-default entries only.
class KeyValuePrinter {
public:
  explicit KeyValuePrinter(AsmPrinter &printer) : printer(printer) {}
  ~KeyValuePrinter() {
    if (!first)
      printer << ">";
  }
  raw_ostream &entry(StringRef key) {
    printer << (first ? "<" : ", ") << key << " = ";
    first = false;
    return printer.getStream();
  }
  AsmPrinter &asmPrinter() { return printer; }

private:
  AsmPrinter &printer;
  bool first = true;
};

void printShape(raw_ostream &os, ArrayRef<int64_t> shape) {
  llvm::interleave(shape, os, "x");
}

bool isZero(const llvm::APFloat &v) { return v.isZero() && !v.isNegative(); }

LogicalResult verifyEps(function_ref<InFlightDiagnostic()> emitError,
                        const llvm::APFloat &eps) {
  if (!eps.isFinite() || eps.isNegative())
    return emitError() << "eps must be finite and non-negative";
  return success();
}

LogicalResult verifyBlockShape(function_ref<InFlightDiagnostic()> emitError,
                               StringRef what, ArrayRef<int64_t> block) {
  if (block.empty() || block.size() > 2)
    return emitError() << what << " block shape must have 1 or 2 dimensions";
  for (int64_t b : block)
    if (b < 1 || b > kMaxBlockSize)
      return emitError() << what << " block sizes must be in [1, "
                         << kMaxBlockSize << "]";
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// DelayedScalingAttr
//===----------------------------------------------------------------------===//

Attribute DelayedScalingAttr::parse(AsmParser &parser, Type) {
  int64_t history = 1024, margin = 0;
  AmaxAlgo algo = AmaxAlgo::Max;
  bool pow2 = false;
  auto result = parseKeyValueList(parser, [&](StringRef key) -> ParseResult {
    if (key == "history")
      return parser.parseInteger(history);
    if (key == "margin")
      return parser.parseInteger(margin);
    if (key == "algo")
      return parseEnum(parser, algo, symbolizeAmaxAlgo, "amax algorithm");
    if (key == "pow2")
      return parseBool(parser, pow2);
    return unknownKey(parser, "delayed", key, "history, algo, margin, pow2");
  });
  if (failed(result))
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), history, algo, margin, pow2);
}

void DelayedScalingAttr::print(AsmPrinter &printer) const {
  KeyValuePrinter kv(printer);
  if (getHistory() != 1024)
    kv.entry("history") << getHistory();
  if (getAlgo() != AmaxAlgo::Max)
    kv.entry("algo") << stringifyAmaxAlgo(getAlgo());
  if (getMargin() != 0)
    kv.entry("margin") << getMargin();
  if (getPow2())
    kv.entry("pow2") << "true";
}

LogicalResult
DelayedScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t history, AmaxAlgo, int64_t margin, bool) {
  if (history < 1 || history > (1 << 20))
    return emitError() << "amax history length must be in [1, 1048576], got "
                       << history;
  if (margin < 0 || margin > 64)
    return emitError() << "margin must be in [0, 64], got " << margin;
  return success();
}

bool DelayedScalingAttr::usesHistory() const { return true; }
bool DelayedScalingAttr::usesE8M0Scales() const { return false; }
bool DelayedScalingAttr::usesPowerOfTwoScales() const { return getPow2(); }
StringRef DelayedScalingAttr::getRecipeName() const { return "delayed"; }

//===----------------------------------------------------------------------===//
// CurrentScalingAttr
//===----------------------------------------------------------------------===//

Attribute CurrentScalingAttr::parse(AsmParser &parser, Type) {
  llvm::APFloat eps(0.0f);
  bool pow2 = false;
  auto result = parseKeyValueList(parser, [&](StringRef key) -> ParseResult {
    if (key == "eps")
      return parseFloatValue(parser, eps);
    if (key == "pow2")
      return parseBool(parser, pow2);
    return unknownKey(parser, "current", key, "eps, pow2");
  });
  if (failed(result))
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), eps, pow2);
}

void CurrentScalingAttr::print(AsmPrinter &printer) const {
  KeyValuePrinter kv(printer);
  if (!isZero(getEps())) {
    kv.entry("eps");
    printer.printFloat(getEps());
  }
  if (getPow2())
    kv.entry("pow2") << "true";
}

LogicalResult
CurrentScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           llvm::APFloat eps, bool) {
  return verifyEps(emitError, eps);
}

bool CurrentScalingAttr::usesHistory() const { return false; }
bool CurrentScalingAttr::usesE8M0Scales() const { return false; }
bool CurrentScalingAttr::usesPowerOfTwoScales() const { return getPow2(); }
StringRef CurrentScalingAttr::getRecipeName() const { return "current"; }

//===----------------------------------------------------------------------===//
// BlockScalingAttr
//===----------------------------------------------------------------------===//

Attribute BlockScalingAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> act = {1, 128}, weight = {128, 128};
  bool pow2 = true;
  llvm::APFloat eps(0.0f);
  auto result = parseKeyValueList(parser, [&](StringRef key) -> ParseResult {
    if (key == "act") {
      act.clear();
      return parseShape(parser, act);
    }
    if (key == "weight") {
      weight.clear();
      return parseShape(parser, weight);
    }
    if (key == "pow2")
      return parseBool(parser, pow2);
    if (key == "eps")
      return parseFloatValue(parser, eps);
    return unknownKey(parser, "block", key, "act, weight, pow2, eps");
  });
  if (failed(result))
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), act, weight, pow2, eps);
}

void BlockScalingAttr::print(AsmPrinter &printer) const {
  KeyValuePrinter kv(printer);
  if (getAct() != ArrayRef<int64_t>{1, 128})
    printShape(kv.entry("act"), getAct());
  if (getWeight() != ArrayRef<int64_t>{128, 128})
    printShape(kv.entry("weight"), getWeight());
  if (!getPow2())
    kv.entry("pow2") << "false";
  if (!isZero(getEps())) {
    kv.entry("eps");
    printer.printFloat(getEps());
  }
}

LogicalResult
BlockScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> act, ArrayRef<int64_t> weight,
                         bool, llvm::APFloat eps) {
  if (failed(verifyBlockShape(emitError, "activation", act)) ||
      failed(verifyBlockShape(emitError, "weight", weight)))
    return failure();
  return verifyEps(emitError, eps);
}

bool BlockScalingAttr::usesHistory() const { return false; }
bool BlockScalingAttr::usesE8M0Scales() const { return false; }
bool BlockScalingAttr::usesPowerOfTwoScales() const { return getPow2(); }
StringRef BlockScalingAttr::getRecipeName() const { return "block"; }

//===----------------------------------------------------------------------===//
// MXScalingAttr
//===----------------------------------------------------------------------===//

Attribute MXScalingAttr::parse(AsmParser &parser, Type) {
  E8M0Rounding rounding = E8M0Rounding::RCeil;
  auto result = parseKeyValueList(parser, [&](StringRef key) -> ParseResult {
    if (key == "rounding")
      return parseEnum(parser, rounding, symbolizeE8M0Rounding,
                       "E8M0 rounding mode");
    return unknownKey(parser, "mxfp8", key, "rounding");
  });
  if (failed(result))
    return {};
  return get(parser.getContext(), rounding);
}

void MXScalingAttr::print(AsmPrinter &printer) const {
  KeyValuePrinter kv(printer);
  if (getRounding() != E8M0Rounding::RCeil)
    kv.entry("rounding") << stringifyE8M0Rounding(getRounding());
}

bool MXScalingAttr::usesHistory() const { return false; }
bool MXScalingAttr::usesE8M0Scales() const { return true; }
bool MXScalingAttr::usesPowerOfTwoScales() const { return true; }
StringRef MXScalingAttr::getRecipeName() const { return "mxfp8"; }

//===----------------------------------------------------------------------===//
// ScaleLayoutAttr
//===----------------------------------------------------------------------===//

Attribute ScaleLayoutAttr::parse(AsmParser &parser, Type) {
  Granularity granularity = Granularity::Tensor;
  SmallVector<int64_t> block;
  if (parser.parseLess() ||
      parseEnum(parser, granularity, symbolizeGranularity,
                "scale granularity (expected tensor, row, col or block)"))
    return {};
  if (granularity == Granularity::Block && parseShape(parser, block))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), granularity, block);
}

void ScaleLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyGranularity(getGranularity());
  if (getGranularity() == Granularity::Block) {
    printer << " ";
    printShape(printer.getStream(), getBlock());
  }
  printer << ">";
}

LogicalResult
ScaleLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        Granularity granularity, ArrayRef<int64_t> block) {
  if (granularity != Granularity::Block) {
    if (!block.empty())
      return emitError() << "only block layouts take a block shape";
    return success();
  }
  if (block.empty())
    return emitError() << "a block layout needs a block shape";
  for (int64_t b : block)
    if (b < 1 || b > kMaxBlockSize)
      return emitError() << "block sizes must be in [1, " << kMaxBlockSize
                         << "]";
  return success();
}

FailureOr<SmallVector<int64_t>>
ScaleLayoutAttr::getExpandedBlock(ArrayRef<int64_t> shape) const {
  const int64_t rank = shape.size();
  SmallVector<int64_t> expanded(rank, 1);
  switch (getGranularity()) {
  case Granularity::Tensor:
    return SmallVector<int64_t>(shape);
  case Granularity::Row:
    if (rank < 1)
      return failure();
    expanded[rank - 1] = shape[rank - 1];
    return expanded;
  case Granularity::Col:
    if (rank < 2)
      return failure();
    expanded[rank - 2] = shape[rank - 2];
    return expanded;
  case Granularity::Block: {
    ArrayRef<int64_t> block = getBlock();
    if (static_cast<int64_t>(block.size()) > rank)
      return failure();
    llvm::copy(block, expanded.end() - block.size());
    return expanded;
  }
  }
  llvm_unreachable("unknown granularity");
}

FailureOr<SmallVector<int64_t>>
ScaleLayoutAttr::getScaleShape(ArrayRef<int64_t> shape) const {
  if (getGranularity() == Granularity::Tensor)
    return SmallVector<int64_t>{};
  FailureOr<SmallVector<int64_t>> block = getExpandedBlock(shape);
  if (failed(block))
    return failure();
  SmallVector<int64_t> scale;
  for (auto [d, b] : llvm::zip_equal(shape, *block)) {
    if (ShapedType::isDynamic(d))
      scale.push_back(b == 1 ? d : ShapedType::kDynamic);
    else if (ShapedType::isDynamic(b))
      scale.push_back(1);
    else
      scale.push_back(llvm::divideCeil(d, b));
  }
  return scale;
}

std::string mlir::fp8::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (std::string n = getNodeName(l); !n.empty())
        return n;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getNodeName(callSite.getCallee());
  return "";
}

std::string mlir::fp8::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar (rank 0)";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

LogicalResult ScaleLayoutAttr::verifyScaleType(
    function_ref<InFlightDiagnostic()> emitError, ShapedType dataType,
    ShapedType scaleType) const {
  FailureOr<SmallVector<int64_t>> expected =
      getScaleShape(dataType.getShape());
  if (failed(expected))
    return emitError() << "scale layout " << *this
                       << " does not fit data of rank " << dataType.getRank();
  ArrayRef<int64_t> actual = scaleType.getShape();
  bool ok = actual.size() == expected->size();
  for (size_t i = 0; ok && i < actual.size(); ++i)
    ok = ShapedType::isDynamic(actual[i]) ||
         ShapedType::isDynamic((*expected)[i]) || actual[i] == (*expected)[i];
  if (!ok)
    return emitError() << "scale shape " << formatShape(actual)
                       << " does not match layout " << *this << " for data "
                       << formatShape(dataType.getShape()) << ": expected "
                       << formatShape(*expected);
  return success();
}
