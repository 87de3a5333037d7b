//===- Passes.td - FP8 dialect transformation passes -------*- tablegen -*-===//
#ifndef FP8_TRANSFORMS_PASSES_TD
#define FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8ExpandArithCasts : Pass<"fp8-expand-arith-casts"> {
  let summary = "Rewrite f32<->f8E4M3FN/f8E5M2 arith casts as integer code";
  let description = [{
    MLIR 22 has no LLVM lowering for `arith.truncf`/`arith.extf` to or from
    `f8E4M3FN`/`f8E5M2` (upstream `arith-expand` only covers E8M0 and
    E2M1, and `convert-arith-to-apfloat` calls into a soft-float library per
    element and gives NaN on overflow). This pass rewrites them into exact
    integer/FP32 arithmetic that any backend compiles:

    * `truncf`: round to nearest even (normal range by rounding the FP32
      bit pattern, subnormal range with the FPU's own rounding of an added
      power of two), saturating to +-max like PTX `.satfinite`; NaN becomes
      the canonical NaN `0x7F`; `-0.0` and negative underflow keep the sign.
    * `extf`: exact decode (subnormals, NaN, and E5M2 infinities).

    Casts from/to f16 and bf16 go through f32 (exact for extension; for
    truncation f16/bf16 -> f32 is exact, so the single rounding is kept).
    f32 <-> bf16 casts themselves (FP8 decodes to bf16, the operands of
    BF16 products) are expanded by upstream's BF16 patterns
    (`arith::populateExpandBFloat16Patterns`): LLVM's x86 backend would
    otherwise call `__truncsfbf2`, which Debian 12's libgcc lacks.

    Before:
    ```mlir
    %q = arith.truncf %x : f32 to f8E4M3FN
    ```
    After (abridged):
    ```mlir
    %u = arith.bitcast %x : f32 to i32
    ...
    %b = arith.trunci %bits : i32 to i8
    %q = arith.bitcast %b : i8 to f8E4M3FN
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FP8ExpandShapesToCasts : Pass<"fp8-expand-shapes-to-casts"> {
  let summary = "memref.expand_shape with several dynamic sizes in one group "
                "as memref.reinterpret_cast";
  let description = [{
    MLIR 22.1's `expand-strided-metadata` crashes (a segfault in
    `IntegerAttr::getValue`, reproduced with this machine's
    `mlir-opt --expand-strided-metadata`; the input is in
    test/Dialect/FP8/Transforms/expand-shapes-to-casts.mlir) on a
    `memref.expand_shape` whose reassociation group has more than one
    dynamic size: it assumes at most one (llvm-project issue 186830;
    upstream's PR 187844, merged in March 2026 after the 22 release branch,
    reads `output_shape` instead). The importer's reshapes of dynamic
    dimensions make such ops (`[s0*s1, 64] -> [s0, s1, 64]`). This pass rewrites exactly those ops into a
    `memref.reinterpret_cast` of the source's buffer with the
    `output_shape` sizes and the strides of a contiguous expansion (the
    innermost dimension of a group keeps the source dimension's stride,
    each outer one multiplies by the sizes inside it); every other
    expand_shape is left to upstream. Run before `expand-strided-metadata`.

    Before:
    ```mlir
    %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 64]
        : memref<?x64xf32> into memref<?x?x64xf32>
    ```
    After:
    ```mlir
    %s0 = arith.muli %c64, %b : index
    %e = memref.reinterpret_cast %m to offset: [0], sizes: [%a, %b, 64],
        strides: [%s0, 64, 1] : memref<?x64xf32> to memref<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FP8CopyStoredState : Pass<"fp8-copy-stored-state"> {
  let summary = "Store a fresh copy into ml_program globals before bufferization";
  let description = [{
    FP8 state (amax histories, previous scales) lives in mutable
    `ml_program.global`s. MLIR 22's bufferization model of
    `ml_program.global_store` declares that the store does not *read* its
    operand; whenever one-shot bufferization decides to give the store its
    own buffer (the stored value is also returned, or comes from another
    global), that buffer is never filled and garbage is stored. This pass
    makes every stored value a private copy
    (`bufferization.alloc_tensor() copy(%v)`) used by the store alone, which
    bufferizes in place and is correct under the buggy and a fixed model
    alike. The cost is one copy of the (small) state per store.

    Before:
    ```mlir
    ml_program.global_store @hist = %h2 : tensor<16xf32>
    return %h2 : tensor<16xf32>
    ```
    After:
    ```mlir
    %c = bufferization.alloc_tensor() copy(%h2) : tensor<16xf32>
    ml_program.global_store @hist = %c : tensor<16xf32>
    return %h2 : tensor<16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def FP8UntieSharedFills : Pass<"fp8-untie-shared-fills"> {
  let summary = "Give every destination of a shared linalg.fill its own "
                "fill, every returned value its own destination, and "
                "unread padding no fill";
  let description = [{
    CSE merges the identical `tensor.empty` + `linalg.fill` pairs that
    reductions start from (the zeros of RMSNorm's sums, the `-inf` or zeros
    of amaxes) into one fill that several ops use as their destination.
    One-shot bufferization then writes the fill into one buffer and copies
    it into a fresh buffer for every other destination: on the GPU a fill
    kernel and a copy kernel per reduction, where a reduction that starts
    from its own fill absorbs it (`fp8-gpu-map-loops`). This pass gives
    every destination use its own fill of its own `tensor.empty` (a clone
    of the fill's destination when that is a `tensor.empty`, else the same
    destination), placed right before the op that writes into it, and
    erases the original when nothing else reads it; a fill with one user,
    its destination, moves right before it. Run it after the last CSE
    before bufferization: CSE would merge the clones again.

    Before:
    ```mlir
    %e = tensor.empty() : tensor<8xf32>
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %a = linalg.generic ... outs(%z : tensor<8xf32>) ...
    %b = linalg.generic ... outs(%z : tensor<8xf32>) ...
    ```
    After:
    ```mlir
    %e0 = tensor.empty() : tensor<8xf32>
    %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
    %a = linalg.generic ... outs(%z0 : tensor<8xf32>) ...
    %e1 = tensor.empty() : tensor<8xf32>
    %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
    %b = linalg.generic ... outs(%z1 : tensor<8xf32>) ...
    ```
    Uses that only read the fill (inputs) keep the original.

    The same for a function's results: CSE also merges the `tensor.empty`
    destinations of same-shaped values, and one-shot bufferization then
    writes them all into one buffer where their lifetimes allow it. When a
    returned value (through reshapes) is among them, that buffer becomes the
    caller's output (`buffer-results-to-out-params`), and the other values
    live in the output buffer, a function argument that may alias others
    for later passes (a norm's kernel could not take its weight multiply).
    The producer of each returned value gets its own clone of the
    `tensor.empty` it writes into.

    And a `tensor.pad` marked `fp8.unread_padding` (`fp8-block-layout`'s
    16-byte aligned M-major activation scales: at a decode step's M = 1..3
    a pad of [1, M] to [1, 4] whose padding the GEMM never uses) becomes a
    `bufferization.alloc_tensor` (padding undefined) and a
    `tensor.insert_slice` of the source, and when the source's producer, a
    linalg op, writes into a `tensor.empty` used only there, it writes into
    the `tensor.extract_slice` of the allocation instead: bufferization
    computes it in place. Before, a fill kernel and a copy kernel per
    product. (After the last CSE: allocations do not merge.)
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8BlockLayout : Pass<"fp8-block-layout"> {
  let summary = "Pad FP8 products to whole scale blocks";
  let description = [{
    Block-scaled GEMM kernels work on whole blocks: a K that the K-block
    does not divide (or an M/N that a multi-row block does not divide) is
    padded with FP8 zeros up to the next multiple of the block (and of
    `multiple`, when given, e.g. 16 for TMA's 16-byte rows of FP8). The
    scale tensors keep their shapes — a partial block already has its own
    scale, `ceil(d / b)` of them — a bias is padded with zeros, and the
    product is sliced back to its true shape. Zeros add nothing to any sum,
    so the padding never shows in results (tested bit for bit).

    `scale-storage=tma` then stores every product's lhs (activation) scales
    M-major and 16-byte aligned, the order Hopper TMA loads them in
    (DeepGEMM's layout): `[batch..., Mb, Kb]` becomes
    `[batch..., Kb, align(Mb, 16 / scale bytes)]` through a
    `linalg.transpose` and a `tensor.pad` marked `fp8.unread_padding` (the
    kernel never stores the rows those entries scale:
    `fp8-untie-shared-fills` leaves them undefined), and the product is
    marked `m_major(P)`. The GEMM kernel (`convert-fp8-gemm-to-gpu`) then reads
    one K-block's row scales from consecutive addresses; the CPU lowering
    turns them back (bit-identical results either way). `fp8-compile` uses
    it for GPU targets.

    Before:
    ```mlir
    %y = fp8.scaled_matmul %a, %sa layout<block 1x32>, %w, %sw layout<block 1x32>
        transpose_rhs : (tensor<7x100xf8E4M3FN>, tensor<7x4xf8E8M0FNU>,
                         tensor<33x100xf8E4M3FN>, tensor<33x4xf8E8M0FNU>) -> tensor<7x33xf32>
    ```
    After:
    ```mlir
    %ap = tensor.pad %a low[0, 0] high[0, 28] { ... } : tensor<7x100xf8E4M3FN> to tensor<7x128xf8E4M3FN>
    %wp = tensor.pad %w low[0, 0] high[0, 28] { ... } : tensor<33x100xf8E4M3FN> to tensor<33x128xf8E4M3FN>
    %yp = fp8.scaled_matmul %ap, %sa layout<block 1x32>, %wp, %sw layout<block 1x32> transpose_rhs ...
    ```
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", "1",
           "Also pad every padded dimension to a multiple of this">,
    Option<"scaleStorage", "scale-storage", "::mlir::fp8::ScaleStorage",
           "::mlir::fp8::ScaleStorage::Canonical",
           "Order of the lhs scale tensors: canonical (the layout's own) or "
           "tma (M-major, 16-byte aligned along M)",
           [{::mlir::fp8::scaleStorageValues()}]>
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FP8FuseElementwise : Pass<"fp8-fuse-elementwise"> {
  let summary = "Element-wise fusion that never recomputes a producer";
  let description = [{
    Upstream's element-wise fusion patterns (`linalg-fuse-elementwise-ops`)
    with a stricter control: a producer is fused into a consumer only when
    the consumer has no reduction loop and reads the producer through a
    permutation map (no broadcast), and the producer has no other use.
    Upstream's default also fuses into reductions and broadcasts, which
    re-evaluates the producer's body (a GELU's tanh, say) once per reduction
    or broadcast step: on the CPU path that made a 2-layer GPT-2 spend 60% of
    its time in `tanhf`/`expm1f`/`powf`.

    Two relaxations for the GPU pipeline, where writing and re-reading a
    tensor costs more than a few arithmetic ops: `into-reductions` also
    fuses into a reduction that reads the producer through a permutation
    of all its loops (each element once: softmax's row max and sum), and
    `duplicate-cheap` fuses a producer with several consumers into each of
    them when its body is arithmetic only (arith ops and `linalg.index`: a
    scale, a mask's select and add, a causal test of the indices) and the
    consumer then reads at most 4 distinct tensors (rank-0 ones not
    counted: a chain of such producers, a decoder's residual stream read
    by each norm and the next add, would otherwise make the norm of layer l
    re-read every earlier layer's output); with it,
    a producer that only moves elements (one input, a body of casts at
    most: a transpose, a layout copy) fuses into every element-wise
    consumer whatever its indexing -- a broadcast, RoPE's rotated
    `(d + 64) mod 128` read of a transposed q -- since reading the source
    costs the load the consumer made of the copy (if less coalesced, one
    pass over memory instead of two); not into reductions, whose rows
    would be read strided. Together they take the attention scores' scaling and masking into
    softmax's max, sum and normalization instead of three passes over a
    12 x 1024 x 1024 tensor. A third, `through-reshapes`, moves a reshape
    that separates two element-wise ops past one of them (the [1, T, H]
    -> [T, H] collapse between a norm and the cast to a product's operand
    type), so that they fuse; it also treats `linalg.transpose` as the
    element-wise generic it is (the head transposes around attention fuse
    with their casts). Results are bit-identical either way. A fourth,
    `recompute-into-row-kernels`, evaluates an element-wise producer whose
    body calls the math library (SiLU(gate) · up) in each of its readers
    when those are one row reduction (reading the producer through
    reshapes only: the 1 × 128 blocks of a block quantization, or whole
    rows) and element-wise ops that also read values computed element-wise
    from that reduction's result (its scales) -- which the GPU pipeline
    runs in the reduction's kernel as its row stages, on the rows the
    reduction just read: the producer's inputs are read twice (the second
    time from cache for short rows) instead of its result being written
    and read back twice, and its kernel is gone. The producer is cloned
    per reader over that reader's shape (its inputs reshaped the same
    way: a per-column weight or a per-row factor split as the loop that
    indexes it), so each clone has one use and the fusions above take it.
    An arithmetic-only producer qualifies too where the reduction's rows
    are parts of the producer's rows: RMSNorm's x · rsqrt · w before a
    1 × 128 block quantization is evaluated in the block amax and the
    quantization, so the norm's kernel keeps only its mean (the blocks
    cannot chain in it as a whole row's amax does, RowReductions.h) and
    the normalized tensor is never written (the Llama-3-8B layer's two
    norms: 128 MB each of writes and reads less).

    Before fusing, RoPE's rotate-half -- two slices of one dimension of x,
    a unary element-wise op on either (the negation), concatenated in
    swapped order by two `tensor.insert_slice` -- becomes one element-wise
    generic that reads x at `(d + n/2) mod n` and applies the first or the
    second half's op by position, so that it fuses with the sine product
    instead of costing a negation and two copies (exact).
  }];
  let options = [
    Option<"intoReductions", "into-reductions", "bool", "false",
           "Also fuse into reductions that read each producer element once">,
    Option<"duplicateCheap", "duplicate-cheap", "bool", "false",
           "Fuse producers with several consumers into each of them when "
           "their body is arithmetic only (arith ops, linalg.index) and the "
           "consumer then reads at most 4 tensors; fuse "
           "producers that only move elements into any element-wise "
           "consumer">,
    Option<"throughReshapes", "through-reshapes", "bool", "false",
           "Move a tensor.collapse_shape / expand_shape that only one "
           "element-wise op reads past that op (upstream's fold-by-"
           "expansion), so that element-wise ops a reshape separates fuse">,
    Option<"recomputeIntoRowKernels", "recompute-into-row-kernels", "bool",
           "false",
           "An element-wise producer with a math-library body (SiLU(gate) "
           "* up; or an arithmetic one read in blocks of its rows: a norm "
           "before a block quantization) whose only readers, through "
           "reshapes, are one row "
           "reduction and element-wise ops that also read what that "
           "reduction's rows give (its per-row scale: a per-row or per-block "
           "quantization) is evaluated in each of them instead of being "
           "written and read back: they run in the reduction's kernel on "
           "the same rows">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8FuseIntoForall : Pass<"fp8-fuse-into-forall"> {
  let summary = "Element-wise producers evaluated in the scf.forall threads "
                "that read them one element each";
  let description = [{
    An `scf.forall` whose threads each read one element of a tensor
    (`tensor.extract_slice` of sizes 1) that an element-wise
    `linalg.generic` outside the loop computes, into an element-wise
    generic of the thread: the producer is tiled to that element
    (upstream's `tensor::replaceExtractSliceWithTiledProducer`) and fused
    into the thread's generic (upstream's `linalg::fuseElementwiseOps`),
    repeatedly, so that chains of producers come in too. Only producers
    that nothing else reads (every use a one-element slice in the same
    loop): nothing is computed twice, and the producer's buffer and its
    kernel are gone. One-element tiles only: they read exactly the
    elements the whole producer reads there, whatever its indexing maps
    (RoPE's `(d + 64) mod 128` included). The GPU pipeline runs it after
    element-wise fusion, for a decode step's in-place cache update
    (`fp8-kv-cache-in-place`): the new token's keys (RoPE and the cast to
    the cache's FP8 type) and values (the cast) are computed by the update
    kernel's threads, one kernel instead of three per layer. Results are
    bit-identical: the same operations on the same elements.

    Before (in the loop):
    ```mlir
    %k8 = linalg.generic ... ins(%k, %cos, %sin ...) -> tensor<1x8x1x128xf8E4M3FN>
    scf.forall (%h, %d) in (8, 128) shared_outs(%c = %cache) -> ... {
      %e = tensor.extract_slice %k8[0, %h, 0, %d] [1, 1, 1, 1] [1, 1, 1, 1]
      %u = linalg.generic ... ins(%e ...) outs(%slot ...)   // select
      ...
    ```
    After: `%u` is one generic over one-element slices of `%k`, `%cos`,
    `%sin`, and `%k8` is gone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def FP8FoldProductRounding : Pass<"fp8-fold-product-rounding"> {
  let summary = "Products write the 16-bit type their only consumer rounds to";
  let description = [{
    An `fp8.scaled_matmul` with an FP32 result whose only use -- directly or
    through `tensor.collapse_shape` / `tensor.expand_shape` that nothing
    else reads -- rounds it to f16 or bf16 (an `arith.truncf` on tensors, or
    a `linalg.generic` with identity maps whose body is that `truncf`; the
    cast an FP16 graph's MatMul becomes) produces the narrow type itself.
    The product is defined as its FP32 value rounded once to the result
    type, so the result is bit-identical; on the GPU the kernel's epilogue
    then writes 2 bytes per element and the cast kernel that read 4 bytes
    back and wrote 2 is gone (at a Llama-3-8B layer's 8192 tokens, one
    such kernel after each of its seven products).

    Before:
    ```mlir
    %y = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor>
        transpose_rhs : (...) -> tensor<8192x4096xf32>
    %h = arith.truncf %y : tensor<8192x4096xf32> to tensor<8192x4096xf16>
    ```
    After:
    ```mlir
    %h = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor>
        transpose_rhs : (...) -> tensor<8192x4096xf16>
    ```
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8MergeSiblingProducts : Pass<"fp8-merge-sibling-products"> {
  let summary = "Products of one activation with constant weights become one "
                "product over the weights concatenated along N";
  let description = [{
    `fp8.scaled_matmul` ops that read the same quantized activation (the
    same lhs, lhs scales and layouts) with constant K-major weights become
    one product over the weights concatenated along N, whose result the old
    products' users read as `tensor.extract_slice`s: a decoder layer's
    q, k and v projections (one GEMM instead of three) and its gate and up
    projections (one instead of two). Each element of the merged product
    is the same sum of the same products with the same scales as before
    (bit-identical results); what changes is the number of kernels and the
    GEMM's tile count (fewer partial waves).

    Merged only where concatenating the weights concatenates their scales:
    the weight's scale layout has the same expanded block for each weight
    and for the concatenation, and each weight's N is a multiple of the
    block's rows (`row` scales: one per output channel; `block 128x128`
    with N a multiple of 128; MXFP8's `1x32`) -- not per-tensor scales.
    Without a bias, with the same epilogue and result type, `transpose_rhs`,
    a rank-2 weight. The weights and their scales must be constants (folded
    into one constant here) or the two results of `fp8.packed_weight` ops
    (concatenated by `tensor.concat`, which `fp8-materialize-external-weights`
    turns into one tensor of the weights file that the packer writes part by
    part): never a concatenation at run time.

    Before:
    ```mlir
    %q = fp8.scaled_matmul %a, %sa layout<row>, %wq, %sq layout<row>
        transpose_rhs : (...) -> tensor<8192x4096xf16>
    %k = fp8.scaled_matmul %a, %sa layout<row>, %wk, %sk layout<row>
        transpose_rhs : (...) -> tensor<8192x1024xf16>
    ```
    After:
    ```mlir
    %w = tensor.concat dim(0) %wq, %wk : (...) -> tensor<5120x4096xf8E4M3FN>
    %s = tensor.concat dim(0) %sq, %sk : (...) -> tensor<5120x1xf32>
    %qk = fp8.scaled_matmul %a, %sa layout<row>, %w, %s layout<row>
        transpose_rhs : (...) -> tensor<8192x5120xf16>
    %q = tensor.extract_slice %qk[0, 0] [8192, 4096] [1, 1]
    %k = tensor.extract_slice %qk[0, 4096] [8192, 1024] [1, 1]
    ```
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8ContiguousInnerLoops : Pass<"fp8-contiguous-inner-loops"> {
  let summary = "Make the innermost loop of a contraction walk memory in order";
  let description = [{
    For a `linalg.generic` whose innermost loop is a reduction (a matmul
    lowered as i, j, k), moves the last parallel loop that every operand
    using it indexes as its innermost, contiguous dimension (j) to the
    innermost position (i, k, j). Each output element still sums over k in
    the same order, so results are bit-identical; but the inner loop now
    reads and writes consecutive addresses, which LLVM vectorizes, instead
    of striding through the right operand with scalar additions.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FP8InsertScales : Pass<"fp8-insert-scales", "::mlir::ModuleOp"> {
  let summary = "Run chosen matrix products in FP8 with a scaling recipe";
  let description = [{
    Finds the matrix products of a tensor-level program (`linalg.matmul`, and
    with `include-attention` the activation x activation
    `linalg.batch_matmul`s of attention) that accumulate into zeros, decides
    per product — from the options, an optional policy file, and the
    default of keeping the first and last linear layer in high precision —
    whether and how it runs in FP8, and rewrites each chosen one into

    ```
    amax -> compute_scale -> quantize   (for each operand)
    fp8.scaled_matmul                   (FP32 accumulation, FP32 result)
    ```

    Operand layouts follow the recipe: `current`/`delayed` per tensor;
    `rowwise` per row of the lhs and per column of the rhs (per token and
    per output channel, from their own amax along K); `block` 1xB blocks along K for activations and BxB for weights
    (`act-block`, `weight-block`, both in the operand's own [rows, cols]
    orientation; an activation used as the right operand gets its block
    transposed, i.e. along K); `mxfp8` 32 elements along K with E8M0 scales.
    Quantizations of constant weights fold at compile time (canonicalize).
    With `recipe=delayed` the scales of activations are first computed as
    per-tensor current scales tagged `fp8.delayed`; `fp8-track-amax` then
    turns them into amax histories. Constant weights keep current scaling:
    their amax never changes, and the scale folds at compile time.

    The policy file (JSON) refines decisions per ONNX node name or torch
    module path (both from the op's location: the importer keeps the module
    that PyTorch's exporter records, `fp8::getTorchModuleName`): `exclude`
    globs keep what they match in high precision, then the first matching
    `rules` entry (a regular expression) decides:

    ```json
    {"exclude": ["*lm_head*"],
     "rules": [
        {"match": "Gemm_252", "skip": true},
        {"match": "attn", "recipe": "current", "format": "e5m2"}
      ]
    }
    ```

    Every decision (node, torch module and class, shapes, recipe, format,
    layouts, or why it was skipped) is written to `report-file` as JSON
    (with a `schema_version`) when given.

    Before:
    ```mlir
    %0 = linalg.fill ins(%zero : f32) outs(%e : tensor<32x384xf32>) -> tensor<32x384xf32>
    %1 = linalg.matmul ins(%x, %w : tensor<32x128xf32>, tensor<128x384xf32>)
                       outs(%0 : tensor<32x384xf32>) -> tensor<32x384xf32>
    ```
    After (recipe=current):
    ```mlir
    %ax = fp8.amax %x layout<tensor> : tensor<32x128xf32> -> tensor<f32>
    %sx = fp8.compute_scale %ax recipe(#fp8.current) format(e4m3) : tensor<f32> -> tensor<f32>
    %qx = fp8.quantize %x, %sx layout<tensor> : ... -> tensor<32x128xf8E4M3FN>
    ... the same for %w ...
    %1 = fp8.scaled_matmul %qx, %sx layout<tensor>, %qw, %sw layout<tensor>
        : (...) -> tensor<32x384xf32>
    ```
  }];
  let options = [
    Option<"recipe", "recipe", "::mlir::fp8::RecipeKind",
           "::mlir::fp8::RecipeKind::Current",
           "Scaling recipe: delayed, current, rowwise, block or mxfp8",
           [{::mlir::fp8::recipeKindValues()}]>,
    Option<"format", "format", "::mlir::fp8::Format",
           "::mlir::fp8::Format::E4M3",
           "FP8 format: e4m3, e5m2, or hybrid (E4M3 for the forward "
           "tensors of an inference graph, E5M2 for gradients)",
           [{::mlir::fp8::formatValues()}]>,
    Option<"pow2", "pow2", "bool", "false",
           "Power-of-two scales for the current and delayed recipes">,
    ListOption<"actBlock", "act-block", "int64_t",
               "Block of activations for recipe=block (default 1,128)">,
    ListOption<"weightBlock", "weight-block", "int64_t",
               "Block of weights for recipe=block (default 128,128)">,
    Option<"blockPow2", "block-pow2", "bool", "true",
           "Power-of-two scales for recipe=block">,
    Option<"mxRounding", "mx-rounding", "::mlir::fp8::E8M0Rounding",
           "::mlir::fp8::E8M0Rounding::RCeil",
           "E8M0 rounding for recipe=mxfp8: rceil or floor",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fp8::E8M0Rounding::RCeil, "rceil",
                        "amax / max rounded up to a power of two"),
             clEnumValN(::mlir::fp8::E8M0Rounding::Floor, "floor",
                        "OCP MX v1.0: 2^(floor(log2 amax) - emax)"))}]>,
    Option<"history", "history", "int64_t", "1024",
           "Amax history length for recipe=delayed">,
    Option<"amaxAlgo", "amax-algo", "::mlir::fp8::AmaxAlgo",
           "::mlir::fp8::AmaxAlgo::Max",
           "Amax history reduction for recipe=delayed: max or most_recent",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fp8::AmaxAlgo::Max, "max",
                        "the history's maximum"),
             clEnumValN(::mlir::fp8::AmaxAlgo::MostRecent, "most_recent",
                        "the latest amax"))}]>,
    Option<"margin", "margin", "int64_t", "0",
           "Scale margin (powers of two) for recipe=delayed">,
    Option<"includeAttention", "include-attention", "bool", "false",
           "Also run activation x activation batched products (attention) "
           "in FP8, with per-tensor scales">,
    Option<"keepFirstLast", "keep-first-last", "bool", "true",
           "Keep the first and the last linear layer (embedding-adjacent "
           "projection, LM head) in high precision">,
    Option<"policyFile", "policy-file", "std::string", "\"\"",
           "JSON policy: exclude globs and per-node/module rules "
           "(match/skip/recipe/format)">,
    Option<"reportFile", "report-file", "std::string", "\"\"",
           "Write every decision as JSON to this file">,
    Option<"strict", "strict", "bool", "false",
           "A policy rule that decides no product is an error (else a "
           "warning)">,
    Option<"analyze", "analyze", "bool", "false",
           "Numerics analysis build: keep each FP8 product's FP32 twin and "
           "accumulate, across runs, the energies of every operand, of its "
           "quantization error, of the FP32 product and of the FP8 product's "
           "error, and the largest activation amax, in state globals "
           "fp8_state_stats_<n> (see scripts/fp8_report.py)">,
    Option<"calibrationFile", "calibration-file", "std::string", "\"\"",
           "JSON {node: {\"amax\": v}} from calibration runs: per-tensor "
           "current scaling uses the calibrated amax as a static scale, "
           "delayed scaling starts its history with it">
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::ml_program::MLProgramDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8TrackAmax : Pass<"fp8-track-amax", "::mlir::ModuleOp"> {
  let summary = "Delayed scaling: amax histories as persistent state";
  let description = [{
    For every `fp8.compute_scale` tagged `fp8.delayed = #fp8.delayed<...>`
    (as `fp8-insert-scales{recipe=delayed}` leaves them), materializes two
    mutable `ml_program.global`s — the amax history `[history] + scale shape`
    (zeros) and the previous scale (ones) — and replaces the current-scale
    computation by Transformer Engine's delayed-scaling step: the scale comes
    from the history (and the previous scale where the history holds no
    usable amax), this step's amax is recorded with `fp8.history_update`, and
    history and scale are stored back. The state lives as long as the
    compiled model is loaded, so consecutive runs see each other's amaxes.

    Before:
    ```mlir
    %a = fp8.amax %x layout<tensor> : tensor<8x8xf32> -> tensor<f32>
    %s = fp8.compute_scale %a recipe(#fp8.current) format(e4m3)
        {fp8.delayed = #fp8.delayed<history = 16>} : tensor<f32> -> tensor<f32>
    ```
    After:
    ```mlir
    ml_program.global private mutable @fp8_state_0_history(dense<0.0> : tensor<16xf32>) : tensor<16xf32>
    ml_program.global private mutable @fp8_state_0_scale(dense<1.0> : tensor<f32>) : tensor<f32>
    ...
    %h = ml_program.global_load @fp8_state_0_history : tensor<16xf32>
    %p = ml_program.global_load @fp8_state_0_scale : tensor<f32>
    %s = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16>) format(e4m3) ...
    %h2 = fp8.history_update %h, %a : tensor<16xf32>, tensor<f32>
    ml_program.global_store @fp8_state_0_history = %h2 : tensor<16xf32>
    ml_program.global_store @fp8_state_0_scale = %s : tensor<f32>
    ```
  }];
  let dependentDialects = ["::mlir::ml_program::MLProgramDialect"];
}

def FP8TransposeRescale : Pass<"fp8-transpose-rescale"> {
  let summary = "Make the right operand of FP8 products K-major";
  let description = [{
    Hopper's FP8 `wgmma` reads B K-major (`transpose_rhs`, an N x K tensor).
    This pass turns every `fp8.scaled_matmul` whose right operand is K x N
    into one that reads an N x K operand, through `fp8.transpose`:

    * when the operand's scale layout survives the transpose as a layout a
      K-major kernel can use (per tensor; scales constant along N within a
      block row: per-row, 1xB along K, square BxB blocks), the transpose is a
      pass-through: bytes and scales move, nothing rounds, and for constant
      weights the move folds at compile time;
    * otherwise (blocks along N) the operand is re-quantized with blocks of
      the same size along K: from the high-precision source when the
      quantized value was made by an `fp8.quantize` in reach (as Transformer
      Engine does), else by dequantize-requantize in `fp8.transpose`.

    The pass says which it chose with a remark on each product (`remarks`).

    Before:
    ```mlir
    %y = fp8.scaled_matmul %a, %sa layout<block 1x128>, %w, %sw layout<block 128x128>
        : (tensor<32x256xf8E4M3FN>, tensor<32x2xf32>, tensor<256x64xf8E4M3FN>, tensor<2x1xf32>) -> tensor<32x64xf32>
    ```
    After:
    ```mlir
    %wt, %swt = fp8.transpose %w, %sw layout<block 128x128> permutation = [1, 0]
        to layout<block 128x128> : ... -> tensor<64x256xf8E4M3FN>, tensor<1x2xf32>
    %y = fp8.scaled_matmul %a, %sa layout<block 1x128>, %wt, %swt layout<block 128x128>
        transpose_rhs : (...) -> tensor<32x64xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Report the choice made for each product as a remark">
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8QuantizeAttention
    : Pass<"fp8-quantize-attention", "::mlir::func::FuncOp"> {
  let summary = "Run fused attention on FP8 query, key and value";
  let description = [{
    Every `fp8.attention` of high-precision operands gets its query, key and
    value quantized with current scaling (`fp8.amax` -> `fp8.compute_scale`
    -> `fp8.quantize`, the `current` recipe's three steps, in `format`) and
    becomes an FP8 `fp8.attention` with their dequantization scales: both of
    its products (`q k^T` and `p v`) then run on FP8 tensor cores in the
    fused GPU kernel (`P` in E4M3). Scales are per block of `block-tokens`
    positions of one (batch, head) over the whole head dimension
    (`layout<block 128xD>`: on the GPU each block's amax is one warp's row
    reduction and the kernel reads one scale per query tile and per key
    tile), or per tensor with `block-tokens=0` or where a sequence or head
    dim is dynamic. The CPU path computes the op's definition on the
    dequantized operands, which is also the reference the GPU kernel is
    checked against. Mask, scale, causality and the result type stay.
    `fp8-compile --fp8-attention` runs it after the recipe's own passes,
    whatever the recipe (the scales are current ones, also under
    `delayed`).

    ```mlir
    %o = fp8.attention %q, %k, %v scale(0.125) causal
        : (tensor<1x4x256x128xbf16>, tensor<1x2x256x128xbf16>,
           tensor<1x2x256x128xbf16>) -> tensor<1x4x256x128xbf16>
    // becomes
    %aq = fp8.amax %q layout<block 128x128>
        : tensor<1x4x256x128xbf16> -> tensor<1x4x2x1xf32>
    %sq = fp8.compute_scale %aq recipe(#fp8.current) format(e4m3) ...
    %q8 = fp8.quantize %q, %sq layout<block 128x128>
        : ... -> tensor<1x4x256x128xf8E4M3FN>
    ...
    %o = fp8.attention %q8, %k8, %v8 scales(%sq, %sk, %sv)
        scale_layout<block 128x128> scale(0.125) causal
        : (...) -> tensor<1x4x256x128xbf16>
    ```
  }];
  let options = [
    Option<"format", "format", "::mlir::fp8::Format",
           "::mlir::fp8::Format::E4M3", "FP8 format of q, k and v: e4m3 or e5m2",
           [{::mlir::fp8::cacheFormatValues()}]>,
    Option<"blockTokens", "block-tokens", "int64_t", "128",
           "Positions per scale block (0: one scale per tensor)">
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8HighPrecisionProducts
    : Pass<"fp8-high-precision-products", "::mlir::ModuleOp"> {
  let summary = "Run the products kept out of FP8 as BF16 products";
  let description = [{
    Every `linalg.matmul` / `linalg.batch_matmul` still in high precision
    (FP32, FP16 or BF16 operands, zero-filled accumulator, static shapes,
    default indexing maps) -- what a recipe's policy keeps out of FP8
    (first and last linear layers, attention's products, skipped rules), or
    every product with no recipe -- becomes an `fp8.scaled_matmul` of its
    operands rounded to BF16 (round to nearest even) with unit per-tensor
    scales: FP32 accumulation of exact BF16 x BF16 products, the form the
    GPU path runs on BF16 tensor cores (`wgmma ... bf16`) and the CPU path
    computes as the reference. `fp8-compile --high-precision=bf16` (the
    default with an FP8 recipe) runs it; `fp32` keeps the products exact.

    With `k-major-rhs` the right operand is transposed to `[..., N, K]`
    (`transpose_rhs`, what the GPU kernels read). Constant right operands
    (weights) are rounded and transposed at compile time; others
    (activations, external weights) by element-wise ops at run time.
    An `fp8.attention` gets its query, key and value rounded to BF16 the
    same way (its result type stays): both of its products then have BF16
    operands, as the decomposed attention's would, and a fused kernel reads
    BF16.

    ```mlir
    %y = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>)
                       outs(%zero : tensor<8x32xf32>) -> tensor<8x32xf32>
    // becomes
    %xb = arith.truncf %x : tensor<8x64xf32> to tensor<8x64xbf16>
    %y = fp8.scaled_matmul %xb, %one layout<tensor>, %wt, %one layout<tensor>
        transpose_rhs : (tensor<8x64xbf16>, tensor<f32>, tensor<32x64xbf16>,
                         tensor<f32>) -> tensor<8x32xf32>
    ```
  }];
  let options = [
    Option<"kMajorRhs", "k-major-rhs", "bool", "true",
           "Store right operands K-major (transpose_rhs), as the GPU "
           "kernels read them">
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8ExposeQuantized : Pass<"fp8-expose-quantized", "::mlir::ModuleOp"> {
  let summary = "Return every quantized activation and its scales as extra "
                "results (for cross-target bit-exactness checks)";
  let description = [{
    Appends to the results of the function `entry`, for every
    `fp8.quantize` that was not folded at compile time (the activations'
    quantizations): its input (as f32), its FP8 result and its scale
    tensor, named `fp8:x<i>:<node>:<how>`, `fp8:q<i>:...`, `fp8:s<i>:...`
    (`onnx.name`; node from the op's location). `<how>` is
    `layout=...;fmt=...;scale=...`, enough for a checker to recompute the
    quantization from the exposed input with a reference implementation
    (`scale=current eps=.. pow2=..`, `block ...` or `mxfp8 rceil|floor` when
    the scale is computed from this input's amax, else `given`). E8M0
    scales are returned as their bytes (uint8). `scripts/gpu-check` uses it
    to check every quantized tensor of a GPU run bit for bit against
    `test/reference/fp8ref.py` and against the CPU build.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The function whose results are extended">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def FP8KVCache : Pass<"fp8-kv-cache", "::mlir::ModuleOp"> {
  let summary = "Store a decoder's KV cache inputs and outputs in FP8 with "
                "per-tensor static scales";
  let description = [{
    For decoder graphs exported with a cache (inputs such as
    `past_key_values.<i>.key`, outputs such as `present.<i>.key`): the
    graph inputs whose `onnx.name` matches `inputs` and the results whose
    name matches `outputs` change from f32/f16/bf16 to FP8 (`format`), one
    static per-tensor dequantization scale each (`x ≈ q · s`, as vLLM's and
    TensorRT-LLM's FP8 KV caches). A cache needs a static scale: the output
    of one step is the input of the next, and re-scaling the whole cache at
    every step would re-round tokens already stored.

    Rewrites, in the function `entry`:
    * a cache input becomes FP8; its uses read `fp8.dequantize(input, s)`;
    * a cache output `v` becomes `q = fp8.quantize(v, s)`; every other use
      of `v` in the graph (attention) reads `fp8.dequantize(q, s)`, so the
      current step attends to exactly what the next step will read;
    * the quantize is pushed through the concatenation that builds the
      output (`tensor.insert_slice` chains, as the importer writes ONNX
      `Concat`): the part that comes from a cache input with the same scale
      is that input's bytes, verbatim (not re-rounded), and only the new
      tokens are quantized.

    Scales: `scale` for every cache tensor (default 1.0, vLLM's default),
    or per tensor from `scales-file`, a JSON object mapping tensor names
    (an input's or an output's) to a dequantization scale (a number) or to
    `{"amax": A}` (calibrated: `s = 1 / (fp8_max / A)`, current scaling's
    rule). An output and the cache input among the pieces of its
    concatenation form a pair and must have one scale; a mismatch is an
    error. An output whose concatenation holds no cache input (a first
    step compiled with an empty past, whose empty piece the importer drops)
    pairs by name: `present` replaced by `past_key_values` or `past`.
    Scales must be positive normal floats for which `q · s` can neither
    overflow nor underflow the cache's type (f32, f16 or bf16), so the
    round trip is exact.

    Errors name the tensor: no input or output matched, a non-float cache
    tensor, a bad or conflicting scale, an unreadable file. With `remarks`
    each cache tensor's scale and pairing is a remark at its location.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The graph function">,
    Option<"inputs", "inputs", "std::string", "\"^past\"",
           "Regular expression on input names selecting the cache inputs">,
    Option<"outputs", "outputs", "std::string", "\"^present\"",
           "Regular expression on result names selecting the cache outputs">,
    Option<"format", "format", "::mlir::fp8::Format",
           "::mlir::fp8::Format::E4M3", "FP8 format of the cache: e4m3 or e5m2",
           [{::mlir::fp8::cacheFormatValues()}]>,
    Option<"scale", "scale", "double", "1.0",
           "Dequantization scale of every cache tensor without an entry in "
           "scales-file">,
    Option<"scalesFile", "scales-file", "std::string", "\"\"",
           "JSON object: tensor name -> scale, or -> {\"amax\": A}">,
    Option<"remarks", "remarks", "bool", "false",
           "Report each cache tensor, its pair and its scale as a remark">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}


def FP8KVCacheInPlace : Pass<"fp8-kv-cache-in-place", "::mlir::ModuleOp"> {
  let summary = "Append a decode step's keys and values to its cache in "
                "place, at run-time positions";
  let description = [{
    A decoder exported with its cache as plain tensors builds each `present`
    output as `Concat(past, new)` along the sequence axis: a step that adds
    one token copies the whole cache. For a decode step (one new token per
    sequence) this pass makes each such cache a tensor updated in place, as
    vLLM's and TensorRT-LLM's preallocated caches are:

    * the `past` input, a `[batch, heads, sequence, head_dim]` cache, takes
      the `present` output's shape (the graph's past length plus one: the
      whole preallocated cache, `CAPACITY` slots; every cache has the same);
    * a new input (`position-input`, default `cache_position`, `[batch]`
      i64, appended after the graph's inputs) gives each sequence's slot
      for its new token; that slot of `past` receives the new key/value,
      every other slot is left as it is;
    * the `present` output is that updated `past` and is *tied* to it
      (result attribute `fp8.tied_input` = the input's index): the model
      ABI (signature version 4) lets the caller pass one buffer for both,
      and the run then writes only the new token's values (`B · H · D`
      elements per cache) instead of copying the cache.

    The attention that read `Concat(past, new)` now reads the updated
    cache: the same keys and values in another order of slots, which the
    caller's `attention_mask` must follow (valid: the sequence's slots up to
    and including its new token's). With one new token the graph's causal
    mask admits every slot, so this is the same attention. Steps of more
    than one token (a prefill) are refused: their causal mask depends on
    the slot order.

    A position outside `[0, CAPACITY)` writes nothing and makes the run
    fail with a run-time check naming the input and the valid range (the
    status result `fp8.check_status`, created when the graph has none); a
    run the graph's own checks refuse writes nothing either (their status
    is moved up to gate the writes; a warning says when it cannot be).
    Caches whose new values have one shape (a layer's keys and values)
    share one `scf.forall`, placed before the first use of any of them.
    Runs after `fp8-kv-cache` (an FP8 cache's new token is then already
    quantized); errors name the output that does not have the expected
    form.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The graph function">,
    Option<"inputs", "inputs", "std::string", "\"^past\"",
           "Regular expression on input names selecting the cache inputs">,
    Option<"outputs", "outputs", "std::string", "\"^present\"",
           "Regular expression on result names selecting the cache outputs">,
    Option<"positionInput", "position-input", "std::string",
           "\"cache_position\"",
           "Name of the new [batch] i64 input: each sequence's slot for its "
           "new token">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8DropTiedResults : Pass<"fp8-drop-tied-results", "::mlir::ModuleOp"> {
  let summary = "Remove results that are an argument updated in place";
  let description = [{
    After bufferization, before results become out-parameters (the model
    ABI): a public function's result marked `fp8.tied_input = i`
    (fp8-kv-cache-in-place) is argument `i`'s buffer updated in place, and
    the ABI passes that buffer once, as the input. The result is removed
    from the function and its `return`. When bufferization did not update
    the argument's own buffer, the returned buffer is copied into it first
    (correct, but it copies the whole tensor), with a warning naming the
    output.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FP8RequireStaticModelABI
    : Pass<"fp8-require-static-model-abi", "::mlir::ModuleOp"> {
  let summary = "Refuse dynamic shapes at a bare-pointer model boundary";
  let description = [{
    A model library's entry takes one pointer per tensor (the lowering
    pipelines' `model-abi`), which holds no sizes: it needs static shapes.
    A module with a dynamic dimension at its boundary needs
    `model-abi-descriptors=true` (memref descriptors: pointers, sizes,
    strides), which `fp8-compile` sets for a model with dynamic dimensions.
    Without this check the pipelines' bare-pointer lowering would leave
    such a function half-lowered (a `func.func` of memrefs in LLVM-dialect
    output) and no error. The first of both lowering pipelines under
    `model-abi` without descriptors: fails on the first argument or result
    of a public function (named by its `onnx.name`) whose type has a
    dynamic dimension, saying what to do. Declarations are skipped (the
    runtime's take `memref<?x...>`).
  }];
}

def FP8DistinctResultBuffers
    : Pass<"fp8-distinct-result-buffers", "::mlir::ModuleOp"> {
  let summary = "Give each result of a function its own buffer";
  let description = [{
    After bufferization, before buffer-results-to-out-params: a function
    that returns one buffer as several results (a graph whose outputs are
    the same tensor, `Softmax(X, axis=-1)` and `Softmax(X, axis=2)` on a
    rank-3 X once canonicalized) returns, for each repeat, a fresh copy of
    it. Each output of the model ABI is its own buffer, and upstream's
    buffer-results-to-out-params (with `hoist-static-allocs`) replaces a
    returned allocation by the first result's out-parameter and erases it,
    which leaves the repeats dangling (MLIR 22 crashes on them).

    ```mlir
    return %a, %a : memref<4xf32>, memref<4xf32>
    // becomes
    %copy = memref.alloc() : memref<4xf32>
    memref.copy %a, %copy : memref<4xf32> to memref<4xf32>
    return %a, %copy : memref<4xf32>, memref<4xf32>
    ```

    Repeats are the same SSA value, or views (`memref.cast`,
    `expand_shape`, `collapse_shape`) of one buffer. The buffer stays with
    the first result that returns it itself (so that its allocation can be
    hoisted), else with its first view; the others get copies. Dynamic
    shapes take their sizes from the repeated value (`memref.dim`); a
    repeat with a non-identity layout is an error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FP8ReturnAllocations
    : Pass<"fp8-return-allocations", "::mlir::ModuleOp"> {
  let summary = "Return a reshaped allocation as an allocation of the "
                "returned shape";
  let description = [{
    After bufferization, before buffer-results-to-out-params: a function
    that returns a reshaping view (`memref.expand_shape`,
    `collapse_shape`) of an allocation of static shape and identity layout
    -- a model's output that its last kernel writes at another rank, as a
    GEMM writes [M, N] for a [B, S, N] output -- allocates the returned
    shape instead and gives the allocation's users the inverse view of it.
    Upstream's `hoist-static-allocs` then replaces the returned allocation
    by the out-parameter, so the kernel writes the caller's buffer: no copy
    of the output after the run (a 64 MiB copy kernel for the Llama layer's
    output when its residual add is the down projection's epilogue).

    ```mlir
    %a = memref.alloc() : memref<8192x4096xf16>
    ... writes %a ...
    %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 8192, 4096]
    return %e
    // becomes
    %r = memref.alloc() : memref<1x8192x4096xf16>
    %a = memref.collapse_shape %r [[0, 1], [2]]
    ... writes %a ...
    return %r
    ```

    A buffer that two results return (fp8-distinct-result-buffers runs
    first and copies repeats) stays as it is.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FP8PackExternalWeights
    : Pass<"fp8-pack-external-weights", "::mlir::ModuleOp"> {
  let summary = "Fold the recipe's quantization of external weights into "
                "fp8.packed_weight";
  let description = [{
    A weight that stays in its file (`fp8.external_weight`) is quantized by
    the recipe like any weight: `fp8.amax`, `fp8.compute_scale` (a recipe
    that scales from the tensor), `fp8.quantize`, then usually a
    pass-through `fp8.transpose` (K-major) and a `tensor.pad` with FP8 zeros
    (whole tiles). Constant folding does that at compile time for weights
    the compiler holds; for these, which it never reads, the patterns here
    fold each chain into one `fp8.packed_weight`, which the weights packer
    computes from the file when it writes the weights file: the library
    holds FP8 weights either way, and the bytes are the folders'. A chain
    whose intermediate values have other users keeps them (computed at run
    time from the external weight). Likewise the BF16 operand of a product
    kept out of FP8 (`arith.extf` of an FP16/BF16 weight, `arith.truncf` to
    BF16 rounding to nearest even, a K-major `linalg.transpose`) becomes one
    `fp8.rounded_weight`, which the packer writes once instead of a kernel
    converting the weight every run.

    ```mlir
    %a = fp8.amax %w layout<block 128x128> ...
    %s = fp8.compute_scale %a recipe(#fp8.block) format(e4m3) ...
    %q = fp8.quantize %w, %s layout<block 128x128> ...
    %t, %ts = fp8.transpose %q, %s layout<block 128x128> permutation = [1, 0]
        to layout<block 128x128> ...
    // becomes
    %t, %ts = fp8.packed_weight "w" from "model.onnx.data" [0, 33554432]
        : tensor<4096x4096xf16> layout<block 128x128> recipe(#fp8.block)
        format(e4m3) permutation = [1, 0] -> ...
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FP8MaterializeExternalWeights
    : Pass<"fp8-materialize-external-weights", "::mlir::ModuleOp"> {
  let summary = "External weights as uninitialized constant memref.globals";
  let description = [{
    Replaces each `fp8.external_weight` with a read-only
    `bufferization.to_tensor` of a `memref.get_global` of an uninitialized
    constant `memref.global @__fp8_external_<name>`, and records where its
    bytes are in the module attribute `fp8.external_weights` (global name
    -> `{name, location, offset, length}`). Bufferization and the lowerings
    treat it as any constant; `fp8::externalizeWeights` (fp8-compile) then
    gives its slot and streams the bytes from the file into the library's
    weights file. A module run without that step would read zeros: the
    pipelines that produce model libraries are the only users.

    A `tensor.concat` along dimension 0 of packed weights' data (or of
    their scales), as `fp8-merge-sibling-products` makes, becomes one
    global `@__fp8_packed_<names>[_scale]` whose entry is `{kind =
    "concat", parts = [...]}`, each part the entry the packed result would
    have had alone: the packer writes the parts one after the other.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FP8ExactReciprocals : Pass<"fp8-exact-reciprocals"> {
  let summary = "Divisions by power-of-two scales become multiplications";
  let description = [{
    A quantization divides each element by its scale (`x / s`). When the
    scale is built so that its reciprocal is exact -- a power of two, as
    every recipe's power-of-two option, the block recipes and MXFP8's E8M0
    scales make it -- the division equals a multiplication by that
    reciprocal bit for bit, and a multiplication is one instruction where an
    IEEE division is about ten on the GPU (a 1x128 block quantization of
    the Llama FFN activation divides 117 M elements).

    Recognized divisors (f32; depth-limited):
    * `arith.divf 1.0, %e` with `%e` zero-mantissa: `x / (1/e)` becomes
      `x * e`;
    * a zero-mantissa `%s` itself -- a constant +-2^k, or a `bitcast` of
      an `andi` whose mask clears the 23 mantissa bits, or of a `shli` by
      at least 23 -- divided more than once or in another block than its
      definition: one `1.0 / s` next to `%s`, then multiplications;
    * `arith.select` of two such divisors.

    A zero-mantissa f32 is +-2^k (k in [-126, 127]), +-0 or +-inf; its
    reciprocal is exact (2^-127 is a representable subnormal), so both
    forms round the same exact real once, and zeros, infinities and NaNs
    give the same results (x/0 = x*inf, x/inf = x*0). Divisions with
    fast-math flags, and divisors the pass cannot prove, stay.

    Before:
    ```mlir
    %m = arith.andi %bits, %c-8388608_i32 : i32
    %e = arith.bitcast %m : i32 to f32
    %s = arith.divf %one, %e : f32
    %q = arith.divf %x, %s : f32
    ```
    After:
    ```mlir
    %q = arith.mulf %x, %e : f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // FP8_TRANSFORMS_PASSES_TD
