//===- T5Bias.cpp - T5's bucketed relative position bias --------------------===//
//
// Raffel et al., "Exploring the Limits of Transfer Learning with a Unified
// Text-to-Text Transformer" (JMLR 2020), as Mesh TensorFlow and Hugging Face
// (`T5Attention._relative_position_bucket`) compute it: each head adds a
// learned scalar looked up by the bucket of the key-query distance, exact
// for small distances and log-spaced up to `max_distance`. T5 itself does
// not scale q.k by 1/sqrt(d) (the attention's scale is 1 there).
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"

#include "Halide.h"

#include <algorithm>
#include <cmath>

namespace attune::modifiers {
namespace {

class T5Bias final : public ScoreModifier {
public:
  std::string name() const override { return "t5"; }

  std::string description() const override {
    return "T5 relative position bias (Raffel et al. 2020): bias_h(delta) = "
           "table[bucket(delta), h]. Bidirectional (encoders): half the buckets "
           "for delta > 0 (offset num_buckets/2), distance n = |delta|; causal "
           "(decoders): n = max(-delta, 0). With B the buckets of one side and "
           "E = B/2: bucket n for n < E, else min(E + trunc(log(n/E) / "
           "log(max_distance/E) * (B - E)), B - 1), in float32 as the reference "
           "implementation computes it.";
  }

  std::vector<ParamSpec> params() const override {
    return {{"num_buckets", ParamSpec::Integer, 32.0, 2, 4096,
             "buckets of the table, both sides together when bidirectional"},
            {"max_distance", ParamSpec::Integer, 128.0, 1, 1 << 20,
             "the distance from which every key shares the last bucket"},
            {"bidirectional", ParamSpec::Bool, 1.0, 0, 1,
             "encoder (keys on both sides) or decoder (keys before only)"}};
  }

  std::vector<OperandSpec> operands() const override {
    return {{"table", 2, "[num_buckets, H]"}};
  }

  std::string verify(const ModifierParams &params, const AttentionDims &dims,
                     const std::vector<std::vector<int64_t>> &shapes) const override {
    int64_t buckets = static_cast<int64_t>(params.at("num_buckets"));
    bool bidirectional = params.at("bidirectional") != 0;
    if (bidirectional && buckets < 4)
      return "expected num_buckets >= 4 when bidirectional, got " +
             std::to_string(buckets);
    int64_t exact = (bidirectional ? buckets / 2 : buckets) / 2;
    if (static_cast<int64_t>(params.at("max_distance")) <= exact)
      return "expected max_distance above the " + std::to_string(exact) +
             " exactly bucketed distances, got " +
             std::to_string(static_cast<int64_t>(params.at("max_distance")));
    if (shapes[0][0] >= 0 && shapes[0][0] != buckets)
      return "expected operand 'table' [num_buckets, H] to have " +
             std::to_string(buckets) + " rows, got " + std::to_string(shapes[0][0]);
    if (shapes[0][1] >= 0 && dims.heads >= 0 && shapes[0][1] != dims.heads)
      return "expected operand 'table' [num_buckets, H] to have one column "
             "per query head (" + std::to_string(dims.heads) + "), got " +
             std::to_string(shapes[0][1]);
    return "";
  }

  /// The bucket of distance n >= 0 on one side with `buckets` buckets, in
  /// float32 as Hugging Face's _relative_position_bucket computes it.
  static int64_t sideBucket(int64_t n, int64_t buckets, int64_t maxDistance) {
    int64_t maxExact = buckets / 2;
    if (n < maxExact)
      return n;
    float ratio = static_cast<float>(n) / static_cast<float>(maxExact);
    float scaled = std::log(ratio) /
                   static_cast<float>(std::log(double(maxDistance) / double(maxExact))) *
                   static_cast<float>(buckets - maxExact);
    return std::min<int64_t>(maxExact + static_cast<int64_t>(scaled), buckets - 1);
  }

  /// The bucket of `delta`, both sides counted.
  static int64_t bucketOf(const ModifierParams &params, int64_t delta) {
    int64_t buckets = static_cast<int64_t>(params.at("num_buckets"));
    int64_t maxDistance = static_cast<int64_t>(params.at("max_distance"));
    if (params.at("bidirectional") != 0) {
      int64_t side = buckets / 2;
      return (delta > 0 ? side : 0) +
             sideBucket(delta < 0 ? -delta : delta, side, maxDistance);
    }
    return sideBucket(std::max<int64_t>(-delta, 0), buckets, maxDistance);
  }

  double referenceBias(const ModifierParams &params,
                       const std::vector<ReferenceOperand> &operands, int64_t heads,
                       int64_t h, int64_t delta) const override {
    const ReferenceOperand &table = operands[0];
    return table.data[bucketOf(params, delta) * table.shape[1] + h];
  }

  /// Every bucket changes within max_distance of 0: beyond, each side
  /// keeps its last (bidirectional), or the last and 0 (causal).
  std::optional<TableBias> tableBias(const ModifierParams &params) const override {
    int64_t maxDistance = static_cast<int64_t>(params.at("max_distance"));
    TableBias table;
    table.table = 0;
    table.low = -maxDistance;
    for (int64_t delta = -maxDistance; delta <= maxDistance; ++delta)
      table.rows.push_back(static_cast<int32_t>(bucketOf(params, delta)));
    return table;
  }

  Halide::Expr kernelBias(const ModifierParams &params,
                          const std::vector<Halide::Func> &operands,
                          const Halide::Expr &, const Halide::Expr &h,
                          const Halide::Expr &delta) const override {
    using namespace Halide;
    int64_t buckets = static_cast<int64_t>(params.at("num_buckets"));
    int64_t maxDistance = static_cast<int64_t>(params.at("max_distance"));
    bool bidirectional = params.at("bidirectional") != 0;
    int64_t side = bidirectional ? buckets / 2 : buckets;
    int64_t maxExact = side / 2;
    // The log-spaced buckets as the distances where each starts, found with
    // the same float32 formula: the kernel counts thresholds instead of
    // taking a vector log whose last bit may differ from the reference's.
    // The last bucket starts before max_distance, so the scan is short.
    Expr n = cast<int32_t>(bidirectional ? abs(delta) : max(-delta, 0));
    Expr bucket = min(n, static_cast<int32_t>(maxExact));
    for (int64_t d = maxExact + 1, b = maxExact; b < side - 1 && d <= maxDistance; ++d) {
      // Buckets are non-decreasing in d; several may start at one distance.
      for (int64_t next = sideBucket(d, side, maxDistance); b < next; ++b)
        bucket += select(n >= static_cast<int32_t>(d), 1, 0);
    }
    if (bidirectional)
      bucket += select(delta > 0, static_cast<int32_t>(side), 0);
    return operands[0](h, bucket);
  }
};

} // namespace

std::unique_ptr<ScoreModifier> createT5Bias() { return std::make_unique<T5Bias>(); }
} // namespace attune::modifiers
