//===- DimProvenance.h - which dimensions are provably equal ----*- C++ -*-===//
//
// Internal to passes/. A dynamic dimension (`?`) says nothing about its size,
// yet a matcher often needs to know that two of them are the same number: the
// sequence axis of q and of k, the length of an arange of positions and the
// sequence axis of the tensor those positions rotate. Every `?` of a tfm
// program is a function argument's dimension carried through ops that keep
// it (a reshape keeps its dynamic dims in order, a transpose permutes them, a
// linear layer keeps the leading ones, ...). `dimSource` follows a dimension
// back through those ops to the argument dimension it is; two dimensions with
// the same source are equal whatever the inputs turn out to be.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_DIMPROVENANCE_H
#define ATTUNE_PASSES_DIMPROVENANCE_H

#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace attune {

/// The dimension `dim` of `value` as a (value, dim) pair that no op traced
/// here produces: a block argument's dimension, or the first dimension the
/// walk cannot see through. Static dimensions are not traced.
std::pair<mlir::Value, int64_t> dimSource(mlir::Value value, int64_t dim);

/// True when dimension `a` of `x` and dimension `b` of `y` are equal for
/// every input: both static and equal, both dynamic with one source, or
/// sources that are function arguments' dimensions of one name in
/// `tfm.dim_names` (the runtime requires those equal).
bool provablySameDim(mlir::Value x, int64_t a, mlir::Value y, int64_t b);

} // namespace attune

#endif // ATTUNE_PASSES_DIMPROVENANCE_H
