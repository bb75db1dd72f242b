//===- TransformerXL.cpp - Transformer-XL / XLNet relative attention -------===//
//
// Dai et al., "Transformer-XL: Attentive Language Models Beyond a
// Fixed-Length Context" (ACL 2019), section 3.3, as its official
// RelPartialLearnableMultiHeadAttn computes it (XLNet's rel_attn_core is the
// same with keys on both sides): the score of query i and key j is
//
//   (q_i + u) . k_j + (q_i + v) . W_{k,R} R_{i-j}
//
// (the content term with its global bias u, and the position term: a
// separate projection of the sinusoidal encoding of the distance with its
// bias v), all times the scale; values carry no position. The modifier takes
// u and v [H, D] (r_w_bias, r_r_bias) and the projected encodings r
// [L, H, D] (r_head_k) in the model's own order: row 0 holds the largest
// distance, max_distance, and row t the distance max_distance - t, as
// `pos_seq = arange(klen - 1, -1, -1)` (max_distance = klen - 1) and XLNet's
// `arange(klen, -qlen, -1)` (max_distance = klen) lay them out. The kernel
// never shifts (rel_shift): it reads row max_distance - (i - j) directly.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

namespace attune::modifiers {
namespace {

class TransformerXL final : public ScoreModifier {
public:
  std::string name() const override { return "xl"; }

  std::string description() const override {
    return "Transformer-XL (Dai et al. 2019): the score gains scale * (u_h . k_j "
           "+ (q_i + v_h) . r[max_distance - (i - j), h]), with i aligned to the "
           "end of the keys and r's row t the projected sinusoidal encoding of "
           "distance max_distance - t (Transformer-XL's pos_seq order). "
           "Distances past either end of r take its nearest row: a causal model "
           "masks the scores that would read past the last row (distance < 0), "
           "and a compiled library refuses more than max_distance + 1 keys.";
  }

  std::vector<ParamSpec> params() const override {
    return {{"max_distance", ParamSpec::Integer, std::nullopt, 0, 1 << 30,
             "the distance i - j of r's first row (klen - 1 in Transformer-XL)"}};
  }

  std::vector<OperandSpec> operands() const override {
    return {{"u", 2, "[H, D]"}, {"v", 2, "[H, D]"}, {"r", 3, "[L, H, D]"}};
  }

  std::string verify(const ModifierParams &params, const AttentionDims &dims,
                     const std::vector<std::vector<int64_t>> &shapes) const override {
    int64_t maxDistance = static_cast<int64_t>(params.at("max_distance"));
    int64_t rows = shapes[2][0];
    if (rows >= 0 && rows <= maxDistance)
      return "expected operand 'r' [L, H, D] to have a row for every distance "
             "from max_distance " + std::to_string(maxDistance) + " to 0, got " +
             std::to_string(rows) + " rows";
    if (dims.keySeq >= 0 && maxDistance < dims.keySeq - 1)
      return "expected max_distance >= " + std::to_string(dims.keySeq - 1) +
             ", the largest distance of " + std::to_string(dims.keySeq) +
             " keys, got " + std::to_string(maxDistance);
    return "";
  }

  bool hasBias() const override { return false; }

  // Keys past max_distance + 1 would read distances r has no row for.
  std::optional<int64_t> maxKeys(const ModifierParams &params) const override {
    return static_cast<int64_t>(params.at("max_distance")) + 1;
  }

  std::vector<ContentTerm> contentTerms(const ModifierParams &) const override {
    return {{ContentTerm::Key, /*table=*/0, ContentTerm::HeadVector},
            {ContentTerm::Query, /*table=*/2, ContentTerm::PerHead, /*offset=*/1}};
  }

  // delta = j - i, so the row of distance i - j is max_distance + delta.
  int64_t referenceRow(const ModifierParams &params, size_t,
                       int64_t delta) const override {
    return static_cast<int64_t>(params.at("max_distance")) - (-delta);
  }

  Halide::Expr kernelRow(const ModifierParams &params, size_t,
                         const Halide::Expr &delta) const override {
    return static_cast<int32_t>(params.at("max_distance")) + delta;
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createTransformerXL() {
  return std::make_unique<TransformerXL>();
}
} // namespace attune::modifiers
