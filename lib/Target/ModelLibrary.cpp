//===- ModelLibrary.cpp - Compiled models as shared libraries -------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Target/ModelLibrary.h"
#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Target/ExternalWeights.h"
#include "fp8/Import/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

std::optional<int> fp8::abiDtype(Type t) {
  if (t.isF32())
    return 1;
  if (t.isF64())
    return 11;
  if (t.isF16())
    return 10;
  if (t.isBF16())
    return 16;
  if (isa<Float8E4M3FNType>(t))
    return 17;
  if (isa<Float8E5M2Type>(t))
    return 19;
  if (isa<Float8E8M0FNUType>(t))
    return 24;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return 9;
    case 8:
      return i.isUnsigned() ? 2 : 3;
    case 16:
      return 5;
    case 32:
      return 6;
    case 64:
      return 7;
    }
  }
  return std::nullopt;
}

namespace {
/// `dynamic`: the function has dynamic dimensions (kDimsAttr), whose sizes
/// are the strings of each tensor's kShapeAttr.
LogicalResult appendTensor(std::string &sig, Location loc, Type type,
                           DictionaryAttr attrs, StringRef kind, unsigned i,
                           bool dynamic) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  ArrayAttr sizes =
      dynamic && attrs ? attrs.getAs<ArrayAttr>(fp8::kShapeAttr) : ArrayAttr();
  if (!tensor || (!tensor.hasStaticShape() &&
                  (!sizes || sizes.size() != size_t(tensor.getRank()))))
    return emitError(loc) << kind << " " << i << " has type " << type
                          << ": a model library needs static shapes, or "
                             "bounds for its dynamic dimensions (give them "
                             "with --input-shape)";
  std::optional<int> dtype = fp8::abiDtype(tensor.getElementType());
  // The importer records ONNX's own element type where MLIR's signless
  // integers lose it (uint8 vs int8).
  if (attrs)
    if (auto onnxType = attrs.getAs<IntegerAttr>("onnx.dtype"))
      dtype = onnxType.getInt();
  if (!dtype)
    return emitError(loc) << kind << " " << i << " has element type "
                          << tensor.getElementType()
                          << ", which the model ABI cannot pass";
  std::string name = kind.str() + std::to_string(i);
  if (attrs)
    if (auto n = attrs.getAs<StringAttr>("onnx.name"))
      name = n.str();
  if (name.find('\n') != std::string::npos)
    return emitError(loc) << kind << " name contains a newline";
  sig += std::to_string(*dtype) + " " + std::to_string(tensor.getRank());
  for (auto [d, size] : llvm::enumerate(tensor.getShape())) {
    if (!ShapedType::isDynamic(size)) {
      sig += " " + std::to_string(size);
      continue;
    }
    auto expr = dyn_cast<StringAttr>(sizes[d]);
    if (!expr || expr.getValue().empty() ||
        expr.getValue().find_first_of(" \n") != StringRef::npos)
      return emitError(loc) << kind << " " << i << ": dimension " << d
                            << " has no size in " << fp8::kShapeAttr;
    sig += " " + expr.str();
  }
  sig += " " + std::to_string(name.size()) + " " + name + "\n";
  return success();
}
} // namespace

/// Mixes `v` into the running hash `h` (order-dependent, deterministic
/// across processes, unlike llvm::hash_combine).
static uint64_t mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

/// A hash of what the compiled code computes: every op's name, how it is
/// wired (its operands, numbered in walk order), result types and
/// attributes, constants (weights) by their bytes. Locations are left out,
/// so moving the model file changes nothing.
static uint64_t computeFingerprint(ModuleOp module) {
  uint64_t h = 0;
  auto mixText = [&](StringRef text) { h = mix(h, llvm::xxh3_64bits(text)); };
  std::string text;
  DenseMap<Value, uint64_t> numbers;
  auto number = [&](Value v) {
    return numbers.try_emplace(v, numbers.size()).first->second;
  };
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    mixText(op->getName().getStringRef());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          h = mix(h, number(arg));
    for (Value operand : op->getOperands())
      h = mix(h, number(operand));
    for (Value result : op->getResults())
      h = mix(h, number(result));
    for (Type t : op->getResultTypes()) {
      text.clear();
      llvm::raw_string_ostream(text) << t;
      mixText(text);
    }
    for (NamedAttribute attr : op->getAttrs()) {
      // Where the model's files are is no part of what it computes.
      if (attr.getName() == fp8::kExternalDataDirAttr)
        continue;
      mixText(attr.getName().getValue());
      Attribute value = attr.getValue();
      if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
        h = mix(h, dense.isSplat());
        mixText(
            StringRef(dense.getRawData().data(), dense.getRawData().size()));
      } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
        AsmResourceBlob *blob = resource.getRawHandle().getBlob();
        ArrayRef<char> data = blob ? blob->getData() : ArrayRef<char>();
        mixText(StringRef(data.data(), data.size()));
      } else {
        text.clear();
        llvm::raw_string_ostream(text) << value;
        mixText(text);
      }
      if (auto typed = dyn_cast<TypedAttr>(value)) {
        text.clear();
        llvm::raw_string_ostream(text) << typed.getType();
        mixText(text);
      }
    }
  });
  return h;
}

/// Moves the run-time check status result (fp8::kCheckStatusAttr) of `func`
/// to the end; returns whether it has one.
static bool moveCheckStatusLast(func::FuncOp func) {
  int status = -1;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, fp8::kCheckStatusAttr))
      status = i;
  if (status < 0)
    return false;
  unsigned last = func.getNumResults() - 1;
  if (unsigned(status) == last || func.isExternal())
    return true;
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  SmallVector<Value> values(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  func.getAllResultAttrs(attrs);
  Value v = values[status];
  DictionaryAttr a = attrs[status];
  values.erase(values.begin() + status);
  attrs.erase(attrs.begin() + status);
  values.push_back(v);
  attrs.push_back(a);
  ret->setOperands(values);
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
  func.setAllResultAttrs(attrs);
  return true;
}

FailureOr<std::string> fp8::prepareModelFunction(ModuleOp module,
                                                 StringRef entryName) {
  auto func = module.lookupSymbol<func::FuncOp>(entryName);
  if (!func)
    return module.emitError() << "no function @" << entryName
                              << " to compile as the model";
  const bool checked = moveCheckStatusLast(func);
  FunctionType type = func.getFunctionType();
  const unsigned outputs = type.getNumResults() - (checked ? 1 : 0);
  SmallVector<StringRef> checks;
  if (checked) {
    auto messages = func->getAttrOfType<ArrayAttr>(fp8::kChecksAttr);
    if (!messages)
      return func.emitError() << "a check status result without the "
                              << fp8::kChecksAttr << " messages";
    for (Attribute m : messages)
      checks.push_back(cast<StringAttr>(m).getValue());
  }
  // Version 2: the header also counts the run-time checks, listed after the
  // tensors, and a fingerprint of the compiled computation ends it (state
  // files are tied to it). Version 3 (dynamic dimensions): the header also
  // counts the symbols, listed before the tensors as "<lo>..<hi> <len>
  // <name>", and a dynamic dimension is its polynomial over them.
  auto dims = func->getAttrOfType<ArrayAttr>(fp8::kDimsAttr);
  const bool dynamic = dims && !dims.empty();
  // Version 4 (outputs tied to inputs, fp8-kv-cache-in-place): the header
  // also counts the ties, listed after the checks as "<output> <input>";
  // it always counts the symbols (maybe 0).
  SmallVector<std::pair<unsigned, unsigned>> ties;
  for (unsigned r = 0; r < outputs; ++r)
    if (auto tied =
            func.getResultAttrOfType<IntegerAttr>(r, fp8::kTiedInputAttr)) {
      int64_t i = tied.getInt();
      if (i < 0 || i >= int64_t(type.getNumInputs()) ||
          type.getInput(i) != type.getResult(r))
        return func.emitError() << "output " << r << " is tied to input " << i
                                << ", which does not exist or has another "
                                   "type";
      if (dynamic)
        return func.emitError() << "output " << r << " is updated in place "
                                << "(tied to input " << i << "): that needs "
                                << "static shapes";
      ties.push_back({r, unsigned(i)});
    }
  const char *version = !ties.empty() ? "fp8rt-signature 4 "
                        : dynamic     ? "fp8rt-signature 3 "
                                      : "fp8rt-signature 2 ";
  std::string sig = std::string(version) + std::to_string(type.getNumInputs()) +
                    " " + std::to_string(outputs) + " " +
                    std::to_string(checks.size());
  if (!ties.empty())
    sig += " 0 " + std::to_string(ties.size()) + "\n";
  else if (dynamic) {
    sig += " " + std::to_string(dims.size()) + "\n";
    for (Attribute a : dims) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
      auto lo = d ? d.getAs<IntegerAttr>("lo") : IntegerAttr();
      auto hi = d ? d.getAs<IntegerAttr>("hi") : IntegerAttr();
      if (!name || !lo || !hi || lo.getInt() < 0 || hi.getInt() < lo.getInt() ||
          name.getValue().contains('\n'))
        return func.emitError() << "malformed " << fp8::kDimsAttr << ": " << a;
      sig += std::to_string(lo.getInt()) + ".." + std::to_string(hi.getInt()) +
             " " + std::to_string(name.size()) + " " + name.str() + "\n";
    }
  } else {
    sig += "\n";
  }
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(appendTensor(sig, func.getLoc(), type.getInput(i),
                            func.getArgAttrDict(i), "input", i, dynamic)))
      return failure();
  for (unsigned i = 0; i < outputs; ++i)
    if (failed(appendTensor(sig, func.getLoc(), type.getResult(i),
                            func.getResultAttrDict(i), "output", i, dynamic)))
      return failure();
  for (StringRef message : checks) {
    if (message.contains('\n') || message.contains('\0'))
      return func.emitError() << "a check message contains a newline";
    sig += std::to_string(message.size()) + " " + message.str() + "\n";
  }
  for (auto [output, input] : ties)
    sig += std::to_string(output) + " " + std::to_string(input) + "\n";
  sig += llvm::formatv("fingerprint {0:x-16}\n", computeFingerprint(module));
  // Recorded in the signature: the attributes have no meaning in LLVM IR.
  if (checked) {
    func.removeResultAttr(
        type.getNumResults() - 1,
        StringAttr::get(module.getContext(), fp8::kCheckStatusAttr));
    func->removeAttr(fp8::kChecksAttr);
  }
  if (dynamic) {
    // The entry point builds each memref's descriptor from the run's
    // dimensions: it needs every argument's static shape (-1: dynamic),
    // inputs, outputs, then the check status.
    SmallVector<Attribute> shapes;
    for (Type t : type.getInputs())
      shapes.push_back(DenseI64ArrayAttr::get(
          module.getContext(), cast<RankedTensorType>(t).getShape()));
    for (Type t : type.getResults())
      shapes.push_back(DenseI64ArrayAttr::get(
          module.getContext(), cast<RankedTensorType>(t).getShape()));
    module->setAttr(kModelArgShapesAttr,
                    ArrayAttr::get(module.getContext(), shapes));
    func->removeAttr(fp8::kDimsAttr);
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      func.removeArgAttr(i, StringAttr::get(module.getContext(),
                                            fp8::kShapeAttr));
    for (unsigned i = 0; i < type.getNumResults(); ++i)
      func.removeResultAttr(i, StringAttr::get(module.getContext(),
                                               fp8::kShapeAttr));
  }
  // Tensors without elements (e.g. the empty past of a cached decoder's
  // first step) carry no data, but a memref like 1x2x0x16 has no bare-pointer
  // form. (Dynamic models pass descriptors, where a size 0 is fine.) The signature above keeps their shapes; inside, an input becomes a
  // rank-1 tensor<0x...> whose uses read a tensor.empty of the real shape,
  // and an output returns a tensor<0x...>.
  if (!func.isExternal() && !dynamic) {
    Block &body = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    auto flat = [](Type t) -> RankedTensorType {
      auto tensor = dyn_cast<RankedTensorType>(t);
      if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() != 0 ||
          tensor.getRank() == 1)
        return {};
      return RankedTensorType::get({0}, tensor.getElementType());
    };
    for (BlockArgument arg : body.getArguments())
      if (RankedTensorType t = flat(arg.getType())) {
        auto type = cast<RankedTensorType>(arg.getType());
        Value empty = tensor::EmptyOp::create(b, arg.getLoc(), type.getShape(),
                                              type.getElementType());
        arg.replaceAllUsesWith(empty);
        arg.setType(t);
      }
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands())
      if (RankedTensorType t = flat(operand.get().getType()))
        operand.set(tensor::EmptyOp::create(b, ret.getLoc(), t.getShape(),
                                            t.getElementType()));
    func.setType(FunctionType::get(module.getContext(),
                                   body.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
  if (failed(SymbolTable::replaceAllSymbolUses(
          func, StringAttr::get(module.getContext(), kModelMainName), module)))
    return failure();
  func.setName(kModelMainName);
  return sig;
}

/// Byte size of a global's value type (arrays of scalars, scalars).
static std::optional<uint64_t> byteSize(Type t) {
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(t)) {
    std::optional<uint64_t> elt = byteSize(array.getElementType());
    if (!elt)
      return std::nullopt;
    return *elt * array.getNumElements();
  }
  // LLVM stores an i1 in an array as one byte (its alloc size).
  if (t.isInteger(1))
    return 1;
  if (t.isIntOrFloat() && t.getIntOrFloatBitWidth() % 8 == 0)
    return t.getIntOrFloatBitWidth() / 8;
  return std::nullopt;
}

/// The persistent state of the model (globals named fp8_state_*, made by
/// fp8-track-amax): a text table "<bytes> <name>" per line and an array of
/// pointers in the same order, for the runtime's save/load.
static LogicalResult addStateTable(ModuleOp module, OpBuilder &b) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<LLVM::GlobalOp> state;
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global.getSymName().starts_with(fp8::kModelStatePrefix))
      state.push_back(global);
  std::string names;
  for (LLVM::GlobalOp g : state) {
    std::optional<uint64_t> size = byteSize(g.getGlobalType());
    if (!size)
      return g.emitError() << "state global of unsupported type "
                           << g.getGlobalType();
    names += std::to_string(*size) + " " + g.getSymName().str() + "\n";
  }
  names.push_back('\0');
  LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), names.size()),
      /*isConstant=*/true, LLVM::Linkage::External, "__fp8_model_state_names",
      b.getStringAttr(names));
  // One slot more than needed: a zero-length array is not valid LLVM.
  auto tableType = LLVM::LLVMArrayType::get(ptr, state.size() + 1);
  auto table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true,
                                      LLVM::Linkage::External,
                                      "__fp8_model_state_table", Attribute());
  Block *init = b.createBlock(&table.getInitializerRegion());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(init);
  Value array = LLVM::UndefOp::create(b, loc, tableType);
  for (auto [i, g] : llvm::enumerate(state)) {
    Value address = LLVM::AddressOfOp::create(b, loc, g);
    array = LLVM::InsertValueOp::create(b, loc, array, address,
                                        ArrayRef<int64_t>{int64_t(i)});
  }
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  array = LLVM::InsertValueOp::create(b, loc, array, null,
                                      ArrayRef<int64_t>{int64_t(state.size())});
  LLVM::ReturnOp::create(b, loc, array);
  return success();
}

LogicalResult fp8::addModelEntryPoints(ModuleOp module, StringRef signature) {
  auto main = module.lookupSymbol<LLVM::LLVMFuncOp>(kModelMainName);
  if (!main)
    return module.emitError() << "no lowered @" << kModelMainName;
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i8 = IntegerType::get(ctx, 8);

  std::string text = signature.str();
  text.push_back('\0');
  auto arrayType = LLVM::LLVMArrayType::get(i8, text.size());
  LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                         LLVM::Linkage::External, "__fp8_model_signature",
                         b.getStringAttr(text));

  auto entryType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                               {ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, "__fp8_model_entry", entryType);
  Block *body = entry.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args;
  auto shapes = module->getAttrOfType<ArrayAttr>(kModelArgShapesAttr);
  if (shapes) {
    // Dynamic dimensions: main takes memref descriptors, expanded (allocated
    // and aligned pointer, offset, sizes, strides); the run's dimensions of
    // every tensor follow the data pointers (and the check status) in args.
    auto i64 = IntegerType::get(ctx, 64);
    const unsigned tensors = shapes.size();
    const bool checked = main.getNumArguments() !=
                         [&] {
                           unsigned n = 0;
                           for (Attribute a : shapes)
                             n += 3 + 2 * cast<DenseI64ArrayAttr>(a).size();
                           return n;
                         }();
    const unsigned slots = tensors + (checked ? 1 : 0);
    Value dimsSlot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                         ArrayRef<LLVM::GEPArg>{int32_t(slots)});
    Value dims = LLVM::LoadOp::create(b, loc, ptr, dimsSlot);
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    int32_t at = 0; // where this tensor's dimensions start in `dims`
    for (unsigned i = 0; i < slots; ++i) {
      // The check status is an int64[2].
      ArrayRef<int64_t> shape = i < tensors
                                    ? cast<DenseI64ArrayAttr>(shapes[i])
                                          .asArrayRef()
                                    : ArrayRef<int64_t>{2};
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value data = LLVM::LoadOp::create(b, loc, ptr, slot);
      SmallVector<Value> sizes;
      for (auto [d, size] : llvm::enumerate(shape)) {
        if (!ShapedType::isDynamic(size)) {
          sizes.push_back(constant(size));
          continue;
        }
        Value p = LLVM::GEPOp::create(
            b, loc, ptr, i64, dims,
            ArrayRef<LLVM::GEPArg>{at + int32_t(d)});
        sizes.push_back(LLVM::LoadOp::create(b, loc, i64, p));
      }
      if (i < tensors)
        at += shape.size();
      SmallVector<Value> strides(shape.size());
      Value stride = constant(1);
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        strides[d] = stride;
        stride = LLVM::MulOp::create(b, loc, stride, sizes[d]);
      }
      args.append({data, data, constant(0)});
      args.append(sizes);
      args.append(strides);
    }
    if (args.size() != main.getNumArguments())
      return main.emitError() << "takes " << main.getNumArguments()
                              << " arguments, not the " << args.size()
                              << " of its memref descriptors";
    for (auto [a, t] : llvm::zip(args, main.getArgumentTypes()))
      if (a.getType() != t)
        return main.emitError("its arguments are not memref descriptors of "
                              "the signature's tensors");
    module->removeAttr(kModelArgShapesAttr);
  }
  for (unsigned i = 0; !shapes && i < main.getNumArguments(); ++i) {
    if (!isa<LLVM::LLVMPointerType>(main.getArgumentTypes()[i]))
      return main.emitError() << "argument " << i
                              << " is not a bare pointer; lower with "
                                 "model-abi=true";
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  if (!isa<LLVM::LLVMVoidType>(main.getFunctionType().getReturnType()))
    return main.emitError("the lowered model still returns values; lower "
                          "with model-abi=true");
  LLVM::CallOp::create(b, loc, main, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  b.setInsertionPointToEnd(module.getBody());
  addEmptyWeightsTable(module);
  return addStateTable(module, b);
}

LogicalResult fp8::translateAndEmit(ModuleOp module, StringRef path,
                                    const CodegenOptions &options,
                                    bool emitLLVMIR) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "fp8_model");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");

  const llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target)
    return module.emitError() << "no LLVM target for " << triple.str() << ": "
                              << lookupError;
  std::string cpu = options.cpu, features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature.first(), feature.second);
    features = f.getString();
  } else if (cpu == "generic") {
    cpu = "";
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError() << "cannot create a target machine for "
                              << triple.str()
                              << " (cpu '" << options.cpu << "')";
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  auto optimize =
      makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return module.emitError() << "LLVM optimization failed: "
                              << llvm::toString(std::move(err));

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError() << "cannot write " << path << ": "
                              << ec.message();
  if (emitLLVMIR) {
    llvmModule->print(out.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return module.emitError("the target cannot emit object files");
    codegen.run(*llvmModule);
  }
  out.keep();
  return success();
}

/// Runs the C compiler driver as a linker with `args` (after the driver);
/// its output goes to `error` on failure.
static LogicalResult runLinker(ArrayRef<std::string> args, std::string &error) {
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName("cc");
  if (!driver)
    driver = llvm::sys::findProgramByName("gcc");
  if (!driver)
    driver = llvm::sys::findProgramByName("clang");
  if (!driver) {
    error = "no C compiler driver (cc, gcc or clang) on PATH to link with";
    return failure();
  }
  SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fp8-link", "log", log)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  SmallVector<StringRef> argv = {*driver};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*driver, argv, std::nullopt, redirects, 0,
                                     0, &execError);
  auto text = llvm::MemoryBuffer::getFile(log);
  llvm::sys::fs::remove(log);
  if (rc != 0) {
    error = "linking failed (" + *driver + "): " +
            (execError.empty() ? "" : execError + ": ") +
            (text ? (*text)->getBuffer().str() : std::string());
    return failure();
  }
  return success();
}

LogicalResult fp8::linkModelLibrary(StringRef object, StringRef runtimeArchive,
                                    StringRef output, std::string &error) {
  if (!llvm::sys::fs::exists(runtimeArchive)) {
    error = ("runtime library " + runtimeArchive +
             " not found (build target fp8rt_cpu or pass --runtime-lib)")
                .str();
    return failure();
  }
  // -Wl,--no-undefined: a model library must not depend on anything but
  // libc and libm (no LLVM or MLIR runtime at run time).
  // --whole-archive: nothing in the object refers to the ABI functions, the
  // archive's members must be linked all the same.
  return runLinker({"-shared", "-o", output.str(), object.str(),
                    "-Wl,--whole-archive", runtimeArchive.str(),
                    "-Wl,--no-whole-archive", "-lm", "-Wl,--no-undefined",
                    "-Wl,-z,noexecstack"},
                   error);
}

LogicalResult fp8::linkCUDAModelLibrary(StringRef object, StringRef shimArchive,
                                        StringRef runtimeArchive,
                                        StringRef cudaStubDir,
                                        StringRef output, std::string &error) {
  for (StringRef archive : {shimArchive, runtimeArchive})
    if (!llvm::sys::fs::exists(archive)) {
      error = ("CUDA runtime library " + archive +
               " not found (build fp8-opt where the CUDA toolkit is, or "
               "pass --runtime-lib)")
                  .str();
      return failure();
    }
  SmallString<256> stub(cudaStubDir);
  llvm::sys::path::append(stub, "libcuda.so");
  if (!llvm::sys::fs::exists(stub)) {
    error = ("the CUDA driver stub " + stub +
             " is missing: install the CUDA toolkit or set CUDA_ROOT")
                .str();
    return failure();
  }
  // No rpath to the stub: at run time the driver's libcuda.so.1 is used.
  return runLinker({"-shared", "-o", output.str(), object.str(),
                    "-Wl,--whole-archive", shimArchive.str(),
                    runtimeArchive.str(), "-Wl,--no-whole-archive",
                    "-L" + cudaStubDir.str(), "-lcuda", "-lstdc++",
                    "-lpthread", "-lm", "-Wl,--no-undefined",
                    "-Wl,-z,noexecstack"},
                   error);
}

LogicalResult fp8::redirectGlobalsToDevice(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<LLVM::GlobalOp> globals(module.getOps<LLVM::GlobalOp>());
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  struct DeviceGlobal {
    LLVM::GlobalOp host, slot;
    uint64_t bytes;
  };
  SmallVector<DeviceGlobal> device;
  llvm::StringMap<LLVM::GlobalOp> slotOf; // host global name -> its slot
  for (LLVM::GlobalOp g : globals) {
    // The weights table's slots already hold device addresses (the shim
    // uploads the weights file into them).
    if (isWeightsTableGlobal(g.getSymName()))
      continue;
    std::optional<uint64_t> size = byteSize(g.getGlobalType());
    if (!size)
      return g.emitError() << "global of unsupported type "
                           << g.getGlobalType()
                           << " cannot be placed in device memory";
    auto slot = LLVM::GlobalOp::create(
        b, loc, ptr, /*isConstant=*/false, LLVM::Linkage::Internal,
        ("__fp8_device_" + g.getSymName()).str(), Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.createBlock(&slot.getInitializerRegion()));
      LLVM::ReturnOp::create(b, loc,
                             ValueRange{LLVM::ZeroOp::create(b, loc, ptr)});
    }
    device.push_back({g, slot, *size});
    slotOf[g.getSymName()] = slot;
  }
  // Host code reads the slot instead of taking the global's address.
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    SmallVector<LLVM::AddressOfOp> uses;
    func.walk([&](LLVM::AddressOfOp a) { uses.push_back(a); });
    for (LLVM::AddressOfOp a : uses) {
      auto it = slotOf.find(a.getGlobalName());
      if (it == slotOf.end())
        continue;
      OpBuilder ub(a);
      Value slotAddress = LLVM::AddressOfOp::create(ub, a.getLoc(), it->second);
      Value device = LLVM::LoadOp::create(ub, a.getLoc(), ptr, slotAddress);
      a.replaceAllUsesWith(device);
      a.erase();
    }
  }
  // The table the shim walks: {host, bytes, slot} per global, then nulls.
  auto entry = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i64, ptr});
  auto tableType = LLVM::LLVMArrayType::get(entry, device.size() + 1);
  auto table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true,
                                      LLVM::Linkage::External,
                                      "__fp8_model_device_globals",
                                      Attribute());
  Block *init = b.createBlock(&table.getInitializerRegion());
  b.setInsertionPointToStart(init);
  Value array = LLVM::UndefOp::create(b, loc, tableType);
  auto fill = [&](int64_t i, Value host, Value bytes, Value slot) {
    Value e = LLVM::UndefOp::create(b, loc, entry);
    e = LLVM::InsertValueOp::create(b, loc, e, host, ArrayRef<int64_t>{0});
    e = LLVM::InsertValueOp::create(b, loc, e, bytes, ArrayRef<int64_t>{1});
    e = LLVM::InsertValueOp::create(b, loc, e, slot, ArrayRef<int64_t>{2});
    array = LLVM::InsertValueOp::create(b, loc, array, e, ArrayRef<int64_t>{i});
  };
  for (auto [i, p] : llvm::enumerate(device)) {
    Value bytes =
        LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(p.bytes));
    fill(i, LLVM::AddressOfOp::create(b, loc, p.host), bytes,
         LLVM::AddressOfOp::create(b, loc, p.slot));
  }
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  fill(device.size(), null,
       LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0)), null);
  LLVM::ReturnOp::create(b, loc, array);
  return success();
}

FailureOr<std::string> fp8::collectPTX(ModuleOp module) {
  std::string ptx;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(a);
      if (!object)
        continue;
      if (object.getFormat() != gpu::CompilationTarget::Assembly)
        return binary.emitError("the kernels were not compiled to PTX text");
      ptx += "// gpu.binary @" + binary.getSymName().str() + "\n";
      ptx += object.getObject().getValue().str();
      ptx += "\n";
    }
  if (ptx.empty())
    return module.emitError("the module has no GPU kernels");
  return ptx;
}
