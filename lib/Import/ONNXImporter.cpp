//===- ONNXImporter.cpp - ONNX to MLIR importer ---------------------------===//
//
// Part of fp8-opt. The graph walk, initializer decoding and the IR builders
// that the op handlers (ONNXOps.cpp) share. Built without exceptions: the
// protobuf accessors used here do not throw, and the calls that may throw
// live in ONNXProtoIO.cpp.
//
// Every value has a static shape. Values that are small constants stay
// `arith.constant` with a DenseElementsAttr, and the builders below fold
// when all their inputs are such constants; that is what turns the shape
// subgraphs exporters emit (Shape -> Gather -> Concat -> Reshape) into
// static target shapes.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "Importer.h"
#include "ONNXProtoIO.h"
#include "TorchMetadata.h"

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

static constexpr int64_t kFoldLimit = Importer::kFoldLimit;

// ONNX 1.12's onnx.proto predates the FP8 types (ONNX 1.14, IR 9); the
// field is a plain int32, so the values parse and are matched here.
static constexpr int kFLOAT8E4M3FN = 17;
static constexpr int kFLOAT8E4M3FNUZ = 18;
static constexpr int kFLOAT8E5M2 = 19;
static constexpr int kFLOAT8E5M2FNUZ = 20;

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

//===----------------------------------------------------------------------===//
// Options and entry points
//===----------------------------------------------------------------------===//

std::string fp8::parseInputShapeSpec(StringRef spec, ImportOptions &opts) {
  SmallVector<StringRef> entries;
  spec.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [name, dims] = entry.trim().rsplit('=');
    if (name.empty() || dims.empty() || !entry.contains('='))
      return ("malformed --input-shape entry '" + entry +
              "' (expected name=D0xD1x...)")
          .str();
    SmallVector<int64_t> shape;
    // "name=" with a scalar is spelled "name=scalar".
    if (dims != "scalar") {
      SmallVector<StringRef> parts;
      dims.split(parts, 'x');
      for (StringRef part : parts) {
        int64_t d;
        if (part.trim().getAsInteger(10, d) || d < 0)
          return ("malformed dimension '" + part + "' in --input-shape '" +
                  entry + "'")
              .str();
        shape.push_back(d);
      }
    }
    if (!opts.inputShapes.try_emplace(name.trim(), shape).second)
      return ("--input-shape gives '" + name.trim() +
              "' more than once; give each input one shape")
          .str();
  }
  return {};
}

void fp8::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<fp8::FP8Dialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

std::string fp8::detail::stripSlashComments(StringRef text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    if (line.ltrim().starts_with("//"))
      out.append(line.size(), ' ');
    else
      out.append(line.begin(), line.end());
    if (text.size() != line.size())
      out.push_back('\n');
    text = rest;
  }
  return out;
}

FailureOr<OwningOpRef<ModuleOp>>
fp8::importONNXBuffer(StringRef bytes, bool isText, StringRef bufferName,
                      MLIRContext &ctx, const ImportOptions &opts,
                      SmallVectorImpl<std::string> *externalFiles,
                      std::vector<ExternalDataRead> *externalReads) {
  DialectRegistry registry;
  registerONNXImportDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();

  Location fileLoc = FileLineColLoc::get(&ctx, bufferName, 0, 0);
  onnx::ModelProto model;
  std::string err = isText
                        ? detail::parseTextModel(detail::stripSlashComments(bytes), model)
                        : detail::parseBinaryModel(bytes, model);
  if (!err.empty())
    return emitError(fileLoc) << "cannot read ONNX model: " << err;

  Importer importer(ctx, opts, bufferName);
  importer.externalFiles = externalFiles;
  importer.externalReads = externalReads;
  return importer.importModel(model);
}

FailureOr<OwningOpRef<ModuleOp>>
fp8::importONNXFile(StringRef path, MLIRContext &ctx, const ImportOptions &opts,
                    SmallVectorImpl<std::string> *externalFiles,
                    std::vector<ExternalDataRead> *externalReads) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return emitError(FileLineColLoc::get(&ctx, path, 0, 0))
           << "cannot open ONNX model: " << ec.message();
  bool isText = path.ends_with(".onnxtext") || path.ends_with(".onnxtxt");
  ImportOptions fileOpts = opts;
  if (fileOpts.externalDataDir.empty())
    fileOpts.externalDataDir = llvm::sys::path::parent_path(path).str();
  return importONNXBuffer((*buffer)->getBuffer(), isText, path, ctx, fileOpts,
                          externalFiles, externalReads);
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeContext::error() {
  return emitError(loc) << "'" << opType() << "' node \"" << name << "\": ";
}

FailureOr<Value> NodeContext::required(size_t i) {
  if (Value v = in(i))
    return v;
  return error() << "missing required input #" << i;
}

const onnx::AttributeProto *NodeContext::attr(StringRef attrName) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(StringRef attrName, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->i() : dflt;
}

float NodeContext::attrFloat(StringRef attrName, float dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->f() : dflt;
}

std::string NodeContext::attrString(StringRef attrName, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
NodeContext::attrInts(StringRef attrName) const {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<SmallVector<int64_t>> NodeContext::constInts(size_t i,
                                                       StringRef what) {
  Value v = in(i);
  if (!v)
    return error() << "missing input '" << what << "'";
  std::optional<Lit> lit = imp.getLit(v);
  if (!lit || lit->isFloat())
    return error() << "input '" << what
                   << "' must be an integer constant (or fold to one) so that "
                      "shapes stay static";
  return lit->ints;
}

FailureOr<int64_t> NodeContext::normAxis(int64_t axis, int64_t rank) {
  // No axis of a rank-0 tensor is valid: callers index the shape with the
  // result (fuzzing: Concat of a scalar read shape[0] of an empty shape).
  if (axis < -rank || axis >= rank)
    return error() << "axis " << axis << " out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Types and tensors
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext &ctx, const ImportOptions &opts,
                   StringRef fileName)
    : ctx(&ctx), b(&ctx), opts(opts), fileName(fileName.str()) {
  registerHandlers(handlers);
}

Importer::~Importer() = default;

Type Importer::elementType(int t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case kFLOAT8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case kFLOAT8E5M2:
    return Float8E5M2Type::get(ctx);
  case kFLOAT8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case kFLOAT8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return b.getI8Type();
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return b.getI16Type();
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return b.getI64Type();
  default:
    return {};
  }
}

bool Importer::isUnsignedONNXType(int t) {
  return t == onnx::TensorProto::UINT8 || t == onnx::TensorProto::UINT16 ||
         t == onnx::TensorProto::UINT32 || t == onnx::TensorProto::UINT64;
}

StringRef Importer::onnxTypeName(int t) {
  if (onnx::TensorProto::DataType_IsValid(t))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(t));
  switch (t) {
  case kFLOAT8E4M3FN:
    return "FLOAT8E4M3FN";
  case kFLOAT8E4M3FNUZ:
    return "FLOAT8E4M3FNUZ";
  case kFLOAT8E5M2:
    return "FLOAT8E5M2";
  case kFLOAT8E5M2FNUZ:
    return "FLOAT8E5M2FNUZ";
  case 21:
    return "UINT4";
  case 22:
    return "INT4";
  case 23:
    return "FLOAT4E2M1";
  default:
    return "<unknown>";
  }
}

/// Resolves an external-data location as onnxruntime does: a relative path
/// to a regular file inside the model's directory, after symbolic links and
/// `..` are resolved. A crafted model must not make the compiler read (and
/// embed in a library) any other file of the machine.
FailureOr<std::string> Importer::resolveExternalPath(const onnx::TensorProto &t,
                                                     StringRef location,
                                                     Location loc) {
  auto refuse = [&]() {
    return emitError(loc) << "tensor '" << t.name()
                          << "': external data location '" << location << "' ";
  };
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows))
    return refuse() << "is an absolute path; ONNX external data must be a "
                       "path relative to the model's directory";
  StringRef dirName =
      opts.externalDataDir.empty() ? StringRef(".") : opts.externalDataDir;
  SmallString<256> dir, path(dirName), real;
  if (std::error_code ec = llvm::sys::fs::real_path(dirName, dir))
    return refuse() << "cannot be resolved: the model's directory '" << dirName
                    << "': " << ec.message();
  llvm::sys::path::append(path, location);
  if (std::error_code ec = llvm::sys::fs::real_path(path, real))
    return emitError(loc) << "tensor '" << t.name()
                          << "': cannot open external data file '" << path
                          << "': " << ec.message();
  SmallString<256> prefix(dir);
  if (!prefix.ends_with(llvm::sys::path::get_separator()))
    prefix += llvm::sys::path::get_separator();
  if (!StringRef(real).starts_with(prefix))
    return refuse() << "resolves to '" << real
                    << "', outside the model's directory '" << dir
                    << "'; external data must be a file inside it";
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(real, st))
    return refuse() << "cannot be read: " << ec.message();
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return refuse() << "is not a regular file";
  if (externalFiles && !llvm::is_contained(*externalFiles, real.str()))
    externalFiles->push_back(real.str().str());
  return real.str().str();
}

FailureOr<Importer::ExternalData>
Importer::parseExternalData(const onnx::TensorProto &t, Location loc) {
  ExternalData d;
  for (const onnx::StringStringEntryProto &kv : t.external_data()) {
    if (kv.key() == "location")
      d.location = kv.value();
    else if ((kv.key() == "offset" &&
              StringRef(kv.value()).getAsInteger(10, d.offset)) ||
             (kv.key() == "length" &&
              StringRef(kv.value()).getAsInteger(10, d.length)))
      return emitError(loc) << "tensor '" << t.name()
                            << "': malformed external data " << kv.key();
  }
  if (d.location.empty())
    return emitError(loc) << "tensor '" << t.name()
                          << "': external data without a location";
  return d;
}

FailureOr<Value> Importer::externalWeight(const onnx::TensorProto &t,
                                          Location loc) {
  if (opts.externalWeightMinBytes <= 0 ||
      t.data_location() != onnx::TensorProto::EXTERNAL)
    return Value();
  Type et = elementType(t.data_type());
  if (!et || !isa<FloatType>(et) || et.getIntOrFloatBitWidth() % 8 != 0)
    return Value(); // read as usual (and refused there if unsupported)
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return Value();
  int64_t n = numElementsSat(shape);
  if (n > kMaxTensorElements)
    return Value();
  const int64_t bytes = n * (et.getIntOrFloatBitWidth() / 8);
  if (bytes < opts.externalWeightMinBytes)
    return Value();
  FailureOr<ExternalData> ext = parseExternalData(t, loc);
  if (failed(ext))
    return failure();
  const std::string &location = ext->location;
  const uint64_t offset = ext->offset;
  const int64_t length = ext->length;
  if (length >= 0 && length != bytes)
    return emitError(loc) << "tensor '" << t.name() << "' holds " << length
                          << " bytes of external data, expected " << bytes
                          << " for its shape";
  FailureOr<std::string> path = resolveExternalPath(t, location, loc);
  if (failed(path))
    return failure();
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(*path, fileSize))
    return emitError(loc) << "tensor '" << t.name()
                          << "': cannot read external data file '" << *path
                          << "': " << ec.message();
  if (offset > fileSize || uint64_t(bytes) > fileSize - offset)
    return emitError(loc) << "tensor '" << t.name()
                          << "': external data range past the end of '"
                          << *path << "'";
  // Locations stay relative (the compiled computation does not depend on
  // where the model is); the module records the directory once.
  ModuleOp module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (module && !module->hasAttr(kExternalDataDirAttr)) {
    SmallString<256> dir;
    StringRef modelDir = opts.externalDataDir.empty()
                             ? StringRef(".")
                             : StringRef(opts.externalDataDir);
    if (std::error_code ec = llvm::sys::fs::real_path(modelDir, dir))
      return emitError(loc) << "the model's directory '" << modelDir
                            << "': " << ec.message();
    module->setAttr(kExternalDataDirAttr, b.getStringAttr(dir));
  }
  auto type = RankedTensorType::get(shape, et);
  return ExternalWeightOp::create(b, loc, type, t.name(), location,
                                  static_cast<int64_t>(offset), bytes)
      .getResult();
}

FailureOr<std::string> Importer::readExternalData(const onnx::TensorProto &t,
                                                  Location loc) {
  FailureOr<ExternalData> ext = parseExternalData(t, loc);
  if (failed(ext))
    return failure();
  const uint64_t offset = ext->offset;
  const int64_t length = ext->length;
  FailureOr<std::string> resolved = resolveExternalPath(t, ext->location, loc);
  if (failed(resolved))
    return failure();
  std::string path = std::move(*resolved);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return emitError(loc) << "tensor '" << t.name()
                          << "': cannot open external data file '" << path
                          << "': " << ec.message();
  StringRef data = (*buffer)->getBuffer();
  if (offset > data.size() ||
      (length >= 0 && static_cast<uint64_t>(length) > data.size() - offset))
    return emitError(loc) << "tensor '" << t.name()
                          << "': external data range past the end of '" << path
                          << "'";
  StringRef bytes = data.substr(offset, length < 0 ? StringRef::npos : length);
  if (externalReads)
    externalReads->push_back(
        {t.name(), ext->location, offset, bytes.size(),
         llvm::xxHash64(llvm::arrayRefFromStringRef<uint8_t>(bytes))});
  return bytes.str();
}

/// Appends the low `bytes` bytes of each value (little-endian host).
template <typename Range>
static void appendTruncated(std::string &raw, const Range &vals,
                            unsigned bytes) {
  for (auto v : vals) {
    uint64_t bits = static_cast<uint64_t>(v);
    raw.append(reinterpret_cast<const char *>(&bits), bytes);
  }
}

FailureOr<ElementsAttr> Importer::tensorToAttr(const onnx::TensorProto &t,
                                               Location loc, bool forceDense) {
  Type et = elementType(t.data_type());
  if (!et)
    return emitError(loc) << "tensor '" << t.name()
                          << "' has unsupported data type "
                          << onnxTypeName(t.data_type()) << " ("
                          << t.data_type() << ")";
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitError(loc) << "tensor '" << t.name()
                          << "' has a negative dimension";
  int64_t n = numElements(shape);
  if (n > kMaxTensorElements)
    return emitError(loc) << "tensor '" << t.name() << "' declares "
                          << formatShapeSat(shape)
                          << ", more elements than any machine holds";
  auto type = RankedTensorType::get(shape, et);
  unsigned width = et.getIntOrFloatBitWidth();
  unsigned bytes = width == 1 ? 1 : width / 8;

  std::string raw;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    FailureOr<std::string> ext = readExternalData(t, loc);
    if (failed(ext))
      return failure();
    raw = std::move(*ext);
  } else if (t.has_raw_data()) {
    raw = t.raw_data();
  } else {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      raw.assign(reinterpret_cast<const char *>(t.float_data().data()),
                 t.float_data_size() * sizeof(float));
      break;
    case onnx::TensorProto::DOUBLE:
      raw.assign(reinterpret_cast<const char *>(t.double_data().data()),
                 t.double_data_size() * sizeof(double));
      break;
    case onnx::TensorProto::INT64:
      raw.assign(reinterpret_cast<const char *>(t.int64_data().data()),
                 t.int64_data_size() * sizeof(int64_t));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      appendTruncated(raw, t.uint64_data(), bytes);
      break;
    default:
      // int32_data carries every type of at most 32 bits, including the
      // bit patterns of float16, bfloat16 and float8.
      appendTruncated(raw, t.int32_data(), bytes);
      break;
    }
  }
  if (static_cast<int64_t>(raw.size()) != n * bytes)
    return emitError(loc) << "tensor '" << t.name() << "' holds " << raw.size()
                          << " bytes of data, expected " << n * bytes
                          << " for shape " << type;

  if (et.isInteger(1)) {
    SmallVector<bool> bits(llvm::map_range(raw, [](char c) { return c != 0; }));
    return cast<ElementsAttr>(DenseElementsAttr::get(type, bits));
  }
  bool dense = forceDense || n <= opts.maxDenseElements || et.isInteger(64);
  if (dense) {
    ArrayRef<char> buf(raw.data(), raw.size());
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, buf));
  }
  std::string blobName = "onnx_";
  for (char c : t.name())
    blobName.push_back(llvm::isAlnum(c) ? c : '_');
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(raw.data(), raw.size()), alignof(uint64_t));
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
}

//===----------------------------------------------------------------------===//
// Constants and folding
//===----------------------------------------------------------------------===//

Value Importer::constant(Location loc, ElementsAttr attr) {
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(attr));
}

Value Importer::scalarConst(Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

Value Importer::splat(Location loc, RankedTensorType type, double fval,
                      int64_t ival) {
  Attribute elt;
  if (auto ft = dyn_cast<FloatType>(type.getElementType()))
    elt = b.getFloatAttr(ft, fval);
  else
    elt = b.getIntegerAttr(type.getElementType(), ival);
  return constant(loc, DenseElementsAttr::get(type, elt));
}

DenseElementsAttr Importer::getConst(Value v) {
  if (!v)
    return {};
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return {};
  return dyn_cast<DenseElementsAttr>(cst.getValue());
}

std::optional<Lit> Importer::getLit(Value v, int64_t maxElements) {
  DenseElementsAttr attr = getConst(v);
  if (!attr || numElementsSat(attr.getType().getShape()) > maxElements)
    return std::nullopt;
  Lit lit;
  lit.shape = llvm::to_vector(attr.getType().getShape());
  lit.elemType = attr.getElementType();
  lit.isUnsigned = isUnsigned(v);
  int64_t n = attr.getNumElements();
  if (lit.isFloat()) {
    lit.floats.reserve(n);
    for (APFloat f : attr.getValues<APFloat>()) {
      bool lost;
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      lit.floats.push_back(f.convertToDouble());
    }
  } else {
    bool zext = lit.isUnsigned || lit.elemType.isInteger(1);
    lit.ints.reserve(n);
    for (const APInt &i : attr.getValues<APInt>())
      lit.ints.push_back(zext ? static_cast<int64_t>(i.getZExtValue())
                              : i.getSExtValue());
  }
  return lit;
}

Value Importer::litConstant(Location loc, const Lit &lit) {
  auto type = RankedTensorType::get(lit.shape, lit.elemType);
  DenseElementsAttr attr;
  if (auto ft = dyn_cast<FloatType>(lit.elemType)) {
    SmallVector<APFloat> vals;
    vals.reserve(lit.floats.size());
    for (double d : lit.floats) {
      APFloat f(d);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    attr = DenseElementsAttr::get(type, vals);
  } else if (lit.elemType.isInteger(1)) {
    SmallVector<bool> vals(
        llvm::map_range(lit.ints, [](int64_t i) { return i != 0; }));
    attr = DenseElementsAttr::get(type, vals);
  } else {
    unsigned width = lit.elemType.getIntOrFloatBitWidth();
    SmallVector<APInt> vals(llvm::map_range(lit.ints, [&](int64_t i) {
      return APInt(width, static_cast<uint64_t>(i), /*isSigned=*/true,
                   /*implicitTrunc=*/true);
    }));
    attr = DenseElementsAttr::get(type, vals);
  }
  Value v = constant(loc, cast<ElementsAttr>(attr));
  if (lit.isUnsigned)
    unsignedValues.insert(v);
  return v;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Linear index into a numpy-broadcast input of shape `in` for the output
/// multi-index `idx` (of the output's rank).
static int64_t broadcastIndex(ArrayRef<int64_t> idx, ArrayRef<int64_t> in,
                              ArrayRef<int64_t> inStrides) {
  int64_t off = idx.size() - in.size(), lin = 0;
  for (size_t d = 0; d < in.size(); ++d)
    lin += (in[d] == 1 ? 0 : idx[off + d]) * inStrides[d];
  return lin;
}

/// Scalar evaluation for the folder. Integers (incl. bools) travel as int64,
/// floats as double; `outFloat` says which the result is.
static double foldFloat(EwKind k, ArrayRef<double> a) {
  switch (k) {
  case EwKind::Add: return a[0] + a[1];
  case EwKind::Sub: return a[0] - a[1];
  case EwKind::Mul: return a[0] * a[1];
  case EwKind::Div: return a[0] / a[1];
  case EwKind::Pow: return std::pow(a[0], a[1]);
  case EwKind::Mod:
  case EwKind::FMod: return std::fmod(a[0], a[1]);
  case EwKind::Max: return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::max(a[0], a[1]);
  case EwKind::Min: return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::min(a[0], a[1]);
  case EwKind::Neg: return -a[0];
  case EwKind::Abs: return std::fabs(a[0]);
  case EwKind::Sqrt: return std::sqrt(a[0]);
  case EwKind::Reciprocal: return 1.0 / a[0];
  case EwKind::Erf: return std::erf(a[0]);
  case EwKind::Tanh: return std::tanh(a[0]);
  case EwKind::Sigmoid: return 1.0 / (1.0 + std::exp(-a[0]));
  case EwKind::Relu: return a[0] > 0 ? a[0] : 0.0;
  case EwKind::Exp: return std::exp(a[0]);
  case EwKind::Log: return std::log(a[0]);
  case EwKind::Floor: return std::floor(a[0]);
  case EwKind::Ceil: return std::ceil(a[0]);
  case EwKind::Sin: return std::sin(a[0]);
  case EwKind::Cos: return std::cos(a[0]);
  case EwKind::Tan: return std::tan(a[0]);
  case EwKind::Asin: return std::asin(a[0]);
  case EwKind::Acos: return std::acos(a[0]);
  case EwKind::Atan: return std::atan(a[0]);
  case EwKind::Sinh: return std::sinh(a[0]);
  case EwKind::Cosh: return std::cosh(a[0]);
  case EwKind::Asinh: return std::asinh(a[0]);
  case EwKind::Acosh: return std::acosh(a[0]);
  case EwKind::Atanh: return std::atanh(a[0]);
  case EwKind::Round: return std::nearbyint(a[0]); // ties to even
  case EwKind::Softsign: return a[0] / (1.0 + std::fabs(a[0]));
  default: return a[0];
  }
}

/// Two's-complement wrapping, as the generated code computes (C++ signed
/// overflow would be undefined behaviour in the compiler itself).
static int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }

/// A double as int64, saturating (the C++ conversion of an out-of-range
/// double is undefined).
static int64_t toInt64Sat(double d) {
  if (std::isnan(d))
    return 0;
  if (d >= 9223372036854775807.0)
    return INT64_MAX;
  if (d <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(d);
}

/// `isUnsigned`: the int64s hold uint64 bit patterns (Div, Mod, Max, Min
/// and comparisons differ from the signed ones above 2^63).
static int64_t foldInt(EwKind k, ArrayRef<int64_t> a, bool isUnsigned) {
  const uint64_t x = a[0], y = a.size() > 1 ? a[1] : 0;
  if (isUnsigned) {
    switch (k) {
    case EwKind::Div:
      return y == 0 ? 0 : wrap(x / y);
    case EwKind::Mod:
    case EwKind::FMod:
      return y == 0 ? 0 : wrap(x % y);
    case EwKind::Max:
      return wrap(std::max(x, y));
    case EwKind::Min:
      return wrap(std::min(x, y));
    default:
      break; // the same bits as the signed operation
    }
  }
  switch (k) {
  case EwKind::Add:
    return wrap(x + y);
  case EwKind::Sub:
    return wrap(x - y);
  case EwKind::Mul:
    return wrap(x * y);
  // Integer division by zero gives 0 (numpy's result; ONNX leaves it
  // undefined) and INT_MIN / -1 wraps, at compile time as at run time
  // (Importer::buildScalar).
  case EwKind::Div:
    return a[1] == 0 ? 0 : a[1] == -1 ? wrap(0 - x) : a[0] / a[1];
  case EwKind::Pow:
    return toInt64Sat(std::pow(double(a[0]), double(a[1])));
  case EwKind::Mod: {
    if (a[1] == 0 || a[1] == -1)
      return 0;
    int64_t r = a[0] % a[1];
    return (r != 0 && ((r < 0) != (a[1] < 0))) ? r + a[1] : r;
  }
  case EwKind::FMod:
    return a[1] == 0 || a[1] == -1 ? 0 : a[0] % a[1];
  case EwKind::Max: return std::max(a[0], a[1]);
  case EwKind::Min: return std::min(a[0], a[1]);
  case EwKind::Neg:
    return wrap(0 - x);
  case EwKind::Abs:
    return a[0] < 0 ? wrap(0 - x) : a[0];
  case EwKind::Relu: return a[0] > 0 ? a[0] : 0;
  case EwKind::And: return a[0] && a[1];
  case EwKind::Or: return a[0] || a[1];
  case EwKind::Xor: return (a[0] != 0) != (a[1] != 0);
  case EwKind::Not: return !a[0];
  default: return a[0];
  }
}

static bool isCompare(EwKind k) {
  return k == EwKind::Equal || k == EwKind::Greater ||
         k == EwKind::GreaterOrEqual || k == EwKind::Less ||
         k == EwKind::LessOrEqual;
}

template <typename T>
static bool foldCompare(EwKind k, T x, T y) {
  switch (k) {
  case EwKind::Equal: return x == y;
  case EwKind::Greater: return x > y;
  case EwKind::GreaterOrEqual: return x >= y;
  case EwKind::Less: return x < y;
  default: return x <= y;
  }
}

/// Rounds `d` as converting to `t` would (integer wrap, float rounding), so
/// that folded Casts match runtime ones.
static int64_t castToInt(double d, Type t) {
  if (t.isInteger(1))
    return d != 0;
  return toInt64Sat(std::trunc(d));
}

//===----------------------------------------------------------------------===//
// IR builders
//===----------------------------------------------------------------------===//

Value Importer::emptyTensor(Location loc, ArrayRef<int64_t> shape,
                            Type elemType) {
  return tensor::EmptyOp::create(b, loc, shape, elemType);
}

Value Importer::filled(Location loc, ArrayRef<int64_t> shape, TypedAttr init) {
  Value empty = emptyTensor(loc, shape, init.getType());
  Value cst = arith::ConstantOp::create(b, loc, init);
  return linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty})
      .getResult(0);
}

FailureOr<SmallVector<int64_t>>
Importer::broadcastShapes(NodeContext &nc, ArrayRef<Value> vals) {
  SmallVector<int64_t> out;
  for (Value v : vals) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[out.size() - s.size() + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      auto diag = nc.error() << "shapes are not broadcast-compatible:";
      for (Value w : vals)
        diag << " " << w.getType();
      return diag;
    }
  }
  return out;
}

Value Importer::generic(
    Location loc, ArrayRef<Value> ins, ArrayRef<int64_t> outShape,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (Value v : ins) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<AffineExpr> exprs;
    int64_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d)
      exprs.push_back(s[d] == 1 && outShape[off + d] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(off + d));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = emptyTensor(loc, outShape, outElem);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value r = body(bb, l, args.drop_back());
        linalg::YieldOp::create(bb, l, r);
      });
  return op.getResult(0);
}

Value Importer::castScalar(OpBuilder &bb, Location loc, Value x, bool inUns,
                           Type to, bool outUns) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromF) {
      Value zero = arith::ConstantOp::create(bb, loc, bb.getFloatAttr(from, 0));
      return arith::CmpFOp::create(bb, loc, arith::CmpFPredicate::UNE, x, zero);
    }
    Value zero = arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(bb, loc, to, x);
    if (fromF.getWidth() > toF.getWidth())
      return arith::TruncFOp::create(bb, loc, to, x);
    // Same width, different format (f16 <-> bf16): go through f32.
    Value wide = arith::ExtFOp::create(bb, loc, bb.getF32Type(), x);
    return arith::TruncFOp::create(bb, loc, to, wide);
  }
  if (fromF)
    return outUns ? Value(arith::FPToUIOp::create(bb, loc, to, x))
                  : Value(arith::FPToSIOp::create(bb, loc, to, x));
  if (toF)
    return (inUns || from.isInteger(1))
               ? Value(arith::UIToFPOp::create(bb, loc, to, x))
               : Value(arith::SIToFPOp::create(bb, loc, to, x));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return (inUns || from.isInteger(1))
               ? Value(arith::ExtUIOp::create(bb, loc, to, x))
               : Value(arith::ExtSIOp::create(bb, loc, to, x));
  if (fw > tw)
    return arith::TruncIOp::create(bb, loc, to, x);
  return x;
}

/// Integer x / y or x % y that never traps: a zero divisor gives 0 (as
/// numpy; ONNX leaves it undefined, x86's idiv raises SIGFPE), and for
/// signed types INT_MIN / -1 wraps to INT_MIN (remainder 0) instead of
/// trapping. The divisor the hardware sees is never 0 or -1.
static Value intDivRem(OpBuilder &bb, Location loc, Value x, Value y,
                       bool isUnsigned, bool rem) {
  Type t = y.getType();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(t, v));
  };
  Value zero = cst(0), one = cst(1);
  Value isZero =
      arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq, y, zero);
  Value special = isZero, isNegOne;
  if (!isUnsigned) {
    isNegOne =
        arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq, y, cst(-1));
    special = arith::OrIOp::create(bb, loc, isZero, isNegOne);
  }
  Value safe = arith::SelectOp::create(bb, loc, special, one, y);
  Value r;
  if (rem)
    r = isUnsigned ? Value(arith::RemUIOp::create(bb, loc, x, safe))
                   : Value(arith::RemSIOp::create(bb, loc, x, safe));
  else
    r = isUnsigned ? Value(arith::DivUIOp::create(bb, loc, x, safe))
                   : Value(arith::DivSIOp::create(bb, loc, x, safe));
  // x / -1 = -x (wrapping); x % -1 = 0.
  if (!isUnsigned)
    r = arith::SelectOp::create(
        bb, loc, isNegOne,
        rem ? zero : Value(arith::SubIOp::create(bb, loc, zero, x)), r);
  return arith::SelectOp::create(bb, loc, isZero, zero, r);
}

Value Importer::buildScalar(OpBuilder &bb, Location loc, EwKind kind,
                            ValueRange a, Type outType,
                            ArrayRef<bool> uns) {
  Type inT = a[kind == EwKind::Where ? 1 : 0].getType();
  bool f = isa<FloatType>(inT);
  bool u = !uns.empty() && uns[0];
  auto fconst = [&](double v) {
    return arith::ConstantOp::create(bb, loc, bb.getFloatAttr(inT, v));
  };
  auto iconst = [&](int64_t v) {
    return arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(inT, v));
  };
  switch (kind) {
  case EwKind::Add:
    return f ? Value(arith::AddFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::AddIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Sub:
    return f ? Value(arith::SubFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::SubIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Mul:
    return f ? Value(arith::MulFOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MulIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Div:
    if (f)
      return arith::DivFOp::create(bb, loc, a[0], a[1]);
    return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/false);
  case EwKind::FMod:
    if (f)
      return arith::RemFOp::create(bb, loc, a[0], a[1]);
    return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
  case EwKind::Mod: {
    if (f)
      return arith::RemFOp::create(bb, loc, a[0], a[1]);
    if (u)
      return intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
    // ONNX integer Mod (fmod=0) takes the divisor's sign, like Python.
    Value r = intDivRem(bb, loc, a[0], a[1], u, /*rem=*/true);
    Value zero = iconst(0);
    Value rNeg = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, r, zero);
    Value dNeg = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, a[1], zero);
    Value rNonZero = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ne, r, zero);
    Value differ = arith::XOrIOp::create(bb, loc, rNeg, dNeg);
    Value fix = arith::AndIOp::create(bb, loc, differ, rNonZero);
    Value adj = arith::AddIOp::create(bb, loc, r, a[1]);
    return arith::SelectOp::create(bb, loc, fix, adj, r);
  }
  case EwKind::Pow: {
    Value base = a[0], exp = a[1];
    if (!f) {
      Type f64 = bb.getF64Type();
      base = castScalar(bb, loc, base, u, f64, false);
      exp = castScalar(bb, loc, exp, false, f64, false);
      Value p = math::PowFOp::create(bb, loc, base, exp);
      return castScalar(bb, loc, p, false, inT, u);
    }
    if (exp.getType() != inT)
      exp = castScalar(bb, loc, exp, uns.size() > 1 && uns[1], inT, false);
    return math::PowFOp::create(bb, loc, base, exp);
  }
  case EwKind::Max:
    if (f)
      return arith::MaximumFOp::create(bb, loc, a[0], a[1]);
    return u ? Value(arith::MaxUIOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MaxSIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Min:
    if (f)
      return arith::MinimumFOp::create(bb, loc, a[0], a[1]);
    return u ? Value(arith::MinUIOp::create(bb, loc, a[0], a[1]))
             : Value(arith::MinSIOp::create(bb, loc, a[0], a[1]));
  case EwKind::Neg:
    return f ? Value(arith::NegFOp::create(bb, loc, a[0]))
             : Value(arith::SubIOp::create(bb, loc, iconst(0), a[0]));
  case EwKind::Abs:
    return f ? Value(math::AbsFOp::create(bb, loc, a[0]))
             : Value(math::AbsIOp::create(bb, loc, a[0]));
  case EwKind::Sqrt:
    return math::SqrtOp::create(bb, loc, a[0]);
  case EwKind::Reciprocal:
    return arith::DivFOp::create(bb, loc, fconst(1.0), a[0]);
  case EwKind::Erf:
    return math::ErfOp::create(bb, loc, a[0]);
  case EwKind::Tanh:
    return math::TanhOp::create(bb, loc, a[0]);
  case EwKind::Sigmoid: {
    Value neg = arith::NegFOp::create(bb, loc, a[0]);
    Value e = math::ExpOp::create(bb, loc, neg);
    Value den = arith::AddFOp::create(bb, loc, fconst(1.0), e);
    return arith::DivFOp::create(bb, loc, fconst(1.0), den);
  }
  case EwKind::Relu:
    return f ? Value(arith::MaximumFOp::create(bb, loc, a[0], fconst(0.0)))
             : Value(arith::MaxSIOp::create(bb, loc, a[0], iconst(0)));
  case EwKind::Exp:
    return math::ExpOp::create(bb, loc, a[0]);
  case EwKind::Log:
    return math::LogOp::create(bb, loc, a[0]);
  case EwKind::Floor:
    return math::FloorOp::create(bb, loc, a[0]);
  case EwKind::Ceil:
    return math::CeilOp::create(bb, loc, a[0]);
  case EwKind::Sin:
    return math::SinOp::create(bb, loc, a[0]);
  case EwKind::Cos:
    return math::CosOp::create(bb, loc, a[0]);
  case EwKind::Tan:
    return math::TanOp::create(bb, loc, a[0]);
  case EwKind::Asin:
    return math::AsinOp::create(bb, loc, a[0]);
  case EwKind::Acos:
    return math::AcosOp::create(bb, loc, a[0]);
  case EwKind::Atan:
    return math::AtanOp::create(bb, loc, a[0]);
  case EwKind::Sinh:
    return math::SinhOp::create(bb, loc, a[0]);
  case EwKind::Cosh:
    return math::CoshOp::create(bb, loc, a[0]);
  case EwKind::Asinh:
    return math::AsinhOp::create(bb, loc, a[0]);
  case EwKind::Acosh:
    return math::AcoshOp::create(bb, loc, a[0]);
  case EwKind::Atanh:
    return math::AtanhOp::create(bb, loc, a[0]);
  case EwKind::Round: // ONNX rounds half to even
    return math::RoundEvenOp::create(bb, loc, a[0]);
  case EwKind::Softsign: {
    Value den =
        arith::AddFOp::create(bb, loc, fconst(1.0), math::AbsFOp::create(bb, loc, a[0]));
    return arith::DivFOp::create(bb, loc, a[0], den);
  }
  case EwKind::Equal:
  case EwKind::Greater:
  case EwKind::GreaterOrEqual:
  case EwKind::Less:
  case EwKind::LessOrEqual: {
    if (f) {
      arith::CmpFPredicate p =
          kind == EwKind::Equal            ? arith::CmpFPredicate::OEQ
          : kind == EwKind::Greater        ? arith::CmpFPredicate::OGT
          : kind == EwKind::GreaterOrEqual ? arith::CmpFPredicate::OGE
          : kind == EwKind::Less           ? arith::CmpFPredicate::OLT
                                           : arith::CmpFPredicate::OLE;
      return arith::CmpFOp::create(bb, loc, p, a[0], a[1]);
    }
    arith::CmpIPredicate p =
        kind == EwKind::Equal ? arith::CmpIPredicate::eq
        : kind == EwKind::Greater
            ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
        : kind == EwKind::GreaterOrEqual
            ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
        : kind == EwKind::Less
            ? (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
            : (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
    return arith::CmpIOp::create(bb, loc, p, a[0], a[1]);
  }
  case EwKind::And:
    return arith::AndIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Or:
    return arith::OrIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Xor:
    return arith::XOrIOp::create(bb, loc, a[0], a[1]);
  case EwKind::Not: {
    Value t = arith::ConstantOp::create(bb, loc, bb.getBoolAttr(true));
    return arith::XOrIOp::create(bb, loc, a[0], t);
  }
  case EwKind::Where:
    return arith::SelectOp::create(bb, loc, a[0], a[1], a[2]);
  case EwKind::Cast:
    return castScalar(bb, loc, a[0], u, outType, false);
  case EwKind::Identity:
    return a[0];
  }
  llvm_unreachable("unhandled element-wise kind");
}

FailureOr<Value> Importer::elementwise(NodeContext &nc, EwKind kind,
                                       ArrayRef<Value> ins, Type castTo) {
  FailureOr<SmallVector<int64_t>> outShape = broadcastShapes(nc, ins);
  if (failed(outShape))
    return failure();
  Type dataT = elemOf(ins[kind == EwKind::Where ? 1 : 0]);
  Type outT = isCompare(kind) ? b.getI1Type()
              : kind == EwKind::Cast ? castTo
                                     : dataT;
  // ONNX requires matching element types; Pow's exponent and Where's
  // condition are the exceptions.
  for (auto [i, v] : llvm::enumerate(ins)) {
    if (kind == EwKind::Pow && i == 1)
      continue;
    if (kind == EwKind::Where && i == 0) {
      if (!elemOf(v).isInteger(1))
        return nc.error() << "condition must be bool, got " << v.getType();
      continue;
    }
    if (elemOf(v) != dataT)
      return nc.error() << "operand element types differ: " << dataT
                        << " vs " << elemOf(v);
  }
  bool isFloat = isa<FloatType>(dataT);
  if ((kind == EwKind::And || kind == EwKind::Or || kind == EwKind::Xor ||
       kind == EwKind::Not) &&
      !dataT.isInteger(1))
    return nc.error() << "expects bool operands, got " << dataT;
  if (!isFloat && (kind == EwKind::Sqrt || kind == EwKind::Reciprocal ||
                   kind == EwKind::Erf || kind == EwKind::Tanh ||
                   kind == EwKind::Sigmoid || kind == EwKind::Exp ||
                   kind == EwKind::Log || kind == EwKind::Floor ||
                   kind == EwKind::Ceil || kind == EwKind::Sin ||
                   kind == EwKind::Cos || kind == EwKind::Tan ||
                   kind == EwKind::Asin || kind == EwKind::Acos ||
                   kind == EwKind::Atan || kind == EwKind::Sinh ||
                   kind == EwKind::Cosh || kind == EwKind::Asinh ||
                   kind == EwKind::Acosh || kind == EwKind::Atanh ||
                   kind == EwKind::Round || kind == EwKind::Softsign))
    return nc.error() << "expects floating-point operands, got " << dataT;

  SmallVector<bool> uns(llvm::map_range(ins, [&](Value v) { return isUnsigned(v); }));
  bool outUnsigned = kind != EwKind::Cast && !isCompare(kind) && !uns.empty() &&
                     uns[kind == EwKind::Where ? 1 : 0];

  // Fold when every input is a constant and the result is small.
  SmallVector<Lit> lits;
  for (Value v : ins)
    if (std::optional<Lit> l = getLit(v))
      lits.push_back(std::move(*l));
  if (lits.size() == ins.size() && numElements(*outShape) <= kFoldLimit &&
      !isa<Float8E4M3FNType, Float8E5M2Type>(outT)) {
    Lit out;
    out.shape = *outShape;
    out.elemType = outT;
    out.isUnsigned = outUnsigned;
    SmallVector<int64_t> strides = stridesOf(out.shape);
    SmallVector<SmallVector<int64_t>> inStrides;
    for (const Lit &l : lits)
      inStrides.push_back(stridesOf(l.shape));
    int64_t n = numElements(out.shape);
    SmallVector<int64_t> idx(out.shape.size());
    bool outFloat = isa<FloatType>(outT);
    for (int64_t lin = 0; lin < n; ++lin) {
      for (size_t d = 0; d < idx.size(); ++d)
        idx[d] = (lin / strides[d]) % out.shape[d];
      SmallVector<double> fa;
      SmallVector<int64_t> ia;
      for (auto [l, s] : llvm::zip(lits, inStrides)) {
        int64_t j = broadcastIndex(idx, l.shape, s);
        fa.push_back(l.isFloat()    ? l.floats[j]
                     : l.isUnsigned ? double(uint64_t(l.ints[j]))
                                    : double(l.ints[j]));
        ia.push_back(l.isFloat() ? castToInt(l.floats[j], b.getI64Type())
                                 : l.ints[j]);
      }
      if (kind == EwKind::Where) {
        if (outFloat)
          out.floats.push_back(ia[0] ? fa[1] : fa[2]);
        else
          out.ints.push_back(ia[0] ? ia[1] : ia[2]);
      } else if (isCompare(kind)) {
        out.ints.push_back(
            isFloat  ? foldCompare(kind, fa[0], fa[1])
            : uns[0] ? foldCompare(kind, uint64_t(ia[0]), uint64_t(ia[1]))
                     : foldCompare(kind, ia[0], ia[1]));
      } else if (kind == EwKind::Cast) {
        if (outFloat)
          out.floats.push_back(fa[0]);
        else
          out.ints.push_back(isFloat ? castToInt(fa[0], outT) : ia[0]);
      } else if (isFloat) {
        out.floats.push_back(foldFloat(kind, fa));
      } else {
        out.ints.push_back(foldInt(kind, ia, outUnsigned));
      }
    }
    if (outT.isInteger(1))
      for (int64_t &i : out.ints)
        i = i != 0;
    return litConstant(nc.loc, out);
  }

  Value result = generic(nc.loc, ins, *outShape, outT,
                         [&](OpBuilder &bb, Location l, ValueRange args) {
                           return buildScalar(bb, l, kind, args, outT, uns);
                         });
  if (outUnsigned)
    unsignedValues.insert(result);
  return result;
}

Value Importer::broadcastTo(Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  if (DenseElementsAttr attr = getConst(v); attr && attr.isSplat()) {
    Value r = constant(loc, cast<ElementsAttr>(attr.resizeSplat(
                                RankedTensorType::get(shape, elemOf(v)))));
    if (isUnsigned(v))
      unsignedValues.insert(r);
    return r;
  }
  if (std::optional<Lit> lit = getLit(v); lit && numElements(shape) <= kFoldLimit) {
    Lit out;
    out.shape = llvm::to_vector(shape);
    out.elemType = lit->elemType;
    out.isUnsigned = lit->isUnsigned;
    SmallVector<int64_t> strides = stridesOf(shape), inStrides = stridesOf(lit->shape);
    SmallVector<int64_t> idx(shape.size());
    for (int64_t lin = 0, n = numElements(shape); lin < n; ++lin) {
      for (size_t d = 0; d < idx.size(); ++d)
        idx[d] = (lin / strides[d]) % shape[d];
      int64_t j = broadcastIndex(idx, lit->shape, inStrides);
      if (lit->isFloat())
        out.floats.push_back(lit->floats[j]);
      else
        out.ints.push_back(lit->ints[j]);
    }
    return litConstant(loc, out);
  }
  Value r = generic(loc, {v}, shape, elemOf(v),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::reshape(Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(shape, elemOf(v));
  Value r;
  if (DenseElementsAttr attr = getConst(v)) {
    r = constant(loc, cast<ElementsAttr>(attr.reshape(type)));
  } else {
    // Collapse to 1-D, then expand: both reassociations are trivially valid
    // for any pair of static shapes, and the canonicalizer merges them.
    Value flat = v;
    int64_t n = numElements(shape);
    int64_t srcRank = shapeOf(v).size();
    if (srcRank != 1) {
      auto flatT = RankedTensorType::get({n}, elemOf(v));
      if (srcRank == 0)
        flat = tensor::ExpandShapeOp::create(b, loc, flatT, v,
                                             ArrayRef<ReassociationIndices>{});
      else
        flat = tensor::CollapseShapeOp::create(
            b, loc, flatT, v,
            ArrayRef<ReassociationIndices>{
                llvm::to_vector(llvm::seq<int64_t>(0, srcRank))});
    }
    if (shape.size() == 1)
      r = flat;
    else if (shape.empty())
      r = tensor::CollapseShapeOp::create(b, loc, type, flat,
                                          ArrayRef<ReassociationIndices>{});
    else
      r = tensor::ExpandShapeOp::create(
          b, loc, type, flat,
          ArrayRef<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, shape.size()))});
  }
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  ArrayRef<int64_t> s = shapeOf(v);
  SmallVector<int64_t> outShape(llvm::map_range(perm, [&](int64_t p) { return s[p]; }));
  Value r;
  if (std::optional<Lit> lit = getLit(v); lit && lit->size() <= kFoldLimit) {
    Lit out = *lit;
    out.shape = outShape;
    out.ints.clear();
    out.floats.clear();
    SmallVector<int64_t> os = stridesOf(outShape), is = stridesOf(s);
    SmallVector<int64_t> idx(perm.size());
    for (int64_t lin = 0, n = numElements(outShape); lin < n; ++lin) {
      int64_t src = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        src += ((lin / os[d]) % outShape[d]) * is[perm[d]];
      if (lit->isFloat())
        out.floats.push_back(lit->floats[src]);
      else
        out.ints.push_back(lit->ints[src]);
    }
    return litConstant(loc, out);
  }
  Value init = emptyTensor(loc, outShape, elemOf(v));
  r = linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::extractSlice(Location loc, Value v, ArrayRef<int64_t> offsets,
                             ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  if (shapeOf(v) == sizes)
    return v;
  auto type = RankedTensorType::get(sizes, elemOf(v));
  if (std::optional<Lit> lit = getLit(v)) {
    Lit out = *lit;
    out.shape = llvm::to_vector(sizes);
    out.ints.clear();
    out.floats.clear();
    SmallVector<int64_t> os = stridesOf(sizes), is = stridesOf(lit->shape);
    for (int64_t lin = 0, n = numElements(sizes); lin < n; ++lin) {
      int64_t src = 0;
      for (size_t d = 0; d < sizes.size(); ++d)
        src += (offsets[d] + ((lin / os[d]) % sizes[d]) * strides[d]) * is[d];
      if (lit->isFloat())
        out.floats.push_back(lit->floats[src]);
      else
        out.ints.push_back(lit->ints[src]);
    }
    return litConstant(loc, out);
  }
  auto ofr = [&](ArrayRef<int64_t> xs) {
    return SmallVector<OpFoldResult>(
        llvm::map_range(xs, [&](int64_t x) -> OpFoldResult {
          return b.getIndexAttr(x);
        }));
  };
  Value r = tensor::ExtractSliceOp::create(b, loc, type, v, ofr(offsets),
                                           ofr(sizes), ofr(strides));
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::concat(Location loc, ArrayRef<Value> vals, int64_t axis) {
  if (vals.size() == 1)
    return vals[0];
  SmallVector<int64_t> outShape = llvm::to_vector(shapeOf(vals[0]));
  outShape[axis] = 0;
  for (Value v : vals)
    outShape[axis] += shapeOf(v)[axis];
  Type et = elemOf(vals[0]);

  SmallVector<Lit> lits;
  for (Value v : vals)
    if (std::optional<Lit> l = getLit(v))
      lits.push_back(std::move(*l));
  if (lits.size() == vals.size() && numElements(outShape) <= kFoldLimit) {
    Lit out = lits[0];
    out.shape = outShape;
    out.ints.clear();
    out.floats.clear();
    // Outer dims before `axis`, then each input's contiguous inner block.
    int64_t outer = numElements(ArrayRef<int64_t>(outShape).take_front(axis));
    for (int64_t o = 0; o < outer; ++o)
      for (const Lit &l : lits) {
        int64_t inner = numElements(ArrayRef<int64_t>(l.shape).drop_front(axis));
        for (int64_t i = 0; i < inner; ++i) {
          if (l.isFloat())
            out.floats.push_back(l.floats[o * inner + i]);
          else
            out.ints.push_back(l.ints[o * inner + i]);
        }
      }
    return litConstant(loc, out);
  }

  // A chain of insert_slice into an empty tensor bufferizes in place.
  Value acc = emptyTensor(loc, outShape, et);
  int64_t offset = 0;
  for (Value v : vals) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<OpFoldResult> offs(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    offs[axis] = b.getIndexAttr(offset);
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    acc = tensor::InsertSliceOp::create(b, loc, v, acc, offs, sizes, strides);
    offset += s[axis];
  }
  if (isUnsigned(vals[0]))
    unsignedValues.insert(acc);
  return acc;
}

Value Importer::reduce(Location loc, Value v, ArrayRef<int64_t> axes,
                       ReduceKind kind) {
  ArrayRef<int64_t> s = shapeOf(v);
  Type et = elemOf(v);
  int64_t rank = s.size();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    bool red = llvm::is_contained(axes, d);
    iters.push_back(red ? utils::IteratorType::reduction
                        : utils::IteratorType::parallel);
    if (!red) {
      outShape.push_back(s[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  bool f = isa<FloatType>(et);
  TypedAttr init;
  if (auto ft = dyn_cast<FloatType>(et)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    APFloat v = kind == ReduceKind::Sum    ? APFloat::getZero(sem)
                : kind == ReduceKind::Prod ? APFloat::getOne(sem)
                : kind == ReduceKind::Max  ? APFloat::getInf(sem, true)
                                           : APFloat::getInf(sem, false);
    init = b.getFloatAttr(ft, v);
  } else {
    unsigned w = et.getIntOrFloatBitWidth();
    APInt v = kind == ReduceKind::Sum    ? APInt(w, 0)
              : kind == ReduceKind::Prod ? APInt(w, 1)
              : kind == ReduceKind::Max  ? APInt::getSignedMinValue(w)
                                         : APInt::getSignedMaxValue(w);
    init = b.getIntegerAttr(et, v);
  }
  Value acc = filled(loc, outShape, init);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, outExprs, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, ValueRange{v}, ValueRange{acc}, maps,
      iters, [&](OpBuilder &bb, Location l, ValueRange args) {
        Value x = args[0], y = args[1], r;
        switch (kind) {
        case ReduceKind::Sum:
          r = f ? Value(arith::AddFOp::create(bb, l, x, y))
                : Value(arith::AddIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Prod:
          r = f ? Value(arith::MulFOp::create(bb, l, x, y))
                : Value(arith::MulIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Max:
          r = f ? Value(arith::MaximumFOp::create(bb, l, x, y))
                : Value(arith::MaxSIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Min:
          r = f ? Value(arith::MinimumFOp::create(bb, l, x, y))
                : Value(arith::MinSIOp::create(bb, l, x, y));
          break;
        }
        linalg::YieldOp::create(bb, l, r);
      });
  return op.getResult(0);
}

Value Importer::reduceKeepDims(Location loc, Value v, ArrayRef<int64_t> axes,
                               ReduceKind kind) {
  SmallVector<int64_t> keep = llvm::to_vector(shapeOf(v));
  for (int64_t a : axes)
    keep[a] = 1;
  return reshape(loc, reduce(loc, v, axes, kind), keep);
}

Value Importer::matmul(NodeContext &nc, Value a, Value bm) {
  Location loc = nc.loc;
  bool aVec = shapeOf(a).size() == 1, bVec = shapeOf(bm).size() == 1;
  if (aVec)
    a = reshape(loc, a, {1, shapeOf(a)[0]});
  if (bVec)
    bm = reshape(loc, bm, {shapeOf(bm)[0], 1});
  ArrayRef<int64_t> sa = shapeOf(a), sb = shapeOf(bm);
  int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2],
          n = sb.back();
  if (k != k2) {
    nc.error() << "contraction dimensions differ: " << a.getType() << " x "
               << bm.getType();
    return {};
  }
  Type et = elemOf(a);
  if (elemOf(bm) != et) {
    nc.error() << "operand element types differ: " << et << " vs "
               << elemOf(bm);
    return {};
  }
  // FP16/BF16 products accumulate in FP32 (as cuBLAS, onnxruntime and
  // torch do; K-long sums in FP16 lose ~sqrt(K) ulps), then round once.
  const bool narrow = isa<Float16Type, BFloat16Type>(et);
  Type accType = narrow ? b.getF32Type() : et;
  TypedAttr zero = isa<FloatType>(et)
                       ? TypedAttr(b.getFloatAttr(accType, 0.0))
                       : TypedAttr(b.getIntegerAttr(et, 0));
  SmallVector<int64_t> batchA(sa.drop_back(2)), batchB(sb.drop_back(2));
  SmallVector<int64_t> outShape;
  Value r;
  if (batchB.empty()) {
    // [..., M, K] x [K, N]: fold the batch into M, one 2-D matmul.
    int64_t rows = numElements(batchA) * m;
    Value a2 = reshape(loc, a, {rows, k});
    Value acc = filled(loc, {rows, n}, zero);
    Value mm = linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                        ValueRange{a2, bm}, ValueRange{acc})
                   .getResult(0);
    outShape = batchA;
    outShape.append({m, n});
    r = reshape(loc, mm, outShape);
  } else {
    // Broadcast the batch dims, flatten them, one batch_matmul.
    SmallVector<int64_t> batch;
    size_t rank = std::max(batchA.size(), batchB.size());
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i + batchA.size() >= rank ? batchA[i + batchA.size() - rank] : 1;
      int64_t db = i + batchB.size() >= rank ? batchB[i + batchB.size() - rank] : 1;
      if (da != db && da != 1 && db != 1) {
        nc.error() << "batch dimensions are not broadcast-compatible: "
                   << a.getType() << " x " << bm.getType();
        return {};
      }
      // Not max: a 1 broadcasts to 0 (fuzzing: batch 0 x 1 gave 1).
      batch.push_back(da == 1 ? db : da);
    }
    int64_t nb = numElements(batch);
    SmallVector<int64_t> fullA = batch, fullB = batch;
    fullA.append({m, k});
    fullB.append({k, n});
    Value a3 = reshape(loc, broadcastTo(loc, a, fullA), {nb, m, k});
    Value b3 = reshape(loc, broadcastTo(loc, bm, fullB), {nb, k, n});
    Value acc = filled(loc, {nb, m, n}, zero);
    Value mm = linalg::BatchMatmulOp::create(b, loc, TypeRange{acc.getType()},
                                             ValueRange{a3, b3},
                                             ValueRange{acc})
                   .getResult(0);
    outShape = batch;
    outShape.append({m, n});
    r = reshape(loc, mm, outShape);
  }
  if (narrow)
    r = generic(loc, {r}, shapeOf(r), et,
                [&](OpBuilder &bb, Location l, ValueRange v) -> Value {
                  return arith::TruncFOp::create(bb, l, et, v[0]);
                });
  // Drop the unit dims that promoted 1-D operands.
  if (aVec || bVec) {
    SmallVector<int64_t> s = outShape;
    if (bVec)
      s.pop_back();
    if (aVec)
      s.erase(s.end() - (bVec ? 1 : 2));
    r = reshape(loc, r, s);
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Size budgets
//===----------------------------------------------------------------------===//

std::string fp8::onnx_import::formatShapeSat(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "shape [";
  llvm::interleave(shape, os, "x");
  os << "]";
  int64_t n = numElementsSat(shape);
  if (n == INT64_MAX)
    os << " (over 2^63 elements)";
  else
    os << " (" << n << " elements)";
  return s;
}

LogicalResult Importer::checkConstantSize(NodeContext &nc,
                                          ArrayRef<int64_t> shape,
                                          Type elemType) {
  int64_t n = numElements(shape);
  if (n <= opts.maxConstantElements)
    return success();
  return nc.error() << "would create a constant of " << formatShapeSat(shape)
                    << " of " << elemType << ", over the importer's budget of "
                    << opts.maxConstantElements
                    << " elements for constants made from the model's data; "
                       "check the node's shape inputs";
}

/// Every value a node produces: a type no machine can hold is refused.
LogicalResult Importer::checkResultSize(NodeContext &nc, int i) {
  Value v = nc.results[i];
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return success();
  int64_t n = numElements(type.getShape());
  if (n > kMaxTensorElements)
    return nc.error() << "output #" << i << " ('" << nc.node.output(i)
                      << "') would have " << formatShapeSat(type.getShape())
                      << ", more elements than any machine holds";
  return success();
}

//===----------------------------------------------------------------------===//
// Graph walk
//===----------------------------------------------------------------------===//

Location Importer::graphLoc(StringRef what) {
  return NameLoc::get(StringAttr::get(ctx, what),
                      FileLineColLoc::get(ctx, fileName, 0, 0));
}

FailureOr<RankedTensorType>
Importer::inputType(const onnx::ValueInfoProto &vi, Location loc) {
  if (!vi.type().has_tensor_type())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' is not a tensor (sequences, maps and optionals "
                             "are not supported)";
  const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
  Type et = elementType(tt.elem_type());
  if (!et)
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has unsupported element type "
                          << onnxTypeName(tt.elem_type());
  auto given = opts.inputShapes.find(vi.name());
  bool hasGiven = given != opts.inputShapes.end();
  SmallVector<int64_t> shape;
  if (tt.has_shape()) {
    for (auto [i, dim] : llvm::enumerate(tt.shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (!hasGiven) {
        auto diag = emitError(loc) << "graph input '" << vi.name()
                                   << "' has dynamic dimension #" << i;
        if (dim.has_dim_param())
          diag << " ('" << dim.dim_param() << "')";
        diag << "; give a static shape with --input-shape " << vi.name()
             << "=D0xD1x...";
        return diag;
      }
      shape.push_back(ShapedType::kDynamic);
    }
  } else if (!hasGiven) {
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no shape; give one with --input-shape "
                          << vi.name() << "=D0xD1x...";
  }
  if (hasGiven) {
    ArrayRef<int64_t> g = given->second;
    if (tt.has_shape() && g.size() != shape.size())
      return emitError(loc) << "--input-shape for '" << vi.name() << "' has rank "
                            << g.size() << " but the model's input has rank "
                            << shape.size();
    for (size_t i = 0; i < shape.size(); ++i)
      if (!ShapedType::isDynamic(shape[i]) && shape[i] != g[i])
        return emitError(loc) << "--input-shape for '" << vi.name()
                              << "' gives dimension #" << i << " = " << g[i]
                              << " but the model fixes it to " << shape[i];
    shape.assign(g.begin(), g.end());
  }
  if (numElements(shape) > kMaxTensorElements)
    return emitError(loc) << "graph input '" << vi.name() << "' has "
                          << formatShapeSat(shape)
                          << ", more elements than any machine holds";
  return RankedTensorType::get(shape, et);
}

FailureOr<OwningOpRef<ModuleOp>>
Importer::importModel(const onnx::ModelProto &model) {
  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  if (model.ir_version() > 10)
    return emitError(fileLoc) << "unsupported ONNX IR version "
                              << model.ir_version() << " (at most 10)";
  bool haveDefault = false;
  for (const onnx::OperatorSetIdProto &os : model.opset_import()) {
    if (os.domain().empty() || os.domain() == "ai.onnx") {
      opset = os.version();
      haveDefault = true;
    }
  }
  if (!haveDefault)
    return emitError(fileLoc) << "model imports no default-domain (ai.onnx) opset";
  if (opset < detail::kOldestUpgradableOpset || opset > 21)
    return emitError(fileLoc)
           << "unsupported ai.onnx opset " << opset << " (supported: "
           << detail::kOldestUpgradableOpset
           << " to 21; below 13 through ONNX's version converter)";
  // Older exports: ONNX's own version converter rewrites the graph to
  // opset 13 (attribute-to-input moves, renamed ops), which the handlers
  // implement; they then see opset 13.
  if (opset < 13) {
    onnx::ModelProto upgraded;
    std::string why = detail::upgradeOpset(model, 13, upgraded);
    if (!why.empty())
      return emitError(fileLoc)
             << "ai.onnx opset " << opset
             << " could not be upgraded to 13 by ONNX's version converter: "
             << why << "; re-export the model with opset 13 or newer";
    return importModel(upgraded);
  }
  if (!model.has_graph())
    return emitError(fileLoc) << "model has no graph";

  OwningOpRef<ModuleOp> module(ModuleOp::create(fileLoc));
  if (failed(importGraph(model.graph(), *module)))
    return failure();
  if (failed(verify(*module)))
    return emitError(fileLoc) << "imported module failed to verify";
  return module;
}

LogicalResult Importer::importGraph(const onnx::GraphProto &graph,
                                    ModuleOp module) {
  llvm::StringSet<> initNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initNames.insert(t.name());

  // Arguments: graph inputs that are not initializers (pre-IR-4 models list
  // initializers as inputs too).
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> argInfos;
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (initNames.contains(vi.name()))
      continue;
    FailureOr<RankedTensorType> t = inputType(vi, graphLoc(vi.name()));
    if (failed(t))
      return failure();
    argTypes.push_back(*t);
    argInfos.push_back(&vi);
  }
  for (const auto &entry : opts.inputShapes)
    if (llvm::none_of(argInfos, [&](const onnx::ValueInfoProto *vi) {
          return vi->name() == entry.getKey();
        }))
      return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
             << "--input-shape names '" << entry.getKey()
             << "', which is not a graph input";

  b.setInsertionPointToEnd(module.getBody());
  std::string graphName = graph.name().empty() ? "main" : graph.name();
  auto func = func::FuncOp::create(b, graphLoc(graphName), "main",
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, vi] : llvm::enumerate(argInfos)) {
    func.setArgAttr(i, "onnx.name", b.getStringAttr(vi->name()));
    Value arg = entry->getArgument(i);
    values[vi->name()] = arg;
    if (isUnsignedONNXType(vi->type().tensor_type().elem_type())) {
      unsignedValues.insert(arg);
      // Signless MLIR integers lose uint8 vs int8; the model ABI reads the
      // ONNX type from here (lib/Target/ModelLibrary.cpp).
      func.setArgAttr(i, "onnx.dtype",
                      b.getI64IntegerAttr(
                          vi->type().tensor_type().elem_type()));
    }
  }
  b.setInsertionPointToStart(entry);

  for (const onnx::TensorProto &t : graph.initializer()) {
    Location loc = graphLoc(t.name());
    FailureOr<Value> ref = externalWeight(t, loc);
    if (failed(ref))
      return failure();
    if (*ref) {
      values[t.name()] = *ref;
      continue;
    }
    FailureOr<ElementsAttr> attr = tensorToAttr(t, loc, /*forceDense=*/false);
    if (failed(attr))
      return failure();
    Value v = constant(loc, *attr);
    values[t.name()] = v;
    if (isUnsignedONNXType(t.data_type()))
      unsignedValues.insert(v);
  }

  if (opts.fuseAttention)
    attention = std::make_unique<AttentionFusion>(*this, graph, values);
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return failure();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &vi : graph.output()) {
    Location loc = graphLoc(vi.name());
    Value v = values.lookup(vi.name());
    if (!v)
      return emitError(loc) << "graph output '" << vi.name()
                            << "' is not produced by any node, input or "
                               "initializer";
    // Check our shape propagation against whatever the model declares.
    if (vi.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
      Type et = elementType(tt.elem_type());
      if (et && et != elemOf(v))
        return emitError(loc) << "graph output '" << vi.name()
                              << "' is declared with element type " << et
                              << " but computes " << elemOf(v);
      if (tt.has_shape()) {
        ArrayRef<int64_t> s = shapeOf(v);
        bool mismatch = tt.shape().dim_size() != static_cast<int>(s.size());
        for (int d = 0; !mismatch && d < tt.shape().dim_size(); ++d)
          mismatch = tt.shape().dim(d).has_dim_value() &&
                     tt.shape().dim(d).dim_value() != s[d];
        if (mismatch)
          return emitError(loc)
                 << "graph output '" << vi.name()
                 << "' shape mismatch: the model declares a different shape "
                    "than the computed "
                 << v.getType();
      }
    }
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  // The run-time checks' status, last (the model ABI reads it).
  Value status = finishChecks(graphLoc(graphName));
  if (status) {
    results.push_back(status);
    resultTypes.push_back(status.getType());
  }
  func::ReturnOp::create(b, graphLoc(graphName), results);
  // Folding leaves the intermediate constants of shape subgraphs behind.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, vi] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, "onnx.name", b.getStringAttr(vi.name()));
    // As for the arguments: the ONNX type of unsigned results.
    if (isUnsigned(results[i])) {
      unsigned w = elemOf(results[i]).getIntOrFloatBitWidth();
      int dt = w == 8    ? onnx::TensorProto::UINT8
               : w == 16 ? onnx::TensorProto::UINT16
               : w == 32 ? onnx::TensorProto::UINT32
                         : onnx::TensorProto::UINT64;
      func.setResultAttr(i, "onnx.dtype", b.getI64IntegerAttr(dt));
    }
  }
  if (status) {
    func.setResultAttr(results.size() - 1, kCheckStatusAttr, b.getUnitAttr());
    func->setAttr(kChecksAttr,
                  b.getStrArrayAttr(SmallVector<StringRef>(
                      checkMessages.begin(), checkMessages.end())));
  }
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, size_t index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  Location loc = NameLoc::get(StringAttr::get(ctx, name),
                              FileLineColLoc::get(ctx, fileName, 0, 0));
  // The torch module that produced the node, where the exporter says.
  loc = withTorchModuleOf(node, loc);
  NodeContext nc(*this, node, loc, name);

  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return nc.error() << "unsupported op '" << node.op_type() << "' in domain '"
                      << node.domain() << "'";
  auto it = handlers.find(node.op_type());
  if (it == handlers.end())
    return nc.error() << "unsupported op type '" << node.op_type() << "'";

  for (const std::string &in : node.input()) {
    if (in.empty()) {
      nc.inputs.push_back(Value());
      continue;
    }
    Value v = values.lookup(in);
    if (!v)
      return nc.error() << "input '" << in
                        << "' is not defined (missing initializer, graph "
                           "input or producing node)";
    nc.inputs.push_back(v);
  }
  // Trailing omitted optional inputs are simply absent.
  while (!nc.inputs.empty() && !nc.inputs.back())
    nc.inputs.pop_back();

  if (!(attention && attention->fuse(nc)) && failed(it->second(nc)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (i >= static_cast<int>(nc.results.size()) || !nc.results[i])
      return nc.error() << "output #" << i << " ('" << node.output(i)
                        << "') is not supported";
    if (failed(checkResultSize(nc, i)))
      return failure();
    values[node.output(i)] = nc.results[i];
  }
  return success();
}
