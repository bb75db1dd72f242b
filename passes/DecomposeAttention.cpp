//===- DecomposeAttention.cpp - expand tfm.attention into its definition --===//
//
// The inverse of FuseAttention: writes tfm.attention out as the chain of ops
// its description defines, materialising the [B, H, Sq, Sk] scores. Used to
// build a model unfused (for comparison and benchmarks) and to check the
// fused kernel against ops the reference evaluator already trusts.
//
// The output is the canonical form FuseAttention raises, so decomposing and
// fusing again gives back the same tfm.attention (tests/lit/passes/
// roundtrip.mlir).
//
//===----------------------------------------------------------------------===//

#include "passes/DecomposeAttention.h"
#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmOps.h"
#include "dialects/tfm/TfmShapes.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace attune {
#define GEN_PASS_DEF_DECOMPOSEATTENTION
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;
using attune::createSplat;

namespace {

/// Builds `OpTy` with the result type its own inference gives. Hand-written
/// types go wrong as soon as a mask is more static than the scores (a static
/// `[1, 1, 128, 128]` mask makes the sum `[.., 128, 128]` even when q and k
/// have `?` there); inference applies the very rules the verifier checks.
/// On operands that do not fit, the verifier's message is emitted at `loc`.
template <typename OpTy, typename... Args>
FailureOr<Value> build(OpBuilder &builder, Location loc, Args &&...args) {
  FailureOr<OpTy> op =
      tfm::createChecked<OpTy>(builder, loc, std::forward<Args>(args)...);
  if (failed(op))
    return failure();
  return op->getResult();
}

} // namespace

FailureOr<attune::DecomposedAttention> attune::decomposeAttention(tfm::AttentionOp op) {
  DecomposedAttention values;
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  auto keyType = cast<RankedTensorType>(op.getKey().getType());
  auto valueType = cast<RankedTensorType>(op.getValue().getType());
  // The verifier guarantees these for valid IR; checked here so that IR that
  // skipped verification gets an error, not an out-of-bounds read.
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"query", queryType},
        {"key", keyType},
        {"value", valueType}})
    if (type.getRank() != 4)
      return op.emitOpError("expected '")
             << name << "' rank 4, got " << type.getRank();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Type elementType = queryType.getElementType();
  const int64_t headAxis = op.getHeadAxis();
  int64_t heads = queryType.getDimSize(headAxis);
  int64_t kvHeads = keyType.getDimSize(headAxis);

  // Everything built here, erased again if the decomposition fails half way
  // so that a failing op leaves no dead ops behind.
  SmallVector<Operation *> built;
  auto fail = [&]() {
    for (Operation *dead : llvm::reverse(built))
      dead->erase();
    return failure();
  };
  auto track = [&](FailureOr<Value> value) -> FailureOr<Value> {
    if (succeeded(value))
      built.push_back(value->getDefiningOp());
    return value;
  };

  // The matmuls below work per head: a bshd op's operands are transposed to
  // [B, H, S, D] and the result back (the copies tfm-propagate-layouts
  // removed, put back for the unfused form).
  const bool bshd = op.getLayout() == tfm::HeadLayoutKind::bshd;
  auto swapHeads = [&](Value x) {
    return track(build<tfm::TransposeOp>(builder, loc, x,
                                         builder.getDenseI64ArrayAttr({0, 2, 1, 3})));
  };
  Value query = op.getQuery();
  Value key = op.getKey();
  Value value = op.getValue();
  if (bshd) {
    auto q = swapHeads(query), k = swapHeads(key), v = swapHeads(value);
    if (failed(q) || failed(k) || failed(v))
      return fail();
    query = *q, key = *k, value = *v;
  }

  // RoPE: q and k rotated by tfm.rope, q aligned to the end of the keys.
  if (DictionaryAttr ropeAttr = op.getRopeAttr()) {
    attune::codegen::RopeSpec rope;
    if (std::string problem =
            tfm::readRope(ropeAttr, queryType.getDimSize(3), rope);
        !problem.empty())
      return op.emitOpError(problem);
    auto rotate = [&](Value x, Value align) {
      Value rotated = tfm::RopeOp::create(
          builder, loc, x.getType(), x, align, builder.getF64FloatAttr(rope.base),
          builder.getI64IntegerAttr(rope.rotaryDims),
          builder.getBoolAttr(rope.interleaved),
          builder.getI64IntegerAttr(rope.positionOffset),
          tfm::ropeScalingDictionary(builder.getContext(), rope));
      built.push_back(rotated.getDefiningOp());
      return rotated;
    };
    query = rotate(query, key);
    key = rotate(key, Value());
  }

  // Grouped-query attention: repeat each k/v head so that a plain batched
  // matmul pairs query head h with key/value head h / (H / Hkv).
  if (heads != kvHeads) {
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
        kvHeads == 0 || heads % kvHeads != 0)
      return op.emitOpError("expected static head counts with 'key' heads "
                            "dividing 'query' heads to decompose, got ")
             << tfm::formatDim(heads) << " query heads and "
             << tfm::formatDim(kvHeads) << " key/value heads";
    IntegerAttr axis = builder.getI64IntegerAttr(1);
    IntegerAttr repeats = builder.getI64IntegerAttr(heads / kvHeads);
    auto repeatedKey =
        track(build<tfm::RepeatInterleaveOp>(builder, loc, key, axis, repeats));
    if (failed(repeatedKey))
      return fail();
    auto repeatedValue = track(
        build<tfm::RepeatInterleaveOp>(builder, loc, value, axis, repeats));
    if (failed(repeatedValue))
      return fail();
    key = *repeatedKey;
    value = *repeatedValue;
  }

  // The transposes are spelled out, `false` too: inference runs on the
  // operation state before ODS fills in default-valued attributes, and
  // tfm.matmul's inference reads both.
  auto scores = track(build<tfm::MatmulOp>(
      builder, loc, query, key,
      /*transpose_a=*/builder.getBoolAttr(false), builder.getBoolAttr(true)));
  if (failed(scores))
    return fail();
  Value scale =
      createSplat(builder, loc, elementType, op.getScale().convertToDouble());
  built.push_back(scale.getDefiningOp());
  scores = track(build<tfm::MulOp>(builder, loc, *scores, scale));
  if (failed(scores))
    return fail();
  values.scaled = *scores;

  // Softcapping, as exporters write it: c * tanh(s / c).
  if (FloatAttr softcap = op.getSoftcapAttr()) {
    Value cap = createSplat(builder, loc, elementType, softcap.getValueAsDouble());
    built.push_back(cap.getDefiningOp());
    scores = track(build<tfm::DivOp>(builder, loc, *scores, cap));
    if (failed(scores))
      return fail();
    Value capped = tfm::TanhOp::create(builder, loc, scores->getType(), *scores);
    built.push_back(capped.getDefiningOp());
    scores = track(build<tfm::MulOp>(builder, loc, capped, cap));
    if (failed(scores))
      return fail();
  }
  values.capped = *scores;

  if (Value mask = op.getMask()) {
    scores = track(build<tfm::AddOp>(builder, loc, *scores, mask));
    if (failed(scores))
      return fail();
  }

  // Score modifiers, in order: each adds its terms to the stored scores,
  // reading the q and k the scores came from when it has content terms.
  // Those with a value term add it to the output below.
  SmallVector<std::pair<DictionaryAttr, ValueRange>> valueTerms;
  if (ArrayAttr list = op.getModifiersAttr())
    for (auto [attr, group] : llvm::zip_equal(list, op.getModifierOperandGroups())) {
      auto dict = cast<DictionaryAttr>(attr);
      tfm::ResolvedModifier modifier;
      if (std::string problem = tfm::parseModifier(dict, modifier); !problem.empty()) {
        (void)fail();
        return op.emitOpError(problem);
      }
      bool content = !modifier.definition->contentTerms(modifier.params).empty();
      Value biased = tfm::ScoreBiasOp::create(
          builder, loc, scores->getType(), *scores, content ? query : Value(),
          content ? key : Value(), group, dict,
          content ? op.getScaleAttr() : FloatAttr());
      built.push_back(biased.getDefiningOp());
      scores = biased;
      if (modifier.definition->valueTerm(modifier.params))
        valueTerms.push_back({dict, group});
    }

  if (Value keyPadding = op.getKeyPaddingMask()) {
    // [B, Sk] -> [B, 1, 1, Sk], then keep the scores where it is nonzero.
    auto paddingType = cast<RankedTensorType>(keyPadding.getType());
    if (paddingType.getRank() != 2) {
      (void)fail();
      return op.emitOpError("expected 'key_padding_mask' rank 2, got ")
             << paddingType.getRank();
    }
    ArrayRef<int64_t> padding = paddingType.getShape();
    // A reshape's result type is its definition, not something to infer.
    auto conditionType = RankedTensorType::get({padding[0], 1, 1, padding[1]},
                                               paddingType.getElementType());
    Value condition =
        tfm::ReshapeOp::create(builder, loc, conditionType, keyPadding);
    built.push_back(condition.getDefiningOp());
    Value fill = createSplat(builder, loc, elementType, -INFINITY);
    built.push_back(fill.getDefiningOp());
    scores = track(build<tfm::WhereOp>(builder, loc, condition, *scores, fill));
    if (failed(scores))
      return fail();
  }

  if (op.getCausal()) {
    scores = track(build<tfm::CausalMaskOp>(builder, loc, *scores,
                                            /*value=*/FloatAttr()));
    if (failed(scores))
      return fail();
  }

  values.masked = *scores;
  auto probs = track(build<tfm::SoftmaxOp>(builder, loc, *scores,
                                           builder.getI64IntegerAttr(-1)));
  if (failed(probs))
    return fail();
  auto result =
      track(build<tfm::MatmulOp>(builder, loc, *probs, value,
                                 /*transpose_a=*/builder.getBoolAttr(false),
                                 /*transpose_b=*/builder.getBoolAttr(false)));
  if (failed(result))
    return fail();
  for (auto [dict, group] : valueTerms) {
    auto probsType = cast<RankedTensorType>(probs->getType());
    SmallVector<int64_t> shape(probsType.getShape().take_front(3));
    shape.push_back(valueType.getDimSize(3));
    Value term = tfm::ScoreValuesOp::create(
        builder, loc, RankedTensorType::get(shape, elementType), *probs, group, dict);
    built.push_back(term.getDefiningOp());
    result = track(build<tfm::AddOp>(builder, loc, *result, term));
    if (failed(result))
      return fail();
  }

  if (bshd) {
    result = swapHeads(*result);
    if (failed(result))
      return fail();
  }

  // tfm.attention's result takes B, H and Sq from q, k, v and the key padding
  // mask only, while the ops above also take them from the additive mask: a
  // mask that is static where q is dynamic makes the decomposed result more
  // static than the op it replaces. No tfm op turns a static dimension back
  // into `?`, and the users were written for the declared type, so this
  // attention cannot be decomposed.
  Type declared = op.getType();
  Type decomposed = result->getType();
  if (decomposed != declared) {
    (void)fail();
    auto shape = [](Type type) {
      return tfm::formatShape(cast<RankedTensorType>(type).getShape());
    };
    InFlightDiagnostic diag =
        op.emitOpError("expected the decomposed result to have the declared "
                       "shape ")
        << shape(declared) << ", got " << shape(decomposed);
    if (Value mask = op.getMask())
      diag << ": 'mask' " << shape(mask.getType())
           << " fixes dimensions that q, k and v leave dynamic";
    return diag;
  }
  op.getResult().replaceAllUsesWith(*result);
  op.erase();
  values.probabilities = *probs;
  values.result = *result;
  return values;
}

namespace {

struct DecomposeAttention final
    : attune::impl::DecomposeAttentionBase<DecomposeAttention> {
  using DecomposeAttentionBase::DecomposeAttentionBase;

  void runOnOperation() override {
    SmallVector<tfm::AttentionOp> ops;
    getOperation()->walk([&](tfm::AttentionOp op) { ops.push_back(op); });
    for (tfm::AttentionOp op : ops)
      if (failed(attune::decomposeAttention(op)))
        return signalPassFailure();
  }
};

} // namespace
