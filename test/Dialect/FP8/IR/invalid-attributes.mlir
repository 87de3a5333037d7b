// RUN: fp8-opt %s -split-input-file -verify-diagnostics
// Every attribute parser and verifier refusal.

// expected-error @+1 {{amax history length must be in [1, 1048576], got 0}}
func.func @f() attributes {r = #fp8.delayed<history = 0>}

// -----

// expected-error @+1 {{margin must be in [0, 64], got 65}}
func.func @f() attributes {r = #fp8.delayed<margin = 65>}

// -----

// expected-error @+1 {{unknown parameter 'length' in #fp8.delayed (expected history, algo, margin, pow2)}}
func.func @f() attributes {r = #fp8.delayed<length = 4>}

// -----

// expected-error @+1 {{duplicate parameter 'history'}}
func.func @f() attributes {r = #fp8.delayed<history = 4, history = 8>}

// -----

// expected-error @+1 {{unknown amax algorithm 'mean'}}
func.func @f() attributes {r = #fp8.delayed<algo = mean>}

// -----

// expected-error @+1 {{expected 'true' or 'false'}}
func.func @f() attributes {r = #fp8.current<pow2 = yes>}

// -----

// expected-error @+1 {{eps must be finite and non-negative}}
func.func @f() attributes {r = #fp8.current<eps = -1.0>}

// -----

// expected-error @+1 {{activation block shape must have 1 or 2 dimensions}}
func.func @f() attributes {r = #fp8.block<act = 1x2x3>}

// -----

// expected-error @+1 {{weight block sizes must be in [1, 65536]}}
func.func @f() attributes {r = #fp8.block<weight = 0x128>}

// -----

// Sizes that would only make padding and scale tensors absurd.
// expected-error @+1 {{activation block sizes must be in [1, 65536]}}
func.func @f() attributes {r = #fp8.block<act = 1x1000000000000>}

// -----

// expected-error @+1 {{unknown E8M0 rounding mode 'nearest'}}
func.func @f() attributes {r = #fp8.mxfp8<rounding = nearest>}

// -----

// expected-error @+1 {{unknown parameter 'block' in #fp8.mxfp8 (expected rounding)}}
func.func @f() attributes {r = #fp8.mxfp8<block = 16>}

// -----

// expected-error @+1 {{unknown scale granularity (expected tensor, row, col or block) 'channel'}}
func.func @f() attributes {r = #fp8.layout<channel>}

// -----

// expected-error @+1 {{block sizes must be in [1, 65536]}}
func.func @f() attributes {r = #fp8.layout<block 0x4>}

// -----

// expected-error @+1 {{block sizes must be in [1, 65536]}}
func.func @f() attributes {r = #fp8.layout<block 1x65537>}

// -----

// expected-error @+1 {{expected '>'}}
func.func @f() attributes {r = #fp8.layout<row 4>}
