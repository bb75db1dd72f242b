//===- ScalarTypes.h - MLIR element types as attune scalar types -*- C++ -*-===//
//
// One mapping from MLIR element types to the ScalarType every layer uses
// (weights files, the evaluator, host code), so they cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_SCALARTYPES_H
#define ATTUNE_COMPILER_FRONTENDS_SCALARTYPES_H

#include "compiler/support/ScalarType.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace attune {

/// The scalar type of an MLIR element type, or nullopt for a type attune
/// does not support (f64, i16, ...).
inline std::optional<ScalarType> scalarTypeOf(mlir::Type type) {
    if (type.isF32())
    return ScalarType::F32;
  if (type.isF16())
    return ScalarType::F16;
  if (type.isBF16())
    return ScalarType::BF16;
  if (type.isSignlessInteger(32))
    return ScalarType::I32;
  if (type.isSignlessInteger(64))
    return ScalarType::I64;
  if (type.isSignlessInteger(8))
    return ScalarType::I8;
  if (type.isSignlessInteger(1))
    return ScalarType::Bool;
  return std::nullopt;
}

/// The MLIR spelling of a scalar type's element type ("f32", "i1", ...).
inline const char *mlirTypeName(ScalarType type) {
    switch (type) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::I8:
    return "i8";
  case ScalarType::Bool:
    return "i1";
  }
  return "?";
}

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_SCALARTYPES_H
