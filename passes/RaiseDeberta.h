//===- RaiseDeberta.h - DeBERTa's attention as exporters write it -*- C++ -*-===//
//
// Internal to passes/: the DeBERTa part of -tfm-raise-encodings, in a file of
// its own (RaiseEncodings.cpp holds the other four encodings and the pass).
//
// Hugging Face's DebertaV2 DisentangledSelfAttention, transcribed op by op,
// adds three terms on heads merged into the batch ([B*H, Sq, Sk]):
//
//   q k^T / s                      (written bmm(q, k^T / s): s on k first)
//   gather(q Kr^T, -1, c2p) / s    c2p = clamp(rel(i - j) + k, 0, 2k - 1)
//   gather(k Qr^T, -1, p2c)^T / s  p2c = clamp(k - rel(i - j), 0, 2k - 1)
//
// with s = sqrt(3 d), Kr and Qr the relative embeddings through the key and
// query projections (2k rows per head), and rel the relative position built
// from aranges (make_log_bucket_position when position_buckets > 0). That
// is tfm.attention's `deberta` modifier with span k; the raise rewrites the
// sum into the form -tfm-fuse-attention folds:
//
//   div(score_bias(q k^T content(q, k) {deberta}), s)
//
// on [1, B*H, Sq, Sk], with the scale moved off k and after the product, so
// that the content terms and q k^T are scaled by the one scale the fused
// op has.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_RAISEDEBERTA_H
#define ATTUNE_PASSES_RAISEDEBERTA_H

#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace attune::raise {

struct DebertaMatch {
  /// The rows of q k^T, without the scales the graph put on them:
  /// [..., Sq, D] and [..., Sk, D], batch and heads in the leading dims.
  mlir::Value query, key;
  /// The relative keys (c2p) and queries (p2c), [..., 2 span, D], with the
  /// leading dims of q.
  mlir::Value keyTable, queryTable;
  /// What the graph multiplies all three terms by (1/sqrt(3 d) in DeBERTa).
  double scale = 1.0;
  int64_t span = 0;
  /// 0: rel(x) = x (DeBERTa v1); else DeBERTa-v2's log buckets.
  int64_t maxPosition = 0;
};

/// DeBERTa's sum at `root`, the top of a tree of tfm.add. Fails with an
/// empty `why` when no term is a relative score gathered along the last
/// axis (not DeBERTa's structure); with a reason when one is but a check
/// fails.
mlir::FailureOr<DebertaMatch> matchDeberta(tfm::AddOp root, std::string &why);

/// Replaces `root` with the raised form (see the top of this file); a
/// reshape of `root` (the graph's view of the sum as [B, H, Sq, Sk]) reads
/// the rank-4 form directly. Returns the tfm.score_bias it built.
tfm::ScoreBiasOp raiseDeberta(tfm::AddOp root, const DebertaMatch &match);

} // namespace attune::raise

#endif // ATTUNE_PASSES_RAISEDEBERTA_H
