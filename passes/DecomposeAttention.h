//===- DecomposeAttention.h - tfm.attention as its definition ---*- C++ -*-===//
//
// The rewrite tfm-decompose-attention applies to every tfm.attention, for
// callers that need it on one op and need the values it computes on the way:
// the ONNX importer builds an Attention node whose qk_matmul_output (the
// scores at one of four stages) is wanted this way, so the scores exist as
// a tensor and the fusion pass leaves that site unfused.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_DECOMPOSEATTENTION_H
#define ATTUNE_PASSES_DECOMPOSEATTENTION_H

#include "dialects/tfm/TfmOps.h"

namespace attune {

/// The [B, H, Sq, Sk] scores of a decomposed attention at each stage, and
/// its result.
struct DecomposedAttention {
  mlir::Value scaled;        ///< scale * q . k (content terms not included)
  mlir::Value capped;        ///< after the softcap (== scaled without one)
  mlir::Value masked;        ///< after masks and score modifiers: the softmax input
  mlir::Value probabilities; ///< the softmax
  mlir::Value result;        ///< what replaced the op's result
};

/// Replaces `op` by the chain of ops its description defines (the form
/// tfm-fuse-attention raises back) and erases it. On failure emits an error
/// at `op`, builds nothing and leaves `op` as it was.
mlir::FailureOr<DecomposedAttention> decomposeAttention(tfm::AttentionOp op);

} // namespace attune

#endif // ATTUNE_PASSES_DECOMPOSEATTENTION_H
