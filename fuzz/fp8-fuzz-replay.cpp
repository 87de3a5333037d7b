//===- fp8-fuzz-replay.cpp - Run fuzz inputs without libFuzzer -------------===//
//
// Part of fp8-opt. Runs the fuzz target's code path (ONNXFuzzTarget.cpp)
// over files and directories: the seed corpus, a libFuzzer corpus, crash
// files, test/Import/fuzz-regressions. Built in every configuration, so
// that the test suite exercises the fuzzed path on every change without a
// libFuzzer build; built with -DFP8_SANITIZE it is the sanitized replay.
//
//   fp8-fuzz-replay [-v] [--one-recipe] [--no-round-trip]
//                   [--max-constant-elements=N] [--allow-bugs] PATH...
//
// Directories are searched recursively for *.onnx, *.onnxtext, *.onnxtxt
// and libFuzzer's file names (40 hex digits; crash-, leak-, timeout-, oom-,
// slow-unit- files). Exit status 1 when an input ends in an outcome that is
// a bug (see ONNXFuzzTarget.h) unless --allow-bugs; a crash is a signal.
//
//===----------------------------------------------------------------------===//

#include "ONNXFuzzTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <string>
#include <vector>

using llvm::StringRef;

static bool isCorpusName(StringRef name) {
  if (name.ends_with(".onnx") || name.ends_with(".onnxtext") ||
      name.ends_with(".onnxtxt"))
    return true;
  for (StringRef prefix : {"crash-", "leak-", "timeout-", "oom-", "slow-unit-"})
    if (name.consume_front(prefix))
      break;
  return name.size() == 40 &&
         llvm::all_of(name, [](char c) { return llvm::isHexDigit(c); });
}

static void collect(StringRef arg, std::vector<std::string> &files) {
  if (!llvm::sys::fs::is_directory(arg)) {
    files.push_back(arg.str());
    return;
  }
  std::vector<std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(arg, ec), end;
       it != end && !ec; it.increment(ec)) {
    if (it->type() != llvm::sys::fs::file_type::regular_file &&
        it->type() != llvm::sys::fs::file_type::symlink_file)
      continue;
    if (isCorpusName(llvm::sys::path::filename(it->path())))
      found.push_back(it->path());
  }
  llvm::sort(found);
  files.insert(files.end(), found.begin(), found.end());
}

int main(int argc, char **argv) {
  fp8fuzz::Config config;
  config.allRecipes = true;
  bool verbose = false, allowBugs = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "-v" || arg == "--verbose") {
      verbose = true;
    } else if (arg == "--one-recipe") {
      config.allRecipes = false;
    } else if (arg == "--no-round-trip") {
      config.roundTrip = false;
    } else if (arg == "--allow-bugs") {
      allowBugs = true;
    } else if (arg.consume_front("--max-constant-elements=")) {
      if (arg.getAsInteger(10, config.maxConstantElements)) {
        llvm::errs() << "fp8-fuzz-replay: bad --max-constant-elements\n";
        return 2;
      }
    } else if (arg.starts_with("-") && arg != "-") {
      llvm::errs() << "fp8-fuzz-replay: unknown option " << arg
                   << "\nusage: fp8-fuzz-replay [-v] [--one-recipe] "
                      "[--no-round-trip] [--max-constant-elements=N] "
                      "[--allow-bugs] PATH...\n";
      return 2;
    } else {
      collect(arg, files);
    }
  }
  if (files.empty()) {
    llvm::errs() << "fp8-fuzz-replay: no inputs\n";
    return 2;
  }

  fp8fuzz::initialize();
  std::map<fp8fuzz::Outcome, unsigned> counts;
  unsigned bugs = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "fp8-fuzz-replay: cannot read " << file << ": "
                   << buffer.getError().message() << "\n";
      return 2;
    }
    std::string diags;
    config.keepDiagnostics = verbose;
    fp8fuzz::Outcome outcome =
        fp8fuzz::runOne((*buffer)->getBuffer(), config, &diags);
    ++counts[outcome];
    bool bug = outcome != fp8fuzz::Outcome::Refused &&
               outcome != fp8fuzz::Outcome::Quantized;
    bugs += bug;
    if (verbose || bug) {
      llvm::outs() << fp8fuzz::outcomeName(outcome) << " " << file << "\n";
      llvm::outs().flush();
    }
    if (bug && !verbose) {
      // Once more, keeping the diagnostics.
      config.keepDiagnostics = true;
      fp8fuzz::runOne((*buffer)->getBuffer(), config, &diags);
    }
    if (verbose || bug)
      for (StringRef line : llvm::split(StringRef(diags).rtrim(), '\n'))
        if (!line.empty())
          llvm::outs() << "  " << line << "\n";
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  llvm::outs() << "fuzz replay: " << files.size() << " inputs, "
               << counts[fp8fuzz::Outcome::Quantized] << " quantized, "
               << counts[fp8fuzz::Outcome::Refused] << " refused, " << bugs
               << " bugs (" << counts[fp8fuzz::Outcome::ImportVerifyFailed]
               << " import-verify, "
               << counts[fp8fuzz::Outcome::PipelineFailed] << " pipeline, "
               << counts[fp8fuzz::Outcome::RoundTripFailed]
               << " round-trip), ";
  llvm::outs() << llvm::format("%.1f", seconds) << " s\n";
  return bugs && !allowBugs ? 1 : 0;
}
