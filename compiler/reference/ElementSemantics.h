//===- ElementSemantics.h - tfm's integer and conversion rules -*- C++ -*-===//
//
// Internal to the reference evaluator: one element of tfm's integer
// arithmetic, comparisons and casts, on the evaluator's representation (a
// double holding the value; integers exact up to 2^53, INT64_MAX held as
// 2^63, i1 as 0 or 1), written from TfmOps.td's descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_REFERENCE_ELEMENTSEMANTICS_H
#define ATTUNE_COMPILER_REFERENCE_ELEMENTSEMANTICS_H

#include "compiler/support/ScalarType.h"
#include "dialects/tfm/TfmOps.h"

#include <cstdint>

namespace attune::reference::detail {

/// i8, i32 and i64 (not i1, which is a condition).
bool isIntegerType(ScalarType type);

/// An integer element as int64, saturating (INT64_MAX is held as 2^63,
/// which int64 cannot hold); NaN, never an integer's value, is 0.
int64_t asInt64(double x);

/// `x` wrapped to the signed integer `type` (two's complement), as a double.
double wrapTo(int64_t x, ScalarType type);

/// tfm.compare's relation: false with a NaN operand, except ne.
bool compareElements(double x, double y, tfm::ComparePredicateKind predicate);

/// tfm.cast of one element of type `from` to type `to`: float to integer
/// toward zero, saturating, NaN to 0; to i1 as != 0; narrowing integers
/// wrap; to f16 or bf16 rounded once to nearest even (f32 results are
/// rounded by the evaluator's define, as every f32 result).
double castElement(double x, ScalarType from, ScalarType to);

} // namespace attune::reference::detail

#endif // ATTUNE_COMPILER_REFERENCE_ELEMENTSEMANTICS_H
