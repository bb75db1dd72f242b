//===- Shaw.cpp - Shaw et al.'s relative position representations ---------===//
//
// Shaw, Uszkoreit and Vaswani, "Self-Attention with Relative Position
// Representations" (NAACL 2018), as tensor2tensor's
// dot_product_attention_relative computes it: learned vectors for the
// clipped key-query distance, shared by all heads, added to the keys in the
// scores and to the values in the output:
//
//   e_ij = q_i . (k_j + a^K_ij) / sqrt(d),  z_i = sum_j a_ij (v_j + a^V_ij),
//   a^K_ij = w^K[clip(j - i, -K, K)],       a^V_ij = w^V[clip(j - i, -K, K)].
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <algorithm>

namespace attune::modifiers {
namespace {

class Shaw final : public ScoreModifier {
public:
  std::string name() const override { return "shaw"; }

  std::string description() const override {
    return "Shaw et al. 2018 relative positions: with c = clip(j - i, -K, K) + K "
           "(K = max_distance), the score gains scale * q_i . key_table[c] and "
           "the output gains sum_j p_ij value_table[c], where p is the softmax. "
           "The tables are shared by all heads, as in the paper.";
  }

  std::vector<ParamSpec> params() const override {
    return {{"max_distance", ParamSpec::Integer, std::nullopt, 1, 1 << 20,
             "K, the distance from which every key shares the last row"}};
  }

  std::vector<OperandSpec> operands() const override {
    return {{"key_table", 2, "[2 max_distance + 1, D]"},
            {"value_table", 2, "[2 max_distance + 1, Dv]"}};
  }

  std::string verify(const ModifierParams &params, const AttentionDims &,
                     const std::vector<std::vector<int64_t>> &shapes) const override {
    int64_t rows = 2 * static_cast<int64_t>(params.at("max_distance")) + 1;
    if (shapes[0][0] >= 0 && shapes[0][0] != rows)
      return "expected operand 'key_table' [2 max_distance + 1, D] to have " +
             std::to_string(rows) + " rows, got " + std::to_string(shapes[0][0]);
    return "";
  }

  bool hasBias() const override { return false; }

  std::vector<ContentTerm> contentTerms(const ModifierParams &) const override {
    return {{ContentTerm::Query, /*table=*/0, ContentTerm::Shared}};
  }

  int64_t referenceRow(const ModifierParams &params, size_t,
                       int64_t delta) const override {
    int64_t K = static_cast<int64_t>(params.at("max_distance"));
    return std::clamp(delta, -K, K) + K;
  }

  Halide::Expr kernelRow(const ModifierParams &params, size_t,
                         const Halide::Expr &delta) const override {
    int32_t K = static_cast<int32_t>(params.at("max_distance"));
    return Halide::clamp(delta, -K, K) + K;
  }

  std::optional<int64_t> saturationDistance(const ModifierParams &params,
                                            size_t) const override {
    return static_cast<int64_t>(params.at("max_distance"));
  }

  std::optional<ValueTerm> valueTerm(const ModifierParams &params) const override {
    return ValueTerm{/*table=*/1, static_cast<int64_t>(params.at("max_distance"))};
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createShaw() { return std::make_unique<Shaw>(); }
} // namespace attune::modifiers
