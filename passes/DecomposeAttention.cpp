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

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

namespace attune {
#define GEN_PASS_DEF_DECOMPOSEATTENTION
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

/// `arith.constant dense<value> : tensor<elementType>`, the scalar splat that
/// FuseAttention folds back into an attribute.
Value createSplat(OpBuilder &builder, Location loc, Type elementType,
                  double value) {
  auto type = RankedTensorType::get({}, elementType);
  APFloat splat = FloatAttr::get(elementType, value).getValue();
  return arith::ConstantOp::create(builder, loc,
                                   DenseElementsAttr::get(type, splat));
}

/// A static dimension if either side knows one.
int64_t pickDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

std::string formatDim(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

LogicalResult decompose(tfm::AttentionOp op) {
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
  ArrayRef<int64_t> q = queryType.getShape();
  ArrayRef<int64_t> k = keyType.getShape();
  ArrayRef<int64_t> v = valueType.getShape();
  int64_t heads = q[1];
  int64_t kvHeads = k[1];

  // Grouped-query attention: repeat each k/v head so that a plain batched
  // matmul pairs query head h with key/value head h / (H / Hkv).
  Value key = op.getKey();
  Value value = op.getValue();
  if (heads != kvHeads) {
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
        kvHeads == 0 || heads % kvHeads != 0)
      return op.emitOpError("expected static head counts with 'key' heads "
                            "dividing 'query' heads to decompose, got ")
             << formatDim(heads) << " query heads and " << formatDim(kvHeads)
             << " key/value heads";
    int64_t repeats = heads / kvHeads;
    auto repeat = [&](Value input, ArrayRef<int64_t> shape) -> Value {
      SmallVector<int64_t> repeated(shape);
      repeated[1] = heads;
      return tfm::RepeatInterleaveOp::create(
          builder, loc, RankedTensorType::get(repeated, elementType), input,
          builder.getI64IntegerAttr(1), builder.getI64IntegerAttr(repeats));
    };
    key = repeat(key, k);
    value = repeat(value, v);
  }

  auto scoresType = RankedTensorType::get(
      {pickDim(q[0], k[0]), heads, q[2], pickDim(k[2], v[2])}, elementType);
  Value scores =
      tfm::MatmulOp::create(builder, loc, scoresType, op.getQuery(), key,
                            /*transpose_a=*/nullptr, builder.getBoolAttr(true));
  Value scale =
      createSplat(builder, loc, elementType, op.getScale().convertToDouble());
  scores = tfm::MulOp::create(builder, loc, scoresType, scores, scale);

  if (Value mask = op.getMask())
    scores = tfm::AddOp::create(builder, loc, scoresType, scores, mask);

  if (Value keyPadding = op.getKeyPaddingMask()) {
    // [B, Sk] -> [B, 1, 1, Sk], then keep the scores where it is nonzero.
    auto paddingType = cast<RankedTensorType>(keyPadding.getType());
    if (paddingType.getRank() != 2)
      return op.emitOpError("expected 'key_padding_mask' rank 2, got ")
             << paddingType.getRank();
    ArrayRef<int64_t> padding = paddingType.getShape();
    auto conditionType = RankedTensorType::get({padding[0], 1, 1, padding[1]},
                                               paddingType.getElementType());
    Value condition =
        tfm::ReshapeOp::create(builder, loc, conditionType, keyPadding);
    Value fill = createSplat(builder, loc, elementType, -INFINITY);
    scores =
        tfm::WhereOp::create(builder, loc, scoresType, condition, scores, fill);
  }

  if (op.getCausal())
    scores = tfm::CausalMaskOp::create(builder, loc, scoresType, scores,
                                       /*value=*/FloatAttr());

  Value probs = tfm::SoftmaxOp::create(builder, loc, scoresType, scores,
                                       builder.getI64IntegerAttr(-1));
  Value result =
      tfm::MatmulOp::create(builder, loc, op.getType(), probs, value,
                            /*transpose_a=*/nullptr, /*transpose_b=*/nullptr);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

struct DecomposeAttention final
    : attune::impl::DecomposeAttentionBase<DecomposeAttention> {
  using DecomposeAttentionBase::DecomposeAttentionBase;

  void runOnOperation() override {
    SmallVector<tfm::AttentionOp> ops;
    getOperation()->walk([&](tfm::AttentionOp op) { ops.push_back(op); });
    for (tfm::AttentionOp op : ops)
      if (failed(decompose(op)))
        return signalPassFailure();
  }
};

} // namespace
