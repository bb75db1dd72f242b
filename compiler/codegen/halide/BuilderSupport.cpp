//===- BuilderSupport.cpp - helpers shared by the kernel builders ---------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include <algorithm>
#include <cmath>

using namespace Halide;

namespace attune::codegen::detail {

void failSpec(const std::string &message) {
  throw Halide::CompileError(message);
}


bool isFloatType(ScalarType type) {
  return type == ScalarType::F32 || type == ScalarType::F16 ||
         type == ScalarType::BF16;
}

void requireFloatElement(const KernelSpec &spec, const char *kind) {
  if (!isFloatType(spec.elementType))
    failSpec(std::string(kind) + ": expected a float element type, got " +
             attune::scalarTypeName(spec.elementType));
}

Type toHalideType(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return Float(32);
  case ScalarType::F16:
    return Float(16);
  case ScalarType::BF16:
    return BFloat(16);
  case ScalarType::I32:
    return Int(32);
  case ScalarType::I64:
    return Int(64);
  case ScalarType::I8:
    return Int(8);
  case ScalarType::Bool:
    return Bool();
  }
  failSpec("unknown scalar type " + std::to_string(static_cast<int>(type)));
}

ImageParam makeInput(ScalarType type, int dimensions, const std::string &name,
                     bool denseInner) {
  ImageParam param(toHalideType(type), dimensions, name);
  for (int i = 0; i < dimensions; ++i)
    param.dim(i).set_min(0);
  // Halide assumes a unit innermost stride unless told otherwise; strided
  // inputs (broadcasts, transposes) must lift that assumption.
  if (!denseInner && dimensions > 0)
    param.dim(0).set_stride(Expr());
  return param;
}

void setInputEstimates(ImageParam &param, const std::vector<int> &sizes) {
  Region region;
  for (int i = 0; i < param.dimensions(); ++i)
    region.emplace_back(0, i < static_cast<int>(sizes.size()) ? sizes[i] : 1);
  param.set_estimates(region);
}

void constrainOutput(Func &out, const std::vector<int> &sizes) {
  OutputImageParam buffer = out.output_buffer();
  Region region;
  for (int i = 0; i < out.dimensions(); ++i) {
    buffer.dim(i).set_min(0);
    region.emplace_back(0, i < static_cast<int>(sizes.size()) ? sizes[i] : 1);
  }
  out.set_estimates(region);
}

int floatVectorWidth(const Target &target) {
  return std::max(1, target.natural_vector_size<float>());
}

void scheduleElementwiseCPU(Func &out, const std::vector<Var> &vars,
                            const Target &target, int grainElements) {
  const int vec = floatVectorWidth(target);
  Var x = vars[0];
  Var xv(x.name() + "_v"), xl(x.name() + "_l");
  // Guarded tails: the host may pass extents smaller than a vector (a
  // broadcast dimension of 1, a sequence of 1), and an output can never be
  // over-computed outside its buffer.
  out.split(x, xv, xl, vec, TailStrategy::GuardWithIf).vectorize(xl);
  if (vars.size() == 1) {
    Var xo(x.name() + "_task");
    int vectorsPerTask = std::max(1, grainElements / vec);
    out.split(xv, xo, xv, vectorsPerTask, TailStrategy::GuardWithIf)
        .parallel(xo);
    return;
  }
  Var rows = vars[1];
  for (size_t k = 2; k < vars.size(); ++k) {
    Var fused(rows.name() + "_" + vars[k].name());
    out.fuse(rows, vars[k], fused);
    rows = fused;
  }
  Expr rowLength = max(out.output_buffer().dim(0).extent(), 1);
  Expr rowsPerTask = max(1, grainElements / rowLength);
  out.parallel(rows, rowsPerTask, TailStrategy::GuardWithIf);
}

bool isGpuTarget(const Target &target) { return target.has_gpu_feature(); }

void scheduleElementwiseGPU(Func &f, const std::vector<Var> &vars) {
  Var x = vars[0];
  Var block(x.name() + "_block"), thread(x.name() + "_thread");
  f.split(x, block, thread, kGpuThreads, TailStrategy::GuardWithIf);
  for (size_t k = 1; k < vars.size(); ++k) {
    Var fused(block.name() + "_" + vars[k].name());
    f.fuse(block, vars[k], fused);
    block = fused;
  }
  f.gpu_blocks(block).gpu_threads(thread);
}

void scheduleElementwise(Func &out, const std::vector<Var> &vars, const Target &target,
                         int grainElements) {
  if (isGpuTarget(target))
    scheduleElementwiseGPU(out, vars);
  else
    scheduleElementwiseCPU(out, vars, target, grainElements);
}

void requireCpuTarget(const Target &target, const char *kind, const char *why) {
  if (isGpuTarget(target))
    failSpec(std::string(kind) + ": no GPU schedule (" + why + ")");
}

int vectorRegisterCount(const Target &target) {
  // Every AVX-512 flavour (avx512_skylake, _zen4, ...) has 16-float vectors
  // and 32 registers; has_feature(AVX512) alone misses the flavours.
  return floatVectorWidth(target) >= 16 ? 32 : 16;
}

const ScheduleParams &scheduleFor(const KernelSpec &spec, const Target &target) {
  static const ScheduleParams none;
  auto it = spec.schedules.find(attune_isa_name(targets::cpu::isaOf(target)));
  return it == spec.schedules.end() ? none : it->second;
}

int64_t scheduleParam(const ScheduleParams &params, const std::string &name,
                      int64_t fallback) {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

/// erfc(z) to ~1.2e-7 relative error for every z (Numerical Recipes'
/// Chebyshev fit). Used instead of 1 - erf(z) so that GELU keeps its
/// relative accuracy where x is negative and 1 + erf(x / sqrt 2) cancels.
static Expr erfcF32(const Expr &z) {
  Expr a = abs(z);
  Expr t = 1.0f / (1.0f + 0.5f * a);
  Expr poly =
      -1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f +
                                    t * (1.48851587f +
                                         t * (-0.82215223f + t * 0.17087277f))))))));
  Expr ans = t * exp(-a * a + poly);
  return select(z >= 0.0f, ans, 2.0f - ans);
}

Expr tanhExpr(const Expr &v) {
  // Vectorizes (Halide's tanh is a scalar libm call per element). Odd, so
  // computed on |x|: (1 - e) / (1 + e) with e = exp(-2|x|), which loses
  // relative precision as |x| -> 0 (1 - e cancels), so below 1/4 the Taylor
  // series to x^9 (next term under 1e-7 of the value there); a large |x|
  // gives e = 0 and exactly 1; NaN stays NaN.
  Expr a = abs(v);
  Expr e = exp(-2.0f * a);
  Expr big = (1.0f - e) / (1.0f + e);
  Expr a2 = a * a;
  Expr small =
      a * (1.0f +
           a2 * (-1.0f / 3 + a2 * (2.0f / 15 + a2 * (-17.0f / 315 + a2 * (62.0f / 2835)))));
  Expr t = select(a < 0.25f, small, big);
  return select(v < 0.0f, -t, select(v > 0.0f, t, v));
}

Expr activationExpr(UnaryKind kind, const Expr &v) {
  switch (kind) {
  case UnaryKind::Relu:
    return max(v, 0.0f);
  case UnaryKind::GeluErf:
    // x/2 * (1 + erf(x/sqrt 2)) = x/2 * erfc(-x/sqrt 2).
    return 0.5f * v * erfcF32(-v * static_cast<float>(M_SQRT1_2));
  case UnaryKind::GeluTanh: {
    // x/2 * (1 + tanh(u)) = x / (1 + exp(-2u)): the same function without
    // the cancellation of 1 + tanh(u) for negative u.
    Expr u = static_cast<float>(std::sqrt(2.0 / M_PI)) * (v + 0.044715f * v * v * v);
    return v / (1.0f + exp(-2.0f * u));
  }
  case UnaryKind::Silu:
    return v / (1.0f + exp(-v));
  default:
    failSpec("activation: expected relu, gelu_erf, gelu_tanh or silu, got " +
             std::to_string(static_cast<int>(kind)));
  }
}

Expr castToElement(const KernelSpec &spec, const Expr &value) {
  return cast(toHalideType(spec.elementType), value);
}

} // namespace attune::codegen::detail
