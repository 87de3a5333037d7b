//===- Passes.td - fp8-opt conversion passes ---------------*- tablegen -*-===//
#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFP8ToLinalg : Pass<"convert-fp8-to-linalg"> {
  let summary = "Lower FP8 dialect ops to linalg, tensor, arith and math";
  let description = [{
    Expands every `fp8` op into destination-style tensor code that the
    upstream CPU and GPU pipelines compile: `linalg.generic` for
    element-wise and per-block work, `linalg.reduce`-style generics for amax,
    `linalg.batch_matmul`/`linalg.matmul` for the FP32-accumulating product
    of dequantized operands, `tensor.pad`/`tensor.extract_slice` around
    partial blocks. FP8 rounding is expressed as a clamp to +-max followed by
    `arith.truncf` (round to nearest even), which keeps NaN and makes the
    saturating semantics explicit for every backend.

    A dialect conversion: the `fp8` dialect is illegal, so the pass fails
    (naming the op) if any op is left; ops the patterns themselves create
    (a transpose's re-quantization, a split amax's next level) are lowered
    in turn (`populateFP8ToLinalgPatterns`).

    Before:
    ```mlir
    %q = fp8.quantize %x, %s layout<tensor>
        : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf8E4M3FN>
    ```
    After (abridged):
    ```mlir
    %q = linalg.generic {...} ins(%x, %s : tensor<4x8xf32>, tensor<f32>)
        outs(%e : tensor<4x8xf8E4M3FN>) {
      ^bb0(%in: f32, %sc: f32, %out: f8E4M3FN):
        %d = arith.divf %in, %sc : f32
        %c = arith.minimumf %d, %max : f32   // and maximumf with -max
        %t = arith.truncf %c : f32 to f8E4M3FN
        linalg.yield %t : f8E4M3FN
    }
    ```
  }];
  let options = [
    Option<"splitTensorAmax", "split-tensor-amax", "bool", "false",
           "Compute per-tensor amaxes as a tree of row reductions: max over "
           "contiguous rows of 4096 elements of the flattened tensor, then "
           "the same over the row maxima, until at most 8192 remain, reduced "
           "as one row. Exact (max is order-independent, NaN included); the "
           "GPU pipeline uses it so that each level runs a warp per row">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FP8OutlineScaledMatmuls : Pass<"fp8-outline-scaled-matmuls",
                                   "::mlir::ModuleOp"> {
  let summary = "Move each fp8.scaled_matmul into a private function that "
                "a GPU GEMM kernel can replace";
  let description = [{
    The GPU pipeline's contract between graph-level lowering and the FP8 GEMM
    kernels. Every `fp8.scaled_matmul` becomes a `func.call` to a private
    function `@__fp8_gemm_<i>` whose body is the op itself (so the reference
    lowering still defines it) and which carries an `fp8.gemm` dictionary
    (`lhs_layout`, `rhs_layout`, `epilogue`, `transpose_rhs`, `has_bias`).
    Products with the same operand types and attributes share one function.
    After bufferization (`buffer-results-to-out-params`) the function takes
    `(lhs, lhs_scale, rhs, rhs_scale, [bias], out)` memrefs, and
    `convert-fp8-gemm-to-gpu` replaces its body with a tensor-core kernel
    launch where the kernel supports the shape and layouts. A product of
    dynamic shape (M at run time) gets its destination from the caller: a
    `tensor.empty` of the op's reified sizes passed last, into which the
    body writes (`bufferization.materialize_in_destination`), so that the
    bufferized function has the same `(..., out)` form (bufferization's
    `drop-equivalent-buffer-results` removes the result; the upstream
    out-parameter pass cannot allocate a dynamic result at the call).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def FP8FuseGemmEpilogues : Pass<"fp8-fuse-gemm-epilogues",
                                 "::mlir::ModuleOp"> {
  let summary = "Move each product's element-wise consumer into its GEMM "
                "function, where the kernel's epilogue computes it";
  let description = [{
    After `fp8-outline-scaled-matmuls` and element-wise fusion: a call to an
    `@__fp8_gemm_<i>` function whose one result is used only by an
    element-wise `linalg.generic` (directly or through single-use
    `tensor.expand_shape` / `collapse_shape`) becomes a call to a new
    function that computes the product and then that consumer -- the
    generic cloned, marked `fp8.gemm_epilogue`, its other inputs appended as
    arguments (`fp8.gemm`'s `epilogue_inputs` counts them) -- and returns
    the consumer's result. `convert-fp8-gemm-to-gpu` then applies the
    consumer's body to each output element in the kernel's epilogue (after
    the product is rounded to its own type, as the unfused graph does), so
    the product never goes to memory: SiLU(gate) * up, a bias + GELU, a
    residual add are one kernel with their GEMM. Bit-identical to the
    unfused graph by construction (the same scalar operations in the same
    order).

    A consumer qualifies when every loop is parallel, it has one result of
    f32/f16/bf16 whose indexing map is the identity, reads the product once
    through the identity map, ignores its init, reads every other input
    through the identity (a tensor of the output's shape), through its last
    dimension alone when that is the product's N (a bias row), or as a
    rank-0 tensor, and its body holds only arith and math operations on
    scalars (constants from outside allowed). Otherwise the call stays. A
    consumer that reads the product through reshapes is first rebuilt at
    the product's shape (its inputs of the output's shape reshaped back, its
    result reshaped forward for its users): the kernel writes the output at
    the lhs's rank.

    `max-rows` limits it to products of at most that many rows (all
    dimensions of the result but the last, static): the GPU pipeline fuses
    decode steps' products (64 rows at most) by default, before element-wise
    fusion duplicates their consumers into row kernels (a residual add read
    again by the next RMSNorm would otherwise leave the product two uses).
    `residual-only` limits it to residual adds (arith bodies reading at most
    one other full tensor): the GPU pipeline fuses those into products of
    any size by default (`residual-epilogues`), first, so that the residual
    stream is written by the o and down projections' kernels.
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", "0",
           "Fuse only into products of at most this many rows (0: any)">,
    Option<"residualOnly", "residual-only", "bool", "false",
           "Fuse only consumers whose body is arith operations (no "
           "math-library call) and that read at most one other tensor of "
           "the output's shape (a residual add): the kernel stages that "
           "tensor through its TMA-store tile">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8OutlineAttention : Pass<"fp8-outline-attention", "::mlir::ModuleOp"> {
  let summary = "Move each fp8.attention into a private function that a "
                "fused GPU kernel can replace";
  let description = [{
    The attention counterpart of `fp8-outline-scaled-matmuls`: every
    `fp8.attention` becomes a `func.call` to a private function
    `@__fp8_attention_<i>` whose body is the op (its reference lowering
    still defines it) and which carries an `fp8.attention` dictionary
    (`scale`, `causal`, `has_mask`). Ops with the same types and attributes
    share one function. After bufferization the function takes
    `(q, k, v, [mask], out)` memrefs and `convert-fp8-attention-to-gpu`
    replaces its body with a fused kernel where the kernel serves it. With
    FP8 operands (static shapes) it takes `(q, k, v, [mask], q_scale,
    k_scale, v_scale, workspace, out)`: the workspace, a `tensor.empty` the
    caller passes (bufferization allocates it in the caller's device
    memory), is the kernel's K-major copy of v, `[B, Hkv, Dv, Skv rounded up
    to 32]`; the body does not read it. A decode step that the split-key
    kernel serves (one query per (batch, head), bf16/f16 operands, head dim
    64 or 128, static shapes) takes `(q, k, v, [mask], workspace, out)`,
    the workspace an f32 `[B, Hq, splits, Dv + 2]` of the splits' partial
    outputs, maxima and sums (`decode-kernel=false`: none, the
    FlashAttention kernel). When that step's key and value are an FP8
    cache's dequantization -- `fp8.dequantize` with one f32 scale followed
    by element casts (`arith.extf`/`truncf`), what `fp8-kv-cache` leaves --
    the function absorbs them (its body dequantizes, as before: the
    reference) and takes `(k8, k_scale, v8, v_scale, q, [mask], workspace,
    out)`; its dictionary's `kv_dequant` lists the element type after each
    step (e.g. `[f16, f32, bf16]`), which the kernel reproduces per element
    (`decode-fp8-cache=false`: the dequantized tensors are passed).

    ```mlir
    %o = fp8.attention %q, %k, %v scale(0.125) causal
        : (tensor<1x8x64x64xbf16>, tensor<1x2x64x64xbf16>,
           tensor<1x2x64x64xbf16>) -> tensor<1x8x64x64xf32>
    // becomes
    %o = call @__fp8_attention_0(%q, %k, %v) : (...) -> tensor<1x8x64x64xf32>
    func.func private @__fp8_attention_0(...) -> tensor<1x8x64x64xf32>
        attributes {fp8.attention = {causal = true, has_mask = false,
                                     scale = 1.250000e-01 : f32}}
    ```
  }];
  let options = [
    Option<"decodeKernel", "decode-kernel", "bool", /*default=*/"true",
           "Decode steps (one query per head) get the split-key kernel's "
           "workspace; false: the FlashAttention kernel serves them too">,
    Option<"readCache", "decode-fp8-cache", "bool", /*default=*/"true",
           "A decode step whose key and value are an FP8 cache's "
           "dequantization (fp8.dequantize with one f32 scale, then element "
           "casts) takes the cache itself: the dequantization joins the "
           "outlined function and the split-key kernel reads the FP8 rows">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def ConvertFP8GemmToGPU : Pass<"convert-fp8-gemm-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Replace outlined FP8 products with wgmma / mma.sync kernels";
  let description = [{
    For every bufferized function carrying `fp8.gemm` (see
    `fp8-outline-scaled-matmuls`), generates a GPU kernel in the `gpu` and
    `nvvm` dialects and replaces the function body with its launch: FP8
    operands staged in shared memory, `wgmma.mma_async` (sm_90a) or
    `mma.sync.m16n8k32` (sm_89) with FP32 accumulators, per-K-block FP32
    promotion for block and MX scales, bias/epilogue and the rounding to the
    result type in the epilogue. M may be dynamic (the lhs's and the
    output's row dimension): the host then reads it and launches a decode
    kernel (M <= 64) or the general one, M passed to the kernel. Functions
    the kernel cannot serve keep their
    reference body (lowered by the generic GPU loop mapping); a remark says
    why. Every function loses its `fp8.gemm` attribute: from here on it is
    an ordinary function (the pipeline inlines it).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target architecture: sm_90a (wgmma) or sm_89 (mma.sync)">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark per product saying which kernel it got">,
    Option<"tmaPipeline", "tma-pipeline", "bool", "true",
           "Load the tiles with TMA into 128B-swizzled shared memory through "
           "a multi-stage mbarrier pipeline where K is a multiple of 16 "
           "(false: thread copies into one stage)">,
    Option<"stages", "stages", "unsigned", "4",
           "Shared-memory stages of the single-warpgroup TMA pipeline">,
    Option<"warpSpecialized", "warp-specialized", "bool", "true",
           "With TMA loads and M >= 128: one producer warpgroup (TMA) and "
           "two consumer warpgroups (wgmma, 128-row CTA tiles) with "
           "setmaxnreg and full/empty mbarriers per stage (false: the "
           "single-warpgroup pipeline for every product)">,
    Option<"wsStages", "ws-stages", "unsigned", "0",
           "Shared-memory stages of the warp-specialized kernel (0: as many "
           "as fit, at most 8)">,
    Option<"persistent", "persistent", "bool", "true",
           "Warp-specialized kernels run persistent CTAs, one per SM, that "
           "walk the output tiles in a raster order (false: one CTA per "
           "tile)">,
    Option<"smCount", "sm-count", "unsigned", "132",
           "Persistent CTAs to launch (the SMs of an H100/H200 SXM; any "
           "count computes the same)">,
    Option<"fastAccumulation", "fast-accumulation", "bool", "false",
           "Products whose scales do not vary along K (per-tensor, rowwise) "
           "accumulate the whole K in the tensor cores' accumulator, with no "
           "FP32 promotion every 128 K, wgmmas of consecutive K tiles in "
           "flight, and 128x256 CTA tiles (cuBLAS's 'fast accumulation': "
           "faster, but sums of same-sign products lose up to ~7% at K = "
           "4096; docs/Numerics.md)">,
    Option<"tileN", "tile-n", "unsigned", "0",
           "CTA tile N of the warp-specialized kernel (a multiple of 8 up to "
           "256; 0: the heuristic's choice)">,
    Option<"tileM", "tile-m", "unsigned", "0",
           "CTA tile M of the promoting warp-specialized kernel (tiles up "
           "to 128 wide, a static M): 128 (two consumer warpgroups), 192 "
           "(three consumer warpgroups of one 64-row band each; with a "
           "fused consumer only where ptxas assembles them: K tiles a power "
           "of two, at least 8) or 256 (two consumers of two 64-row bands); "
           "0: the heuristic's choice (block-scaled products: 192 where its "
           "rounds over the SMs pay and ptxas assembles it -- K tiles a "
           "power of two up to K = 8192 --, else 128 or 256)">,
    Option<"fusedThreeConsumers", "fused-three-consumers", "bool", "false",
           "The heuristic may give a product with a fused consumer (a "
           "residual add staged through the store tile) three consumer "
           "warpgroups where they assemble (K tiles a power of two, at "
           "least 8), as it does unfused products; off: such products keep "
           "the two-consumer tiles (not yet timed or run on a GPU with "
           "three consumers: docs/GPU.md)">,
    Option<"stageScales", "stage-scales", "bool", "true",
           "Warp-specialized kernels with 256-row tiles copy the f32 scales "
           "that vary along K (block scales) into shared memory with each K "
           "tile (a producer warp's cp.async, completing on the stage's full "
           "mbarrier), so the consumers read them there (false: the "
           "consumers load them from global memory a unit ahead)">,
    Option<"tmaStore", "tma-store", "bool", "true",
           "Warp-specialized kernels write each tile through a 128B-swizzled "
           "staging tile in shared memory and TMA stores that drain while "
           "the next tile computes, where output rows are 16-byte multiples "
           "(false: stores from the registers)">,
    Option<"stageEpilogueInput", "stage-epilogue-input", "bool", "true",
           "With the TMA-store epilogue, a fused consumer's one input of the "
           "output's shape and 16-bit elements (the up projection's "
           "SiLU(gate), a residual) is loaded by TMA into the staging tile "
           "while the tile's products run, and read back with ldmatrix "
           "(false: each thread loads its elements from global memory in "
           "the epilogue)">,
    Option<"decodeWarpSpecialized", "decode-ws", "bool", "true",
           "Products of at most 64 rows whose 128-wide tiles leave SMs "
           "idle (decode steps) run the persistent warp-specialized kernel "
           "with one consumer warpgroup, tiles that cover the SMs once and "
           "up to decode-stages stages (false: the single-warpgroup kernel with "
           "narrowed tiles)">,
    Option<"pipelinedPromotion", "pipelined-promotion", "bool", "true",
           "The decode plan's promoting consumer (one row band, one "
           "promotion unit per K tile, tiles at most 64 wide) issues 4 K "
           "tiles' wgmmas (2 past 48 columns) before retiring them in order "
           "(wait_group 3..0) instead of a whole wgmma round trip per tile "
           "(bit-identical; false: the round trip per tile)">,
    Option<"decodeStages", "decode-stages", "unsigned", "16",
           "Most pipeline stages of the decode plan (1..32; as many as fit "
           "the shared memory up to this): the K tiles of B a decode CTA "
           "keeps in flight">,
    Option<"decodeKGroups", "decode-k-groups", "unsigned", "1",
           "With pipelined-promotion: the decode consumer's K tiles split "
           "over this many consumer warpgroups (1 or 2; where the K tiles "
           "and stages divide), each with its own total, summed through "
           "shared memory before the first one's register epilogue">,
    Option<"gridDependency", "grid-dependency", "bool", "false",
           "Kernels control their own grid dependency (programmatic "
           "dependent launch, sm_90; fp8-gpu-grid-dependency): the "
           "warp-specialized kernel of a product whose B is a constant "
           "global (every call's) and M static loads its first stages' B "
           "tiles before griddepcontrol.wait (the pipelines set this with "
           "their grid-dependency option)">,
    Option<"clipLhsRows", "clip-lhs-rows", "bool", "true",
           "Decode products with a static M below 64 load only their M rows "
           "of A per tile (one 1 KB swizzle atom up to 8 rows) instead of "
           "64-row boxes the TMA unit zero-fills past M">,
    Option<"clusterM", "cluster-m", "unsigned", "1",
           "Persistent CTAs in clusters of this many (1 or 2) along M that "
           "share each B tile through TMA multicast (experimental: correct "
           "but slower on the H200 today, see docs/GPU.md)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect"
  ];
}

def ConvertFP8CastsToNVVM : Pass<"convert-fp8-casts-to-nvvm"> {
  let summary = "Lower arith casts to and from f8E4M3FN/f8E5M2 to NVVM "
                "cvt instructions";
  let description = [{
    MLIR 22 has no NVVM lowering for `arith.truncf`/`arith.extf` with FP8
    types. f32 -> FP8 becomes `nvvm.convert.f32x2.to.f8x2` (PTX
    `cvt.rn.satfinite.e4m3x2.f32` / `e5m2x2`): round to nearest even with
    saturation to +-max, which is how fp8-opt defines an FP8 rounding (the
    CPU path's `fp8-expand-arith-casts` computes the same function with
    integer code); a select pins NaN results to the canonical 0x7F as on the
    CPU. FP8 -> f32 becomes `nvvm.convert.f8x2.to.f16x2` followed by an
    exact f16 -> f32 extension.
    f16/bf16 sources and destinations go through f32. The clamp a
    saturating rounding starts with (`maximumf(minimumf(x, max), -max)`,
    `fp8.quantize`'s lowering, with the format's largest finite value) is
    what `.satfinite` does, NaN included: the cvt takes `x` itself.
    Run on `gpu.module`s before `convert-gpu-to-nvvm`.
  }];
  let dependentDialects = [
    "::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::vector::VectorDialect"
  ];
}

def FP8GPUApproxNarrowMath : Pass<"fp8-gpu-approx-narrow-math"> {
  let summary = "f16/bf16 exponentials and f16 divisions by the GPU's "
                "approximate f32 instructions";
  let description = [{
    A scalar `math.exp`/`math.exp2` on f16 or bf16 gets the `afn` fast-math
    flag, so `convert-gpu-to-nvvm` calls libdevice's `__nv_fast_expf`
    (`ex2.approx` of x * log2(e)) on the f32 extension instead of the
    correctly rounded `__nv_expf` (about ten instructions); a scalar f16
    `arith.divf a, b` becomes `a * rcp.approx.ftz(b)` in f32 (1.0 / b:
    the reciprocal alone) instead of an IEEE division. Each result is then
    rounded to its 16-bit type, as before.

    The f32 errors (ex2.approx: 2 ulp, plus x * log2(e)'s rounding, under
    4e-6 relative for any x whose exponential is a finite f16; rcp.approx:
    1 ulp) are 60x or more below half an f16 ulp, so a result differs from
    the correctly rounded one by at most one ulp, and only when the exact
    value lies that close to a rounding boundary. f16 operands never give
    f32 subnormals (f16's smallest magnitude is 2^-24, and a quotient of
    two f16 values lies within 2^+-40), so `.ftz` changes nothing; bf16
    divisions, which can, are left alone, as is all f32 math. This is the
    precision torch.compile's Triton kernels use for `exp` (`ex2.approx`).
    SiLU's sigmoid in an FP16 Llama FFN is the case it is for: at 8192
    tokens the FFN activation's kernel evaluates 117 M of them and was
    limited by instruction issue, not memory.
    Run on `gpu.module`s before `convert-gpu-to-nvvm`.

    Before:
    ```mlir
    %e = math.exp %x : f16
    %r = arith.divf %one, %d : f16
    ```
    After:
    ```mlir
    %e = math.exp %x fastmath<afn> : f16
    %d32 = arith.extf %d : f16 to f32
    %r32 = nvvm.rcp.approx.ftz.f %d32 : f32
    %r = arith.truncf %r32 : f32 to f16
    ```
  }];
  let dependentDialects = [
    "::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect"
  ];
}

def FP8GPUMapLoops : Pass<"fp8-gpu-map-loops", "::mlir::func::FuncOp"> {
  let summary = "Run every loop nest of host code on the GPU";
  let description = [{
    Runs on bufferized host functions. Turns `memref.copy` into
    `linalg.copy`, orders every linalg op's loops parallel-first (upstream
    interchange) and lowers it to an `scf.parallel` nest (upstream
    `linalgOpToParallelLoops`), then wraps each top-level nest in a
    `gpu.launch`: an `scf.parallel` is linearized (all its dimensions into
    one index), split into blocks of `block-size` threads (fewer for a small
    static nest) and its body guarded for the tail; a row reduction (one
    reduction dimension, last, at least 32 long, the innermost index of
    every input it indexes, a recognized combiner: addf, mulf, maximumf,
    minimumf, maxnumf, minnumf) gets a warp per row
    (lanes fold strided vectors of `vector-width` elements, `gpu.shuffle
    xor` combines them). A parallel nest's threads take `vector-width`
    consecutive elements of its innermost dimension each, moving the
    contiguous, aligned ones with `vector.load`/`vector.store` (the
    arithmetic stays scalar, cloned per element); reduction loops inside a
    nest accumulate in registers (a load-combine-store of one output
    element becomes a loop-carried value). Code
    with no parallel
    loop (a full reduction, scalar updates of 0-d buffers) runs in one
    thread. Afterwards nothing outside a kernel reads or writes memory, so
    every buffer can live in device memory; a scalar loaded from memory and
    used by the host is an error.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block for parallel loop nests">,
    Option<"vectorWidth", "vector-width", "int64_t", "8",
           "Elements per thread along the innermost dimension of a parallel "
           "nest, moved by vector loads and stores where contiguous and "
           "aligned (a power of two; 1: one element per thread)">,
    Option<"registerRows", "register-rows", "bool", "false",
           "A row reduction whose per-element stages read the row again "
           "gets as many warps a row (up to 16; any number of rows) as let "
           "each lane's steps unroll, so that the later passes take the "
           "first pass's registers instead of reading the row again">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::vector::VectorDialect"
  ];
}

def FP8GPUDynamicKernelOperands : Pass<"fp8-gpu-dynamic-kernel-operands",
                                       "::mlir::ModuleOp"> {
  let summary = "Pass memrefs of dynamic shape to kernels as a base pointer "
                "and their sizes";
  let description = [{
    The kernels use the bare-pointer calling convention (one pointer per
    memref), which MLIR only has for memrefs of static shape and layout.
    Every kernel argument (`gpu.func` with `gpu.kernel`) of memref type
    with a dynamic size, offset or stride becomes the base buffer (a rank-0
    memref: one pointer) followed by index arguments for its dynamic
    offset, sizes and strides, in that order; the kernel rebuilds the
    memref, of the same type, with `memref.reinterpret_cast` at its start.
    Each `gpu.launch_func` of the kernel passes them from
    `memref.extract_strided_metadata` of its operand. Run after
    `gpu-kernel-outlining` (the mapped loops' kernels; the GEMM and
    attention kernels are made as `gpu.func`s). Kernels whose memrefs are
    all static are left alone, so a static module is unchanged.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FP8GPUMergeKernelModules : Pass<"fp8-gpu-merge-kernel-modules",
                                    "::mlir::ModuleOp"> {
  let summary = "Put every kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel, and each
    module becomes its own cubin: a transformer graph would run ptxas
    hundreds of times and load as many modules when a library is opened.
    This pass moves every kernel (and whatever else the modules hold) into
    one module named `fp8_kernels`, renaming symbols that collide, and
    updates the `gpu.launch_func` ops.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FP8GPUGridDependency : Pass<"fp8-gpu-grid-dependency",
                                "::mlir::ModuleOp"> {
  let summary = "Let each kernel launch while its stream predecessor "
                "finishes (programmatic dependent launch, sm_90+)";
  let description = [{
    Hopper can start a kernel's CTAs before the kernel ahead of it in the
    stream has finished (programmatic dependent launch): the launch carries
    `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`, the kernel runs
    `griddepcontrol.wait` before it touches memory the predecessor may
    write or read (the wait returns once the predecessor has completed and
    its writes are visible), and the predecessor runs
    `griddepcontrol.launch_dependents` to let its successor be scheduled.
    A decode step is ~350 short kernels: each successor's launch, CTA
    set-up and prologue then overlap its predecessor's tail.

    This pass makes every kernel of every `gpu.module` safe for such
    launches: a kernel (`gpu.func` with `gpu.kernel`) that has no
    `nvvm.griddepcontrol` op yet gets `wait` and then `launch_dependents`
    at its entry, executed by every thread before anything else. A kernel
    generator that places the wait later (after loads of constant weights,
    say) emits its own ops, which this pass leaves alone. Each module also
    gets `@__fp8_grid_dependency` (an i32 global = 1): the CUDA runtime
    launches a module's kernels with the attribute only when the module
    has that symbol (`FP8RT_PDL=0` turns it off), so libraries built
    without this pass keep ordinary launches.

    Run it after `fp8-gpu-merge-kernel-modules` (one global per module)
    and only for sm_90 and later targets (the pipelines do both).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def ConvertFP8AttentionToGPU : Pass<"convert-fp8-attention-to-gpu",
                                    "::mlir::ModuleOp"> {
  let summary = "Replace outlined attention functions with fused kernels";
  let description = [{
    For every bufferized function carrying `fp8.attention` (q, k, v,
    [mask], out; see `fp8-outline-attention`), generates one fused
    FlashAttention-style kernel and replaces the function body with its
    launch: a producer warpgroup issues TMA loads of the query tile and of
    each key/value block into a ring of 128B-swizzled stages (full/empty
    mbarriers); two consumer warpgroups compute `S = Q K^T` with wgmma from
    shared memory, the online softmax in registers (causal, partial-block
    and additive masks; exp2; row maxima across the quad that holds a row)
    and `O += P V` with P from registers (inline PTX for the register-A
    wgmma) and V MN-major from shared memory; `O / l` is rounded to the
    result type and stored. The scores never leave the SM. Functions the
    kernel does not serve (head dims other than 64 and 128, f32 operands,
    dynamic shapes) keep their reference body, with a remark.

    ```mlir
    func.func private @__fp8_attention_0(%q: memref<1x8x1024x128xbf16>,
        %k: memref<1x2x1024x128xbf16>, %v: memref<1x2x1024x128xbf16>,
        %out: memref<1x8x1024x128xbf16>)
        attributes {fp8.attention = {scale = 0.0883883461 : f32,
                                     causal = true, has_mask = false}}
    // becomes a gpu.launch_func of @__fp8_attention_0_kernel (grid
    // Sq/128 x Hq x B, 384 threads, ~160 KB of dynamic shared memory).
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark per function saying which kernel it got">,
    Option<"intraWarpgroupOverlap", "intra-warpgroup-overlap", "bool", "false",
           "FlashAttention-3's intra-warpgroup pipelining: key block j's "
           "Q K^T and block j - 1's P V in flight together, block j's "
           "softmax under the latter (experimental: correct, but slower than "
           "one key block at a time on the H200 today, docs/GPU.md)">,
    Option<"pingPong", "ping-pong", "bool", "true",
           "FP8 kernels: FlashAttention-3's ping-pong scheduling of the two "
           "consumer warpgroups (named barriers order their Q K^T issues, so "
           "that one warpgroup's softmax runs under the other's products; "
           "7% faster at 8192 causal tokens on the H200). 16-bit kernels "
           "never take it (measured equal causal, 9% slower without a "
           "mask, docs/GPU.md)">,
    Option<"decodeTensorCores", "decode-tensor-cores", "bool", "true",
           "Decode steps over an FP8 cache (head dims 64/128, at most 8 "
           "query heads per kv head): a tensor-core loop (mma.sync with the "
           "GQA group's heads as columns), taken at run time when both "
           "cache scales are powers of two that fold out exactly; false: "
           "the CUDA-core loop only">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect"
  ];
}

#endif // FP8_CONVERSION_PASSES_TD
