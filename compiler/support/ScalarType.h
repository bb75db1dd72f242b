//===- ScalarType.h - element types every layer shares ---------*- C++ -*-===//
//
// The element types of tensors as the frontends, the reference evaluator,
// host code, the kernels and the runtime ABI all see them. Plain C++ with no
// MLIR or Halide, so any layer can include it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_SCALARTYPE_H
#define ATTUNE_COMPILER_SUPPORT_SCALARTYPE_H

#include <cstdint>

namespace attune {

/// Element types a tensor can have (the runtime's attune_dtype_t values, so
/// the two never need translating).
enum class ScalarType : int32_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4, I8 = 5, Bool = 6 };

/// True for a value inside the enum.
inline bool isValidScalarType(ScalarType type) {
  return static_cast<int32_t>(type) >= 0 && static_cast<int32_t>(type) <= 6;
}

/// Bytes one element of `type` takes in a dense buffer (Bool is one byte).
inline int64_t scalarTypeBytes(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
  case ScalarType::I32:
    return 4;
  case ScalarType::F16:
  case ScalarType::BF16:
    return 2;
  case ScalarType::I64:
    return 8;
  case ScalarType::I8:
  case ScalarType::Bool:
    return 1;
  }
  return 0;
}

/// The name used in messages and kernel symbol names ("f32", "bool", ...).
const char *scalarTypeName(ScalarType type);

} // namespace attune

#endif // ATTUNE_COMPILER_SUPPORT_SCALARTYPE_H
