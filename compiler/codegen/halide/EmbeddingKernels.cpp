//===- EmbeddingKernels.cpp - token embedding and absolute positions ------===//
//
// Table lookups, the fixed sinusoidal encodings (added or multiplied), the
// FLOATER recursion and the complex-order embedding. Their inputs are dense
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

/// sin(angle), or cos(angle) where the bool `cosine` holds, for an f64
/// angle, in plain f64 arithmetic that vectorises (libm's sin is a scalar
/// call per element, ten times slower here). Cody-Waite reduction by pi/2
/// with a 33-bit high part, exact for angles below 2^20 * pi/2, then Taylor
/// series on |r| <= pi/4 (truncation below 1e-12). Both series are computed
/// either way, so choosing per element costs nothing.
Expr sinOrCos(const Expr &angle, const Expr &cosine) {
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
  Expr q = cast<int32_t>(k) + select(cosine, 1, 0);
  Expr quadrant = q & 3;
  return select(quadrant == 0, sinR, quadrant == 1, cosR, quadrant == 2, -sinR, -cosR);
}

/// pe(d, s) of tfm.sinusoidal_position in f64 for rows of `dim` columns,
/// and the per-column inverse timescale it reads.
struct Sinusoid {
  Func freq{"inv_timescale"}; // per column d
  Func pe{"pe"};              // pe(d, s)
};

// ALGORITHM
// Angles reach S radians (thousands) and are computed in f64: in f32 the
// product s * div alone is off by up to S * 2^-24 radians, 2.4e-4 at
// S = 4096, which is more than the kernel's error budget.
Sinusoid declareSinusoid(const KernelSpec &spec, const Var &d, const Var &s,
                         const Expr &dim) {
  Sinusoid t;
  if (spec.form == SinusoidalForm::Interleaved) {
    // div[i] = exp(2i * -ln(max_timescale) / D) for columns 2i and 2i + 1.
    const double negLogMax = -std::log(spec.maxTimescale);
    t.freq(d) = exp(cast<double>(2 * (d / 2)) * Expr(negLogMax) / cast<double>(dim));
    Expr angle = cast<double>(s) * t.freq(d);
    t.pe(d, s) = sinOrCos(angle, d % 2 == 1);
  } else {
    // inv[i] = min * exp(-i * ln(max / min) / max(n - 1, 1)), n = D / 2;
    // [sin | cos], and a zero column last when D is odd.
    const double negLogRatio = -std::log(spec.maxTimescale / spec.minTimescale);
    Expr half = dim / 2;
    Expr i = select(d < half, d, d - half);
    t.freq(d) = Expr(spec.minTimescale) * exp(cast<double>(i) * Expr(negLogRatio) /
                                              cast<double>(max(half - 1, 1)));
    Expr angle = cast<double>(s) * t.freq(d);
    t.pe(d, s) = select(d < 2 * half, sinOrCos(angle, d >= half), Expr(0.0));
  }
  return t;
}

// SCHEDULE
/// The table is computed once per position and shared by the batch, so the
/// double arithmetic costs S * D evaluations per run, not B * S * D.
void scheduleSinusoid(Func &out, Sinusoid &table, const Var &d, const Var &s, const Var &b,
                      const Target &target) {
  if (isGpuTarget(target)) {
    // pe and freq inlined: one thread per element computes its own angle.
    scheduleElementwiseGPU(out, {d, s, b});
    return;
  }
  const int vec = floatVectorWidth(target);
  Var dv("d_v"), dl("d_l");
  // Positions outermost so each row of pe is computed once for all batches.
  out.split(d, dv, dl, vec, TailStrategy::GuardWithIf)
      .vectorize(dl)
      .reorder(dl, dv, b, s)
      .parallel(s);
  table.pe.compute_at(out, s).vectorize(d, std::max(2, vec / 2),
                                        TailStrategy::GuardWithIf);
  table.freq.compute_root();
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
  scheduleElementwise(out, {d, n}, target);
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
  scheduleElementwise(out, {d, s, b}, target);
  return {{x, table}, out};
}

BuiltKernel buildSinusoidalKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "sinusoidal");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  Var d("d"), s("s"), b("b");

  // ALGORITHM
  Sinusoid table = declareSinusoid(spec, d, s, x.dim(0).extent());
  Func out("out");
  // Added in f64 and rounded once, as the op's definition reads.
  out(d, s, b) =
      castToElement(spec, cast<float>(cast<double>(x(d, s, b)) + table.pe(d, s)));

  // SCHEDULE
  setInputEstimates(x, {512, 512, 1});
  constrainOutput(out, {512, 512, 1});
  scheduleSinusoid(out, table, d, s, b, target);
  return {{x}, out};
}

BuiltKernel buildMultiplicativePositionKernel(const KernelSpec &spec,
                                              const Target &target) {
  requireFloatElement(spec, "multiplicative_position");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  Var d("d"), s("s"), b("b");
  Func out("out");
  setInputEstimates(x, {768, 512, 1});
  if (spec.hasTable) {
    ImageParam table = makeInput(spec.elementType, 2, "table", true);
    // ALGORITHM
    // As in learned_position, S <= P is Halide's bounds check on `table`.
    out(d, s, b) =
        castToElement(spec, cast<float>(x(d, s, b)) * cast<float>(table(d, s)));
    // SCHEDULE
    setInputEstimates(table, {768, 1024});
    constrainOutput(out, {768, 512, 1});
    scheduleElementwise(out, {d, s, b}, target);
    return {{x, table}, out};
  }
  // ALGORITHM
  Sinusoid table = declareSinusoid(spec, d, s, x.dim(0).extent());
  // Multiplied in f64 and rounded once, as the op's definition reads.
  out(d, s, b) =
      castToElement(spec, cast<float>(cast<double>(x(d, s, b)) * table.pe(d, s)));
  // SCHEDULE
  constrainOutput(out, {768, 512, 1});
  scheduleSinusoid(out, table, d, s, b, target);
  return {{x}, out};
}

BuiltKernel buildRecursivePositionKernel(const KernelSpec &spec,
                                         const Target &target) {
  requireFloatElement(spec, "recursive_position");
  const ScalarType e = spec.elementType;
  ImageParam x = makeInput(e, 3, "x", true), p0 = makeInput(e, 1, "p0", true),
             w1 = makeInput(e, 2, "w1", true), b1 = makeInput(e, 1, "b1", true),
             w2 = makeInput(e, 2, "w2", true), b2 = makeInput(e, 1, "b2", true);
  const Expr D = x.dim(0).extent(), S = x.dim(1).extent(), H = b1.dim(0).extent();
  Var c("c"), k("k"), d("d"), s("s"), b("b");

  // ALGORITHM
  // tfm.recursive_position: p_0 = p0, p_{k+1} = p_k + T h(k T, p_k) with
  // h(t, q) = [relu([q, t] w1 + b1), t] w2 + b2; w1 is (j, i) = w1[i, j]
  // here, its row D multiplying t, and w2 (d, j), its row H multiplying t.
  //
  // Each position needs the one before, and Halide cannot express a Func
  // whose update reads another Func that reads it, so one Func holds both
  // halves of a step: state(c, k) is p_k[c] for c < D and the hidden unit
  // c - D's pre-activation at step k for D <= c < D + H. The pure
  // definition holds every term that does not depend on the state (the
  // biases and the time terms), and one serial update adds the rest, step
  // k outermost, over a D x H box that both phases use whole:
  //   phase 0: hidden_k[j] += p_k[i] w1[i, j]                  (i, j) = (re, rc)
  //   phase 1: p_{k+1}[d] += T relu(hidden_k[j]) w2[j, d]      (d, j) = (re, rc)
  //            (+ the carry p_k[d] once, at the last j, so that the
  //            small terms of T h are summed before the larger p_k)
  // No point of the box is a no-op: with a predicate or zero-adding points
  // instead, Halide 21 trims the loops to the bounds of one phase and drops
  // terms of the other. The host requires H >= 1 (the carry rides on a j).
  // Everything is f32, as the op computes.
  const Expr T = Expr(static_cast<float>(spec.timeStep));
  auto time = [&](const Expr &step) { return cast<float>(step) * T; };
  auto f32 = [](const Expr &v) { return cast<float>(v); };
  Expr dc = clamp(c, 0, D - 1), jc = clamp(c - D, 0, H - 1);
  Func state("floater_state");
  state(c, k) = select(
      c < D,
      select(k == 0, f32(p0(dc)), T * (f32(b2(dc)) + time(k - 1) * f32(w2(dc, H)))),
      f32(b1(jc)) + time(k) * f32(w1(jc, D)));

  RDom r(0, D, 0, H, 0, 2, 0, max(S - 1, 0), "floater_step");
  RVar re = r[0], rc = r[1], phase = r[2], rk = r[3];
  Expr toHidden = state(re, rk) * f32(w1(rc, re));
  Expr toNext = T * max(state(D + rc, rk), 0.0f) * f32(w2(re, rc)) +
                select(rc == H - 1, state(re, rk), 0.0f);
  state(select(phase == 0, D + rc, re), rk + phase) += select(phase == 0, toHidden, toNext);

  Func out("out");
  out(d, s, b) = castToElement(spec, f32(x(d, s, b)) + state(d, s));

  // SCHEDULE
  // The scan is serial by nature (each step reads the last); it runs once
  // per call, before the elementwise add that is parallel over positions.
  // On a GPU it is one thread's work (a scan over S steps of a D x H
  // product: small next to the model's matmuls).
  state.compute_root();
  if (isGpuTarget(target)) {
    state.gpu_single_thread();
    state.update(0).gpu_single_thread();
  } else {
    state.vectorize(c, floatVectorWidth(target), TailStrategy::GuardWithIf);
    state.update(0).unscheduled(); // serial, in the RDom's order
  }
  setInputEstimates(x, {512, 512, 1});
  setInputEstimates(p0, {512});
  setInputEstimates(w1, {512, 513});
  setInputEstimates(b1, {512});
  setInputEstimates(w2, {512, 513});
  setInputEstimates(b2, {512});
  constrainOutput(out, {512, 512, 1});
  scheduleElementwise(out, {d, s, b}, target);
  // The parameters' shapes as the op's verifier states them.
  p0.dim(0).set_bounds(0, D);
  b2.dim(0).set_bounds(0, D);
  w1.dim(0).set_bounds(0, H);
  w1.dim(1).set_bounds(0, D + 1);
  w2.dim(0).set_bounds(0, D);
  w2.dim(1).set_bounds(0, H + 1);
  return {{x, p0, w1, b1, w2, b2}, out};
}

BuiltKernel buildComplexEmbeddingKernel(const KernelSpec &spec,
                                        const Target &target) {
  requireFloatElement(spec, "complex_embedding");
  const ScalarType e = spec.elementType;
  ImageParam ids = makeInput(spec.indexType, 2, "ids", true);
  ImageParam amplitude = makeInput(e, 2, "amplitude", true),
             frequency = makeInput(e, 2, "frequency", true),
             phase = makeInput(e, 2, "phase", true);
  const Expr D = amplitude.dim(0).extent(), V = amplitude.dim(1).extent();
  Var c("c"), s("s"), b("b");

  // ALGORITHM
  // out(c, s, b) for c < D is r cos(w k + theta) of column c, for c >= D
  // r sin(.) of column c - D, with (r, w, theta) the row of word
  // ids(s, b) and k = s + firstPosition. As in embedding, the runtime
  // rejects out-of-range ids before a run and the clamp is a second line
  // of defence. The angle is f64 for the sinusoid's reason: w k reaches
  // thousands of radians, where f32 loses the phase.
  Expr id = ids(s, b);
  Expr row = cast<int32_t>(clamp(id, Internal::make_zero(id.type()),
                                 cast(id.type(), V - 1)));
  Expr real = c < D;
  Expr col = clamp(select(real, c, c - D), 0, D - 1);
  Expr k = cast<double>(s + static_cast<int32_t>(spec.firstPosition));
  Expr angle = cast<double>(frequency(col, row)) * k + cast<double>(phase(col, row));
  Func out("out");
  out(c, s, b) = castToElement(
      spec, cast<float>(cast<double>(amplitude(col, row)) * sinOrCos(angle, real)));

  // SCHEDULE
  setInputEstimates(ids, {512, 1});
  setInputEstimates(amplitude, {256, 30000});
  setInputEstimates(frequency, {256, 30000});
  setInputEstimates(phase, {256, 30000});
  constrainOutput(out, {512, 512, 1});
  scheduleElementwise(out, {c, s, b}, target);
  frequency.dim(0).set_bounds(0, D);
  frequency.dim(1).set_bounds(0, V);
  phase.dim(0).set_bounds(0, D);
  phase.dim(1).set_bounds(0, V);
  out.output_buffer().dim(0).set_bounds(0, 2 * D);
  return {{ids, amplitude, frequency, phase}, out};
}

} // namespace attune::codegen::detail
