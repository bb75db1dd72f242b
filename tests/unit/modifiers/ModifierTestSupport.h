//===- ModifierTestSupport.h - helpers the modifier tests share -*- C++ -*-===//

#ifndef ATTUNE_TESTS_UNIT_MODIFIERS_MODIFIERTESTSUPPORT_H
#define ATTUNE_TESTS_UNIT_MODIFIERS_MODIFIERTESTSUPPORT_H

#include "compiler/modifiers/ScoreModifier.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace attune::modifiers::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// The registered modifier `name`; throws (failing the test) when there is
/// none.
inline const ScoreModifier &get(const std::string &name) {
  const ScoreModifier *modifier = lookupModifier(name);
  if (!modifier)
    throw std::runtime_error("no modifier " + name);
  return *modifier;
}

} // namespace attune::modifiers::testing

#endif // ATTUNE_TESTS_UNIT_MODIFIERS_MODIFIERTESTSUPPORT_H
