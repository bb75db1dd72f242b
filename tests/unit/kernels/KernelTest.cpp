//===- KernelTest.cpp - numerics of the Halide kernels ----------*- C++ -*-===//
//
// Each kernel kind is JIT-compiled for the host from the same builder the
// AOT path uses, run on random inputs of awkward sizes (1, 7, 129; D not a
// multiple of the vector width) and on strided views (broadcasts, folded
// transposes), and compared with the reference evaluator running the
// matching one-op tfm function: the project's oracle, written from the op
// definitions in TfmOps.td with double accumulation.
//
// Tolerance (f32): |got - want| <= 1e-4 * |want| + 1e-6; data movement and
// selects are exact; f16 / bf16 within one ulp of the type.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/reference/Evaluator.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "tests/unit/kernels/Oracle.h"
#include "dialects/tfm/TfmDialect.h"

#include "Halide.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

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
using attune::reference::Tensor;
using Halide::Buffer;
using attune::testing::oracle;
using attune::testing::shapeOf;
using attune::testing::tensorType;
using attune::mlirTypeName;
using attune::testing::toTensor;

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

/// What this process may execute (ATTUNE_CPU caps it; ctest runs the suite
/// once per level the machine has), never Halide's own host detection.
Halide::Target jitTarget() { return attune::targets::cpu::jitTarget(); }

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

/// A kernel built once and run on several bindings (the JIT compiles on the
/// first realize only).
struct Jit {
  explicit Jit(const KernelSpec &spec) : kernel(buildOrThrow(spec)) {}
  template <typename T>
  Buffer<T> run(const std::vector<Halide::Buffer<>> &inputs,
                const std::vector<int> &outShape) {
    EXPECT_EQ(inputs.size(), kernel.inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      kernel.inputs[i].set(inputs[i]);
    try {
      Buffer<T> out = kernel.jit().realize(outShape, jitTarget());
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
// The oracle
//===----------------------------------------------------------------------===//

/// An f64 attribute printed exactly (round-trips through the parser).
std::string f64Attr(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  std::string s = buffer;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s + " : f64";
}

/// Compares a dense kernel output with the oracle's tensor, within the f32
/// tolerance (`exact` for data movement and selects).
template <typename T>
void expectMatches(const Buffer<T> &out, const Tensor &want,
                   const std::string &what, bool exact = false) {
  ASSERT_EQ(shapeOf(out), want.shape) << what;
  ASSERT_EQ(static_cast<size_t>(out.number_of_elements()), want.data.size()) << what;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double got = static_cast<double>(out.data()[i]);
    if (exact)
      ASSERT_EQ(got, want.data[i]) << what << " at flat index " << i;
    else
      ASSERT_TRUE(close(got, want.data[i])) << what << " at flat index " << i;
  }
}

std::string sizes(std::initializer_list<std::pair<const char *, int>> named) {
  std::string s;
  for (auto [name, value] : named)
    s += std::string(s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
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
      Tensor want = oracle().eval("tfm.embedding %a0, %a1 : {T0}, {T1} -> {R}",
                                  {toTensor(table), toTensor(ids, indexType)},
                                  {n, d}, ScalarType::F32);
      expectMatches(out, want, sizes({{"d", d}, {"n", n}}), /*exact=*/true);
    }
  }
  // Out-of-range ids (which the evaluator rejects and the runtime checks
  // before a run) are clamped: never a read outside the table.
  Buffer<float> table = randomBuffer({16, vocab});
  Buffer<IdT> ids(3);
  ids(0) = -7;
  ids(1) = vocab + 100;
  ids(2) = std::numeric_limits<IdT>::max();
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
      Tensor want = oracle().eval("tfm.learned_position %a0, %a1 : {T0}, {T1} -> {R}",
                                  {toTensor(x), toTensor(table)}, {b, s, d},
                                  ScalarType::F32);
      expectMatches(out, want, sizes({{"d", d}, {"s", s}}));
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

void checkSinusoidal(SinusoidalForm form, double minTimescale,
                     double maxTimescale, const std::vector<int> &dims) {
  KernelSpec spec;
  spec.kind = KernelKind::Sinusoidal;
  spec.form = form;
  spec.minTimescale = minTimescale;
  spec.maxTimescale = maxTimescale;
  Jit jit(spec);
  std::string op = std::string("tfm.sinusoidal_position %a0 {form = #tfm.sinusoidal_form<") +
                   (form == SinusoidalForm::Concat ? "concat" : "interleaved") +
                   ">, min_timescale = " + f64Attr(minTimescale) +
                   ", max_timescale = " + f64Attr(maxTimescale) + "} : {T0} -> {R}";
  for (int d : dims) {
    // Positions up to 4096: the angle reaches 4096 rad in the first column.
    for (int s : {1, 7, 129, 4096}) {
      const int b = s > 1000 ? 1 : 2;
      Buffer<float> x = randomBuffer({d, s, b});
      Buffer<float> out = jit.run<float>({x}, {d, s, b});
      Tensor want = oracle().eval(op, {toTensor(x)}, {b, s, d}, ScalarType::F32);
      expectMatches(out, want, sizes({{"D", d}, {"S", s}}));
    }
  }
}

TEST(SinusoidalKernel, Interleaved) {
  checkSinusoidal(SinusoidalForm::Interleaved, 1.0, 1.0e4, {64, 80, 128, 63});
}
TEST(SinusoidalKernel, ConcatWithOddWidth) {
  checkSinusoidal(SinusoidalForm::Concat, 1.0, 1.0e4, {64, 80, 128, 63, 1, 3});
  checkSinusoidal(SinusoidalForm::Concat, 2.0, 1.0e5, {64, 7});
}

TEST(MultiplicativePositionKernel, MultipliesTableRows) {
  KernelSpec spec;
  spec.kind = KernelKind::MultiplicativePosition;
  spec.hasTable = true;
  Jit jit(spec);
  const int positions = 130;
  for (int d : {64, 80, 7}) {
    for (int s : {1, 7, 129}) {
      const int b = 2;
      Buffer<float> x = randomBuffer({d, s, b});
      Buffer<float> table = randomBuffer({d, positions});
      Buffer<float> out = jit.run<float>({x, table}, {d, s, b});
      Tensor want = oracle().eval("tfm.multiplicative_position %a0, %a1 : {T0}, {T1} -> {R}",
                                  {toTensor(x), toTensor(table)}, {b, s, d},
                                  ScalarType::F32);
      expectMatches(out, want, sizes({{"d", d}, {"s", s}}));
    }
  }
  // As learned_position: a sequence past the table is Halide's bounds error.
  Buffer<float> x = randomBuffer({8, 20, 1});
  Buffer<float> table = randomBuffer({8, 10});
  EXPECT_THROW(jit.run<float>({x, table}, {8, 20, 1}), Halide::RuntimeError);
}

TEST(MultiplicativePositionKernel, MultipliesBothSinusoids) {
  for (SinusoidalForm form : {SinusoidalForm::Interleaved, SinusoidalForm::Concat}) {
    KernelSpec spec;
    spec.kind = KernelKind::MultiplicativePosition;
    spec.form = form;
    spec.minTimescale = 2.0;
    spec.maxTimescale = 5.0e4;
    Jit jit(spec);
    std::string op = std::string("tfm.multiplicative_position %a0 {form = #tfm.sinusoidal_form<") +
                     (form == SinusoidalForm::Concat ? "concat" : "interleaved") +
                     ">, min_timescale = " + f64Attr(spec.minTimescale) +
                     ", max_timescale = " + f64Attr(spec.maxTimescale) + "} : {T0} -> {R}";
    for (int d : {64, 63}) {
      // Up to 4096 positions: angles of thousands of radians.
      for (int s : {1, 7, 129, 4096}) {
        const int b = s > 1000 ? 1 : 2;
        Buffer<float> x = randomBuffer({d, s, b});
        Buffer<float> out = jit.run<float>({x}, {d, s, b});
        Tensor want = oracle().eval(op, {toTensor(x)}, {b, s, d}, ScalarType::F32);
        expectMatches(out, want, sizes({{"D", d}, {"S", s}}));
      }
    }
  }
}

/// The FLOATER scan against the evaluator's recursion in double, with
/// FLOATER's own step (0.01) and a 5 times larger one. An f32 recursion
/// carries its rounding from step to step, amplified by the dynamics: with
/// these weights and T = 0.25 the positions grow to 3e4 in 129 steps and a
/// plain f32 loop is 2e-2 off the f64 one, which is the recursion's
/// conditioning, not the kernel's (the kernel tracks such a loop). At these
/// steps it stays within the e2e tolerance, relative to max(1, |want|)
/// since x + p_s can cancel to near 0.
TEST(RecursivePositionKernel, ScansTheFloaterRecursion) {
  for (double timeStep : {0.01, 0.05}) {
    KernelSpec spec;
    spec.kind = KernelKind::RecursivePosition;
    spec.timeStep = timeStep;
    Jit jit(spec);
    std::string op = "tfm.recursive_position %a0, %a1, %a2, %a3, %a4, %a5 {time_step = " +
                     f64Attr(timeStep) +
                     "} : {T0}, {T1}, {T2}, {T3}, {T4}, {T5} -> {R}";
    for (auto [d, h] : {std::pair{64, 32}, {7, 5}, {3, 16}}) {
      Buffer<float> p0 = randomBuffer({d}, -1.f, 1.f);
      Buffer<float> w1 = randomBuffer({h, d + 1}, -0.2f, 0.2f);
      Buffer<float> b1 = randomBuffer({h}, -0.2f, 0.2f);
      Buffer<float> w2 = randomBuffer({d, h + 1}, -0.2f, 0.2f);
      Buffer<float> b2 = randomBuffer({d}, -0.2f, 0.2f);
      for (int s : {1, 7, 129}) {
        const int b = 2;
        Buffer<float> x = randomBuffer({d, s, b});
        Buffer<float> out = jit.run<float>({x, p0, w1, b1, w2, b2}, {d, s, b});
        Tensor want = oracle().eval(
            op,
            {toTensor(x), toTensor(p0), toTensor(w1), toTensor(b1), toTensor(w2),
             toTensor(b2)},
            {b, s, d}, ScalarType::F32);
        ASSERT_EQ(shapeOf(out), want.shape);
        for (size_t i = 0; i < want.data.size(); ++i)
          ASSERT_NEAR(out.data()[i], want.data[i], 1e-4 * std::max(1.0, std::fabs(want.data[i])))
              << sizes({{"D", d}, {"H", h}, {"S", s}}) << " T=" << timeStep
              << " at flat index " << i;
      }
    }
  }
}

TEST(RecursivePositionKernel, NegativeParameterShapesAreErrors) {
  KernelSpec spec;
  spec.kind = KernelKind::RecursivePosition;
  Jit jit(spec);
  const int d = 8, h = 4, s = 5;
  Buffer<float> x = randomBuffer({d, s, 1}), p0 = randomBuffer({d}),
                b1 = randomBuffer({h}), w2 = randomBuffer({d, h + 1}),
                b2 = randomBuffer({d});
  // w1 without its time row: [D, H] instead of [D + 1, H].
  Buffer<float> w1 = randomBuffer({h, d});
  EXPECT_THROW(jit.run<float>({x, p0, w1, b1, w2, b2}, {d, s, 1}), Halide::RuntimeError);
}

template <typename IdT>
void checkComplexEmbedding(ScalarType indexType, int64_t firstPosition) {
  KernelSpec spec;
  spec.kind = KernelKind::ComplexEmbedding;
  spec.indexType = indexType;
  spec.firstPosition = firstPosition;
  Jit jit(spec);
  const int vocab = 50, b = 2;
  std::string op = "tfm.complex_embedding %a0, %a1, %a2, %a3 {first_position = " +
                   std::to_string(firstPosition) +
                   " : i64} : {T0}, {T1}, {T2}, {T3} -> {R}";
  for (int d : {64, 7}) {
    Buffer<float> amplitude = randomBuffer({d, vocab});
    Buffer<float> frequency = randomBuffer({d, vocab}, -3.f, 3.f);
    Buffer<float> phase = randomBuffer({d, vocab}, -10.f, 10.f);
    for (int s : {1, 7, 129}) {
      Buffer<IdT> ids(s, b);
      std::uniform_int_distribution<int> pick(0, vocab - 1);
      ids.for_each_value([&](IdT &v) { v = pick(rng()); });
      Buffer<float> out = jit.run<float>({ids, amplitude, frequency, phase}, {2 * d, s, b});
      Tensor want = oracle().eval(op,
                                  {toTensor(ids, indexType), toTensor(amplitude),
                                   toTensor(frequency), toTensor(phase)},
                                  {b, s, 2 * d}, ScalarType::F32);
      expectMatches(out, want, sizes({{"d", d}, {"s", s}}));
    }
  }
  // Out-of-range ids (rejected by the runtime before a run) are clamped:
  // never a read outside the tables.
  const int d = 8;
  Buffer<float> amplitude = randomBuffer({d, vocab}), frequency = randomBuffer({d, vocab}),
                phase = randomBuffer({d, vocab});
  Buffer<IdT> bad(3, 1), clamped(3, 1);
  bad(0, 0) = -7;
  bad(1, 0) = vocab + 100;
  bad(2, 0) = std::numeric_limits<IdT>::max();
  clamped(0, 0) = 0;
  clamped(1, 0) = vocab - 1;
  clamped(2, 0) = vocab - 1;
  Buffer<float> out = jit.run<float>({bad, amplitude, frequency, phase}, {2 * d, 3, 1});
  Buffer<float> want = jit.run<float>({clamped, amplitude, frequency, phase}, {2 * d, 3, 1});
  for (int s = 0; s < 3; ++s)
    for (int c = 0; c < 2 * d; ++c)
      EXPECT_EQ(out(c, s, 0), want(c, s, 0)) << "s=" << s << " c=" << c;
}

TEST(ComplexEmbeddingKernel, RotatesRowsI32) {
  checkComplexEmbedding<int32_t>(ScalarType::I32, 1);
}
TEST(ComplexEmbeddingKernel, RotatesRowsI64FromPositionZero) {
  checkComplexEmbedding<int64_t>(ScalarType::I64, 0);
}

void checkComplexLinear(bool hasBias, const ScheduleParams &params) {
  KernelSpec spec;
  spec.kind = KernelKind::ComplexLinear;
  spec.hasBias = hasBias;
  if (!params.empty())
    spec.schedules[attune_isa_name(attune::targets::cpu::isaOf(jitTarget()))] = params;
  Jit jit(spec);
  std::string op = hasBias ? "tfm.complex_linear %a0, %a1, %a2 bias(%a3, %a4 : {T3}, {T4})"
                             " : {T0}, {T1}, {T2} -> {R}"
                           : "tfm.complex_linear %a0, %a1, %a2 : {T0}, {T1}, {T2} -> {R}";
  for (auto [k, n] : {std::pair{64, 80}, {5, 3}, {33, 70}}) {
    for (int m : {1, 7, 129}) {
      Buffer<float> x = randomBuffer({2 * k, m}), wr = randomBuffer({n, k}),
                    wi = randomBuffer({n, k}), br = randomBuffer({n}), bi = randomBuffer({n});
      std::vector<Halide::Buffer<>> in = {x, wr, wi};
      std::vector<Tensor> args = {toTensor(x), toTensor(wr), toTensor(wi)};
      if (hasBias) {
        in.insert(in.end(), {br, bi});
        args.insert(args.end(), {toTensor(br), toTensor(bi)});
      }
      Buffer<float> out = jit.run<float>(in, {2 * n, m});
      Tensor want = oracle().eval(op, args, {m, 2 * n}, ScalarType::F32);
      // A GEMM's rounding scales with its terms, not its result (which can
      // cancel): |got - want| <= 1e-5 sum |terms| + 1e-6, as GemmKernelTest.
      ASSERT_EQ(shapeOf(out), want.shape);
      for (int row = 0; row < m; ++row)
        for (int col = 0; col < 2 * n; ++col) {
          const int o = col % n;
          double terms = hasBias ? std::fabs(col < n ? br(o) : bi(o)) : 0.0;
          for (int kk = 0; kk < k; ++kk)
            terms += (std::fabs(x(kk, row)) + std::fabs(x(k + kk, row))) *
                     (std::fabs(wr(o, kk)) + std::fabs(wi(o, kk)));
          ASSERT_NEAR(out(col, row), want.data[row * 2 * n + col], 1e-5 * terms + 1e-6)
              << sizes({{"K", k}, {"N", n}, {"M", m}}) << " at row " << row << " col " << col;
        }
    }
  }
}

TEST(ComplexLinearKernel, ComplexProductOnRealImaginaryRows) {
  checkComplexLinear(true, {});
  checkComplexLinear(false, {});
}

/// The block weight is formed while packing panels: another panel width
/// (a tuner's candidate) must split the real and imaginary halves the same.
TEST(ComplexLinearKernel, NonDefaultScheduleCandidate) {
  std::vector<ScheduleParams> candidates = detail::gemmScheduleCandidates(jitTarget());
  ASSERT_GE(candidates.size(), 2u);
  checkComplexLinear(true, candidates[candidates.size() / 2]);
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

TEST(LayerNormKernel, MatchesReference) {
  KernelSpec spec;
  spec.kind = KernelKind::LayerNorm;
  spec.epsilon = 1e-5;
  Jit jit(spec);
  const std::string op = "tfm.layer_norm %a0, %a1, %a2 {epsilon = " +
                         f64Attr(spec.epsilon) + "} : {T0}, {T1}, {T2} -> {R}";
  for (int d : {64, 80, 128, 33, 1}) {
    for (int n : {1, 7, 129}) {
      // A large common offset checks the variance does not cancel.
      for (float offset : {0.f, 100.f}) {
        Buffer<float> x = randomBuffer({d, n}, offset - 2.f, offset + 2.f);
        Buffer<float> gamma = randomBuffer({d}), beta = randomBuffer({d});
        Buffer<float> out = jit.run<float>({x, gamma, beta}, {d, n});
        Tensor want = oracle().eval(op, {toTensor(x), toTensor(gamma), toTensor(beta)},
                                    {n, d}, ScalarType::F32);
        expectMatches(out, want,
                      sizes({{"d", d}, {"n", n}, {"offset", static_cast<int>(offset)}}));
      }
    }
  }
}

TEST(RmsNormKernel, MatchesReference) {
  KernelSpec spec;
  spec.kind = KernelKind::RmsNorm;
  spec.epsilon = 1e-6;
  Jit jit(spec);
  const std::string op = "tfm.rms_norm %a0, %a1 {epsilon = " + f64Attr(spec.epsilon) +
                         "} : {T0}, {T1} -> {R}";
  for (int d : {64, 80, 128, 33, 1}) {
    for (int n : {1, 7, 129}) {
      Buffer<float> x = randomBuffer({d, n});
      Buffer<float> gamma = randomBuffer({d});
      Buffer<float> out = jit.run<float>({x, gamma}, {d, n});
      Tensor want = oracle().eval(op, {toTensor(x), toTensor(gamma)}, {n, d},
                                  ScalarType::F32);
      expectMatches(out, want, sizes({{"d", d}, {"n", n}}));
    }
  }
}

/// tfm-fuse-residual-norm's form: the kernel normalises x + residual (the
/// sum rounded to float, as the add it replaces stores it), against the
/// evaluator's tfm.layer_norm / tfm.rms_norm with a residual. The large
/// offset sits in the residual stream, as in a model.
TEST(LayerNormKernel, AddsTheResidual) {
  for (KernelKind kind : {KernelKind::LayerNorm, KernelKind::RmsNorm}) {
    const bool layer = kind == KernelKind::LayerNorm;
    KernelSpec spec;
    spec.kind = kind;
    spec.epsilon = 1e-5;
    spec.hasResidual = true;
    Jit jit(spec);
    const std::string op =
        layer ? "tfm.layer_norm %a0, %a1, %a2 residual(%a3 : {T3}) {epsilon = " +
                    f64Attr(spec.epsilon) + "} : {T0}, {T1}, {T2} -> {R}"
              : "tfm.rms_norm %a0, %a1 residual(%a2 : {T2}) {epsilon = " +
                    f64Attr(spec.epsilon) + "} : {T0}, {T1} -> {R}";
    for (int d : {64, 33, 1})
      for (int n : {1, 7, 129})
        for (float offset : {0.f, 100.f}) {
          Buffer<float> x = randomBuffer({d, n}, -2.f, 2.f);
          Buffer<float> residual = randomBuffer({d, n}, offset - 2.f, offset + 2.f);
          Buffer<float> gamma = randomBuffer({d}), beta = randomBuffer({d});
          std::vector<Buffer<>> in = {x, residual, gamma};
          std::vector<Tensor> args = {toTensor(x), toTensor(gamma)};
          if (layer) {
            in.push_back(beta);
            args.push_back(toTensor(beta));
          }
          args.push_back(toTensor(residual));
          Buffer<float> out = jit.run<float>(in, {d, n});
          Tensor want = oracle().eval(op, args, {n, d}, ScalarType::F32);
          expectMatches(out, want,
                        sizes({{layer ? "layer d" : "rms d", d}, {"n", n},
                               {"offset", static_cast<int>(offset)}}));
        }
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

const char *binaryOp(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Add:
    return "tfm.add";
  case BinaryKind::Sub:
    return "tfm.sub";
  case BinaryKind::Mul:
    return "tfm.mul";
  case BinaryKind::Div:
    return "tfm.div";
  case BinaryKind::Minimum:
    return "tfm.minimum";
  case BinaryKind::Maximum:
    return "tfm.maximum";
  }
  return "?";
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
      // lhs: a [d2, d0, d1] tensor seen through a transpose as [d2, d1, d0].
      Buffer<float> lhsStore = randomBuffer({d1, d0, d2});
      Buffer<float> lhs = view(lhsStore, {d0, d1, d2}, {d1, 1, d0 * d1});
      // rhs: a row [d0] broadcast over d1 and d2 by stride 0 (numpy
      // broadcasting from the right in the oracle), kept away from 0 for the
      // division.
      Buffer<float> rhsStore = randomBuffer({d0}, 0.5f, 2.f);
      Buffer<float> rhs = view(rhsStore, {d0, d1, d2}, {1, 0, 0});
      Buffer<float> out = jit.run<float>({lhs, rhs}, {d0, d1, d2});
      Tensor want = oracle().eval(std::string(binaryOp(kind)) + " %a0, %a1 : {T0}, {T1} -> {R}",
                                  {toTensor(lhs), toTensor(rhsStore)}, {d2, d1, d0},
                                  ScalarType::F32);
      expectMatches(out, want, std::string(binaryOp(kind)) + " " + sizes({{"d0", d0}}));
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
    Tensor want = oracle().eval("tfm.mul %a0, %a1 : {T0}, {T1} -> {R}",
                                {toTensor(a), toTensor(b)}, shapeOf(out), ScalarType::F32);
    expectMatches(out, want, sizes({{"rank", rank}}));
  }
}

/// Half-precision element types load, compute in f32 and round on the store:
/// within one ulp of the type (2^-10 relative for f16, 2^-7 for bf16) of the
/// oracle's f64 result (half an ulp of rounding, plus f32's double rounding).
template <typename Half>
void checkHalfBinary(ScalarType type, double relTol) {
  KernelSpec spec;
  spec.kind = KernelKind::Binary;
  spec.binary = BinaryKind::Div;
  spec.elementType = type;
  spec.rank = 2;
  Jit jit(spec);
  const int d0 = 37, d1 = 3;
  Buffer<float> af = randomBuffer({d0, d1}), bf = randomBuffer({d0, d1}, 0.5f, 2.f);
  Buffer<Half> a(d0, d1), b(d0, d1);
  a.for_each_element([&](int i, int j) { a(i, j) = Half(af(i, j)); });
  b.for_each_element([&](int i, int j) { b(i, j) = Half(bf(i, j)); });
  Buffer<Half> out = jit.run<Half>({a, b}, {d0, d1});
  Tensor ta = toTensor(a, type), tb = toTensor(b, type);
  Tensor want = oracle().eval("tfm.div %a0, %a1 : {T0}, {T1} -> {R}", {ta, tb},
                              {d1, d0}, type);
  for (size_t i = 0; i < want.data.size(); ++i) {
    double got = static_cast<double>(out.data()[i]);
    ASSERT_LE(std::fabs(got - want.data[i]), relTol * std::fabs(want.data[i]))
        << "at flat index " << i << ": got " << got << ", want " << want.data[i];
  }
}

TEST(BinaryKernel, HalfPrecisionElements) {
  checkHalfBinary<Halide::float16_t>(ScalarType::F16, 0x1p-10);
  checkHalfBinary<Halide::bfloat16_t>(ScalarType::BF16, 0x1p-7);
}

TEST(WhereKernel, BoolAndI8Conditions) {
  for (ScalarType condType : {ScalarType::Bool, ScalarType::I8}) {
    KernelSpec spec;
    spec.kind = KernelKind::Where;
    spec.condType = condType;
    spec.rank = 4;
    Jit jit(spec);
    for (int sk : {1, 7, 129}) {
      const int sq = 6, h = 2, b = 1;
      std::vector<int> shape = {sk, sq, h, b};
      // A [b, 1, sq, sk] mask broadcast over heads, and a scalar on_true
      // (masked_fill with a constant) broadcast everywhere.
      std::vector<int> condStrides = {1, sk, 0, sk * sq};
      std::bernoulli_distribution coin(0.5);
      Buffer<bool> condBool(std::vector<int>{sk, sq, 1, b});
      Buffer<int8_t> condI8(std::vector<int>{sk, sq, 1, b});
      condBool.for_each_value([&](bool &v) { v = coin(rng()); });
      condI8.for_each_value([&](int8_t &v) { v = coin(rng()) ? -3 : 0; });
      Halide::Buffer<> cond;
      Tensor condTensor;
      if (condType == ScalarType::Bool) {
        cond = view(condBool, shape, condStrides);
        condTensor = toTensor(condBool, ScalarType::Bool);
      } else {
        cond = view(condI8, shape, condStrides);
        condTensor = toTensor(condI8, ScalarType::I8);
      }
      Buffer<float> scalar = randomBuffer({1});
      Buffer<float> onTrue = view(scalar, shape, {0, 0, 0, 0});
      Buffer<float> onFalse = randomBuffer(shape);
      Buffer<float> out = jit.run<float>({cond, onTrue, onFalse}, shape);
      Tensor scalarTensor;
      scalarTensor.data = {scalar(0)};
      Tensor want = oracle().eval("tfm.where %a0, %a1, %a2 : {T0}, {T1}, {T2} -> {R}",
                                  {condTensor, scalarTensor, toTensor(onFalse)},
                                  {b, h, sq, sk}, ScalarType::F32);
      expectMatches(out, want, sizes({{"sk", sk}}), /*exact=*/true);
    }
  }
}

TEST(UnaryKernel, Activations) {
  const std::vector<std::pair<UnaryKind, std::string>> kinds = {
      {UnaryKind::Relu, "tfm.relu %a0 : {T0} -> {R}"},
      {UnaryKind::GeluErf, "tfm.gelu %a0 : {T0} -> {R}"},
      {UnaryKind::GeluTanh, "tfm.gelu %a0 {approximate = #tfm.gelu_approx<tanh>} : {T0} -> {R}"},
      {UnaryKind::Silu, "tfm.silu %a0 : {T0} -> {R}"},
      {UnaryKind::Neg, "tfm.neg %a0 : {T0} -> {R}"},
      {UnaryKind::Abs, "tfm.abs %a0 : {T0} -> {R}"},
      {UnaryKind::Cos, "tfm.cos %a0 : {T0} -> {R}"},
      {UnaryKind::Sin, "tfm.sin %a0 : {T0} -> {R}"},
      {UnaryKind::Tanh, "tfm.tanh %a0 : {T0} -> {R}"}};
  for (const auto &[kind, op] : kinds) {
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
      Tensor want = oracle().eval(op, {toTensor(x)}, {n}, ScalarType::F32);
      expectMatches(out, want, op + " " + sizes({{"n", n}}));
    }
  }
}

/// tanh (softcapping's) is computed, not called: within 1e-6 relative of
/// the oracle's over magnitudes from 1e-30 to 40 and across the switch from
/// the series to the exponential form at 1/4; zeros keep their sign.
TEST(UnaryKernel, TanhRelativeError) {
  KernelSpec spec;
  spec.kind = KernelKind::Unary;
  spec.unary = UnaryKind::Tanh;
  Jit jit(spec);
  std::vector<float> values = {0.f, -0.f, 0.25f, std::nextafter(0.25f, 0.f), 1e-30f, 40.f};
  for (double e = -30; e <= 1.6; e += 0.01)
    values.push_back(static_cast<float>(std::pow(10.0, e)));
  const int half = static_cast<int>(values.size());
  for (int i = 0; i < half; ++i)
    values.push_back(-values[i]);
  const int n = static_cast<int>(values.size());
  Buffer<float> x(n);
  for (int i = 0; i < n; ++i)
    x(i) = values[i];
  Buffer<float> out = jit.run<float>({x}, {n});
  Tensor want = oracle().eval("tfm.tanh %a0 : {T0} -> {R}", {toTensor(x)}, {n}, ScalarType::F32);
  for (int i = 0; i < n; ++i)
    ASSERT_LE(std::fabs(out(i) - want.data[i]), 1e-6 * std::fabs(want.data[i]))
        << "tanh(" << x(i) << "): got " << out(i) << ", want " << want.data[i];
  EXPECT_TRUE(std::signbit(out(1)));
  EXPECT_EQ(out(5), 1.0f);
}

/// RoPE angles are position times frequency: thousands of radians at long
/// context. cos and sin must be the correctly reduced functions there (an
/// approximation such as Halide's fast_cos is off by far more than an ulp),
/// so the result is within one f32 ulp of the oracle's, which is cos of the
/// same f32 angle in double, rounded.
TEST(UnaryKernel, CosSinOfLargeAngles) {
  for (UnaryKind kind : {UnaryKind::Cos, UnaryKind::Sin}) {
    KernelSpec spec;
    spec.kind = KernelKind::Unary;
    spec.unary = kind;
    Jit jit(spec);
    const int n = 8193;
    Buffer<float> x(n);
    // Positions 0..8192 at a unit frequency, then a few far past them.
    x.for_each_element([&](int i) { x(i) = static_cast<float>(i); });
    x(n - 3) = 1.0e5f;
    x(n - 2) = -3.0e6f;
    x(n - 1) = 12345.678f;
    Buffer<float> out = jit.run<float>({x}, {n});
    std::string op = kind == UnaryKind::Cos ? "tfm.cos %a0 : {T0} -> {R}"
                                            : "tfm.sin %a0 : {T0} -> {R}";
    Tensor want = oracle().eval(op, {toTensor(x)}, {n}, ScalarType::F32);
    for (int i = 0; i < n; ++i)
      ASSERT_LE(std::fabs(out(i) - want.data[i]), 0x1p-23)
          << op << " at x = " << x(i) << ": got " << out(i) << ", want " << want.data[i];
  }
}

/// out[n] = start + n in each element type, from a zero-input kernel whose
/// length is its output buffer's: exact for integers and for f32 below
/// 2^24; f16 and bf16 hold the oracle's value rounded to the type.
template <typename T>
void checkArange(ScalarType type) {
  for (int64_t start : {int64_t(0), int64_t(-3), int64_t(4090)}) {
    KernelSpec spec;
    spec.kind = KernelKind::Arange;
    spec.elementType = type;
    spec.start = start;
    Jit jit(spec);
    const std::string op = "tfm.arange %a0 {axis = 0 : i64, start = " +
                           std::to_string(start) + " : i64} : {T0} -> {R}";
    for (int n : {1, 7, 129}) {
      Buffer<T> out = jit.run<T>({}, {n});
      Tensor like;
      like.shape = {n};
      like.data.assign(n, 0.0);
      Tensor want = oracle().eval(op, {like}, {n}, type);
      ASSERT_EQ(want.data.size(), static_cast<size_t>(n));
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<double>(out(i)), static_cast<double>(T(want.data[i])))
            << mlirTypeName(type) << " " << sizes({{"start", int(start)}, {"n", n}})
            << " at " << i;
    }
  }
}

TEST(ArangeKernel, EveryElementType) {
  checkArange<float>(ScalarType::F32);
  checkArange<Halide::float16_t>(ScalarType::F16);
  checkArange<Halide::bfloat16_t>(ScalarType::BF16);
  checkArange<int32_t>(ScalarType::I32);
  checkArange<int64_t>(ScalarType::I64);
}

TEST(CausalMaskKernel, FillsAboveShiftedDiagonal) {
  for (double value : {-std::numeric_limits<double>::infinity(), -1e9}) {
    KernelSpec spec;
    spec.kind = KernelKind::CausalMask;
    spec.value = value;
    Jit jit(spec);
    // -inf is the op's default value; -1e9 is what many exporters write.
    std::string op = std::isinf(value)
                         ? "tfm.causal_mask %a0 : {T0} -> {R}"
                         : "tfm.causal_mask %a0 {value = " + f64Attr(value) + "} : {T0} -> {R}";
    for (int sq : {1, 7, 129}) {
      for (int extra : {0, 5}) {
        const int sk = sq + extra, bt = 3;
        // Scores stored [bt, sk, sq] and viewed transposed: a strided input.
        Buffer<float> store = randomBuffer({sq, sk, bt});
        Buffer<float> x = view(store, {sk, sq, bt}, {sq, 1, sq * sk});
        Buffer<float> out = jit.run<float>({x}, {sk, sq, bt});
        Tensor want = oracle().eval(op, {toTensor(x)}, {bt, sq, sk}, ScalarType::F32);
        expectMatches(out, want, sizes({{"sq", sq}, {"sk", sk}}), /*exact=*/true);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(CopyKernel, TransposesAndBroadcasts) {
  {
    // [B, S, H, D] -> [B, H, S, D] (permutation 0, 2, 1, 3), read through
    // the permuted strides the host passes.
    KernelSpec spec;
    spec.kind = KernelKind::Copy;
    spec.rank = 4;
    Jit jit(spec);
    for (int s : {1, 7, 129}) {
      const int d = 80, h = 3, b = 2;
      Buffer<float> in = randomBuffer({d, h, s, b});
      Buffer<float> x = view(in, {d, s, h, b}, {1, d * h, d, d * h * s});
      Buffer<float> out = jit.run<float>({x}, {d, s, h, b});
      Tensor want = oracle().eval(
          "tfm.transpose %a0 {permutation = array<i64: 0, 2, 1, 3>} : {T0} -> {R}",
          {toTensor(in)}, {b, h, s, d}, ScalarType::F32);
      expectMatches(out, want, sizes({{"s", s}}), /*exact=*/true);
    }
  }
  {
    // A 2-d i32 transpose, and a stride-0 broadcast (no tfm op of its own:
    // checked by hand).
    KernelSpec spec;
    spec.kind = KernelKind::Copy;
    spec.elementType = ScalarType::I32;
    spec.rank = 2;
    Jit jit(spec);
    Buffer<int32_t> in(7, 129);
    in.for_each_element([&](int x, int y) { in(x, y) = x * 1000 + y; });
    Buffer<int32_t> t = view(in, {129, 7}, {7, 1});
    Buffer<int32_t> out = jit.run<int32_t>({t}, {129, 7});
    Tensor want = oracle().eval("tfm.transpose %a0 {permutation = array<i64: 1, 0>} : {T0} -> {R}",
                                {toTensor(in, ScalarType::I32)}, {7, 129}, ScalarType::I32);
    expectMatches(out, want, "i32 transpose", /*exact=*/true);
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
    const std::string op = "tfm.repeat_interleave %a0 {axis = 1 : i64, repeats = " +
                           std::to_string(repeats) + " : i64} : {T0} -> {R}";
    for (int inner : {64, 7}) {
      const int n = 3, outer = 2;
      Buffer<float> x = randomBuffer({inner, n, outer});
      Buffer<float> out = jit.run<float>({x}, {inner, n * int(repeats), outer});
      Tensor want = oracle().eval(op, {toTensor(x)}, {outer, n * repeats, inner},
                                  ScalarType::F32);
      expectMatches(out, want, sizes({{"inner", inner}, {"repeats", int(repeats)}}),
                    /*exact=*/true);
    }
  }
}

/// tfm.gather_elements along `axis` of a row-major tensor of `shape`,
/// through the kernel's [outer, axis, inner] view of the same dense data (as
/// KernelMapping passes it): indices random in [-L, L) plus both ends, with
/// `n` rows along the axis where the input has `shape[axis]`. One kernel
/// runs every shape, as a dynamic length would.
template <typename ElemT, typename IdT>
void checkGather(Jit &jit, ScalarType elemType, ScalarType indexType,
                 std::vector<int64_t> shape, int64_t axis, int n) {
  auto volume = [](const std::vector<int64_t> &s, size_t from, size_t to) {
    int prod = 1;
    for (size_t d = from; d < to; ++d)
      prod *= static_cast<int>(s[d]);
    return prod;
  };
  const int outer = volume(shape, 0, axis), inner = volume(shape, axis + 1, shape.size());
  const int L = static_cast<int>(shape[axis]);
  std::vector<int64_t> idxShape = shape;
  idxShape[axis] = n;
  Buffer<ElemT> x(inner, L, outer);
  std::uniform_int_distribution<int> value(-1000000, 1000000);
  x.for_each_value([&](ElemT &v) { v = static_cast<ElemT>(value(rng()) / 1024.0); });
  Buffer<IdT> idx(inner, n, outer);
  std::uniform_int_distribution<int> pick(-L, L - 1);
  idx.for_each_value([&](IdT &v) { v = static_cast<IdT>(pick(rng())); });
  idx.data()[0] = static_cast<IdT>(-L);
  idx.data()[idx.number_of_elements() - 1] = static_cast<IdT>(L - 1);
  Buffer<ElemT> out = jit.run<ElemT>({x, idx}, {inner, n, outer});

  // The oracle sees the tensors in their own rank.
  Tensor xt = toTensor(x, elemType), it = toTensor(idx, indexType);
  xt.shape = shape;
  it.shape = idxShape;
  const std::string op = "tfm.gather_elements %a0, %a1 {axis = " + std::to_string(axis) +
                         " : i64} : {T0}, {T1} -> {R}";
  Tensor want = oracle().eval(op, {xt, it}, idxShape, elemType);
  std::string what = std::string(mlirTypeName(elemType)) + "/" + mlirTypeName(indexType) + " axis " +
                     std::to_string(axis) + " " + sizes({{"L", L}, {"n", n}});
  ASSERT_EQ(static_cast<size_t>(out.number_of_elements()), want.data.size()) << what;
  for (size_t i = 0; i < want.data.size(); ++i)
    ASSERT_EQ(static_cast<double>(out.data()[i]), want.data[i]) << what << " at " << i;
}

/// Axis 0 (outer 1), a middle axis, the last axis (inner 1: the
/// specialised schedule), lengths 1, 7 and 129, more and fewer indices than
/// rows; f32 and i64 elements, i32 and i64 indices.
TEST(GatherElementsKernel, MatchesReferenceAlongEveryAxis) {
  auto run = [](auto elem, auto id, ScalarType elemType, ScalarType indexType) {
    using ElemT = decltype(elem);
    using IdT = decltype(id);
    KernelSpec spec;
    spec.kind = KernelKind::GatherElements;
    spec.elementType = elemType;
    spec.indexType = indexType;
    Jit jit(spec);
    for (int L : {1, 7, 129}) {
      for (int n : {1, 5, 130}) {
        checkGather<ElemT, IdT>(jit, elemType, indexType, {L, 3, 20}, 0, n);
        checkGather<ElemT, IdT>(jit, elemType, indexType, {2, 3, L, 9}, 2, n);
        checkGather<ElemT, IdT>(jit, elemType, indexType, {2, 3, L}, 2, n);
        if (::testing::Test::HasFatalFailure())
          return;
      }
    }
  };
  run(float(), int64_t(), ScalarType::F32, ScalarType::I64);
  run(float(), int32_t(), ScalarType::F32, ScalarType::I32);
  run(int64_t(), int32_t(), ScalarType::I64, ScalarType::I32);
}

/// An index outside [-L, L) fails the kernel with a message naming it; it
/// is never read. An i64 index 2^32 + 1, which a cast to 32 bits first
/// would take for 1, is outside too.
TEST(GatherElementsKernel, NegativeIndexOutOfRangeIsAnError) {
  KernelSpec spec;
  spec.kind = KernelKind::GatherElements;
  spec.indexType = ScalarType::I64;
  Jit jit(spec);
  Buffer<float> x = randomBuffer({1, 4, 6});
  for (int64_t bad : {int64_t(4), int64_t(-5), (int64_t(1) << 32) + 1}) {
    Buffer<int64_t> idx(1, 3, 6);
    idx.fill(0);
    idx(0, 2, 4) = bad;
    try {
      jit.run<float>({x, idx}, {1, 3, 6});
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const Halide::RuntimeError &error) {
      std::string message = error.what();
      // Element (4 * 3 + 2) * 1 + 0 of the dense indices.
      EXPECT_NE(message.find("gather_elements: indices element 14 is " + std::to_string(bad) +
                             ", outside [-4, 4)"),
                std::string::npos)
          << message;
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
  add([](KernelSpec &s) { s.kind = KernelKind::LayerNorm; s.epsilon = 1e-5; s.hasResidual = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::RmsNorm; s.epsilon = 1e-5; s.hasResidual = true; });
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
  add([](KernelSpec &s) { s.kind = KernelKind::MultiplicativePosition; });
  add([](KernelSpec &s) { s.kind = KernelKind::MultiplicativePosition; s.hasTable = true; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::MultiplicativePosition;
    s.form = SinusoidalForm::Concat;
  });
  add([](KernelSpec &s) { s.kind = KernelKind::RecursivePosition; });
  add([](KernelSpec &s) { s.kind = KernelKind::RecursivePosition; s.timeStep = 0.01; });
  add([](KernelSpec &s) { s.kind = KernelKind::ComplexEmbedding; });
  add([](KernelSpec &s) { s.kind = KernelKind::ComplexEmbedding; s.firstPosition = 0; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::ComplexEmbedding;
    s.indexType = ScalarType::I64;
  });
  add([](KernelSpec &s) { s.kind = KernelKind::ComplexLinear; });
  add([](KernelSpec &s) { s.kind = KernelKind::ComplexLinear; s.hasBias = true; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::Neg; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::Abs; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::Cos; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::Sin; });
  add([](KernelSpec &s) { s.kind = KernelKind::Arange; });
  add([](KernelSpec &s) { s.kind = KernelKind::Arange; s.start = 3; });
  add([](KernelSpec &s) { s.kind = KernelKind::Arange; s.start = -3; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::Arange;
    s.elementType = ScalarType::I32;
  });
  // Integer element types, the new binary and unary kinds, compare's
  // predicates and cast's two types.
  add([](KernelSpec &s) { s.kind = KernelKind::Binary; s.rank = 2; s.elementType = ScalarType::I64; });
  add([](KernelSpec &s) { s.kind = KernelKind::Binary; s.rank = 2; s.binary = BinaryKind::Minimum; });
  add([](KernelSpec &s) { s.kind = KernelKind::Binary; s.rank = 2; s.binary = BinaryKind::Maximum; });
  add([](KernelSpec &s) { s.kind = KernelKind::Unary; s.unary = UnaryKind::Log; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::Unary;
    s.unary = UnaryKind::Abs;
    s.elementType = ScalarType::I32;
  });
  add([](KernelSpec &s) { s.kind = KernelKind::Where; s.rank = 2; s.elementType = ScalarType::I64; });
  for (ComparePredicate p : {ComparePredicate::Lt, ComparePredicate::Le, ComparePredicate::Gt,
                             ComparePredicate::Ge, ComparePredicate::Eq, ComparePredicate::Ne})
    add([&](KernelSpec &s) { s.kind = KernelKind::Compare; s.rank = 2; s.predicate = p; });
  add([](KernelSpec &s) { s.kind = KernelKind::Compare; s.rank = 3; s.elementType = ScalarType::I64; });
  add([](KernelSpec &s) { s.kind = KernelKind::Cast; s.sourceType = ScalarType::I64; });
  add([](KernelSpec &s) { s.kind = KernelKind::Cast; s.elementType = ScalarType::I64; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::Cast;
    s.sourceType = ScalarType::Bool;
    s.elementType = ScalarType::I64;
  });
  add([](KernelSpec &s) { s.kind = KernelKind::GatherElements; });
  add([](KernelSpec &s) {
    s.kind = KernelKind::GatherElements;
    s.indexType = ScalarType::I64;
  });
  add([](KernelSpec &s) {
    s.kind = KernelKind::GatherElements;
    s.elementType = ScalarType::BF16;
  });
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

  // Arange reads nothing: its one argument is the output.
  KernelSpec arange;
  arange.kind = KernelKind::Arange;
  arange.elementType = ScalarType::I64;
  sig = kernelSignature(arange);
  ASSERT_EQ(sig.size(), 1u);
  EXPECT_EQ(sig[0].name, "out");
  EXPECT_EQ(sig[0].type, ScalarType::I64);
  kernel = detail::buildKernel(arange, jitTarget());
  EXPECT_TRUE(kernel.inputs.empty());
  EXPECT_EQ(kernel.output.dimensions(), 1);
  EXPECT_EQ(kernel.output.types().at(0), Halide::Int(64));

  // Compare's output is i1 whatever its operands; Cast reads its source
  // type and writes the element type.
  KernelSpec compare;
  compare.kind = KernelKind::Compare;
  compare.elementType = ScalarType::I64;
  compare.rank = 2;
  sig = kernelSignature(compare);
  ASSERT_EQ(sig.size(), 3u);
  EXPECT_EQ(sig[2].type, ScalarType::Bool);
  kernel = detail::buildKernel(compare, jitTarget());
  ASSERT_EQ(kernel.inputs.size(), 2u);
  EXPECT_EQ(kernel.inputs[0].type(), Halide::Int(64));
  EXPECT_EQ(kernel.inputs[1].dimensions(), 2);
  EXPECT_EQ(kernel.output.types().at(0), Halide::Bool());
  KernelSpec cast;
  cast.kind = KernelKind::Cast;
  cast.sourceType = ScalarType::F32;
  cast.elementType = ScalarType::I64;
  sig = kernelSignature(cast);
  ASSERT_EQ(sig.size(), 2u);
  EXPECT_EQ(sig[0].type, ScalarType::F32);
  EXPECT_EQ(sig[1].type, ScalarType::I64);
  kernel = detail::buildKernel(cast, jitTarget());
  ASSERT_EQ(kernel.inputs.size(), 1u);
  EXPECT_EQ(kernel.inputs[0].type(), Halide::Float(32));
  EXPECT_EQ(kernel.output.types().at(0), Halide::Int(64));
  // GatherElements: the indices have their own type.
  KernelSpec gather;
  gather.kind = KernelKind::GatherElements;
  gather.elementType = ScalarType::F16;
  gather.indexType = ScalarType::I64;
  sig = kernelSignature(gather);
  ASSERT_EQ(sig.size(), 3u);
  kernel = detail::buildKernel(gather, jitTarget());
  ASSERT_EQ(kernel.inputs.size(), 2u);
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    EXPECT_EQ(kernel.inputs[i].name(), sig[i].name);
    EXPECT_EQ(kernel.inputs[i].dimensions(), sig[i].dimensions);
    EXPECT_EQ(kernel.inputs[i].type(), detail::toHalideType(sig[i].type));
  }
  EXPECT_EQ(kernel.inputs[1].type(), Halide::Int(64));
  EXPECT_EQ(kernel.output.dimensions(), 3);
  EXPECT_EQ(kernel.output.types().at(0), Halide::Float(16));
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

  KernelSpec scan;
  scan.kind = KernelKind::RecursivePosition;
  scan.timeStep = NAN;
  message = compileKernelObject(scan, {}, dir + "/bad.o");
  EXPECT_NE(message.find("recursive_position: expected a finite time step"),
            std::string::npos)
      << message;

  KernelSpec words;
  words.kind = KernelKind::ComplexEmbedding;
  words.firstPosition = -1;
  message = compileKernelObject(words, {}, dir + "/bad.o");
  EXPECT_NE(message.find("complex_embedding: expected a first position in [0, 2^30)"),
            std::string::npos)
      << message;
  words.firstPosition = 1;
  words.indexType = ScalarType::F32;
  message = compileKernelObject(words, {}, dir + "/bad.o");
  EXPECT_NE(message.find("expected index type i32 or i64, got f32"), std::string::npos)
      << message;

  KernelSpec product;
  product.kind = KernelKind::MultiplicativePosition;
  product.form = SinusoidalForm::Concat;
  product.minTimescale = 0;
  message = compileKernelObject(product, {}, dir + "/bad.o");
  EXPECT_NE(message.find("expected min timescale > 0"), std::string::npos) << message;
  product.hasTable = true; // the timescales are not read with a table
  EXPECT_EQ(validateKernelSpec(product), "");

  KernelSpec arange;
  arange.kind = KernelKind::Arange;
  arange.elementType = ScalarType::Bool;
  message = compileKernelObject(arange, {}, dir + "/bad.o");
  EXPECT_NE(message.find("arange: expected an f32, f16, bf16, i32 or i64 element type, got bool"),
            std::string::npos)
      << message;
  arange.elementType = ScalarType::I32;
  arange.start = int64_t(1) << 31;
  message = compileKernelObject(arange, {}, dir + "/bad.o");
  EXPECT_NE(message.find("arange: expected a start that fits i32, got 2147483648"),
            std::string::npos)
      << message;
  arange.elementType = ScalarType::I64; // the same start is fine in 64 bits
  EXPECT_EQ(validateKernelSpec(arange), "");
  arange.start = INT64_MIN;
  EXPECT_NE(validateKernelSpec(arange).find("expected a start in (-2^62, 2^62)"),
            std::string::npos);

  // Element types the kind does not define: integer division (PyTorch and
  // ONNX round it differently), log of an integer, a comparison of i1,
  // a cast from i8.
  KernelSpec div;
  div.kind = KernelKind::Binary;
  div.binary = BinaryKind::Div;
  div.rank = 2;
  div.elementType = ScalarType::I32;
  message = compileKernelObject(div, {}, dir + "/bad.o");
  EXPECT_NE(message.find("binary: expected an f32, f16 or bf16 element type for div, got i32"),
            std::string::npos)
      << message;
  div.binary = BinaryKind::Sub; // integers subtract
  EXPECT_EQ(validateKernelSpec(div), "");
  KernelSpec log;
  log.kind = KernelKind::Unary;
  log.unary = UnaryKind::Log;
  log.elementType = ScalarType::I64;
  EXPECT_NE(validateKernelSpec(log).find("unary: expected an f32, f16 or bf16 element type for "
                                         "log, got i64"),
            std::string::npos);
  log.unary = UnaryKind::Neg; // integers negate
  EXPECT_EQ(validateKernelSpec(log), "");
  KernelSpec compare;
  compare.kind = KernelKind::Compare;
  compare.rank = 1;
  compare.elementType = ScalarType::Bool;
  EXPECT_NE(validateKernelSpec(compare).find("compare: expected an f32, f16, bf16, i32 or i64 "
                                             "element type, got bool"),
            std::string::npos);
  compare.elementType = ScalarType::F32;
  compare.predicate = static_cast<ComparePredicate>(6);
  EXPECT_NE(validateKernelSpec(compare).find("compare: unknown predicate 6"), std::string::npos);
  KernelSpec cast;
  cast.kind = KernelKind::Cast;
  cast.sourceType = ScalarType::I8;
  message = compileKernelObject(cast, {}, dir + "/bad.o");
  EXPECT_NE(message.find("cast: expected f32, f16, bf16, bool, i32 or i64 on both sides, got "
                         "i8 to f32"),
            std::string::npos)
      << message;
  KernelSpec gather;
  gather.kind = KernelKind::GatherElements;
  gather.indexType = ScalarType::F32;
  message = compileKernelObject(gather, {}, dir + "/bad.o");
  EXPECT_NE(message.find("gather_elements: expected index type i32 or i64, got f32"),
            std::string::npos)
      << message;

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
/// Every per-target variant this CPU can run is called directly as well, so
/// each schedule is checked, not only the one the dispatcher picks here.
TEST(AotTest, MultiTargetObjectLinksAndRuns) {
  std::string dir = ::testing::TempDir() + "/attune-aot-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  KernelSpec spec;
  spec.kind = KernelKind::LayerNorm;
  spec.epsilon = 1e-5;
  const std::string object = dir + "/kernel.o", runtime = dir + "/runtime.o";
  CpuTargetOptions options;
  ASSERT_EQ(compileKernelObject(spec, options, object), "");
  ASSERT_EQ(compileHalideRuntime(options, runtime), "");
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

  using Fn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                     halide_buffer_t *);
  std::vector<std::pair<std::string, bool>> entries = {
      {spec.symbolName(), true},
      {spec.symbolName() + "-baseline", true},
      {spec.symbolName() + "-avx2_fma_f16c", __builtin_cpu_supports("avx2") &&
                                                 __builtin_cpu_supports("fma")},
      {spec.symbolName() + "-avx512_skylake",
       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512cd")},
  };
  const std::string op = "tfm.layer_norm %a0, %a1, %a2 {epsilon = " +
                         f64Attr(spec.epsilon) + "} : {T0}, {T1}, {T2} -> {R}";
  for (const auto &[symbol, runnable] : entries) {
    auto fn = reinterpret_cast<Fn>(dlsym(handle, symbol.c_str()));
    ASSERT_NE(fn, nullptr) << symbol;
    if (!runnable)
      continue;
    for (int d : {80, 768}) {
      const int n = 7;
      Buffer<float> x = randomBuffer({d, n}), gamma = randomBuffer({d}),
                    beta = randomBuffer({d});
      Buffer<float> out(d, n);
      ASSERT_EQ(fn(x.raw_buffer(), gamma.raw_buffer(), beta.raw_buffer(), out.raw_buffer()), 0)
          << symbol << ": " << lastError;
      Tensor want = oracle().eval(op, {toTensor(x), toTensor(gamma), toTensor(beta)},
                                  {n, d}, ScalarType::F32);
      expectMatches(out, want, symbol + " " + sizes({{"d", d}}));
    }
  }
  // A gamma shorter than the row is reported, not read past.
  auto fn = reinterpret_cast<Fn>(dlsym(handle, spec.symbolName().c_str()));
  Buffer<float> x = randomBuffer({16, 2}), shortGamma = randomBuffer({15}),
                beta = randomBuffer({16});
  Buffer<float> out(16, 2);
  EXPECT_NE(fn(x.raw_buffer(), shortGamma.raw_buffer(), beta.raw_buffer(), out.raw_buffer()), 0);
  EXPECT_NE(lastError.find("gamma"), std::string::npos) << lastError;
  dlclose(handle);
  std::filesystem::remove_all(dir);
}

} // namespace
