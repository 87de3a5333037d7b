//===- Npy.h - numpy .npy files for fp8-run ----------------------*- C++ -*-===//
//
// Part of fp8-opt. Reads and writes numpy's .npy format (versions 1.0, 2.0
// and 3.0: the magic, a header that is a Python dict literal with 'descr',
// 'fortran_order' and 'shape', then the data) without numpy, so that fp8-run
// takes inputs from and saves outputs to Python as they are.
//
// As for TensorProto files, nothing read is trusted: the header is parsed
// by a small grammar of its own (never evaluated), the shape is checked for
// overflow, the data must be exactly as long as the shape says, and a
// dtype fp8-run cannot hand to a model (objects, strings, structured or
// big-endian arrays, Fortran order) is refused with a message saying how to
// save the array instead.
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_TOOLS_NPY_H
#define FP8RT_TOOLS_NPY_H

#include "TensorProto.h"

#include <string>

namespace fp8rt {

/// Whether the first bytes of a file are .npy's magic ("\x93NUMPY").
bool hasNpyMagic(const std::vector<uint8_t> &bytes);

/// Reads a .npy file into `out` (dtype: the ONNX code of the numpy dtype;
/// uint16 and uint8 arrays are what bfloat16 and FP8 inputs take, as their
/// encodings). Returns false and sets `error` naming the file.
bool readNpy(const std::string &path, HostTensor &out, std::string &error);
/// The same, for a file already read (`bytes`, named `path`).
bool parseNpy(const std::string &path, const std::vector<uint8_t> &bytes,
              HostTensor &out, std::string &error);

/// Writes `t` as a .npy file (version 1.0, C order) by writeOutputFile's
/// rules. bfloat16 tensors are written as uint16 and FP8 ones as uint8
/// arrays holding the encodings (numpy has no such types; fp8rt.py
/// exchanges them the same way).
bool writeNpy(const std::string &path, const HostTensor &t, std::string &error);

/// The numpy name of the array type that holds an ONNX dtype in a .npy file
/// ("float32", "uint16" for bfloat16, ...), for messages.
std::string npyTypeName(int32_t dtype);

} // namespace fp8rt

#endif // FP8RT_TOOLS_NPY_H
