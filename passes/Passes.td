//===- Passes.td - tfm passes ------------------------------*- tablegen -*-===//
//
// Every attune pass, one per file. The descriptions are the pass reference:
// each shows the IR before and after.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_PASSES_TD
#define ATTUNE_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def FuseAttention : Pass<"tfm-fuse-attention"> {
  let summary = "Raise decomposed scaled dot-product attention to tfm.attention";
  let description = [{
    Finds attention written out op by op, the way exporters (PyTorch, Hugging
    Face, ONNX) write it, and replaces it with one `tfm.attention`, which code
    generation turns into a kernel that never stores the score matrix.

    The anchor is a `tfm.softmax` over the last axis whose result is the
    left operand of a `tfm.matmul` with V. From the softmax input the pass
    walks up through, in any order:

    * mask steps: `tfm.add` of a float mask (either side) becomes the
      additive `mask`, if no scale step sits between it and the softmax
      (that would scale the mask too); `tfm.where(c, s, fill)` keeps the
      scores where `c` is nonzero and becomes `key_padding_mask` when `c` is
      a `[B, Sk]` tensor reshaped to `[B, 1, 1, Sk]`; any other
      `tfm.where(c, fill, s)` (masked_fill) or `tfm.where(c, s, fill)`
      becomes the additive mask `where(c, fill, 0)` or `where(c, 0, fill)`.
      A fill must be a splat constant of -inf, <= -1e9, or the element
      type's lowest value (`torch.finfo(dtype).min`). `tfm.causal_mask`, or
      a where whose condition is a constant masking exactly `j > i + (Sk -
      Sq)` (GPT-2's `bias` buffer), sets `causal`. Several masks are summed
      into one;
    * scale steps: `tfm.mul` by a splat constant, `tfm.div` by a splat
      constant (scale 1/c), before or after the QK matmul, or applied to q or
      k before it;

    down to `tfm.matmul(Q, K) {transpose_b}` or `tfm.matmul(Q, Kt)` with
    `Kt = tfm.transpose(K) {permutation = [0, 1, 3, 2]}`. Q, K and V are
    rank-4 BHSD values; head split/merge reshapes and transposes around them
    stay. K and V that are both `tfm.repeat_interleave {axis = 1}` of
    smaller tensors by the same factor are taken un-repeated (GQA). P x V
    on heads merged into the batch (`bmm(P.view(B*H, Sq, Sk), v [B*H, Sk,
    Dv])`, Hugging Face's DeBERTa) is first rewritten to the rank-4 product
    on `[B, H]` views, which is exact.

    Every intermediate value must have no user outside the pattern. A softmax
    that is not fused gets a remark `attention not fused: <reason>`; the
    reasons are also written to `report-file` as JSON when it is set (run the
    pass on the module then: each run writes the whole file). Unfused sites
    have `null` scale, causal and mask; `mask` is `none`, `additive`,
    `key_padding` or `additive+key_padding`.

    ```json
    {"sites": [{"location": "...", "fused": true, "reason": "",
                "scale": 0.125, "causal": true, "mask": "none"} ],
     "fused": 1, "not_fused": 0}
    ```

    Before:

    ```mlir
    %s = tfm.matmul %q, %k {transpose_b = true}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    %c = arith.constant dense<1.250000e-01> : tensor<f32>
    %t = tfm.mul %s, %c : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %m = tfm.causal_mask %t : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v
        : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    ```

    After:

    ```mlir
    %o = tfm.attention %q, %k, %v {causal = true, scale = 1.250000e-01 : f64}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
        -> tensor<1x12x?x64xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"reportFile", "report-file", "std::string", /*default=*/"\"\"",
           "Write every softmax site found, fused or not and why, to this "
           "file as JSON">,
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of attention sites fused">,
    Statistic<"numNotFused", "num-not-fused",
              "Number of softmax sites left unfused">,
  ];
}

def RaiseEncodings : Pass<"tfm-raise-encodings"> {
  let summary = "Raise exporters' RoPE, ALiBi, T5, Shaw and DeBERTa spellings to tfm.rope and score modifiers";
  let description = [{
    Exporters write positional encodings as the model's Python code computes
    them. This pass recognises these spellings and replaces each with the
    op that -tfm-fuse-attention folds into the attention kernel:

    * RoPE in the split-halves layout (GPT-NeoX, LLaMA), written with
      Hugging Face's `rotate_half`: `x * cos(A) + rotate_half(x) * sin(A)`,
      `rotate_half(x) = concat(-x[..., R/2:], x[..., :R/2])`, angles `A =
      concat(F, F)` with `F = positions[S, 1] * inv_freq[R/2]`, positions a
      `tfm.arange` along x's sequence axis (plus a constant offset) and
      `inv_freq` a constant equal to `base^(-2i/R)`. Becomes `tfm.rope x
      {base, position_offset}`; a rotation of `x[..., :R]` concatenated
      with `x[..., R:]` becomes `tfm.rope x {rotary_dims = R}`.
    * RoPE in the interleaved layout (GPT-J's `rotate_every_two`, tables
      repeated pairwise): `tfm.rope {interleaved = true}`.
    * ALiBi from an arange difference: `scores + m[h] * (j - i)` or
      `scores - m[h] * |j - i|`, with i and j aranges along the query and key
      axes of provably equal lengths and `m` the paper's slopes for some
      `max_bias`. Becomes `tfm.score_bias {modifier = {kind = "alibi"}}`.
    * T5's bias: a `[buckets, H]` table looked up (`tfm.embedding`) by ids
      computed from positions only, moved to `[1, H, Sq, Sk]` and added to
      the scores (alone or summed with a mask). The ids are evaluated as a
      function of positions, checked to depend on `j - i` only, and T5's
      `bidirectional` and `max_distance` fitted to them for distances up to
      4096. Becomes `tfm.score_bias {modifier = {kind = "t5"}}`.
    * Shaw et al. as tensor2tensor writes it: embeddings gathered by
      `clip(j - i, -K, K) + K`, multiplied per query with q (added to
      `q k^T`) and with the probabilities (added to `P V`). Becomes
      `tfm.score_bias content(q, k)` and `tfm.score_values {kind = "shaw"}`.
    * DeBERTa as Hugging Face's DebertaV2 writes it: `q k^T / s` (the scale
      on k^T, on q or on the product) plus `gather(q Kr^T, -1, c2p) / s` and
      `gather(k Qr^T, -1, p2c)^T / s`, on `[..., S, d]` tensors (heads merged
      into the batch or not), with `c2p = clamp(rel(i - j) + k, 0, 2k - 1)`,
      `p2c = clamp(k - rel(i - j), 0, 2k - 1)` (expanded over batch and
      heads), `2k` the rows of the per-head tables `Kr`, `Qr`, and rel the
      distance or DeBERTa-v2's log buckets (`make_log_bucket_position`). The
      indices are read as functions of the positions as T5's are, and the
      modifier's `max_position` fitted to them. All three terms must read
      the same q and k and carry one scale. Becomes `div(tfm.score_bias
      (q k^T) content(q, k) {kind = "deberta"}, s)` on `[1, B*H, Sq, Sk]`
      views; a view of the sum as `[B, H, Sq, Sk]` reads it directly.

    Lengths count as equal when they are provably one: the same function
    argument's dimension carried through shape-keeping ops, or argument
    dimensions of one `tfm.dim_names` name.

    Constants are checked to f32 rounding (relative 1e-5); what matches in
    structure but fails a check (scaled RoPE frequencies, other slopes,
    positions of another length) stays as it was, with a remark
    `<encoding> not raised: <reason>` and a `tfm.not_raised` attribute whose
    reason -tfm-fuse-attention's report lists under `encodings`.

    Before:

    ```mlir
    %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x8x?x64xf32> -> tensor<?xf32>
    %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
    %f = tfm.mul %col, %inv_freq : tensor<?x1xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
    %cos = tfm.cos %a : tensor<?x64xf32> -> tensor<?x64xf32>
    %sin = tfm.sin %a : tensor<?x64xf32> -> tensor<?x64xf32>
    %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 32 : i64} : tensor<1x8x?x64xf32> -> tensor<1x8x?x32xf32>
    %x2 = tfm.slice %q {axis = 3 : i64, start = 32 : i64, end = 64 : i64} : tensor<1x8x?x64xf32> -> tensor<1x8x?x32xf32>
    %n = tfm.neg %x2 : tensor<1x8x?x32xf32> -> tensor<1x8x?x32xf32>
    %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x8x?x32xf32>, tensor<1x8x?x32xf32> -> tensor<1x8x?x64xf32>
    %qc = tfm.mul %q, %cos : tensor<1x8x?x64xf32>, tensor<?x64xf32> -> tensor<1x8x?x64xf32>
    %hs = tfm.mul %h, %sin : tensor<1x8x?x64xf32>, tensor<?x64xf32> -> tensor<1x8x?x64xf32>
    %r = tfm.add %qc, %hs : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    ```

    After:

    ```mlir
    %r = tfm.rope %q {base = 1.000000e+04 : f64} : tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numRaised", "num-raised", "Number of encodings raised">,
    Statistic<"numNotRaised", "num-not-raised",
              "Number of encodings recognised but not raised">,
  ];
}

def DecomposeAttention : Pass<"tfm-decompose-attention"> {
  let summary = "Expand tfm.attention into matmul, scale, masks, softmax and matmul";
  let description = [{
    The inverse of `-tfm-fuse-attention`, so one model can be built unfused
    for comparison and so the reference evaluator can check the fused op
    against its definition. The output is the canonical form that
    `-tfm-fuse-attention` raises back to the same `tfm.attention`:

    `matmul(q, k) {transpose_b}` -> `mul` by a splat `scale` constant ->
    `add` of `mask` (if any) -> `where(reshape(key_padding_mask to
    [B, 1, 1, Sk]), s, -inf)` (if any) -> `causal_mask` (if `causal`) ->
    `softmax` over the last axis -> `matmul` with v. Grouped-query attention
    (Hkv < H) repeats k and v with `repeat_interleave {axis = 1}`.

    A fully masked row differs: `tfm.attention` defines its output as 0,
    while the decomposed softmax of an all -inf row is NaN, as in PyTorch.
    The scale constant has the element type of q, so a scale that type cannot
    represent exactly (1/sqrt(96) in f32) comes back from a round trip
    through `-tfm-fuse-attention` rounded to it.

    Before:

    ```mlir
    %o = tfm.attention %q, %k, %v {causal = true, scale = 1.250000e-01 : f64}
        : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>
        -> tensor<1x8x?x64xf32>
    ```

    After:

    ```mlir
    %k4 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 4 : i64}
        : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
    %v4 = tfm.repeat_interleave %v {axis = 1 : i64, repeats = 4 : i64}
        : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
    %s = tfm.matmul %q, %k4 {transpose_b = true}
        : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x?xf32>
    %c = arith.constant dense<1.250000e-01> : tensor<f32>
    %t = tfm.mul %s, %c : tensor<1x8x?x?xf32>, tensor<f32> -> tensor<1x8x?x?xf32>
    %m = tfm.causal_mask %t : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
    %o = tfm.matmul %p, %v4
        : tensor<1x8x?x?xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Epilogues
//===----------------------------------------------------------------------===//

def FuseEpilogues : Pass<"tfm-fuse-epilogues"> {
  let summary = "Fold the activation after a tfm.linear into the linear";
  let description = [{
    A `tfm.relu`, `tfm.silu` or `tfm.gelu` (either approximation) whose
    input is a `tfm.linear` without an activation, and the linear's only
    user, becomes that linear's `activation`. Code generation applies it to
    the GEMM's accumulators as they are stored, so the activation costs no
    pass of its own over the [tokens, N] output (BERT's and GPT-2's MLP
    after their first layer, LLaMA's gate projection before SwiGLU's
    product). The result is the same function: the kernel evaluates the
    activation exactly as the element-wise kernel does, before rounding to
    the element type instead of after (within an ulp).

    A linear with other users keeps its result and the activation stays an
    op: computing the linear twice, or storing both values, costs more than
    the pass it saves.

    A target whose GEMM cannot apply an activation (cuBLASLt, for
    --target=cuda, has ReLU and tanh GELU epilogues, no erf GELU and no
    SiLU) names the ones it can in `activations`; the others stay ops, each
    marked `tfm.unfused_epilogue` with the reason, so the IR dump says why.

    attune-compile runs it with `--fuse-epilogues` only. Measured on
    all-MiniLM-L6-v2 and the GPT-2 block (AMD EPYC Zen 5) it was no faster
    on AVX-512 (GELU is compute-bound, and its own pass reads what the GEMM
    just left in cache) and 2-3% slower on AVX2, whose 16 registers the
    GEMM tile fills: with the activation in its loop nest LLVM spilled an
    accumulator every K step, so that tile gives up a row.

    Before:

    ```mlir
    %h = tfm.linear %x, %w, %b
        : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
    %a = tfm.gelu %h {approximate = #tfm.gelu_approx<tanh>}
        : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
    ```

    After:

    ```mlir
    %a = tfm.linear %x, %w, %b {activation = #tfm.activation<gelu_tanh>}
        : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of activations folded into a linear">,
  ];
  let options = [
    ListOption<"activations", "activations", "std::string",
               "The activations the target's GEMM can apply (relu, silu, gelu, "
               "gelu_tanh); empty: all. Any other stays an op, marked with a "
               "`tfm.unfused_epilogue` attribute saying why, and a remark.">,
  ];
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def PropagateLayouts : Pass<"tfm-propagate-layouts"> {
  let summary = "Fold head split and merge transposes into tfm.attention's layout";
  let description = [{
    Models split heads as `reshape [B, S, H*D] -> [B, S, H, D]` followed by
    `transpose [0, 2, 1, 3]` to `[B, H, S, D]`, and merge them back with the
    inverse transpose and a reshape. Code generation makes reshapes views of
    their input, but every transpose is a copy kernel: four per attention
    layer (q, k, v and the output), each a pass over a `[B, S, H*D]` tensor
    in a phase that does no arithmetic.

    Rules:
    - *attention operands*: a `tfm.attention` in the `bhsd` layout whose
      query, key and value are all `tfm.transpose [0, 2, 1, 3]` becomes the
      same attention with `layout = #tfm.head_layout<bshd>` on the
      transposes' inputs, followed by one `tfm.transpose [0, 2, 1, 3]` of
      its result to the original type. The CPU kernel reads each head's
      rows through strides, so the layout costs it nothing.
    - *transpose of transpose*: `tfm.transpose`'s folder removes two
      transposes that cancel; the pass folds after the first rule, so the
      transpose it added meets the merge's and both go. Transposes nothing
      reads any more are erased.

    On GPT-2, BERT and LLaMA-style layers no `tfm.transpose` is left. An
    attention with any other operand (a transpose to another order, a RoPE
    op that tfm-raise-encodings did not fold) keeps its layout.

    Before:

    ```mlir
    %q4 = tfm.reshape %q : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>}
        : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    ...  (%kh, %vh alike)
    %o = tfm.attention %qh, %kh, %vh {scale = 0.125 : f64}
        : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>
        -> tensor<?x12x?x64xf32>
    %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>}
        : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
    %m = tfm.reshape %ot : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
    ```

    After:

    ```mlir
    %q4 = tfm.reshape %q : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ...
    %o = tfm.attention %q4, %k4, %v4 {layout = #tfm.head_layout<bshd>, scale = 0.125 : f64}
        : tensor<?x?x12x64xf32>, tensor<?x?x12x64xf32>, tensor<?x?x12x64xf32>
        -> tensor<?x?x12x64xf32>
    %m = tfm.reshape %o : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
  let statistics = [
    Statistic<"numAttentionRelaid", "num-attention-relaid",
              "Number of attention ops given the bshd layout">,
  ];
}

def AttentionProducts : Pass<"tfm-attention-products"> {
  let summary = "Multiply the attentions of an f32 model in bf16 or f16";
  let description = [{
    Gives every `tfm.attention` on f32 operands `product_type = bf16` (or
    `f16` with `type=f16`): its q.k and p.v products take operands rounded
    to that type, with f32 sums and f32 softmax statistics (see
    tfm.attention). `attune-compile --precision=bf16` runs it beside
    `tfm-pack-weights{bf16}`, which does the same for the linears' weights,
    and `--precision=bf16` or `f16` on the CUDA target, whose tensor cores
    multiply either. On a CPU with AMX a bf16 attention then multiplies on
    AMX tiles (runtime/model/amx_kernels.c): at S=2048, D=128, one thread
    of an Intel Xeon with AMX, 3.8x the f32 kernel (benchmarks/
    README.md). Elsewhere on the CPU it computes in f32. Attentions that
    carry an additive mask, score modifiers or RoPE are marked too.

    ```mlir
    %o = tfm.attention %q, %k, %v {scale = 0.125 : f64}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
        -> tensor<1x12x?x64xf32>
    ```

    becomes

    ```mlir
    %o = tfm.attention %q, %k, %v {product_type = bf16, scale = 0.125 : f64}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
        -> tensor<1x12x?x64xf32>
    ```
  }];
  let options = [
    Option<"productType", "type", "std::string", /*default=*/"\"bf16\"",
           "The products' type: bf16 or f16">,
  ];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
}

def FuseResidualNorm : Pass<"tfm-fuse-residual-norm"> {
  let summary = "Fold the residual add before a layer or RMS norm into the norm";
  let description = [{
    A `tfm.add` whose only user is a `tfm.layer_norm` or `tfm.rms_norm`,
    as its input, and whose operands both have the sum's type becomes the
    norm's `residual`: the norm kernel adds the two rows as it reads them,
    so the sum is never stored and read back. This is a post-LN block's
    Add & Norm (BERT, the original Transformer); in a pre-LN block (GPT-2,
    LLaMA) the sum is also the next residual, the add has two users, and
    it stays an op (but for the last add, before the final norm). An add
    that broadcasts (a bias) stays an op too.

    Before:

    ```mlir
    %s = tfm.add %x, %attn : tensor<?x?x384xf32>, tensor<?x?x384xf32> -> tensor<?x?x384xf32>
    %y = tfm.layer_norm %s, %g, %b : tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    ```

    After:

    ```mlir
    %y = tfm.layer_norm %x, %g, %b residual(%attn : tensor<?x?x384xf32>)
        : tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of residual adds folded into a norm">,
  ];
}

def MergeProjections : Pass<"tfm-merge-projections"> {
  let summary = "Merge the q, k and v projections of one input into one tfm.linear";
  let description = [{
    Linears that read the same input and whose results are read only as
    attention heads (through reshapes to `[B, S, H, D]`, as the query, key
    or value of a `bshd` `tfm.attention`: what tfm-propagate-layouts leaves
    of BERT's, GPT-2's and LLaMA's projections) become one linear over the
    concatenation of their weights and biases along the output axis,
    followed by a `tfm.slice` of its result per original linear. The GEMM
    then reads the input once for all of them, and code generation makes
    each slice a view the attention kernel reads through strides (GPT-2's
    packed `c_attn` layout), so no copy is added.

    Linears merge when their weights are plain `tfm.weight` matrices of one
    element type, the same in-features and the same `transpose`, `init` and
    `std`; their biases are all absent or all plain `tfm.weight` vectors
    with equal `init` and `std`; and their activations are equal. The merged
    weight is a `tfm.weight` with `part_sizes` (see its description): the
    compiler concatenates the parts when it builds the library, and the
    library stores the merged matrix only; the reference evaluator, and the
    compiler given the library's weights back (`--weights` with its
    `--weights-storage=external` file), find each part inside it. Weight names containing `|` or `#` are not merged.
    A linear whose result has any other user is left as it is (a slice it
    read would be a copy).

    Before:

    ```mlir
    %q = tfm.linear %h, %wq, %bq : tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %k = tfm.linear %h, %wk, %bk : ...
    %v = tfm.linear %h, %wv, %bv : ...
    ```

    After:

    ```mlir
    %w = tfm.weight "q.weight|k.weight|v.weight" {part_sizes = array<i64: 768, 768, 768>}
        : tensor<768x2304xf32>
    %b = tfm.weight "q.bias|k.bias|v.bias" {part_sizes = array<i64: 768, 768, 768>}
        : tensor<2304xf32>
    %qkv = tfm.linear %h, %w, %b : tensor<?x?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32> -> tensor<?x?x2304xf32>
    %q = tfm.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 768 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
    ...
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "Number of linears merged into another">,
  ];
}

def PackWeights : Pass<"tfm-pack-weights"> {
  let summary = "Store the weights of tfm.linear in the GEMM's panel layout";
  let description = [{
    Gives the `tfm.weight` read by a `tfm.linear` the `#tfm.panels<W>`
    encoding: the compiler then stores that matrix in the library as the
    column panels the GEMM micro-kernel streams (see PanelsAttr), packed
    once at compile time. Without it the kernel copies each `[K, W]` panel
    out of the row-major matrix on every call before it can use it: a pass
    over all of the model's weights per inference, in a phase that does no
    arithmetic, which was 13% of the Linear kernel's time in
    all-MiniLM-L6-v2 at 128 tokens (AMD EPYC Zen 5).

    `W` (`panel-width`; attune-compile asks the target, and 0, the
    default, takes the CPU's: 16 for f32, 96 for bf16, see
    compiler/support/PanelLayout.h) is the panel the kernels read in place:
    the AVX-512 linear (runtime/model/linear_f32.c) three panels of 16
    floats side by side, one contiguous stream each, and the Halide GEMM's
    tiles of the AVX2 and baseline variants their vectors from the same
    panels, so one copy of the weights serves every dispatched variant.
    Widths that are no multiple of W pad their last panel with zeros.
    Only f32 weights of static shape are packed; a weight with another user
    is given a packed twin for its linears and kept as it is for the others
    (the library then holds both).

    `bf16` (`attune-compile --precision=bf16`) stores them as bf16 pair
    panels instead, `#tfm.panels<W, bf16>`: half the bytes, and linears
    that multiply in bf16 with f32 accumulation (AMX tiles on Intel CPUs
    that have them, which read the pair panels as stored: 6x the f32 GEMM
    at 128x768x768 on one thread; vdpbf16ps on other CPUs with
    AVX512-BF16, about twice the f32 GEMM's rate on Zen 5).

    Before:

    ```mlir
    %w = tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32>
    %y = tfm.linear %x, %w, %b
        : tensor<?x?x384xf32>, tensor<384x1536xf32>, tensor<1536xf32> -> tensor<?x?x1536xf32>
    ```

    After:

    ```mlir
    %w = tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32, #tfm.panels<16>>
    %y = tfm.linear %x, %w, %b
        : tensor<?x?x384xf32>, tensor<384x1536xf32, #tfm.panels<16>>, tensor<1536xf32>
        -> tensor<?x?x1536xf32>
    ```
  }];
  let dependentDialects = ["::attune::tfm::TfmDialect"];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", /*default=*/"0",
           "Columns per panel; 0: the CPU's, 16 for f32 and 96 for bf16 (the "
           "driver asks the target, which packs when it builds an AVX-512 "
           "variant)">,
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "Store the packed weights as bf16 pair panels (#tfm.panels<W, bf16>)">,
  ];
  let statistics = [
    Statistic<"numPacked", "num-packed", "Number of linear weights packed">,
  ];
}

#endif // ATTUNE_PASSES_PASSES_TD
