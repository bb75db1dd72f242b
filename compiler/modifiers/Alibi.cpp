//===- Alibi.cpp - ALiBi: linear biases by head -----------------------------===//
//
// Press, Smith and Lewis, "Train Short, Test Long: Attention with Linear
// Biases Enables Input Length Extrapolation" (ICLR 2022): no position
// embedding; head h adds m_h * (j - i) to its scores, with slopes the
// geometric sequence of the paper's `get_slopes`.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <cmath>

namespace attune::modifiers {
namespace {

class Alibi final : public ScoreModifier {
public:
  std::string name() const override { return "alibi"; }

  std::string description() const override {
    return "ALiBi (Press et al. 2022): bias_h(delta) = m_h * delta, or "
           "-m_h * |delta| when symmetric. For n heads and c = 2^floor(log2 n), "
           "head h < c has m_h = 2^(-max_bias (h + 1) / c) and head h >= c has "
           "m_h = 2^(-max_bias (2 (h - c) + 1) / (2 c)) (the paper's get_slopes: "
           "the odd-indexed slopes of 2c heads fill the heads past c). "
           "max_bias = 8 is the paper's.";
  }

  std::vector<ParamSpec> params() const override {
    return {{"max_bias", ParamSpec::Real, 8.0, 1e-6, 1e6,
             "the 8 in 2^(-8/n), the base of the slopes"},
            {"symmetric", ParamSpec::Bool, 0.0, 0, 1,
             "bias -m_h * |delta|, for encoders; else m_h * delta"}};
  }

  std::string verify(const ModifierParams &, const AttentionDims &dims,
                     const std::vector<std::vector<int64_t>> &) const override {
    if (dims.heads == 0)
      return "expected at least one head";
    return "";
  }

  /// The slope of head h of n, by the paper's recursion written as a closed
  /// form (get_slopes_power_of_2(c) then get_slopes(2c)[0::2]).
  static double slope(double maxBias, int64_t n, int64_t h) {
    int64_t c = 1;
    while (c * 2 <= n)
      c *= 2;
    if (h < c)
      return std::exp2(-maxBias * double(h + 1) / double(c));
    return std::exp2(-maxBias * double(2 * (h - c) + 1) / double(2 * c));
  }

  double referenceBias(const ModifierParams &params,
                       const std::vector<ReferenceOperand> &, int64_t heads,
                       int64_t h, int64_t delta) const override {
    double m = slope(params.at("max_bias"), heads, h);
    return params.at("symmetric") != 0 ? -m * std::fabs(double(delta))
                                       : m * double(delta);
  }

  Halide::Expr kernelBias(const ModifierParams &params,
                          const std::vector<Halide::Func> &,
                          const Halide::Expr &heads, const Halide::Expr &h,
                          const Halide::Expr &delta) const override {
    using namespace Halide;
    const float maxBias = static_cast<float>(params.at("max_bias"));
    // c = the largest power of two <= heads.
    Expr c = cast<int32_t>(1) << (31 - cast<int32_t>(count_leading_zeros(heads)));
    // The slopes once per call, not a pow per (head, distance): at S = 512
    // that pow was a tenth of the kernel.
    Var head("alibi_head");
    Func slope("alibi_slope");
    slope(head) = pow(2.0f, -maxBias * select(head < c, cast<float>(head + 1) / cast<float>(c),
                                               cast<float>(2 * (head - c) + 1) /
                                                   cast<float>(2 * c)));
    slope.compute_root();
    Expr m = slope(h);
    Expr d = cast<float>(delta);
    return params.at("symmetric") != 0 ? -m * abs(d) : m * d;
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createAlibi() { return std::make_unique<Alibi>(); }
} // namespace attune::modifiers
