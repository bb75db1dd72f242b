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
/// with the weights the passes gave a new form added under their blob keys:
/// packed into panels (#tfm.panels, set by tfm-pack-weights:
/// `name^T@panels<64>`), merged from parts (`part_sizes`, set by
/// tfm-merge-projections: `q^T#384|k^T#384|v^T#384`), or both. A plain
/// entry that no weight op reads any more is dropped, so the library holds
/// each matrix once; the reference evaluator finds it inside the derived
/// entry instead. Returns `blob` unchanged when nothing is missing.
llvm::Expected<std::string> packWeightBlob(mlir::ModuleOp module,
                                           llvm::StringRef blob);

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_WEIGHTS_H
