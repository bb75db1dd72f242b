//===- ScoreModifier.cpp - the registry and the generic checks ------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include <cmath>
#include <sstream>

namespace attune::modifiers {

ScoreModifier::~ScoreModifier() = default;

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
  std::string problem = modifier.verify(given, dims, operandShapes);
  return problem.empty() ? "" : prefix + problem;
}

} // namespace attune::modifiers
