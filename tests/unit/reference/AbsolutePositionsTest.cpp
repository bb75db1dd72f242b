//===- AbsolutePositionsTest.cpp - golden values of the absolute encodings ===//
//
// The reference evaluator against literal transcriptions, in double, of the
// code each encoding comes from: PyTorch's and tensor2tensor's sinusoids for
// the multiplicative form, FLOATER's flow_func_linear stepped by Euler,
// the complex-order paper's ComplexNN.get_embedding, and the complex
// product written with std::complex (and as complexPyTorch's ComplexLinear
// computes it). Each transcription keeps its source's layout (PyTorch
// weights [out, in], the time concatenated last, positions from 1) and
// converts only where the op's operands are laid out differently, so a
// disagreement in a convention shows up here.
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
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

using namespace mlir;
using namespace attune;
using namespace attune::reference;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Half an ulp of float, relative: the evaluator rounds f32 results.
constexpr double kFloatRounding = 6e-8;

/// A row-major [rows][cols] matrix in double.
using Matrix = std::vector<std::vector<double>>;

Tensor tensor(std::vector<int64_t> shape, std::vector<double> data,
              ScalarType dtype = ScalarType::F32) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

/// Deterministic values in [lo, hi) (a small LCG; the exact values do not
/// matter, only that both sides see the same ones).
std::vector<double> pseudoRandom(size_t n, uint64_t seed, double lo = -1.0,
                                 double hi = 1.0) {
  std::vector<double> v(n);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double &x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double unit = static_cast<double>(state >> 11) * 0x1.0p-53;
    // Through float: the evaluator's f32 inputs hold floats.
    x = static_cast<float>(lo + (hi - lo) * unit);
  }
  return v;
}

Matrix matrix(int64_t rows, int64_t cols, uint64_t seed, double lo = -1.0,
              double hi = 1.0) {
  std::vector<double> flat = pseudoRandom(rows * cols, seed, lo, hi);
  Matrix m(rows);
  for (int64_t r = 0; r < rows; ++r)
    m[r].assign(flat.begin() + r * cols, flat.begin() + (r + 1) * cols);
  return m;
}

std::vector<double> flatten(const Matrix &m) {
  std::vector<double> flat;
  for (const auto &row : m)
    flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

Matrix transpose(const Matrix &m) {
  Matrix t(m.front().size(), std::vector<double>(m.size()));
  for (size_t r = 0; r < m.size(); ++r)
    for (size_t c = 0; c < m[r].size(); ++c)
      t[c][r] = m[r][c];
  return t;
}

/// PyTorch's nn.Linear: y = x W^T + b, W [out, in].
std::vector<double> torchLinear(const std::vector<double> &x, const Matrix &W,
                                const std::vector<double> &b) {
  std::vector<double> y(W.size());
  for (size_t o = 0; o < W.size(); ++o) {
    y[o] = b[o];
    for (size_t i = 0; i < x.size(); ++i)
      y[o] += x[i] * W[o][i];
  }
  return y;
}

class AbsolutePositionsTest : public ::testing::Test {
protected:
  AbsolutePositionsTest() {
    context.loadDialect<tfm::TfmDialect, func::FuncDialect, arith::ArithDialect>();
  }

  void parse(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << "failed to parse:\n" << source.str();
  }

  llvm::Expected<std::vector<Tensor>> run(llvm::StringRef name,
                                          std::vector<Tensor> inputs) {
    auto fn = module->lookupSymbol<func::FuncOp>(name);
    if (!fn)
      return llvm::createStringError("no function " + name);
    WeightLookup none = [](llvm::StringRef weight,
                           RankedTensorType) -> llvm::Expected<Tensor> {
      return llvm::createStringError("no weight " + weight);
    };
    return evaluate(fn, inputs, none);
  }

  Tensor runOne(llvm::StringRef name, std::vector<Tensor> inputs) {
    auto out = run(name, std::move(inputs));
    if (!out) {
      ADD_FAILURE() << llvm::toString(out.takeError());
      return {};
    }
    EXPECT_EQ(out->size(), 1u);
    return out->empty() ? Tensor{} : (*out)[0];
  }

  std::string runError(llvm::StringRef name, std::vector<Tensor> inputs) {
    auto out = run(name, std::move(inputs));
    if (out) {
      ADD_FAILURE() << "expected an error from @" << name.str();
      return "";
    }
    return llvm::toString(out.takeError());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

/// Every element of `actual` within f32 rounding (plus `tol`) of `expected`.
void expectNear(const Tensor &actual, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<double> expected, double tol = 1e-12) {
  ASSERT_EQ(llvm::ArrayRef<int64_t>(actual.shape), shape);
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.data[i], expected[i],
                tol + kFloatRounding * std::fabs(expected[i]))
        << "at flat index " << i;
}

//===----------------------------------------------------------------------===//
// tfm.multiplicative_position
//===----------------------------------------------------------------------===//

TEST_F(AbsolutePositionsTest, MultiplicativeLearnedTableIsAnElementwiseProduct) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x?x5xf32>, %p: tensor<6x5xf32>) -> tensor<2x?x5xf32> {
      %y = tfm.multiplicative_position %x, %p : tensor<2x?x5xf32>, tensor<6x5xf32> -> tensor<2x?x5xf32>
      return %y : tensor<2x?x5xf32>
    })mlir");
  const int64_t B = 2, S = 4, D = 5, P = 6;
  std::vector<double> x = pseudoRandom(B * S * D, 1), p = pseudoRandom(P * D, 2);
  // x * p[:S] with p broadcast over the batch (rows S..P-1 unused).
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d)
        want.push_back(x[(b * S + s) * D + d] * p[s * D + d]);
  expectNear(runOne("f", {tensor({B, S, D}, x), tensor({P, D}, p)}), {B, S, D}, want);
  // S = P + 1 has no row to multiply by.
  std::string err = runError("f", {tensor({B, P + 1, D}, pseudoRandom(B * (P + 1) * D, 3)),
                                   tensor({P, D}, p)});
  EXPECT_NE(err.find("tfm.multiplicative_position"), std::string::npos) << err;
  EXPECT_NE(err.find("sequence length 7 exceeds the position table's 6 rows"),
            std::string::npos)
      << err;
}

TEST_F(AbsolutePositionsTest, MultiplicativeSinusoidTranscribesBothSources) {
  parse(R"mlir(
    func.func @interleaved(%x: tensor<2x9x6xf32>) -> tensor<2x9x6xf32> {
      %y = tfm.multiplicative_position %x : tensor<2x9x6xf32> -> tensor<2x9x6xf32>
      return %y : tensor<2x9x6xf32>
    }
    func.func @concat(%x: tensor<2x9x7xf32>) -> tensor<2x9x7xf32> {
      %y = tfm.multiplicative_position %x {form = #tfm.sinusoidal_form<concat>, min_timescale = 2.0 : f64, max_timescale = 5000.0 : f64}
          : tensor<2x9x7xf32> -> tensor<2x9x7xf32>
      return %y : tensor<2x9x7xf32>
    })mlir");
  const int64_t B = 2, S = 9;
  {
    // PyTorch tutorial / Annotated Transformer, d_model = 6:
    //   div_term = exp(arange(0, d_model, 2) * (-log(10000.0) / d_model))
    //   pe[:, 0::2] = sin(position * div_term)
    //   pe[:, 1::2] = cos(position * div_term)
    const int64_t dModel = 6;
    Matrix pe(S, std::vector<double>(dModel));
    for (int64_t position = 0; position < S; ++position)
      for (int64_t even = 0; even < dModel; even += 2) {
        double divTerm = std::exp(static_cast<double>(even) * (-std::log(10000.0) / dModel));
        pe[position][even] = std::sin(position * divTerm);
        pe[position][even + 1] = std::cos(position * divTerm);
      }
    std::vector<double> x = pseudoRandom(B * S * dModel, 4), want;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < dModel; ++d)
          want.push_back(x[(b * S + s) * dModel + d] * pe[s][d]);
    expectNear(runOne("interleaved", {tensor({B, S, dModel}, x)}), {B, S, dModel}, want);
  }
  {
    // tensor2tensor get_timing_signal_1d(length, channels = 7, min 2, max 5000):
    //   num_timescales = channels // 2
    //   log_timescale_increment = log(max / min) / max(num_timescales - 1, 1)
    //   inv_timescales = min * exp(range(num_timescales) * -log_timescale_increment)
    //   scaled_time = position[:, None] * inv_timescales[None, :]
    //   signal = concat([sin(scaled_time), cos(scaled_time)], axis=1)
    //   signal = pad(signal, [[0, 0], [0, channels % 2]])
    const int64_t channels = 7, numTimescales = channels / 2;
    const double minTimescale = 2.0, maxTimescale = 5000.0;
    double logIncrement = std::log(maxTimescale / minTimescale) /
                          std::max<double>(numTimescales - 1, 1);
    Matrix signal(S);
    for (int64_t position = 0; position < S; ++position) {
      std::vector<double> sines, cosines;
      for (int64_t i = 0; i < numTimescales; ++i) {
        double inv = minTimescale * std::exp(i * -logIncrement);
        sines.push_back(std::sin(position * inv));
        cosines.push_back(std::cos(position * inv));
      }
      signal[position] = sines;
      signal[position].insert(signal[position].end(), cosines.begin(), cosines.end());
      signal[position].resize(channels, 0.0);
    }
    std::vector<double> x = pseudoRandom(B * S * channels, 5), want;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < channels; ++d)
          want.push_back(x[(b * S + s) * channels + d] * signal[s][d]);
    Tensor y = runOne("concat", {tensor({B, S, channels}, x)});
    expectNear(y, {B, S, channels}, want);
    // The padded column multiplies to zero.
    EXPECT_EQ(y.data[channels - 1], 0.0);
  }
}

//===----------------------------------------------------------------------===//
// tfm.recursive_position
//===----------------------------------------------------------------------===//

/// FLOATER (xuanqing94/FLOATER, fairseq/modules/flow_funcs.py):
///   Linear_t(t, x) = nn.Linear(in + 1, out)(cat([x, t]))
///   flow_func_linear(t, x) = Linear_t2(t, ReLU(Linear_t1(t, x)))
/// stepped by forward Euler on the grid t_k = k * dt:
///   p_{k+1} = p_k + dt * flow(t_k, p_k), p_0 the initial state.
/// Weights in PyTorch's layout: W1 [H, D + 1], W2 [D, H + 1].
Matrix floaterPositions(int64_t S, const std::vector<double> &p0, const Matrix &W1,
                        const std::vector<double> &bias1, const Matrix &W2,
                        const std::vector<double> &bias2, double dt) {
  auto linearT = [](double t, std::vector<double> x, const Matrix &W,
                    const std::vector<double> &b) {
    x.push_back(t); // time = ones * t, concatenated as the last feature
    return torchLinear(x, W, b);
  };
  Matrix positions;
  std::vector<double> p = p0;
  for (int64_t k = 0; k < S; ++k) {
    positions.push_back(p);
    double t = k * dt;
    std::vector<double> hidden = linearT(t, p, W1, bias1);
    for (double &h : hidden)
      h = std::max(h, 0.0); // nn.ReLU
    std::vector<double> flow = linearT(t, hidden, W2, bias2);
    for (size_t d = 0; d < p.size(); ++d)
      p[d] += dt * flow[d];
  }
  return positions;
}

TEST_F(AbsolutePositionsTest, RecursiveTranscribesFloaterStepByStep) {
  parse(R"mlir(
    func.func @f(%x: tensor<2x?x5xf32>, %p0: tensor<5xf32>, %w1: tensor<6x3xf32>, %b1: tensor<3xf32>,
                 %w2: tensor<4x5xf32>, %b2: tensor<5xf32>) -> tensor<2x?x5xf32> {
      %y = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.25 : f64}
          : tensor<2x?x5xf32>, tensor<5xf32>, tensor<6x3xf32>, tensor<3xf32>, tensor<4x5xf32>, tensor<5xf32> -> tensor<2x?x5xf32>
      return %y : tensor<2x?x5xf32>
    })mlir");
  const int64_t B = 2, D = 5, H = 3;
  const double dt = 0.25;
  std::vector<double> p0 = pseudoRandom(D, 10), bias1 = pseudoRandom(H, 11),
                      bias2 = pseudoRandom(D, 12);
  Matrix W1 = matrix(H, D + 1, 13), W2 = matrix(D, H + 1, 14);
  for (int64_t S : {1, 2, 11}) {
    SCOPED_TRACE("S = " + std::to_string(S));
    Matrix p = floaterPositions(S, p0, W1, bias1, W2, bias2, dt);
    std::vector<double> x = pseudoRandom(B * S * D, 15), want;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
          want.push_back(x[(b * S + s) * D + d] + p[s][d]);
    // The op's weights are in-features major: PyTorch's, transposed.
    Tensor y = runOne("f", {tensor({B, S, D}, x), tensor({D}, p0),
                            tensor({D + 1, H}, flatten(transpose(W1))),
                            tensor({H}, bias1),
                            tensor({H + 1, D}, flatten(transpose(W2))),
                            tensor({D}, bias2)});
    expectNear(y, {B, S, D}, want);
  }
  // The positions move: a test whose table were constant would not see the
  // recursion at all.
  Matrix p = floaterPositions(3, p0, W1, bias1, W2, bias2, dt);
  EXPECT_GT(std::fabs(p[2][0] - p[0][0]), 1e-3);
}

TEST_F(AbsolutePositionsTest, RecursiveFoldMatchesTheEvaluatedScan) {
  // Canonicalization evaluates a static, constant table at compile time
  // (dialects/tfm/RecursivePositionFold.cpp); the evaluator computes the
  // same recursion independently from the op before the fold.
  const int64_t D = 4, H = 6, S = 13;
  auto dense = [](const std::vector<double> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  auto denseMatrix = [&](int64_t rows, int64_t cols, const std::vector<double> &v) {
    std::string s = "[";
    for (int64_t r = 0; r < rows; ++r)
      s += (r ? ", " : "") +
           dense(std::vector<double>(v.begin() + r * cols, v.begin() + (r + 1) * cols));
    return s + "]";
  };
  // std::to_string keeps 6 decimals, which the f32 constants round to
  // float: the parameters are those floats.
  auto decimal = [](std::vector<double> v) {
    for (double &x : v)
      x = static_cast<float>(std::stod(std::to_string(x)));
    return v;
  };
  std::vector<double> p0 = decimal(pseudoRandom(D, 20)),
                      w1 = decimal(pseudoRandom((D + 1) * H, 21)),
                      b1 = decimal(pseudoRandom(H, 22)),
                      w2 = decimal(pseudoRandom((H + 1) * D, 23)),
                      b2 = decimal(pseudoRandom(D, 24));
  std::string source =
      "func.func @f(%x: tensor<1x13x4xf32>) -> tensor<1x13x4xf32> {\n"
      "  %p0 = arith.constant dense<" + dense(p0) + "> : tensor<4xf32>\n"
      "  %w1 = arith.constant dense<" + denseMatrix(D + 1, H, w1) + "> : tensor<5x6xf32>\n"
      "  %b1 = arith.constant dense<" + dense(b1) + "> : tensor<6xf32>\n"
      "  %w2 = arith.constant dense<" + denseMatrix(H + 1, D, w2) + "> : tensor<7x4xf32>\n"
      "  %b2 = arith.constant dense<" + dense(b2) + "> : tensor<4xf32>\n"
      "  %y = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.125 : f64}"
      " : tensor<1x13x4xf32>, tensor<4xf32>, tensor<5x6xf32>, tensor<6xf32>,"
      " tensor<7x4xf32>, tensor<4xf32> -> tensor<1x13x4xf32>\n"
      "  return %y : tensor<1x13x4xf32>\n}\n";
  parse(source);
  Tensor x = tensor({1, S, D}, pseudoRandom(S * D, 25));
  Tensor scanned = runOne("f", {x});

  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto fn = module->lookupSymbol<func::FuncOp>("f");
  auto count = [&](auto range) { return std::distance(range.begin(), range.end()); };
  EXPECT_EQ(count(fn.getOps<tfm::RecursivePositionOp>()), 0) << "not folded";
  EXPECT_EQ(count(fn.getOps<tfm::LearnedPositionOp>()), 1) << "not folded";
  Tensor folded = runOne("f", {x});
  // The fold rounds the table to f32 before the add: two roundings.
  expectNear(folded, {1, S, D}, scanned.data, 1e-6);
  // And both are the transcription's (weights transposed to PyTorch's).
  Matrix W1(H, std::vector<double>(D + 1)), W2(D, std::vector<double>(H + 1));
  for (int64_t i = 0; i <= D; ++i)
    for (int64_t j = 0; j < H; ++j)
      W1[j][i] = w1[i * H + j];
  for (int64_t j = 0; j <= H; ++j)
    for (int64_t d = 0; d < D; ++d)
      W2[d][j] = w2[j * D + d];
  Matrix p = floaterPositions(S, p0, W1, b1, W2, b2, 0.125);
  std::vector<double> want;
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d)
      want.push_back(x.data[s * D + d] + p[s][d]);
  expectNear(scanned, {1, S, D}, want);
}

//===----------------------------------------------------------------------===//
// tfm.complex_embedding and tfm.complex_linear
//===----------------------------------------------------------------------===//

/// Wang et al. (ICLR 2020), appendix C, ComplexNN.get_embedding for one
/// sequence `x` of ids, tables [V][D]:
///   initial_phase_emb.weight = initial_phase_emb.weight % (2 * math.pi)
///   pos_seq = torch.arange(1, sent_len + 1, 1.0)
///   enc_output_phase = torch.mul(pos_seq, frequency) + dimension_bais
///   enc_output_real = amplitude * torch.cos(enc_output_phase)
///   enc_output_image = amplitude * torch.sin(enc_output_phase)
///   torch.cat([enc_output_real, enc_output_image], -1)
Matrix complexOrderEmbedding(const std::vector<int64_t> &x, const Matrix &wordEmb,
                             const Matrix &frequencyEmb, Matrix initialPhaseEmb) {
  for (auto &row : initialPhaseEmb)
    for (double &theta : row) // Python's %: the sign of the divisor
      theta = theta - 2 * kPi * std::floor(theta / (2 * kPi));
  Matrix out;
  for (size_t i = 0; i < x.size(); ++i) {
    double pos = static_cast<double>(i + 1);
    const auto &amplitude = wordEmb[x[i]], &frequency = frequencyEmb[x[i]];
    const auto &dimensionBias = initialPhaseEmb[x[i]];
    std::vector<double> real, image;
    for (size_t d = 0; d < amplitude.size(); ++d) {
      double phase = pos * frequency[d] + dimensionBias[d];
      real.push_back(amplitude[d] * std::cos(phase));
      image.push_back(amplitude[d] * std::sin(phase));
    }
    real.insert(real.end(), image.begin(), image.end());
    out.push_back(real);
  }
  return out;
}

TEST_F(AbsolutePositionsTest, ComplexEmbeddingTranscribesTheReferenceCode) {
  parse(R"mlir(
    func.func @f(%ids: tensor<?x?xi64>, %r: tensor<7x3xf32>, %w: tensor<7x3xf32>, %t: tensor<7x3xf32>) -> tensor<?x?x6xf32> {
      %z = tfm.complex_embedding %ids, %r, %w, %t : tensor<?x?xi64>, tensor<7x3xf32>, tensor<7x3xf32>, tensor<7x3xf32> -> tensor<?x?x6xf32>
      return %z : tensor<?x?x6xf32>
    }
    func.func @from_two(%ids: tensor<1x4xi32>, %r: tensor<7x3xf32>, %w: tensor<7x3xf32>, %t: tensor<7x3xf32>) -> tensor<1x4x6xf32> {
      %z = tfm.complex_embedding %ids, %r, %w, %t {first_position = 2 : i64} : tensor<1x4xi32>, tensor<7x3xf32>, tensor<7x3xf32>, tensor<7x3xf32> -> tensor<1x4x6xf32>
      return %z : tensor<1x4x6xf32>
    })mlir");
  const int64_t V = 7, D = 3;
  // Phases well outside [0, 2 pi), which the reference code folds back.
  Matrix amplitude = matrix(V, D, 30), frequency = matrix(V, D, 31, -3.0, 3.0),
         phase = matrix(V, D, 32, -20.0, 20.0);
  std::vector<std::vector<int64_t>> batch = {{6, 0, 3, 3, 1}, {2, 5, 0, 6, 4}};
  std::vector<double> ids, want;
  for (const auto &sentence : batch) {
    ids.insert(ids.end(), sentence.begin(), sentence.end());
    for (const auto &row : complexOrderEmbedding(sentence, amplitude, frequency, phase))
      want.insert(want.end(), row.begin(), row.end());
  }
  Tensor tables[3] = {tensor({V, D}, flatten(amplitude)), tensor({V, D}, flatten(frequency)),
                      tensor({V, D}, flatten(phase))};
  Tensor z = runOne("f", {tensor({2, 5}, ids, ScalarType::I64), tables[0], tables[1],
                          tables[2]});
  expectNear(z, {2, 5, 2 * D}, want, 1e-12);

  // first_position = 2 counts from 2: word s is at the reference's
  // position s + 2, as in a sequence with one more word in front.
  Matrix shifted = complexOrderEmbedding({0, 4, 4, 1, 0}, amplitude, frequency, phase);
  std::vector<double> wantTwo;
  for (size_t s = 1; s < shifted.size(); ++s)
    wantTwo.insert(wantTwo.end(), shifted[s].begin(), shifted[s].end());
  Tensor two = runOne("from_two", {tensor({1, 4}, {4, 4, 1, 0}, ScalarType::I32),
                                   tables[0], tables[1], tables[2]});
  // Positions 2..5 of [4, 4, 1, 0] are the 2..5 of [0, 4, 4, 1, 0].
  expectNear(two, {1, 4, 2 * D}, wantTwo, 1e-12);
}

TEST_F(AbsolutePositionsTest, ComplexEmbeddingIdOutOfRangeIsAnError) {
  parse(R"mlir(
    func.func @f(%ids: tensor<1x3xi32>, %r: tensor<4x2xf32>) -> tensor<1x3x4xf32> {
      %z = tfm.complex_embedding %ids, %r, %r, %r : tensor<1x3xi32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<1x3x4xf32>
      return %z : tensor<1x3x4xf32>
    })mlir");
  Tensor r = tensor({4, 2}, pseudoRandom(8, 40));
  std::string err = runError("f", {tensor({1, 3}, {0, 4, 1}, ScalarType::I32), r});
  EXPECT_NE(err.find("tfm.complex_embedding"), std::string::npos) << err;
  EXPECT_NE(err.find("id 4 at ids[0, 1] is outside the tables' range [0, 4)"),
            std::string::npos)
      << err;
  err = runError("f", {tensor({1, 3}, {0, 1, -1}, ScalarType::I32), r});
  EXPECT_NE(err.find("id -1 at ids[0, 2]"), std::string::npos) << err;
}

TEST_F(AbsolutePositionsTest, ComplexLinearIsTheComplexProduct) {
  parse(R"mlir(
    func.func @f(%x: tensor<3x8xf32>, %wr: tensor<4x5xf32>, %wi: tensor<4x5xf32>,
                 %br: tensor<5xf32>, %bi: tensor<5xf32>) -> tensor<3x10xf32> {
      %y = tfm.complex_linear %x, %wr, %wi bias(%br, %bi : tensor<5xf32>, tensor<5xf32>)
          : tensor<3x8xf32>, tensor<4x5xf32>, tensor<4x5xf32> -> tensor<3x10xf32>
      return %y : tensor<3x10xf32>
    }
    func.func @nobias(%x: tensor<3x8xf32>, %wr: tensor<4x5xf32>, %wi: tensor<4x5xf32>) -> tensor<3x10xf32> {
      %y = tfm.complex_linear %x, %wr, %wi : tensor<3x8xf32>, tensor<4x5xf32>, tensor<4x5xf32> -> tensor<3x10xf32>
      return %y : tensor<3x10xf32>
    })mlir");
  const int64_t M = 3, K = 4, N = 5;
  std::vector<double> x = pseudoRandom(M * 2 * K, 50), wr = pseudoRandom(K * N, 51),
                      wi = pseudoRandom(K * N, 52), br = pseudoRandom(N, 53),
                      bi = pseudoRandom(N, 54);
  // y_n = sum_k z_k w_kn + c_n in complex arithmetic, z = x_r + i x_i.
  auto product = [&](bool bias) {
    std::vector<double> out;
    for (int64_t m = 0; m < M; ++m) {
      std::vector<std::complex<double>> y(N);
      for (int64_t n = 0; n < N; ++n) {
        y[n] = bias ? std::complex<double>(br[n], bi[n]) : 0.0;
        for (int64_t k = 0; k < K; ++k)
          y[n] += std::complex<double>(x[m * 2 * K + k], x[m * 2 * K + K + k]) *
                  std::complex<double>(wr[k * N + n], wi[k * N + n]);
      }
      for (int64_t n = 0; n < N; ++n)
        out.push_back(y[n].real());
      for (int64_t n = 0; n < N; ++n)
        out.push_back(y[n].imag());
    }
    return out;
  };
  Tensor args[5] = {tensor({M, 2 * K}, x), tensor({K, N}, wr), tensor({K, N}, wi),
                    tensor({N}, br), tensor({N}, bi)};
  expectNear(runOne("f", {args[0], args[1], args[2], args[3], args[4]}), {M, 2 * N},
             product(true), 1e-12);
  expectNear(runOne("nobias", {args[0], args[1], args[2]}), {M, 2 * N}, product(false),
             1e-12);

  // complexPyTorch's ComplexLinear (complexLayers.py, apply_complex):
  //   real = fc_r(input.real) - fc_i(input.imag)
  //   imag = fc_r(input.imag) + fc_i(input.real)
  // with nn.Linear fc_r (W_r^T, bias c_r) and fc_i (W_i^T, bias c_i) is the
  // op with b_r = c_r - c_i and b_i = c_r + c_i, as TfmOps.td says.
  Matrix fcR = transpose(matrix(K, N, 51)), fcI = transpose(matrix(K, N, 52));
  std::vector<double> cR = pseudoRandom(N, 55), cI = pseudoRandom(N, 56), torchOut;
  for (int64_t m = 0; m < M; ++m) {
    std::vector<double> real(x.begin() + m * 2 * K, x.begin() + m * 2 * K + K);
    std::vector<double> imag(x.begin() + m * 2 * K + K, x.begin() + (m + 1) * 2 * K);
    std::vector<double> rr = torchLinear(real, fcR, cR), ii = torchLinear(imag, fcI, cI),
                        ri = torchLinear(imag, fcR, cR), ir = torchLinear(real, fcI, cI);
    for (int64_t n = 0; n < N; ++n)
      torchOut.push_back(rr[n] - ii[n]);
    for (int64_t n = 0; n < N; ++n)
      torchOut.push_back(ri[n] + ir[n]);
  }
  std::vector<double> bR(N), bI(N);
  for (int64_t n = 0; n < N; ++n) {
    bR[n] = static_cast<float>(cR[n] - cI[n]);
    bI[n] = static_cast<float>(cR[n] + cI[n]);
  }
  // The biases are rounded to float as operands: a few ulps of slack.
  expectNear(runOne("f", {args[0], args[1], args[2], tensor({N}, bR), tensor({N}, bI)}),
             {M, 2 * N}, torchOut, 1e-6);
}

} // namespace
