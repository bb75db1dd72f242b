//===- SlidingWindow.cpp - attend to the last `window` keys only ------------===//
//
// Beltagy et al., "Longformer" (2020), and Mistral 7B (Jiang et al. 2023):
// each query sees the `window` keys ending at its own position (with causal
// attention, Mistral's `sliding_window`), or, when symmetric, those within
// window - 1 positions on either side. A mask: its bias is 0 or -inf.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attune::modifiers {
namespace {

class SlidingWindow final : public ScoreModifier {
public:
  std::string name() const override { return "sliding_window"; }

  std::string description() const override {
    return "Sliding window (Longformer, Mistral): key j is visible to query i "
           "when delta = j - i > -window, i.e. i - j < window (Hugging Face "
           "Mistral masks j <= i - sliding_window), and, when symmetric, also "
           "delta < window. bias = 0 where visible, -inf elsewhere. Combine "
           "with causal = true for Mistral.";
  }

  std::vector<ParamSpec> params() const override {
    return {{"window", ParamSpec::Integer, std::nullopt, 1, 2147483647.0,
             "keys a query sees, its own position included"},
            {"symmetric", ParamSpec::Bool, 0.0, 0, 1,
             "also limit keys after the query to window - 1"}};
  }

  void visibleDeltas(const ModifierParams &params, int64_t &lo,
                     int64_t &hi) const override {
    const int64_t window = static_cast<int64_t>(params.at("window"));
    lo = std::max(lo, 1 - window);
    if (params.at("symmetric") != 0)
      hi = std::min(hi, window - 1);
  }

  double referenceBias(const ModifierParams &params,
                       const std::vector<ReferenceOperand> &, int64_t, int64_t,
                       int64_t delta) const override {
    const int64_t window = static_cast<int64_t>(params.at("window"));
    bool visible = delta > -window;
    if (params.at("symmetric") != 0)
      visible = visible && delta < window;
    return visible ? 0.0 : -std::numeric_limits<double>::infinity();
  }

  Halide::Expr kernelBias(const ModifierParams &params,
                          const std::vector<Halide::Func> &, const Halide::Expr &,
                          const Halide::Expr &, const Halide::Expr &delta) const override {
    using namespace Halide;
    const int32_t window = static_cast<int32_t>(params.at("window"));
    Expr visible = delta > -window;
    if (params.at("symmetric") != 0)
      visible = visible && delta < window;
    return select(visible, 0.0f, Expr(-std::numeric_limits<float>::infinity()));
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createSlidingWindow() { return std::make_unique<SlidingWindow>(); }
} // namespace attune::modifiers
