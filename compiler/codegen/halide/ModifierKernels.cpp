//===- ModifierKernels.cpp - score modifiers in Halide ---------------------===//
//
// The score modifiers of a kernel (compiler/modifiers) in Halide: their
// summed bias as one Func of (key-query distance, head), their content
// terms as tables and row functions, and Shaw's value table. Shared by the
// fused attention kernel, which evaluates them per tile, and by the unfused
// forms: ScoreBias, which adds bias and content terms to stored scores, and
// ScoreValues, which computes the value term from stored probabilities.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/modifiers/ScoreModifier.h"

#include <limits>

namespace attune::codegen::detail {

using namespace Halide;

namespace {

/// The content term `term` of modifier `m` over its operand Funcs.
ModifierBias::Content declareContent(const modifiers::ScoreModifier &definition,
                                     const ModifierSpec &modifier, size_t index,
                                     const modifiers::ContentTerm &term,
                                     const std::vector<Func> &operands,
                                     const std::vector<ImageParam> &params,
                                     const std::string &prefix) {
  ModifierBias::Content content;
  content.querySide = term.side == modifiers::ContentTerm::Query;
  Var d("d"), h("h"), r("r"), delta("delta");
  const Func &table = operands[term.table];
  content.table = Func(prefix + "_table");
  switch (term.form) {
  case modifiers::ContentTerm::PerHead:
    content.table(d, h, r) = table(d, h, r);
    content.rows = params[term.table].dim(2).extent();
    break;
  case modifiers::ContentTerm::Shared:
    content.table(d, h, r) = table(d, r);
    content.rows = params[term.table].dim(1).extent();
    break;
  case modifiers::ContentTerm::HeadVector:
    content.table(d, h, r) = table(d, h);
    content.rows = 1;
    content.headVector = true;
    break;
  }
  if (term.offset >= 0) {
    content.offset = Func(prefix + "_offset");
    content.offset(d, h) = operands[term.offset](d, h);
  }
  std::optional<int64_t> saturation = definition.saturationDistance(modifier.params, index);
  content.saturation = term.form == modifiers::ContentTerm::HeadVector ? 0
                       : saturation                                   ? *saturation
                                                                      : -1;
  content.row = Func(prefix + "_row");
  if (term.form == modifiers::ContentTerm::HeadVector)
    content.row(delta) = 0;
  else
    content.row(delta) =
        clamp(definition.kernelRow(modifier.params, index, delta), 0, content.rows - 1);
  return content;
}

} // namespace

ModifierBias declareModifierBias(const KernelSpec &spec, const Expr &heads) {
  ModifierBias bias;
  Expr total = 0.0f;
  bool anyBias = false;
  for (size_t m = 0; m < spec.modifiers.size(); ++m) {
    const ModifierSpec &modifier = spec.modifiers[m];
    const modifiers::ScoreModifier *definition =
        modifiers::lookupModifier(modifier.name);
    if (!definition)
      failSpec("unknown score modifier '" + modifier.name + "', expected one of " +
               modifiers::modifierNames());
    const std::string prefix = modifier.name + std::to_string(m);
    std::vector<Func> operands;
    std::vector<ImageParam> params;
    for (size_t k = 0; k < modifier.operandRanks.size(); ++k) {
      ImageParam param = makeInput(spec.elementType, modifier.operandRanks[k],
                                   prefix + "_" + std::to_string(k),
                                   /*denseInner=*/true);
      Func widened(param.name() + "_f32");
      std::vector<Var> vars(param.dimensions());
      std::vector<Expr> args(vars.begin(), vars.end());
      widened(vars) = cast<float>(param(args));
      bias.inputs.push_back(param);
      params.push_back(param);
      operands.push_back(widened);
    }
    if (definition->hasBias()) {
      Func term(prefix + "_bias");
      term(bias.delta, bias.h) =
          definition->kernelBias(modifier.params, operands, heads, bias.h, bias.delta);
      bias.terms.push_back(term);
      total += term(bias.delta, bias.h);
      anyBias = true;
    }
    std::vector<modifiers::ContentTerm> terms =
        definition->contentTerms(modifier.params);
    for (size_t t = 0; t < terms.size(); ++t)
      bias.content.push_back(declareContent(*definition, modifier, t, terms[t],
                                            operands, params,
                                            prefix + "_c" + std::to_string(t)));
    if (std::optional<modifiers::ValueTerm> value =
            definition->valueTerm(modifier.params)) {
      if (bias.value)
        failSpec("expected at most one modifier with a value term");
      bias.value = ModifierBias::Value{operands[value->table],
                                       static_cast<int>(value->maxDistance)};
    }
  }
  if (anyBias) {
    bias.func = Func("modifier_bias");
    bias.func(bias.delta, bias.h) = total;
  }
  return bias;
}

VisibleDistances visibleDistances(const KernelSpec &spec, bool withCausal) {
  VisibleDistances out;
  if (withCausal && spec.causal)
    out.hi = 0;
  for (const ModifierSpec &modifier : spec.modifiers)
    if (const modifiers::ScoreModifier *definition = modifiers::lookupModifier(modifier.name))
      definition->visibleDeltas(modifier.params, out.lo, out.hi);
  return out;
}

Expr VisibleDistances::contains(const Expr &delta) const {
  Expr inside = Internal::const_true();
  if (boundedBelow())
    inside = inside && delta >= static_cast<int32_t>(lo);
  if (boundedAbove())
    inside = inside && delta <= static_cast<int32_t>(hi);
  return inside;
}

BuiltKernel buildScoreBiasKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "score_bias");
  ImageParam x = makeInput(spec.elementType, 4, "x", /*denseInner=*/true);
  std::vector<ImageParam> inputs = {x};
  ImageParam q, k;
  if (spec.hasContent) {
    q = makeInput(spec.elementType, 4, "q", /*denseInner=*/true);
    k = makeInput(spec.elementType, 4, "k", /*denseInner=*/true);
    inputs.push_back(q);
    inputs.push_back(k);
  }
  Var j("j"), i("i"), h("h"), b("b"), r("r");

  // ALGORITHM
  Expr sk = x.dim(0).extent(), sq = x.dim(1).extent();
  ModifierBias bias = declareModifierBias(spec, x.dim(2).extent());
  inputs.insert(inputs.end(), bias.inputs.begin(), bias.inputs.end());
  if (!bias.content.empty() && !spec.hasContent)
    failSpec("score_bias: a modifier with content terms needs q and k");
  const Expr delta = j - (i + (sk - sq));
  Expr term = cast<float>(x(j, i, h, b));
  if (bias.func.defined())
    term += bias.func(delta, h);
  // Content terms: x . table[r] for every row r once (per query row, or per
  // key row), then looked up per score.
  std::vector<Func> products, byRows;
  Expr content = 0.0f;
  RDom rd;
  if (spec.hasContent) {
    const Expr D = q.dim(0).extent();
    rd = RDom(0, D, "rd");
    for (size_t t = 0; t < bias.content.size(); ++t) {
      const ModifierBias::Content &c = bias.content[t];
      Func product("content_product" + std::to_string(t));
      Var s("s");
      Expr row = c.querySide ? Expr(q(rd, s, h, b)) : Expr(k(rd, s, h, b));
      Expr left = cast<float>(row);
      if (c.offset.defined())
        left += c.offset(rd, h);
      if (isGpuTarget(target)) {
        product(r, s, h, b) = sum(left * c.table(rd, h, r));
      } else {
        // Along the table's rows, which the CPU schedule vectorises: the
        // table transposed once, so that a vector of rows loads densely
        // (read in place it was a gather per element and step: the unfused
        // Transformer-XL at S = 512 took 0.7 s).
        Func byRow("content_by_row" + std::to_string(t));
        byRow(r, s, h) = c.table(s, h, r);
        byRows.push_back(byRow);
        product(r, s, h, b) = 0.0f;
        product(r, s, h, b) += left * byRow(r, rd, h);
      }
      Expr at = clamp(c.row(delta), 0, c.rows - 1);
      content += product(at, c.querySide ? i : j, h, b);
      products.push_back(product);
    }
    term += cast<float>(Expr(spec.scale)) * content;
    q.dim(1).set_extent(sq);
    q.dim(2).set_extent(x.dim(2).extent());
    q.dim(3).set_extent(x.dim(3).extent());
    k.dim(1).set_extent(sk);
    k.dim(2).set_extent(x.dim(2).extent());
    k.dim(3).set_extent(x.dim(3).extent());
    k.dim(0).set_extent(D);
  }
  // Keys outside a window masked on integers (VisibleDistances::contains).
  const VisibleDistances visible = visibleDistances(spec, /*withCausal=*/false);
  if (visible.boundedBelow() || visible.boundedAbove())
    term = select(visible.contains(delta), term,
                  Expr(-std::numeric_limits<float>::infinity()));
  Func out("out");
  out(j, i, h, b) = castToElement(spec, term);

  // SCHEDULE
  setInputEstimates(x, {128, 128, 12});
  if (spec.hasContent) {
    setInputEstimates(q, {64, 128, 12});
    setInputEstimates(k, {64, 128, 12});
  }
  constrainOutput(out, {128, 128, 12});
  scheduleElementwise(out, {j, i, h, b}, target);
  // The bias of every distance the scores span, once per head: Sq + Sk
  // values instead of Sq x Sk evaluations of the modifiers.
  if (isGpuTarget(target)) {
    if (bias.func.defined())
      scheduleElementwiseGPU(bias.func.compute_root(), {bias.delta, bias.h});
    for (ModifierBias::Content &c : bias.content)
      scheduleElementwiseGPU(c.row.compute_root(), c.row.args());
    for (Func &product : products)
      scheduleElementwiseGPU(product.compute_root(), product.args());
    return {inputs, out};
  }
  const int vec = floatVectorWidth(target);
  if (bias.func.defined())
    bias.func.compute_root().vectorize(bias.delta, vec, TailStrategy::GuardWithIf);
  // Rows that follow the distance far stay inline: bounds inference then
  // sees the rows a call reads (Transformer-XL's max_distance + delta for
  // the call's distances, not all of r_head_k's 4096) and sizes the products
  // from them. Rows that saturate within a short distance (Shaw's clip; its
  // tables are small) are looked up per score from a table per distance,
  // which measured 4% faster than the arithmetic inline (AVX2, S = 2048).
  for (ModifierBias::Content &c : bias.content)
    if (c.saturation >= 0 && c.saturation <= kContentLookupDistance)
      c.row.compute_root();
  for (Func &byRow : byRows)
    byRow.compute_root().parallel(byRow.args()[2]).vectorize(byRow.args()[0], vec,
                                                             TailStrategy::GuardWithIf);
  for (Func &product : products) {
    std::vector<Var> args = product.args();
    Var hb("hb"), ro("ro"), ri("ri");
    product.compute_root()
        .fuse(args[2], args[3], hb)
        .parallel(hb)
        .vectorize(args[0], vec, TailStrategy::GuardWithIf);
    // Each vector of rows accumulates over d in a register.
    product.update()
        .fuse(args[2], args[3], hb)
        .parallel(hb)
        .split(args[0], ro, ri, vec, TailStrategy::GuardWithIf)
        .reorder(ri, rd, ro, args[1], hb)
        .vectorize(ri);
  }
  return {inputs, out};
}

BuiltKernel buildScoreValuesKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "score_values");
  ImageParam p = makeInput(spec.elementType, 4, "p", /*denseInner=*/true);
  std::vector<ImageParam> inputs = {p};
  Var c("c"), i("i"), h("h"), b("b");

  // ALGORITHM
  ModifierBias bias = declareModifierBias(spec, p.dim(2).extent());
  inputs.insert(inputs.end(), bias.inputs.begin(), bias.inputs.end());
  if (!bias.value)
    failSpec("score_values: the modifier has no value term");
  const Expr sk = p.dim(0).extent(), sq = p.dim(1).extent();
  const int K = bias.value->maxDistance;
  RDom rj(0, sk, "rj");
  Func acc("acc");
  acc(c, i, h, b) = 0.0f;
  acc(c, i, h, b) += cast<float>(p(rj, i, h, b)) *
                     bias.value->table(c, clamp(rj - (i + (sk - sq)), -K, K) + K);
  Func out("out");
  out(c, i, h, b) = castToElement(spec, acc(c, i, h, b));

  // SCHEDULE: a row of output accumulated in registers over the keys.
  setInputEstimates(p, {128, 128, 12});
  out.set_estimates({{0, 64}, {0, 128}, {0, 12}, {0, 1}});
  if (isGpuTarget(target)) {
    // One thread per output element, its sum over the keys in a register.
    scheduleElementwiseGPU(out, {c, i, h, b});
    return {inputs, out};
  }
  const int vec = floatVectorWidth(target);
  Var ih("ih"), task("task");
  out.fuse(i, h, ih).fuse(ih, b, task).parallel(task).vectorize(c, vec,
                                                                TailStrategy::GuardWithIf);
  acc.compute_at(out, task).vectorize(c, vec, TailStrategy::GuardWithIf);
  acc.update().reorder(c, rj).vectorize(c, vec, TailStrategy::GuardWithIf);
  return {inputs, out};
}

} // namespace attune::codegen::detail
