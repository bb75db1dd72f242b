//===- NormKernels.cpp - layer norm and RMS norm ----------------------------===//
//
// Both norms reduce each row of x[N, D] to a statistic and then scale the row.
// Statistics are computed in f32 in two passes (mean, then the mean of the
// squared deviations), which for D up to a few thousand loses nothing next to
// a single-pass E[x^2] - E[x]^2 that cancels badly when |mean| >> std. Each
// row's statistics live in registers next to the row that uses them; rows run
// in parallel.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

using namespace Halide;

namespace attune::codegen::detail {

namespace {

/// A row sum of f(d, n) over d in [0, extent), vectorised: `vec` lanes of
/// partial sums over whole vectors, then the lanes and the scalar tail.
/// Reading only inside [0, extent) means no padding or clamping is needed.
struct RowSum {
  Func partial; // partial(lane, n)
  Func total;   // total(n)
};

RowSum makeRowSum(const Func &f, const Expr &extent, int vec,
                  const std::string &name) {
  RowSum sum{Func(name + "_partial"), Func(name)};
  Var lane(name + "_lane"), n(name + "_n");
  Expr wholeVectors = extent / vec;
  RDom r(0, wholeVectors, name + "_r");
  sum.partial(lane, n) = 0.0f;
  sum.partial(lane, n) += f(r * vec + lane, n);

  RDom l(0, vec, name + "_l");
  RDom tail(wholeVectors * vec, extent - wholeVectors * vec, name + "_tail");
  sum.total(n) = 0.0f;
  sum.total(n) += sum.partial(l, n);
  sum.total(n) += f(tail, n);
  return sum;
}

/// Rows of `out` in parallel, each row's reductions computed at the row,
/// the row itself vectorised along d.
void scheduleRowwiseCPU(Func &out, Var d, Var n, const std::vector<RowSum> &sums,
                        const std::vector<Func> &perRow, const Expr &rowLength,
                        const Target &target) {
  const int vec = floatVectorWidth(target);
  Var dv("d_v"), dl("d_l"), nt("n_task"), ni("n_i");
  out.split(d, dv, dl, vec, TailStrategy::GuardWithIf).vectorize(dl);
  Expr rowsPerTask = max(1, (1 << 14) / max(rowLength, 1));
  out.split(n, nt, ni, rowsPerTask, TailStrategy::GuardWithIf).parallel(nt);
  for (RowSum sum : sums) {
    Var lane = sum.partial.args()[0];
    sum.partial.compute_at(out, ni).bound_extent(lane, vec).vectorize(lane);
    sum.partial.update().vectorize(lane);
    sum.total.compute_at(out, ni);
  }
  // Per-row scalars (mean, 1/std) are used by every element of the row:
  // computed once at the row, not inlined into the vector loop.
  for (Func f : perRow)
    f.compute_at(out, ni);
}

/// One block per row: its threads make the lanes of each row sum (strided
/// by kGpuThreads, so a warp reads consecutive elements) in shared memory,
/// one thread adds the lanes and the per-row scalars, then every thread
/// writes its columns of the row.
void scheduleRowwiseGPU(Func &out, Var d, Var n, const std::vector<RowSum> &sums,
                        const std::vector<Func> &perRow) {
  Var dv("d_v"), dl("d_l");
  out.split(d, dv, dl, kGpuThreads, TailStrategy::GuardWithIf)
      .reorder(dv, dl, n)
      .gpu_blocks(n)
      .gpu_threads(dl);
  for (RowSum sum : sums) {
    Var lane = sum.partial.args()[0];
    sum.partial.compute_at(out, n).bound_extent(lane, kGpuThreads).gpu_threads(lane);
    sum.partial.update().gpu_threads(lane);
    sum.total.compute_at(out, n);
  }
  for (Func f : perRow)
    f.compute_at(out, n);
}

void scheduleRowwise(Func &out, Var d, Var n, const std::vector<RowSum> &sums,
                     const std::vector<Func> &perRow, const Expr &rowLength, const Target &target) {
  if (isGpuTarget(target))
    scheduleRowwiseGPU(out, d, n, sums, perRow);
  else
    scheduleRowwiseCPU(out, d, n, sums, perRow, rowLength, target);
}

/// The row a norm normalises, in f32: x, or x + residual rounded to the
/// element type first (as the tfm.add the residual replaces stores it;
/// spec.hasResidual), the residual's input appended to `inputs`. Inlined:
/// the row sums and the output each read x (and the residual) again
/// rather than keep a copy of the row.
Func normInput(const KernelSpec &spec, ImageParam &x, std::vector<ImageParam> &inputs) {
  Var d("d"), n("n");
  Func xf("x_f32");
  if (!spec.hasResidual) {
    xf(d, n) = cast<float>(x(d, n));
    return xf;
  }
  ImageParam residual = makeInput(spec.elementType, 2, "residual", /*denseInner=*/true);
  residual.dim(0).set_bounds(x.dim(0).min(), x.dim(0).extent());
  residual.dim(1).set_bounds(x.dim(1).min(), x.dim(1).extent());
  setInputEstimates(residual, {768, 512});
  inputs.push_back(residual);
  xf(d, n) = cast<float>(castToElement(spec, cast<float>(x(d, n)) + cast<float>(residual(d, n))));
  return xf;
}

/// The lanes of a row sum: the vector width on a CPU, the threads of a
/// block on a GPU.
int rowSumLanes(const Target &target) {
  return isGpuTarget(target) ? kGpuThreads : floatVectorWidth(target);
}

} // namespace

BuiltKernel buildLayerNormKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "layer_norm");
  ImageParam x = makeInput(spec.elementType, 2, "x", /*denseInner=*/true);
  std::vector<ImageParam> inputs = {x};
  Func xf = normInput(spec, x, inputs);
  ImageParam gamma = makeInput(spec.elementType, 1, "gamma", true);
  ImageParam beta = makeInput(spec.elementType, 1, "beta", true);
  inputs.push_back(gamma);
  inputs.push_back(beta);
  const int vec = rowSumLanes(target);
  Var d = xf.args()[0], n = xf.args()[1];
  Expr extent = x.dim(0).extent();
  Expr inverseD = 1.0f / cast<float>(extent);

  // ALGORITHM
  // Rows are shifted by their first element before any sum: with x = c + e,
  // |c| >> |e| (a residual stream with a large offset), the f32 mean of x is
  // off by ~|c| * 2^-24, which is the whole error budget of a small e; the
  // mean of x - x[0] is accurate to ~|e| * 2^-24.
  Func shifted("shifted");
  // strict_float: Halide's simplifier may otherwise reassociate
  // (x - x0) - mean into x - (x0 + mean) and undo the shift.
  shifted(d, n) = strict_float(xf(d, n) - xf(0, n));
  RowSum sum = makeRowSum(shifted, extent, vec, "row_sum");
  Func mean("mean_shifted");
  mean(n) = sum.total(n) * inverseD;
  Func centered("centered");
  centered(d, n) = strict_float(shifted(d, n) - mean(n));
  Func squared("squared");
  squared(d, n) = centered(d, n) * centered(d, n);
  RowSum sumSq = makeRowSum(squared, extent, vec, "row_sum_sq");
  Func rstd("rstd");
  rstd(n) = 1.0f / sqrt(sumSq.total(n) * inverseD + static_cast<float>(spec.epsilon));
  Func out("out");
  out(d, n) = castToElement(spec, centered(d, n) * rstd(n) * cast<float>(gamma(d)) +
                                      cast<float>(beta(d)));

  // SCHEDULE
  setInputEstimates(x, {768, 512});
  setInputEstimates(gamma, {768});
  setInputEstimates(beta, {768});
  constrainOutput(out, {768, 512});
  scheduleRowwise(out, d, n, {sum, sumSq}, {mean, rstd}, extent, target);
  return {inputs, out};
}

BuiltKernel buildRmsNormKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "rms_norm");
  ImageParam x = makeInput(spec.elementType, 2, "x", /*denseInner=*/true);
  std::vector<ImageParam> inputs = {x};
  Func xf = normInput(spec, x, inputs);
  ImageParam gamma = makeInput(spec.elementType, 1, "gamma", true);
  inputs.push_back(gamma);
  const int vec = rowSumLanes(target);
  Var d = xf.args()[0], n = xf.args()[1];
  Expr extent = x.dim(0).extent();

  // ALGORITHM
  Func squared("squared");
  squared(d, n) = xf(d, n) * xf(d, n);
  RowSum sumSq = makeRowSum(squared, extent, vec, "row_sum_sq");
  Func rstd("rstd");
  rstd(n) = 1.0f / sqrt(sumSq.total(n) / cast<float>(extent) +
                        static_cast<float>(spec.epsilon));
  Func out("out");
  out(d, n) = castToElement(spec, xf(d, n) * rstd(n) * cast<float>(gamma(d)));

  // SCHEDULE
  setInputEstimates(x, {4096, 512});
  setInputEstimates(gamma, {4096});
  constrainOutput(out, {4096, 512});
  scheduleRowwise(out, d, n, {sumSq}, {rstd}, extent, target);
  return {inputs, out};
}

} // namespace attune::codegen::detail
