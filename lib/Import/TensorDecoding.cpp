//===- TensorDecoding.cpp - TensorProto decoding --------------------------===//
//
// Part of fp8-opt. ONNX data types to MLIR element types, and TensorProto
// (initializers, Constant values) to ElementsAttr: inline data in every
// field ONNX stores it in, external data files confined to the model's
// directory, and external weights left in their files
// (ImportOptions::externalWeightMinBytes).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

// ONNX 1.12's onnx.proto predates the FP8 types (ONNX 1.14, IR 9); the
// field is a plain int32, so the values parse and are matched here.
static constexpr int kFLOAT8E4M3FN = 17;
static constexpr int kFLOAT8E4M3FNUZ = 18;
static constexpr int kFLOAT8E5M2 = 19;
static constexpr int kFLOAT8E5M2FNUZ = 20;

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

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
