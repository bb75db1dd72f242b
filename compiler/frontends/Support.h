//===- Support.h - small helpers shared by the frontends --------*- C++ -*-===//
//
// Internal to the compiler: the error and shape formatting that the
// safetensors reader, weight binding and the reference evaluator share, so
// that their messages print shapes the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_SUPPORT_H
#define ATTUNE_COMPILER_FRONTENDS_SUPPORT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <limits>
#include <string>

namespace attune {

/// An llvm::Error carrying only `message`; callers catch none by code.
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A static shape as errors print it: `[2, 3, 768]`.
inline std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  // A dynamic dim (MLIR's ShapedType::kDynamic, INT64_MIN) prints as '?'.
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (d == std::numeric_limits<int64_t>::min())
          os << '?';
        else
          os << d;
      },
      ", ");
  os << "]";
  return s;
}

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_SUPPORT_H
