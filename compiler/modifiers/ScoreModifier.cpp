//===- ScoreModifier.cpp - the registry and the generic checks ------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attune::modifiers {

ScoreModifier::~ScoreModifier() = default;

Halide::Expr ScoreModifier::kernelBias(const ModifierParams &,
                                       const std::vector<Halide::Func> &,
                                       const Halide::Expr &, const Halide::Expr &,
                                       const Halide::Expr &) const {
  return Halide::Expr(0.0f);
}

Halide::Expr ScoreModifier::kernelRow(const ModifierParams &, size_t,
                                      const Halide::Expr &) const {
  return Halide::Expr(0);
}

// Modifiers.inc, written by the build: ATTUNE_MODIFIER(<Stem>) for every
// <Stem>.cpp of this folder.
#define ATTUNE_MODIFIER(stem) std::unique_ptr<ScoreModifier> create##stem();
#include "Modifiers.inc"
#undef ATTUNE_MODIFIER

namespace {

const std::map<std::string, std::unique_ptr<ScoreModifier>> &registry() {
  static const std::map<std::string, std::unique_ptr<ScoreModifier>> modifiers = [] {
    std::map<std::string, std::unique_ptr<ScoreModifier>> all;
    auto add = [&](std::unique_ptr<ScoreModifier> modifier) {
      std::string name = modifier->name();
      all.emplace(std::move(name), std::move(modifier));
    };
#define ATTUNE_MODIFIER(stem) add(create##stem());
#include "Modifiers.inc"
#undef ATTUNE_MODIFIER
    return all;
  }();
  return modifiers;
}

std::string formatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

} // namespace

const ScoreModifier *lookupModifier(const std::string &name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

std::vector<const ScoreModifier *> allModifiers() {
  std::vector<const ScoreModifier *> all;
  for (const auto &[name, modifier] : registry())
    all.push_back(modifier.get());
  return all;
}

std::string modifierNames() {
  std::string names;
  for (const auto &[name, modifier] : registry())
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

namespace {

/// Checks dimension `dim` of operand `index` against `expected` (either
/// may be -1, unknown). `what` says what the dimension is.
std::string checkDim(const ScoreModifier &modifier,
                     const std::vector<std::vector<int64_t>> &shapes, int index,
                     size_t dim, int64_t expected, const std::string &what) {
  const OperandSpec spec = modifier.operands()[index];
  int64_t actual = shapes[index][dim];
  if (actual < 0 || expected < 0 || actual == expected)
    return "";
  return "expected operand '" + spec.name + "' " + spec.shape + " to have " +
         std::to_string(expected) + " " + what + " (dim " + std::to_string(dim) +
         "), got " + std::to_string(actual);
}

/// Shapes of the content and value tables against the attention's dims.
std::string checkTables(const ScoreModifier &modifier, const ModifierParams &params,
                        const AttentionDims &dims,
                        const std::vector<std::vector<int64_t>> &shapes) {
  std::string problem;
  auto check = [&](int index, size_t dim, int64_t expected, const std::string &what) {
    if (problem.empty())
      problem = checkDim(modifier, shapes, index, dim, expected, what);
  };
  for (const ContentTerm &term : modifier.contentTerms(params)) {
    const size_t rank = shapes[term.table].size();
    check(term.table, rank - 1, dims.headDim, "columns, the head dim");
    if (term.form == ContentTerm::PerHead)
      check(term.table, 1, dims.heads, "heads");
    if (term.form == ContentTerm::HeadVector)
      check(term.table, 0, dims.heads, "heads");
    if (term.offset >= 0) {
      check(term.offset, 0, dims.heads, "heads");
      check(term.offset, 1, dims.headDim, "columns, the head dim");
    }
  }
  if (std::optional<ValueTerm> value = modifier.valueTerm(params)) {
    check(value->table, 0, 2 * value->maxDistance + 1, "rows, 2 max_distance + 1");
    check(value->table, 1, dims.valueDim, "columns, the value head dim");
  }
  return problem;
}

/// Row `row` of a content table (any form), clamped to its rows.
const double *tableRow(const ReferenceOperand &table, ContentTerm::Form form,
                       int64_t row, int64_t h, int64_t headDim) {
  if (form == ContentTerm::HeadVector)
    return table.data + h * headDim;
  row = std::clamp<int64_t>(row, 0, table.shape[0] - 1);
  if (form == ContentTerm::Shared)
    return table.data + row * headDim;
  return table.data + (row * table.shape[1] + h) * headDim;
}

} // namespace

double referenceContent(const ScoreModifier &modifier, const ModifierParams &params,
                        const std::vector<ReferenceOperand> &operands, int64_t h,
                        int64_t delta, const double *q, const double *k,
                        int64_t headDim) {
  double sum = 0;
  std::vector<ContentTerm> terms = modifier.contentTerms(params);
  for (size_t t = 0; t < terms.size(); ++t) {
    const ContentTerm &term = terms[t];
    int64_t row = term.form == ContentTerm::HeadVector
                      ? 0
                      : modifier.referenceRow(params, t, delta);
    const double *r = tableRow(operands[term.table], term.form, row, h, headDim);
    const double *x = term.side == ContentTerm::Query ? q : k;
    const double *offset =
        term.offset >= 0 ? operands[term.offset].data + h * headDim : nullptr;
    for (int64_t d = 0; d < headDim; ++d)
      sum += (x[d] + (offset ? offset[d] : 0.0)) * r[d];
  }
  return sum;
}

void addReferenceValue(const ScoreModifier &modifier, const ModifierParams &params,
                       const std::vector<ReferenceOperand> &operands, double p,
                       int64_t delta, double *out, int64_t valueDim) {
  std::optional<ValueTerm> value = modifier.valueTerm(params);
  if (!value)
    return;
  const int64_t K = value->maxDistance;
  const double *row =
      operands[value->table].data + (std::clamp(delta, -K, K) + K) * valueDim;
  for (int64_t c = 0; c < valueDim; ++c)
    out[c] += p * row[c];
}

std::string checkModifier(const ScoreModifier &modifier, ModifierParams &given,
                          const AttentionDims &dims,
                          const std::vector<std::vector<int64_t>> &operandShapes) {
  const std::string prefix = "modifier '" + modifier.name() + "': ";
  const std::vector<ParamSpec> specs = modifier.params();
  for (const auto &[name, value] : given) {
    bool known = false;
    for (const ParamSpec &spec : specs)
      known |= spec.name == name;
    if (!known) {
      std::string names;
      for (const ParamSpec &spec : specs)
        names += (names.empty() ? "" : ", ") + spec.name;
      return prefix + "unknown parameter '" + name + "'" +
             (names.empty() ? ", it takes none" : ", expected one of " + names);
    }
  }
  for (const ParamSpec &spec : specs) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      if (!spec.defaultValue)
        return prefix + "missing parameter '" + spec.name + "' (" +
               spec.description + ")";
      given[spec.name] = *spec.defaultValue;
      continue;
    }
    double value = it->second;
    if (!std::isfinite(value))
      return prefix + "expected '" + spec.name + "' finite, got " + formatValue(value);
    if (spec.kind != ParamSpec::Real && value != std::floor(value))
      return prefix + "expected '" + spec.name + "' to be an integer, got " +
             formatValue(value);
    if (spec.kind == ParamSpec::Bool && value != 0 && value != 1)
      return prefix + "expected '" + spec.name + "' to be a boolean, got " +
             formatValue(value);
    if (value < spec.min || value > spec.max)
      return prefix + "expected '" + spec.name + "' in [" + formatValue(spec.min) +
             ", " + formatValue(spec.max) + "], got " + formatValue(value);
  }
  const std::vector<OperandSpec> operands = modifier.operands();
  if (operandShapes.size() != operands.size())
    return prefix + "expected " + std::to_string(operands.size()) +
           " operand(s), got " + std::to_string(operandShapes.size());
  for (size_t i = 0; i < operands.size(); ++i)
    if (static_cast<int>(operandShapes[i].size()) != operands[i].rank)
      return prefix + "expected operand '" + operands[i].name + "' " +
             operands[i].shape + " of rank " + std::to_string(operands[i].rank) +
             ", got rank " + std::to_string(operandShapes[i].size());
  std::string problem = checkTables(modifier, given, dims, operandShapes);
  if (problem.empty())
    problem = modifier.verify(given, dims, operandShapes);
  return problem.empty() ? "" : prefix + problem;
}

std::string linearBiasOf(
    const std::vector<std::pair<const ScoreModifier *, ModifierParams>> &modifiers,
    int64_t heads, LinearBias &out) {
  out = LinearBias();
  for (const auto &[modifier, params] : modifiers) {
    if (!modifier->contentTerms(params).empty() || modifier->valueTerm(params))
      return "its score modifier " + modifier->name() + " adds content terms";
    if (!modifier->operands().empty())
      return "its score modifier " + modifier->name() + " reads a table";
    modifier->visibleDeltas(params, out.low, out.high);
  }
  if (out.low > 0 || out.high < 0)
    return "its score modifiers leave no distance visible around 0";
  auto total = [&](int64_t h, int64_t delta) {
    double sum = 0;
    for (const auto &[modifier, params] : modifiers)
      sum += modifier->referenceBias(params, {}, heads, h, delta);
    return sum;
  };
  std::vector<int64_t> probes;
  for (int64_t d : {0, 1, -1, 2, -2, 7, -7, 37, -37, 1000, -1000, 123457, -123457})
    if (d >= out.low && d <= out.high)
      probes.push_back(d);
  auto fits = [&](int64_t h, double slope, bool absolute) {
    for (int64_t d : probes) {
      double want = slope * double(absolute && d < 0 ? -d : d), got = total(h, d);
      if (!(std::fabs(got - want) <= 1e-9 * (1 + std::fabs(want))))
        return false;
    }
    return true;
  };
  bool anySlope = false, anyAbsolute = false, anyLinear = false;
  for (int64_t h = 0; h < heads; ++h) {
    // Both forms are slope * delta for delta >= 0 (or -slope * delta below).
    int64_t unit = out.high >= 1 ? 1 : -1;
    if (unit < out.low)
      return "its score modifiers leave one distance visible";
    double slope = total(h, unit) * double(unit);
    bool linear = fits(h, slope, false), absolute = !linear && fits(h, slope, true);
    if (!linear && !absolute)
      return "its score modifiers' bias is not linear in the distance";
    anySlope |= slope != 0;
    anyAbsolute |= absolute && slope != 0;
    anyLinear |= linear && slope != 0 && !fits(h, slope, true);
    out.slopes.push_back(slope);
  }
  if (anyAbsolute && anyLinear)
    return "its score modifiers' bias is linear in the distance for some heads and in its "
           "magnitude for others";
  out.absolute = anyAbsolute;
  if (!anySlope)
    out.slopes.clear();
  return "";
}

std::string deviceBiasOf(
    const std::vector<std::pair<const ScoreModifier *, ModifierParams>> &modifiers,
    int64_t heads, DeviceBias &out) {
  out = DeviceBias();
  std::vector<std::pair<const ScoreModifier *, ModifierParams>> others;
  for (size_t m = 0; m < modifiers.size(); ++m) {
    const auto &[modifier, params] = modifiers[m];
    std::optional<TableBias> table = modifier->tableBias(params);
    if (!table) {
      others.push_back(modifiers[m]);
      continue;
    }
    if (out.table)
      return "two of its score modifiers read bias tables";
    if (!modifier->contentTerms(params).empty() || modifier->valueTerm(params))
      return "its score modifier " + modifier->name() + " adds content terms";
    if (modifier->operands().size() != 1)
      return "its score modifier " + modifier->name() + " reads tables besides its bias table";
    out.table = std::move(table);
    out.tableModifier = m;
    modifier->visibleDeltas(params, out.linear.low, out.linear.high);
  }
  LinearBias linear;
  if (std::string reason = linearBiasOf(others, heads, linear); !reason.empty())
    return reason;
  if (out.table && !linear.slopes.empty())
    return "its score modifiers add a bias table and a bias linear in the distance";
  linear.low = std::max(linear.low, out.linear.low);
  linear.high = std::min(linear.high, out.linear.high);
  if (linear.low > 0 || linear.high < 0)
    return "its score modifiers leave no distance visible around 0";
  out.linear = std::move(linear);
  return "";
}

} // namespace attune::modifiers
