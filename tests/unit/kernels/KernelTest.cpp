//===- KernelTest.cpp - numerics of the Halide kernels ----------*- C++ -*-===//
//
// Each kernel kind is JIT-compiled for the host from the same builder the
// AOT path uses, run on random inputs of awkward sizes (1, 7, 129; D not a
// multiple of the vector width) and strided views, and compared with plain
// double-precision loops written from the op definitions in TfmOps.td.
//
// Tolerance (f32): |got - want| <= 1e-4 * |want| + 1e-6.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/Kernels.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using namespace attune::codegen;
using Halide::Buffer;

namespace {

constexpr double kRelTol = 1e-4;
constexpr double kAbsTol = 1e-6;

::testing::AssertionResult close(double got, double want) {
  if (std::isinf(want) && got == want)
    return ::testing::AssertionSuccess();
  if (std::fabs(got - want) <= kRelTol * std::fabs(want) + kAbsTol)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", want " << want << " (diff " << got - want << ")";
}

Halide::Target jitTarget() { return Halide::get_jit_target_from_environment(); }

std::mt19937 &rng() {
  static std::mt19937 gen(1234);
  return gen;
}

/// A dense f32 buffer of `shape` (innermost first) with uniform values.
Buffer<float> randomBuffer(const std::vector<int> &shape, float lo = -2.f,
                           float hi = 2.f) {
  Buffer<float> buf(shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  buf.for_each_value([&](float &v) { v = dist(rng()); });
  return buf;
}

/// A kernel built once and run on several bindings (the JIT compiles on the
/// first realize only).
/// Halide::Error is not a std::exception: turned into one so that gtest
/// prints its message.
detail::BuiltKernel buildOrThrow(const KernelSpec &spec) {
  try {
    return detail::buildKernel(spec, jitTarget());
  } catch (const Halide::Error &error) {
    throw std::runtime_error(std::string("building ") + spec.symbolName() +
                             ": " + error.what());
  }
}

struct Jit {
  explicit Jit(const KernelSpec &spec) : kernel(buildOrThrow(spec)) {}
  template <typename T>
  Buffer<T> run(const std::vector<Halide::Buffer<>> &inputs,
                const std::vector<int> &outShape) {
    EXPECT_EQ(inputs.size(), kernel.inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      kernel.inputs[i].set(inputs[i]);
    try {
      Buffer<T> out = kernel.output.realize(outShape);
      return out;
    } catch (const Halide::CompileError &error) {
      throw std::runtime_error(std::string("compiling: ") + error.what());
    } catch (const Halide::InternalError &error) {
      throw std::runtime_error(std::string("compiling: ") + error.what());
    }
  }
  detail::BuiltKernel kernel;
};

/// A strided view of `storage` (shape innermost first, explicit strides).
template <typename T>
Buffer<T> view(Buffer<T> &storage, const std::vector<int> &shape,
               const std::vector<int> &strides) {
  std::vector<halide_dimension_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims.push_back(halide_dimension_t(0, shape[i], strides[i]));
  return Buffer<T>(storage.data(), static_cast<int>(dims.size()), dims.data());
}

//===----------------------------------------------------------------------===//
// Embedding and positions
//===----------------------------------------------------------------------===//

template <typename IdT>
void checkEmbedding(ScalarType indexType) {
  KernelSpec spec;
  spec.kind = KernelKind::Embedding;
  spec.indexType = indexType;
  Jit jit(spec);
  const int vocab = 50;
  for (int d : {64, 80, 7}) {
    for (int n : {1, 7, 129}) {
      Buffer<float> table = randomBuffer({d, vocab});
      Buffer<IdT> ids(n);
      std::uniform_int_distribution<int> pick(0, vocab - 1);
      ids.for_each_value([&](IdT &v) { v = pick(rng()); });
      Buffer<float> out = jit.run<float>({table, ids}, {d, n});
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < d; ++k)
          ASSERT_EQ(out(k, i), table(k, static_cast<int>(ids(i)))) << "d=" << d << " n=" << n;
    }
  }
  // Out-of-range ids are clamped: never a read outside the table.
  Buffer<float> table = randomBuffer({16, vocab});
  Buffer<IdT> ids(3);
  ids(0) = -7;
  ids(1) = vocab + 100;
  ids(2) = static_cast<IdT>(std::numeric_limits<IdT>::max());
  Buffer<float> out = jit.run<float>({table, ids}, {16, 3});
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(out(k, 0), table(k, 0));
    EXPECT_EQ(out(k, 1), table(k, vocab - 1));
    EXPECT_EQ(out(k, 2), table(k, vocab - 1));
  }
}

TEST(EmbeddingKernel, GathersRowsI32) { checkEmbedding<int32_t>(ScalarType::I32); }
TEST(EmbeddingKernel, GathersRowsI64) { checkEmbedding<int64_t>(ScalarType::I64); }

TEST(LearnedPositionKernel, AddsTableRows) {
  KernelSpec spec;
  spec.kind = KernelKind::LearnedPosition;
  Jit jit(spec);
  const int positions = 130;
  for (int d : {64, 80}) {
    for (int s : {1, 7, 129}) {
      const int b = 2;
      Buffer<float> x = randomBuffer({d, s, b});
      Buffer<float> table = randomBuffer({d, positions});
      Buffer<float> out = jit.run<float>({x, table}, {d, s, b});
      for (int ib = 0; ib < b; ++ib)
        for (int is = 0; is < s; ++is)
          for (int k = 0; k < d; ++k)
            ASSERT_TRUE(close(out(k, is, ib), double(x(k, is, ib)) + table(k, is)));
    }
  }
}

TEST(LearnedPositionKernel, NegativeSequenceLongerThanTableIsAnError) {
  KernelSpec spec;
  spec.kind = KernelKind::LearnedPosition;
  Jit jit(spec);
  Buffer<float> x = randomBuffer({8, 20, 1});
  Buffer<float> table = randomBuffer({8, 10});
  EXPECT_THROW(jit.run<float>({x, table}, {8, 20, 1}), Halide::RuntimeError);
}

/// pe[s, d] of TfmOps.td, in double.
double sinusoid(const KernelSpec &spec, int s, int d, int dim) {
  if (spec.form == SinusoidalForm::Interleaved) {
    int i = d / 2;
    double div = std::exp(2.0 * i * -std::log(spec.maxTimescale) / dim);
    return d % 2 == 0 ? std::sin(s * div) : std::cos(s * div);
  }
  int n = dim / 2;
  if (d >= 2 * n)
    return 0.0;
  int i = d < n ? d : d - n;
  double inv = spec.minTimescale *
               std::exp(-i * std::log(spec.maxTimescale / spec.minTimescale) /
                        std::max(n - 1, 1));
  return d < n ? std::sin(s * inv) : std::cos(s * inv);
}

void checkSinusoidal(SinusoidalForm form, const std::vector<int> &dims) {
  KernelSpec spec;
  spec.kind = KernelKind::Sinusoidal;
  spec.form = form;
  spec.minTimescale = form == SinusoidalForm::Concat ? 1.0 : 1.0;
  spec.maxTimescale = 1.0e4;
  Jit jit(spec);
  for (int d : dims) {
    for (int s : {1, 7, 129, 4096}) {
      const int b = s > 1000 ? 1 : 2;
      Buffer<float> x = randomBuffer({d, s, b});
      Buffer<float> out = jit.run<float>({x}, {d, s, b});
      for (int ib = 0; ib < b; ++ib)
        for (int is = 0; is < s; ++is)
          for (int k = 0; k < d; ++k)
            ASSERT_TRUE(close(out(k, is, ib), double(x(k, is, ib)) + sinusoid(spec, is, k, d)))
                << "s=" << is << " d=" << k << " of D=" << d;
    }
  }
}

TEST(SinusoidalKernel, Interleaved) {
  checkSinusoidal(SinusoidalForm::Interleaved, {64, 80, 128, 63});
}
TEST(SinusoidalKernel, ConcatWithOddWidth) {
  checkSinusoidal(SinusoidalForm::Concat, {64, 80, 128, 63, 1, 3});
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

TEST(LayerNormKernel, MatchesDefinition) {
  KernelSpec spec;
  spec.kind = KernelKind::LayerNorm;
  spec.epsilon = 1e-5;
  Jit jit(spec);
  for (int d : {64, 80, 128, 33, 1}) {
    for (int n : {1, 7, 129}) {
      // A large common offset checks the variance does not cancel.
      for (float offset : {0.f, 100.f}) {
        Buffer<float> x = randomBuffer({d, n}, offset - 2.f, offset + 2.f);
        Buffer<float> gamma = randomBuffer({d}), beta = randomBuffer({d});
        Buffer<float> out = jit.run<float>({x, gamma, beta}, {d, n});
        for (int i = 0; i < n; ++i) {
          double mean = 0, var = 0;
          for (int k = 0; k < d; ++k)
            mean += x(k, i);
          mean /= d;
          for (int k = 0; k < d; ++k)
            var += (x(k, i) - mean) * (x(k, i) - mean);
          var /= d;
          for (int k = 0; k < d; ++k) {
            double want = (x(k, i) - mean) / std::sqrt(var + spec.epsilon) * gamma(k) + beta(k);
            ASSERT_TRUE(close(out(k, i), want)) << "d=" << d << " n=" << n << " offset=" << offset;
          }
        }
      }
    }
  }
}

TEST(RmsNormKernel, MatchesDefinition) {
  KernelSpec spec;
  spec.kind = KernelKind::RmsNorm;
  spec.epsilon = 1e-6;
  Jit jit(spec);
  for (int d : {64, 80, 128, 33, 1}) {
    for (int n : {1, 7, 129}) {
      Buffer<float> x = randomBuffer({d, n});
      Buffer<float> gamma = randomBuffer({d});
      Buffer<float> out = jit.run<float>({x, gamma}, {d, n});
      for (int i = 0; i < n; ++i) {
        double ms = 0;
        for (int k = 0; k < d; ++k)
          ms += double(x(k, i)) * x(k, i);
        ms /= d;
        for (int k = 0; k < d; ++k)
          ASSERT_TRUE(close(out(k, i), x(k, i) / std::sqrt(ms + spec.epsilon) * gamma(k)));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

double applyBinary(BinaryKind kind, double a, double b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  }
  return 0;
}

TEST(BinaryKernel, BroadcastAndTransposedOperands) {
  for (BinaryKind kind : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div}) {
    KernelSpec spec;
    spec.kind = KernelKind::Binary;
    spec.binary = kind;
    spec.rank = 3;
    Jit jit(spec);
    for (int d0 : {1, 7, 129}) {
      const int d1 = 5, d2 = 3;
      // lhs: a transposed [d2, d0, d1] tensor seen as [d2, d1, d0].
      Buffer<float> lhsStore = randomBuffer({d1, d0, d2});
      Buffer<float> lhs = view(lhsStore, {d0, d1, d2}, {d1, 1, d0 * d1});
      // rhs: a row [d0] broadcast over d1 and d2 (stride 0), kept away from 0
      // for the division.
      Buffer<float> rhsStore = randomBuffer({d0}, 0.5f, 2.f);
      Buffer<float> rhs = view(rhsStore, {d0, d1, d2}, {1, 0, 0});
      Buffer<float> out = jit.run<float>({lhs, rhs}, {d0, d1, d2});
      for (int k = 0; k < d2; ++k)
        for (int j = 0; j < d1; ++j)
          for (int i = 0; i < d0; ++i)
            ASSERT_TRUE(close(out(i, j, k), applyBinary(kind, lhs(i, j, k), rhs(i, j, k))))
                << "kind=" << int(kind) << " d0=" << d0;
    }
  }
}

TEST(BinaryKernel, Rank1And5) {
  for (int rank : {1, 5}) {
    KernelSpec spec;
    spec.kind = KernelKind::Binary;
    spec.binary = BinaryKind::Mul;
    spec.rank = rank;
    Jit jit(spec);
    std::vector<int> shape = rank == 1 ? std::vector<int>{100003}
                                       : std::vector<int>{9, 2, 3, 1, 2};
    Buffer<float> a = randomBuffer(shape), b = randomBuffer(shape);
    Buffer<float> out = jit.run<float>({a, b}, shape);
    for (size_t i = 0; i < out.number_of_elements(); ++i)
      ASSERT_TRUE(close(out.data()[i], double(a.data()[i]) * b.data()[i]));
  }
}

TEST(WhereKernel, BoolAndFloatConditions) {
  for (ScalarType condType : {ScalarType::Bool, ScalarType::F32}) {
    KernelSpec spec;
    spec.kind = KernelKind::Where;
    spec.condType = condType;
    spec.rank = 4;
    Jit jit(spec);
    for (int sk : {1, 7, 129}) {
      const int sq = 6, h = 2, b = 1;
      std::vector<int> shape = {sk, sq, h, b};
      // A [b, 1, sq, sk] mask broadcast over heads; a scalar on_true.
      Halide::Buffer<> cond;
      std::vector<int> condStrides = {1, sk, 0, sk * sq};
      std::bernoulli_distribution coin(0.5);
      Buffer<bool> condBool(std::vector<int>{sk, sq, 1, b});
      Buffer<float> condFloat(std::vector<int>{sk, sq, 1, b});
      condBool.for_each_value([&](bool &v) { v = coin(rng()); });
      condFloat.for_each_value([&](float &v) { v = coin(rng()) ? -0.5f : 0.f; });
      if (condType == ScalarType::Bool)
        cond = view(condBool, shape, condStrides);
      else
        cond = view(condFloat, shape, condStrides);
      Buffer<float> scalar = randomBuffer({1});
      Buffer<float> onTrue = view(scalar, shape, {0, 0, 0, 0});
      Buffer<float> onFalse = randomBuffer(shape);
      Buffer<float> out = jit.run<float>({cond, onTrue, onFalse}, shape);
      for (int ih = 0; ih < h; ++ih)
        for (int iq = 0; iq < sq; ++iq)
          for (int ik = 0; ik < sk; ++ik) {
            bool c = condType == ScalarType::Bool ? condBool(ik, iq, 0, 0)
                                                  : condFloat(ik, iq, 0, 0) != 0.f;
            ASSERT_EQ(out(ik, iq, ih, 0), c ? scalar(0) : onFalse(ik, iq, ih, 0));
          }
    }
  }
}

double unaryReference(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::Relu:
    return x > 0 ? x : 0;
  case UnaryKind::GeluErf:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case UnaryKind::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case UnaryKind::Silu:
    return x / (1 + std::exp(-x));
  }
  return 0;
}

TEST(UnaryKernel, Activations) {
  for (UnaryKind kind : {UnaryKind::Relu, UnaryKind::GeluErf, UnaryKind::GeluTanh,
                         UnaryKind::Silu}) {
    KernelSpec spec;
    spec.kind = KernelKind::Unary;
    spec.unary = kind;
    Jit jit(spec);
    for (int n : {1, 7, 129, 100000}) {
      Buffer<float> x = randomBuffer({n}, -8.f, 8.f);
      if (n >= 7) {
        x(0) = 0.f;
        x(1) = -0.f;
        x(2) = 30.f;
        x(3) = -30.f;
        x(4) = 1e-8f;
        x(5) = -5.5f;
      }
      Buffer<float> out = jit.run<float>({x}, {n});
      for (int i = 0; i < n; ++i)
        ASSERT_TRUE(close(out(i), unaryReference(kind, x(i))))
            << "kind=" << int(kind) << " x=" << x(i);
    }
  }
}

TEST(CausalMaskKernel, FillsAboveShiftedDiagonal) {
  for (double value : {-std::numeric_limits<double>::infinity(), -1e9}) {
    KernelSpec spec;
    spec.kind = KernelKind::CausalMask;
    spec.value = value;
    Jit jit(spec);
    for (int sq : {1, 7, 129}) {
      for (int extra : {0, 5}) {
        const int sk = sq + extra, bt = 3;
        // Scores stored [bt, sk, sq] and viewed transposed: a strided input.
        Buffer<float> store = randomBuffer({sq, sk, bt});
        Buffer<float> x = view(store, {sk, sq, bt}, {sq, 1, sq * sk});
        Buffer<float> out = jit.run<float>({x}, {sk, sq, bt});
        for (int b = 0; b < bt; ++b)
          for (int i = 0; i < sq; ++i)
            for (int j = 0; j < sk; ++j) {
              float want = j > i + (sk - sq) ? static_cast<float>(value) : x(j, i, b);
              ASSERT_EQ(out(j, i, b), want) << "i=" << i << " j=" << j;
            }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(CopyKernel, TransposesAndBroadcasts) {
  {
    // [B, S, H, D] -> [B, H, S, D] (permutation 0, 2, 1, 3).
    KernelSpec spec;
    spec.kind = KernelKind::Copy;
    spec.rank = 4;
    Jit jit(spec);
    for (int s : {1, 7, 129}) {
      const int d = 80, h = 3, b = 2;
      Buffer<float> in = randomBuffer({d, h, s, b});
      Buffer<float> x = view(in, {d, s, h, b}, {1, d * h, d, d * h * s});
      Buffer<float> out = jit.run<float>({x}, {d, s, h, b});
      for (int ib = 0; ib < b; ++ib)
        for (int ih = 0; ih < h; ++ih)
          for (int is = 0; is < s; ++is)
            for (int k = 0; k < d; ++k)
              ASSERT_EQ(out(k, is, ih, ib), in(k, ih, is, ib));
    }
  }
  {
    // A 2-d i32 transpose and a stride-0 broadcast.
    KernelSpec spec;
    spec.kind = KernelKind::Copy;
    spec.elementType = ScalarType::I32;
    spec.rank = 2;
    Jit jit(spec);
    Buffer<int32_t> in(7, 129);
    in.for_each_element([&](int x, int y) { in(x, y) = x * 1000 + y; });
    Buffer<int32_t> t = view(in, {129, 7}, {7, 1});
    Buffer<int32_t> out = jit.run<int32_t>({t}, {129, 7});
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 129; ++x)
        ASSERT_EQ(out(x, y), in(y, x));
    Buffer<int32_t> row(5);
    row.for_each_element([&](int x) { row(x) = 3 * x; });
    Buffer<int32_t> bcast = view(row, {5, 4}, {1, 0});
    Buffer<int32_t> out2 = jit.run<int32_t>({bcast}, {5, 4});
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x)
        ASSERT_EQ(out2(x, y), 3 * x);
  }
}

TEST(RepeatInterleaveKernel, RepeatsEachSlice) {
  for (int64_t repeats : {1, 4}) {
    KernelSpec spec;
    spec.kind = KernelKind::RepeatInterleave;
    spec.repeats = repeats;
    Jit jit(spec);
    for (int inner : {64, 7}) {
      const int n = 3, outer = 2;
      Buffer<float> x = randomBuffer({inner, n, outer});
      Buffer<float> out = jit.run<float>({x}, {inner, n * int(repeats), outer});
      for (int o = 0; o < outer; ++o)
        for (int i = 0; i < n * repeats; ++i)
          for (int j = 0; j < inner; ++j)
            ASSERT_EQ(out(j, i, o), x(j, i / repeats, o));
    }
  }
}

//===----------------------------------------------------------------------===//
// Names, signatures and the AOT path
//===----------------------------------------------------------------------===//

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

TEST(KernelSpecTest, SymbolNamesAreDistinctIdentifiers) {
  std::vector<KernelSpec> specs;
  auto add = [&](std::function<void(KernelSpec &)> edit) {
    KernelSpec spec;
    edit(spec);
    specs.push_back(spec);
  };
  for (int k = 0; k <= static_cast<int>(KernelKind::Attention); ++k)
    add([&](KernelSpec &s) { s.kind = KernelKind(k); s.rank = 2; });
  add([](KernelSpec &s) { s.kind = KernelKind::Copy; s.rank = 3; });
  add([](KernelSpec &s) { s.kind = KernelKind::Copy; s.rank = 2; s.elementType = ScalarType::I64; });
  add([](KernelSpec &s) { s.kind = KernelKind::Binary; s.rank = 2; s.binary = BinaryKind::Div; });
  add([](KernelSpec &s) { s.kind = KernelKind::Where; s.rank = 2; s.condType = ScalarType::I8; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::GeluTanh; });
  add([](KernelSpec &s) { s.kind = KernelKind::LayerNorm; s.epsilon = 1e-5; });
  add([](KernelSpec &s) { s.kind = KernelKind::LayerNorm; s.epsilon = std::nextafter(1e-5, 1.0); });
  add([](KernelSpec &s) { s.kind = KernelKind::Sinusoidal; s.form = SinusoidalForm::Concat; });
  add([](KernelSpec &s) { s.kind = KernelKind::Sinusoidal; s.maxTimescale = 500; });
  add([](KernelSpec &s) { s.kind = KernelKind::CausalMask; s.value = -1e9; });
  add([](KernelSpec &s) { s.kind = KernelKind::CausalMask; s.value = -INFINITY; });
  add([](KernelSpec &s) { s.kind = KernelKind::RepeatInterleave; s.repeats = 4; });
  add([](KernelSpec &s) { s.kind = KernelKind::Embedding; s.indexType = ScalarType::I64; });
  add([](KernelSpec &s) { s.kind = KernelKind::Matmul; s.transposeB = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::Linear; s.hasBias = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::Attention; s.headDim = 64; s.causal = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::Attention; s.headDim = 64; s.hasMask = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::Attention; s.headDim = 64; s.scale = 0.125; });
  std::set<std::string> names;
  for (const KernelSpec &spec : specs) {
    std::string name = spec.symbolName();
    EXPECT_TRUE(isIdentifier(name)) << name;
    EXPECT_EQ(name, spec.symbolName()) << "not deterministic";
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
  }
  // Fields a kind ignores do not split a kernel in two.
  KernelSpec a, b;
  a.kind = b.kind = KernelKind::Unary;
  b.epsilon = 3;
  b.rank = 4;
  EXPECT_EQ(a.symbolName(), b.symbolName());
  EXPECT_TRUE(a == b);
}

TEST(KernelSpecTest, SignatureMatchesBuilderInputs) {
  KernelSpec spec;
  spec.kind = KernelKind::Where;
  spec.rank = 3;
  spec.condType = ScalarType::I8;
  std::vector<KernelArg> sig = kernelSignature(spec);
  ASSERT_EQ(sig.size(), 4u);
  EXPECT_EQ(sig[0].name, "cond");
  EXPECT_EQ(sig[0].type, ScalarType::I8);
  EXPECT_EQ(sig[3].name, "out");
  detail::BuiltKernel kernel = detail::buildKernel(spec, jitTarget());
  ASSERT_EQ(kernel.inputs.size(), 3u);
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    EXPECT_EQ(kernel.inputs[i].name(), sig[i].name);
    EXPECT_EQ(kernel.inputs[i].dimensions(), sig[i].dimensions);
    EXPECT_EQ(kernel.inputs[i].type(), detail::toHalideType(sig[i].type));
  }
  EXPECT_EQ(kernel.output.dimensions(), sig.back().dimensions);
}

TEST(KernelSpecTest, NegativeBadSpecsReportErrors) {
  std::string dir = ::testing::TempDir();
  KernelSpec copy0;
  copy0.kind = KernelKind::Copy;
  copy0.rank = 0;
  std::string message = compileKernelObject(copy0, {}, dir + "/bad.o");
  EXPECT_NE(message.find("rank"), std::string::npos) << message;
  EXPECT_THROW(detail::buildKernel(copy0, jitTarget()), Halide::CompileError);

  KernelSpec unknown;
  unknown.kind = static_cast<KernelKind>(99);
  message = compileKernelObject(unknown, {}, dir + "/bad.o");
  EXPECT_NE(message.find("unknown kernel kind"), std::string::npos) << message;

  KernelSpec norm;
  norm.kind = KernelKind::LayerNorm;
  norm.elementType = ScalarType::I32;
  message = compileKernelObject(norm, {}, dir + "/bad.o");
  EXPECT_NE(message.find("expected a float element type"), std::string::npos) << message;

  KernelSpec add;
  add.kind = KernelKind::Binary;
  add.rank = 2;
  CpuTargetOptions badTarget;
  badTarget.featureSets = {"avx9000"};
  message = compileKernelObject(add, badTarget, dir + "/bad.o");
  EXPECT_NE(message.find("avx9000"), std::string::npos) << message;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Compiles a kernel and the runtime ahead of time, links them into a shared
/// library with the system compiler and calls the kernel through its C
/// symbol: the path a generated model library takes, dispatch included.
TEST(AotTest, MultiTargetObjectLinksAndRuns) {
  std::string dir = ::testing::TempDir() + "/attune-aot-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  KernelSpec spec;
  spec.kind = KernelKind::LayerNorm;
  spec.epsilon = 1e-5;
  const std::string object = dir + "/kernel.o", runtime = dir + "/runtime.o";
  ASSERT_EQ(compileKernelObject(spec, {}, object), "");
  ASSERT_EQ(compileHalideRuntime({}, runtime), "");
  std::string bytes = readFile(object);
  EXPECT_NE(bytes.find(spec.symbolName()), std::string::npos);
  EXPECT_NE(bytes.find("halide_can_use_target_features"), std::string::npos);
  EXPECT_NE(readFile(runtime).find("halide_can_use_target_features"), std::string::npos);

  const std::string lib = dir + "/libkernel.so";
  std::string link = "cc -shared -o '" + lib + "' '" + object + "' '" + runtime +
                     "' -lm -lpthread -ldl";
  ASSERT_EQ(std::system(link.c_str()), 0) << link;
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Fn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                     halide_buffer_t *);
  auto fn = reinterpret_cast<Fn>(dlsym(handle, spec.symbolName().c_str()));
  ASSERT_NE(fn, nullptr);
  // Halide's default error handler aborts the process; a library must
  // install its own (as the runtime does) to turn a failed check into a
  // status. This one records the message.
  using Handler = void (*)(void *, const char *);
  using SetHandler = Handler (*)(Handler);
  auto setHandler =
      reinterpret_cast<SetHandler>(dlsym(handle, "halide_set_error_handler"));
  ASSERT_NE(setHandler, nullptr);
  static std::string lastError;
  setHandler([](void *, const char *message) { lastError = message; });
  const int d = 80, n = 7;
  Buffer<float> x = randomBuffer({d, n}), gamma = randomBuffer({d}),
                beta = randomBuffer({d});
  Buffer<float> out(d, n);
  ASSERT_EQ(fn(x.raw_buffer(), gamma.raw_buffer(), beta.raw_buffer(), out.raw_buffer()), 0);
  for (int i = 0; i < n; ++i) {
    double mean = 0, var = 0;
    for (int k = 0; k < d; ++k)
      mean += x(k, i);
    mean /= d;
    for (int k = 0; k < d; ++k)
      var += (x(k, i) - mean) * (x(k, i) - mean);
    var /= d;
    for (int k = 0; k < d; ++k)
      ASSERT_TRUE(close(out(k, i), (x(k, i) - mean) / std::sqrt(var + 1e-5) * gamma(k) + beta(k)));
  }
  // A gamma shorter than the row is reported, not read past.
  Buffer<float> shortGamma = randomBuffer({d - 1});
  EXPECT_NE(fn(x.raw_buffer(), shortGamma.raw_buffer(), beta.raw_buffer(), out.raw_buffer()), 0);
  EXPECT_NE(lastError.find("gamma"), std::string::npos) << lastError;
  dlclose(handle);
  std::filesystem::remove_all(dir);
}

} // namespace
