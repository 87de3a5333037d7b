// Every refusal names the tensor (or the file) and says what to do.
// RUN: not fp8-opt %s --fp8-kv-cache="inputs=^cache outputs=^newcache" 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: fp8-kv-cache: no graph input matches '^cache' and no output matches '^newcache'; name the cache tensors with the inputs= and outputs= options
// RUN: not fp8-opt %s --fp8-kv-cache="inputs=^(past|ids)" 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: fp8-kv-cache: input 'ids' has type 'tensor<2xi64>'; a KV cache must be a f32, f16 or bf16 tensor
// RUN: not fp8-opt %s --fp8-kv-cache="format=hybrid" 2>&1 | FileCheck %s --check-prefix=FMT
// FMT: for the --format option: Cannot find option named 'hybrid'!
// RUN: not fp8-opt %s --fp8-kv-cache="scale=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: fp8-kv-cache: scale 0 of 'past.0' is not usable: a cache scale must be a positive normal float
// RUN: not fp8-opt %s --fp8-kv-cache="scale=1e38" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: fp8-kv-cache: scale 9.99999968e+37 of 'past.0' is not usable
// RUN: echo '{"past.0": 0.5, "present.0": 0.25}' > %t.conflict.json
// RUN: not fp8-opt %s --fp8-kv-cache="scales-file=%t.conflict.json" 2>&1 | FileCheck %s --check-prefix=PAIR
// PAIR: error: fp8-kv-cache: 'past.0' and 'present.0' are one cache (the output is built from the input) but the scales file gives them scales 0.5 and 0.25; give one of them
// RUN: echo '{"past.O": 0.5}' > %t.typo.json
// RUN: not fp8-opt %s --fp8-kv-cache="scales-file=%t.typo.json" 2>&1 | FileCheck %s --check-prefix=TYPO
// TYPO: error: fp8-kv-cache: scales file {{.*}}typo.json names 'past.O', which is not a cache input or output
// RUN: echo '{"past.0": "big"}' > %t.bad.json
// RUN: not fp8-opt %s --fp8-kv-cache="scales-file=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: fp8-kv-cache: scales file {{.*}}bad.json, entry 'past.0': expected a number (the dequantization scale) or {"amax": A}
// RUN: echo '{"past.0": ' > %t.trunc.json
// RUN: not fp8-opt %s --fp8-kv-cache="scales-file=%t.trunc.json" 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: fp8-kv-cache: scales file {{.*}}trunc.json is not valid JSON
// RUN: not fp8-opt %s --fp8-kv-cache="scales-file=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: fp8-kv-cache: cannot read scales file {{.*}}missing.json
func.func @main(%ids: tensor<2xi64> {onnx.name = "ids"},
                %past: tensor<3x4xf32> {onnx.name = "past.0"}, %x: tensor<1x4xf32>)
    -> (tensor<4x4xf32> {onnx.name = "present.0"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %c0 = tensor.insert_slice %past into %e[0, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<4x4xf32>
  %c1 = tensor.insert_slice %x into %c0[3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<4x4xf32>
  return %c1 : tensor<4x4xf32>
}
