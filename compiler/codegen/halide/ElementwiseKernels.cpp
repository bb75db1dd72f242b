//===- ElementwiseKernels.cpp - binary, where, unary, mask, arange -------===//
//
// Pointwise kernels. Binary and Where read strided inputs (stride 0 where
// the host broadcasts), so their inputs carry no stride constraint, and each
// has a specialisation for the common case of inputs dense in dimension 0,
// where Halide can emit vector loads instead of gathers. CausalMask accepts
// any strides too, but the host always passes its input dense, so that case
// is specialised as well. Unary reads a dense vector. Arithmetic is done in
// f32 whatever the element type. Arange reads nothing: its values are its
// indices.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

#include <cmath>

using namespace Halide;

namespace attune::codegen::detail {

namespace {

/// Pure variables i0 (innermost) .. i(rank-1).
std::vector<Var> indexVars(int rank) {
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("i" + std::to_string(i));
  return vars;
}

std::vector<Expr> asArgs(const std::vector<Var> &vars) {
  return std::vector<Expr>(vars.begin(), vars.end());
}

/// Estimates for a rank-r elementwise kernel: a [1, 12, 128, 128]-like
/// attention-score shape, innermost first.
std::vector<int> elementwiseEstimates(int rank) {
  static const int sizes[] = {128, 128, 12, 1, 1, 1, 1, 1};
  return std::vector<int>(sizes, sizes + rank);
}

/// erfc(z) to ~1.2e-7 relative error for every z (Numerical Recipes'
/// Chebyshev fit). Used instead of 1 - erf(z) so that GELU keeps its
/// relative accuracy where x is negative and 1 + erf(x / sqrt 2) cancels.
Expr erfcF32(const Expr &z) {
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

} // namespace

BuiltKernel buildBinaryKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "binary");
  const int rank = spec.rank;
  ImageParam lhs = makeInput(spec.elementType, rank, "lhs", /*denseInner=*/false);
  ImageParam rhs = makeInput(spec.elementType, rank, "rhs", /*denseInner=*/false);
  std::vector<Var> vars = indexVars(rank);
  std::vector<Expr> at = asArgs(vars);

  // ALGORITHM
  Expr a = cast<float>(lhs(at)), b = cast<float>(rhs(at));
  Expr value;
  switch (spec.binary) {
  case BinaryKind::Add:
    value = a + b;
    break;
  case BinaryKind::Sub:
    value = a - b;
    break;
  case BinaryKind::Mul:
    value = a * b;
    break;
  case BinaryKind::Div:
    value = a / b;
    break;
  default:
    failSpec("binary: unknown binary kind " +
             std::to_string(static_cast<int>(spec.binary)));
  }
  Func out("out");
  out(vars) = castToElement(spec, value);

  // SCHEDULE
  std::vector<int> estimates = elementwiseEstimates(rank);
  setInputEstimates(lhs, estimates);
  setInputEstimates(rhs, estimates);
  constrainOutput(out, estimates);
  scheduleElementwiseCPU(out, vars, target);
  // Same-shape operands, or a row broadcast over outer dimensions: both
  // dense innermost, so the loads are vector loads. Specialised after the
  // schedule, whose directives the specialisation inherits.
  out.specialize(lhs.dim(0).stride() == 1 && rhs.dim(0).stride() == 1);
  return {{lhs, rhs}, out};
}

BuiltKernel buildWhereKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "where");
  const int rank = spec.rank;
  ImageParam cond = makeInput(spec.condType, rank, "cond", /*denseInner=*/false);
  ImageParam onTrue = makeInput(spec.elementType, rank, "onTrue", false);
  ImageParam onFalse = makeInput(spec.elementType, rank, "onFalse", false);
  std::vector<Var> vars = indexVars(rank);
  std::vector<Expr> at = asArgs(vars);

  // ALGORITHM
  // Nonzero is true for every condition type; comparing in the condition's
  // own type keeps -0.0 false and NaN true, as `!= 0` does in C.
  Expr c = cond(at);
  Expr isTrue = c.type().is_bool() ? c : (c != Halide::Internal::make_zero(c.type()));
  Func out("out");
  out(vars) = select(isTrue, onTrue(at), onFalse(at));

  // SCHEDULE
  std::vector<int> estimates = elementwiseEstimates(rank);
  setInputEstimates(cond, estimates);
  setInputEstimates(onTrue, estimates);
  setInputEstimates(onFalse, estimates);
  constrainOutput(out, estimates);
  scheduleElementwiseCPU(out, vars, target);
  // Every operand dense innermost: vector loads (see buildBinaryKernel).
  out.specialize(cond.dim(0).stride() == 1 && onTrue.dim(0).stride() == 1 &&
                 onFalse.dim(0).stride() == 1);
  return {{cond, onTrue, onFalse}, out};
}

BuiltKernel buildUnaryKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "unary");
  ImageParam x = makeInput(spec.elementType, 1, "x", /*denseInner=*/true);
  Var i("i");

  // ALGORITHM
  Expr v = cast<float>(x(i));
  Expr value;
  switch (spec.unary) {
  case UnaryKind::Relu:
    value = max(v, 0.0f);
    break;
  case UnaryKind::GeluErf:
    // x/2 * (1 + erf(x/sqrt 2)) = x/2 * erfc(-x/sqrt 2).
    value = 0.5f * v * erfcF32(-v * static_cast<float>(M_SQRT1_2));
    break;
  case UnaryKind::GeluTanh: {
    // x/2 * (1 + tanh(u)) = x / (1 + exp(-2u)): the same function without
    // the cancellation of 1 + tanh(u) for negative u.
    Expr u = static_cast<float>(std::sqrt(2.0 / M_PI)) * (v + 0.044715f * v * v * v);
    value = v / (1.0f + exp(-2.0f * u));
    break;
  }
  case UnaryKind::Silu:
    value = v / (1.0f + exp(-v));
    break;
  case UnaryKind::Neg:
    value = -v;
    break;
  case UnaryKind::Abs:
    value = abs(v);
    break;
  // Halide's exact sin and cos (libm's), not fast_sin/fast_cos: their
  // arguments are RoPE angles, position times frequency, which reach the
  // thousands where a polynomial without full range reduction drifts.
  case UnaryKind::Cos:
    value = cos(v);
    break;
  case UnaryKind::Sin:
    value = sin(v);
    break;
  default:
    failSpec("unary: unknown unary kind " +
             std::to_string(static_cast<int>(spec.unary)));
  }
  Func out("out");
  out(i) = castToElement(spec, value);

  // SCHEDULE
  setInputEstimates(x, {1 << 20});
  constrainOutput(out, {1 << 20});
  scheduleElementwiseCPU(out, {i}, target);
  return {{x}, out};
}

BuiltKernel buildCausalMaskKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "causal_mask");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/false);
  Var j("j"), i("i"), b("b");

  // ALGORITHM
  // Sk and Sq come from the input, whose shape the output has.
  Expr sk = x.dim(0).extent();
  Expr sq = x.dim(1).extent();
  Func out("out");
  Expr fill = cast(toHalideType(spec.elementType),
                   Expr(static_cast<float>(spec.value)));
  out(j, i, b) = select(j > i + (sk - sq), fill, x(j, i, b));

  // SCHEDULE
  setInputEstimates(x, {128, 128, 12});
  constrainOutput(out, {128, 128, 12});
  scheduleElementwiseCPU(out, {j, i, b}, target);
  // The host passes the scores dense (KernelMapping flattens the leading
  // dimensions of a dense tensor), so that is the case to vectorise; other
  // strides still work, through gathers.
  out.specialize(x.dim(0).stride() == 1);
  return {{x}, out};
}

BuiltKernel buildArangeKernel(const KernelSpec &spec, const Target &target) {
  Var n("n");

  // ALGORITHM
  // In 64 bits, then one rounding to the element type: exact for integers
  // and for floats up to their significand (2^24 for f32).
  Func out("out");
  out(n) = cast(toHalideType(spec.elementType),
                Expr(static_cast<int64_t>(spec.start)) + cast<int64_t>(n));

  // SCHEDULE
  constrainOutput(out, {4096});
  scheduleElementwiseCPU(out, {n}, target);
  return {{}, out};
}

} // namespace attune::codegen::detail
