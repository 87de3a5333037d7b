//===- InputFiles.cpp - Files that passes read ----------------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/InputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

unsigned fp8::jsonNestingDepth(StringRef text) {
  unsigned depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

FailureOr<llvm::json::Value>
fp8::readJSONFile(StringRef path, StringRef what,
                  function_ref<InFlightDiagnostic()> emitError) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return emitError() << "cannot read " << what << " file " << path << ": "
                       << ec.message();
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError() << what << " file " << path << " is not a regular file";
  if (status.getSize() > kMaxJSONFileBytes)
    return emitError() << what << " file " << path << " has "
                       << status.getSize() << " bytes, more than the "
                       << kMaxJSONFileBytes << " such a file may have";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError() << "cannot read " << what << " file " << path << ": "
                       << buffer.getError().message();
  StringRef text = (*buffer)->getBuffer();
  if (unsigned depth = jsonNestingDepth(text); depth > kMaxJSONDepth)
    return emitError() << what << " file " << path << " nests " << depth
                       << " levels deep, more than the " << kMaxJSONDepth
                       << " a JSON input may";
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return emitError() << what << " file " << path << " is not valid JSON: "
                       << llvm::toString(json.takeError());
  return std::move(*json);
}
