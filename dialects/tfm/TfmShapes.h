//===- TfmShapes.h - shape arithmetic shared by tfm ops ---------*- C++ -*-===//
//
// Shape rules every tfm op and pass must agree on: when two dimensions are
// compatible, what numpy broadcasting yields when some of them are dynamic,
// and how shapes are spelled in diagnostics. Kept apart from the ops so that
// passes (fusion, layout propagation) reason about shapes with the very rules
// the verifiers enforce.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_DIALECTS_TFM_TFMSHAPES_H
#define ATTUNE_DIALECTS_TFM_TFMSHAPES_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>

namespace attune::tfm {

/// True unless both dimensions are static and differ: a dynamic dimension may
/// turn out to be anything at run time, so only static mismatches are errors.
bool dimsAgree(int64_t lhs, int64_t rhs);

/// The more precise of two agreeing dimensions (the static one if any).
/// Requires `dimsAgree(lhs, rhs)`.
int64_t mergeDims(int64_t lhs, int64_t rhs);

/// The numpy broadcast of two shapes, aligned from the right. Per dimension: a
/// static 1 stretches to the other side (`1` vs `?` gives `?`), `?` against a
/// static N != 1 gives N (the program is only valid if `?` is N or 1, and the
/// result is N either way), `?` against `?` gives `?`. Fails when two static
/// dimensions differ and neither is 1.
llvm::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True if `from` broadcasts to exactly `to` (numpy rules, from the right)
/// without growing it: `from` has rank <= rank of `to`, and each of its
/// dimensions is 1 or agrees with the dimension of `to` it lines up with.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Number of elements of a static shape, or std::nullopt if any dimension is
/// dynamic or the count does not fit in int64.
std::optional<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape);

/// A dimension as diagnostics print it: the number, or `?`.
std::string formatDim(int64_t dim);

/// A shape as diagnostics print it: `[2, ?, 768]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace attune::tfm

#endif // ATTUNE_DIALECTS_TFM_TFMSHAPES_H
