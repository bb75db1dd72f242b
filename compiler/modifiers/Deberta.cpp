//===- Deberta.cpp - DeBERTa's disentangled attention ----------------------===//
//
// He, Liu, Gao and Chen, "DeBERTa: Decoding-enhanced BERT with Disentangled
// Attention" (ICLR 2021), equation (4), as Hugging Face's
// DebertaV2Attention.disentangled_attention_bias computes it: besides the
// content-to-content score q_i . k_j, a content-to-position term
// q_i . K^r[c2p(i, j)] and a position-to-content term k_j . Q^r[p2c(i, j)],
// all scaled by 1/sqrt(3d) (the attention's scale), where K^r and Q^r are
// the shared relative embeddings through the layer's key and query
// projections ([2 span, H, D] each) and, with rel(x) the bucketed distance x,
//
//   c2p = clamp(rel(i - j) + span, 0, 2 span - 1),
//   p2c = clamp(span - rel(j - i), 0, 2 span - 1):
//
// Hugging Face gathers the position-to-content products of key j with the
// relative-position matrix indexed [key, query]. (The paper writes
// delta(j, i) = j - i + k there; the learned table makes the two mirror
// images, and checkpoints follow the code.)
//
// DeBERTa (v1) uses rel = i - j; DeBERTa-v2/v3 with position_buckets > 0
// use make_log_bucket_position(i - j, span, max_position), which keeps
// distances up to span/2 and log-spaces the rest up to max_position.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attune::modifiers {
namespace {

/// Distances past this get the bucket of this one in the kernel (2^24
/// keys): the scan below would not end for tiny spans otherwise.
constexpr int64_t kFarthest = int64_t(1) << 24;

class Deberta final : public ScoreModifier {
public:
  std::string name() const override { return "deberta"; }

  std::string description() const override {
    return "DeBERTa (He et al. 2021) disentangled attention: the score gains "
           "scale * (q_i . key_pos[clamp(rel(i - j) + span, 0, 2 span - 1), h] + "
           "k_j . query_pos[clamp(span - rel(j - i), 0, 2 span - 1), h]) with "
           "rel(x) = x, or with max_position > 0 DeBERTa-v2's "
           "make_log_bucket_position(x, span, max_position) (in float32, as Hugging "
           "Face computes it). Use scale = 1/sqrt(3 d).";
  }

  std::vector<ParamSpec> params() const override {
    return {{"span", ParamSpec::Integer, std::nullopt, 1, 1 << 20,
             "att_span: max_relative_positions, or position_buckets when log "
             "bucketing"},
            {"max_position", ParamSpec::Integer, 0.0, 0, 1 << 30,
             "0: no buckets (DeBERTa v1); else max_relative_positions of "
             "DeBERTa-v2's log buckets"}};
  }

  std::vector<OperandSpec> operands() const override {
    return {{"key_pos", 3, "[2 span, H, D]"}, {"query_pos", 3, "[2 span, H, D]"}};
  }

  std::string verify(const ModifierParams &params, const AttentionDims &,
                     const std::vector<std::vector<int64_t>> &shapes) const override {
    int64_t span = static_cast<int64_t>(params.at("span"));
    int64_t maxPosition = static_cast<int64_t>(params.at("max_position"));
    if (maxPosition > 0 && (span < 4 || maxPosition - 1 <= span / 2))
      return "expected span >= 4 and max_position > span / 2 + 1 for log "
             "buckets, got span " + std::to_string(span) + " and max_position " +
             std::to_string(maxPosition);
    for (int t = 0; t < 2; ++t)
      if (shapes[t][0] >= 0 && shapes[t][0] != 2 * span)
        return std::string("expected operand '") + (t ? "query_pos" : "key_pos") +
               "' [2 span, H, D] to have " + std::to_string(2 * span) +
               " rows, got " + std::to_string(shapes[t][0]);
    return "";
  }

  /// The log-spaced bucket magnitude of distance a > span / 2, in float32 as
  /// make_log_bucket_position computes it.
  static int64_t logPosition(int64_t a, int64_t span, int64_t maxPosition) {
    const int64_t mid = span / 2;
    float ratio = static_cast<float>(a) / static_cast<float>(mid);
    float denom = std::log(static_cast<float>(double(maxPosition - 1) / double(mid)));
    float scaled = std::ceil(std::log(ratio) / denom * static_cast<float>(mid - 1));
    return static_cast<int64_t>(scaled) + mid;
  }

  /// rel = i - j, bucketed when max_position > 0.
  static int64_t relative(const ModifierParams &params, int64_t distance) {
    int64_t span = static_cast<int64_t>(params.at("span"));
    int64_t maxPosition = static_cast<int64_t>(params.at("max_position"));
    if (maxPosition <= 0)
      return distance;
    const int64_t mid = span / 2;
    int64_t a = (distance < mid && distance > -mid) ? mid - 1 : std::llabs(distance);
    if (a <= mid)
      return distance;
    return (distance > 0 ? 1 : -1) * logPosition(a, span, maxPosition);
  }

  bool hasBias() const override { return false; }

  // Both rows reach a table edge once |rel| >= span: from |i - j| = span
  // without buckets, and from the first distance whose log bucket reaches
  // span with them.
  std::optional<int64_t> saturationDistance(const ModifierParams &params,
                                            size_t) const override {
    int64_t span = static_cast<int64_t>(params.at("span"));
    int64_t maxPosition = static_cast<int64_t>(params.at("max_position"));
    if (maxPosition <= 0)
      return span;
    for (int64_t a = span / 2 + 1; a <= kFarthest; ++a)
      if (logPosition(a, span, maxPosition) >= span)
        return a;
    return std::nullopt;
  }

  std::vector<ContentTerm> contentTerms(const ModifierParams &) const override {
    return {{ContentTerm::Query, /*table=*/0, ContentTerm::PerHead},
            {ContentTerm::Key, /*table=*/1, ContentTerm::PerHead}};
  }

  // delta = j - i: c2p reads rel(i - j) = rel(-delta), p2c rel(j - i).
  int64_t referenceRow(const ModifierParams &params, size_t term,
                       int64_t delta) const override {
    int64_t span = static_cast<int64_t>(params.at("span"));
    int64_t row = term == 0 ? relative(params, -delta) + span : span - relative(params, delta);
    return std::clamp(row, int64_t(0), 2 * span - 1);
  }

  Halide::Expr kernelRow(const ModifierParams &params, size_t term,
                         const Halide::Expr &delta) const override {
    using namespace Halide;
    const int64_t span = static_cast<int64_t>(params.at("span"));
    const int64_t maxPosition = static_cast<int64_t>(params.at("max_position"));
    // The bucketed distance of c2p (i - j) or p2c (j - i).
    Expr distance = term == 0 ? -delta : delta;
    Expr rel = distance;
    if (maxPosition > 0) {
      // The log buckets as the distances where each starts, found with the
      // reference's float32 formula (no vector log whose last bit may
      // differ). Magnitudes of span and more all land on a table edge after
      // the clamp below, so the scan stops there (or at kFarthest). The
      // scan is a chain of selects: evaluated once per distance, into a
      // table, not once per score.
      const int64_t mid = span / 2;
      Var x("deberta_distance");
      Expr a = abs(x);
      Expr magnitude = Expr(static_cast<int32_t>(mid));
      for (int64_t d = mid + 1, level = mid; level < span && d <= kFarthest; ++d)
        for (int64_t next = logPosition(d, span, maxPosition); level < next && level < span;
             ++level)
          magnitude += select(a >= static_cast<int32_t>(d), 1, 0);
      Func bucket("deberta_bucket");
      bucket(x) = select(a <= static_cast<int32_t>(mid), x,
                         select(x > 0, magnitude, -magnitude));
      bucket.compute_root();
      rel = bucket(distance);
    }
    const int32_t s = static_cast<int32_t>(span);
    return clamp(term == 0 ? rel + s : s - rel, 0, 2 * s - 1);
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createDeberta() { return std::make_unique<Deberta>(); }
} // namespace attune::modifiers
