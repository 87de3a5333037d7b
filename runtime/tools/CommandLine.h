//===- CommandLine.h - Option parsing shared by fp8-run and fp8-pack -*- C++ -*-===//
//
// Part of fp8-opt. The runtime's tools link neither LLVM nor a parsing
// library (they are copied alone to other machines): options are
// `--flag value` or `--flag=value`, parsed by these two helpers.
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_TOOLS_COMMANDLINE_H
#define FP8RT_TOOLS_COMMANDLINE_H

#include <string>

namespace fp8rt {

/// Whether `arg` is option `flag`, alone or as `flag=value`.
inline bool isOption(const std::string &arg, const char *flag) {
  return arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0;
}

/// The value of option `flag` at argv[i] (`flag=value`, or the next
/// argument, advancing i). An absent or empty value calls `usageError`,
/// which does not return.
template <typename UsageError>
std::string optionValue(const std::string &arg, const char *flag, int &i,
                        int argc, char **argv, UsageError usageError) {
  const std::string f = flag;
  std::string v;
  if (arg.rfind(f + "=", 0) == 0)
    v = arg.substr(f.size() + 1);
  else if (i + 1 < argc)
    v = argv[++i];
  else
    usageError(f + " needs a value");
  if (v.empty())
    usageError(f + " needs a value (it is empty)");
  return v;
}

} // namespace fp8rt

#endif // FP8RT_TOOLS_COMMANDLINE_H
