//===- ExternalWeights.cpp - Weights in a file beside the library ---------===//
//
// Part of fp8-opt. See include/fp8/Target/ExternalWeights.h and
// docs/Weights.md.
//
//===----------------------------------------------------------------------===//

#include "fp8/Target/ExternalWeights.h"
#include "fp8/Target/ModelLibrary.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8rt/fp8w.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fcntl.h>
#include <unistd.h>

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

/// A constant global that may live in the weights file.
struct Candidate {
  LLVM::GlobalOp global;
  ExternalWeights::Tensor tensor;
};

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
  Candidate c{global, {global.getSymName().str(), *dtype,
                       SmallVector<int64_t>(type.getShape()), data}};
  c.tensor.bytes = bytes;
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

/// A weight that stayed in its file: an uninitialized constant global that
/// the module's fp8.external_weights table describes.
FailureOr<std::optional<Candidate>>
asFileCandidate(LLVM::GlobalOp global, DictionaryAttr table, StringRef dir) {
  if (!table || !global.getConstant() || global.getValueOrNull())
    return std::optional<Candidate>();
  auto entry = table.getAs<DictionaryAttr>(global.getSymName());
  if (!entry)
    return std::optional<Candidate>();
  auto name = entry.getAs<StringAttr>("name");
  auto location = entry.getAs<StringAttr>("location");
  auto offset = entry.getAs<IntegerAttr>("offset");
  auto length = entry.getAs<IntegerAttr>("length");
  auto shape = arrayShape(global.getGlobalType());
  std::optional<int> dtype = shape ? abiDtype(shape->first) : std::nullopt;
  if (!name || !location || !offset || !length || !dtype || dir.empty())
    return global.emitError()
           << "external weight @" << global.getSymName()
           << ": incomplete " << kExternalWeightsAttr << " entry or no "
           << kExternalDataDirAttr << " on the module";
  SmallString<256> path(dir);
  llvm::sys::path::append(path, location.getValue());
  Candidate c{global, {global.getSymName().str(), *dtype, shape->second, {}}};
  c.tensor.sourcePath = std::string(path);
  c.tensor.sourceOffset = offset.getInt();
  c.tensor.bytes = length.getInt();
  uint64_t want = fp8w_dtype_size(*dtype);
  for (int64_t d : shape->second)
    want *= uint64_t(d);
  if (want != c.tensor.bytes)
    return global.emitError() << "external weight @" << global.getSymName()
                              << ": " << c.tensor.bytes << " bytes in "
                              << location.getValue() << ", the global holds "
                              << want;
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
               c64(c.tensor.name.size()), c64(c.tensor.bytes),
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

/// Ties the file to the library: the model's signature (whose fingerprint
/// covers the compiled computation and its constants) and the table.
uint64_t fingerprintOf(StringRef signature, ArrayRef<Candidate> moved) {
  fp8w_hash h;
  fp8w_hash_init(&h);
  fp8w_hash_update(&h, signature.data(), signature.size());
  for (const Candidate &c : moved) {
    const ExternalWeights::Tensor &t = c.tensor;
    std::string line = t.name + " " + std::to_string(t.dtype);
    for (int64_t d : t.shape)
      line += " " + std::to_string(d);
    // A weight read from its file is tied by where it is, not its bytes
    // (the compiler never reads them); the file's hashes guard the bytes.
    if (t.sourcePath.empty())
      line += " " +
              std::to_string(fp8w_hash_bytes(t.data.data(), t.data.size()));
    else
      line += " file " + llvm::sys::path::filename(t.sourcePath).str() + " " +
              std::to_string(t.sourceOffset) + " " + std::to_string(t.bytes);
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
  SmallVector<Candidate> moved, inFiles;
  uint64_t total = 0;
  auto table = module->getAttrOfType<DictionaryAttr>(kExternalWeightsAttr);
  StringRef dir;
  if (auto d = module->getAttrOfType<StringAttr>(kExternalDataDirAttr))
    dir = d.getValue();
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    FailureOr<std::optional<Candidate>> c = asFileCandidate(global, table, dir);
    if (failed(c))
      return failure();
    if (*c)
      inFiles.push_back(std::move(**c));
  }
  if (!inFiles.empty() && options.mode == WeightsMode::Embed)
    return module.emitError()
           << "the module references " << inFiles.size()
           << " weights that stay in their files (fp8.external_weight): they "
              "go to a weights file, not with --weights=embed";
  if (options.mode != WeightsMode::Embed)
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (std::optional<Candidate> c = asCandidate(global, options.minBytes)) {
        total += c->tensor.bytes;
        moved.push_back(std::move(*c));
      }
  // Auto: out past the threshold, or when there is a weights file anyway.
  if (options.mode == WeightsMode::Auto && inFiles.empty() &&
      total <= options.autoBytes) {
    moved.clear();
    total = 0;
  }
  for (Candidate &c : inFiles) {
    total += c.tensor.bytes;
    moved.push_back(std::move(c));
  }
  ExternalWeights out;
  out.bytes = total;
  if (!moved.empty() && options.fileName.empty())
    return module.emitError("external weights need a weights file name");
  if (!moved.empty()) {
    out.fingerprint = fingerprintOf(signature, moved);
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
    emitTable(module, moved, slots, out.fingerprint, options.fileName);
  } else {
    addEmptyWeightsTable(module);
  }
  for (Candidate &c : moved)
    out.tensors.push_back(std::move(c.tensor));
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

/// Copies a weight that stayed in its file into the weights file, in
/// pieces: the compiler never holds more than one.
static std::string streamFromFile(fp8w_writer *w,
                                  const ExternalWeights::Tensor &t) {
  int fd = ::open(t.sourcePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "cannot read external data " + t.sourcePath + ": " +
           std::strerror(errno);
  std::vector<char> buffer(std::min<uint64_t>(t.bytes, 16u << 20));
  uint64_t done = 0;
  std::string error;
  while (done < t.bytes) {
    size_t want = std::min<uint64_t>(buffer.size(), t.bytes - done);
    ssize_t got = ::pread(fd, buffer.data(), want, t.sourceOffset + done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      error = "cannot read external data " + t.sourcePath + " for '" +
              t.name + "': " +
              (got < 0 ? std::strerror(errno) : "the file ends early");
      break;
    }
    if (fp8w_writer_write(w, buffer.data(), size_t(got)) != 0) {
      error = "writing the weights file failed: " +
              std::string(std::strerror(errno));
      break;
    }
    done += uint64_t(got);
  }
  ::close(fd);
  return error;
}

std::string fp8::writeWeightsFile(const ExternalWeights &weights,
                                  StringRef path) {
  std::vector<fp8w_tensor_desc> descs;
  for (const ExternalWeights::Tensor &t : weights.tensors)
    descs.push_back({t.name.data(), t.name.size(), t.dtype,
                     static_cast<uint32_t>(t.shape.size()), t.shape.data()});
  std::string file = path.str();
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return "cannot write the weights file " + file + ": " +
           std::strerror(errno);
  char error[512] = "";
  std::string result;
  fp8w_writer *w = fp8w_writer_create(fd, weights.fingerprint, descs.data(),
                                      descs.size(), error, sizeof(error));
  if (!w) {
    result = error;
  } else {
    for (const ExternalWeights::Tensor &t : weights.tensors) {
      if (!t.sourcePath.empty()) {
        result = streamFromFile(w, t);
        if (!result.empty())
          break;
      } else if (fp8w_writer_write(w, t.data.data(), t.data.size()) != 0) {
        break;
      }
    }
    if (!result.empty())
      fp8w_writer_abort(w);
    else if (fp8w_writer_finish(w, error, sizeof(error)) != 0)
      result = error;
  }
  if (::close(fd) != 0 && result.empty())
    result = "cannot write the weights file " + file + ": " +
             std::strerror(errno);
  if (!result.empty() && result.rfind(file, 0) != 0)
    result = file + ": " + result;
  return result;
}
