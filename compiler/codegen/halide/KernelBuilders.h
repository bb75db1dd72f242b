//===- KernelBuilders.h - Halide algorithms and schedules -------*- C++ -*-===//
//
// Internal to the code generator and its tests: builds the Halide pipeline
// for a KernelSpec. One builder per kernel kind, each with an algorithm
// (`// ALGORITHM`) and a schedule per target (`// SCHEDULE`).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELBUILDERS_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELBUILDERS_H

#include "compiler/codegen/halide/Kernels.h"

#include "Halide.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace attune::codegen::detail {

/// A kernel ready to compile (AOT) or to run (JIT, in tests): its inputs in
/// call order (kernelSignature order) and its output Func, scheduled.
struct BuiltKernel {
  std::vector<Halide::ImageParam> inputs;
  Halide::Func output;
  /// The pipeline that runs `output` in this process, made on first use
  /// with the extern stages kernels call registered (ModelSupport.h: the
  /// AMX attention). JIT through it: `output.realize()` knows no externs.
  Halide::Pipeline &jit();
  std::optional<Halide::Pipeline> jitPipeline = {};
};

Halide::Type toHalideType(ScalarType type);

/// Dispatches on spec.kind. `target` selects the schedule.
BuiltKernel buildKernel(const KernelSpec &spec, const Halide::Target &target);

// One builder per kind (defined in the file named after the kind group).
BuiltKernel buildEmbeddingKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildLearnedPositionKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildSinusoidalKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildMultiplicativePositionKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildRecursivePositionKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildComplexEmbeddingKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildLayerNormKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildRmsNormKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildBinaryKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildWhereKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildUnaryKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildCausalMaskKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildArangeKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildCompareKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildCastKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildCopyKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildRepeatInterleaveKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildGatherElementsKernel(const KernelSpec &, const Halide::Target &);
// MatmulKernels.cpp
BuiltKernel buildLinearKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildComplexLinearKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildMatmulKernel(const KernelSpec &, const Halide::Target &);
BuiltKernel buildSoftmaxKernel(const KernelSpec &, const Halide::Target &);
// AttentionKernel.cpp
BuiltKernel buildAttentionKernel(const KernelSpec &, const Halide::Target &);
// ModifierKernels.cpp
BuiltKernel buildScoreBiasKernel(const KernelSpec &, const Halide::Target &);

BuiltKernel buildScoreValuesKernel(const KernelSpec &, const Halide::Target &);

/// The Halide form of spec.modifiers (compiler/modifiers), with the operand
/// inputs they read in kernelSignature order. Fails (failSpec) on a modifier
/// that is not registered.
struct ModifierBias {
  Halide::Var delta{"delta"}, h{"bias_h"};
  /// The summed bias as `func(delta, h)` (f32, natural-log units, -inf
  /// where a modifier masks); undefined when no modifier has one.
  Halide::Func func;
  /// Each modifier's own bias, terms[t](delta, h), in the order of the
  /// spec's modifiers that have one (kernels that must keep the -inf of
  /// one apart from the finite bias of another: see buildAmxAttention).
  std::vector<Halide::Func> terms;
  std::vector<Halide::ImageParam> inputs;

  /// A content term (ScoreModifier::ContentTerm) of some modifier.
  struct Content {
    bool querySide = true;
    /// table(d, h, r): row r of the head-h table, whatever its form.
    Halide::Func table;
    /// offset(d, h), added to q first; undefined when none.
    Halide::Func offset;
    /// The table's rows (1 for a head vector).
    Halide::Expr rows;
    /// Whether the table is one [H, D] vector (ContentTerm::HeadVector).
    bool headVector = false;
    /// row(delta): the table row at distance delta, int32 in [0, rows).
    Halide::Func row;
    /// ScoreModifier::saturationDistance, or -1 for none.
    int64_t saturation = -1;
  };
  std::vector<Content> content;

  /// Shaw's value term: table(c, r), r = clip(delta, -K, K) + K.
  struct Value {
    Halide::Func table;
    int maxDistance = 0;
  };
  std::optional<Value> value;
};
/// `heads` is the number of query heads.
ModifierBias declareModifierBias(const KernelSpec &spec, const Halide::Expr &heads);

/// The distances delta = j - i' at which a key can be visible at all: what
/// the spec's modifiers allow (ScoreModifier::visibleDeltas: a sliding
/// window's) and, with `withCausal`, at most 0 when the spec is causal.
/// Bounds past +-2^30 are none: they exclude nothing a buffer can hold, and
/// index arithmetic with them could overflow int32.
struct VisibleDistances {
  static constexpr int64_t kFar = int64_t(1) << 30;
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  bool boundedBelow() const { return lo > -kFar; }
  bool boundedAbove() const { return hi < kFar; }
  /// Whether `delta` is within the bounds, as integer compares. Kernels
  /// mask with this rather than with the -inf a window's bias adds: Halide
  /// compiles float code assuming no infinities, and LLVM folded
  /// `select(visible, 0, -inf) + alibi` to the ALiBi bias alone, which let
  /// every key outside the window in.
  Halide::Expr contains(const Halide::Expr &delta) const;
};
VisibleDistances visibleDistances(const KernelSpec &spec, bool withCausal);

// RopeKernels.cpp
BuiltKernel buildRopeKernel(const KernelSpec &, const Halide::Target &);

/// Positions are split as kRopeStep a + r: cos and sin of r theta_i come
/// from a table computed at compile time, those of kRopeStep a theta_i per
/// call, joined by the angle-addition formulas.
inline constexpr int kRopeStep = 64;

/// theta_i (R/2 of them) and cos, sin of r theta_i for r < kRopeStep, at
/// index r * R/2 + i: what the tables and the AMX attention embed.
struct RopeConstants {
  std::vector<double> theta, fineCos, fineSin;
};
RopeConstants ropeConstants(const RopeSpec &rope);

/// cos and sin of pos * base^(-2 pair / R), f32, computed in double; the
/// caller schedules them.
struct RopeTables {
  Halide::Var pair{"rope_pair"}, pos{"rope_pos"};
  Halide::Func cos{"rope_cos"}, sin{"rope_sin"};
  Halide::Func coarse, fine; // what cos and sin are computed from
};
RopeTables declareRopeTables(const RopeSpec &rope);
/// Computes the per-call tables once per call (compute_root), on the
/// device for a GPU target.
void scheduleRopeTables(RopeTables &tables, const Halide::Target &target);

/// Element `d` of a row of `headDim` values rotated at position `pos`
/// (tfm.rope's definition); `x(e)` reads element e of the row as f32.
Halide::Expr ropeRotate(const RopeSpec &rope, const RopeTables &tables,
                        const std::function<Halide::Expr(Halide::Expr)> &x,
                        const Halide::Expr &d, const Halide::Expr &pos, int headDim);

/// Schedule parameters worth timing for Linear and Matmul on `target` (see
/// the parameter table at the top of MatmulKernels.cpp), each valid for the
/// builder; the first is the formula's default. For a tuner.
std::vector<ScheduleParams> gemmScheduleCandidates(const Halide::Target &target);

/// Schedule parameters worth timing for the fused attention kernel `spec`
/// on `target` (see AttentionKernel.cpp), each valid for the builder; the
/// first is the formula's default. For a tuner.
std::vector<ScheduleParams>
attentionScheduleCandidates(const KernelSpec &spec, const Halide::Target &target);

} // namespace attune::codegen::detail

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELBUILDERS_H
