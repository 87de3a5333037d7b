//===- RandomInputs.h - fp8-run --random ------------------------*- C++ -*-===//
//
// Part of fp8-opt. Seeded random inputs in the shapes and dtypes of a model's
// signature, safe to run: integer inputs that address memory (token ids and
// other Gather indices, which the library bounds-checks at run time) are
// drawn from the range those checks accept, read from the check messages of
// the library's signature text (docs/RuntimeABI.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_TOOLS_RANDOMINPUTS_H
#define FP8RT_TOOLS_RANDOMINPUTS_H

#include "TensorProto.h"

#include <cstdint>
#include <map>
#include <string>

namespace fp8rt {

/// Per graph input (by name, or "#N" for an unnamed one), the number of
/// entries of the smallest dimension its values index, from the run-time
/// checks in `signature` (the library's __fp8_model_signature text: one
/// "<len> <message>" line per check after the tensors, e.g. "graph input
/// 'ids': index out of range in Gather node \"emb\": the dimension has 512
/// entries (valid: -512 to 511)"). A text it cannot parse gives an empty
/// map and `ok` false; nothing in it is trusted.
std::map<std::string, int64_t> indexBounds(const char *signature, bool &ok);

/// How fillRandom filled a tensor, for the report line.
struct RandomFill {
  std::string what; // "normal(0, 1)", "uniform in [0, 512)", "all 1", ...
};

/// Fills `t` (its dtype and shape set, bytes allocated) with values that
/// depend only on `seed` and `index`: floats (float32/64/16, bfloat16, FP8
/// encodings) from N(0, 1) rounded to nearest even; integers and bools
/// indexing memory uniform in [0, bound) when `bound` > 0, else all 1 (an
/// attention mask of ones; a positive count or length).
RandomFill fillRandom(HostTensor &t, uint64_t seed, int index, int64_t bound);

} // namespace fp8rt

#endif // FP8RT_TOOLS_RANDOMINPUTS_H
