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

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/// Paths that are the process's own streams: /dev/stdout and friends,
/// /proc/<pid>/fd/<n>. Written into directly: renaming over what they
/// resolve to (a shell's redirection target) would detach the stream.
static bool isStreamPath(StringRef path) {
  return path == "-" || path.starts_with("/dev/") || path.starts_with("/proc/");
}

/// What an output path stands for: the target of a symbolic link (written
/// in place of the link, which stays), or the path itself.
static std::string resolvedTarget(StringRef path) {
  fs::file_status link;
  SmallString<256> real;
  if (!fs::status(path, link, /*follow=*/false) &&
      link.type() == fs::file_type::symlink_file && !fs::real_path(path, real))
    return std::string(real);
  return path.str();
}

/// Whether `path` is written into rather than replaced: a stream, or an
/// existing file (through links) that is not regular (a device, a FIFO).
/// Its temporary file then belongs in the system's temporary directory.
static bool isWrittenInto(StringRef path) {
  if (isStreamPath(path))
    return true;
  fs::file_status st;
  return !fs::status(path, st) && st.type() != fs::file_type::regular_file &&
         st.type() != fs::file_type::directory_file;
}

std::string fp8::temporaryPathFor(StringRef path, std::string &error) {
  // Beside the file that will be replaced (a link's target), so that the
  // final rename stays on one file system.
  SmallString<256> model(resolvedTarget(path));
  model += ".tmp-%%%%%%%%";
  SmallString<256> tmp;
  int fd = -1;
  std::error_code ec =
      isWrittenInto(path)
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

/// Copies the bytes of `from` into the existing non-regular file `to`. A
/// FIFO is opened without blocking: one that no process reads is an error,
/// not a hang.
static std::string copyInto(StringRef from, StringRef to) {
  auto data = llvm::MemoryBuffer::getFile(from, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!data)
    return ("cannot read '" + from + "': " + data.getError().message()).str();
  SmallString<256> target(to);
  int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)
      return ("cannot write '" + to +
              "': it is a FIFO that no process is reading")
          .str();
    return ("cannot write '" + to + "': " + std::strerror(errno)).str();
  }
  // Blocking writes from here on (a reader may be slower than we are).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // A regular file behind a stream path (/dev/stdout redirected to a file)
  // is overwritten, as the shell's `>` would.
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    (void)::ftruncate(fd, 0);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << (*data)->getBuffer();
  os.close();
  if (os.has_error())
    return ("cannot write '" + to + "': " + os.error().message()).str();
  return {};
}

std::string fp8::commitOutput(StringRef tmp, StringRef path) {
  std::string error;
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
  std::string target = resolvedTarget(path);
  fs::file_status link, st;
  if (!fs::status(path, link, /*follow=*/false) &&
      link.type() == fs::file_type::symlink_file && fs::status(path, st))
    error = ("cannot write '" + path +
             "': it is a symbolic link whose target does not exist")
                .str();
  else if (isWrittenInto(path))
    error = copyInto(tmp, path);
  else if (!fs::status(target, st) &&
           st.type() == fs::file_type::directory_file)
    error = ("cannot write '" + path + "': it is a directory").str();
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
