//===- RaiseEncodings.cpp - exporters' positional encodings to tfm ops ----===//
//
// Exporters do not write `tfm.rope` or an ALiBi modifier: they write what
// the model's Python code computes, op by op. This pass recognises those
// spellings and replaces each with the op attune's fusion and kernels know,
// so that -tfm-fuse-attention folds it into the attention kernel:
//
//  * RoPE, split halves (GPT-NeoX, LLaMA: Hugging Face's `rotate_half`):
//      x * cos(A) + rotate_half(x) * sin(A)
//      rotate_half(x) = concat(-x[..., R/2:], x[..., :R/2])
//      A = concat(F, F) on the last axis, F[s, i] = p_s * inv_freq[i]
//    with p an arange along x's sequence axis (plus a constant offset) and
//    inv_freq a constant equal to base^(-2i/R) for some base, which the
//    pass reads off the constant. Becomes `tfm.rope x {base,
//    position_offset}`; GPT-J's rotate_every_two (the interleaved layout,
//    tables repeated pairwise) becomes `tfm.rope {interleaved}`; a rotation
//    of x[..., :R] concatenated with x[..., R:] becomes `tfm.rope x
//    {rotary_dims = R}` (partial rotary).
//  * ALiBi from an arange difference (Press et al.; BLOOM, MPT):
//      scores + m[h] * (j - i)   or   scores - m[h] * |j - i|
//    with i and j aranges along the query and key axes, provably of one
//    length, and m a constant equal to the paper's slopes for H heads and
//    some max_bias. Becomes `tfm.score_bias {kind = "alibi"}`.
//  * T5's bucketed bias: a [buckets, H] table looked up by ids computed
//    from positions only and moved to the heads axis. The ids are read as a
//    function (PositionFunction evaluates them, whatever ops spell them),
//    checked to depend on j - i alone, and T5's parameters fitted to them.
//    Becomes `tfm.score_bias {kind = "t5"}`.
//  * Shaw et al. as tensor2tensor writes it: embeddings gathered by
//    clip(j - i, -K, K) + K and multiplied per query with q (added to q k^T)
//    and with the probabilities (added to P V). Becomes `tfm.score_bias
//    content(q, k)` and `tfm.score_values {kind = "shaw"}`.
//  * DeBERTa as Hugging Face's DebertaV2 writes it: q k^T and relative
//    scores gathered by clamped, log-bucketed positions (c2p and p2c), all
//    divided by sqrt(3 d). Becomes `tfm.score_bias content(q, k) {kind =
//    "deberta"}`; the matcher lives in RaiseDeberta.cpp.
//
// Every check is exact on structure and on the constants (to f32 rounding):
// a graph that only looks alike (other frequencies, llama3 scaling, slopes of
// another sequence, positions of other lengths) is left as it is, and when
// the structure matched but a check failed the op gets a remark
// `<encoding> not raised: <reason>` and a `tfm.not_raised` attribute that
// -tfm-fuse-attention's report lists; raised ops carry `tfm.raised_from`.
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/DimProvenance.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/PositionFunction.h"
#include "passes/RaiseDeberta.h"
#include "compiler/modifiers/ScoreModifier.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

namespace attune {
#define GEN_PASS_DEF_RAISEENCODINGS
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;
namespace modifiers = attune::modifiers;
using attune::PositionFunction;
using attune::closeConstants;
using attune::splatValue;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `%g`: short, and exact for the constants people write.
std::string g(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// `v` without the reshapes in front of it.
Value stripReshapes(Value v) {
  while (auto reshape = v.getDefiningOp<tfm::ReshapeOp>())
    v = reshape.getInput();
  return v;
}

/// The values of a float constant, in row-major order.
std::optional<SmallVector<double>> constantValues(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> values;
  for (const APFloat &x : attr.getValues<APFloat>())
    values.push_back(x.convertToDouble());
  return values;
}


/// Exactly one dimension of `type` differs from 1: its index (the last one
/// when all are 1).
std::optional<int64_t> onlyNonUnitDim(RankedTensorType type) {
  std::optional<int64_t> found;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1) {
      if (found)
        return std::nullopt;
      found = d;
    }
  if (!found && type.getRank() > 0)
    found = type.getRank() - 1;
  return found;
}

/// Positions: `tfm.arange like {axis, start}`, possibly plus an integral
/// splat constant, possibly reshaped so that one axis carries them.
struct Positions {
  Value like;
  int64_t axis = 0;
  int64_t start = 0;
  /// The axis of the (reshaped) value that carries the positions.
  int64_t carrier = 0;
};

std::optional<Positions> matchPositions(Value v) {
  std::optional<int64_t> carrier = onlyNonUnitDim(typeOf(v));
  if (!carrier)
    return std::nullopt;
  Positions p;
  p.carrier = *carrier;
  v = stripReshapes(v);
  while (auto add = v.getDefiningOp<tfm::AddOp>()) {
    std::optional<double> c = splatValue(add.getRhs());
    Value rest = add.getLhs();
    if (!c) {
      c = splatValue(add.getLhs());
      rest = add.getRhs();
    }
    if (!c || *c != std::round(*c) || std::fabs(*c) > (1 << 30) ||
        typeOf(rest).getRank() != typeOf(add.getResult()).getRank())
      return std::nullopt;
    p.start += static_cast<int64_t>(*c);
    v = stripReshapes(rest);
  }
  auto arange = v.getDefiningOp<tfm::ArangeOp>();
  if (!arange)
    return std::nullopt;
  p.like = arange.getLike();
  p.axis = arange.getAxisAttr().getInt();
  p.start += arange.getStartAttr().getInt();
  return p;
}

/// `-x`: tfm.neg, or a multiply by the splat -1.
Value matchNegation(Value v) {
  if (auto neg = v.getDefiningOp<tfm::NegOp>())
    return neg.getInput();
  if (auto mul = v.getDefiningOp<tfm::MulOp>()) {
    if (splatValue(mul.getRhs()) == -1.0 && mul.getLhs().getType() == mul.getType())
      return mul.getLhs();
    if (splatValue(mul.getLhs()) == -1.0 && mul.getRhs().getType() == mul.getType())
      return mul.getRhs();
  }
  return {};
}

/// `x[..., start:end]` along the last axis, step 1.
bool isLastAxisSlice(tfm::SliceOp s, Value x, int64_t start, int64_t end) {
  return s && s.getInput() == x &&
         s.getAxisAttr().getInt() == typeOf(x).getRank() - 1 &&
         s.getStartAttr().getInt() == start && s.getEndAttr().getInt() == end &&
         s.getStepAttr().getInt() == 1;
}

/// A rotation's partner term: the tensor x it rotates, and its layout.
struct Rotation {
  Value x;
  bool interleaved = false;
};

/// rotate_half(x) = concat(-x[..., h:2h], x[..., :h]) on the last axis of
/// x [..., 2h] (the split-halves layout).
std::optional<Rotation> matchRotateHalf(Value v) {
  auto concat = v.getDefiningOp<tfm::ConcatOp>();
  if (!concat || concat.getInputs().size() != 2)
    return std::nullopt;
  int64_t rank = typeOf(v).getRank();
  if (concat.getAxisAttr().getInt() != rank - 1)
    return std::nullopt;
  Value negated = matchNegation(concat.getInputs()[0]);
  auto upper = negated ? negated.getDefiningOp<tfm::SliceOp>() : tfm::SliceOp();
  auto lower = concat.getInputs()[1].getDefiningOp<tfm::SliceOp>();
  if (!upper || !lower)
    return std::nullopt;
  Value x = lower.getInput();
  int64_t width = typeOf(x).getDimSize(rank - 1);
  if (ShapedType::isDynamic(width) || width % 2 != 0)
    return std::nullopt;
  int64_t h = width / 2;
  if (!isLastAxisSlice(lower, x, 0, h) || !isLastAxisSlice(upper, x, h, 2 * h))
    return std::nullopt;
  return Rotation{x, /*interleaved=*/false};
}

/// GPT-J's rotate_every_two(x) = stack(-x[..., 1::2], x[..., ::2], -1)
/// flattened: reshape(concat(reshape(-odd), reshape(even)) on a new last
/// axis of 2) back to x's shape (the interleaved layout).
std::optional<Rotation> matchRotateEveryTwo(Value v) {
  auto flatten = v.getDefiningOp<tfm::ReshapeOp>();
  if (!flatten)
    return std::nullopt;
  auto stack = flatten.getInput().getDefiningOp<tfm::ConcatOp>();
  if (!stack || stack.getInputs().size() != 2)
    return std::nullopt;
  RankedTensorType stacked = typeOf(stack.getResult());
  int64_t rank = stacked.getRank();
  if (stack.getAxisAttr().getInt() != rank - 1 || stacked.getDimSize(rank - 1) != 2)
    return std::nullopt;
  Value negated = matchNegation(stripReshapes(stack.getInputs()[0]));
  auto odd = negated ? negated.getDefiningOp<tfm::SliceOp>() : tfm::SliceOp();
  auto even = stripReshapes(stack.getInputs()[1]).getDefiningOp<tfm::SliceOp>();
  if (!odd || !even || odd.getInput() != even.getInput())
    return std::nullopt;
  Value x = even.getInput();
  int64_t xRank = typeOf(x).getRank(), width = typeOf(x).getDimSize(xRank - 1);
  if (ShapedType::isDynamic(width) || width % 2 != 0 || typeOf(v) != typeOf(x))
    return std::nullopt;
  auto strided = [&](tfm::SliceOp s, int64_t start) {
    return s.getAxisAttr().getInt() == xRank - 1 && s.getStartAttr().getInt() == start &&
           s.getStepAttr().getInt() == 2 && s.getEndAttr().getInt() >= width - 1;
  };
  if (!strided(even, 0) || !strided(odd, 1))
    return std::nullopt;
  return Rotation{x, /*interleaved=*/true};
}

/// The base with inv_freq[i] = base^(-2i/R), i < R/2, or a reason.
FailureOr<double> inverseFrequencyBase(ArrayRef<double> invFreq, int64_t R,
                                       std::string &why) {
  if (invFreq.empty() || !closeConstants(invFreq[0], 1.0)) {
    why = "the inverse frequencies do not start at 1 (base^0)";
    return failure();
  }
  // The last frequency has the largest exponent, so its f32 rounding moves
  // the base least; bases are integers in practice (10000, 500000), and one
  // within f32 rounding of an integer is taken to be it.
  double base = 10000.0;
  if (size_t n = invFreq.size(); n > 1) {
    if (!(invFreq[n - 1] > 0 && invFreq[n - 1] < 1)) {
      why = "the inverse frequencies are not base^(-2i/R) for a base > 1";
      return failure();
    }
    base = std::pow(invFreq[n - 1], -double(R) / (2.0 * double(n - 1)));
    if (std::fabs(base - std::round(base)) <= 1e-6 * base)
      base = std::round(base);
  }
  for (auto [i, f] : llvm::enumerate(invFreq))
    if (!closeConstants(f, std::pow(base, -2.0 * double(i) / double(R)))) {
      why = llvm::formatv("the inverse frequencies are not base^(-2i/R) for one "
                          "base: the last gives base {0}, for which frequency {1} "
                          "would be {2}, not {3} (a scaled RoPE, e.g. llama3's, "
                          "is not tfm.rope)",
                          g(base), i, g(std::pow(base, -2.0 * double(i) / double(R))), g(f))
                .str();
      return failure();
    }
  return base;
}

struct RopeMatch {
  Value x;
  bool interleaved = false;
  double base = 10000.0;
  int64_t offset = 0;
};

/// `v` without a repeat_interleave by 2 of its last axis: how the
/// interleaved layout repeats each frequency (GPT-J's duplicate_interleave),
/// before or after the cos and sin.
Value stripPairRepeat(Value v, bool &stripped) {
  stripped = false;
  auto repeat = stripReshapes(v).getDefiningOp<tfm::RepeatInterleaveOp>();
  if (repeat && repeat.getRepeats() == 2 &&
      static_cast<int64_t>(repeat.getAxis()) == typeOf(repeat.getResult()).getRank() - 1) {
    stripped = true;
    return repeat.getInput();
  }
  return v;
}

/// The frequencies F [S, R/2] under a cos or sin table of rotation layout
/// `interleaved`: the table is f(A), A = concat(F, F) (split halves) or F
/// with each column repeated twice (interleaved, the repeat before or after
/// f). `Op` is tfm::CosOp or tfm::SinOp.
template <typename Op>
Value tableFrequencies(Value table, bool interleaved) {
  bool repeatedOutside = false;
  if (interleaved)
    table = stripPairRepeat(table, repeatedOutside);
  auto f = stripReshapes(table).getDefiningOp<Op>();
  if (!f)
    return {};
  Value angles = stripReshapes(f.getInput());
  if (interleaved) {
    if (repeatedOutside)
      return angles;
    bool repeated = false;
    Value inner = stripPairRepeat(angles, repeated);
    return repeated ? stripReshapes(inner) : Value();
  }
  auto concat = angles.getDefiningOp<tfm::ConcatOp>();
  if (!concat || concat.getInputs().size() != 2 ||
      concat.getInputs()[0] != concat.getInputs()[1] ||
      concat.getAxisAttr().getInt() != typeOf(angles).getRank() - 1)
    return {};
  return stripReshapes(concat.getInputs()[0]);
}

/// F[s, i] = p_s * inv_freq[i] for a rotation of x [B, H, S, R].
LogicalResult matchFrequencies(Value frequencies, Value x, RopeMatch &out,
                               std::string &why) {
  int64_t R = typeOf(x).getDimSize(3);
  auto product = frequencies.getDefiningOp<tfm::MulOp>();
  if (!product) {
    why = "the angles are not positions times inverse frequencies";
    return failure();
  }
  for (auto [positions, constant] :
       {std::pair(product.getLhs(), product.getRhs()),
        std::pair(product.getRhs(), product.getLhs())}) {
    std::optional<Positions> p = matchPositions(positions);
    std::optional<SmallVector<double>> inv = constantValues(constant);
    if (!p || !inv)
      continue;
    // Positions along the second-to-last axis of F, frequencies along its
    // last: F[s, i] = p_s * inv_freq[i].
    RankedTensorType pType = typeOf(positions), fType = typeOf(constant);
    if (pType.getRank() < 2 || p->carrier != pType.getRank() - 2 ||
        onlyNonUnitDim(fType) != fType.getRank() - 1 ||
        static_cast<int64_t>(inv->size()) * 2 != R) {
      why = "the angles are not an outer product of positions [S, 1] and R/2 "
            "inverse frequencies";
      return failure();
    }
    if (!attune::provablySameDim(p->like, p->axis, x, 2)) {
      why = "the positions count another length than the sequence axis of the "
            "rotated tensor";
      return failure();
    }
    FailureOr<double> base = inverseFrequencyBase(*inv, R, why);
    if (failed(base))
      return failure();
    out.base = *base;
    out.offset = p->start;
    return success();
  }
  why = "the angles are not an arange of positions times a constant of "
        "inverse frequencies";
  return failure();
}

/// `x * cos(A) + rotate(x) * sin(A)` at `add`, in any operand order, with
/// rotate_half (split halves) or rotate_every_two (interleaved). Returns
/// failure with an empty `why` when `add` is not a rotation at all.
FailureOr<RopeMatch> matchRope(tfm::AddOp add, std::string &why) {
  if (typeOf(add.getResult()).getRank() != 4)
    return failure();
  for (auto [plain, rotated] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())}) {
    auto plainMul = plain.getDefiningOp<tfm::MulOp>();
    auto rotatedMul = rotated.getDefiningOp<tfm::MulOp>();
    if (!plainMul || !rotatedMul)
      continue;
    for (auto [partner, sinTable] : {std::pair(rotatedMul.getLhs(), rotatedMul.getRhs()),
                                     std::pair(rotatedMul.getRhs(), rotatedMul.getLhs())}) {
      std::optional<Rotation> rotation = matchRotateHalf(partner);
      if (!rotation)
        rotation = matchRotateEveryTwo(partner);
      if (!rotation)
        continue;
      Value x = rotation->x, cosTable;
      if (plainMul.getLhs() == x)
        cosTable = plainMul.getRhs();
      else if (plainMul.getRhs() == x)
        cosTable = plainMul.getLhs();
      else
        continue;
      // From here on it is a rotation: say why when it is not one tfm.rope
      // can be.
      RankedTensorType xType = typeOf(x);
      if (add.getType() != xType || plainMul.getType() != xType ||
          rotatedMul.getType() != xType) {
        why = "the cos and sin tables broadcast the rotated tensor to a new shape";
        return failure();
      }
      // Tables [..., S, R] broadcast over batch and heads: 1 elsewhere.
      RankedTensorType tableType = typeOf(cosTable);
      if (typeOf(sinTable) != tableType) {
        why = "the cos and sin tables have different shapes";
        return failure();
      }
      for (int64_t d = 0; d + 2 < tableType.getRank(); ++d)
        if (tableType.getDimSize(d) != 1) {
          why = "the cos and sin tables differ across batch rows or heads";
          return failure();
        }
      Value cosF = tableFrequencies<tfm::CosOp>(cosTable, rotation->interleaved);
      Value sinF = tableFrequencies<tfm::SinOp>(sinTable, rotation->interleaved);
      if (!cosF || cosF != sinF) {
        why = rotation->interleaved
                  ? "the tables are not cos and sin of one angle tensor with "
                    "each frequency repeated twice (the interleaved layout of "
                    "rotate_every_two)"
                  : "the tables are not cos and sin of one angle tensor "
                    "concat(F, F) (the split-halves layout of rotate_half)";
        return failure();
      }
      RopeMatch match;
      match.x = x;
      match.interleaved = rotation->interleaved;
      if (failed(matchFrequencies(cosF, x, match, why)))
        return failure();
      return match;
    }
  }
  return failure();
}

/// ALiBi: scores + m[h] * (j - i), or scores - m[h] * |j - i|.
struct AlibiMatch {
  Value scores;
  double maxBias = 8.0;
  bool symmetric = false;
};

/// The paper's slope of head h of n for `maxBias`: the alibi modifier's
/// bias at distance 1.
double paperSlope(double maxBias, int64_t n, int64_t h) {
  return modifiers::lookupModifier("alibi")->referenceBias(
      {{"max_bias", maxBias}, {"symmetric", 0.0}}, {}, n, h, 1);
}

/// j - i (sign +1), i - j (-1) or |j - i| (symmetric), from aranges of one
/// start along the keys (last axis) and the queries (the one before) of
/// scores [B, H, Sq, Sk].
LogicalResult matchDistance(Value v, Value scores, int &sign, bool &symmetric,
                            std::string &why) {
  symmetric = false;
  if (auto abs = v.getDefiningOp<tfm::AbsOp>()) {
    symmetric = true;
    v = abs.getInput();
  }
  auto sub = v.getDefiningOp<tfm::SubOp>();
  if (!sub)
    return failure();
  std::optional<Positions> a = matchPositions(sub.getLhs());
  std::optional<Positions> b = matchPositions(sub.getRhs());
  if (!a || !b)
    return failure();
  int64_t rankA = typeOf(sub.getLhs()).getRank(), rankB = typeOf(sub.getRhs()).getRank();
  bool aKeys = a->carrier == rankA - 1, bKeys = b->carrier == rankB - 1;
  bool aQueries = rankA >= 2 && a->carrier == rankA - 2;
  bool bQueries = rankB >= 2 && b->carrier == rankB - 2;
  if (aKeys && bQueries)
    sign = 1;
  else if (aQueries && bKeys)
    sign = -1;
  else {
    why = "the distance is not a difference of key positions (last axis) and "
          "query positions (the axis before)";
    return failure();
  }
  const Positions &keys = sign > 0 ? *a : *b, &queries = sign > 0 ? *b : *a;
  if (keys.start != queries.start) {
    why = "the key and query positions start at different offsets";
    return failure();
  }
  if (!attune::provablySameDim(keys.like, keys.axis, scores, 3) ||
      !attune::provablySameDim(queries.like, queries.axis, scores, 2)) {
    why = "the positions count other lengths than the scores' query and key axes";
    return failure();
  }
  // tfm's modifiers align queries to the end of the keys (j - (i + Sk -
  // Sq)); the graph's j - i is that distance only when Sq = Sk.
  if (!attune::provablySameDim(scores, 2, scores, 3)) {
    why = "the query and key lengths may differ, and the graph's j - i is not "
          "aligned to the end of the keys as tfm's modifiers are";
    return failure();
  }
  return success();
}

FailureOr<AlibiMatch> matchAlibi(tfm::AddOp add, std::string &why) {
  RankedTensorType type = typeOf(add.getResult());
  if (type.getRank() != 4 || ShapedType::isDynamic(type.getDimSize(1)))
    return failure();
  const int64_t heads = type.getDimSize(1);
  for (auto [scores, bias] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())}) {
    if (scores.getType() != type)
      continue;
    Value term = stripReshapes(bias);
    double sign = 1.0;
    if (Value negated = matchNegation(term)) {
      sign = -1.0;
      term = stripReshapes(negated);
    }
    auto product = term.getDefiningOp<tfm::MulOp>();
    if (!product)
      continue;
    for (auto [slopes, distance] : {std::pair(product.getLhs(), product.getRhs()),
                                    std::pair(product.getRhs(), product.getLhs())}) {
      std::optional<SmallVector<double>> m = constantValues(slopes);
      if (!m)
        continue;
      int distanceSign = 1;
      bool symmetric = false;
      std::string distanceWhy;
      if (failed(matchDistance(distance, scores, distanceSign, symmetric, distanceWhy))) {
        if (!distanceWhy.empty()) {
          why = distanceWhy;
          return failure();
        }
        continue;
      }
      // The slopes run along the heads: the product's axis 1 when aligned
      // with the rank-4 scores, 1 everywhere else.
      RankedTensorType slopeType = typeOf(slopes);
      int64_t productRank = typeOf(product.getResult()).getRank();
      int64_t headAxis = 1 - (4 - productRank) - (productRank - slopeType.getRank());
      if (static_cast<int64_t>(m->size()) != heads ||
          (heads > 1 && onlyNonUnitDim(slopeType) != headAxis) ||
          typeOf(bias).getRank() > 4) {
        why = "the slopes are not one per head along the heads axis";
        return failure();
      }
      // bias_h = sign * m_h * f(delta): the paper's m_h (j - i), or
      // -m_h |j - i| when symmetric.
      double direction = symmetric ? -1.0 : double(distanceSign);
      SmallVector<double> slope = llvm::map_to_vector(
          *m, [&](double x) { return sign * direction * x; });
      int64_t c = 1;
      while (c * 2 <= heads)
        c *= 2;
      if (!(slope[0] > 0 && slope[0] < 1)) {
        why = llvm::formatv("the slopes are not the paper's geometric sequence "
                            "(head 0's is {0} for a bias of that direction)",
                            g(slope[0]))
                  .str();
        return failure();
      }
      double maxBias = -double(c) * std::log2(slope[0]);
      for (int64_t h = 0; h < heads; ++h)
        if (!closeConstants(slope[h], paperSlope(maxBias, heads, h))) {
          why = llvm::formatv("head {0}'s slope is {1}, not {2} as in the paper's "
                              "geometric sequence for {3} heads with head 0's slope "
                              "(max_bias {4})",
                              h, g(slope[h]), g(paperSlope(maxBias, heads, h)), heads,
                              g(maxBias))
                    .str();
          return failure();
        }
      AlibiMatch match;
      match.scores = scores;
      // max_bias is an integer in every model that uses ALiBi; snap the
      // value read back from f32 slopes so the IR shows 8, not 7.9999997.
      match.maxBias = std::fabs(maxBias - std::round(maxBias)) < 1e-4 ? std::round(maxBias)
                                                                      : maxBias;
      match.symmetric = symmetric;
      return match;
    }
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// T5: a table looked up by buckets computed from positions
//===----------------------------------------------------------------------===//

/// The positions a lookup's ids were computed from count the scores' query
/// and key axes, and those are one length: the graph's j - i is then the
/// distance tfm's modifiers use, j - (i + Sk - Sq).
LogicalResult checkAligned(const PositionFunction &ids, Value scores, std::string &why) {
  for (PositionFunction::Arange a : ids.aranges)
    if (!attune::provablySameDim(a.op.getLike(), a.op.getAxisAttr().getInt(), scores,
                                 a.query ? 2 : 3)) {
      why = "the positions count other lengths than the scores' query and key axes";
      return failure();
    }
  if (!attune::provablySameDim(scores, 2, scores, 3)) {
    why = "the query and key lengths may differ, and the graph's j - i is not "
          "aligned to the end of the keys as tfm's modifiers are";
    return failure();
  }
  return success();
}

struct T5Match {
  Value scores, table, rest;
  int64_t buckets = 0, maxDistance = 0;
  bool bidirectional = true;
};

/// The bucket T5 gives distance `delta` (compiler/modifiers' t5, read
/// through its reference with an identity table).
int64_t t5Bucket(const modifiers::ScoreModifier &t5, int64_t buckets,
                 int64_t maxDistance, bool bidirectional, int64_t delta,
                 const std::vector<double> &identity) {
  modifiers::ModifierParams params = {{"num_buckets", double(buckets)},
                                      {"max_distance", double(maxDistance)},
                                      {"bidirectional", bidirectional ? 1.0 : 0.0}};
  modifiers::ReferenceOperand table{identity.data(), {buckets, 1}};
  return static_cast<int64_t>(t5.referenceBias(params, {table}, 1, 0, delta));
}

/// The T5 parameters whose buckets are `observed` at distances -L..L
/// (observed[L + delta]), or a reason.
FailureOr<T5Match> fitT5(ArrayRef<int64_t> observed, int64_t L, int64_t buckets,
                         std::string &why) {
  const modifiers::ScoreModifier *t5 = modifiers::lookupModifier("t5");
  std::vector<double> identity(buckets);
  for (int64_t b = 0; b < buckets; ++b)
    identity[b] = double(b);
  for (bool bidirectional : {true, false}) {
    int64_t side = bidirectional ? buckets / 2 : buckets, exact = side / 2;
    if (bidirectional && buckets < 4)
      continue;
    // Buckets fall as max_distance grows, at every distance: the
    // max_distances that give each observed bucket form an interval, and
    // the answer is in all of them.
    int64_t lo = exact + 1, hi = int64_t(1) << 20;
    auto bucket = [&](int64_t md, int64_t delta) {
      return t5Bucket(*t5, buckets, md, bidirectional, delta, identity);
    };
    // The side whose distances grow: keys after the query when
    // bidirectional, before it when causal.
    const int64_t sign = bidirectional ? 1 : -1;
    for (int64_t n = exact; n <= L && lo <= hi; ++n) {
      attune::narrowToValue(lo, hi, observed[L + sign * n],
                            [&](int64_t md) { return bucket(md, sign * n); });
    }
    if (lo > hi)
      continue;
    // Any max_distance left gives the same buckets up to L; if they
    // saturate by then, at every distance. The roundest is what a model's
    // config says (128, not 121).
    int64_t best = attune::roundestIn(lo, hi);
    bool saturated = bucket(best, sign * L) == side - 1 + (bidirectional ? side : 0);
    bool matches = saturated;
    for (int64_t delta = -L; matches && delta <= L; ++delta)
      matches = bucket(best, delta) == observed[L + delta];
    if (!matches)
      continue;
    T5Match match;
    match.buckets = buckets;
    match.maxDistance = best;
    match.bidirectional = bidirectional;
    return match;
  }
  why = llvm::formatv("the bucket ids are a function of j - i but not T5's for "
                      "{0} buckets (bidirectional or causal) and any max_distance "
                      "up to {1}",
                      buckets, L)
            .str();
  return failure();
}

/// The distances the pass reads bucket ids at: T5 saturates by its
/// max_distance (128 in every released checkpoint).
constexpr int64_t kT5ProbeDistance = 4096;

/// scores + bias, bias[b, h, i, j] = table[ids(i, j), h] with ids computed
/// from positions only: an embedding of the table by the ids, its last
/// axis (the heads) moved to axis 1 by a transpose, reshapes adding unit
/// axes. Either operand of the add may be a sum whose one term is that
/// bias (Hugging Face adds the mask to the position bias first).
FailureOr<T5Match> matchT5(tfm::AddOp add, std::string &why) {
  RankedTensorType type = typeOf(add.getResult());
  if (type.getRank() != 4 || ShapedType::isDynamic(type.getDimSize(1)))
    return failure();
  auto lookupOf = [&](Value bias) -> tfm::EmbeddingOp {
    // Axis meanings from the lookup's result [..., Sq, Sk, H] to the bias,
    // which must end [H, Sq, Sk] with every other axis 1.
    enum Meaning { Unit, Query, Key, Head };
    Value v = bias;
    SmallVector<Value> chain;
    while (isa_and_nonnull<tfm::ReshapeOp, tfm::TransposeOp>(v.getDefiningOp())) {
      chain.push_back(v);
      v = v.getDefiningOp()->getOperand(0);
    }
    auto lookup = v.getDefiningOp<tfm::EmbeddingOp>();
    if (!lookup)
      return {};
    RankedTensorType ids = typeOf(lookup.getIds());
    if (ids.getRank() < 2)
      return {};
    SmallVector<Meaning> meaning;
    for (int64_t d = 0; d < ids.getRank(); ++d)
      meaning.push_back(d == ids.getRank() - 2 ? Query : d == ids.getRank() - 1 ? Key : Unit);
    meaning.push_back(Head);
    for (Value step : llvm::reverse(chain)) {
      if (auto t = step.getDefiningOp<tfm::TransposeOp>()) {
        SmallVector<Meaning> permuted;
        for (int64_t p : t.getPermutation())
          permuted.push_back(meaning[p]);
        meaning = permuted;
        continue;
      }
      // A reshape keeps the non-unit axes in order.
      SmallVector<Meaning> kept;
      for (auto [d, m] : llvm::enumerate(meaning))
        if (typeOf(step.getDefiningOp()->getOperand(0)).getDimSize(d) != 1)
          kept.push_back(m);
      RankedTensorType out = typeOf(step);
      meaning.assign(out.getRank(), Unit);
      size_t next = 0;
      for (int64_t d = 0; d < out.getRank(); ++d)
        if (out.getDimSize(d) != 1) {
          if (next == kept.size())
            return {};
          meaning[d] = kept[next++];
        }
      if (next != kept.size())
        return {};
    }
    RankedTensorType biasType = typeOf(bias);
    int64_t r = biasType.getRank();
    for (int64_t d = 0; d < r; ++d) {
      Meaning want = d == r - 3 ? Head : d == r - 2 ? Query : d == r - 1 ? Key : Unit;
      bool unitHere = biasType.getDimSize(d) == 1;
      if (meaning[d] != want && !(unitHere && (meaning[d] == Unit || want == Unit)))
        return {};
    }
    return lookup;
  };
  for (auto [scores, bias] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())}) {
    if (scores.getType() != type)
      continue;
    // The bias itself, or one term of a sum.
    SmallVector<std::pair<Value, Value>> candidates = {{bias, Value()}};
    if (auto sum = bias.getDefiningOp<tfm::AddOp>())
      candidates.append({{sum.getLhs(), sum.getRhs()}, {sum.getRhs(), sum.getLhs()}});
    for (auto [term, rest] : candidates) {
      tfm::EmbeddingOp lookup = lookupOf(term);
      if (!lookup)
        continue;
      RankedTensorType table = typeOf(lookup.getTable());
      if (table.getDimSize(1) != type.getDimSize(1) ||
          table.getElementType() != type.getElementType() ||
          ShapedType::isDynamic(table.getDimSize(0))) {
        why = "the looked-up table is not [buckets, H] of the scores' heads and type";
        return failure();
      }
      // Bucket ids at j = i + delta for query L (every delta), then for
      // queries 0, 3 and 1021 at every delta that leaves j >= 0: the same at
      // each, or they are not a function of the distance.
      const int64_t L = kT5ProbeDistance;
      PositionFunction ids;
      SmallVector<int64_t> observed(2 * L + 1);
      for (int64_t i0 : {L, int64_t(0), int64_t(3), int64_t(1021)}) {
        for (int64_t delta = -std::min(L, i0); delta <= L; ++delta) {
          std::optional<double> id =
              ids.evaluate(lookup.getIds(), {i0, /*query=*/true}, {i0 + delta, false});
          if (!id) {
            why = ids.why;
            return failure();
          }
          int64_t bucket = static_cast<int64_t>(*id);
          if (i0 != L && bucket != observed[L + delta]) {
            why = "the bucket ids are not a function of the distance j - i";
            return failure();
          }
          observed[L + delta] = bucket;
        }
      }
      if (failed(checkAligned(ids, scores, why)))
        return failure();
      FailureOr<T5Match> match = fitT5(observed, L, table.getDimSize(0), why);
      if (failed(match))
        return failure();
      match->scores = scores;
      match->table = lookup.getTable();
      match->rest = rest;
      return match;
    }
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Shaw et al.: relative embeddings gathered by clipped distance
//===----------------------------------------------------------------------===//

/// What an axis of a tensor in an attention graph stands for. An axis of
/// size 1 is Unit whatever it came from.
enum class Axis : char { Unit, Batch, Head, Query, Key, Dim, ValueDim };
using Labels = SmallVector<Axis, 4>;

/// `labels` for the shape of `v`, with size-1 axes made Unit.
Labels labelled(Value v, ArrayRef<Axis> labels) {
  Labels out(labels);
  for (auto [d, size] : llvm::enumerate(typeOf(v).getShape()))
    if (size == 1)
      out[d] = Axis::Unit;
  return out;
}

/// The labels of `to`, computed from `from` by the reshapes and transposes
/// between them (`to`'s producers, followed through operand 0, must reach
/// `from`); a reshape may only add or drop unit axes.
std::optional<Labels> forwardLabels(Value from, Labels labels, Value to) {
  SmallVector<Operation *> chain;
  for (Value v = to; v != from;) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tfm::ReshapeOp, tfm::TransposeOp>(def))
      return std::nullopt;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  for (Operation *op : llvm::reverse(chain)) {
    if (auto t = dyn_cast<tfm::TransposeOp>(op)) {
      Labels permuted;
      for (int64_t p : t.getPermutation())
        permuted.push_back(labels[p]);
      labels = permuted;
      continue;
    }
    Labels kept;
    for (auto [d, label] : llvm::enumerate(labels))
      if (typeOf(op->getOperand(0)).getDimSize(d) != 1)
        kept.push_back(label);
    RankedTensorType out = typeOf(op->getResult(0));
    labels.assign(out.getRank(), Axis::Unit);
    size_t next = 0;
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (out.getDimSize(d) != 1) {
        if (next == kept.size())
          return std::nullopt;
        labels[d] = kept[next++];
      }
    if (next != kept.size())
      return std::nullopt;
  }
  return labels;
}

/// The first value up the reshapes and transposes from `v` (itself if none).
Value stripLayout(Value v) {
  while (isa_and_nonnull<tfm::ReshapeOp, tfm::TransposeOp>(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

/// t2t's `_relative_attention_inner(x, y, z, transpose)` term: the rows of x
/// [B, H, Sq, ·] (q or the probabilities) moved to a batch of queries,
/// multiplied per query by embeddings z [Sq, Sk, ·] gathered from a table,
/// and moved back: `term` [B, H, Sq, n] with n the key (transpose = true,
/// the score term) or the value dim. Returns the lookup.
tfm::EmbeddingOp matchRelativeTerm(Value term, Value x, bool scoreTerm) {
  auto product = stripLayout(term).getDefiningOp<tfm::MatmulOp>();
  if (!product || product.getTransposeA() || product.getTransposeB() != scoreTerm)
    return {};
  auto lookup = product.getRhs().getDefiningOp<tfm::EmbeddingOp>();
  if (!lookup || typeOf(lookup.getIds()).getRank() != 2 ||
      typeOf(product.getResult()).getRank() != 3)
    return {};
  // x's rows must reach the product as [Sq, heads, depth] and the lookup
  // is [Sq, Sk, n]; the product is then [Sq, heads, n].
  const Axis depth = scoreTerm ? Axis::Dim : Axis::Key;
  const Axis last = scoreTerm ? Axis::Key : Axis::ValueDim;
  std::optional<Labels> rows = forwardLabels(
      x, labelled(x, {Axis::Batch, Axis::Head, Axis::Query, depth}), product.getLhs());
  if (!rows || (*rows)[0] != Axis::Query || (*rows)[2] != depth ||
      llvm::is_contained(ArrayRef<Axis>{Axis::Query, Axis::Key, Axis::Dim}, (*rows)[1]))
    return {};
  std::optional<Labels> out = forwardLabels(
      product.getResult(),
      labelled(product.getResult(), {Axis::Query, (*rows)[1], last}), term);
  Labels want = labelled(term, {Axis::Batch, Axis::Head, Axis::Query, last});
  if (!out || *out != want || typeOf(term).getRank() != 4)
    return {};
  return lookup;
}

/// The K of ids(i, j) = clip(j - i, -K, K) + K, table rows 2K + 1, checked
/// as T5's ids are (PositionFunction), or a reason.
FailureOr<int64_t> clippedDistance(tfm::EmbeddingOp lookup, Value scores,
                                   StringRef table, std::string &why) {
  int64_t rows = typeOf(lookup.getTable()).getDimSize(0);
  if (ShapedType::isDynamic(rows) || rows % 2 == 0) {
    why = ("the relative " + table + " table has an even or dynamic number of "
           "rows, not 2K + 1").str();
    return failure();
  }
  const int64_t K = rows / 2, L = std::max<int64_t>(4 * K, 64);
  PositionFunction ids;
  for (int64_t i0 : {L, int64_t(0), int64_t(7)})
    for (int64_t delta = -std::min(L, i0); delta <= L; ++delta) {
      std::optional<double> id =
          ids.evaluate(lookup.getIds(), {i0, /*query=*/true}, {i0 + delta, false});
      if (!id) {
        why = ids.why;
        return failure();
      }
      if (*id != double(std::clamp<int64_t>(delta, -K, K) + K)) {
        why = llvm::formatv("the relative {0} table is looked up at row {1} for "
                            "j - i = {2}, not clip(j - i, -{3}, {3}) + {3}",
                            table, g(*id), delta, K)
                  .str();
        return failure();
      }
    }
  if (failed(checkAligned(ids, scores, why)))
    return failure();
  return K;
}

struct ShawMatch {
  tfm::AddOp scoreAdd, valueAdd;
  tfm::MatmulOp scores;
  Value keyTerm, valueTerm, probabilities, keyTable, valueTable;
  int64_t maxDistance = 0;
};

/// Shaw's value term at `add` = P V + term(P, Rv), and its score term on the
/// way from the softmax up to q k^T: logits = q k^T + term(q, Rk).
FailureOr<ShawMatch> matchShaw(tfm::AddOp add, std::string &why) {
  if (typeOf(add.getResult()).getRank() != 4)
    return failure();
  for (auto [pv, term] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    auto product = pv.getDefiningOp<tfm::MatmulOp>();
    auto softmax = product ? product.getLhs().getDefiningOp<tfm::SoftmaxOp>()
                           : tfm::SoftmaxOp();
    if (!softmax || product.getTransposeA() || product.getTransposeB() ||
        term.getType() != add.getType())
      continue;
    tfm::EmbeddingOp valueLookup = matchRelativeTerm(term, softmax.getResult(), false);
    if (!valueLookup)
      continue;
    // The score term, up the scores' chain of scales and masks.
    ShawMatch match;
    for (Value s = softmax.getInput(); !match.keyTerm;) {
      Operation *def = s.getDefiningOp();
      if (auto scoreAdd = dyn_cast_or_null<tfm::AddOp>(def)) {
        for (auto [xy, keyTerm] : {std::pair(scoreAdd.getLhs(), scoreAdd.getRhs()),
                                   std::pair(scoreAdd.getRhs(), scoreAdd.getLhs())}) {
          auto scores = xy.getDefiningOp<tfm::MatmulOp>();
          if (!scores || !scores.getTransposeB() || keyTerm.getType() != xy.getType())
            continue;
          if (tfm::EmbeddingOp keyLookup =
                  matchRelativeTerm(keyTerm, scores.getLhs(), /*scoreTerm=*/true)) {
            match.scoreAdd = scoreAdd;
            match.scores = scores;
            match.keyTerm = keyTerm;
            match.keyTable = keyLookup.getTable();
            FailureOr<int64_t> K = clippedDistance(keyLookup, xy, "key", why);
            if (failed(K))
              return failure();
            match.maxDistance = *K;
            break;
          }
        }
        if (match.keyTerm)
          break;
      }
      // Up through what exporters put between q k^T and the softmax.
      if (isa_and_nonnull<tfm::MulOp, tfm::DivOp, tfm::AddOp>(def)) {
        Value l = def->getOperand(0), r = def->getOperand(1);
        s = l.getType() == s.getType() && !splatValue(l) ? l : r;
      } else if (auto where = dyn_cast_or_null<tfm::WhereOp>(def)) {
        s = splatValue(where.getOnTrue()) ? where.getOnFalse() : where.getOnTrue();
      } else if (isa_and_nonnull<tfm::CausalMaskOp, tfm::ScoreBiasOp>(def)) {
        s = def->getOperand(0);
      } else {
        why = "the value term gathers relative embeddings (Shaw's), but no score "
              "term q . Rk[clip(j - i)] was found between the softmax and q k^T";
        return failure();
      }
    }
    FailureOr<int64_t> K = clippedDistance(valueLookup, match.scores.getResult(), "value", why);
    if (failed(K))
      return failure();
    if (*K != match.maxDistance) {
      why = llvm::formatv("the key and value tables clip at {0} and {1}; Shaw's "
                          "attention clips both at one K",
                          match.maxDistance, *K)
                .str();
      return failure();
    }
    Type element = typeOf(add.getResult()).getElementType();
    if (typeOf(match.keyTable).getElementType() != element ||
        typeOf(valueLookup.getTable()).getElementType() != element) {
      why = "the relative tables' element type differs from the attention's";
      return failure();
    }
    match.valueAdd = add;
    match.valueTerm = term;
    match.probabilities = softmax.getResult();
    match.valueTable = valueLookup.getTable();
    return match;
  }
  return failure();
}

struct RaiseEncodings final : attune::impl::RaiseEncodingsBase<RaiseEncodings> {
  using RaiseEncodingsBase::RaiseEncodingsBase;

  void runOnOperation() override {
    SmallVector<tfm::AddOp> adds;
    getOperation()->walk([&](tfm::AddOp op) { adds.push_back(op); });
    // Each add is tried as each encoding's root in turn; the first that
    // raises it, or recognises it and says why not, ends the search.
    for (tfm::AddOp add : adds)
      (void)(attempt(add, matchRope, &RaiseEncodings::raiseRope, "RoPE") ||
             attempt(add, matchAlibi, &RaiseEncodings::raiseAlibi, "ALiBi") ||
             attempt(add, matchT5, &RaiseEncodings::raiseT5, "T5 bias"));
    // Shaw's: matched from its value term (the output), which finds the
    // score term; after the loop above, whose patterns it does not overlap.
    SmallVector<tfm::AddOp> outputs;
    getOperation()->walk([&](tfm::AddOp op) { outputs.push_back(op); });
    for (tfm::AddOp add : outputs) {
      std::string why;
      FailureOr<ShawMatch> shaw = matchShaw(add, why);
      if (succeeded(shaw))
        raiseShaw(*shaw);
      else if (!why.empty())
        notRaised(add, "Shaw", why);
    }
    // DeBERTa's: from the top of its sum of q k^T and the two gathered
    // relative terms (RaiseDeberta.h); an add inside a larger sum of its
    // type is one of that sum's terms.
    SmallVector<tfm::AddOp> sums;
    getOperation()->walk([&](tfm::AddOp op) { sums.push_back(op); });
    for (tfm::AddOp add : sums) {
      if (add->use_empty() ||
          (add->hasOneUse() && isa<tfm::AddOp>(*add->user_begin()) &&
           add->user_begin()->getResult(0).getType() == add.getType()))
        continue;
      std::string why;
      FailureOr<attune::raise::DebertaMatch> deberta = attune::raise::matchDeberta(add, why);
      if (succeeded(deberta))
        raised(attune::raise::raiseDeberta(add, *deberta),
               deberta->maxPosition > 0
                   ? "DeBERTa: relative scores gathered by log-bucketed positions"
                   : "DeBERTa: relative scores gathered by relative positions");
      else if (!why.empty())
        notRaised(add, "DeBERTa", why);
    }
    // Partial rotary: rope(x[..., :R]) joined with x[..., R:].
    SmallVector<tfm::ConcatOp> concats;
    getOperation()->walk([&](tfm::ConcatOp op) { concats.push_back(op); });
    for (tfm::ConcatOp concat : concats)
      raisePartialRope(concat);
    eraseDeadOps();
  }

  /// Raises `add` when `match` matches it; true when it matched or had the
  /// encoding's structure (a remark then says why it was not raised).
  template <typename Match>
  bool attempt(tfm::AddOp add, FailureOr<Match> (*match)(tfm::AddOp, std::string &),
               void (RaiseEncodings::*raise)(tfm::AddOp, const Match &),
               StringRef encoding) {
    std::string why;
    FailureOr<Match> found = match(add, why);
    if (succeeded(found))
      (this->*raise)(add, *found);
    else if (!why.empty())
      notRaised(add, encoding, why);
    return succeeded(found) || !why.empty();
  }

  /// A remark, and the reason on the op for -tfm-fuse-attention's report.
  void notRaised(Operation *op, StringRef encoding, const std::string &why) {
    op->emitRemark() << encoding << " not raised: " << why;
    op->setAttr(attune::kNotRaisedAttr,
                StringAttr::get(op->getContext(), encoding + ": " + why));
    ++numNotRaised;
  }

  /// Says on a raised op which spelling it came from, for the report.
  void raised(Operation *op, StringRef from) {
    op->setAttr(attune::kRaisedFromAttr, StringAttr::get(op->getContext(), from));
    ++numRaised;
  }

  void raiseRope(tfm::AddOp add, const RopeMatch &match) {
    OpBuilder builder(add);
    Builder b(add.getContext());
    auto rope = tfm::RopeOp::create(
        builder, add.getLoc(), add.getType(), match.x, /*align=*/Value(),
        b.getF64FloatAttr(match.base), /*rotary_dims=*/IntegerAttr(),
        b.getBoolAttr(match.interleaved), b.getI64IntegerAttr(match.offset),
        /*scaling=*/DictionaryAttr());
    add.getResult().replaceAllUsesWith(rope.getResult());
    raised(rope, match.interleaved ? "RoPE: rotate_every_two" : "RoPE: rotate_half");
  }

  void raiseAlibi(tfm::AddOp add, const AlibiMatch &match) {
    OpBuilder builder(add);
    Builder b(add.getContext());
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("kind", b.getStringAttr("alibi")),
        b.getNamedAttr("max_bias", b.getF64FloatAttr(match.maxBias))};
    if (match.symmetric)
      entries.push_back(b.getNamedAttr("symmetric", b.getBoolAttr(true)));
    auto bias = tfm::ScoreBiasOp::create(
        builder, add.getLoc(), add.getType(), match.scores, /*query=*/Value(),
        /*key=*/Value(), /*modifier_operands=*/ValueRange(),
        b.getDictionaryAttr(entries), /*scale=*/FloatAttr());
    add.getResult().replaceAllUsesWith(bias.getResult());
    raised(bias, "ALiBi: slopes times an arange difference");
  }

  void raiseT5(tfm::AddOp add, const T5Match &match) {
    OpBuilder builder(add);
    Builder b(add.getContext());
    DictionaryAttr modifier = b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("t5")),
         b.getNamedAttr("num_buckets", b.getI64IntegerAttr(match.buckets)),
         b.getNamedAttr("max_distance", b.getI64IntegerAttr(match.maxDistance)),
         b.getNamedAttr("bidirectional", b.getBoolAttr(match.bidirectional))});
    Value biased = tfm::ScoreBiasOp::create(
        builder, add.getLoc(), add.getType(), match.scores, /*query=*/Value(),
        /*key=*/Value(), ValueRange{match.table}, modifier, /*scale=*/FloatAttr());
    // What else the graph added with the bias (the mask) stays an add.
    raised(biased.getDefiningOp(), "T5 bias: a table looked up by bucket ids");
    if (match.rest)
      biased = tfm::AddOp::create(builder, add.getLoc(), add.getType(), biased, match.rest);
    add.getResult().replaceAllUsesWith(biased);
  }

  /// The score term becomes tfm.score_bias content(q, k) (scaled by 1: it
  /// reads q as q k^T does), the value term tfm.score_values; fusion
  /// folds the pair into tfm.attention's shaw modifier.
  void raiseShaw(ShawMatch match) {
    Builder b(match.valueAdd.getContext());
    DictionaryAttr modifier =
        b.getDictionaryAttr({b.getNamedAttr("kind", b.getStringAttr("shaw")),
                             b.getNamedAttr("max_distance", b.getI64IntegerAttr(match.maxDistance))});
    SmallVector<Value> tables = {match.keyTable, match.valueTable};
    OpBuilder builder(match.scoreAdd);
    Value xy = match.scores.getResult();
    auto bias = tfm::ScoreBiasOp::create(
        builder, match.scoreAdd.getLoc(), xy.getType(), xy, match.scores.getLhs(),
        match.scores.getRhs(), tables, modifier, b.getF64FloatAttr(1.0));
    match.scoreAdd.getResult().replaceAllUsesWith(bias.getResult());
    raised(bias, "Shaw: relative embeddings gathered by clipped distance");
    builder.setInsertionPoint(match.valueAdd);
    auto values = tfm::ScoreValuesOp::create(builder, match.valueAdd.getLoc(),
                                             match.valueTerm.getType(),
                                             match.probabilities, tables, modifier);
    match.valueTerm.replaceAllUsesWith(values.getResult());
  }

  /// concat(rope(x[..., :R]), x[..., R:]) on the last axis is
  /// rope(x) {rotary_dims = R}.
  void raisePartialRope(tfm::ConcatOp concat) {
    if (concat.getInputs().size() != 2 || typeOf(concat.getResult()).getRank() != 4 ||
        concat.getAxisAttr().getInt() != 3)
      return;
    auto rope = concat.getInputs()[0].getDefiningOp<tfm::RopeOp>();
    auto rest = concat.getInputs()[1].getDefiningOp<tfm::SliceOp>();
    if (!rope || !rest || rope.getAlign())
      return;
    auto rotated = rope.getInput().getDefiningOp<tfm::SliceOp>();
    if (!rotated)
      return;
    Value x = rotated.getInput();
    int64_t D = typeOf(x).getDimSize(3);
    attune::codegen::RopeSpec spec = tfm::ropeOf(rope);
    int64_t R = typeOf(rope.getInput()).getDimSize(3);
    if (spec.rotaryDims != R || !isLastAxisSlice(rotated, x, 0, R) ||
        !isLastAxisSlice(rest, x, R, D) || concat.getType() != typeOf(x))
      return;
    OpBuilder builder(concat);
    Builder b(concat.getContext());
    auto whole = tfm::RopeOp::create(
        builder, concat.getLoc(), concat.getType(), x, /*align=*/Value(),
        rope.getBaseAttr(), b.getI64IntegerAttr(R), rope.getInterleavedAttr(),
        rope.getPositionOffsetAttr(), rope.getScalingAttr());
    concat.getResult().replaceAllUsesWith(whole.getResult());
    raised(whole, "RoPE: partial rotary (a rotation of x[..., :R] joined with x[..., R:])");
  }

  /// The tables and rotations the raised ops replaced, now unused.
  void eraseDeadOps() {
    bool erased = true;
    while (erased) {
      erased = false;
      SmallVector<Operation *> dead;
      getOperation()->walk([&](Operation *op) {
        if (op->getNumResults() > 0 && op->use_empty() && isPure(op))
          dead.push_back(op);
      });
      for (Operation *op : dead) {
        op->erase();
        erased = true;
      }
    }
  }
};

} // namespace
