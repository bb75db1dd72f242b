//===- Weights.h - binding tfm.weight ops to values -------------*- C++ -*-===//
#ifndef ATTUNE_COMPILER_FRONTENDS_WEIGHTS_H
#define ATTUNE_COMPILER_FRONTENDS_WEIGHTS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace attune {

/// Collects the values of every tfm.weight in `module` (deduplicated by name,
/// in order of first appearance) into one safetensors blob. With a
/// `weightsPath` (a safetensors file, a sharded checkpoint's index, or a
/// folder holding either: see WeightFiles::open), values come from the
/// checkpoint: an F16 or BF16 tensor widens exactly to an f32 weight, a
/// weight marked `transpose` reads the file's [N, M] tensor as [M, N], and a
/// missing name, another dtype or a shape that differs from the IR's is an
/// error naming the tensor and the file. Without a path, each weight
/// is initialised from its `init` attribute with a generator seeded by `seed`
/// and the weight's name, so a model compiles to the same numbers on every
/// machine.
llvm::Expected<std::string> materializeWeights(mlir::ModuleOp module,
                                               llvm::StringRef weightsPath,
                                               uint64_t seed = 0);

/// The blob `blob` (materializeWeights' output for the model as written)
/// with the weights `module` now reads packed into panels (#tfm.panels, set
/// by tfm-pack-weights after binding) added in that layout under their
/// blob keys (`name^T@panels<64>`). A plain entry that no weight op reads
/// any more is dropped, so the library holds each matrix once; the reference
/// evaluator reads the packed entry in its place. Returns `blob` unchanged
/// when nothing is missing.
llvm::Expected<std::string> packWeightBlob(mlir::ModuleOp module,
                                           llvm::StringRef blob);

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_WEIGHTS_H
