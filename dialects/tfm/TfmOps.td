//===- TfmOps.td - tfm dialect ops -------------------------*- tablegen -*-===//
//
// Every op states its math, its shape contract and an example. Shapes may
// hold dynamic dimensions; verifiers check what is static and leave the rest
// to the runtime's shape checks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_DIALECTS_TFM_TFMOPS_TD
#define ATTUNE_DIALECTS_TFM_TFMOPS_TD

include "dialects/tfm/TfmBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Tfm_PureOp<string mnemonic, list<Trait> traits = []>
    : Tfm_Op<mnemonic, !listconcat([Pure,
        DeclareOpInterfaceMethods<InferTypeOpInterface>], traits)>;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "a named model parameter";
  let description = [{
    Names a parameter tensor. Its values come from the weights file given to
    the compiler (safetensors, looked up by `name`); a compile without one
    initialises it from `init` (normal(0, `std`), ones or zeros) with a fixed
    seed, which is how the bundled examples and benchmarks get weights.

    The result must have a static shape.

    With `transpose` (rank 2 only), the file holds the `[N, M]` transpose of
    the `[M, N]` result: PyTorch's `nn.Linear` stores its weight as
    `[out, in]`, and `tfm.linear` takes `[in, out]`, so a checkpoint binds
    without a transpose op in the graph. The weights are transposed once,
    when the compiler reads the file; a compile without a file initialises
    the `[M, N]` result as it would without the attribute. One tensor may be
    bound both ways (a language model's tied token embeddings, `[V, D]` for
    the lookup and `{transpose}` `[D, V]` for the output projection); the
    library then holds both.

    A result type with the `#tfm.panels<W>` encoding (which
    `tfm-pack-weights` gives the weights of `tfm.linear`) is the same matrix
    stored in the panel layout the GEMM kernels read: the compiler packs it
    once, when it builds the library, and every user must be a `tfm.linear`
    reading it as its weight.

    With `part_sizes` (which `tfm-merge-projections` writes), the weight is
    the concatenation along its last axis of several parameters: `name`
    lists them separated by `|`, and `part_sizes` gives each one's extent
    along that axis (at least two parts, summing to the last dimension;
    `transpose`, `init` and `std` apply to each part). Each part binds, and
    initialises without a file, exactly as a `tfm.weight` of that name and
    of the part's type would.

    ```mlir
    %w = tfm.weight "h0.attn.c_attn.weight" : tensor<768x2304xf32>
    %g = tfm.weight "h0.ln_1.weight" {init = #tfm.init<ones>} : tensor<768xf32>
    // The file holds [out, in] = [1536, 384]; the IR sees [in, out].
    %q = tfm.weight "encoder.layer.0.intermediate.dense.weight" {transpose}
        : tensor<384x1536xf32>
    // The same, stored as 16 panels of [384, 96] for the GEMM.
    %p = tfm.weight "encoder.layer.0.intermediate.dense.weight" {transpose}
        : tensor<384x1536xf32, #tfm.panels<96>>
    // BERT's query, key and value projections as one [384, 1152] matrix.
    %qkv = tfm.weight "l0.query.weight|l0.key.weight|l0.value.weight"
        {part_sizes = array<i64: 384, 384, 384>, transpose} : tensor<384x1152xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       DefaultValuedAttr<Tfm_InitAttr, "InitKind::normal">:$init,
                       DefaultValuedAttr<F64Attr, "0.02">:$std,
                       UnitAttr:$transpose,
                       OptionalAttr<DenseI64ArrayAttr>:$part_sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The entry of a library's weights blob holding this value: `name`, or
    /// `name^T` with `transpose`, so that a tensor bound both ways is two
    /// entries; `@panels<W>` (`@panels<W,bf16>`) appended when the result is
    /// packed into panels
    /// (see PanelsAttr). The weight binder writes it, code generation and
    /// the reference evaluator read it.
    std::string getBlobKey() {
      std::string key;
      if (getPartSizes()) {
        key = ::attune::mergedBlobKey(getParts());
      } else {
        key = getTranspose() ? (getName() + "^T").str() : getName().str();
      }
      if (auto panels = getPanels())
        return ::attune::panelsBlobKey(key, panels.getWidth(),
                                       panels.isBf16Pairs());
      return key;
    }
    /// The parameters a merged weight (`part_sizes`) concatenates: each
    /// one's plain blob key (its name, "^T" appended with `transpose`) and
    /// extent along the last axis. Empty for a plain weight.
    std::vector<::attune::WeightPart> getParts() {
      std::vector<::attune::WeightPart> parts;
      auto sizes = getPartSizes();
      if (!sizes)
        return parts;
      ::llvm::SmallVector<::llvm::StringRef> names;
      getName().split(names, ::attune::kWeightPartSeparator);
      for (size_t i = 0; i < names.size() && i < sizes->size(); ++i)
        parts.push_back({getTranspose() ? (names[i] + "^T").str() : names[i].str(),
                         (*sizes)[i]});
      return parts;
    }
    /// The name of each part of a merged weight, in order.
    ::llvm::SmallVector<::llvm::StringRef> getPartNames() {
      ::llvm::SmallVector<::llvm::StringRef> names;
      if (getPartSizes())
        getName().split(names, ::attune::kWeightPartSeparator);
      return names;
    }
    /// The result's #tfm.panels encoding, or null.
    PanelsAttr getPanels() {
      return ::llvm::dyn_cast_or_null<PanelsAttr>(
          ::llvm::cast<::mlir::RankedTensorType>(getResult().getType())
              .getEncoding());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Embeddings and positional encodings
//===----------------------------------------------------------------------===//

def Tfm_EmbeddingOp : Tfm_PureOp<"embedding"> {
  let summary = "table lookup of token ids";
  let description = [{
    `result[..., d] = table[ids[...], d]` for `table : [V, D]`. An id outside
    `[0, V)` is an error at run time (the runtime checks inputs that feed an
    embedding before running).

    ```mlir
    %x = tfm.embedding %table, %ids
        : tensor<50257x768xf32>, tensor<?x?xi32> -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$table, Tfm_IndexTensor:$ids);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_LearnedPositionOp : Tfm_PureOp<"learned_position"> {
  let summary = "add a learned absolute position table (BERT, GPT-2)";
  let description = [{
    `result[b, s, d] = input[b, s, d] + table[s, d]` for `input : [B, S, D]`
    and `table : [P, D]`; requires `S <= P` (checked at run time when `S` is
    dynamic).

    ```mlir
    %y = tfm.learned_position %x, %wpe
        : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$table);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $table attr-dict `:` type($input) `,` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_SinusoidalPositionOp : Tfm_PureOp<"sinusoidal_position"> {
  let summary = "add a fixed sinusoidal position encoding";
  let description = [{
    `result[b, s, d] = input[b, s, d] + pe[s, d]` for `input : [B, S, D]`.
    The two published forms differ and both are in use:

    * `interleaved` (Vaswani et al., "Attention Is All You Need"):
      `div[i] = exp(2i * -ln(max_timescale) / D)`,
      `pe[s, 2i] = sin(s * div[i])`, `pe[s, 2i+1] = cos(s * div[i])`.
      (`min_timescale` is unused: the paper's form has none.)
    * `concat` (tensor2tensor `get_timing_signal_1d`): with `n = D / 2`,
      `inv[i] = min_timescale * exp(-i * ln(max_timescale / min_timescale)
      / max(n - 1, 1))`, `pe[s, i] = sin(s * inv[i])`,
      `pe[s, n + i] = cos(s * inv[i])`, and a zero column last when D is odd.

    ```mlir
    %y = tfm.sinusoidal_position %x {form = #tfm.sinusoidal_form<concat>}
        : tensor<?x?x512xf32> -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
      DefaultValuedAttr<Tfm_SinusoidalFormAttr, "SinusoidalFormKind::interleaved">:$form,
      DefaultValuedAttr<F64Attr, "1.0">:$min_timescale,
      DefaultValuedAttr<F64Attr, "10000.0">:$max_timescale);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_MultiplicativePositionOp : Tfm_PureOp<"multiplicative_position"> {
  let summary = "multiply by an absolute position encoding (x ⊗ p)";
  let description = [{
    `result[b, s, d] = input[b, s, d] * p[s, d]` for `input : [B, S, D]`:
    the multiplicative absolute encoding, an elementwise product where
    tfm.learned_position and tfm.sinusoidal_position add.

    * With `table : [P, D]`, `p[s, d] = table[s, d]` (learned); requires
      `S <= P` (checked at run time when `S` is dynamic).
    * Without, `p[s, d] = pe[s, d]` of tfm.sinusoidal_position with the
      same `form`, `min_timescale` and `max_timescale` (defaults
      `interleaved`, 1.0 and 10000.0), computed in double as there. These
      attributes are errors with a table, which they would not affect.

    ```mlir
    %y = tfm.multiplicative_position %x, %p
        : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
    %z = tfm.multiplicative_position %x {form = #tfm.sinusoidal_form<concat>}
        : tensor<?x?x512xf32> -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$table,
                       OptionalAttr<Tfm_SinusoidalFormAttr>:$form,
                       OptionalAttr<F64Attr>:$min_timescale,
                       OptionalAttr<F64Attr>:$max_timescale);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $table^)? attr-dict `:` type($input) (`,` type($table)^)?
    `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The sinusoid used without a table: the attributes, defaults filled in.
    SinusoidalFormKind getFormOrDefault() {
      return getForm().value_or(SinusoidalFormKind::interleaved);
    }
    double getMinTimescaleOrDefault() {
      return getMinTimescale() ? getMinTimescale()->convertToDouble() : 1.0;
    }
    double getMaxTimescaleOrDefault() {
      return getMaxTimescale() ? getMaxTimescale()->convertToDouble() : 10000.0;
    }
  }];
  let hasVerifier = 1;
}

def Tfm_RecursivePositionOp : Tfm_PureOp<"recursive_position"> {
  let summary = "add a recursively generated position encoding (FLOATER)";
  let description = [{
    Liu et al., "Learning to Encode Position for Transformer with Continuous
    Dynamical Model" (FLOATER, ICML 2020): the positions are the states of a
    dynamical system stepped once per position, `p_{k+1} = p_k + f(p_k, k)`.
    For `input : [B, S, D]`, with `T = time_step` and `t_k = k * T`:

    * `h(t, q) = [relu([q, t] w1 + b1), t] w2 + b2`, where `[a, t]` is the
      row `a` with `t` appended as one more feature;
    * `p_0 = p0`, `p_{k+1} = p_k + T * h(t_k, p_k)`;
    * `result[b, s, d] = input[b, s, d] + p_s[d]`;

    with `p0 : [D]`, `w1 : [D + 1, H]`, `b1 : [H]`, `w2 : [H + 1, D]` and
    `b2 : [D]`, weights in-features major as tfm.linear's (the last row of
    `w1` and of `w2` multiplies the time). `h` is the network of FLOATER's
    reference code (`flow_func_linear`: `Linear_t`, ReLU, `Linear_t`, where
    `Linear_t(t, x)` is an `nn.Linear` of `[x, t]`, so `w1` is its `weight`
    transposed), and the recursion is the forward Euler step of its
    `dp/dt = h(t, p)` on the grid `t_k = k * T`. (That code takes T = 0.01
    and integrates with midpoint steps of T / 5 instead; this op is the
    recursive form.) With `T = 1` it is `p_{k+1} = p_k + f(p_k, k)` with
    `f(p, k) = h(k, p)`.

    The positions depend on each other, so code generation computes
    `p_0 .. p_{S-1}` with a sequential scan on each run (it needs a static
    `H >= 1`); canonicalization folds an op with a static `S` and constant
    parameters into tfm.learned_position of the evaluated table, when that
    takes at most 2^26 multiply-adds. `time_step` must be finite.

    ```mlir
    %y = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.01 : f64}
        : tensor<?x?x512xf32>, tensor<512xf32>, tensor<513x512xf32>, tensor<512xf32>,
          tensor<513x512xf32>, tensor<512xf32> -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$p0,
                       Tfm_FloatTensor:$w1, Tfm_FloatTensor:$b1,
                       Tfm_FloatTensor:$w2, Tfm_FloatTensor:$b2,
                       DefaultValuedAttr<F64Attr, "1.0">:$time_step);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $p0 `,` $w1 `,` $b1 `,` $w2 `,` $b2 attr-dict `:` type($input)
    `,` type($p0) `,` type($w1) `,` type($b1) `,` type($w2) `,` type($b2)
    `->` type($result)
  }];
  let hasVerifier = 1;
  // Folds a static sequence with constant parameters into learned_position.
  let hasCanonicalizer = 1;
}

def Tfm_ComplexEmbeddingOp : Tfm_PureOp<"complex_embedding"> {
  let summary = "complex word embedding that encodes word order";
  let description = [{
    Wang et al., "Encoding word order in complex embeddings" (ICLR 2020):
    word `j` at position `k` is the complex vector
    `r_j * e^{i (omega_j * k + theta_j)}`, with amplitude `r`, frequency
    `omega` and initial phase `theta` each a `[V, D]` table indexed by the
    word. For `ids : [B, S]`, `j = ids[b, s]` and
    `k = s + first_position`:

    `result[b, s, d] = amplitude[j, d] * cos(frequency[j, d] * k + phase[j, d])`,
    `result[b, s, D + d] = amplitude[j, d] * sin(frequency[j, d] * k + phase[j, d])`,

    real parts then imaginary parts, `[B, S, 2D]` (the reference code's
    `torch.cat([enc_output_real, enc_output_image], -1)`). `first_position`
    defaults to 1, as that code's `pos_seq = arange(1, S + 1)`; it also
    takes the phase modulo 2 pi, which changes neither cos nor sin. An id
    outside `[0, V)` is an error at run time, as for tfm.embedding. Angles
    are computed in double.

    ```mlir
    %z = tfm.complex_embedding %ids, %r, %w, %theta
        : tensor<?x?xi32>, tensor<30000x256xf32>, tensor<30000x256xf32>,
          tensor<30000x256xf32> -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Tfm_IndexTensor:$ids, Tfm_FloatTensor:$amplitude,
                       Tfm_FloatTensor:$frequency, Tfm_FloatTensor:$phase,
                       DefaultValuedAttr<I64Attr, "1">:$first_position);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $amplitude `,` $frequency `,` $phase attr-dict `:` type($ids) `,`
    type($amplitude) `,` type($frequency) `,` type($phase) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_RopeOp : Tfm_Op<"rope", [Pure]> {
  let summary = "rotary position embedding (RoPE) of queries or keys";
  let description = [{
    Su et al., "RoFormer" (2021): for `input : [B, H, S, D]`, rotary
    dimensions `R = rotary_dims` (even, <= D; default D) and position
    `n = s + position_offset` (plus `L - S` when `align` of length L is
    given: a query block at the end of L keys, as tfm.attention aligns it),
    each pair of the first R dimensions is rotated by `n * theta_i`,
    `theta_i = base^(-2i / R)`, `i = 0 .. R/2 - 1`:
    `x'[a] = x[a] cos(n theta_i) - x[b] sin(n theta_i)`,
    `x'[b] = x[b] cos(n theta_i) + x[a] sin(n theta_i)`, with the pair
    `(a, b) = (2i, 2i + 1)` when `interleaved` (GPT-J, the original
    RoFormer) or `(i, i + R/2)` otherwise (GPT-NeoX, LLaMA: Hugging Face's
    `rotate_half`). Dimensions from R on pass through. Angles are computed
    in double.

    `scaling` rescales theta_i as long-context checkpoints do (Hugging
    Face's `rope_scaling`): `{kind = "linear", factor = f}` uses
    `theta_i / f`; `{kind = "llama3", factor = f, low_freq_factor = l,
    high_freq_factor = h, original_max_positions = N}` uses, with wavelength
    `w = 2 pi / theta_i`: `theta_i` when `w < N / h`, `theta_i / f` when
    `w > N / l`, and `(1 - a) theta_i / f + a theta_i` with
    `a = (N / w - l) / (h - l)` between (transformers'
    `_compute_llama3_parameters`).

    ```mlir
    %qr = tfm.rope %q {base = 10000.0 : f64} : tensor<1x32x?x128xf32> -> tensor<1x32x?x128xf32>
    %kr = tfm.rope %k {base = 500000.0 : f64, scaling = {kind = "llama3", factor = 8.0 : f64,
                       low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64,
                       original_max_positions = 8192 : i64}}
        : tensor<1x8x?x128xf32> -> tensor<1x8x?x128xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$align,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base,
                       OptionalAttr<I64Attr>:$rotary_dims,
                       DefaultValuedAttr<BoolAttr, "false">:$interleaved,
                       DefaultValuedAttr<I64Attr, "0">:$position_offset,
                       OptionalAttr<DictionaryAttr>:$scaling);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`align` `(` $align^ `:` type($align) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

def Tfm_LayerNormOp : Tfm_PureOp<"layer_norm"> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    With `mu = mean(x[..., :])` and `var = mean((x[..., :] - mu)^2)`:
    `result[..., d] = (x[..., d] - mu) / sqrt(var + epsilon) * gamma[d] + beta[d]`.
    `gamma` and `beta` have shape `[D]`, D the last dimension of `input`.

    With `residual` (of `input`'s type; `tfm-fuse-residual-norm` writes it),
    `x` is `input + residual`, the sum rounded to the element type as
    `tfm.add` rounds it: a post-LN block's Add & Norm in one pass.

    ```mlir
    %y = tfm.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
        : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %z = tfm.layer_norm %x, %g, %b residual(%attn : tensor<?x?x768xf32>) {epsilon = 1.0e-05 : f64}
        : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$gamma,
                       Tfm_FloatTensor:$beta, Optional<Tfm_FloatTensor>:$residual,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta (`residual` `(` $residual^ `:` type($residual) `)`)?
    attr-dict `:` type($input) `,` type($gamma) `,` type($beta) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_RmsNormOp : Tfm_PureOp<"rms_norm"> {
  let summary = "root-mean-square normalisation over the last dimension";
  let description = [{
    `result[..., d] = x[..., d] / sqrt(mean(x[..., :]^2) + epsilon) * gamma[d]`
    with `x` the input, or `input + residual` as in tfm.layer_norm.

    ```mlir
    %y = tfm.rms_norm %x, %g {epsilon = 1.0e-06 : f64}
        : tensor<?x?x4096xf32>, tensor<4096xf32> -> tensor<?x?x4096xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$gamma,
                       Optional<Tfm_FloatTensor>:$residual,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma (`residual` `(` $residual^ `:` type($residual) `)`)?
    attr-dict `:` type($input) `,` type($gamma) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Tfm_LinearOp : Tfm_PureOp<"linear"> {
  let summary = "affine map of the last dimension: x W + b";
  let description = [{
    `result[..., n] = sum_k input[..., k] * weight[k, n] + bias[n]` with
    `weight : [K, N]` (in-features major, as GPT-2's Conv1D stores it; a
    PyTorch `nn.Linear` weight is its transpose) and an optional `bias : [N]`.

    `activation` (default `none`) applies an element-wise function to that
    sum, exactly as the op of the same name would applied to the result:
    `relu` (tfm.relu), `gelu` (tfm.gelu), `gelu_tanh` (tfm.gelu with
    `approximate = tanh`), `silu` (tfm.silu). Models are not expected to
    write it: `tfm-fuse-epilogues` folds a linear's activation into it, so
    code generation applies it to the accumulators before they are stored
    (one pass over the output instead of two).

    ```mlir
    %y = tfm.linear %x, %w, %b
        : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
    %z = tfm.linear %x, %w, %b {activation = #tfm.activation<gelu>}
        : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       Optional<Tfm_FloatTensor>:$bias,
                       DefaultValuedAttr<Tfm_ActivationAttr,
                                         "ActivationKind::none">:$activation);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ComplexLinearOp
    : Tfm_PureOp<"complex_linear", [AttrSizedOperandSegments]> {
  let summary = "complex linear layer on [real | imaginary] features";
  let description = [{
    `(x_r + i x_i)(W_r + i W_i) + (b_r + i b_i)` for a complex row stored
    as its real parts then its imaginary parts (tfm.complex_embedding's
    layout). For `input : [..., 2K]` with `x_r = input[..., 0:K]` and
    `x_i = input[..., K:2K]`, `weight_real`, `weight_imag : [K, N]`
    (in-features major, as tfm.linear's) and optional `bias_real`,
    `bias_imag : [N]` (both or neither):

    `result[..., n] = sum_k x_r[k] W_r[k, n] - x_i[k] W_i[k, n] + b_r[n]`,
    `result[..., N + n] = sum_k x_r[k] W_i[k, n] + x_i[k] W_r[k, n] + b_i[n]`,

    a result `[..., 2N]` in the same layout. This is the real product
    `[x_r | x_i] [[W_r, W_i], [-W_i, W_r]] + [b_r | b_i]`, which is how code
    generation computes it: one GEMM of width 2N whose block weight is
    formed as the kernel packs its panels. (complexPyTorch's
    `ComplexLinear`, `nn.Linear`s `fc_r` and `fc_i` with biases `c_r` and
    `c_i`, is `W_r = fc_r.weight^T`, `W_i = fc_i.weight^T`,
    `b_r = c_r - c_i`, `b_i = c_r + c_i`.)

    ```mlir
    %y = tfm.complex_linear %z, %wr, %wi bias(%br, %bi : tensor<128xf32>, tensor<128xf32>)
        : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32>
        -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight_real,
                       Tfm_FloatTensor:$weight_imag,
                       Optional<Tfm_FloatTensor>:$bias_real,
                       Optional<Tfm_FloatTensor>:$bias_imag);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight_real `,` $weight_imag
    (`bias` `(` $bias_real^ `,` $bias_imag `:` type($bias_real) `,` type($bias_imag) `)`)?
    attr-dict `:` type($input) `,` type($weight_real) `,` type($weight_imag)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_MatmulOp : Tfm_PureOp<"matmul"> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    For rank-R operands (R >= 2) with equal leading (batch) dimensions:
    `result[..., i, j] = sum_k A[..., i, k] * B[..., k, j]` where
    `A = transpose_a ? lhs^T : lhs` and `B = transpose_b ? rhs^T : rhs`
    (transposing the last two dimensions).

    ```mlir
    %s = tfm.matmul %q, %k {transpose_b = true}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$lhs, Tfm_FloatTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Tfm_BinaryOp<string mnemonic, string math, Type tensor = Tfm_NumericTensor>
    : Tfm_PureOp<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = "elementwise " # mnemonic # " with numpy broadcasting";
  let description = "`result = " # math # "`, broadcasting `lhs` and `rhs` "
    # "from the right as numpy does (a dimension of 1 stretches).\n\n"
    # "```mlir\n%y = tfm." # mnemonic # " %a, %b : tensor<?x12x?x?xf32>, "
    # "tensor<f32> -> tensor<?x12x?x?xf32>\n```";
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Integer add, sub and mul wrap around as two's complement (they compute
// indices, which stay far from the limits).
def Tfm_AddOp : Tfm_BinaryOp<"add", "lhs + rhs">;
def Tfm_SubOp : Tfm_BinaryOp<"sub", "lhs - rhs">;
def Tfm_MulOp : Tfm_BinaryOp<"mul", "lhs * rhs">;
// Floats only: integer division rounds differently in PyTorch (floor) and
// ONNX (toward zero); a model divides floats and casts.
def Tfm_DivOp : Tfm_BinaryOp<"div", "lhs / rhs", Tfm_FloatTensor>;
def Tfm_MinimumOp : Tfm_BinaryOp<"minimum", "min(lhs, rhs) (NaN if either is NaN)">;
def Tfm_MaximumOp : Tfm_BinaryOp<"maximum", "max(lhs, rhs) (NaN if either is NaN)">;

def Tfm_CompareOp : Tfm_PureOp<"compare"> {
  let summary = "element-wise comparison with numpy broadcasting";
  let description = [{
    `result = lhs <predicate> rhs` as i1, broadcasting `lhs` and `rhs` from
    the right as numpy does; `lhs` and `rhs` have one element type. A
    comparison with NaN is false, except `ne`, which is true. ONNX's Less,
    Greater, Equal, LessOrEqual and GreaterOrEqual.

    ```mlir
    %small = tfm.compare %n, %c8 {predicate = #tfm.compare<lt>}
        : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Tfm_NumericTensor:$lhs, Tfm_NumericTensor:$rhs,
                       Tfm_ComparePredicateAttr:$predicate);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_CastOp : Tfm_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "convert elements to another type";
  let description = [{
    The element type of `result`, value by value: float to integer rounds
    toward zero (C, ONNX Cast, PyTorch's `.to(torch.long)`), saturating at
    the integer's range, with NaN giving 0; integer to float and float to
    float round to nearest (once, from the exact value); i64 to i32 wraps
    (two's complement, as PyTorch and numpy); i1 converts to 0 or 1, and
    anything converts to i1 as `!= 0`.

    ```mlir
    %f = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F16, BF16, I1, I32, I64]>:$input);
  let results = (outs RankedTensorOf<[F32, F16, BF16, I1, I32, I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tfm_WhereOp : Tfm_PureOp<"where"> {
  let summary = "elementwise select with numpy broadcasting";
  let description = [{
    `result = condition != 0 ? on_true : on_false`, all three broadcast from
    the right. `masked_fill(x, m, v)` is `where(m, v, x)`.

    ```mlir
    %y = tfm.where %mask, %ninf, %s
        : tensor<1x1x?x?xi1>, tensor<f32>, tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_PredTensor:$condition, Tfm_NumericTensor:$on_true,
                       Tfm_NumericTensor:$on_false);
  let results = (outs Tfm_NumericTensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Tfm_UnaryOp<string mnemonic, string math, list<Trait> traits = [],
                  Type tensor = Tfm_FloatTensor>
    : Tfm_PureOp<mnemonic, !listconcat([SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # mnemonic;
  let description = "`result = " # math # "`.\n\n```mlir\n%y = tfm." # mnemonic
    # " %x : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>\n```";
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tfm_ReluOp : Tfm_UnaryOp<"relu", "max(x, 0)">;
def Tfm_SiluOp : Tfm_UnaryOp<"silu", "x * sigmoid(x)">;
def Tfm_NegOp : Tfm_UnaryOp<"neg", "-x (integers wrap)", [], Tfm_NumericTensor>;
def Tfm_AbsOp : Tfm_UnaryOp<"abs", "|x| (integers wrap)", [], Tfm_NumericTensor>;
def Tfm_LogOp : Tfm_UnaryOp<"log", "ln(x): -inf at 0, NaN below">;
// sign and ceil are how exporters write DeBERTa-v2's log-bucketed relative
// positions (make_log_bucket_position: torch.sign, torch.ceil; ONNX Sign,
// Ceil).
def Tfm_SignOp : Tfm_UnaryOp<"sign",
    "1 where x > 0, -1 where x < 0, else x (0, -0 and NaN stay as they are)",
    [], Tfm_NumericTensor>;
def Tfm_CeilOp : Tfm_UnaryOp<"ceil",
    "the least integer >= x (infinities and NaN stay as they are)">;
def Tfm_CosOp : Tfm_UnaryOp<"cos", "cos(x)">;
def Tfm_SinOp : Tfm_UnaryOp<"sin", "sin(x)">;
// tanh is how exporters write attention softcapping (Gemma 2, ONNX
// Attention's softcap): c * tanh(s / c).
def Tfm_TanhOp : Tfm_UnaryOp<"tanh", "tanh(x)">;
def Tfm_GeluOp : Tfm_UnaryOp<"gelu",
    "x/2 * (1 + erf(x/sqrt(2))) for approximate = none; x/2 * (1 + tanh("
    # "sqrt(2/pi) * (x + 0.044715 x^3))) for approximate = tanh"> {
  let arguments = (ins Tfm_FloatTensor:$input,
      DefaultValuedAttr<Tfm_GeluApproxAttr, "GeluApproxKind::none">:$approximate);
}

def Tfm_SoftmaxOp : Tfm_PureOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax along one axis";
  let description = [{
    `result[..., i, ...] = exp(x_i - max_j x_j) / sum_j exp(x_j - max_j x_j)`
    along `axis` (negative counts from the end). A row whose every element
    is -inf (all keys masked) is 0, as tfm.attention defines it, not the
    formula's 0/0 (NaN in PyTorch). Code generation supports the last axis.

    ```mlir
    %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_CausalMaskOp : Tfm_Op<"causal_mask", [Pure, SameOperandsAndResultType]> {
  let summary = "fill the scores above the causal diagonal";
  let description = [{
    For scores `[..., Sq, Sk]`: `result[..., i, j] = value` where
    `j > i + (Sk - Sq)` (a key after the query, aligning the last query with
    the last key), otherwise `input[..., i, j]`. This is the decomposed form
    of `tfm.attention {causal}` and what exporters write as
    `masked_fill(triu(ones, 1), -inf)`.

    ```mlir
    %m = tfm.causal_mask %s : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "-INFINITY">:$value);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tfm_ReshapeOp : Tfm_Op<"reshape", [Pure]> {
  let summary = "reinterpret the shape, keeping row-major order";
  let description = [{
    The element count is unchanged. Dynamic dimensions are carried through in
    order: the input and the result have the same number of `?` and the
    products of their static dimensions agree, so `[?, ?, 768]` may become
    `[?, ?, 12, 64]` but not `[?, 768]`.

    ```mlir
    %h = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  // Folds a reshape to its own type away and a reshape of a reshape into one.
  let hasFolder = 1;
}

def Tfm_TransposeOp : Tfm_PureOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `k` is input dimension `permutation[k]`:
    `result[j_0, ..., j_(r-1)] = input[i_0, ..., i_(r-1)]` with `j_k = i_(permutation[k])`.

    ```mlir
    %t = tfm.transpose %h {permutation = array<i64: 0, 2, 1, 3>}
        : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  // Folds the identity permutation away.
  let hasFolder = 1;
}

def Tfm_SliceOp : Tfm_PureOp<"slice"> {
  let summary = "a static, strided range of one axis";
  let description = [{
    `result[..., n, ...] = input[..., start + n * step, ...]` along `axis`,
    for `n` in `[0, ceil((end - start) / step))`: numpy's
    `x[..., start:end:step, ...]` with `0 <= start < end <= dim` and
    `step >= 1`. The sliced axis must be static (the head dim, where
    exporters write `rotate_half` and GPT-J's every-other-element split).

    ```mlir
    %x2 = tfm.slice %q {axis = 3 : i64, start = 32 : i64, end = 64 : i64}
        : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_ConcatOp : Tfm_PureOp<"concat"> {
  let summary = "join tensors along one axis";
  let description = [{
    `result` is `inputs` laid end to end along `axis`: its extent there is
    the sum of theirs, every other dimension agrees, and so do the element
    types. A dynamic joined axis is the sum of the operands' extents, which
    the compiled library computes from the input shapes (a cache of past
    keys joined with the new ones); code generation needs the operands
    before the last one to be static along the axis, or to be one operand.

    ```mlir
    %r = tfm.concat %neg_x2, %x1 {axis = 3 : i64}
        : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
    %present = tfm.concat %past_k, %k {axis = 2 : i64}
        : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ArangeOp : Tfm_Op<"arange", [Pure]> {
  let summary = "positions along a dimension of another tensor";
  let description = [{
    `result[n] = start + n` for `n` in `[0, like.shape[axis])`: numpy's
    `arange(start, start + like.shape[axis])`, sized by a dimension of
    `like` (whose values are not read) so that a dynamic sequence length
    stays tied to the tensor it counts. It is how position ids, RoPE's
    angles and ALiBi's distances are computed from indices; the ONNX
    pattern `Range(start, start + Shape(x)[axis], 1)`.

    ```mlir
    %pos = tfm.arange %x {axis = 1 : i64, start = 0 : i64}
        : tensor<1x?x768xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$like, I64Attr:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$start);
  let results = (outs RankedTensorOf<[F32, F16, BF16, I32, I64]>:$result);
  let assemblyFormat = "$like attr-dict `:` type($like) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_GatherElementsOp : Tfm_PureOp<"gather_elements"> {
  let summary = "pick elements along one axis by an index tensor";
  let description = [{
    `result[..., n, ...] = input[..., indices[..., n, ...], ...]` along
    `axis`, every other index taken as it is: PyTorch's `torch.gather` and
    ONNX's GatherElements. `indices` has the rank of `input`, and the
    result its shape; dimensions other than `axis` agree with `input`'s. An
    index `k < 0` counts from the end (`k + dim`, as ONNX allows); one
    outside `[-dim, dim)` is an error at run time. DeBERTa gathers its
    content-to-position scores by relative distance this way.

    ```mlir
    %c2p = tfm.gather_elements %scores, %index {axis = 2 : i64}
        : tensor<12x?x512xf32>, tensor<12x?x?xi64> -> tensor<12x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Tfm_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` type($input) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ExpandOp : Tfm_Op<"expand", [Pure]> {
  let summary = "broadcast a tensor to a larger shape";
  let description = [{
    `result[i_0, ..., i_(r-1)] = input[j_0, ..., j_(n-1)]` with `input`
    aligned to the result from the right and `j = 0` along each dimension
    where `input` has a 1 (`j` the result's index elsewhere): PyTorch's
    `expand`, numpy's `broadcast_to`, ONNX's Expand with the shape in the
    result type. The result has at least the input's rank; each input
    dimension is 1 or exactly the result's (`?` against `?`), and a result
    dimension that stretches a 1, or that the input does not have, is static
    (nothing else would say its size). DeBERTa expands its [1, Sq, Sk]
    relative positions to the [B*H, Sq, Sk] of the scores it gathers.

    ```mlir
    %index = tfm.expand %c2p_pos : tensor<1x?x?xi64> -> tensor<12x?x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_RepeatInterleaveOp : Tfm_PureOp<"repeat_interleave"> {
  let summary = "repeat each slice along an axis (GQA key/value heads)";
  let description = [{
    `result[..., i, ...] = input[..., i / repeats, ...]` along `axis`; the
    result is `repeats` times longer there. This is how exporters expand the
    key/value heads of grouped-query attention.

    ```mlir
    %k4 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 4 : i64}
        : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, I64Attr:$axis, I64Attr:$repeats);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  // Folds `repeats = 1` away.
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Tfm_AttentionOp : Tfm_PureOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    Per batch `b`, head `h`, query `i`, with `g = h / (H / Hkv)` the key/value
    head of `h` (MHA when `Hkv == H`, MQA when `Hkv == 1`, GQA between):

    `s[j] = scale * sum_d q[b, h, i, d] * k[b, g, j, d] + mask[b, h, i, j]`,
    then `s[j] = -inf` where `causal` and `j > i + (Sk - Sq)`, or where
    `key_padding_mask[b, j] == 0`;
    `result[b, h, i, :] = sum_j softmax(s)[j] * v[b, g, j, :]`.

    Shapes: `query [B, H, Sq, D]`, `key [B, Hkv, Sk, D]`, `value [B, Hkv, Sk,
    Dv]`, result `[B, H, Sq, Dv]`; `mask` (additive, float) broadcasts to
    `[B, H, Sq, Sk]`; `key_padding_mask` is `[B, Sk]` with nonzero meaning
    "attend" (Hugging Face's `attention_mask`). A row with every key masked
    by -inf (causal, key padding, a -inf mask) has output 0. Scores are f32
    values, so a finite masking value in `mask` (-1e9, finfo.min) absorbs
    the score it is added to, and a row masked that way everywhere is the
    uniform average of v, as PyTorch and ONNX Runtime compute it. The score
    matrix is a definition, not a tensor: code generation evaluates it tile
    by tile and never stores it.

    Layout: with `layout = #tfm.head_layout<bshd>` the query, key, value and
    result are `[B, Sq, H, D]`, `[B, Sk, Hkv, D]`, `[B, Sk, Hkv, Dv]` and
    `[B, Sq, H, Dv]` instead: the same op on the head and sequence axes
    swapped, read and written in place (heads split off a projection's
    `[B, S, H * D]` output by a reshape, with no copy). `mask` and
    `key_padding_mask` keep their shapes. Default `bhsd`.

    Score modifiers: `modifiers` is a list of dictionaries, each with a
    `kind` and that kind's parameters; each adds `bias_h(j - (i + Sk - Sq))`
    to `s[j]` (after the scale; -inf masks). Their tensors are
    `modifier_operands`, in the order of `modifiers`. Kinds, each defined
    with its source and exact formula in compiler/modifiers:
    - `alibi` {max_bias = 8.0, symmetric = false}: `m_h * (j - i)`, the
      slopes of Press et al.'s get_slopes (any head count).
    - `t5` {num_buckets = 32, max_distance = 128, bidirectional = true},
      operand `table [num_buckets, H]`: `table[bucket(j - i), h]` with
      T5's log-spaced buckets (use scale = 1.0 for T5).
    - `sliding_window` {window, symmetric = false}: keys with
      `i - j >= window` (and `j - i >= window` when symmetric) masked.

    Content modifiers add, inside the scale, `x . table[row(j - i)]` with `x`
    the query or key row, and one adds to the output (see
    compiler/modifiers/ScoreModifier.h):
    - `shaw` {max_distance K}, operands `key_table [2K+1, D]`, `value_table
      [2K+1, Dv]` (Shaw et al. 2018): `q_i . key_table[c]` with `c =
      clip(j - i, -K, K) + K`, and the output gains `sum_j p_ij
      value_table[c]`.
    - `xl` {max_distance M}, operands `u [H, D]`, `v [H, D]`, `r [L, H, D]`
      (Transformer-XL): `u_h . k_j + (q_i + v_h) . r[M - (i - j), h]`, r in
      Transformer-XL's pos_seq order (row t is distance M - t).
    - `deberta` {span, max_position = 0}, operands `key_pos [2 span, H, D]`,
      `query_pos [2 span, H, D]` (DeBERTa, as Hugging Face computes it):
      `q_i . key_pos[clamp(rel(i - j) + span), h] + k_j .
      query_pos[clamp(span - rel(j - i)), h]`, rel(x) = x (log bucketed as
      DeBERTa-v2 when max_position > 0); use scale 1/sqrt(3d).

    Rotary embedding: `rope = {base, rotary_dims, interleaved,
    position_offset, scaling}` (the attributes of tfm.rope, defaults as there)
    rotates q at positions `i + (Sk - Sq) + position_offset` and k at
    `j + position_offset` before the dot product, as tfm.rope does; the
    kernel rotates each tile as it loads it.

    Softcapping: with `softcap = c` (c > 0; Gemma 2's
    attn_logit_softcapping, ONNX Attention's `softcap`) the scaled product is
    capped before anything is added to it:
    `s[j] = c * tanh(scale * sum_d q[b, h, i, d] * k[b, g, j, d] / c) +
    mask[b, h, i, j]`, then the modifiers' biases and the -inf masks as
    above, so that a masked score stays -inf. Not with content modifiers
    (`shaw`, `xl`, `deberta`), whose terms are part of the product.

    Products: with `product_type = bf16` (set by `tfm-attention-products`,
    which `attune-compile --precision=bf16` runs) q, k and v are rounded to
    bf16 and so are the probabilities before they multiply v; the sums and
    the softmax statistics stay f32, and the result has the operands' type.
    `product_type = f16` is the same with f16 (--precision=f16 on the CUDA
    target). A CPU with AMX runs a bf16 one on its tiles; elsewhere on the
    CPU it is computed in f32, which the rounding bounds anyway; the GPU
    kernel multiplies in the product type on its tensor cores. The reference
    evaluator computes the definition above exactly: check such a model by
    a relative error (attune-run's L2 check).

    ```mlir
    %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
        -> tensor<1x12x?x64xf32>
    %a = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true,
                                   modifiers = [ {kind = "alibi"} ]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
        -> tensor<1x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$query, Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value,
                       Optional<Tfm_FloatTensor>:$mask,
                       Optional<Tfm_PredTensor>:$key_padding_mask,
                       Variadic<Tfm_FloatTensor>:$modifier_operands,
                       F64Attr:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       OptionalAttr<TypedArrayAttrBase<DictionaryAttr,
                           "array of score modifiers">>:$modifiers,
                       OptionalAttr<DictionaryAttr>:$rope,
                       DefaultValuedAttr<Tfm_HeadLayoutAttr,
                                         "HeadLayoutKind::bhsd">:$layout,
                       OptionalAttr<TypeAttr>:$product_type,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`key_padding_mask` `(` $key_padding_mask^ `:` type($key_padding_mask) `)`)?
    (`modifier_operands` `(` $modifier_operands^ `:` type($modifier_operands) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// modifier_operands split by modifier, in the order of `modifiers`
    /// (each takes as many as its registered definition lists). Valid only
    /// on verified ops.
    ::llvm::SmallVector<::mlir::ValueRange> getModifierOperandGroups();
    /// Axes of the heads and of the sequence in query, key, value and
    /// result: 1 and 2 in `bhsd`, 2 and 1 in `bshd`.
    int64_t getHeadAxis() { return headAxisOf(getLayout()); }
    int64_t getSeqAxis() { return 3 - getHeadAxis(); }
    static int64_t headAxisOf(HeadLayoutKind layout) {
      return layout == HeadLayoutKind::bshd ? 2 : 1;
    }
  }];
  let hasVerifier = 1;
}

def Tfm_ScoreBiasOp : Tfm_Op<"score_bias", [Pure, AttrSizedOperandSegments]> {
  let summary = "add a score modifier's terms to attention scores";
  let description = [{
    For scores `[B, H, Sq, Sk]`: `result[b, h, i, j] = input[b, h, i, j] +
    bias_h(j - (i + Sk - Sq))`, the bias of the score modifier `modifier`
    (see tfm.attention) with its `modifier_operands`. A modifier with
    content terms (`shaw`, `xl`, `deberta`) reads the rows the scores were
    computed from, `content(q, k)` (`q [B, H, Sq, D]`, `k [B, H, Sk, D]`,
    as the score matmul took them), and adds `scale * x . table[row(j - (i +
    Sk - Sq))]` for each term. This is the decomposed form of a
    tfm.attention modifier: the unfused build evaluates it into the stored
    scores, and tfm-fuse-attention folds it back into tfm.attention.

    ```mlir
    %b = tfm.score_bias %s modifier_operands(%table : tensor<32x8xf32>)
        {modifier = {kind = "t5", num_buckets = 32 : i64}}
        : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
    %c = tfm.score_bias %s content(%q, %k : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>)
        modifier_operands(%kt, %vt : tensor<33x64xf32>, tensor<33x64xf32>)
        {modifier = {kind = "shaw", max_distance = 16 : i64}, scale = 0.125 : f64}
        : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$query,
                       Optional<Tfm_FloatTensor>:$key,
                       Variadic<Tfm_FloatTensor>:$modifier_operands,
                       DictionaryAttr:$modifier,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`content` `(` $query^ `,` $key `:` type($query) `,` type($key) `)`)?
    (`modifier_operands` `(` $modifier_operands^ `:` type($modifier_operands) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ScoreValuesOp : Tfm_Op<"score_values", [Pure]> {
  let summary = "a score modifier's term on the attention output";
  let description = [{
    For probabilities `p [B, H, Sq, Sk]` (the softmax of the scores):
    `result[b, h, i, :] = sum_j p[b, h, i, j] * values[clip(j - (i + Sk -
    Sq), -K, K) + K, :]`, the value term of the score modifier `modifier`
    (today `shaw`: its `value_table [2K + 1, Dv]`, K = max_distance). The
    decomposed form of that term of tfm.attention: the unfused build adds
    it to `p . v`, and tfm-fuse-attention folds `p . v + score_values(p)`
    back into tfm.attention.

    ```mlir
    %r = tfm.score_values %p modifier_operands(%kt, %vt : tensor<33x64xf32>, tensor<33x64xf32>)
        {modifier = {kind = "shaw", max_distance = 16 : i64}}
        : tensor<1x8x?x?xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Variadic<Tfm_FloatTensor>:$modifier_operands,
                       DictionaryAttr:$modifier);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`modifier_operands` `(` $modifier_operands^ `:` type($modifier_operands) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // ATTUNE_DIALECTS_TFM_TFMOPS_TD
