//===- RopeKernels.cpp - rotary position embedding in Halide --------------===//
//
// tfm.rope's rotation as one expression per element, shared by the Rope
// kernel (the unfused form) and the fused attention kernel, which rotates q
// per tile as it loads it and k once per call. cos and sin of
// position * theta_i come from tables computed in double (positions reach
// the thousands, where float angles lose 1e-4): a coarse one per call and a
// fine one at compile time (see declareRopeTables).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"

#include <algorithm>
#include <cmath>

namespace attune::codegen::detail {

using namespace Halide;

RopeConstants ropeConstants(const RopeSpec &rope) {
  const int half = static_cast<int>(rope.rotaryDims / 2);
  RopeConstants c;
  c.theta.resize(half);
  c.fineCos.resize(static_cast<size_t>(kRopeStep) * half);
  c.fineSin.resize(c.fineCos.size());
  for (int i = 0; i < half; ++i) {
    c.theta[i] = ropeInverseFrequency(rope, i);
    for (int r = 0; r < kRopeStep; ++r) {
      c.fineCos[static_cast<size_t>(r) * half + i] = std::cos(static_cast<double>(r) * c.theta[i]);
      c.fineSin[static_cast<size_t>(r) * half + i] = std::sin(static_cast<double>(r) * c.theta[i]);
    }
  }
  return c;
}

RopeTables declareRopeTables(const RopeSpec &rope) {
  RopeTables t;
  const int R = static_cast<int>(rope.rotaryDims);
  // pos = kRopeStep a + r (64): the angle-addition formulas give cos and
  // sin of every position from a coarse table of S / 64 x R/2 libm calls per
  // call and a fine table of r < 64, which does not depend on the call: it
  // is computed here and embedded (per call it was 64 x R/2 sincos pairs,
  // 4096 for a LLaMA head of 128, which dominated a decoding step's
  // attention).
  // theta_i from the one definition the evaluator also uses (with the
  // checkpoint's frequency scaling), embedded in the kernel as a table. The
  // fine tables are dense (pair, r) buffers: RopeConstants' own order.
  const RopeConstants constants = ropeConstants(rope);
  Buffer<double> inverseFrequency(R / 2, "rope_theta");
  Buffer<double> fineCos(R / 2, kRopeStep, "rope_fine_cos");
  Buffer<double> fineSin(R / 2, kRopeStep, "rope_fine_sin");
  std::copy(constants.theta.begin(), constants.theta.end(), inverseFrequency.data());
  std::copy(constants.fineCos.begin(), constants.fineCos.end(), fineCos.data());
  std::copy(constants.fineSin.begin(), constants.fineSin.end(), fineSin.data());
  Expr theta = inverseFrequency(t.pair);
  Var a("rope_a"), r("rope_r");
  Func coarse("rope_coarse"), fine("rope_fine");
  coarse(t.pair, a) = Tuple(cos(cast<double>(a * kRopeStep) * theta),
                            sin(cast<double>(a * kRopeStep) * theta));
  fine(t.pair, r) = Tuple(fineCos(t.pair, r), fineSin(t.pair, r));
  Expr A = t.pos / kRopeStep, B = t.pos % kRopeStep;
  Expr ca = coarse(t.pair, A)[0], sa = coarse(t.pair, A)[1];
  Expr cb = fine(t.pair, B)[0], sb = fine(t.pair, B)[1];
  t.cos(t.pair, t.pos) = cast<float>(ca * cb - sa * sb);
  t.sin(t.pair, t.pos) = cast<float>(sa * cb + ca * sb);
  t.coarse = coarse;
  t.fine = fine;
  return t;
}

void scheduleRopeTables(RopeTables &t, const Target &target) {
  t.coarse.compute_root(); // fine reads its embedded tables in place
  t.cos.compute_root();
  t.sin.compute_root();
  if (isGpuTarget(target))
    for (Func *f : {&t.coarse, &t.cos, &t.sin})
      scheduleElementwiseGPU(*f, {f->args()[0], f->args()[1]});
}

Expr ropeRotate(const RopeSpec &rope, const RopeTables &t,
                const std::function<Expr(Expr)> &x, const Expr &d, const Expr &pos,
                int headDim) {
  const int R = static_cast<int>(rope.rotaryDims), half = R / 2;
  Expr pair, partner, first;
  if (rope.interleaved) {
    pair = d / 2;
    first = d % 2 == 0;
    partner = select(first, d + 1, d - 1);
  } else {
    first = d < half;
    pair = select(first, d, d - half);
    partner = select(first, d + half, d - half);
  }
  // Past the rotary dims the element passes through; the indices are
  // clamped so that the unused branch stays in bounds.
  pair = clamp(pair, 0, half - 1);
  partner = clamp(partner, 0, headDim - 1);
  Expr c = t.cos(pair, pos), s = t.sin(pair, pos);
  Expr rotated = x(d) * c + select(first, -1.0f, 1.0f) * x(partner) * s;
  return select(d < R, rotated, x(d));
}

BuiltKernel buildRopeKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "rope");
  ImageParam x = makeInput(spec.elementType, 4, "x", /*denseInner=*/true);
  std::vector<ImageParam> inputs = {x};
  Expr length = x.dim(1).extent();
  if (spec.ropeAligned) {
    ImageParam align = makeInput(spec.elementType, 4, "align", /*denseInner=*/false);
    inputs.push_back(align);
    length = align.dim(1).extent();
  }
  const int D = static_cast<int>(spec.headDim);
  Var d("d"), s("s"), h("h"), b("b");

  // ALGORITHM
  RopeTables tables = declareRopeTables(spec.rope);
  Expr pos = s + (length - x.dim(1).extent()) +
             static_cast<int32_t>(spec.rope.positionOffset);
  Func out("out");
  out(d, s, h, b) = castToElement(
      spec, ropeRotate(spec.rope, tables,
                       [&](Expr e) { return cast<float>(x(e, s, h, b)); }, d, pos, D));
  x.dim(0).set_bounds(0, D);
  out.output_buffer().dim(0).set_bounds(0, D);

  // SCHEDULE
  setInputEstimates(x, {D, 128, 12});
  constrainOutput(out, {D, 128, 12});
  scheduleElementwise(out, {d, s, h, b}, target);
  scheduleRopeTables(tables, target);
  return {inputs, out};
}

} // namespace attune::codegen::detail
