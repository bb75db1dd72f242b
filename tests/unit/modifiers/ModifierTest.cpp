//===- ModifierTest.cpp - score modifiers against their sources -----------===//
//
// Each modifier's referenceBias (double, for the evaluator) and kernelBias
// (Halide, JIT-compiled at this process's ISA level) are compared with a
// literal transcription, in this file, of the code its formula comes from:
// ALiBi's `get_slopes` from the paper's repository, Hugging Face's
// `T5Attention._relative_position_bucket`, and Hugging Face Mistral's
// sliding-window mask.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"
#include "tests/unit/modifiers/ModifierTestSupport.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace attune::modifiers;
using attune::modifiers::testing::get;
using attune::modifiers::testing::kInf;

namespace {

/// `given` with defaults filled in; fails the test on a check error.
ModifierParams checked(const ScoreModifier &modifier, ModifierParams given,
                       std::vector<std::vector<int64_t>> shapes = {}) {
  std::string problem = checkModifier(modifier, given, {}, shapes);
  EXPECT_EQ(problem, "");
  return given;
}

/// kernelBias evaluated by Halide's JIT for delta in [lo, hi] and every head:
/// result[h][delta - lo]. `operands` are row-major float tables.
std::vector<std::vector<float>>
kernelBiases(const ScoreModifier &modifier, const ModifierParams &params, int heads,
             int lo, int hi, const std::vector<Halide::Buffer<float>> &operands = {}) {
  std::vector<Halide::Func> funcs;
  for (const Halide::Buffer<float> &buffer : operands) {
    Halide::Func f;
    std::vector<Halide::Var> vars(buffer.dimensions());
    std::vector<Halide::Expr> args(vars.begin(), vars.end());
    f(vars) = buffer(args);
    funcs.push_back(f);
  }
  Halide::Var x("x"), h("h");
  Halide::Func bias;
  bias(x, h) = modifier.kernelBias(params, funcs, Halide::Expr(heads), h, x + lo);
  bias.vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
  Halide::Buffer<float> out =
      bias.realize({hi - lo + 1, heads}, attune::targets::cpu::jitTarget());
  std::vector<std::vector<float>> result(heads, std::vector<float>(hi - lo + 1));
  for (int hh = 0; hh < heads; ++hh)
    for (int d = lo; d <= hi; ++d)
      result[hh][d - lo] = out(d - lo, hh);
  return result;
}

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

// ofirpress/attention_with_linear_biases, fairseq/models/transformer.py:
//
//   def get_slopes(n):
//       def get_slopes_power_of_2(n):
//           start = (2**(-2**-(math.log2(n)-3)))
//           ratio = start
//           return [start*ratio**i for i in range(n)]
//       if math.log2(n).is_integer():
//           return get_slopes_power_of_2(n)
//       else:
//           closest_power_of_2 = 2**math.floor(math.log2(n))
//           return get_slopes_power_of_2(closest_power_of_2) + \
//               get_slopes(2*closest_power_of_2)[0::2][:n-closest_power_of_2]
std::vector<double> getSlopesPowerOf2(int n) {
  double start = std::pow(2.0, -std::pow(2.0, -(std::log2(double(n)) - 3)));
  double ratio = start;
  std::vector<double> slopes;
  for (int i = 0; i < n; ++i)
    slopes.push_back(start * std::pow(ratio, i));
  return slopes;
}
std::vector<double> getSlopes(int n) {
  double l = std::log2(double(n));
  if (l == std::floor(l))
    return getSlopesPowerOf2(n);
  int closest = 1 << int(std::floor(l));
  std::vector<double> slopes = getSlopesPowerOf2(closest);
  std::vector<double> twice = getSlopes(2 * closest);
  for (int i = 0; i < 2 * closest && int(slopes.size()) < n; i += 2)
    slopes.push_back(twice[i]);
  return slopes;
}

TEST(Alibi, SlopesMatchThePaperForEveryHeadCount) {
  const ScoreModifier &alibi = get("alibi");
  ModifierParams params = checked(alibi, {});
  for (int n : {1, 2, 3, 5, 6, 8, 12, 16, 20, 24, 32, 40, 64, 80}) {
    SCOPED_TRACE("heads " + std::to_string(n));
    std::vector<double> want = getSlopes(n);
    ASSERT_EQ(want.size(), size_t(n));
    auto kernel = kernelBiases(alibi, params, n, -3, 2);
    for (int h = 0; h < n; ++h)
      for (int delta = -3; delta <= 2; ++delta) {
        // The paper's bias is m_h * (j - i).
        double expected = want[h] * delta;
        EXPECT_NEAR(alibi.referenceBias(params, {}, n, h, delta), expected,
                    1e-12 * std::fabs(expected) + 1e-15)
            << "h " << h << " delta " << delta;
        EXPECT_NEAR(kernel[h][delta + 3], expected, 2e-6 * std::fabs(expected) + 1e-7)
            << "h " << h << " delta " << delta;
      }
  }
}

TEST(Alibi, SymmetricIsMinusSlopeTimesDistance) {
  const ScoreModifier &alibi = get("alibi");
  ModifierParams params = checked(alibi, {{"symmetric", 1}, {"max_bias", 4}});
  auto kernel = kernelBiases(alibi, params, 6, -5, 5);
  for (int h = 0; h < 6; ++h)
    for (int delta = -5; delta <= 5; ++delta) {
      // get_slopes with 8 replaced by max_bias = 4: 2^(-4/c) per step.
      double m = h < 4 ? std::exp2(-4.0 * (h + 1) / 4) : std::exp2(-4.0 * (2 * (h - 4) + 1) / 8);
      double expected = -m * std::abs(delta);
      EXPECT_NEAR(alibi.referenceBias(params, {}, 6, h, delta), expected, 1e-12);
      EXPECT_NEAR(kernel[h][delta + 5], expected, 2e-6);
    }
}

//===----------------------------------------------------------------------===//
// T5
//===----------------------------------------------------------------------===//

// huggingface/transformers, models/t5/modeling_t5.py, in float32 as torch
// computes it:
//
//   relative_buckets = 0
//   if bidirectional:
//       num_buckets //= 2
//       relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
//       relative_position = torch.abs(relative_position)
//   else:
//       relative_position = -torch.min(relative_position,
//                                      torch.zeros_like(relative_position))
//   max_exact = num_buckets // 2
//   is_small = relative_position < max_exact
//   relative_position_if_large = max_exact + (
//       torch.log(relative_position.float() / max_exact)
//       / math.log(max_distance / max_exact)
//       * (num_buckets - max_exact)
//   ).to(torch.long)
//   relative_position_if_large = torch.min(relative_position_if_large,
//       torch.full_like(relative_position_if_large, num_buckets - 1))
//   relative_buckets += torch.where(is_small, relative_position,
//                                   relative_position_if_large)
int64_t relativePositionBucket(int64_t relativePosition, bool bidirectional,
                               int64_t numBuckets, int64_t maxDistance) {
  int64_t relativeBuckets = 0;
  if (bidirectional) {
    numBuckets /= 2;
    relativeBuckets += (relativePosition > 0 ? 1 : 0) * numBuckets;
    relativePosition = std::abs(relativePosition);
  } else {
    relativePosition = -std::min<int64_t>(relativePosition, 0);
  }
  int64_t maxExact = numBuckets / 2;
  bool isSmall = relativePosition < maxExact;
  // torch evaluates both branches; the large one is log(0) = -inf for a
  // distance of 0, which C++ may not convert to an integer: skip it there.
  int64_t ifLarge = 0;
  if (!isSmall) {
    float logRatio = std::log(float(relativePosition) / float(maxExact));
    float scale = float(std::log(double(maxDistance) / double(maxExact)));
    ifLarge = maxExact + int64_t(logRatio / scale * float(numBuckets - maxExact));
    ifLarge = std::min<int64_t>(ifLarge, numBuckets - 1);
  }
  relativeBuckets += isSmall ? relativePosition : ifLarge;
  return relativeBuckets;
}

TEST(T5, BucketsMatchHuggingFace) {
  const ScoreModifier &t5 = get("t5");
  struct Case {
    int64_t buckets, maxDistance;
    bool bidirectional;
  };
  for (Case c : {Case{32, 128, true}, Case{32, 128, false}, Case{64, 256, true},
                 Case{8, 20, true}, Case{16, 1000, false}}) {
    SCOPED_TRACE("num_buckets " + std::to_string(c.buckets) + " max_distance " +
                 std::to_string(c.maxDistance) +
                 (c.bidirectional ? " bidirectional" : " causal"));
    const int heads = 3;
    // table[bucket, h] = bucket + 1000 h: the bias names the bucket.
    Halide::Buffer<float> table(heads, int(c.buckets));
    std::vector<double> rowMajor(c.buckets * heads);
    for (int b = 0; b < c.buckets; ++b)
      for (int h = 0; h < heads; ++h)
        table(h, b) = rowMajor[b * heads + h] = b + 1000.0 * h;
    ModifierParams params =
        checked(t5,
                {{"num_buckets", double(c.buckets)},
                 {"max_distance", double(c.maxDistance)},
                 {"bidirectional", c.bidirectional ? 1.0 : 0.0}},
                {{c.buckets, heads}});
    const int lo = -1500, hi = 1500;
    auto kernel = kernelBiases(t5, params, heads, lo, hi, {table});
    ReferenceOperand operand{rowMajor.data(), {c.buckets, heads}};
    for (int h = 0; h < heads; ++h)
      for (int delta = lo; delta <= hi; ++delta) {
        // relative_position = memory_position - context_position = j - i.
        double expected =
            relativePositionBucket(delta, c.bidirectional, c.buckets, c.maxDistance) +
            1000.0 * h;
        ASSERT_EQ(t5.referenceBias(params, {operand}, heads, h, delta), expected)
            << "delta " << delta;
        ASSERT_EQ(kernel[h][delta - lo], expected) << "delta " << delta;
      }
    // The same buckets as the GPU kernel reads them: through the rows,
    // clamped at their ends.
    std::optional<TableBias> byRow = t5.tableBias(params);
    ASSERT_TRUE(byRow);
    ASSERT_EQ(byRow->table, 0);
    ASSERT_FALSE(byRow->rows.empty());
    const int64_t last = byRow->low + int64_t(byRow->rows.size()) - 1;
    for (int delta = lo; delta <= hi; ++delta) {
      int64_t row = byRow->rows[std::clamp<int64_t>(delta, byRow->low, last) - byRow->low];
      ASSERT_EQ(row, relativePositionBucket(delta, c.bidirectional, c.buckets, c.maxDistance))
          << "delta " << delta;
    }
  }
}

TEST(DeviceBias, OneTableBesideAWindowOrSlopesAlone) {
  ModifierParams t5 = checked(get("t5"), {}, {{32, 4}});
  ModifierParams window = checked(get("sliding_window"), {{"window", 50.0}}, {});
  ModifierParams alibi = checked(get("alibi"), {}, {});
  DeviceBias bias;
  EXPECT_EQ(deviceBiasOf({{&get("sliding_window"), window}, {&get("t5"), t5}}, 4, bias), "");
  ASSERT_TRUE(bias.table);
  EXPECT_EQ(bias.tableModifier, 1u);
  EXPECT_EQ(bias.table->low, -128);
  EXPECT_TRUE(bias.linear.slopes.empty());
  EXPECT_EQ(bias.linear.low, -49);
  EXPECT_EQ(bias.linear.high, INT64_MAX);

  EXPECT_EQ(deviceBiasOf({{&get("alibi"), alibi}}, 4, bias), "");
  EXPECT_FALSE(bias.table);
  EXPECT_EQ(bias.linear.slopes.size(), 4u);

  EXPECT_EQ(deviceBiasOf({{&get("t5"), t5}, {&get("t5"), t5}}, 4, bias),
            "two of its score modifiers read bias tables");
  EXPECT_EQ(deviceBiasOf({{&get("t5"), t5}, {&get("alibi"), alibi}}, 4, bias),
            "its score modifiers add a bias table and a bias linear in the distance");
  ModifierParams shaw = checked(get("shaw"), {{"max_distance", 4.0}}, {{9, 16}, {9, 16}});
  EXPECT_NE(deviceBiasOf({{&get("shaw"), shaw}}, 4, bias), "");
}

//===----------------------------------------------------------------------===//
// Sliding window
//===----------------------------------------------------------------------===//

// huggingface/transformers, Mistral's sliding-window causal mask
// (_prepare_4d_causal_attention_mask_with_cache_position):
//
//   causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
//   sliding_attend_mask = torch.arange(target_length) <= (
//       cache_position.reshape(-1, 1) - config.sliding_window)
//   diagonal_attend_mask.bitwise_or_(sliding_attend_mask)
//
// A key j is masked for query position i when j > i (causal) or
// j <= i - sliding_window. The modifier is the second half; causal = true
// on the attention supplies the first.
TEST(SlidingWindow, MatchesMistralsMask) {
  const ScoreModifier &window = get("sliding_window");
  for (int64_t w : {1, 2, 5, 37}) {
    ModifierParams params = checked(window, {{"window", double(w)}});
    auto kernel = kernelBiases(window, params, 1, -100, 100);
    for (int64_t i = 0; i < 60; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        bool masked = j <= i - w;
        double expected = masked ? -kInf : 0.0;
        EXPECT_EQ(window.referenceBias(params, {}, 1, 0, j - i), expected)
            << "window " << w << " i " << i << " j " << j;
        EXPECT_EQ(kernel[0][j - i + 100], float(expected))
            << "window " << w << " i " << i << " j " << j;
      }
  }
}

TEST(SlidingWindow, SymmetricAlsoLimitsLaterKeys) {
  const ScoreModifier &window = get("sliding_window");
  ModifierParams params = checked(window, {{"window", 3}, {"symmetric", 1}});
  auto kernel = kernelBiases(window, params, 1, -6, 6);
  for (int delta = -6; delta <= 6; ++delta) {
    double expected = std::abs(delta) < 3 ? 0.0 : -kInf;
    EXPECT_EQ(window.referenceBias(params, {}, 1, 0, delta), expected);
    EXPECT_EQ(kernel[0][delta + 6], float(expected));
  }
}

//===----------------------------------------------------------------------===//
// Registry and generic checks
//===----------------------------------------------------------------------===//

TEST(Registry, EveryModifierIsDescribedAndDefaultsVerify) {
  std::vector<const ScoreModifier *> all = allModifiers();
  ASSERT_GE(all.size(), 3u);
  for (const ScoreModifier *modifier : all) {
    SCOPED_TRACE(modifier->name());
    EXPECT_EQ(lookupModifier(modifier->name()), modifier);
    EXPECT_GT(modifier->description().size(), 40u);
    for (const ParamSpec &param : modifier->params())
      EXPECT_FALSE(param.description.empty()) << param.name;
  }
  EXPECT_EQ(lookupModifier("nope"), nullptr);
  EXPECT_EQ(modifierNames(), "alibi, deberta, shaw, sliding_window, t5, xl");
}

TEST(Registry, ChecksFillDefaultsAndNameTheProblem) {
  const ScoreModifier &t5 = get("t5");
  ModifierParams params;
  EXPECT_EQ(checkModifier(t5, params, {4, -1, -1}, {{32, 4}}), "");
  EXPECT_EQ(params.at("num_buckets"), 32);
  EXPECT_EQ(params.at("max_distance"), 128);
  EXPECT_EQ(params.at("bidirectional"), 1);

  ModifierParams bad = {{"num_buckets", 32.5}};
  EXPECT_EQ(checkModifier(t5, bad, {}, {{32, 4}}),
            "modifier 't5': expected 'num_buckets' to be an integer, got 32.5");
  ModifierParams fine;
  EXPECT_EQ(checkModifier(t5, fine, {}, {}),
            "modifier 't5': expected 1 operand(s), got 0");
  ModifierParams nan = {{"max_bias", std::nan("")}};
  EXPECT_EQ(checkModifier(get("alibi"), nan, {}, {}),
            "modifier 'alibi': expected 'max_bias' finite, got nan");
}

} // namespace
