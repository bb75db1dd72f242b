//===- EmbeddingKernels.cpp - token embedding and absolute positions ------===//
//
// Table lookups and the fixed sinusoidal encodings. Their inputs are dense
// (a weight table, activations the host laid out row-major), so dimension 0
// has stride 1 throughout.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

#include <algorithm>
#include <cmath>

using namespace Halide;

namespace attune::codegen::detail {

namespace {

/// sin(angle), or cos(angle) when `cosine`, for an f64 angle, in plain f64
/// arithmetic that vectorises (libm's sin is a scalar call per element, ten
/// times slower here). Cody-Waite reduction by pi/2 with a 33-bit high part,
/// exact for angles below 2^20 * pi/2, then Taylor series on |r| <= pi/4
/// (truncation below 1e-12).
Expr sinOrCos(const Expr &angle, bool cosine) {
  const double twoOverPi = 0.63661977236758134308;
  const double pio2Hi = 1.57079632673412561417e+00; // fdlibm pio2_1
  const double pio2Lo = 6.07710050650619224932e-11; // fdlibm pio2_1t
  Expr k = round(angle * Expr(twoOverPi));
  // strict_float keeps the two-step subtraction from being reassociated.
  Expr r = strict_float((angle - k * Expr(pio2Hi)) - k * Expr(pio2Lo));
  Expr r2 = r * r;
  auto c = [](double v) { return Expr(v); };
  Expr sinR =
      r * (c(1.0) +
           r2 * (c(-1.0 / 6) +
                 r2 * (c(1.0 / 120) +
                       r2 * (c(-1.0 / 5040) +
                             r2 * (c(1.0 / 362880) +
                                   r2 * (c(-1.0 / 39916800) + r2 * c(1.0 / 6227020800.0)))))));
  Expr cosR =
      c(1.0) +
      r2 * (c(-0.5) +
            r2 * (c(1.0 / 24) +
                  r2 * (c(-1.0 / 720) +
                        r2 * (c(1.0 / 40320) +
                              r2 * (c(-1.0 / 3628800) + r2 * c(1.0 / 479001600.0))))));
  // angle = r + q pi/2, and cos(x) = sin(x + pi/2).
  Expr q = cast<int32_t>(k) + (cosine ? 1 : 0);
  Expr quadrant = q & 3;
  return select(quadrant == 0, sinR, quadrant == 1, cosR, quadrant == 2, -sinR, -cosR);
}

} // namespace

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
  // arithmetic costs S * D evaluations per run, not B * S * D.
  Func freq("inv_timescale"); // per column d
  Func pe("pe");              // pe(d, s), f64
  if (spec.form == SinusoidalForm::Interleaved) {
    // div[i] = exp(2i * -ln(max_timescale) / D) for columns 2i and 2i + 1.
    const double negLogMax = -std::log(spec.maxTimescale);
    freq(d) = exp(cast<double>(2 * (d / 2)) * Expr(negLogMax) / cast<double>(dim));
    Expr angle = cast<double>(s) * freq(d);
    pe(d, s) = select(d % 2 == 0, sinOrCos(angle, false), sinOrCos(angle, true));
  } else {
    // inv[i] = min * exp(-i * ln(max / min) / max(n - 1, 1)), n = D / 2;
    // [sin | cos], and a zero column last when D is odd.
    const double negLogRatio = -std::log(spec.maxTimescale / spec.minTimescale);
    Expr half = dim / 2;
    Expr i = select(d < half, d, d - half);
    freq(d) = Expr(spec.minTimescale) * exp(cast<double>(i) * Expr(negLogRatio) /
                                      cast<double>(max(half - 1, 1)));
    Expr angle = cast<double>(s) * freq(d);
    pe(d, s) = select(d < half, sinOrCos(angle, false),
                      d < 2 * half, sinOrCos(angle, true), Expr(0.0));
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
  pe.compute_at(out, s).vectorize(d, std::max(2, vec / 2), TailStrategy::GuardWithIf);
  freq.compute_root();
  return {{x}, out};
}

} // namespace attune::codegen::detail
