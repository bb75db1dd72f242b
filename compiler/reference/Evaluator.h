//===- Evaluator.h - reference evaluator for the tfm dialect ----*- C++ -*-===//
//
// The oracle for every op and pass: plain loops over the IR, double
// accumulation, written from the ops' definitions and sharing no code with
// the code generator. Slow by design.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_REFERENCE_EVALUATOR_H
#define ATTUNE_COMPILER_REFERENCE_EVALUATOR_H

#include "compiler/support/ScalarType.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace attune::reference {

/// A dense row-major tensor. Values are held as double whatever the dtype
/// (integers up to 2^53 are exact; i1 is 0 or 1); `dtype` records the
/// element type. Ops compute in double and round an f32 result to float, as
/// the graph stores it (so a finite masking fill absorbs the score it is
/// added to); integer arithmetic is done in int64 and wrapped to the
/// result's type, and tfm.cast rounds to its result type whatever it is.
struct Tensor {
  ScalarType dtype = ScalarType::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;

  /// The product of `shape`, or -1 if it overflows int64 or a dimension is
  /// negative.
  int64_t numElements() const;
};

/// Supplies the value of `tfm.weight <name>` with the IR's declared type.
using WeightLookup = std::function<llvm::Expected<Tensor>(
    llvm::StringRef name, mlir::RankedTensorType type)>;

/// Evaluates `fn` on `inputs` (one per argument, shapes concrete). Returns
/// one tensor per result, or an error naming the op and the reason (an
/// unsupported op, a shape that does not match the IR, an index out of
/// range).
llvm::Expected<std::vector<Tensor>> evaluate(mlir::func::FuncOp fn,
                                             llvm::ArrayRef<Tensor> inputs,
                                             const WeightLookup &weights);

/// A WeightLookup reading a safetensors blob (the caller keeps it alive).
llvm::Expected<WeightLookup> weightsFromSafeTensors(const void *data, size_t size);

} // namespace attune::reference

#endif // ATTUNE_COMPILER_REFERENCE_EVALUATOR_H
