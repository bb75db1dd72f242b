//===- EvaluatorTest.cpp - numerics of the reference evaluator ------------===//
//
// The evaluator is the oracle for everything else, so its own expected values
// come from outside it: hand computation, published constants, or the
// formulas re-derived here independently of Evaluator.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Evaluator.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace attune;
using namespace attune::reference;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor tensor(std::vector<int64_t> shape, std::vector<double> data,
              ScalarType dtype = ScalarType::F32) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

/// Deterministic values in [-1, 1) for inputs whose exact values do not
/// matter (a tiny LCG, so the test does not depend on <random>).
Tensor pseudoRandom(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t = tensor(std::move(shape), {});
  t.data.resize(static_cast<size_t>(t.numElements()));
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double &x : t.data) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
  }
  return t;
}

class EvaluatorTest : public ::testing::Test {
protected:
  EvaluatorTest() {
    context
        .loadDialect<tfm::TfmDialect, func::FuncDialect, arith::ArithDialect>();
  }

  /// Parses `source` (aborting the test on a parse error).
  void parse(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << "failed to parse:\n" << source.str();
  }

  func::FuncOp function(llvm::StringRef name) {
    return module->lookupSymbol<func::FuncOp>(name);
  }

  /// Evaluates function `name` with the weights in `weights`.
  llvm::Expected<std::vector<Tensor>> run(llvm::StringRef name,
                                          std::vector<Tensor> inputs) {
    func::FuncOp fn = function(name);
    if (!fn)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no function " + name);
    WeightLookup lookup = [this](llvm::StringRef weightName,
                                 RankedTensorType) -> llvm::Expected<Tensor> {
      auto it = weights.find(weightName);
      if (it == weights.end())
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "missing weight " + weightName);
      return it->second;
    };
    return evaluate(fn, inputs, lookup);
  }

  /// Runs and expects success with one result.
  Tensor runOne(llvm::StringRef name, std::vector<Tensor> inputs) {
    llvm::Expected<std::vector<Tensor>> out = run(name, std::move(inputs));
    if (!out) {
      ADD_FAILURE() << llvm::toString(out.takeError());
      return {};
    }
    EXPECT_EQ(out->size(), 1u);
    return out->empty() ? Tensor{} : (*out)[0];
  }

  /// Runs and returns the error text (empty when it unexpectedly succeeds).
  std::string runError(llvm::StringRef name, std::vector<Tensor> inputs) {
    llvm::Expected<std::vector<Tensor>> out = run(name, std::move(inputs));
    if (out) {
      ADD_FAILURE() << "expected an error from @" << name.str();
      return "";
    }
    return llvm::toString(out.takeError());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  llvm::StringMap<Tensor> weights;
};

/// Half an ulp of float, relative: what rounding an f32 result to float
/// may change (the evaluator computes in double, then stores floats).
constexpr double kFloatRounding = 6e-8;

void expectNear(const Tensor &actual, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<double> expected, double tol) {
  ASSERT_EQ(llvm::ArrayRef<int64_t>(actual.shape), shape);
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (actual.data[i] == expected[i]) // also equal infinities
      continue;
    // f32 results are rounded to float (Evaluator.cpp, define): half an ulp.
    EXPECT_NEAR(actual.data[i], expected[i], tol + kFloatRounding * std::fabs(expected[i]))
        << "at flat index " << i;
  }
}

//===----------------------------------------------------------------------===//
// Softmax, norms, activations
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, SoftmaxOfKnownRow) {
  parse(R"mlir(
    func.func @f(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
      %y = tfm.softmax %x {axis = -1 : i64} : tensor<1x3xf32> -> tensor<1x3xf32>
      return %y : tensor<1x3xf32>
    })mlir");
  // exp(k) / (e + e^2 + e^3) for k = 1, 2, 3.
  Tensor y = runOne("f", {tensor({1, 3}, {1, 2, 3})});
  expectNear(y, {1, 3},
             {0.09003057317038046, 0.24472847105479767, 0.6652409557748219},
             1e-15);
}

TEST_F(EvaluatorTest, SoftmaxAlongFirstAxis) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %y = tfm.softmax %x {axis = 0 : i64} : tensor<2x2xf32> -> tensor<2x2xf32>
      return %y : tensor<2x2xf32>
    })mlir");
  // Columns [1, 3] and [2, 5]: sigmoid of the differences -2 and -3.
  double s2 = 1.0 / (1.0 + std::exp(2.0)), s3 = 1.0 / (1.0 + std::exp(3.0));
  Tensor y = runOne("f", {tensor({2, 2}, {1, 2, 3, 5})});
  expectNear(y, {2, 2}, {s2, s3, 1 - s2, 1 - s3}, 1e-15);
}

TEST_F(EvaluatorTest, LayerNormOfOneToFour) {
  parse(R"mlir(
    func.func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
      %y = tfm.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
          : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4xf32>
      return %y : tensor<1x4xf32>
    })mlir");
  // mean 2.5, population variance 1.25.
  double inv = 1.0 / std::sqrt(1.25 + 1e-5);
  Tensor y =
      runOne("f", {tensor({1, 4}, {1, 2, 3, 4}), tensor({4}, {1, 2, 1, 1}),
                   tensor({4}, {0, 0, 1, 0})});
  expectNear(y, {1, 4}, {-1.5 * inv, -0.5 * inv * 2, 0.5 * inv + 1, 1.5 * inv},
             1e-14);
  // Without epsilon these would be +-1.3416407864998738 and
  // +-0.4472135954999579.
  EXPECT_NEAR(y.data[3], 1.3416407864998738, 1e-5);
}

TEST_F(EvaluatorTest, RmsNorm) {
  parse(R"mlir(
    func.func @f(%x: tensor<1x2xf32>, %g: tensor<2xf32>) -> tensor<1x2xf32> {
      %y = tfm.rms_norm %x, %g {epsilon = 0.0 : f64}
          : tensor<1x2xf32>, tensor<2xf32> -> tensor<1x2xf32>
      return %y : tensor<1x2xf32>
    })mlir");
  // rms of [3, 4] is sqrt(12.5).
  double r = std::sqrt(12.5);
  Tensor y = runOne("f", {tensor({1, 2}, {3, 4}), tensor({2}, {1, 10})});
  expectNear(y, {1, 2}, {3 / r, 40 / r}, 1e-14);
}

TEST_F(EvaluatorTest, GeluErfAndTanhAtKnownPoints) {
  parse(R"mlir(
    func.func @erf(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = tfm.gelu %x : tensor<3xf32> -> tensor<3xf32>
      return %y : tensor<3xf32>
    }
    func.func @tanh(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = tfm.gelu %x {approximate = #tfm.gelu_approx<tanh>} : tensor<3xf32> -> tensor<3xf32>
      return %y : tensor<3xf32>
    })mlir");
  Tensor x = tensor({3}, {1.0, -2.0, 0.0});
  // x * Phi(x) with the tabulated normal CDF: Phi(1) = 0.841344746068543,
  // Phi(-2) = 0.0227501319481792.
  expectNear(runOne("erf", {x}), {3},
             {0.8413447460685429, -2 * 0.022750131948179195, 0.0}, 1e-13);
  // The tanh form differs from erf in the fourth decimal at these points.
  expectNear(runOne("tanh", {x}), {3},
             {0.8411919906082768, -0.04540230591222494, 0.0}, 1e-13);
}

TEST_F(EvaluatorTest, ReluAndSilu) {
  parse(R"mlir(
    func.func @relu(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = tfm.relu %x : tensor<3xf32> -> tensor<3xf32>
      return %y : tensor<3xf32>
    }
    func.func @silu(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = tfm.silu %x : tensor<3xf32> -> tensor<3xf32>
      return %y : tensor<3xf32>
    })mlir");
  Tensor x = tensor({3}, {-1.5, 0.0, 2.0});
  expectNear(runOne("relu", {x}), {3}, {0, 0, 2}, 0);
  expectNear(runOne("silu", {x}), {3},
             {-1.5 / (1 + std::exp(1.5)), 0.0, 2.0 / (1 + std::exp(-2.0))},
             1e-15);
}

//===----------------------------------------------------------------------===//
// Positional encodings
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, SinusoidTwoFormsAtKnownPoints) {
  parse(R"mlir(
    func.func @interleaved(%x: tensor<1x4x6xf32>) -> tensor<1x4x6xf32> {
      %y = tfm.sinusoidal_position %x : tensor<1x4x6xf32> -> tensor<1x4x6xf32>
      return %y : tensor<1x4x6xf32>
    }
    func.func @concat(%x: tensor<1x4x6xf32>) -> tensor<1x4x6xf32> {
      %y = tfm.sinusoidal_position %x {form = #tfm.sinusoidal_form<concat>}
          : tensor<1x4x6xf32> -> tensor<1x4x6xf32>
      return %y : tensor<1x4x6xf32>
    }
    func.func @concat_odd(%x: tensor<1x4x5xf32>) -> tensor<1x4x5xf32> {
      %y = tfm.sinusoidal_position %x {form = #tfm.sinusoidal_form<concat>}
          : tensor<1x4x5xf32> -> tensor<1x4x5xf32>
      return %y : tensor<1x4x5xf32>
    })mlir");
  Tensor zeros6 = tensor({1, 4, 6}, std::vector<double>(24, 0.0));
  Tensor inter = runOne("interleaved", {zeros6});
  Tensor concat = runOne("concat", {zeros6});
  auto at = [](const Tensor &t, int64_t s, int64_t d) {
    return t.data[s * t.shape[2] + d];
  };
  // Vaswani: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(..).
  for (int64_t pos : {0, 1, 3}) {
    for (int64_t i = 0; i < 3; ++i) {
      double angle = pos / std::pow(10000.0, 2.0 * i / 6.0);
      EXPECT_NEAR(at(inter, pos, 2 * i), std::sin(angle), 1e-14 + kFloatRounding);
      EXPECT_NEAR(at(inter, pos, 2 * i + 1), std::cos(angle), 1e-14 + kFloatRounding);
    }
  }
  // tensor2tensor, d = 6: three timescales 1, 100, 10000 (geometric from
  // min 1 to max 1e4 over n - 1 = 2 steps), sin block then cos block.
  const double inv[3] = {1.0, 0.01, 1e-4};
  for (int64_t pos : {0, 1, 3}) {
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(at(concat, pos, i), std::sin(pos * inv[i]), 1e-14 + kFloatRounding);
      EXPECT_NEAR(at(concat, pos, 3 + i), std::cos(pos * inv[i]), 1e-14 + kFloatRounding);
    }
  }
  // The forms differ: column 1 is cos(pos) in one and sin(pos / 100) in the
  // other.
  EXPECT_GT(std::abs(at(inter, 3, 1) - at(concat, 3, 1)), 0.5);

  // Odd d = 5: n = 2 timescales 1 and 1e4 (max(n - 1, 1) = 1 step), then a
  // zero column.
  Tensor odd =
      runOne("concat_odd", {tensor({1, 4, 5}, std::vector<double>(20, 0.0))});
  for (int64_t pos : {1, 3}) {
    EXPECT_NEAR(at(odd, pos, 0), std::sin(pos * 1.0), 1e-14 + kFloatRounding);
    EXPECT_NEAR(at(odd, pos, 1), std::sin(pos * 1e-4), 1e-14 + kFloatRounding);
    EXPECT_NEAR(at(odd, pos, 2), std::cos(pos * 1.0), 1e-14 + kFloatRounding);
    EXPECT_NEAR(at(odd, pos, 3), std::cos(pos * 1e-4), 1e-14 + kFloatRounding);
    EXPECT_EQ(at(odd, pos, 4), 0.0);
  }
}

TEST_F(EvaluatorTest, SinusoidAddsToInputWithDynamicSequence) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
      %y = tfm.sinusoidal_position %x : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
      return %y : tensor<2x?x4xf32>
    })mlir");
  Tensor x = pseudoRandom({2, 3, 4}, 7);
  Tensor y = runOne("f", {x});
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3, 4}));
  // Batch 1, position 2, column 2: sin(2 / 10000^(2/4)) = sin(0.02).
  EXPECT_NEAR(y.data[(1 * 3 + 2) * 4 + 2] - x.data[(1 * 3 + 2) * 4 + 2],
              std::sin(0.02), 1e-14 + kFloatRounding);
}

TEST_F(EvaluatorTest, EmbeddingAndLearnedPosition) {
  weights["wte"] = tensor({3, 2}, {0, 1, 10, 11, 20, 21});
  weights["wpe"] = tensor({4, 2}, {100, 200, 300, 400, 500, 600, 700, 800});
  parse(R"mlir(
    func.func @f(%ids: tensor<1x?xi32>) -> tensor<1x?x2xf32> {
      %wte = tfm.weight "wte" : tensor<3x2xf32>
      %wpe = tfm.weight "wpe" : tensor<4x2xf32>
      %x = tfm.embedding %wte, %ids : tensor<3x2xf32>, tensor<1x?xi32> -> tensor<1x?x2xf32>
      %y = tfm.learned_position %x, %wpe : tensor<1x?x2xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
      return %y : tensor<1x?x2xf32>
    })mlir");
  Tensor y = runOne("f", {tensor({1, 3}, {2, 0, 1}, ScalarType::I32)});
  expectNear(y, {1, 3, 2}, {120, 221, 300, 401, 510, 611}, 0);
}

//===----------------------------------------------------------------------===//
// Linear algebra and broadcasting
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, MatmulTransposes) {
  parse(R"mlir(
    func.func @nn(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %c = tfm.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    }
    func.func @tn(%a: tensor<3x2xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %c = tfm.matmul %a, %b {transpose_a = true} : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    }
    func.func @nt(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
      %c = tfm.matmul %a, %b {transpose_b = true} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    }
    func.func @tt(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
      %c = tfm.matmul %a, %b {transpose_a = true, transpose_b = true}
          : tensor<3x2xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    }
    func.func @batched(%a: tensor<2x1x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<2x1x1xf32> {
      %c = tfm.matmul %a, %b : tensor<2x1x3xf32>, tensor<2x3x1xf32> -> tensor<2x1x1xf32>
      return %c : tensor<2x1x1xf32>
    })mlir");
  // [[1 2 3] [4 5 6]] x [[7 8] [9 10] [11 12]] = [[58 64] [139 154]].
  Tensor a = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor aT = tensor({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor b = tensor({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor bT = tensor({2, 3}, {7, 9, 11, 8, 10, 12});
  std::vector<double> c = {58, 64, 139, 154};
  expectNear(runOne("nn", {a, b}), {2, 2}, c, 0);
  expectNear(runOne("tn", {aT, b}), {2, 2}, c, 0);
  expectNear(runOne("nt", {a, bT}), {2, 2}, c, 0);
  expectNear(runOne("tt", {aT, bT}), {2, 2}, c, 0);
  // Batch 0: [1 2 3].[1 1 1] = 6; batch 1: [4 5 6].[2 2 2] = 30.
  expectNear(runOne("batched", {tensor({2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                                tensor({2, 3, 1}, {1, 1, 1, 2, 2, 2})}),
             {2, 1, 1}, {6, 30}, 0);
}

TEST_F(EvaluatorTest, LinearWithBias) {
  parse(R"mlir(
    func.func @f(%x: tensor<1x2x2xf32>, %w: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x3xf32> {
      %y = tfm.linear %x, %w, %b : tensor<1x2x2xf32>, tensor<2x3xf32>, tensor<3xf32> -> tensor<1x2x3xf32>
      return %y : tensor<1x2x3xf32>
    })mlir");
  Tensor y = runOne("f", {tensor({1, 2, 2}, {1, 2, 3, 4}),
                          tensor({2, 3}, {1, 0, 1, 0, 1, 1}),
                          tensor({3}, {0.5, 0, -1})});
  expectNear(y, {1, 2, 3}, {1.5, 2, 2, 3.5, 4, 6}, 0);
}

TEST_F(EvaluatorTest, BroadcastingAdd) {
  parse(R"mlir(
    func.func @f(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>) -> tensor<2x4x3xf32> {
      %y = tfm.add %a, %b : tensor<2x1x3xf32>, tensor<4x1xf32> -> tensor<2x4x3xf32>
      return %y : tensor<2x4x3xf32>
    })mlir");
  Tensor a = tensor({2, 1, 3}, {0, 1, 2, 3, 4, 5});
  Tensor b = tensor({4, 1}, {10, 20, 30, 40});
  Tensor y = runOne("f", {a, b});
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        expected.push_back(a.data[i * 3 + k] + b.data[j]);
  expectNear(y, {2, 4, 3}, expected, 0);
  EXPECT_EQ(y.data[(1 * 4 + 2) * 3 + 0], 33.0);
}

TEST_F(EvaluatorTest, SubMulDivWhereAndConstants) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x2xf32>, %m: tensor<2xi1>) -> tensor<2x2xf32> {
      %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %s = arith.constant dense<4.0> : tensor<f32>
      %ninf = arith.constant dense<0xFF800000> : tensor<f32>
      %a = tfm.sub %x, %c : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
      %b = tfm.mul %a, %s : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
      %d = tfm.div %b, %c : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
      %w = tfm.where %m, %ninf, %d : tensor<2xi1>, tensor<f32>, tensor<2x2xf32> -> tensor<2x2xf32>
      return %w : tensor<2x2xf32>
    })mlir");
  Tensor y = runOne("f", {tensor({2, 2}, {3, 5, 7, 9}),
                          tensor({2}, {0, 1}, ScalarType::Bool)});
  // ((x - c) * 4) / c, then column 1 replaced by -inf.
  expectNear(y, {2, 2}, {8, -kInf, 24, -kInf}, 0);
}

TEST_F(EvaluatorTest, ReshapeTransposeRepeatInterleave) {
  parse(R"mlir(
    func.func @f(%x: tensor<?x6xf32>) -> tensor<3x?x4xf32> {
      %r = tfm.reshape %x : tensor<?x6xf32> -> tensor<?x3x2xf32>
      %t = tfm.transpose %r {permutation = array<i64: 1, 0, 2>} : tensor<?x3x2xf32> -> tensor<3x?x2xf32>
      %e = tfm.repeat_interleave %t {axis = 2 : i64, repeats = 2 : i64} : tensor<3x?x2xf32> -> tensor<3x?x4xf32>
      return %e : tensor<3x?x4xf32>
    })mlir");
  Tensor x = tensor({1, 6}, {0, 1, 2, 3, 4, 5});
  // reshape [1, 3, 2] = [[[0 1] [2 3] [4 5]]]; transpose to [3, 1, 2];
  // repeat each of the last elements twice.
  expectNear(runOne("f", {x}), {3, 1, 4}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5},
             0);
}

TEST_F(EvaluatorTest, SliceConcatNegAbs) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
      %a = tfm.slice %x {axis = 1 : i64, start = 1 : i64, end = 5 : i64, step = 2 : i64} : tensor<2x5xf32> -> tensor<2x2xf32>
      %b = tfm.slice %x {axis = 0 : i64, start = 1 : i64, end = 2 : i64} : tensor<2x5xf32> -> tensor<1x5xf32>
      %n = tfm.neg %a : tensor<2x2xf32> -> tensor<2x2xf32>
      %m = tfm.abs %n : tensor<2x2xf32> -> tensor<2x2xf32>
      %c = tfm.concat %n, %m, %a {axis = 1 : i64} : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x6xf32>
      %d = tfm.slice %c {axis = 1 : i64, start = 1 : i64, end = 6 : i64} : tensor<2x6xf32> -> tensor<2x5xf32>
      %e = tfm.concat %b, %d {axis = 0 : i64} : tensor<1x5xf32>, tensor<2x5xf32> -> tensor<3x5xf32>
      %r = tfm.slice %e {axis = 0 : i64, start = 0 : i64, end = 3 : i64, step = 2 : i64} : tensor<3x5xf32> -> tensor<2x5xf32>
      return %r : tensor<2x5xf32>
    })mlir");
  Tensor x = tensor({2, 5}, {0, 1, -2, 3, 4, 5, -6, 7, 8, 9});
  // a = x[:, 1:5:2] = [[1 3] [-6 8]]; c = [-a | |a| | a] =
  // [[-1 -3 1 3 1 3] [6 -8 6 8 -6 8]]; d = c[:, 1:]; e = [x[1] ; d];
  // r = e[0:3:2] = rows 0 and 2.
  expectNear(runOne("f", {x}), {2, 5}, {5, -6, 7, 8, 9, -8, 6, 8, -6, 8}, 0);
}

TEST_F(EvaluatorTest, ArangeCosSin) {
  parse(R"mlir(
    func.func @f(%x: tensor<?x3xf32>) -> (tensor<?xf32>, tensor<3xi32>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) {
      %p = tfm.arange %x {axis = 0 : i64, start = -2 : i64} : tensor<?x3xf32> -> tensor<?xf32>
      %i = tfm.arange %x {axis = 1 : i64, start = 7 : i64} : tensor<?x3xf32> -> tensor<3xi32>
      %l = tfm.arange %p {axis = 0 : i64, start = 5000000000 : i64} : tensor<?xf32> -> tensor<?xi64>
      %c = tfm.cos %p : tensor<?xf32> -> tensor<?xf32>
      %s = tfm.sin %p : tensor<?xf32> -> tensor<?xf32>
      return %p, %i, %l, %c, %s : tensor<?xf32>, tensor<3xi32>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>
    })mlir");
  // x's values are never read: NaN changes nothing.
  Tensor x = tensor({4, 3}, std::vector<double>(12, std::nan("")));
  llvm::Expected<std::vector<Tensor>> out = run("f", {x});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 5u);
  expectNear((*out)[0], {4}, {-2, -1, 0, 1}, 0);
  expectNear((*out)[1], {3}, {7, 8, 9}, 0);
  EXPECT_EQ((*out)[1].dtype, ScalarType::I32);
  expectNear((*out)[2], {4}, {5e9, 5e9 + 1, 5e9 + 2, 5e9 + 3}, 0);
  EXPECT_EQ((*out)[2].dtype, ScalarType::I64);
  // cos(1) = 0.5403023058681398, sin(2) = 0.9092974268256817.
  expectNear((*out)[3], {4}, {-0.4161468365471424, 0.5403023058681398, 1, 0.5403023058681398},
             0);
  expectNear((*out)[4], {4}, {-0.9092974268256817, -0.8414709848078965, 0, 0.8414709848078965},
             0);
}

//===----------------------------------------------------------------------===//
// Integers, compare, cast, log, minimum, maximum
//===----------------------------------------------------------------------===//

/// Every value equal, NaN to NaN, and the dtype: for integer, i1 and
/// rounded results, which have no tolerance.
void expectExact(const Tensor &actual, ScalarType dtype, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<double> expected) {
  EXPECT_EQ(actual.dtype, dtype);
  ASSERT_EQ(llvm::ArrayRef<int64_t>(actual.shape), shape);
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual.data[i])) << "at flat index " << i;
    } else {
      EXPECT_EQ(actual.data[i], expected[i]) << "at flat index " << i;
    }
  }
}

TEST_F(EvaluatorTest, IntegerArithmeticWraps) {
  parse(R"mlir(
    func.func @f(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %c: tensor<2xi64>)
        -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi64>) {
      %s = tfm.add %a, %b : tensor<2x3xi32>, tensor<3xi32> -> tensor<2x3xi32>
      %d = tfm.sub %a, %b : tensor<2x3xi32>, tensor<3xi32> -> tensor<2x3xi32>
      %m = tfm.mul %a, %b : tensor<2x3xi32>, tensor<3xi32> -> tensor<2x3xi32>
      %n = tfm.neg %a : tensor<2x3xi32> -> tensor<2x3xi32>
      %v = tfm.abs %a : tensor<2x3xi32> -> tensor<2x3xi32>
      %k = arith.constant dense<4294967296> : tensor<i64>
      %w = tfm.mul %c, %k : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
      return %s, %d, %m, %n, %v, %w : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi64>
    })mlir");
  const double kMax = 2147483647, kMin = -2147483648.0;
  Tensor a = tensor({2, 3}, {kMax, kMin, 65536, -7, 0, 3}, ScalarType::I32);
  Tensor b = tensor({3}, {1, 1, 65536}, ScalarType::I32);
  Tensor c = tensor({2}, {3, -5}, ScalarType::I64);
  llvm::Expected<std::vector<Tensor>> out = run("f", {a, b, c});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 6u);
  // b broadcasts along rows. INT_MAX + 1 and INT_MIN - 1 wrap; 65536^2 =
  // 2^32 wraps to 0; 3 * 65536 = 196608 does not.
  expectExact((*out)[0], ScalarType::I32, {2, 3}, {kMin, kMin + 1, 131072, -6, 1, 65539});
  expectExact((*out)[1], ScalarType::I32, {2, 3}, {kMax - 1, kMax, 0, -8, -1, -65533});
  expectExact((*out)[2], ScalarType::I32, {2, 3}, {kMax, kMin, 0, -7, 0, 196608});
  // -INT_MIN and |INT_MIN| wrap to INT_MIN.
  expectExact((*out)[3], ScalarType::I32, {2, 3}, {-kMax, kMin, -65536, 7, 0, -3});
  expectExact((*out)[4], ScalarType::I32, {2, 3}, {kMax, kMin, 65536, 7, 0, 3});
  // i64 does not wrap at 32 bits: 3 * 2^32 and -5 * 2^32.
  expectExact((*out)[5], ScalarType::I64, {2}, {3 * 0x1p32, -5 * 0x1p32});
}

TEST_F(EvaluatorTest, MinimumMaximumPropagateNaN) {
  parse(R"mlir(
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>, tensor<2x3xi64>) {
      %lo = tfm.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %hi = tfm.maximum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %ilo = tfm.minimum %i, %j : tensor<2x1xi64>, tensor<3xi64> -> tensor<2x3xi64>
      %ihi = tfm.maximum %i, %j : tensor<2x1xi64>, tensor<3xi64> -> tensor<2x3xi64>
      return %lo, %hi, %ilo, %ihi : tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>, tensor<2x3xi64>
    })mlir");
  const double nan = std::nan("");
  Tensor a = tensor({4}, {1, nan, -0.5, 3});
  Tensor b = tensor({4}, {2, 0, nan, -kInf});
  Tensor i = tensor({2, 1}, {-1, 10}, ScalarType::I64);
  Tensor j = tensor({3}, {-4, 5, 10}, ScalarType::I64);
  llvm::Expected<std::vector<Tensor>> out = run("f", {a, b, i, j});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 4u);
  expectExact((*out)[0], ScalarType::F32, {4}, {1, nan, nan, -kInf});
  expectExact((*out)[1], ScalarType::F32, {4}, {2, nan, nan, 3});
  expectExact((*out)[2], ScalarType::I64, {2, 3}, {-4, -1, -1, -4, 5, 10});
  expectExact((*out)[3], ScalarType::I64, {2, 3}, {-1, 5, 10, 10, 10, 10});
}

TEST_F(EvaluatorTest, CompareEveryPredicate) {
  parse(R"mlir(
    func.func @f(%a: tensor<5xf32>, %b: tensor<f32>, %i: tensor<3xi32>, %j: tensor<2x1xi32>)
        -> (tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<2x3xi1>) {
      %lt = tfm.compare %a, %b {predicate = #tfm.compare<lt>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %le = tfm.compare %a, %b {predicate = #tfm.compare<le>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %gt = tfm.compare %a, %b {predicate = #tfm.compare<gt>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %ge = tfm.compare %a, %b {predicate = #tfm.compare<ge>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %eq = tfm.compare %a, %b {predicate = #tfm.compare<eq>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %ne = tfm.compare %a, %b {predicate = #tfm.compare<ne>} : tensor<5xf32>, tensor<f32> -> tensor<5xi1>
      %ij = tfm.compare %i, %j {predicate = #tfm.compare<le>} : tensor<3xi32>, tensor<2x1xi32> -> tensor<2x3xi1>
      return %lt, %le, %gt, %ge, %eq, %ne, %ij : tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<2x3xi1>
    })mlir");
  // Against 2: below, equal, NaN (false but for ne), above, -inf.
  Tensor a = tensor({5}, {1, 2, std::nan(""), 3, -kInf});
  Tensor b = tensor({}, {2});
  Tensor i = tensor({3}, {-1, 0, 7}, ScalarType::I32);
  Tensor j = tensor({2, 1}, {0, -2}, ScalarType::I32);
  llvm::Expected<std::vector<Tensor>> out = run("f", {a, b, i, j});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 7u);
  expectExact((*out)[0], ScalarType::Bool, {5}, {1, 0, 0, 0, 1});
  expectExact((*out)[1], ScalarType::Bool, {5}, {1, 1, 0, 0, 1});
  expectExact((*out)[2], ScalarType::Bool, {5}, {0, 0, 0, 1, 0});
  expectExact((*out)[3], ScalarType::Bool, {5}, {0, 1, 0, 1, 0});
  expectExact((*out)[4], ScalarType::Bool, {5}, {0, 1, 0, 0, 0});
  expectExact((*out)[5], ScalarType::Bool, {5}, {1, 0, 1, 1, 1});
  // i[k] <= j[r]: row 0 against 0, row 1 against -2.
  expectExact((*out)[6], ScalarType::Bool, {2, 3}, {1, 1, 0, 0, 0, 0});
}

TEST_F(EvaluatorTest, CastEdgeCases) {
  parse(R"mlir(
    func.func @f(%x: tensor<9xf32>, %n: tensor<4xi64>, %h: tensor<4xf32>, %m: tensor<2xi32>)
        -> (tensor<9xi32>, tensor<9xi64>, tensor<9xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xf16>, tensor<2xbf16>, tensor<9xf32>) {
      %xi = tfm.cast %x : tensor<9xf32> -> tensor<9xi32>
      %xl = tfm.cast %x : tensor<9xf32> -> tensor<9xi64>
      %xb = tfm.cast %x : tensor<9xf32> -> tensor<9xi1>
      %nf = tfm.cast %n : tensor<4xi64> -> tensor<4xf32>
      %ni = tfm.cast %n : tensor<4xi64> -> tensor<4xi32>
      %hb = tfm.cast %h : tensor<4xf32> -> tensor<4xbf16>
      %hh = tfm.cast %h : tensor<4xf32> -> tensor<4xf16>
      %mb = tfm.cast %m : tensor<2xi32> -> tensor<2xbf16>
      %bf = tfm.cast %xb : tensor<9xi1> -> tensor<9xf32>
      return %xi, %xl, %xb, %nf, %ni, %hb, %hh, %mb, %bf : tensor<9xi32>, tensor<9xi64>, tensor<9xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xf16>, tensor<2xbf16>, tensor<9xf32>
    })mlir");
  const double nan = std::nan("");
  const double kMax32 = 2147483647, kMin32 = -2147483648.0;
  Tensor x = tensor({9}, {-2.7, 2.7, 0x1p40, -0x1p40, kInf, -kInf, nan, -0.5, 0x1p31});
  Tensor n = tensor({4}, {16777217, 0x1p40 + 1, 0x1p32 + 5, 0x1p31}, ScalarType::I64);
  // bf16 ties to even: 1 + 2^-8 down to 1, 1 + 3 * 2^-8 up to 1 + 2^-6;
  // f16 overflows to inf from 65520 (halfway to 2^16).
  Tensor h = tensor({4}, {1 + 0x1p-8, 1 + 3 * 0x1p-8, 65520, 1.0 / 3});
  Tensor m = tensor({2}, {16842753, -16842753}, ScalarType::I32); // 2^24 + 2^16 + 1
  llvm::Expected<std::vector<Tensor>> out = run("f", {x, n, h, m});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 9u);
  // Toward zero, saturating; NaN to 0; 2^31 is one past i32's range.
  expectExact((*out)[0], ScalarType::I32, {9},
              {-2, 2, kMax32, kMin32, kMax32, kMin32, 0, 0, kMax32});
  // i64 holds +-2^40 and 2^31; its saturation (INT64_MAX, held as 2^63).
  expectExact((*out)[1], ScalarType::I64, {9},
              {-2, 2, 0x1p40, -0x1p40, 0x1p63, -0x1p63, 0, 0, 0x1p31});
  // != 0: NaN is true, -0.5 too.
  expectExact((*out)[2], ScalarType::Bool, {9}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  // To nearest even: 2^24 + 1 is a tie and rounds down; 2^40 + 1 and
  // 2^32 + 5 are nearer their lower neighbours.
  expectExact((*out)[3], ScalarType::F32, {4}, {16777216, 0x1p40, 0x1p32, 0x1p31});
  // Narrowing wraps: 2^32 + 5 -> 5, 2^31 -> -2^31.
  expectExact((*out)[4], ScalarType::I32, {4}, {16777217, 1, 5, kMin32});
  expectExact((*out)[5], ScalarType::BF16, {4}, {1, 1 + 0x1p-6, 65536, 0.333984375});
  // f16 holds 1 + 2^-8 and 1 + 3 * 2^-8 (10 bits), not 1/3.
  expectExact((*out)[6], ScalarType::F16, {4}, {1 + 0x1p-8, 1 + 3 * 0x1p-8, kInf, 0.333251953125});
  // One rounding from the integer: 2^24 + 2^17, not the 2^24 that going
  // through f32 (2^24 + 2^16, a bf16 tie) would give.
  expectExact((*out)[7], ScalarType::BF16, {2}, {16908288, -16908288});
  expectExact((*out)[8], ScalarType::F32, {9}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
}

TEST_F(EvaluatorTest, LogAndIntegerWhere) {
  parse(R"mlir(
    func.func @f(%x: tensor<6xf32>, %c: tensor<6xi1>, %a: tensor<6xi64>, %b: tensor<i64>)
        -> (tensor<6xf32>, tensor<6xi64>) {
      %l = tfm.log %x : tensor<6xf32> -> tensor<6xf32>
      %w = tfm.where %c, %a, %b : tensor<6xi1>, tensor<6xi64>, tensor<i64> -> tensor<6xi64>
      return %l, %w : tensor<6xf32>, tensor<6xi64>
    })mlir");
  const double nan = std::nan("");
  Tensor x = tensor({6}, {1, 2.718281828459045, 0, -0.0, -1, kInf});
  Tensor c = tensor({6}, {1, 0, 1, 0, 1, 0}, ScalarType::Bool);
  Tensor a = tensor({6}, {5, 6, 7, 8, 9, 0x1p40}, ScalarType::I64);
  Tensor b = tensor({}, {-3}, ScalarType::I64);
  llvm::Expected<std::vector<Tensor>> out = run("f", {x, c, a, b});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 2u);
  // ln(e) = 1 (to float); -inf at both zeros, NaN below.
  expectExact((*out)[0], ScalarType::F32, {6}, {0, 1, -kInf, -kInf, nan, kInf});
  expectExact((*out)[1], ScalarType::I64, {6}, {5, -3, 7, -3, 9, -3});
}

/// expand reads x[a, 0, c] for every b of [2, 3, 2] from [2, 1, 2], and a
/// new leading dim repeats everything; a `?` takes the input's size.
TEST_F(EvaluatorTest, ExpandStretchesOnesAndAddsLeadingDims) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x1x?xi64>) -> (tensor<2x3x?xi64>, tensor<2x2x1x?xi64>) {
      %e = tfm.expand %x : tensor<2x1x?xi64> -> tensor<2x3x?xi64>
      %l = tfm.expand %x : tensor<2x1x?xi64> -> tensor<2x2x1x?xi64>
      return %e, %l : tensor<2x3x?xi64>, tensor<2x2x1x?xi64>
    })mlir");
  Tensor x = tensor({2, 1, 2}, {1, 2, 0x1p40, -4}, ScalarType::I64);
  llvm::Expected<std::vector<Tensor>> out = run("f", {x});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 2u);
  expectExact((*out)[0], ScalarType::I64, {2, 3, 2},
              {1, 2, 1, 2, 1, 2, 0x1p40, -4, 0x1p40, -4, 0x1p40, -4});
  expectExact((*out)[1], ScalarType::I64, {2, 2, 1, 2}, {1, 2, 0x1p40, -4, 1, 2, 0x1p40, -4});
}

/// sign: -1, 0, 1 on integers; on floats zeros and NaN are their own sign.
/// ceil: the least integer above, -0 for (-1, 0), infinities and NaN kept.
TEST_F(EvaluatorTest, SignAndCeil) {
  parse(R"mlir(
    func.func @f(%n: tensor<5xi64>, %x: tensor<7xf32>)
        -> (tensor<5xi64>, tensor<7xf32>, tensor<7xf32>) {
      %s = tfm.sign %n : tensor<5xi64> -> tensor<5xi64>
      %t = tfm.sign %x : tensor<7xf32> -> tensor<7xf32>
      %c = tfm.ceil %x : tensor<7xf32> -> tensor<7xf32>
      return %s, %t, %c : tensor<5xi64>, tensor<7xf32>, tensor<7xf32>
    })mlir");
  const double nan = std::nan("");
  Tensor n = tensor({5}, {-0x1p40, -1, 0, 3, 0x1p40}, ScalarType::I64);
  Tensor x = tensor({7}, {-2.5, -0.5, -0.0, 0.0, 2.25, kInf, nan});
  llvm::Expected<std::vector<Tensor>> out = run("f", {n, x});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 3u);
  expectExact((*out)[0], ScalarType::I64, {5}, {-1, -1, 0, 1, 1});
  expectExact((*out)[1], ScalarType::F32, {7}, {-1, -1, -0.0, 0, 1, 1, nan});
  EXPECT_TRUE(std::signbit((*out)[1].data[2]));
  expectExact((*out)[2], ScalarType::F32, {7}, {-2, -0.0, -0.0, 0, 3, kInf, nan});
  EXPECT_TRUE(std::signbit((*out)[2].data[1]));
}

/// x[a, b, c] = 100a + 10b + c, so each gathered value spells the position
/// it was read from. Along the first, middle and last axis; negative
/// indices count from the end; i32 and i64 indices; more indices than rows
/// along the axis (some read twice) and fewer.
TEST_F(EvaluatorTest, GatherElementsAlongEachAxis) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x3x4xf32>, %i0: tensor<1x3x4xi64>, %i1: tensor<2x2x4xi32>,
                 %i2: tensor<2x3x5xi64>) -> (tensor<1x3x4xf32>, tensor<2x2x4xf32>, tensor<2x3x5xf32>) {
      %g0 = tfm.gather_elements %x, %i0 {axis = 0 : i64} : tensor<2x3x4xf32>, tensor<1x3x4xi64> -> tensor<1x3x4xf32>
      %g1 = tfm.gather_elements %x, %i1 {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x2x4xi32> -> tensor<2x2x4xf32>
      %g2 = tfm.gather_elements %x, %i2 {axis = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x5xi64> -> tensor<2x3x5xf32>
      return %g0, %g1, %g2 : tensor<1x3x4xf32>, tensor<2x2x4xf32>, tensor<2x3x5xf32>
    }
    func.func @ints(%x: tensor<3xi64>, %i: tensor<4xi32>) -> tensor<4xi64> {
      %g = tfm.gather_elements %x, %i {axis = 0 : i64} : tensor<3xi64>, tensor<4xi32> -> tensor<4xi64>
      return %g : tensor<4xi64>
    })mlir");
  Tensor x = tensor({2, 3, 4}, {});
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        x.data.push_back(100 * a + 10 * b + c);
  Tensor i0 = tensor({1, 3, 4}, {1, 0, -1, -2, 0, 0, 0, 0, 1, 1, 1, 1}, ScalarType::I64);
  Tensor i1 = tensor({2, 2, 4}, {2, -1, 0, 1, -3, 1, 2, 0, 0, 0, 0, 0, -1, -2, -3, 2},
                     ScalarType::I32);
  // Every row of i2 is [3, -4, 0, -1, 2]: columns 3, 0, 0, 3, 2.
  Tensor i2 = tensor({2, 3, 5}, {}, ScalarType::I64);
  for (int row = 0; row < 6; ++row)
    i2.data.insert(i2.data.end(), {3, -4, 0, -1, 2});
  llvm::Expected<std::vector<Tensor>> out = run("f", {x, i0, i1, i2});
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 3u);
  // Axis 0, rows 1 0 1 0 (-1 and -2 of 2) / all 0 / all 1.
  expectNear((*out)[0], {1, 3, 4}, {100, 1, 102, 3, 10, 11, 12, 13, 120, 121, 122, 123}, 0);
  // Axis 1 of 3: -1 -> 2, -2 -> 1, -3 -> 0.
  expectNear((*out)[1], {2, 2, 4},
             {20, 21, 2, 13, 0, 11, 22, 3, 100, 101, 102, 103, 120, 111, 102, 123}, 0);
  std::vector<double> want2;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c : {3, 0, 0, 3, 2})
        want2.push_back(100 * a + 10 * b + c);
  expectNear((*out)[2], {2, 3, 5}, want2, 0);

  // Any element type moves: i64 values past 2^32, i32 indices.
  Tensor got = runOne("ints", {tensor({3}, {5e9, -7, 42}, ScalarType::I64),
                               tensor({4}, {2, -3, 1, -2}, ScalarType::I32)});
  expectNear(got, {4}, {42, 5e9, -7, -7}, 0);
  EXPECT_EQ(got.dtype, ScalarType::I64);
}

TEST_F(EvaluatorTest, CausalMaskAlignsLastQueryWithLastKey) {
  parse(R"mlir(
    func.func @f(%s: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %m = tfm.causal_mask %s {value = -1.0e+09 : f64} : tensor<2x3xf32> -> tensor<2x3xf32>
      return %m : tensor<2x3xf32>
    })mlir");
  // Sq = 2, Sk = 3: query 0 sees keys 0..1, query 1 sees all three.
  expectNear(runOne("f", {tensor({2, 3}, {1, 2, 3, 4, 5, 6})}), {2, 3},
             {1, 2, -1e9, 4, 5, 6}, 0);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, AttentionByHand) {
  parse(R"mlir(
    func.func @f(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>, %v: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
      %o = tfm.attention %q, %k, %v {scale = 1.0 : f64}
          : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
      return %o : tensor<1x1x2x2xf32>
    })mlir");
  // Scores [[1 0] [0 1]]; softmax weights e/(1+e) = 0.7310585786300049 on
  // the matching key and 0.2689414213699951 on the other.
  const double hi = 0.7310585786300049, lo = 0.2689414213699951;
  Tensor identity = tensor({1, 1, 2, 2}, {1, 0, 0, 1});
  Tensor v = tensor({1, 1, 2, 2}, {1, 2, 3, 4});
  expectNear(
      runOne("f", {identity, identity, v}), {1, 1, 2, 2},
      {hi * 1 + lo * 3, hi * 2 + lo * 4, lo * 1 + hi * 3, lo * 2 + hi * 4},
      1e-15);
}

TEST_F(EvaluatorTest, CausalAttentionWithFewerQueriesThanKeys) {
  parse(R"mlir(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x3x1xf32>, %v: tensor<1x1x3x1xf32>) -> tensor<1x1x2x1xf32> {
      %o = tfm.attention %q, %k, %v {scale = 1.0 : f64, causal = true}
          : tensor<1x1x2x1xf32>, tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32> -> tensor<1x1x2x1xf32>
      return %o : tensor<1x1x2x1xf32>
    })mlir");
  // q = 0 makes every visible key equally weighted: query 0 sees keys 0, 1
  // (mean of 10, 20), query 1 sees keys 0..2 (mean of 10, 20, 60).
  Tensor o = runOne("f", {tensor({1, 1, 2, 1}, {0, 0}),
                          tensor({1, 1, 3, 1}, {1, 2, 3}),
                          tensor({1, 1, 3, 1}, {10, 20, 60})});
  expectNear(o, {1, 1, 2, 1}, {15, 30}, 1e-13);
}

TEST_F(EvaluatorTest, FullyMaskedRowIsZero) {
  parse(R"mlir(
    func.func @causal(%q: tensor<1x1x3x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x1xf32>) -> tensor<1x1x3x1xf32> {
      %o = tfm.attention %q, %k, %v {scale = 1.0 : f64, causal = true}
          : tensor<1x1x3x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32> -> tensor<1x1x3x1xf32>
      return %o : tensor<1x1x3x1xf32>
    }
    func.func @padding(%q: tensor<2x1x1x1xf32>, %k: tensor<2x1x2x1xf32>, %v: tensor<2x1x2x1xf32>, %p: tensor<2x2xi64>) -> tensor<2x1x1x1xf32> {
      %o = tfm.attention %q, %k, %v key_padding_mask(%p : tensor<2x2xi64>) {scale = 1.0 : f64}
          : tensor<2x1x1x1xf32>, tensor<2x1x2x1xf32>, tensor<2x1x2x1xf32> -> tensor<2x1x1x1xf32>
      return %o : tensor<2x1x1x1xf32>
    })mlir");
  // Sq = 3 > Sk = 2: query 0 would attend to keys j > 0 + (2 - 3), i.e.
  // none, so its row is 0; query 1 sees key 0; query 2 sees both.
  Tensor o = runOne("causal", {tensor({1, 1, 3, 1}, {0, 0, 0}),
                               tensor({1, 1, 2, 1}, {1, 2}),
                               tensor({1, 1, 2, 1}, {4, 8})});
  expectNear(o, {1, 1, 3, 1}, {0, 4, 6}, 1e-13);

  // Batch 0 keeps key 1 only; batch 1 masks both keys and must give 0.
  Tensor p = runOne("padding", {tensor({2, 1, 1, 1}, {1, 1}),
                                tensor({2, 1, 2, 1}, {1, 2, 3, 4}),
                                tensor({2, 1, 2, 1}, {5, 7, 9, 11}),
                                tensor({2, 2}, {0, 1, 0, 0}, ScalarType::I64)});
  expectNear(p, {2, 1, 1, 1}, {7, 0}, 0);
}

TEST_F(EvaluatorTest, AdditiveMaskBroadcasts) {
  parse(R"mlir(
    func.func @f(%q: tensor<1x2x1x1xf32>, %k: tensor<1x2x2x1xf32>, %v: tensor<1x2x2x1xf32>, %m: tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32> {
      %o = tfm.attention %q, %k, %v mask(%m : tensor<1x1x1x2xf32>) {scale = 1.0 : f64}
          : tensor<1x2x1x1xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32> -> tensor<1x2x1x1xf32>
      return %o : tensor<1x2x1x1xf32>
    })mlir");
  // q = 0: scores are the mask [0, ln 3] for both heads, weights [1/4, 3/4].
  Tensor o = runOne("f", {tensor({1, 2, 1, 1}, {0, 0}),
                          tensor({1, 2, 2, 1}, {1, 2, 3, 4}),
                          tensor({1, 2, 2, 1}, {4, 8, 100, 200}),
                          tensor({1, 1, 1, 2}, {0, std::log(3.0)})});
  expectNear(o, {1, 2, 1, 1}, {0.25 * 4 + 0.75 * 8, 0.25 * 100 + 0.75 * 200},
             1e-12);
}

TEST_F(EvaluatorTest, GroupedQueryHeadMapping) {
  parse(R"mlir(
    func.func @f(%q: tensor<1x4x1x1xf32>, %k: tensor<1x2x1x1xf32>, %v: tensor<1x2x1x1xf32>) -> tensor<1x4x1x1xf32> {
      %o = tfm.attention %q, %k, %v {scale = 1.0 : f64}
          : tensor<1x4x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32> -> tensor<1x4x1x1xf32>
      return %o : tensor<1x4x1x1xf32>
    })mlir");
  // One key, so each head returns its key/value head's value: heads 0, 1
  // share kv head 0 and heads 2, 3 kv head 1 (h / (H / Hkv), not h % Hkv).
  Tensor o = runOne("f", {tensor({1, 4, 1, 1}, {1, 2, 3, 4}),
                          tensor({1, 2, 1, 1}, {1, 1}),
                          tensor({1, 2, 1, 1}, {10, 20})});
  expectNear(o, {1, 4, 1, 1}, {10, 10, 20, 20}, 0);
}

/// The fused op must mean exactly what the decomposed pattern that
/// fuse-attention raises means: GQA expanded by repeat_interleave, scale by
/// mul, additive mask by add, causal mask, key padding by where, softmax.
TEST_F(EvaluatorTest, DecomposedAndFusedAttentionAgree) {
  parse(R"mlir(
    func.func @fused(%q: tensor<2x4x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                     %mask: tensor<1x1x3x5xf32>, %pad: tensor<2x5xi1>) -> tensor<2x4x3x3xf32> {
      %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x3x5xf32>) key_padding_mask(%pad : tensor<2x5xi1>)
          {scale = 0.5 : f64, causal = true}
          : tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32> -> tensor<2x4x3x3xf32>
      return %o : tensor<2x4x3x3xf32>
    }
    func.func @decomposed(%q: tensor<2x4x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                          %mask: tensor<1x1x3x5xf32>, %pad: tensor<2x5xi1>) -> tensor<2x4x3x3xf32> {
      %half = arith.constant dense<5.000000e-01> : tensor<f32>
      %ninf = arith.constant dense<0xFF800000> : tensor<f32>
      %k4 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 2 : i64} : tensor<2x2x5x4xf32> -> tensor<2x4x5x4xf32>
      %v4 = tfm.repeat_interleave %v {axis = 1 : i64, repeats = 2 : i64} : tensor<2x2x5x3xf32> -> tensor<2x4x5x3xf32>
      %s = tfm.matmul %q, %k4 {transpose_b = true} : tensor<2x4x3x4xf32>, tensor<2x4x5x4xf32> -> tensor<2x4x3x5xf32>
      %ss = tfm.mul %s, %half : tensor<2x4x3x5xf32>, tensor<f32> -> tensor<2x4x3x5xf32>
      %sm = tfm.add %ss, %mask : tensor<2x4x3x5xf32>, tensor<1x1x3x5xf32> -> tensor<2x4x3x5xf32>
      %sc = tfm.causal_mask %sm : tensor<2x4x3x5xf32> -> tensor<2x4x3x5xf32>
      %keep = tfm.reshape %pad : tensor<2x5xi1> -> tensor<2x1x1x5xi1>
      %sp = tfm.where %keep, %sc, %ninf : tensor<2x1x1x5xi1>, tensor<2x4x3x5xf32>, tensor<f32> -> tensor<2x4x3x5xf32>
      %p = tfm.softmax %sp {axis = -1 : i64} : tensor<2x4x3x5xf32> -> tensor<2x4x3x5xf32>
      %o = tfm.matmul %p, %v4 : tensor<2x4x3x5xf32>, tensor<2x4x5x3xf32> -> tensor<2x4x3x3xf32>
      return %o : tensor<2x4x3x3xf32>
    })mlir");
  // No row is fully masked (query i always sees key 0 unless padding drops
  // it; key 1 is kept in both batches), so both forms are defined.
  std::vector<Tensor> inputs = {
      pseudoRandom({2, 4, 3, 4}, 1), pseudoRandom({2, 2, 5, 4}, 2),
      pseudoRandom({2, 2, 5, 3}, 3), pseudoRandom({1, 1, 3, 5}, 4),
      tensor({2, 5}, {1, 1, 0, 1, 1, 0, 1, 1, 1, 0}, ScalarType::Bool)};
  Tensor fused = runOne("fused", inputs);
  Tensor decomposed = runOne("decomposed", inputs);
  // Each decomposed op rounds its f32 result: a few float ulps apart.
  expectNear(fused, {2, 4, 3, 3}, decomposed.data, 1e-6);
}

/// The same agreement with heads split and merged by reshape and transpose
/// on dynamic sequence lengths, as exporters write self-attention.
TEST_F(EvaluatorTest, DecomposedAndFusedSelfAttentionAgreeOnDynamicShapes) {
  parse(R"mlir(
    func.func @fused(%x: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
      %h = tfm.reshape %x : tensor<1x?x8xf32> -> tensor<1x?x2x4xf32>
      %t = tfm.transpose %h {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x4xf32> -> tensor<1x2x?x4xf32>
      %o = tfm.attention %t, %t, %t {scale = 0.5 : f64, causal = true}
          : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
      %m = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x2x?x4xf32> -> tensor<1x?x2x4xf32>
      %y = tfm.reshape %m : tensor<1x?x2x4xf32> -> tensor<1x?x8xf32>
      return %y : tensor<1x?x8xf32>
    }
    func.func @decomposed(%x: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
      %two = arith.constant dense<2.000000e+00> : tensor<f32>
      %h = tfm.reshape %x : tensor<1x?x8xf32> -> tensor<1x?x2x4xf32>
      %t = tfm.transpose %h {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x4xf32> -> tensor<1x2x?x4xf32>
      %s = tfm.matmul %t, %t {transpose_b = true} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x?xf32>
      %ss = tfm.div %s, %two : tensor<1x2x?x?xf32>, tensor<f32> -> tensor<1x2x?x?xf32>
      %sc = tfm.causal_mask %ss : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
      %p = tfm.softmax %sc {axis = 3 : i64} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
      %o = tfm.matmul %p, %t : tensor<1x2x?x?xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
      %m = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x2x?x4xf32> -> tensor<1x?x2x4xf32>
      %y = tfm.reshape %m : tensor<1x?x2x4xf32> -> tensor<1x?x8xf32>
      return %y : tensor<1x?x8xf32>
    })mlir");
  for (int64_t S : {1, 4, 7}) {
    Tensor x = pseudoRandom({1, S, 8}, 10 + S);
    Tensor fused = runOne("fused", {x});
    Tensor decomposed = runOne("decomposed", {x});
    expectNear(fused, {1, S, 8}, decomposed.data, 1e-6);
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

class EvaluatorErrorTest : public EvaluatorTest {
protected:
  void SetUp() override {
    parse(R"mlir(
      func.func @embed(%ids: tensor<1x?xi32>) -> tensor<1x?x2xf32> {
        %wte = tfm.weight "wte" : tensor<3x2xf32>
        %x = tfm.embedding %wte, %ids : tensor<3x2xf32>, tensor<1x?xi32> -> tensor<1x?x2xf32>
        return %x : tensor<1x?x2xf32>
      }
      func.func @fixed(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
        %y = tfm.relu %x : tensor<2x8xf32> -> tensor<2x8xf32>
        return %y : tensor<2x8xf32>
      }
      func.func @unknown(%x: tensor<2xf32>) -> tensor<2xf32> {
        %y = arith.addf %x, %x : tensor<2xf32>
        return %y : tensor<2xf32>
      }
      func.func @broadcast(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
        %y = tfm.add %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
        return %y : tensor<?xf32>
      }
      func.func @gather(%x: tensor<2x3xf32>, %i: tensor<2x?xi64>) -> tensor<2x?xf32> {
        %y = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x?xi64> -> tensor<2x?xf32>
        return %y : tensor<2x?xf32>
      })mlir");
    weights["wte"] = tensor({3, 2}, {0, 1, 2, 3, 4, 5});
  }
};

TEST_F(EvaluatorErrorTest, WrongInputCount) {
  std::string err = runError("fixed", {});
  EXPECT_NE(err.find("expects 1 inputs, got 0"), std::string::npos) << err;
}

TEST_F(EvaluatorErrorTest, WrongShape) {
  std::string err = runError("fixed", {pseudoRandom({2, 7}, 1)});
  EXPECT_NE(err.find("argument 0 dimension 1 is 7 but the IR declares 8"),
            std::string::npos)
      << err;
  err = runError("fixed", {pseudoRandom({16}, 1)});
  EXPECT_NE(err.find("argument 0 has rank 1 but the IR declares 2"),
            std::string::npos)
      << err;
  Tensor short_ = pseudoRandom({2, 8}, 1);
  short_.data.pop_back();
  err = runError("fixed", {short_});
  EXPECT_NE(err.find("holds 15 values"), std::string::npos) << err;
}

TEST_F(EvaluatorErrorTest, WrongDType) {
  std::string err = runError("embed", {tensor({1, 2}, {0, 1})});
  EXPECT_NE(err.find("argument 0 has dtype f32 but the IR declares "
                     "tensor<1x?xi32>"),
            std::string::npos)
      << err;
}

TEST_F(EvaluatorErrorTest, IdOutOfRange) {
  std::string err =
      runError("embed", {tensor({1, 3}, {0, 3, 1}, ScalarType::I32)});
  EXPECT_NE(err.find("tfm.embedding"), std::string::npos) << err;
  EXPECT_NE(err.find("id 3 at ids[0, 1] is outside the table's range [0, 3)"),
            std::string::npos)
      << err;
  err = runError("embed", {tensor({1, 1}, {-1}, ScalarType::I32)});
  EXPECT_NE(err.find("id -1"), std::string::npos) << err;
}

/// An index outside [-dim, dim) is the op's error, naming the index, where
/// it sits in `indices` and the range; -dim itself is the first row.
TEST_F(EvaluatorErrorTest, GatherIndexOutOfRange) {
  Tensor x = pseudoRandom({2, 3}, 1);
  std::string err = runError("gather", {x, tensor({2, 2}, {0, 1, 2, 3}, ScalarType::I64)});
  EXPECT_NE(err.find("tfm.gather_elements"), std::string::npos) << err;
  EXPECT_NE(err.find("index 3 at indices[1, 1] is outside [-3, 3) along axis 1"),
            std::string::npos)
      << err;
  err = runError("gather", {x, tensor({2, 1}, {-3, -4}, ScalarType::I64)});
  EXPECT_NE(err.find("index -4 at indices[1, 0] is outside [-3, 3)"), std::string::npos)
      << err;
}

TEST_F(EvaluatorErrorTest, UnknownOp) {
  std::string err = runError("unknown", {tensor({2}, {1, 2})});
  EXPECT_NE(err.find("arith.addf"), std::string::npos) << err;
  EXPECT_NE(err.find("unsupported op"), std::string::npos) << err;
}

TEST_F(EvaluatorErrorTest, DynamicShapesThatDoNotBroadcast) {
  std::string err =
      runError("broadcast", {pseudoRandom({3}, 1), pseudoRandom({4}, 2)});
  EXPECT_NE(err.find("tfm.add"), std::string::npos) << err;
  EXPECT_NE(err.find("cannot broadcast 'lhs' [3] with 'rhs' [4]"),
            std::string::npos)
      << err;
}

TEST_F(EvaluatorErrorTest, MissingWeight) {
  weights.clear();
  std::string err = runError("embed", {tensor({1, 1}, {0}, ScalarType::I32)});
  EXPECT_NE(err.find("weight 'wte'"), std::string::npos) << err;
}

} // namespace
