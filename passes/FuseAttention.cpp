//===- FuseAttention.cpp - raise decomposed attention to tfm.attention ----===//
//
// Exporters write attention as a chain of small ops: a batched matmul of q
// with a transposed k, a scale, one or more masks, a softmax and a matmul
// with v. This pass recognises that chain, as the exporters really write it,
// and replaces it with one tfm.attention, whose kernel never stores the
// [B, H, Sq, Sk] score matrix.
//
// The match starts at a tfm.softmax (every softmax is a "site") and walks
// *up* from its input, one op at a time, to the matmul of q and k. Nothing is
// rewritten until the whole chain has matched, so a site that does not match
// is left exactly as it was and gets a remark saying why; the one exception
// is an exact rewrite run first, P x V on heads merged into the batch lifted
// to rank 4 (liftMergedHeadsProduct).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmOps.h"
#include "dialects/tfm/TfmShapes.h"
#include "passes/DimProvenance.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

namespace attune {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;
using attune::createSplat;

namespace {

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// The value of a splat float constant (`arith.constant dense<c>`), the only
/// form of scale or fill value the pass folds into attributes: anything else
/// may vary per element and cannot become a scalar attribute.
std::optional<double> getSplatFloat(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// True when `fill` masks a score out: -inf, the -1e9 that PyTorch code writes
/// by hand, or the lowest finite value of the element type (Hugging Face's
/// `torch.finfo(dtype).min`, which is only -65504 in f16).
bool isMaskingFill(double fill, Type elementType) {
  if (std::isinf(fill))
    return fill < 0;
  if (fill <= -1e9)
    return true;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat lowest =
        APFloat::getLargest(floatType.getFloatSemantics(), /*Negative=*/true);
    return fill <= lowest.convertToDouble();
  }
  return false;
}

/// `%g`: short, and exact for the fills and scales people write.
std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Two dimensions that are equal when static, or both dynamic. Treating two
/// `?` as equal is what lets dynamic-sequence models fuse at all; a mismatch
/// there is a malformed model that the runtime shape checks reject.
bool sameDim(int64_t a, int64_t b) { return a == b; }

/// True when a mask op with result type `result` keeps the scores of type
/// `chain` as they are, only pinning dimensions the scores left `?` (a static
/// mask or key padding length against a dynamic sequence). Pinned key
/// lengths are fine; pinned B, H or Sq reach the result, and the rewrite
/// refuses those once it sees the fused type. A static dimension that
/// changes is a broadcast that grows the scores, which the fused op cannot
/// express.
bool onlyRefines(Type chain, Type result) {
  auto from = cast<RankedTensorType>(chain);
  auto to = cast<RankedTensorType>(result);
  if (from.getElementType() != to.getElementType() ||
      from.getRank() != to.getRank())
    return false;
  return llvm::all_of(llvm::zip_equal(from.getShape(), to.getShape()),
                      [](auto dims) {
                        auto [before, after] = dims;
                        return ShapedType::isDynamic(before) || before == after;
                      });
}

/// True when `value` is computed, through the ops the walk below understands,
/// from a tfm.matmul: that side of a tfm.add is the scores, the other the
/// mask. The depth bound keeps the search small on long chains.
bool reachesMatmul(Value value, unsigned depth = 0) {
  if (depth > 8)
    return false;
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  return llvm::TypeSwitch<Operation *, bool>(def)
      .Case<tfm::MatmulOp>([](auto) { return true; })
      .Case<tfm::AddOp, tfm::MulOp, tfm::DivOp>([&](auto op) {
        return reachesMatmul(op.getLhs(), depth + 1) ||
               reachesMatmul(op.getRhs(), depth + 1);
      })
      .Case<tfm::WhereOp>([&](tfm::WhereOp op) {
        return reachesMatmul(op.getOnTrue(), depth + 1) ||
               reachesMatmul(op.getOnFalse(), depth + 1);
      })
      .Case<tfm::CausalMaskOp, tfm::ScoreBiasOp, tfm::TanhOp>([&](auto op) {
        return reachesMatmul(op.getInput(), depth + 1);
      })
      .Default([](Operation *) { return false; });
}

/// `[B, Sk] -> [B, 1, 1, Sk]`: the reshape Hugging Face models apply to their
/// `attention_mask` before masking the scores. Returns the `[B, Sk]` tensor,
/// which becomes the fused op's `key_padding_mask`.
Value matchKeyPaddingCondition(Value condition, ArrayRef<int64_t> scores) {
  auto reshape = condition.getDefiningOp<tfm::ReshapeOp>();
  if (!reshape)
    return {};
  auto inputType = cast<RankedTensorType>(reshape.getInput().getType());
  auto resultType = cast<RankedTensorType>(reshape.getType());
  if (inputType.getRank() != 2 || resultType.getRank() != 4)
    return {};
  ArrayRef<int64_t> in = inputType.getShape();
  ArrayRef<int64_t> out = resultType.getShape();
  if (!sameDim(out[0], in[0]) || out[1] != 1 || out[2] != 1 ||
      !sameDim(out[3], in[1]))
    return {};
  // A [1, Sk] mask shared by a batch of B > 1 is not a per-batch key padding
  // mask; it stays an additive mask.
  if (!sameDim(in[0], scores[0]) || !sameDim(in[1], scores[3]))
    return {};
  return reshape.getInput();
}

/// True when `condition` is a constant that masks exactly the keys after
/// each query (`j > i + (Sk - Sq)`): GPT-2's `bias[:, :, :S, :S]` buffer, or
/// `triu(ones, 1)` for masked_fill. Such a mask is `causal`, which the kernel
/// evaluates from indices instead of reading an [Sq, Sk] tensor.
bool isCausalCondition(Value condition, ArrayRef<int64_t> scores,
                       bool maskedWhereNonzero) {
  DenseIntElementsAttr attr;
  if (!matchPattern(condition, m_Constant(&attr)))
    return false;
  auto type = cast<RankedTensorType>(attr.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  if (rank < 2 || ShapedType::isDynamic(scores[2]) ||
      ShapedType::isDynamic(scores[3]) || shape[rank - 2] != scores[2] ||
      shape[rank - 1] != scores[3])
    return false;
  // Leading dimensions of 1 only: one pattern shared by every batch and head.
  if (llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  int64_t queries = scores[2], keys = scores[3];
  auto values = attr.getValues<APInt>();
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j) {
      bool nonzero = !values[i * keys + j].isZero();
      bool masked = maskedWhereNonzero ? nonzero : !nonzero;
      if (masked != (j > i + (keys - queries)))
        return false;
    }
  return true;
}

/// Reshapes `value` to rank 4 by adding leading 1s, the rank tfm.attention's
/// `mask` operand is written with.
Value padToRank4(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 4)
    return value;
  SmallVector<int64_t> shape(4 - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  return tfm::ReshapeOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value);
}

/// P x V on heads merged into the batch, as Hugging Face's DeBERTa (and
/// other exports of bmm-based attention) write it:
/// bmm(P.view(B*H, Sq, Sk), v [B*H, Sk, Dv]), viewed back as [B, H, Sq, Dv].
/// Rewritten to the same product on rank-4 views, matmul(P, v.view(B, H,
/// Sk, Dv)), the form the matcher reads; each user of the old product gets
/// its view of the new one (none, for the view back). Exact: a batched
/// product is one product per batch row, and the views keep the rows in
/// order.
void liftMergedHeadsProduct(tfm::SoftmaxOp softmax) {
  Value probs = softmax.getResult();
  auto type = cast<RankedTensorType>(probs.getType());
  if (type.getRank() != 4 || !probs.hasOneUse())
    return;
  auto view = dyn_cast<tfm::ReshapeOp>(*probs.getUsers().begin());
  if (!view || !view->hasOneUse())
    return;
  ArrayRef<int64_t> p = type.getShape(), merged = view.getType().getShape();
  if (merged.size() != 3 || ShapedType::isDynamic(p[0]) || ShapedType::isDynamic(p[1]) ||
      merged[0] != p[0] * p[1] || merged[1] != p[2] || merged[2] != p[3])
    return;
  auto product = dyn_cast<tfm::MatmulOp>(*view->getUsers().begin());
  if (!product || product.getLhs() != view.getResult() || product.getTransposeA() ||
      product.getTransposeB())
    return;
  auto valueType = cast<RankedTensorType>(product.getRhs().getType());
  ArrayRef<int64_t> v = valueType.getShape();
  OpBuilder builder(product);
  Location loc = product.getLoc();
  Value value = attune::reshapeTo(
      builder, loc, product.getRhs(),
      RankedTensorType::get({p[0], p[1], v[1], v[2]}, valueType.getElementType()));
  Value lifted = tfm::MatmulOp::create(
      builder, loc, RankedTensorType::get({p[0], p[1], p[2], v[2]}, valueType.getElementType()),
      probs, value, builder.getBoolAttr(false), builder.getBoolAttr(false));
  for (Operation *user : llvm::make_early_inc_range(product->getUsers()))
    if (auto back = dyn_cast<tfm::ReshapeOp>(user)) {
      OpBuilder at(back);
      back.getResult().replaceAllUsesWith(attune::reshapeTo(at, loc, lifted, back.getType()));
      back.erase();
    }
  if (!product->use_empty())
    product.getResult().replaceAllUsesWith(
        attune::reshapeTo(builder, loc, lifted, product.getType()));
  Value oldValue = product.getRhs();
  product.erase();
  view.erase();
  // The [B*H, Sk, Dv] view of v, when nothing else reads it.
  while (auto reshape = oldValue.getDefiningOp<tfm::ReshapeOp>()) {
    if (!reshape->use_empty())
      break;
    oldValue = reshape.getInput();
    reshape.erase();
  }
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

/// One mask term between the scores matmul and the softmax, as it will be
/// added to the fused op's additive `mask`.
struct MaskTerm {
  /// A float additive mask, or the condition of a tfm.where.
  Value value;
  /// `value` is a tfm.where condition rather than an additive mask.
  bool isCondition = false;
  /// For conditions: the score is masked where the condition is nonzero
  /// (masked_fill) rather than where it is zero.
  bool maskedWhereNonzero = false;
  /// For conditions: the fill value the model used.
  double fill = 0;
};

/// Everything a matched site turns into.
struct AttentionMatch {
  tfm::SoftmaxOp softmax;
  tfm::MatmulOp probsTimesValue;
  /// The op whose result the fused op replaces: probsTimesValue, or the
  /// tfm.add of it and a modifier's value term.
  Operation *root = nullptr;
  /// A modifier's value term on the output (Shaw's), when the graph has one.
  tfm::ScoreValuesOp valueTerm;
  Value query, key, value;
  /// When not empty, the fused op's k is `tfm.transpose(key)` with this
  /// permutation, built by the rewrite (k was transposed into [B, H, D, Sk]
  /// by one permutation from another layout, as GPT-2's `permute(0, 2, 3, 1)`
  /// does).
  SmallVector<int64_t> keyPermutation;
  double scale = 1.0;
  bool causal = false;
  Value keyPaddingMask;
  SmallVector<MaskTerm> masks;
  /// Score modifiers' biases, nearest the softmax first (the walk's order),
  /// each with the product of the scales between it and the softmax (1
  /// unless the modifier only has content terms, which may be scaled along
  /// with the scores).
  SmallVector<std::pair<tfm::ScoreBiasOp, double>> modifiers;
  /// The splat scales peelScale took off q and off k before their matmul.
  double queryScale = 1.0, keyScale = 1.0;
  /// The `rope` of the fused op, when q and k were rotated alike.
  DictionaryAttr rope;
  /// The fused op's softcap: c of `c * tanh(x / c)` on the scaled scores,
  /// 0 for none.
  double softcap = 0;

  /// The shape of the fused op's k.
  SmallVector<int64_t> keyShape() const {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(key.getType()).getShape();
    if (keyPermutation.empty())
      return SmallVector<int64_t>(shape);
    return llvm::map_to_vector(keyPermutation,
                               [&](int64_t dim) { return shape[dim]; });
  }
};

/// Walks one softmax site. On failure `reason` says, in words a model author
/// understands, which op of the chain did not fit.
class SiteMatcher {
public:
  explicit SiteMatcher(tfm::SoftmaxOp softmax) { match.softmax = softmax; }

  LogicalResult run();

  AttentionMatch match;
  std::string reason;

private:
  LogicalResult fail(const llvm::Twine &why) {
    reason = why.str();
    return failure();
  }
  LogicalResult matchProbabilities();
  LogicalResult matchScores(tfm::MatmulOp &queryTimesKey);
  LogicalResult matchQueryKey(tfm::MatmulOp queryTimesKey);
  /// Content terms read the scores' own q and k; value terms are in the
  /// graph exactly when their modifier is.
  LogicalResult matchModifierTerms(tfm::MatmulOp queryTimesKey);
  LogicalResult checkShapes();

  /// Strips `tfm.mul`/`tfm.div` by splat constants off a q or k operand,
  /// folding them into the scale (q*c · k = c · (q·k)). Stops at a value
  /// with another user: that value is still needed, and the fused op can
  /// simply take it scaled.
  Value peelScale(Value operand, double &factor);

  RankedTensorType scoresType;
};

LogicalResult SiteMatcher::run() {
  scoresType = cast<RankedTensorType>(match.softmax.getInput().getType());
  int64_t rank = scoresType.getRank();
  int64_t axis = match.softmax.getAxis();
  if (axis < 0)
    axis += rank;
  if (rank != 4)
    return fail("the scores are rank " + llvm::Twine(rank) +
                ", expected rank 4 [B, H, Sq, Sk]");
  if (axis != rank - 1)
    return fail("softmax is not over the last axis (axis " + llvm::Twine(axis) +
                " of rank 4 scores)");
  if (failed(matchProbabilities()))
    return failure();
  tfm::MatmulOp queryTimesKey;
  if (failed(matchScores(queryTimesKey)) ||
      failed(matchQueryKey(queryTimesKey)) || failed(matchModifierTerms(queryTimesKey)))
    return failure();
  return checkShapes();
}

LogicalResult SiteMatcher::matchModifierTerms(tfm::MatmulOp queryTimesKey) {
  bool valueTermFound = false;
  for (auto [bias, scaledAlong] : match.modifiers) {
    tfm::ResolvedModifier modifier;
    if (!tfm::parseModifier(bias.getModifier(), modifier).empty())
      return fail("tfm.score_bias has an invalid modifier");
    const std::string kind = modifier.definition->name();
    // Content terms read the rows the scores were computed from, scaled like
    // them: the fused op computes them from its own q and k and scale.
    if (bias.getQuery()) {
      if (bias.getQuery() != queryTimesKey.getLhs() ||
          bias.getKey() != queryTimesKey.getRhs() || !queryTimesKey.getTransposeB())
        return fail("the content terms of modifier '" + kind +
                    "' read other rows than the q and k of the scores");
      // The term reads q and k as the matmul does, after any scale on them,
      // and is scaled along with the scores by what follows it: on q's side
      // that is its own scale * the scale on q * scaledAlong, and the fused
      // op gives it match.scale (which also counts k's). Each side must come
      // out as the scores' scale. The graph's scale is a constant of the
      // element type: equal up to its rounding.
      double scale = bias.getScale() ? bias.getScale()->convertToDouble() : 0.0;
      Type elementType = scoresType.getElementType();
      double epsilon = elementType.isF32() ? 0x1p-23 : elementType.isF16() ? 0x1p-10 : 0x1p-7;
      for (const attune::modifiers::ContentTerm &term :
           modifier.definition->contentTerms(modifier.params)) {
        bool querySide = term.side == attune::modifiers::ContentTerm::Query;
        double effective =
            scale * scaledAlong * (querySide ? match.queryScale : match.keyScale);
        if (std::fabs(effective - match.scale) > 4 * epsilon * std::fabs(match.scale))
          return fail("the content terms of modifier '" + kind + "' are scaled by " +
                      formatNumber(effective) + ", the scores by " +
                      formatNumber(match.scale) + "; tfm.attention scales both alike");
      }
    }
    // A value term is in the fused op whenever the modifier is: the graph
    // must have it, with the same modifier and tables.
    if (modifier.definition->valueTerm(modifier.params)) {
      if (!match.valueTerm ||
          match.valueTerm.getModifier() != bias.getModifier() ||
          !llvm::equal(match.valueTerm.getModifierOperands(), bias.getModifierOperands()))
        return fail("modifier '" + kind + "' has a value term the graph does not "
                    "add to P x V (tfm.score_values with the same modifier)");
      valueTermFound = true;
    }
  }
  if (match.valueTerm && !valueTermFound)
    return fail("tfm.score_values adds a value term whose modifier is not on the "
                "scores");
  return success();
}

LogicalResult SiteMatcher::matchProbabilities() {
  Value probs = match.softmax.getResult();
  if (probs.use_empty())
    return fail("the probabilities are unused");
  // A modifier's value term (tfm.score_values) reads the probabilities too;
  // its sum with P x V is what the fused op computes.
  SmallVector<Operation *> users(probs.getUsers());
  if (users.size() == 2 && isa<tfm::ScoreValuesOp>(users[0]))
    std::swap(users[0], users[1]);
  if (users.size() == 2 && isa<tfm::ScoreValuesOp>(users[1]))
    match.valueTerm = cast<tfm::ScoreValuesOp>(users[1]);
  if (!probs.hasOneUse() && !match.valueTerm) {
    // Usually the model also returns its attention weights
    // (output_attentions=True), which the fused op never materialises.
    Operation *other = nullptr;
    for (Operation *user : probs.getUsers())
      if (!isa<tfm::MatmulOp>(user) || !other)
        other = user;
    return fail("the probabilities have another user, " +
                other->getName().getStringRef() +
                "; the fused op does not produce them");
  }
  Operation *user = users.front();
  auto matmul = dyn_cast<tfm::MatmulOp>(user);
  if (!matmul)
    return fail("probabilities feed " + user->getName().getStringRef() +
                ", not a matmul with V");
  if (matmul.getLhs() != probs)
    return fail("probabilities are the right operand of tfm.matmul, expected "
                "the left (P x V)");
  if (matmul.getTransposeA() || matmul.getTransposeB())
    return fail("the matmul of the probabilities with V transposes an operand");
  match.probsTimesValue = matmul;
  match.root = matmul;
  match.value = matmul.getRhs();
  if (match.valueTerm) {
    // P x V + score_values(P), in either order, each used only there.
    Value product = matmul.getResult(), term = match.valueTerm.getResult();
    auto sum = product.hasOneUse() ? dyn_cast<tfm::AddOp>(*product.getUsers().begin())
                                   : tfm::AddOp();
    if (!sum || !term.hasOneUse() || *term.getUsers().begin() != sum ||
        sum.getType() != matmul.getType())
      return fail("the modifier's value term (tfm.score_values) is not added "
                  "to P x V alone; the fused op computes only their sum");
    match.root = sum;
  }
  return success();
}

LogicalResult SiteMatcher::matchScores(tfm::MatmulOp &queryTimesKey) {
  ArrayRef<int64_t> scores = scoresType.getShape();
  Type elementType = scoresType.getElementType();
  // The product of the scales between `current` and the softmax: an additive
  // mask found above a scale is scaled along with the scores.
  double scaleBelow = 1.0;
  // The fill of a tfm.where with a finite fill (-1e9, finfo.min) already on
  // the chain above `current`, if any. The fused op adds its mask terms, but
  // such a where *replaces* the score: where another term below it masked
  // the same key too (-inf + fill, fill + fill), the sum is lower than the
  // fill, and a row with every key masked then averages over other keys than
  // the graph does (or outputs 0 instead of the uniform average).
  std::optional<double> finiteFillAbove;
  StringRef finiteFillOp; // "tfm.where" or "tfm.causal_mask"
  auto maskBelowFiniteFill = [&](StringRef what) -> LogicalResult {
    if (!finiteFillAbove)
      return success();
    return fail(finiteFillOp + " fills with " + formatNumber(*finiteFillAbove) +
                " after " + what + " masked the scores; the fused op would add the "
                "two, which differs from the fill on a row with every key masked");
  };
  // A causal pattern masked with a finite fill is `causal` (-inf) only if no
  // row can have every key masked: then each row keeps a finite score and
  // the fill's weight is 0 either way. That needs static Sq <= Sk and no
  // other term that masks (which could mask the rest of a row: the graph
  // then averages over the causally masked keys, the fused op outputs 0),
  // so it is decided once the whole chain is known. A constant condition
  // (GPT-2's where) can stay an additive mask instead; a tfm.causal_mask
  // cannot.
  SmallVector<MaskTerm> finiteCausalWheres;
  std::optional<double> finiteCausalMaskFill;
  bool maskingModifier = false;
  // Softcapping, A * tanh(B * s) (exporters write c * tanh(s * scale / c)):
  // the scales met before the tanh are A, the cap; all of them together, A
  // * B, are the op's scale. Above the tanh only scales may follow: a mask
  // or bias inside the tanh is capped with the scores, which tfm.attention
  // does not do.
  bool insideSoftcap = false;
  auto notInsideSoftcap = [&](StringRef what) -> LogicalResult {
    if (!insideSoftcap)
      return success();
    return fail(what + " is inside the softcap's tfm.tanh; tfm.attention caps the "
                "scaled q·k only and adds masks after");
  };
  auto decideFiniteCausal = [&]() -> LogicalResult {
    if (finiteCausalWheres.empty() && !finiteCausalMaskFill)
      return success();
    bool rowsKeepAKey = !ShapedType::isDynamic(scores[2]) &&
                        !ShapedType::isDynamic(scores[3]) && scores[2] <= scores[3];
    bool alone = match.masks.empty() && !match.keyPaddingMask && !maskingModifier;
    if (rowsKeepAKey && alone) {
      match.causal = true;
      return success();
    }
    if (finiteCausalMaskFill)
      return fail("tfm.causal_mask fills with " + formatNumber(*finiteCausalMaskFill) +
                  (rowsKeepAKey ? " and another term masks the scores"
                                : " and Sq may exceed Sk") +
                  ": a query that sees no other key averages v over the causally "
                  "masked ones, where causal attention outputs 0");
    llvm::append_range(match.masks, finiteCausalWheres);
    return success();
  };
  Value current = match.softmax.getInput();
  // The op of the chain that uses `current`; any other user blocks fusion.
  Operation *consumer = match.softmax;
  while (true) {
    Operation *def = current.getDefiningOp();
    if (!def)
      return fail("the scores are a block argument, not a matmul of q and k");
    if (!current.hasOneUse()) {
      auto users = current.getUsers();
      auto other = llvm::find_if(users, [&](Operation *u) { return u != consumer; });
      // Every use may be the consumer's own (an op reading the scores twice).
      if (other == users.end())
        return fail("the scores computed by " + def->getName().getStringRef() +
                    " are used more than once by " +
                    consumer->getName().getStringRef() +
                    "; the fused op reads them once");
      return fail("the scores computed by " + def->getName().getStringRef() +
                  " have another user, " + (*other)->getName().getStringRef() +
                  "; fusing would not remove them");
    }
    consumer = def;

    if (auto matmul = dyn_cast<tfm::MatmulOp>(def)) {
      queryTimesKey = matmul;
      return decideFiniteCausal();
    }

    if (auto tanh = dyn_cast<tfm::TanhOp>(def)) {
      if (insideSoftcap)
        return fail("the scores pass through two tfm.tanh; only one softcap fuses");
      if (scaleBelow <= 0)
        return fail("tfm.tanh on the scores is not multiplied back by a positive "
                    "constant, so it is no softcap (c * tanh(s / c))");
      for (auto &[bias, scale] : match.modifiers) {
        tfm::ResolvedModifier modifier;
        if (tfm::parseModifier(bias.getModifier(), modifier).empty() &&
            !modifier.definition->contentTerms(modifier.params).empty())
          return fail("a content score modifier follows the softcap; tfm.attention "
                      "caps q·k with its content terms, which it cannot split");
      }
      match.softcap = scaleBelow;
      insideSoftcap = true;
      scaleBelow = 1.0;
      current = tanh.getInput();
      continue;
    }

    if (auto mul = dyn_cast<tfm::MulOp>(def)) {
      Value chain;
      std::optional<double> factor = getSplatFloat(mul.getRhs());
      if (factor) {
        chain = mul.getLhs();
      } else if ((factor = getSplatFloat(mul.getLhs()))) {
        chain = mul.getRhs();
      } else {
        // A multiply by a 0/1 tensor before the softmax is how some code
        // "masks": it is not a mask (exp(0) = 1, the key keeps its weight),
        // and fusing it as one would change the result.
        Value other = reachesMatmul(mul.getLhs()) ? mul.getRhs() : mul.getLhs();
        DenseFPElementsAttr values;
        if (matchPattern(other, m_Constant(&values)) &&
            llvm::all_of(values.getValues<APFloat>(), [](const APFloat &x) {
              return x.isZero() || x.isExactlyValue(1.0);
            }))
          return fail("tfm.mul multiplies the scores by a 0/1 tensor before the "
                      "softmax, which is not a mask (a zeroed score still gets "
                      "weight exp(0)); mask with tfm.where(cond, s, -inf) instead");
        return fail("scale operand of tfm.mul is not a splat constant");
      }
      if (chain.getType() != mul.getType())
        return fail("tfm.mul broadcasts the scores to a new shape");
      match.scale *= *factor;
      scaleBelow *= *factor;
      current = chain;
      continue;
    }

    if (auto div = dyn_cast<tfm::DivOp>(def)) {
      std::optional<double> divisor = getSplatFloat(div.getRhs());
      if (!divisor) {
        if (getSplatFloat(div.getLhs()))
          return fail(
              "the scores are the divisor of tfm.div, not the dividend");
        return fail("scale operand of tfm.div is not a splat constant");
      }
      if (*divisor == 0)
        return fail("tfm.div divides the scores by zero");
      if (div.getLhs().getType() != div.getType())
        return fail("tfm.div broadcasts the scores to a new shape");
      match.scale /= *divisor;
      scaleBelow /= *divisor;
      current = div.getLhs();
      continue;
    }

    if (auto add = dyn_cast<tfm::AddOp>(def)) {
      if (failed(notInsideSoftcap("an additive mask")))
        return failure();
      bool lhsIsScores = reachesMatmul(add.getLhs());
      bool rhsIsScores = reachesMatmul(add.getRhs());
      if (lhsIsScores == rhsIsScores)
        return fail(lhsIsScores
                        ? "both operands of tfm.add are computed from a "
                          "matmul; cannot tell the scores from the mask"
                        : "neither operand of tfm.add is computed from a "
                          "matmul of q and k");
      Value chain = lhsIsScores ? add.getLhs() : add.getRhs();
      Value mask = lhsIsScores ? add.getRhs() : add.getLhs();
      if (!onlyRefines(chain.getType(), add.getType()))
        return fail("tfm.add broadcasts the scores to a new shape");
      auto maskShape = cast<RankedTensorType>(mask.getType()).getShape();
      if (!tfm::isBroadcastableTo(maskShape, scores))
        return fail("additive mask of shape " + tfm::formatShape(maskShape) +
                    " does not broadcast to the scores " +
                    tfm::formatShape(scores));
      if (scaleBelow != 1.0)
        return fail("the additive mask is scaled along with the scores "
                    "(tfm.add before the scale); tfm.attention scales only "
                    "q·k");
      if (failed(maskBelowFiniteFill("an additive mask")))
        return failure();
      match.masks.push_back({mask, /*isCondition=*/false});
      current = chain;
      continue;
    }

    if (auto where = dyn_cast<tfm::WhereOp>(def)) {
      if (failed(notInsideSoftcap("a tfm.where mask")))
        return failure();
      std::optional<double> onTrue = getSplatFloat(where.getOnTrue());
      std::optional<double> onFalse = getSplatFloat(where.getOnFalse());
      if (onTrue.has_value() == onFalse.has_value())
        return fail(onTrue ? "both branches of tfm.where are constants"
                           : "neither branch of tfm.where is a splat "
                             "constant fill value");
      // masked_fill(s, c, fill) is where(c, fill, s); the other polarity,
      // where(c, s, fill), keeps the scores where c is nonzero.
      bool maskedWhereNonzero = onTrue.has_value();
      double fill = onTrue ? *onTrue : *onFalse;
      Value chain = onTrue ? where.getOnFalse() : where.getOnTrue();
      if (!isMaskingFill(fill, elementType))
        return fail("tfm.where fills with " + formatNumber(fill) +
                    ", expected -inf or <= -1e9 (a mask)");
      if (!onlyRefines(chain.getType(), where.getType()))
        return fail("tfm.where broadcasts the scores to a new shape");
      Value condition = where.getCondition();
      auto conditionShape =
          cast<RankedTensorType>(condition.getType()).getShape();
      if (!tfm::isBroadcastableTo(conditionShape, scores))
        return fail(
            "mask condition of shape " + tfm::formatShape(conditionShape) +
            " does not broadcast to the scores " + tfm::formatShape(scores));
      if (scaleBelow <= 0)
        return fail("a non-positive scale after tfm.where turns its mask into "
                    "+inf");
      if (failed(maskBelowFiniteFill("another tfm.where")))
        return failure();
      // A fill that a score can shift (-1e9: f32's step there is 64) with
      // an additive mask or a bias after it: on a row whose every key the
      // where masks, the graph's scores are fill + term, weighted by the
      // term, while the fused op's mask writes the fill as finfo.min
      // (buildMask), which absorbs the term and makes the row uniform.
      // (-inf terms after it, key padding and causal, agree either way.)
      const bool absorbing = std::fabs(fill) >= 0x1p64;
      const bool termAfter =
          !match.modifiers.empty() ||
          llvm::any_of(match.masks, [](const MaskTerm &t) { return !t.isCondition; });
      if (!std::isinf(fill) && !absorbing && termAfter)
        return fail("tfm.where fills with " + formatNumber(fill) +
                    ", which a score can shift, and an additive term follows it; on a "
                    "row with every key masked the graph weights that term, the fused "
                    "op cannot");
      if (!std::isinf(fill)) {
        finiteFillAbove = fill;
        finiteFillOp = "tfm.where";
      }
      // Key padding and causal masks are -inf in tfm.attention, so a row with
      // every key masked outputs 0. With a finite fill (-1e9, finfo.min) the
      // graph averages such a row uniformly instead: that stays an additive
      // mask of the fill; a causal pattern with one, see decideFiniteCausal.
      Value keyPadding;
      if (!maskedWhereNonzero && !match.keyPaddingMask && std::isinf(fill))
        keyPadding = matchKeyPaddingCondition(condition, scores);
      bool causal =
          !keyPadding && isCausalCondition(condition, scores, maskedWhereNonzero);
      if (keyPadding)
        match.keyPaddingMask = keyPadding;
      else if (causal && std::isinf(fill))
        match.causal = true;
      else if (causal)
        finiteCausalWheres.push_back(
            {condition, /*isCondition=*/true, maskedWhereNonzero, fill});
      else
        match.masks.push_back(
            {condition, /*isCondition=*/true, maskedWhereNonzero, fill});
      current = chain;
      continue;
    }

    if (auto bias = dyn_cast<tfm::ScoreBiasOp>(def)) {
      if (failed(notInsideSoftcap("a score modifier")))
        return failure();
      // A bias term is added after the scale; content terms (q . table)
      // scale like q . k, so a modifier with only those may sit above it.
      tfm::ResolvedModifier modifier;
      bool biasTerm = !tfm::parseModifier(bias.getModifier(), modifier).empty() ||
                      modifier.definition->hasBias();
      if (scaleBelow != 1.0 && biasTerm)
        return fail("the score modifier's bias is scaled along with the "
                    "scores (tfm.score_bias before the scale); tfm.attention "
                    "adds it after the scale");
      // Only a modifier that masks (-inf outside a window: visibleDeltas
      // narrows the distances) can meet a finite fill above it; a bias
      // alone is absorbed by the fill as a score is.
      bool masking = true;
      if (tfm::parseModifier(bias.getModifier(), modifier).empty()) {
        // parseModifier leaves defaults out; visibleDeltas reads them.
        bool complete = true;
        for (const attune::modifiers::ParamSpec &param : modifier.definition->params())
          if (!modifier.params.count(param.name)) {
            if (param.defaultValue)
              modifier.params[param.name] = *param.defaultValue;
            else
              complete = false;
          }
        const int64_t wide = std::numeric_limits<int64_t>::max() / 4;
        int64_t lo = -wide, hi = wide;
        if (complete)
          modifier.definition->visibleDeltas(modifier.params, lo, hi);
        masking = !complete || lo != -wide || hi != wide;
      }
      if (masking && failed(maskBelowFiniteFill("a masking score modifier")))
        return failure();
      maskingModifier |= masking;
      match.modifiers.push_back({bias, scaleBelow});
      current = bias.getInput();
      continue;
    }

    if (auto causal = dyn_cast<tfm::CausalMaskOp>(def)) {
      if (failed(notInsideSoftcap("tfm.causal_mask")))
        return failure();
      double fill = causal.getValue().convertToDouble();
      if (!isMaskingFill(fill, elementType))
        return fail("tfm.causal_mask fills with " + formatNumber(fill) +
                    ", expected -inf or <= -1e9");
      if (scaleBelow <= 0)
        return fail("a non-positive scale after tfm.causal_mask turns its "
                    "mask into +inf");
      if (failed(maskBelowFiniteFill("tfm.causal_mask")))
        return failure();
      if (!std::isinf(fill)) {
        // Decided at the end of the chain (decideFiniteCausal). Like a
        // finite where, it replaces what a mask below it masked.
        finiteCausalMaskFill = fill;
        finiteFillAbove = fill;
        finiteFillOp = "tfm.causal_mask";
      } else {
        match.causal = true;
      }
      current = causal.getInput();
      continue;
    }

    return fail("the scores come from " + def->getName().getStringRef() +
                ", not a matmul of q and k");
  }
}

Value SiteMatcher::peelScale(Value operand, double &factor) {
  while (operand.hasOneUse()) {
    Operation *def = operand.getDefiningOp();
    if (auto mul = dyn_cast_or_null<tfm::MulOp>(def)) {
      Value other;
      std::optional<double> c = getSplatFloat(mul.getRhs());
      if (c)
        other = mul.getLhs();
      else if ((c = getSplatFloat(mul.getLhs())))
        other = mul.getRhs();
      if (!c || other.getType() != mul.getType())
        break;
      match.scale *= *c;
      factor *= *c;
      operand = other;
      continue;
    }
    if (auto div = dyn_cast_or_null<tfm::DivOp>(def)) {
      std::optional<double> divisor = getSplatFloat(div.getRhs());
      if (!divisor || *divisor == 0 || div.getLhs().getType() != div.getType())
        break;
      match.scale /= *divisor;
      factor /= *divisor;
      operand = div.getLhs();
      continue;
    }
    break;
  }
  return operand;
}

LogicalResult SiteMatcher::matchQueryKey(tfm::MatmulOp queryTimesKey) {
  if (queryTimesKey.getTransposeA())
    return fail("the matmul of q and k transposes q");
  match.query = peelScale(queryTimesKey.getLhs(), match.queryScale);
  Value key = peelScale(queryTimesKey.getRhs(), match.keyScale);
  if (!queryTimesKey.getTransposeB()) {
    auto transpose = key.getDefiningOp<tfm::TransposeOp>();
    if (!transpose)
      return fail("k is not transposed: expected tfm.matmul {transpose_b} or "
                  "a tfm.transpose of k into [B, H, D, Sk]");
    // kᵀ = transpose(x, p) gives k = transpose(x, p with its last two
    // entries swapped); with p = [0, 1, 3, 2] that is x itself.
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    if (permutation.size() != 4)
      return fail("the transpose of k is rank " +
                  llvm::Twine(permutation.size()) + ", expected rank 4");
    SmallVector<int64_t> keyPermutation{permutation[0], permutation[1],
                                        permutation[3], permutation[2]};
    key = peelScale(transpose.getInput(), match.keyScale);
    if (!llvm::equal(keyPermutation, ArrayRef<int64_t>{0, 1, 2, 3}))
      match.keyPermutation = std::move(keyPermutation);
  }
  match.key = key;

  // Grouped-query attention: exporters repeat each k/v head H / Hkv times so
  // that a plain batched matmul works; the fused op indexes the shared head
  // instead. Only when k and v are repeated alike, else the plain MHA form.
  // (Not through a k transpose the rewrite builds: the head axis of its
  // input is elsewhere; the repeated k is still correct there.)
  auto keyRepeat = match.key.getDefiningOp<tfm::RepeatInterleaveOp>();
  auto valueRepeat = match.value.getDefiningOp<tfm::RepeatInterleaveOp>();
  if (match.keyPermutation.empty() && keyRepeat && valueRepeat &&
      keyRepeat.getAxis() == 1 && valueRepeat.getAxis() == 1 &&
      keyRepeat.getRepeats() == valueRepeat.getRepeats()) {
    match.key = keyRepeat.getInput();
    match.value = valueRepeat.getInput();
  }

  // RoPE: q and k rotated alike (tfm.rope with equal parameters, q's
  // positions aligned to the end of k's) fold into the op's `rope`. Any
  // other rotation stays an op whose result the fused op takes as q or k.
  auto queryRope = match.query.getDefiningOp<tfm::RopeOp>();
  auto keyRope = match.key.getDefiningOp<tfm::RopeOp>();
  if (queryRope && keyRope && match.keyPermutation.empty() && !keyRope.getAlign()) {
    attune::codegen::RopeSpec q = tfm::ropeOf(queryRope), k = tfm::ropeOf(keyRope);
    bool same = q == k;
    // Without `align`, q's positions start where k's do, which is the
    // fused op's alignment when Sq = Sk: statically, or because both
    // lengths are one input's dimension (attune::provablySameDim).
    bool aligned = queryRope.getAlign() == keyRope.getInput() ||
                   (!queryRope.getAlign() &&
                    attune::provablySameDim(queryRope.getInput(), 2, keyRope.getInput(), 2));
    if (same && aligned) {
      match.rope = tfm::ropeDictionary(queryRope.getContext(), q);
      match.query = queryRope.getInput();
      match.key = keyRope.getInput();
    }
  }
  return success();
}

LogicalResult SiteMatcher::checkShapes() {
  auto check = [&](Value value, StringRef name,
                   StringRef layout) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 4)
      return fail(name + " is rank " + llvm::Twine(type.getRank()) +
                  ", expected rank 4 " + layout);
    if (type.getElementType() != scoresType.getElementType())
      return fail(name + " has a different element type from the scores");
    return success();
  };
  if (failed(check(match.query, "q", "[B, H, Sq, D]")) ||
      failed(check(match.key, "k", "[B, Hkv, Sk, D]")) ||
      failed(check(match.value, "v", "[B, Hkv, Sk, Dv]")))
    return failure();
  auto q = cast<RankedTensorType>(match.query.getType()).getShape();
  SmallVector<int64_t> k = match.keyShape();
  auto v = cast<RankedTensorType>(match.value.getType()).getShape();
  // The fused kernel is specialised on static head dims up to a bound;
  // anything else stays the unfused chain, which compiles.
  for (auto [name, dim] : {std::pair<StringRef, int64_t>{"q", q[3]}, {"v", v[3]}}) {
    if (ShapedType::isDynamic(dim))
      return fail("the head dim of " + name + " is dynamic; the fused kernel is "
                  "specialised on a static one");
    if (dim > attune::codegen::kMaxAttentionHeadDim)
      return fail("the head dim of " + name + " is " + llvm::Twine(dim) +
                  ", beyond the fused kernel's " +
                  llvm::Twine(attune::codegen::kMaxAttentionHeadDim));
  }
  if (!tfm::dimsAgree(q[3], k[3]))
    return fail("q and k have different head dimensions (" + llvm::Twine(q[3]) +
                " and " + llvm::Twine(k[3]) + ")");
  if (!tfm::dimsAgree(k[1], v[1]) || !tfm::dimsAgree(k[2], v[2]))
    return fail("k " + tfm::formatShape(k) + " and v " + tfm::formatShape(v) +
                " differ in heads or keys");
  if (!ShapedType::isDynamic(q[1]) && !ShapedType::isDynamic(k[1]) &&
      (k[1] == 0 || q[1] % k[1] != 0))
    return fail("q has " + llvm::Twine(q[1]) +
                " heads, not a multiple of k's " + llvm::Twine(k[1]));
  return success();
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// Folds the mask terms into the one additive mask tfm.attention takes.
/// A tfm.where mask becomes `where(c, fill, 0)` (or `where(c, 0, fill)`):
/// the masked scores get zero weight as before. A finite fill (-1e9) is
/// written as the lowest finite value of the element type instead: the
/// graph *replaces* a masked score by the fill, the fused op *adds* the
/// mask, and s + (-1e9) is not -1e9 once |s| reaches half its ulp (32), so
/// a row with every key masked, which the graph averages uniformly (every
/// score the same fill), came out weighted by the scores (the fuzzer's
/// seed 1127, graph 2546: 96 of 320 outputs off). s + finfo.min is
/// finfo.min for any score below 2^103, so that row is uniform again, and
/// a partly masked row gives its masked keys weight 0 either way. Result
/// types are inferred, so the sum of two masks has the shape the verifier
/// expects.
FailureOr<Value> buildMask(OpBuilder &builder, Location loc, Type elementType,
                           ArrayRef<MaskTerm> terms) {
  Value mask;
  for (const MaskTerm &term : terms) {
    Value additive = term.value;
    if (term.isCondition) {
      double fillValue = term.fill;
      if (!std::isinf(fillValue))
        fillValue = APFloat::getLargest(cast<FloatType>(elementType).getFloatSemantics(),
                                        /*Negative=*/true)
                        .convertToDouble();
      Value fill = createSplat(builder, loc, elementType, fillValue);
      Value zero = createSplat(builder, loc, elementType, 0.0);
      auto where = tfm::createChecked<tfm::WhereOp>(
          builder, loc, term.value, term.maskedWhereNonzero ? fill : zero,
          term.maskedWhereNonzero ? zero : fill);
      if (failed(where))
        return failure();
      additive = *where;
    }
    additive = padToRank4(builder, loc, additive);
    if (!mask) {
      mask = additive;
      continue;
    }
    auto sum = tfm::createChecked<tfm::AddOp>(builder, loc, mask, additive);
    if (failed(sum))
      return failure();
    mask = *sum;
  }
  return mask;
}

/// Remembers every op a builder inserts, so that a rewrite that gives up
/// after building part of its replacement can erase exactly that part.
struct InsertedOps final : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  void eraseAll() {
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    ops.clear();
  }
  SmallVector<Operation *> ops;
};

/// Replaces the matched chain with tfm.attention and erases whatever of the
/// chain (and of the q/k/v preparation it peeled) is now dead. Erased ops go
/// into `erased`, so the caller skips a site that went with them.
///
/// The fused op's type is inferred, not copied from the chain: the chain
/// takes B, H and Sq from its additive mask as well, the fused op from q, k,
/// v and the key padding mask only, so a mask that is static where q is `?`
/// makes the chain more static than the fused op. Such a site is left as it
/// was (everything built for it is erased again) and `reason` says why:
/// replacing a value with one of another type would break its users.
FailureOr<tfm::AttentionOp> rewrite(const AttentionMatch &match,
                                    llvm::DenseSet<Operation *> &erased,
                                    std::string &reason) {
  Operation *root = match.root;
  InsertedOps inserted;
  OpBuilder builder(root, &inserted);
  Location loc = match.softmax->getLoc();
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  Type elementType = rootType.getElementType();

  // The ops below are built from operands the matcher checked, so inference
  // should not fail; if it does, its message becomes the site's reason
  // instead of an error that would fail the pass.
  std::string diagnostic;
  FailureOr<tfm::AttentionOp> attention = failure();
  {
    ScopedDiagnosticHandler capture(root->getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && diagnostic.empty())
        diagnostic = diag.str();
      return success();
    });
    FailureOr<Value> mask = buildMask(builder, loc, elementType, match.masks);
    FailureOr<Value> key = match.key;
    if (succeeded(mask) && !match.keyPermutation.empty()) {
      auto transpose = tfm::createChecked<tfm::TransposeOp>(
          builder, loc, match.key,
          builder.getDenseI64ArrayAttr(match.keyPermutation));
      if (succeeded(transpose))
        key = transpose->getResult();
      else
        key = failure();
    }
    // Modifiers in the order the scores met them.
    SmallVector<Attribute> modifiers;
    SmallVector<Value> modifierOperands;
    for (tfm::ScoreBiasOp bias : llvm::make_first_range(llvm::reverse(match.modifiers))) {
      modifiers.push_back(bias.getModifier());
      llvm::append_range(modifierOperands, bias.getModifierOperands());
    }
    if (succeeded(mask) && succeeded(key))
      attention = tfm::createChecked<tfm::AttentionOp>(
          builder, loc, match.query, *key, match.value, *mask,
          match.keyPaddingMask, modifierOperands,
          builder.getF64FloatAttr(match.scale),
          match.causal ? builder.getBoolAttr(true) : BoolAttr(),
          modifiers.empty() ? ArrayAttr() : builder.getArrayAttr(modifiers),
          match.rope, /*layout=*/tfm::HeadLayoutKindAttr(), /*product_type=*/TypeAttr(),
          match.softcap > 0 ? builder.getF64FloatAttr(match.softcap) : FloatAttr());
  }
  if (failed(attention)) {
    inserted.eraseAll();
    reason = "the fused op does not verify: " + diagnostic;
    return failure();
  }
  if (attention->getType() != rootType) {
    reason = llvm::formatv("the fused result type {0} differs from the "
                           "decomposed one {1}",
                           tfm::formatShape(attention->getType().getShape()),
                           tfm::formatShape(rootType.getShape()))
                 .str();
    inserted.eraseAll();
    return failure();
  }
  root->getResult(0).replaceAllUsesWith(attention->getResult());

  // Erase backwards from the old root: an op goes only once nothing uses it,
  // so values the model still needs elsewhere survive.
  llvm::SetVector<Operation *> worklist;
  worklist.insert(root);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty() || !isPure(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (!erased.contains(def) && def != *attention)
          worklist.insert(def);
    erased.insert(op);
    op->erase();
  }
  return attention;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// One softmax site, for the remark and the JSON report.
struct SiteRecord {
  std::string location;
  bool fused = false;
  std::string reason;
  double scale = 0;
  bool causal = false;
  std::string mask;
};

/// What -tfm-raise-encodings did, as the ops it marked say (see
/// kRaisedFromAttr): one entry per encoding raised or left as written.
llvm::json::Array encodingRecords(Operation *root) {
  llvm::json::Array encodings;
  root->walk([&](Operation *op) {
    for (auto [name, raised] : {std::pair(attune::kRaisedFromAttr, true),
                                std::pair(attune::kNotRaisedAttr, false)})
      if (auto text = op->getAttrOfType<StringAttr>(name)) {
        auto [encoding, detail] = text.getValue().split(": ");
        encodings.push_back(llvm::json::Object{
            {"location", attune::reportLocation(op->getLoc())},
            {"encoding", encoding},
            {"raised", raised},
            {raised ? "from" : "reason", detail}});
      }
  });
  return encodings;
}

llvm::json::Value toJSON(ArrayRef<SiteRecord> records) {
  llvm::json::Array sites;
  int64_t fused = 0;
  for (const SiteRecord &record : records) {
    llvm::json::Object site{{"location", record.location},
                            {"fused", record.fused},
                            {"reason", record.reason}};
    // Scale, causal and mask describe the fused op; an unfused site has none.
    if (record.fused) {
      site["scale"] = record.scale;
      site["causal"] = record.causal;
      site["mask"] = record.mask;
      ++fused;
    } else {
      site["scale"] = nullptr;
      site["causal"] = nullptr;
      site["mask"] = nullptr;
    }
    sites.push_back(std::move(site));
  }
  return llvm::json::Object{
      {"sites", std::move(sites)},
      {"fused", fused},
      {"not_fused", static_cast<int64_t>(records.size()) - fused}};
}

struct FuseAttention final : attune::impl::FuseAttentionBase<FuseAttention> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    // Collect first: rewriting erases ops, and the report lists sites in IR
    // order, which keeps it deterministic.
    SmallVector<tfm::SoftmaxOp> sites;
    getOperation()->walk([&](tfm::SoftmaxOp op) { sites.push_back(op); });
    // First the one spelling the matcher reads through a rewrite.
    for (tfm::SoftmaxOp softmax : sites)
      liftMergedHeadsProduct(softmax);
    // Before rewriting: fusion folds the raised ops into tfm.attention.
    llvm::json::Array encodings = encodingRecords(getOperation());

    // Attention the model already wrote as tfm.attention (a frontend that
    // knows the architecture emits it so) is a site too, fused as written:
    // without it a report of an imported model would list no sites at all.
    SmallVector<SiteRecord> records;
    getOperation()->walk([&](tfm::AttentionOp op) {
      SiteRecord record;
      record.location = attune::reportLocation(op.getLoc());
      record.fused = true;
      record.reason = "written as tfm.attention";
      record.scale = op.getScale().convertToDouble();
      record.causal = op.getCausal();
      record.mask = op.getMask() && op.getKeyPaddingMask() ? "additive+key_padding"
                    : op.getMask()                         ? "additive"
                    : op.getKeyPaddingMask()               ? "key_padding"
                                                           : "none";
      records.push_back(std::move(record));
    });

    llvm::DenseSet<Operation *> erased;
    for (tfm::SoftmaxOp softmax : sites) {
      if (erased.contains(softmax))
        continue;
      SiteRecord record;
      record.location = attune::reportLocation(softmax.getLoc());
      SiteMatcher matcher(softmax);
      if (failed(matcher.run())) {
        record.reason = matcher.reason;
        softmax.emitRemark("attention not fused: ") << matcher.reason;
        ++numNotFused;
        records.push_back(std::move(record));
        continue;
      }
      const AttentionMatch &match = matcher.match;
      std::string reason;
      if (failed(rewrite(match, erased, reason))) {
        record.reason = reason;
        softmax.emitRemark("attention not fused: ") << reason;
        ++numNotFused;
        records.push_back(std::move(record));
        continue;
      }
      record.fused = true;
      record.scale = match.scale;
      record.causal = match.causal;
      if (!match.masks.empty() && match.keyPaddingMask)
        record.mask = "additive+key_padding";
      else if (!match.masks.empty())
        record.mask = "additive";
      else if (match.keyPaddingMask)
        record.mask = "key_padding";
      else
        record.mask = "none";
      ++numFused;
      records.push_back(std::move(record));
    }

    if (reportFile.empty())
      return;
    std::error_code error;
    llvm::raw_fd_ostream os(reportFile, error);
    if (error) {
      getOperation()->emitError("cannot write the fusion report to '")
          << reportFile << "': " << error.message();
      return signalPassFailure();
    }
    llvm::json::Value report = toJSON(records);
    // Only when there is something to say: the raising pass may not have run.
    if (!encodings.empty())
      report.getAsObject()->try_emplace("encodings", std::move(encodings));
    os << llvm::formatv("{0:2}", report) << "\n";
  }
};

} // namespace
