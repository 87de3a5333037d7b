//===- ExternalWeights.cpp - Weights in a file beside the library ---------===//
//
// Part of fp8-opt. See include/fp8/Target/ExternalWeights.h and
// docs/Weights.md.
//
//===----------------------------------------------------------------------===//

#include "fp8/Target/ExternalWeights.h"
#include "fp8/Target/ModelLibrary.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Support/OutputFiles.h"
#include "fp8rt/fp8w.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>

using namespace mlir;
using namespace mlir::fp8;

std::optional<WeightsMode> fp8::parseWeightsMode(StringRef text) {
  return llvm::StringSwitch<std::optional<WeightsMode>>(text)
      .Case("auto", WeightsMode::Auto)
      .Case("embed", WeightsMode::Embed)
      .Case("external", WeightsMode::External)
      .Default(std::nullopt);
}

namespace {

namespace pack = fp8rt::pack;

/// A constant global that may live in the weights file.
struct Candidate {
  LLVM::GlobalOp global;
  pack::Tensor tensor;
  /// A literal's bytes (owned by the MLIRContext).
  ArrayRef<char> data;
  /// Its size in the file.
  uint64_t bytes = 0;
};

/// Bytes of a tensor of `dtype` and `shape` (the caller checked that they
/// fit: the globals hold them).
uint64_t tensorBytes(int dtype, ArrayRef<int64_t> shape) {
  uint64_t bytes = fp8w_dtype_size(dtype);
  for (int64_t d : shape)
    bytes *= uint64_t(d);
  return bytes;
}

/// The global's bytes as the library would hold them, when they can move
/// out: a constant with a non-splat dense or resource value of an element
/// type the file has, at least `minBytes` long. Splats (a few bytes in the
/// IR; zero ones cost nothing in the library) and i1 (bit-packed in MLIR's
/// attributes, a byte per element in memory) stay.
std::optional<Candidate> asCandidate(LLVM::GlobalOp global, uint64_t minBytes) {
  if (!global.getConstant() ||
      global.getSymName().starts_with(kModelStatePrefix))
    return std::nullopt;
  Attribute value = global.getValueOrNull();
  if (!value)
    return std::nullopt; // uninitialized: see asFileCandidate
  ShapedType type;
  ArrayRef<char> data;
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    type = dense.getType();
    data = dense.getRawData();
  } else if (auto resource =
                 dyn_cast_if_present<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    type = resource.getType();
    data = blob->getData();
  } else {
    return std::nullopt;
  }
  Type elt = type.getElementType();
  std::optional<int> dtype = abiDtype(elt);
  if (elt.isInteger(1) || !dtype || !type.hasStaticShape())
    return std::nullopt;
  uint64_t bytes = fp8w_dtype_size(*dtype) * uint64_t(type.getNumElements());
  if (bytes == 0 || data.size() != bytes || bytes < minBytes)
    return std::nullopt;
  Candidate c;
  c.global = global;
  c.tensor.name = global.getSymName().str();
  c.tensor.dtype = *dtype;
  c.tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  c.tensor.kind = pack::Tensor::Kind::Literal;
  c.tensor.hash = fp8w_hash_bytes(data.data(), data.size());
  c.data = data;
  c.bytes = bytes;
  return c;
}

/// Element type and shape of an LLVM global's value type (nested arrays of
/// a scalar).
std::optional<std::pair<Type, SmallVector<int64_t>>> arrayShape(Type t) {
  SmallVector<int64_t> shape;
  while (auto array = dyn_cast<LLVM::LLVMArrayType>(t)) {
    shape.push_back(array.getNumElements());
    t = array.getElementType();
  }
  if (!t.isIntOrFloat())
    return std::nullopt;
  return std::make_pair(t, shape);
}

/// The packer's quantization from a packed weight's table entry
/// (fp8-materialize-external-weights' describeQuantization).
std::optional<pack::Quantization> quantizationOf(DictionaryAttr entry) {
  auto format = entry.getAs<StringAttr>("format");
  auto block = entry.getAs<DenseI64ArrayAttr>("block");
  auto scaling = entry.getAs<StringAttr>("scaling");
  auto eps = entry.getAs<FloatAttr>("eps");
  auto pow2 = entry.getAs<BoolAttr>("pow2");
  auto rceil = entry.getAs<BoolAttr>("rceil");
  auto permutation = entry.getAs<DenseI64ArrayAttr>("permutation");
  auto dataShape = entry.getAs<DenseI64ArrayAttr>("data_shape");
  if (!format || !block || !scaling || !eps || !pow2 || !rceil ||
      !permutation || !dataShape ||
      (format.getValue() != "e4m3" && format.getValue() != "e5m2") ||
      (scaling.getValue() != "current" && scaling.getValue() != "mx"))
    return std::nullopt;
  pack::Quantization q;
  q.format = format.getValue() == "e4m3" ? pack::kFloat8E4M3FN
                                         : pack::kFloat8E5M2;
  q.block.assign(block.asArrayRef().begin(), block.asArrayRef().end());
  q.scaling = scaling.getValue() == "mx" ? pack::Quantization::Scaling::MX
                                         : pack::Quantization::Scaling::Current;
  q.eps = eps.getValue().convertToFloat();
  q.pow2 = pow2.getValue();
  q.rceil = rceil.getValue();
  q.permutation.assign(permutation.asArrayRef().begin(),
                       permutation.asArrayRef().end());
  q.dataShape.assign(dataShape.asArrayRef().begin(),
                     dataShape.asArrayRef().end());
  return q;
}

/// Fills `t`'s kind, source and (packed data or scales) quantization from
/// a table entry; a copy takes `t`'s dtype and shape as its source's, a
/// packed tensor gets the dtype its quantization makes. Returns why the
/// entry is incomplete, or "".
std::string describeFileTensor(DictionaryAttr entry, pack::Tensor &t) {
  auto name = entry.getAs<StringAttr>("name");
  auto location = entry.getAs<StringAttr>("location");
  auto offset = entry.getAs<IntegerAttr>("offset");
  auto length = entry.getAs<IntegerAttr>("length");
  auto kind = entry.getAs<StringAttr>("kind");
  if (!name || !location || !offset || !length)
    return "incomplete " + std::string(kExternalWeightsAttr) + " entry";
  t.source.name = name.getValue().str();
  t.source.location = location.getValue().str();
  t.source.offset = offset.getInt();
  t.source.length = length.getInt();
  if (!kind || kind.getValue() == "copy") {
    t.kind = pack::Tensor::Kind::Copy;
    t.source.dtype = t.dtype;
    t.source.shape = t.shape;
    const uint64_t bytes = tensorBytes(t.dtype, t.shape);
    if (bytes != t.source.length)
      return std::to_string(t.source.length) + " bytes in " +
             t.source.location + ", the global holds " + std::to_string(bytes);
    return "";
  }
  auto sourceType = entry.getAs<TypeAttr>("source_type");
  auto sourceTensor =
      sourceType ? dyn_cast<RankedTensorType>(sourceType.getValue()) : nullptr;
  // (-1: no source type, or one the ABI has no code for.)
  const int sourceDtype =
      sourceTensor ? abiDtype(sourceTensor.getElementType()).value_or(-1) : -1;
  if (kind.getValue() == "round") {
    auto permutation = entry.getAs<DenseI64ArrayAttr>("permutation");
    if (sourceDtype < 0 || !permutation)
      return "incomplete rounded weight entry";
    t.kind = pack::Tensor::Kind::Round;
    t.source.dtype = sourceDtype;
    t.source.shape.assign(sourceTensor.getShape().begin(),
                          sourceTensor.getShape().end());
    t.permutation.assign(permutation.asArrayRef().begin(),
                         permutation.asArrayRef().end());
    return "";
  }
  std::optional<pack::Quantization> q = quantizationOf(entry);
  if (sourceDtype < 0 || !q ||
      (kind.getValue() != "data" && kind.getValue() != "scale"))
    return "incomplete packed weight entry";
  t.kind = kind.getValue() == "data" ? pack::Tensor::Kind::Data
                                     : pack::Tensor::Kind::Scale;
  t.source.dtype = sourceDtype;
  t.source.shape.assign(sourceTensor.getShape().begin(),
                        sourceTensor.getShape().end());
  t.quant = std::move(*q);
  // FP8 types are i8 in the LLVM dialect: the file says what they are.
  t.dtype = t.kind == pack::Tensor::Kind::Data ? t.quant.format
                                               : t.quant.scaleDtype();
  return "";
}

/// A weight that stays in its file, copied or quantized by the packer, or
/// packed weights concatenated along their first dimension: an
/// uninitialized constant global that the module's fp8.external_weights
/// table describes.
FailureOr<std::optional<Candidate>> asFileCandidate(LLVM::GlobalOp global,
                                                    DictionaryAttr table) {
  if (!table || !global.getConstant() || global.getValueOrNull())
    return std::optional<Candidate>();
  auto entry = table.getAs<DictionaryAttr>(global.getSymName());
  if (!entry)
    return std::optional<Candidate>();
  auto fail = [&](const Twine &why) {
    return global.emitError()
           << "external weight @" << global.getSymName() << ": " << why;
  };
  auto shape = arrayShape(global.getGlobalType());
  std::optional<int> dtype = shape ? abiDtype(shape->first) : std::nullopt;
  if (!dtype)
    return fail("incomplete " + Twine(kExternalWeightsAttr) + " entry");
  Candidate c;
  c.global = global;
  pack::Tensor &t = c.tensor;
  t.name = global.getSymName().str();
  t.dtype = *dtype;
  t.shape.assign(shape->second.begin(), shape->second.end());
  auto kind = entry.getAs<StringAttr>("kind");
  if (kind && kind.getValue() == "concat") {
    auto parts = entry.getAs<ArrayAttr>("parts");
    if (!parts || parts.empty())
      return fail("a concatenation without parts");
    t.kind = pack::Tensor::Kind::Concat;
    for (auto [i, attr] : llvm::enumerate(parts)) {
      auto partEntry = dyn_cast<DictionaryAttr>(attr);
      pack::Tensor &part = t.parts.emplace_back();
      part.name = t.name + "[" + std::to_string(i) + "]";
      std::string why =
          partEntry ? describeFileTensor(partEntry, part) : "not a dictionary";
      if (why.empty() && part.kind == pack::Tensor::Kind::Copy)
        why = "a copy";
      if (!why.empty())
        return fail("part " + Twine(i) + ": " + why);
      part.shape = part.kind == pack::Tensor::Kind::Data
                       ? part.quant.dataShape
                       : part.quant.scaleShape(part.source.shape);
    }
    t.dtype = t.parts.front().dtype;
  } else if (std::string why = describeFileTensor(entry, t); !why.empty()) {
    return fail(why);
  }
  c.bytes = tensorBytes(t.dtype, t.shape);
  return std::optional<Candidate>(std::move(c));
}

/// `__fp8_weight_<name>`: where the host code finds the weight at run time.
LLVM::GlobalOp createSlot(OpBuilder &b, Location loc, StringRef name) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto slot = LLVM::GlobalOp::create(b, loc, ptr, /*isConstant=*/false,
                                     LLVM::Linkage::Internal,
                                     ("__fp8_weight_" + name).str(),
                                     Attribute());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&slot.getInitializerRegion()));
  LLVM::ReturnOp::create(b, loc, ValueRange{LLVM::ZeroOp::create(b, loc, ptr)});
  return slot;
}

/// Host code loads the slot where it took the global's address.
void redirectUses(ModuleOp module, const llvm::StringMap<LLVM::GlobalOp> &to) {
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  SmallVector<LLVM::AddressOfOp> uses;
  module.walk([&](LLVM::AddressOfOp a) {
    if (to.count(a.getGlobalName()))
      uses.push_back(a);
  });
  for (LLVM::AddressOfOp a : uses) {
    OpBuilder b(a);
    Value slot = LLVM::AddressOfOp::create(b, a.getLoc(),
                                           to.lookup(a.getGlobalName()));
    Value loaded = LLVM::LoadOp::create(b, a.getLoc(), ptr, slot);
    a.getResult().replaceAllUsesWith(loaded);
    a.erase();
  }
}

/// A constant byte string global.
LLVM::GlobalOp createString(OpBuilder &b, Location loc, StringRef symbol,
                            StringRef text, LLVM::Linkage linkage) {
  std::string bytes = text.str();
  bytes.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, linkage,
                                symbol, b.getStringAttr(bytes));
}

/// The shim's view: {name, name bytes, bytes, dtype, slot} per weight, then
/// a NULL name; the fingerprint; the file's name (fp8rt's model_shim.c).
void emitTable(ModuleOp module, ArrayRef<Candidate> moved,
               ArrayRef<LLVM::GlobalOp> slots, uint64_t fingerprint,
               StringRef fileName) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  SmallVector<LLVM::GlobalOp> names;
  for (auto [i, c] : llvm::enumerate(moved))
    names.push_back(createString(b, loc,
                                 ("__fp8_wname_" + Twine(i)).str(),
                                 c.tensor.name, LLVM::Linkage::Internal));
  auto entry = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i64, i64, i64, ptr});
  auto tableType = LLVM::LLVMArrayType::get(entry, moved.size() + 1);
  auto table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true,
                                      LLVM::Linkage::External,
                                      "__fp8_model_weights", Attribute());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&table.getInitializerRegion()));
    auto c64 = [&](uint64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    Value array = LLVM::UndefOp::create(b, loc, tableType);
    auto fill = [&](int64_t i, ArrayRef<Value> fields) {
      Value e = LLVM::UndefOp::create(b, loc, entry);
      for (auto [f, v] : llvm::enumerate(fields))
        e = LLVM::InsertValueOp::create(b, loc, e, v,
                                        ArrayRef<int64_t>{int64_t(f)});
      array =
          LLVM::InsertValueOp::create(b, loc, array, e, ArrayRef<int64_t>{i});
    };
    for (auto [i, c] : llvm::enumerate(moved))
      fill(i, {LLVM::AddressOfOp::create(b, loc, names[i]),
               c64(c.tensor.name.size()), c64(c.bytes),
               c64(c.tensor.dtype), LLVM::AddressOfOp::create(b, loc, slots[i])});
    Value null = LLVM::ZeroOp::create(b, loc, ptr);
    fill(moved.size(), {null, c64(0), c64(0), c64(0), null});
    LLVM::ReturnOp::create(b, loc, array);
  }
  LLVM::GlobalOp::create(b, loc, i64, /*isConstant=*/true,
                         LLVM::Linkage::External,
                         "__fp8_model_weights_fingerprint",
                         b.getI64IntegerAttr(fingerprint));
  createString(b, loc, "__fp8_model_weights_file", fileName,
               LLVM::Linkage::External);
}

/// Where a tensor of the model's files comes from and how it is made (not
/// its bytes), for the fingerprint.
std::string fileOrigin(const pack::Tensor &t) {
  std::string line = " file " + t.source.location + " " +
                     std::to_string(t.source.offset) + " " +
                     std::to_string(t.source.length) + " " +
                     std::to_string(t.source.dtype);
  if (t.kind == pack::Tensor::Kind::Copy)
    return line;
  if (t.kind == pack::Tensor::Kind::Round) {
    line += " round :";
    for (int64_t d : t.permutation)
      line += " " + std::to_string(d);
    return line;
  }
  const pack::Quantization &q = t.quant;
  uint32_t epsBits;
  std::memcpy(&epsBits, &q.eps, sizeof(epsBits));
  line += (t.kind == pack::Tensor::Kind::Data ? " data " : " scale ") +
          std::to_string(q.format) + " " + std::to_string(int(q.scaling)) +
          " " + std::to_string(epsBits) + " " + std::to_string(q.pow2) + " " +
          std::to_string(q.rceil);
  for (auto *dims : {&q.block, &q.permutation, &q.dataShape}) {
    line += " :";
    for (int64_t d : *dims)
      line += " " + std::to_string(d);
  }
  return line;
}

/// Ties the file to the library: the model's signature (whose fingerprint
/// covers the compiled computation and its constants) and every tensor's
/// name, type and origin: a literal's bytes; a file tensor's place and
/// quantization, not its bytes (the compiler never reads them, and new
/// weights of the same graph pack for the same library: refit).
uint64_t fingerprintOf(StringRef signature, ArrayRef<Candidate> moved) {
  fp8w_hash h;
  fp8w_hash_init(&h);
  fp8w_hash_update(&h, signature.data(), signature.size());
  for (const Candidate &c : moved) {
    const pack::Tensor &t = c.tensor;
    std::string line = t.name + " " + std::to_string(t.dtype);
    for (int64_t d : t.shape)
      line += " " + std::to_string(d);
    if (t.kind == pack::Tensor::Kind::Literal) {
      line += " " + std::to_string(t.hash);
    } else if (t.kind == pack::Tensor::Kind::Concat) {
      line += " concat";
      for (const pack::Tensor &part : t.parts)
        line += " [" + fileOrigin(part) + "]";
    } else {
      line += fileOrigin(t);
    }
    line += "\n";
    fp8w_hash_update(&h, line.data(), line.size());
  }
  uint64_t v = fp8w_hash_digest(&h);
  return v ? v : 1; // 0 means "no check" to the reader
}

} // namespace

FailureOr<ExternalWeights>
fp8::externalizeWeights(ModuleOp module, StringRef signature,
                        const WeightsOptions &options) {
  std::vector<Candidate> moved, inFiles;
  uint64_t total = 0;
  auto table = module->getAttrOfType<DictionaryAttr>(kExternalWeightsAttr);
  ExternalWeights out;
  if (auto d = module->getAttrOfType<StringAttr>(kExternalDataDirAttr))
    out.dataDir = d.getValue().str();
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    FailureOr<std::optional<Candidate>> c = asFileCandidate(global, table);
    if (failed(c))
      return failure();
    if (*c)
      inFiles.push_back(std::move(**c));
  }
  if (!inFiles.empty() && out.dataDir.empty())
    return module.emitError()
           << "the module references weights in files but has no "
           << kExternalDataDirAttr << " (the model's directory)";
  if (!inFiles.empty() && options.mode == WeightsMode::Embed)
    return module.emitError()
           << "the module references " << inFiles.size()
           << " weights that stay in their files (fp8.external_weight): they "
              "go to a weights file, not with --weights=embed";
  if (options.mode != WeightsMode::Embed)
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (std::optional<Candidate> c = asCandidate(global, options.minBytes)) {
        total += c->bytes;
        moved.push_back(std::move(*c));
      }
  // Auto: the compiler's constants leave past the threshold only. Weights
  // in files always go to the weights file (the packer writes them from the
  // model's data, anywhere: constants left in the library keep it so).
  if (options.mode == WeightsMode::Auto && total <= options.autoBytes) {
    moved.clear();
    total = 0;
  }
  for (Candidate &c : inFiles) {
    total += c.bytes;
    moved.push_back(std::move(c));
  }
  out.bytes = total;
  if (!moved.empty() && options.fileName.empty())
    return module.emitError("external weights need a weights file name");
  if (!moved.empty()) {
    out.manifest.fingerprint = fingerprintOf(signature, moved);
    out.manifest.weightsFile = options.fileName;
    // Slots replace the globals; host code loads them.
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    llvm::StringMap<LLVM::GlobalOp> slotOf;
    SmallVector<LLVM::GlobalOp> slots;
    for (Candidate &c : moved) {
      b.setInsertionPoint(c.global);
      LLVM::GlobalOp slot = createSlot(b, c.global.getLoc(), c.tensor.name);
      slotOf[c.tensor.name] = slot;
      slots.push_back(slot);
    }
    redirectUses(module, slotOf);
    for (Candidate &c : moved) {
      // A use that is no address-of (another global's initializer taking
      // it) would dangle: refuse rather than emit a broken library.
      if (!SymbolTable::symbolKnownUseEmpty(c.global, module))
        return c.global.emitError()
               << "constant @" << c.tensor.name
               << " is referenced by more than host code; compile with "
                  "--weights=embed";
      c.global.erase();
      c.global = nullptr;
    }
    emitTable(module, moved, slots, out.manifest.fingerprint,
              options.fileName);
  } else {
    addEmptyWeightsTable(module);
  }
  for (Candidate &c : moved) {
    if (c.tensor.kind == fp8rt::pack::Tensor::Kind::Literal)
      out.literals[c.tensor.name] = c.data;
    out.manifest.tensors.push_back(std::move(c.tensor));
  }
  return out;
}

bool fp8::isWeightsTableGlobal(StringRef symbol) {
  return symbol.starts_with("__fp8_weight_") ||
         symbol.starts_with("__fp8_wname_") ||
         symbol.starts_with("__fp8_model_weights");
}

void fp8::addEmptyWeightsTable(ModuleOp module) {
  if (!module.lookupSymbol("__fp8_model_weights"))
    emitTable(module, {}, {}, 0, "");
}

std::string fp8::writeWeightsFile(const ExternalWeights &weights,
                                  StringRef path, bool verbose) {
  fp8rt::pack::PackOptions options;
  options.dataDir = weights.dataDir;
  options.verbose = verbose;
  options.writeLiteral = [&](const fp8rt::pack::Tensor &t,
                             fp8w_writer *w) -> std::string {
    ArrayRef<char> data = weights.literals.lookup(t.name);
    if (fp8w_writer_write(w, data.data(), data.size()) != 0)
      return "writing the weights file failed: " +
             std::string(std::strerror(errno));
    return "";
  };
  return fp8rt::pack::packWeights(weights.manifest, options, path.str());
}

std::string fp8::writeManifest(const ExternalWeights &weights,
                               StringRef path) {
  std::string json = fp8rt::pack::toJSON(weights.manifest);
  return writeOutput(path, [&](raw_ostream &os) { os << json; });
}
