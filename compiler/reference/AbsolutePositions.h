//===- AbsolutePositions.h - reference absolute position encodings -*- C++ -*-===//
//
// Internal to the reference evaluator: the absolute position encodings and
// the complex layer of TfmOps.td computed on concrete tensors, in double,
// straight from the ops' descriptions. Each checks the shapes it reads and
// returns a message without the op's name, which Evaluator.cpp adds.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_REFERENCE_ABSOLUTEPOSITIONS_H
#define ATTUNE_COMPILER_REFERENCE_ABSOLUTEPOSITIONS_H

#include "compiler/reference/Evaluator.h"
#include "dialects/tfm/TfmOps.h"

namespace attune::reference::detail {

/// pe[s, d] of tfm.sinusoidal_position of width `D` in `form`.
double sinusoid(tfm::SinusoidalFormKind form, int64_t s, int64_t d, int64_t D,
                double minTimescale, double maxTimescale);

/// tfm.multiplicative_position: `input * table[s, d]`, or `input * pe[s, d]`
/// of the sinusoid when `table` is null.
llvm::Expected<Tensor> multiplicativePosition(const Tensor &input, const Tensor *table,
                                              tfm::SinusoidalFormKind form,
                                              double minTimescale, double maxTimescale);

/// tfm.recursive_position with time step `timeStep`.
llvm::Expected<Tensor> recursivePosition(const Tensor &input, const Tensor &p0,
                                         const Tensor &w1, const Tensor &b1,
                                         const Tensor &w2, const Tensor &b2,
                                         double timeStep);

/// tfm.complex_embedding; an id outside the tables is an error.
llvm::Expected<Tensor> complexEmbedding(const Tensor &ids, const Tensor &amplitude,
                                        const Tensor &frequency, const Tensor &phase,
                                        int64_t firstPosition);

/// tfm.complex_linear; the biases are both given or both null.
llvm::Expected<Tensor> complexLinear(const Tensor &input, const Tensor &weightReal,
                                     const Tensor &weightImag, const Tensor *biasReal,
                                     const Tensor *biasImag);

} // namespace attune::reference::detail

#endif // ATTUNE_COMPILER_REFERENCE_ABSOLUTEPOSITIONS_H
