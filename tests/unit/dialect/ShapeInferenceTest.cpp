//===- ShapeInferenceTest.cpp - tfm result types from the builders --------===//
//
// Passes and frontends build tfm ops without naming the result type; these
// tests pin what the inferring builders produce, dynamic dims and numpy
// broadcasting included, and that inference refuses bad operands with the
// verifier's message instead of inventing a type.
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "dialects/tfm/TfmShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace attune::tfm;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// A function body to build ops in; its arguments are created on demand with
/// any tensor type, so a test can have dynamic operands without writing IR.
class ShapeInferenceTest : public ::testing::Test {
protected:
  ShapeInferenceTest() : builder(&context), loc(UnknownLoc::get(&context)) {
    context.loadDialect<TfmDialect, func::FuncDialect>();
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType({}, {}));
    body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elementType = {}) {
    return RankedTensorType::get(shape, elementType ? elementType
                                                    : builder.getF32Type());
  }

  /// A new function argument of the given type.
  Value arg(ArrayRef<int64_t> shape, Type elementType = {}) {
    return body->addArgument(tensor(shape, elementType), loc);
  }

  /// The op verifies on its own (the function around it does not matter).
  void expectVerifies(Operation *op) {
    EXPECT_TRUE(succeeded(mlir::verify(op))) << "op does not verify";
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
  Block *body = nullptr;
};

TEST_F(ShapeInferenceTest, AttentionMultiHead) {
  Value q = arg({1, 12, kDyn, 64});
  Value k = arg({1, 12, kDyn, 64});
  Value v = arg({1, 12, kDyn, 64});
  auto op = AttentionOp::create(builder, loc, q, k, v, Value(), Value(),
                                ValueRange(), APFloat(0.125), /*causal=*/true,
                                /*modifiers=*/nullptr, /*rope=*/nullptr, HeadLayoutKind::bhsd,
                                /*product_type=*/nullptr, /*softcap=*/nullptr);
  EXPECT_EQ(op.getType(), tensor({1, 12, kDyn, 64}));
  expectVerifies(op);
}

TEST_F(ShapeInferenceTest, AttentionGroupedQueryCrossAndValueDim) {
  // GQA (8 heads over 2), Sq != Sk, Dv != D, batch known only from value.
  Value q = arg({kDyn, 8, 16, 64}, builder.getF16Type());
  Value k = arg({kDyn, 2, 32, 64}, builder.getF16Type());
  Value v = arg({3, 2, 32, 128}, builder.getF16Type());
  Value mask = arg({kDyn, kDyn}, builder.getF16Type());
  Value padding = arg({kDyn, 32}, builder.getI1Type());
  auto op = AttentionOp::create(builder, loc, q, k, v, mask, padding,
                                ValueRange(), APFloat(1.0), /*causal=*/false,
                                /*modifiers=*/nullptr, /*rope=*/nullptr, HeadLayoutKind::bhsd,
                                /*product_type=*/nullptr, /*softcap=*/nullptr);
  EXPECT_EQ(op.getType(), tensor({3, 8, 16, 128}, builder.getF16Type()));
  expectVerifies(op);
}

TEST_F(ShapeInferenceTest, AttentionScoreModifiers) {
  // A T5 table takes one column per query head; inference checks it.
  Value q = arg({1, 4, kDyn, 32});
  Value table = arg({32, 4});
  Value wrongTable = arg({32, 3});
  auto t5 = builder.getArrayAttr({builder.getDictionaryAttr(
      {builder.getNamedAttr("kind", builder.getStringAttr("t5"))})});
  auto op = AttentionOp::create(builder, loc, q, q, q, Value(), Value(),
                                ValueRange{table}, APFloat(1.0), false, t5,
                                /*rope=*/nullptr, HeadLayoutKind::bhsd,
                                /*product_type=*/nullptr, /*softcap=*/nullptr);
  EXPECT_EQ(op.getType(), tensor({1, 4, kDyn, 32}));
  expectVerifies(op);
  ASSERT_EQ(op.getModifierOperandGroups().size(), 1u);
  EXPECT_EQ(op.getModifierOperandGroups()[0].size(), 1u);

  std::string message;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto bad = createChecked<AttentionOp>(builder, loc, q, q, q, Value(), Value(),
                                        ValueRange{wrongTable}, APFloat(1.0),
                                        false, t5, /*rope=*/nullptr, HeadLayoutKind::bhsd,
                                        /*product_type=*/nullptr, /*softcap=*/nullptr);
  EXPECT_TRUE(failed(bad));
  EXPECT_EQ(message, "'tfm.attention' op modifier 't5': expected operand "
                     "'table' [num_buckets, H] to have one column per query "
                     "head (4), got 3");
}

TEST_F(ShapeInferenceTest, AttentionBatchFromKeyPaddingMask) {
  Value q = arg({kDyn, 4, kDyn, 32});
  Value kv = arg({kDyn, 1, kDyn, 32});
  Value padding = arg({5, kDyn}, builder.getI64Type());
  auto op = AttentionOp::create(builder, loc, q, kv, kv, Value(), padding,
                                ValueRange(), APFloat(1.0), false,
                                /*modifiers=*/nullptr, /*rope=*/nullptr, HeadLayoutKind::bhsd,
                                /*product_type=*/nullptr, /*softcap=*/nullptr);
  EXPECT_EQ(op.getType(), tensor({5, 4, kDyn, 32}));
  expectVerifies(op);
}

TEST_F(ShapeInferenceTest, BroadcastingBinaryOps) {
  Value scores = arg({kDyn, 12, kDyn, kDyn});
  Value scalar = arg({});
  EXPECT_EQ(AddOp::create(builder, loc, scores, scalar).getType(),
            tensor({kDyn, 12, kDyn, kDyn}));
  // `?` against 4 gives 4; 1 against `?` gives `?`; `?` against 8 gives 8.
  Value a = arg({kDyn, 1, kDyn});
  Value b = arg({4, kDyn, 8});
  EXPECT_EQ(SubOp::create(builder, loc, a, b).getType(), tensor({4, kDyn, 8}));
  // A static 1 stretches; ranks align from the right.
  Value c = arg({4, 1, 8});
  Value d = arg({3, 1});
  auto mul = MulOp::create(builder, loc, c, d);
  EXPECT_EQ(mul.getType(), tensor({4, 3, 8}));
  expectVerifies(mul);
  // `?` against `?` stays `?`.
  Value e = arg({kDyn});
  EXPECT_EQ(DivOp::create(builder, loc, e, e).getType(), tensor({kDyn}));
}

TEST_F(ShapeInferenceTest, WhereBroadcastsAllThree) {
  Value condition = arg({kDyn, 1, 1, kDyn}, builder.getI1Type());
  Value fill = arg({});
  Value scores = arg({1, 12, kDyn, kDyn});
  auto op = WhereOp::create(builder, loc, condition, fill, scores);
  EXPECT_EQ(op.getType(), tensor({kDyn, 12, kDyn, kDyn}));
  expectVerifies(op);
}

TEST_F(ShapeInferenceTest, MatmulTransposesAndBatch) {
  Value q = arg({1, 12, kDyn, 64});
  Value k = arg({1, 12, kDyn, 64});
  auto scores = MatmulOp::create(builder, loc, q, k, /*transpose_a=*/false,
                                 /*transpose_b=*/true);
  EXPECT_EQ(scores.getType(), tensor({1, 12, kDyn, kDyn}));
  expectVerifies(scores);
  Value a = arg({kDyn, 32, 8});
  Value b = arg({4, 32, 16});
  auto op = MatmulOp::create(builder, loc, a, b, /*transpose_a=*/true, false);
  EXPECT_EQ(op.getType(), tensor({4, 8, 16}));
}

TEST_F(ShapeInferenceTest, LinearEmbeddingAndPositions) {
  Value x = arg({kDyn, kDyn, 768});
  Value w = arg({768, 3072});
  Value bias = arg({3072});
  EXPECT_EQ(LinearOp::create(builder, loc, x, w, bias).getType(),
            tensor({kDyn, kDyn, 3072}));
  // Without a bias; out features known only from the bias elsewhere.
  Value wDyn = arg({768, kDyn});
  Value bias64 = arg({64});
  EXPECT_EQ(LinearOp::create(builder, loc, x, w, Value()).getType(),
            tensor({kDyn, kDyn, 3072}));
  EXPECT_EQ(LinearOp::create(builder, loc, x, wDyn, bias64).getType(),
            tensor({kDyn, kDyn, 64}));

  Value table = arg({50257, 768});
  Value ids = arg({kDyn, kDyn}, builder.getI32Type());
  auto embedded = EmbeddingOp::create(builder, loc, table, ids);
  EXPECT_EQ(embedded.getType(), tensor({kDyn, kDyn, 768}));
  Value wpe = arg({1024, 768});
  auto positioned = LearnedPositionOp::create(builder, loc, embedded, wpe);
  EXPECT_EQ(positioned.getType(), tensor({kDyn, kDyn, 768}));
  expectVerifies(positioned);
  auto sinusoid = SinusoidalPositionOp::create(builder, loc, positioned,
                                               SinusoidalFormKind::concat,
                                               APFloat(1.0), APFloat(10000.0));
  EXPECT_EQ(sinusoid.getType(), tensor({kDyn, kDyn, 768}));
}

/// The absolute encodings keep the input's type; the complex embedding and
/// layer double their widths for the [real | imaginary] halves.
TEST_F(ShapeInferenceTest, AbsoluteEncodingsAndComplexLayer) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Value x = arg({kDyn, kDyn, 64});
  auto product = createChecked<MultiplicativePositionOp>(
      builder, loc, x, arg({128, 64}), SinusoidalFormKindAttr(), FloatAttr(), FloatAttr());
  ASSERT_TRUE(succeeded(product));
  EXPECT_EQ(product->getType(), x.getType());
  expectVerifies(*product);
  auto sinusoid = createChecked<MultiplicativePositionOp>(
      builder, loc, x, Value(), SinusoidalFormKindAttr(), FloatAttr(), FloatAttr());
  ASSERT_TRUE(succeeded(sinusoid));
  EXPECT_EQ(sinusoid->getFormOrDefault(), SinusoidalFormKind::interleaved);
  expectVerifies(*sinusoid);

  // p0 [D], w1 [D + 1, H], b1 [H], w2 [H + 1, D], b2 [D]; time_step defaults.
  auto floater = createChecked<RecursivePositionOp>(
      builder, loc, x, arg({64}), arg({65, 16}), arg({16}), arg({17, 64}), arg({64}),
      FloatAttr());
  ASSERT_TRUE(succeeded(floater));
  EXPECT_EQ(floater->getType(), x.getType());
  EXPECT_EQ(floater->getTimeStep().convertToDouble(), 1.0);
  expectVerifies(*floater);
  auto noTimeRow = createChecked<RecursivePositionOp>(
      builder, loc, x, arg({64}), arg({64, 16}), arg({16}), arg({17, 64}), arg({64}),
      FloatAttr());
  EXPECT_TRUE(failed(noTimeRow));
  EXPECT_EQ(message, "'tfm.recursive_position' op expected 'w1' dim 0 (the model dim "
                     "and a time row) to be 64 + 1 = 65 as in 'input', got 64");

  Value ids = arg({kDyn, kDyn}, builder.getI64Type());
  Value table = arg({100, kDyn});
  auto words = createChecked<ComplexEmbeddingOp>(builder, loc, ids, table, arg({100, 32}),
                                                 table, IntegerAttr());
  ASSERT_TRUE(succeeded(words));
  // The width comes from whichever table states it.
  EXPECT_EQ(words->getType(), tensor({kDyn, kDyn, 64}));
  EXPECT_EQ(words->getFirstPosition(), 1);

  Value z = words->getResult();
  Value w = arg({32, 24}), b = arg({24});
  auto layer = createChecked<ComplexLinearOp>(builder, loc, z, w, w, b, b);
  ASSERT_TRUE(succeeded(layer));
  EXPECT_EQ(layer->getType(), tensor({kDyn, kDyn, 48}));
  expectVerifies(*layer);
  auto noBias = createChecked<ComplexLinearOp>(builder, loc, z, w, w, Value(), Value());
  ASSERT_TRUE(succeeded(noBias));
  EXPECT_EQ(noBias->getType(), tensor({kDyn, kDyn, 48}));
  auto halfBias = createChecked<ComplexLinearOp>(builder, loc, z, w, w, b, Value());
  EXPECT_TRUE(failed(halfBias));
  EXPECT_EQ(message, "'tfm.complex_linear' op expected 'bias_real' and 'bias_imag' "
                     "together, got only 'bias_real'");
}

TEST_F(ShapeInferenceTest, NormsKeepTheInputType) {
  Value x = arg({kDyn, kDyn, 768}, builder.getBF16Type());
  Value g = arg({768}, builder.getBF16Type());
  auto layerNorm = LayerNormOp::create(builder, loc, x, g, g, Value(), APFloat(1e-5));
  EXPECT_EQ(layerNorm.getType(), x.getType());
  auto rmsNorm = RmsNormOp::create(builder, loc, x, g, Value(), APFloat(1e-6));
  EXPECT_EQ(rmsNorm.getType(), x.getType());
  expectVerifies(rmsNorm);
}

TEST_F(ShapeInferenceTest, TransposeAndRepeatInterleave) {
  Value x = arg({kDyn, kDyn, 12, 64});
  auto t = TransposeOp::create(builder, loc, x, ArrayRef<int64_t>{0, 2, 1, 3});
  EXPECT_EQ(t.getType(), tensor({kDyn, 12, kDyn, 64}));
  expectVerifies(t);
  Value k = arg({1, 2, kDyn, 64});
  auto heads = RepeatInterleaveOp::create(builder, loc, k, /*axis=*/1,
                                          /*repeats=*/4);
  EXPECT_EQ(heads.getType(), tensor({1, 8, kDyn, 64}));
  // A dynamic dim stays dynamic when repeated.
  auto seq = RepeatInterleaveOp::create(builder, loc, k, /*axis=*/2,
                                        /*repeats=*/3);
  EXPECT_EQ(seq.getType(), tensor({1, 2, kDyn, 64}));
  expectVerifies(seq);
}

TEST_F(ShapeInferenceTest, UnaryOpsKeepTheInputType) {
  Value x = arg({kDyn, 4}, builder.getF16Type());
  EXPECT_EQ(ReluOp::create(builder, loc, x).getType(), x.getType());
  EXPECT_EQ(SoftmaxOp::create(builder, loc, x, /*axis=*/0).getType(),
            x.getType());
}

/// Inference on bad operands fails with the verifier's message at the given
/// location, so a pass that builds through inferReturnTypes can report why.
TEST_F(ShapeInferenceTest, InferenceRejectsBadOperandsWithAMessage) {
  Value q = arg({1, 12, kDyn, 64});
  Value k = arg({1, 5, kDyn, 64});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> types;
  AttentionOp::Properties properties;
  properties.scale = builder.getF64FloatAttr(1.0);
  properties.operandSegmentSizes = {1, 1, 1, 0, 0};
  LogicalResult result = AttentionOp::inferReturnTypes(
      &context, loc, ValueRange{q, k, k}, builder.getDictionaryAttr({}),
      &properties, RegionRange(), types);
  EXPECT_TRUE(failed(result));
  EXPECT_TRUE(types.empty());
  EXPECT_EQ(message, "'tfm.attention' op expected 'query' heads (12) to be a "
                     "multiple of 'key' heads, got 5");

  // Without a location nothing is reported, only the failure.
  message.clear();
  Value a = arg({2, 3});
  Value b = arg({4, 3});
  EXPECT_TRUE(failed(AddOp::inferReturnTypes(
      &context, std::nullopt, ValueRange{a, b}, builder.getDictionaryAttr({}),
      nullptr, RegionRange(), types)));
  EXPECT_TRUE(message.empty());
}

/// createChecked is how frontends build from user files: a bad shape is a
/// diagnostic and a failure, never an abort.
TEST_F(ShapeInferenceTest, CreateCheckedReportsInsteadOfAborting) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Value x = arg({kDyn, kDyn, 768});
  Value pytorchWeight = arg({3072, 768});
  size_t opsBefore = body->getOperations().size();
  auto bad = createChecked<LinearOp>(builder, loc, x, pytorchWeight, Value());
  EXPECT_TRUE(failed(bad));
  EXPECT_EQ(body->getOperations().size(), opsBefore);
  EXPECT_EQ(message, "'tfm.linear' op expected 'weight' dim 0 (in features) "
                     "to be 768 as the last dim of 'input', got 3072");

  Value q = arg({2, 8, kDyn, 64});
  Value kv = arg({2, 2, kDyn, 64});
  auto good = createChecked<AttentionOp>(builder, loc, q, kv, kv, Value(),
                                         Value(), ValueRange(), APFloat(0.125),
                                         true, /*modifiers=*/nullptr, /*rope=*/nullptr,
                                         HeadLayoutKind::bhsd, /*product_type=*/nullptr, /*softcap=*/nullptr);
  ASSERT_TRUE(succeeded(good));
  EXPECT_EQ(good->getType(), tensor({2, 8, kDyn, 64}));
  EXPECT_TRUE(good->getCausal());
  expectVerifies(*good);
  auto t = createChecked<TransposeOp>(builder, loc, q,
                                      ArrayRef<int64_t>{0, 2, 1, 3});
  ASSERT_TRUE(succeeded(t));
  EXPECT_EQ(t->getType(), tensor({2, kDyn, 8, 64}));

  /// Null default-valued attributes take their defaults before inference
  /// reads them (transpose_a = transpose_b = false).
  auto m = createChecked<MatmulOp>(builder, loc, arg({2, 3, 4}), arg({2, 4, 5}),
                                   BoolAttr(), BoolAttr());
  ASSERT_TRUE(succeeded(m));
  EXPECT_EQ(m->getType(), tensor({2, 3, 5}));
  EXPECT_FALSE(m->getTransposeA());
  expectVerifies(*m);
}

TEST(TfmShapesTest, BroadcastShapes) {
  auto shape = broadcastShapes({kDyn, 1, 5}, {3, kDyn, 1});
  ASSERT_TRUE(succeeded(shape));
  EXPECT_EQ(*shape, (SmallVector<int64_t>{3, kDyn, 5}));
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {4, 3})));
  EXPECT_EQ(*broadcastShapes({}, {7}), (SmallVector<int64_t>{7}));
}

TEST(TfmShapesTest, BroadcastableTo) {
  EXPECT_TRUE(isBroadcastableTo({1, 1, kDyn, kDyn}, {2, 12, 16, 16}));
  EXPECT_TRUE(isBroadcastableTo({16}, {2, 12, 16, kDyn}));
  EXPECT_FALSE(isBroadcastableTo({8, 1, 1}, {12, 16, 16}));
  // Broadcasting to a target never grows it.
  EXPECT_FALSE(isBroadcastableTo({2, 1, 1}, {1, 1}));
  EXPECT_FALSE(isBroadcastableTo({3}, {1}));
}

TEST(TfmShapesTest, Formatting) {
  EXPECT_EQ(formatShape({2, kDyn, 768}), "[2, ?, 768]");
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(staticElementCount({2, 3, 4}), 24);
  EXPECT_EQ(staticElementCount({2, kDyn}), std::nullopt);
  EXPECT_EQ(staticElementCount({int64_t(1) << 62, 4}), std::nullopt);
}

} // namespace
