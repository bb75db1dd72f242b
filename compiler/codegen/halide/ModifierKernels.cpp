//===- ModifierKernels.cpp - score modifiers in Halide ---------------------===//
//
// The bias of a kernel's score modifiers (compiler/modifiers) as one Func of
// (key-query distance, head), shared by the fused attention kernel, which
// evaluates it for the distances a tile needs and adds it to each score, and
// by ScoreBias, the unfused form that adds it to stored scores.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/modifiers/ScoreModifier.h"

namespace attune::codegen::detail {

using namespace Halide;

ModifierBias declareModifierBias(const KernelSpec &spec, const Expr &heads) {
  ModifierBias bias;
  Expr total = 0.0f;
  for (size_t m = 0; m < spec.modifiers.size(); ++m) {
    const ModifierSpec &modifier = spec.modifiers[m];
    const modifiers::ScoreModifier *definition =
        modifiers::lookupModifier(modifier.name);
    if (!definition)
      failSpec("unknown score modifier '" + modifier.name + "', expected one of " +
               modifiers::modifierNames());
    std::vector<Func> operands;
    for (size_t k = 0; k < modifier.operandRanks.size(); ++k) {
      ImageParam param =
          makeInput(spec.elementType, modifier.operandRanks[k],
                    modifier.name + std::to_string(m) + "_" + std::to_string(k),
                    /*denseInner=*/true);
      Func widened(param.name() + "_f32");
      std::vector<Var> vars(param.dimensions());
      std::vector<Expr> args(vars.begin(), vars.end());
      widened(vars) = cast<float>(param(args));
      bias.inputs.push_back(param);
      operands.push_back(widened);
    }
    total += definition->kernelBias(modifier.params, operands, heads, bias.h,
                                    bias.delta);
  }
  bias.func(bias.delta, bias.h) = total;
  return bias;
}

BuiltKernel buildScoreBiasKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "score_bias");
  ImageParam x = makeInput(spec.elementType, 4, "x", /*denseInner=*/true);
  Var j("j"), i("i"), h("h"), b("b");

  // ALGORITHM
  Expr sk = x.dim(0).extent(), sq = x.dim(1).extent();
  ModifierBias bias = declareModifierBias(spec, x.dim(2).extent());
  Func out("out");
  out(j, i, h, b) = castToElement(
      spec, cast<float>(x(j, i, h, b)) + bias.func(j - (i + (sk - sq)), h));

  // SCHEDULE
  setInputEstimates(x, {128, 128, 12});
  constrainOutput(out, {128, 128, 12});
  scheduleElementwiseCPU(out, {j, i, h, b}, target);
  // The bias of every distance the scores span, once per head: Sq + Sk
  // values instead of Sq x Sk evaluations of the modifiers.
  const int vec = floatVectorWidth(target);
  bias.func.compute_root().vectorize(bias.delta, vec, TailStrategy::GuardWithIf);
  std::vector<ImageParam> inputs = {x};
  inputs.insert(inputs.end(), bias.inputs.begin(), bias.inputs.end());
  return {inputs, out};
}

} // namespace attune::codegen::detail
