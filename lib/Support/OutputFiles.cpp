//===- OutputFiles.cpp - Writing what a tool produces, safely -------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Support/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;
namespace fs = llvm::sys::fs;

void fp8::OutputGuard::addInput(StringRef path, StringRef what) {
  entries.push_back({path.str(), what.str(), /*output=*/false});
}

std::string fp8::OutputGuard::checkOutput(StringRef path, StringRef what) {
  if (path == "-")
    return {};
  std::string error;
  // Identity only matters for files that exist; equivalent() follows
  // symbolic links and sees hard links.
  if (fs::exists(path))
    for (const Entry &e : entries) {
      bool same = false;
      if (fs::equivalent(path, e.path, same) || !same)
        continue;
      if (fs::is_directory(path))
        continue; // refused by the write itself
      error = (what + " '" + path + "' is " + e.what + " ('" + e.path +
               "'): refusing to overwrite it; choose another path")
                  .str();
      return error;
    }
  // Two outputs named alike (also before either exists).
  for (const Entry &e : entries) {
    if (!e.output)
      continue;
    SmallString<256> a(path), b(e.path);
    fs::make_absolute(a);
    fs::make_absolute(b);
    llvm::sys::path::remove_dots(a, /*remove_dot_dot=*/true);
    llvm::sys::path::remove_dots(b, /*remove_dot_dot=*/true);
    bool same = false;
    if (a == b || (!fs::equivalent(path, e.path, same) && same))
      return (what + " '" + path + "' is also " + e.what +
              ": give each output its own path")
          .str();
  }
  entries.push_back({path.str(), what.str(), /*output=*/true});
  return {};
}

/// Whether `path` exists and is (or links to) something other than a
/// regular file: such outputs are written into, so their temporary file
/// belongs in the system's temporary directory, not beside them (/dev).
static bool isSpecial(StringRef path) {
  if (path == "-")
    return true;
  fs::file_status st;
  return !fs::status(path, st) && st.type() != fs::file_type::regular_file;
}

std::string fp8::temporaryPathFor(StringRef path, std::string &error) {
  SmallString<256> model(path);
  model += ".tmp-%%%%%%%%";
  SmallString<256> tmp;
  int fd = -1;
  std::error_code ec =
      isSpecial(path)
          ? fs::createTemporaryFile("fp8-output", "tmp", fd, tmp)
          : fs::createUniqueFile(model, fd, tmp);
  if (ec) {
    error = ("cannot create a temporary file beside '" + path +
             "': " + ec.message())
                .str();
    return {};
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  return std::string(tmp);
}

/// Copies the bytes of `from` into the existing non-regular file `to`.
static std::string copyInto(StringRef from, StringRef to) {
  auto data = llvm::MemoryBuffer::getFile(from, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!data)
    return ("cannot read '" + from + "': " + data.getError().message()).str();
  std::error_code ec;
  llvm::raw_fd_ostream os(to, ec, fs::OF_None);
  if (ec)
    return ("cannot write '" + to + "': " + ec.message()).str();
  os << (*data)->getBuffer();
  os.close();
  if (os.has_error())
    return ("cannot write '" + to + "': " + os.error().message()).str();
  return {};
}

std::string fp8::commitOutput(StringRef tmp, StringRef path) {
  std::string target = path.str(), error;
  if (path == "-") {
    auto data = llvm::MemoryBuffer::getFile(tmp, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (data)
      llvm::outs() << (*data)->getBuffer();
    else
      error = "cannot read '" + tmp.str() + "': " + data.getError().message();
    llvm::outs().flush();
    fs::remove(tmp);
    return error;
  }
  // A symbolic link: write its target (the link stays a link).
  SmallString<256> real;
  fs::file_status link;
  if (!fs::status(path, link, /*follow=*/false) &&
      link.type() == fs::file_type::symlink_file &&
      !fs::real_path(path, real))
    target = std::string(real);
  fs::file_status st;
  std::error_code missing = fs::status(target, st);
  if (!missing && st.type() == fs::file_type::directory_file)
    error = ("cannot write '" + path + "': it is a directory").str();
  else if (!missing && st.type() != fs::file_type::regular_file)
    error = copyInto(tmp, target);
  else if (std::error_code ec = fs::rename(tmp, target))
    error = ("cannot write '" + path + "': " + ec.message()).str();
  fs::remove(tmp);
  return error;
}

std::string fp8::writeOutput(StringRef path,
                             function_ref<void(llvm::raw_ostream &)> print) {
  if (path == "-") {
    print(llvm::outs());
    llvm::outs().flush();
    return {};
  }
  std::string error;
  std::string tmp = temporaryPathFor(path, error);
  if (tmp.empty())
    return error;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, fs::OF_None);
    if (ec) {
      fs::remove(tmp);
      return ("cannot write '" + tmp + "': " + ec.message());
    }
    print(os);
    os.close();
    if (os.has_error()) {
      fs::remove(tmp);
      return ("cannot write '" + path + "': " + os.error().message()).str();
    }
  }
  return commitOutput(tmp, path);
}
