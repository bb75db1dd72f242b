//===- KernelCatalog.h - every kernel the compiler can call -----*- C++ -*-===//
//
// Every kernel the compiler can call, described without Halide or MLIR types
// so that the host code generator, the evaluator's tests and the tuning
// database (built without exceptions) can include it. The Halide code
// generator (compiler/codegen/halide) builds the algorithm and schedule for a
// spec and compiles it ahead of time; the host code generator calls the
// result through its C symbol, passing one halide_buffer_t per argument.
//
// Buffer conventions. A tensor [d0, ..., d(r-1)] in row-major order is a
// Halide buffer whose dimension 0 is d(r-1) (stride 1) and dimension r-1 is
// d0. The host code flattens and views tensors to the dimensionality each
// kernel documents below; broadcasting is expressed with stride 0, and a
// transpose always becomes a Copy whose input has permuted strides, so
// kernels never see a shape rule.
//
// Strides. The inputs of Binary, Compare and Where take any strides (the
// host passes 0 for a broadcast dimension); Copy's input takes any strides (permuted for
// a transpose, 0 for a broadcast); CausalMask's input takes any strides,
// though the host passes it dense. These kernels are fastest when every
// input has stride 1 in dimension 0. Every other input must have stride 1 in
// dimension 0 (outer strides are free), as must every output. Every buffer's
// dimensions start at min 0; its host pointer may point inside a tensor (a
// slice's input, a concat operand's window of the result). A buffer that
// breaks these rules, or is too small for the others (e.g. LearnedPosition with
// S > P), makes the kernel return nonzero after calling halide_error; the
// Halide runtime's default error handler aborts, so a library that must
// survive bad input installs its own with halide_set_error_handler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_KERNELCATALOG_H
#define ATTUNE_COMPILER_SUPPORT_KERNELCATALOG_H

#include "compiler/support/ScalarType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attune::codegen {

using attune::ScalarType;

enum class KernelKind {
  /// in: table[V, D] (2-d: x=d, y=v), ids[N] (1-d) -> out[N, D] (2-d)
  Embedding,
  /// in: x[B, S, D] (3-d), table[P, D] -> out[B, S, D]
  LearnedPosition,
  /// in: x[B, S, D] -> out[B, S, D]; params: form, minTimescale, maxTimescale
  Sinusoidal,
  /// in: x[N, D], gamma[D], beta[D] -> out[N, D]; params: epsilon
  LayerNorm,
  /// in: x[N, D], gamma[D] -> out[N, D]; params: epsilon
  RmsNorm,
  /// in: x[M, K], w[K, N], (bias[N] when hasBias) -> out[M, N]
  Linear,
  /// in: a[Bt, M, K] (or [Bt, K, M] when transposeA), b[Bt, K, N] (or
  /// [Bt, N, K] when transposeB) -> out[Bt, M, N]. All 3-d.
  Matmul,
  /// in: x[N, L] -> out[N, L], softmax over L
  Softmax,
  /// in: lhs, rhs (rank-d, output shape, broadcast by stride 0) -> out.
  /// Floats compute in f32; i32 and i64 (add, sub, mul, minimum, maximum)
  /// in their own type, wrapping. params: binary
  Binary,
  /// in: cond (condType), onTrue, onFalse (rank-d, output shape, broadcast
  /// by stride 0) -> out. Values of any numeric element type.
  Where,
  /// in: x[N] -> out[N]. Floats; neg and abs on i32 and i64 too (wrapping),
  /// and sign.
  /// params: unary
  Unary,
  /// in: x[Bt, Sq, Sk] -> out[Bt, Sq, Sk]; params: value
  CausalMask,
  /// in: x (rank-d, arbitrary strides) -> out (rank-d). Transposes and
  /// broadcasts; slices (x starts inside its tensor, strided along the
  /// axis) and concat (out is one operand's window of the result, with the
  /// result's outer strides).
  Copy,
  /// in: x[O, n, I] -> out[O, n * repeats, I], out[o, i, j] = x[o, i / repeats, j]
  RepeatInterleave,
  /// in: q[B, H, Sq, D], k[B, Hkv, Sk, D], v[B, Hkv, Sk, Dv],
  ///     (mask[B, H, Sq, Sk] strided, stride 0 where broadcast, when hasMask),
  ///     (keyPadding[B, Sk] of keyPaddingType, when hasKeyPadding)
  ///     (the operands of each of `modifiers`, in order)
  ///     -> out[B, H, Sq, Dv]. 4-d throughout. Never stores Sq x Sk scores.
  /// params: scale, causal, headDim (= D = Dv, static), hasMask,
  /// hasKeyPadding, modifiers (compiler/modifiers: score terms of the head
  /// and key-query distance, evaluated from indices)
  Attention,
  /// in: x[B, H, Sq, Sk] (4-d scores), the operands of each of `modifiers`
  /// -> out = x + the modifiers' bias at (h, j - (i + Sk - Sq)). The unfused
  /// form of attention's modifiers.
  ScoreBias,
  /// in: p[B, H, Sq, Sk] (probabilities), the modifier's operands -> out[B,
  /// H, Sq, Dv] = sum_j p * the modifier's value table at clip(j - (i + Sk
  /// - Sq)). params: modifiers (exactly one, with a value term). The
  /// unfused form of Shaw's value term.
  ScoreValues,
  /// in: x[B, H, S, D], (align[B', H', L, D'] when ropeAligned: only its L
  /// is read) -> out[B, H, S, D] rotated at positions s + positionOffset
  /// (+ L - S). params: rope (enabled), headDim = D (static)
  Rope,
  /// in: x[B, S, D] (3-d), (table[P, D] when hasTable) -> out[B, S, D] =
  /// x * table[s, d], or x * the sinusoid pe[s, d] of form, minTimescale
  /// and maxTimescale without a table. S > P is an error.
  MultiplicativePosition,
  /// in: x[B, S, D] (3-d), p0[D], w1[D + 1, H], b1[H], w2[H + 1, D], b2[D]
  /// -> out[B, S, D] = x + p_s, the FLOATER recursion of
  /// tfm.recursive_position with step timeStep, scanned serially over S
  /// on each call.
  RecursivePosition,
  /// in: ids[B, S] (2-d: x=s, y=b, of indexType), amplitude, frequency,
  /// phase [V, D] -> out[B, S, 2D] = [r cos(w k + theta) | r sin(w k +
  /// theta)], k = s + firstPosition. Out-of-range ids are clamped (the
  /// runtime rejects them before a run).
  ComplexEmbedding,
  /// in: x[M, 2K], wr[K, N], wi[K, N], (br[N], bi[N] when hasBias) ->
  /// out[M, 2N], the complex product of tfm.complex_linear on [real |
  /// imaginary] rows. Schedule parameters as Linear's.
  ComplexLinear,
  /// no inputs -> out[N] = start + n, cast to the element type (f32, f16,
  /// bf16, i32 or i64). params: start. tfm.arange: N comes from the output
  /// buffer, so the tensor the op counts is never read.
  Arange,
  /// in: lhs, rhs of the element type (rank-d, output shape, broadcast by
  /// stride 0) -> out of Bool (i1). params: predicate. tfm.compare: an i1
  /// result, so a kind of its own rather than a Binary whose output type
  /// would differ from its inputs'.
  Compare,
  /// in: x[N] of sourceType -> out[N] of the element type, value by value
  /// (tfm.cast: float to int truncates and saturates, NaN to 0; to i1 is
  /// != 0; int to narrower int wraps).
  Cast,
  /// in: x[O, L, I] (3-d: x=i, y=l, z=o), indices[O, N, I] (of indexType)
  /// -> out[O, N, I] = x[o, k', i], k = indices[o, n, i], k' = k + L when
  /// k < 0. tfm.gather_elements: the host views a tensor of any rank as
  /// [the dims before the axis, the axis, the dims after it], so the
  /// gathered axis is always dimension 1 and the kernel has no axis
  /// parameter. Any element type; indexType i32 or i64. An index outside
  /// [-L, L) makes the kernel fail (halide_error naming gather_elements,
  /// the flat position in indices, the index and the range) and is never
  /// read: indices are checked in a pass of their own before the gather,
  /// whose error is raised on the calling thread.
  GatherElements,
};

enum class BinaryKind { Add, Sub, Mul, Div, Minimum, Maximum };
enum class UnaryKind { Relu, GeluErf, GeluTanh, Silu, Neg, Abs, Cos, Sin, Tanh, Log, Sign, Ceil };
/// tfm.compare's relations; false with a NaN operand except Ne.
enum class ComparePredicate { Lt, Le, Gt, Ge, Eq, Ne };
enum class SinusoidalForm { Interleaved = 0, Concat = 1 };

/// The free parameters of a kernel's schedule (register tile, query tile, key
/// block, ...) by name, e.g. {"query_tile": 48}. A builder takes the ones it
/// finds and its own formula for the rest, so an empty set is always valid.
using ScheduleParams = std::map<std::string, int64_t>;

/// A score modifier (compiler/modifiers/ScoreModifier.h) as a kernel sees it:
/// its registered name, every parameter (defaults filled in), and the ranks
/// of its operands, which are f-typed like the kernel's element type.
struct ModifierSpec {
  std::string name;
  std::map<std::string, double> params;
  std::vector<int> operandRanks;
};

/// Rotary position embedding (tfm.rope, tfm.attention's `rope`): pairs of
/// the first `rotaryDims` dimensions rotated by position * base^(-2i/R),
/// pairs (2i, 2i+1) when `interleaved`, else (i, i + R/2).
struct RopeSpec {
  bool enabled = false;
  double base = 10000.0;
  int64_t rotaryDims = 0;
  bool interleaved = false;
  int64_t positionOffset = 0;

  /// Frequency scaling of long-context checkpoints (Hugging Face's
  /// `rope_scaling`), applied to theta_i = base^(-2i/R): `Linear` divides
  /// every theta_i by `factor` (positions interpolated); `Llama3` divides
  /// the low frequencies (wavelength above originalMaxPositions /
  /// lowFreqFactor) by `factor`, keeps the high ones (wavelength below
  /// originalMaxPositions / highFreqFactor) and blends between, as
  /// transformers' `_compute_llama3_parameters` does.
  enum class Scaling { None, Linear, Llama3 };
  Scaling scaling = Scaling::None;
  double factor = 1.0;
  double lowFreqFactor = 1.0, highFreqFactor = 4.0;
  int64_t originalMaxPositions = 8192;

  bool operator==(const RopeSpec &o) const {
    return enabled == o.enabled && base == o.base && rotaryDims == o.rotaryDims &&
           interleaved == o.interleaved && positionOffset == o.positionOffset &&
           scaling == o.scaling && factor == o.factor &&
           lowFreqFactor == o.lowFreqFactor && highFreqFactor == o.highFreqFactor &&
           originalMaxPositions == o.originalMaxPositions;
  }
};

/// theta_i of pair `i` of `rope`: base^(-2i/R) with its scaling applied, in
/// double. The one definition the reference evaluator and the kernels use.
double ropeInverseFrequency(const RopeSpec &rope, int64_t i);

/// "" when `rope`'s scaling parameters are valid, else what is wrong.
std::string checkRopeScaling(const RopeSpec &rope);

/// The largest q/k and value head dim the fused attention kernel takes; the
/// fusion pass leaves attention with a larger (or a dynamic) one unfused.
inline constexpr int64_t kMaxAttentionHeadDim = 1024;

/// One kernel: a kind and the static parameters it is specialised on. Two
/// equal specs are the same kernel; the compiler emits each once.
struct KernelSpec {
  KernelKind kind = KernelKind::Copy;
  ScalarType elementType = ScalarType::F32;

  int rank = 0;                        // Binary, Where, Copy
  BinaryKind binary = BinaryKind::Add; // Binary
  UnaryKind unary = UnaryKind::Relu;   // Unary
  ScalarType indexType = ScalarType::I32; // Embedding, ComplexEmbedding ids; GatherElements
  ScalarType condType = ScalarType::Bool;      // Where condition
  ComparePredicate predicate = ComparePredicate::Lt; // Compare
  ScalarType sourceType = ScalarType::F32;     // Cast input
  ScalarType keyPaddingType = ScalarType::Bool; // Attention key padding
  bool transposeA = false, transposeB = false; // Matmul
  bool hasBias = false;                        // Linear, ComplexLinear
  /// Linear: applied to x w + b before the store (tfm.linear's activation):
  /// Relu, GeluErf, GeluTanh or Silu, computed as the Unary kernel does.
  std::optional<UnaryKind> activation;
  /// Linear: w is stored as [ceil(N/W), K, W] column panels of this width
  /// (a tfm.weight with #tfm.panels<W>, compiler/support/PanelLayout.h);
  /// 0: w is the row-major [K, N] matrix.
  int64_t weightPanel = 0;
  /// Linear: the element type w is stored in. F32 (read: the element type,
  /// so an f16 linear's w is f16), or BF16 with weightPanel
  /// > 0: the panels then interleave pairs of K rows, [ceil(N/W),
  /// ceil(K/2), W, 2] (PanelLayout.h), and the kernel rounds x to bf16 and
  /// accumulates in f32 (--precision=bf16).
  ScalarType weightType = ScalarType::F32;
  double epsilon = 0;                          // LayerNorm, RmsNorm
  /// LayerNorm, RmsNorm: normalise x + residual (tfm-fuse-residual-norm),
  /// the sum rounded to the element type.
  bool hasResidual = false;
  // Sinusoidal, MultiplicativePosition without a table
  SinusoidalForm form = SinusoidalForm::Interleaved;
  double minTimescale = 1.0, maxTimescale = 1.0e4;
  bool hasTable = false;                       // MultiplicativePosition
  double timeStep = 1.0;                       // RecursivePosition
  int64_t firstPosition = 1;                   // ComplexEmbedding
  double value = 0;                            // CausalMask fill
  int64_t repeats = 1;                         // RepeatInterleave
  int64_t start = 0;                           // Arange
  double scale = 1.0;                          // Attention
  bool causal = false, hasMask = false, hasKeyPadding = false;
  /// Attention: q.k and p.v multiply bf16-rounded operands (tfm.attention's
  /// product_type = bf16, from --precision=bf16). Runs on AMX where the
  /// target has it; other variants compute in f32.
  bool bf16Products = false;
  /// Attention: the same with f16 (product_type = f16, from --precision=f16
  /// on the CUDA target, whose tensor cores multiply f16). The CPU variants
  /// compute in f32.
  bool f16Products = false;
  /// Attention: tfm.attention's softcap c (scores c * tanh(s / c)); 0 for
  /// none.
  double softcap = 0;
  int64_t headDim = 0;                         // Attention (static)
  /// Attention: the value head dim Dv when it differs from headDim (q and
  /// k's), else 0. valueHeadDim() is Dv either way.
  int64_t valueDim = 0;
  int64_t valueHeadDim() const { return valueDim > 0 ? valueDim : headDim; }
  /// Attention: the most keys any call can have (a static key length, or
  /// the bound of its symbol, as a learned position table gives), else 0.
  /// The kernel's key block is no longer than that. A schedule hint, so in
  /// scheduleKey(), not symbolName().
  int64_t keyBound = 0;
  /// Attention: the same for the queries (a short query block needs no
  /// full query tile).
  int64_t queryBound = 0;
  std::vector<ModifierSpec> modifiers;         // Attention, ScoreBias, ScoreValues
  bool hasContent = false; // ScoreBias: takes q and k for content terms, times scale
  RopeSpec rope;                               // Attention, Rope
  bool ropeAligned = false;                    // Rope: takes an `align` buffer

  /// Schedule parameters per ISA level, keyed by attune_isa_name() ("avx2",
  /// "avx512", ...), usually from the tuning database. They change the code
  /// but not what it computes, so they are not part of symbolName(); a cache
  /// of compiled kernels must key on scheduleKey() too.
  std::map<std::string, ScheduleParams> schedules;

  /// A deterministic text form of `schedules`, keyBound and queryBound
  /// ("" when none is set).
  std::string scheduleKey() const;

  /// A deterministic C identifier naming this spec, e.g.
  /// "attune_attention_d64_causal"; distinct specs get distinct names.
  std::string symbolName() const;
  bool operator==(const KernelSpec &other) const {
    return symbolName() == other.symbolName();
  }
};

/// True for the kernels that multiply bf16 (Linear over bf16 weights): the
/// ones a library also builds for the avx512_zen4 level (vdpbf16ps).
inline bool usesBf16DotProduct(const KernelSpec &spec) {
  return spec.kind == KernelKind::Linear && spec.weightType == ScalarType::BF16;
}

/// One argument of a kernel's C entry point, in call order: inputs, then the
/// output. Every argument is a halide_buffer_t*.
struct KernelArg {
  std::string name;
  ScalarType type;
  int dimensions;
};
std::vector<KernelArg> kernelSignature(const KernelSpec &spec);

/// Checks what no builder can recover from (an unknown kind or type, a rank
/// out of range, a NaN fill); returns "" when the spec is buildable, else a
/// message naming the kind and the problem.
std::string validateKernelSpec(const KernelSpec &spec);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_SUPPORT_KERNELCATALOG_H
