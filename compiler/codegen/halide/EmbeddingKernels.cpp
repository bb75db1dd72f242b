//===- EmbeddingKernels.cpp - token embedding and absolute positions ------===//
//
// Table lookups and the fixed sinusoidal encodings. Their inputs are dense
// (a weight table, activations the host laid out row-major), so dimension 0
// has stride 1 throughout.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

#include <cmath>

using namespace Halide;

namespace attune::codegen::detail {

BuiltKernel buildEmbeddingKernel(const KernelSpec &spec, const Target &target) {
  ImageParam table = makeInput(spec.elementType, 2, "table", /*denseInner=*/true);
  ImageParam ids = makeInput(spec.indexType, 1, "ids", /*denseInner=*/true);
  Var d("d"), n("n");

  // ALGORITHM
  // The runtime rejects out-of-range ids before a run; the clamp is a second
  // line of defence so that a bad id can never read outside the table.
  Expr vocab = table.dim(1).extent();
  Expr id = ids(n);
  Expr row = cast<int32_t>(clamp(id, Halide::Internal::make_zero(id.type()),
                                 cast(id.type(), vocab - 1)));
  Func out("out");
  out(d, n) = table(d, row);

  // SCHEDULE
  setInputEstimates(table, {768, 50257});
  setInputEstimates(ids, {512});
  constrainOutput(out, {768, 512});
  scheduleElementwiseCPU(out, {d, n}, target);
  return {{table, ids}, out};
}

BuiltKernel buildLearnedPositionKernel(const KernelSpec &spec,
                                       const Target &target) {
  requireFloatElement(spec, "learned_position");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  ImageParam table = makeInput(spec.elementType, 2, "table", true);
  Var d("d"), s("s"), b("b");

  // ALGORITHM
  // S <= P is enforced by Halide's bounds check on `table` (the kernel
  // returns an error instead of reading past the table).
  Func out("out");
  out(d, s, b) = castToElement(spec, cast<float>(x(d, s, b)) + cast<float>(table(d, s)));

  // SCHEDULE
  setInputEstimates(x, {768, 512, 1});
  setInputEstimates(table, {768, 1024});
  constrainOutput(out, {768, 512, 1});
  scheduleElementwiseCPU(out, {d, s, b}, target);
  return {{x, table}, out};
}

BuiltKernel buildSinusoidalKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "sinusoidal");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  Var d("d"), s("s"), b("b");
  Expr dim = x.dim(0).extent();

  // ALGORITHM
  // Angles reach S radians (thousands) and are computed in f64: in f32 the
  // product s * div alone is off by up to S * 2^-24 radians, 2.4e-4 at
  // S = 4096, which is more than the kernel's error budget. The table is
  // computed once per position and shared by the batch, so the double
  // arithmetic costs S * D transcendental calls per run, not B * S * D.
  Func freq("inv_timescale"); // per column d
  Func pe("pe");              // pe(d, s), f64
  if (spec.form == SinusoidalForm::Interleaved) {
    // div[i] = exp(2i * -ln(max_timescale) / D) for columns 2i and 2i + 1.
    const double negLogMax = -std::log(spec.maxTimescale);
    freq(d) = exp(cast<double>(2 * (d / 2)) * Expr(negLogMax) / cast<double>(dim));
    Expr angle = cast<double>(s) * freq(d);
    pe(d, s) = select(d % 2 == 0, sin(angle), cos(angle));
  } else {
    // inv[i] = min * exp(-i * ln(max / min) / max(n - 1, 1)), n = D / 2;
    // [sin | cos], and a zero column last when D is odd.
    const double negLogRatio = -std::log(spec.maxTimescale / spec.minTimescale);
    Expr half = dim / 2;
    Expr i = select(d < half, d, d - half);
    freq(d) = Expr(spec.minTimescale) * exp(cast<double>(i) * Expr(negLogRatio) /
                                      cast<double>(max(half - 1, 1)));
    Expr angle = cast<double>(s) * freq(d);
    pe(d, s) = select(d < half, sin(angle),
                      d < 2 * half, cos(angle), Expr(0.0));
  }
  Func out("out");
  // Added in f64 and rounded once, as the op's definition reads.
  out(d, s, b) = castToElement(spec, cast<float>(cast<double>(x(d, s, b)) + pe(d, s)));

  // SCHEDULE
  setInputEstimates(x, {512, 512, 1});
  constrainOutput(out, {512, 512, 1});
  const int vec = floatVectorWidth(target);
  Var dv("d_v"), dl("d_l");
  // Positions outermost so each row of pe is computed once for all batches.
  out.split(d, dv, dl, vec, TailStrategy::GuardWithIf)
      .vectorize(dl)
      .reorder(dl, dv, b, s)
      .parallel(s);
  pe.compute_at(out, s);
  freq.compute_root();
  return {{x}, out};
}

} // namespace attune::codegen::detail
