//===- GemmKernelTest.cpp - numerics of Linear, Matmul, Softmax, Attention ===//
//
// The performance-critical kernels, JIT-compiled for the host through the
// same dispatcher (detail::buildKernel) the AOT path uses, run on awkward
// sizes (1, 7, 129; head dims 64, 80, 128; tiles that do not divide the
// extents) and compared with plain double-precision loops written from the op
// definitions. The last section checks one case of each kernel against the
// reference evaluator (compiler/reference), which is written from the tfm
// op definitions independently of both.
//
// Tolerances (f32):
//  - GEMMs: |got - want| <= 1e-5 * sum_k |a_k * b_k| + 1e-6. The error of an
//    f32 dot product grows with the magnitudes summed, not with the result,
//    which can cancel to ~0.
//  - Linear over bf16 weights (--precision=bf16): against the same loop on
//    bf16-rounded x and w, the f32 GEMM tolerance; against f32 x and w,
//    |got - want| <= 2^-8 * sum_k |a_k * b_k| + 1e-6 (rounding each operand
//    to bf16 moves a product by at most 2 * 2^-9 of itself).
//  - Softmax and attention: |got - want| <= 1e-4 * (|want| + 1). Both use
//    Halide's fast_exp (about 2^-18 relative error) and their outputs are
//    weighted averages of O(1) values.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/JitKernel.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/modifiers/ScoreModifier.h"
#include "compiler/reference/Evaluator.h"
#include "compiler/support/PanelLayout.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "dialects/tfm/TfmDialect.h"
#include "tests/unit/kernels/Oracle.h"

#include "Halide.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>
#include <xmmintrin.h> // _mm_getcsr

#include <algorithm>
#include <cmath>
#include <unistd.h>
#include <cstdio>
#include <sstream>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace attune::codegen;
using Halide::Buffer;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::mt19937 &gemmRng() {
  static std::mt19937 gen(4321);
  return gen;
}

Buffer<float> uniform(const std::vector<int> &shape, float lo = -1.f,
                      float hi = 1.f) {
  Buffer<float> buf(shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  buf.for_each_value([&](float &v) { v = dist(gemmRng()); });
  return buf;
}

/// Builds `spec` for the host and runs it on `inputs` into `out`.
struct Kernel {
  explicit Kernel(const KernelSpec &spec)
      : target(attune::targets::cpu::jitTarget(spec)),
        built(detail::buildKernel(spec, target)) {}
  void run(const std::vector<Halide::Buffer<>> &inputs, Halide::Buffer<> out) {
    ASSERT_EQ(inputs.size(), built.inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      built.inputs[i].set(inputs[i]);
    built.jit().realize(out, target);
  }
  Halide::Target target;
  detail::BuiltKernel built;
};

/// A view of `storage` with explicit extents and strides (innermost first).
Buffer<float> stridedView(Buffer<float> &storage, const std::vector<int> &shape,
                          const std::vector<int> &strides) {
  std::vector<halide_dimension_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims.push_back(halide_dimension_t(0, shape[i], strides[i]));
  return Buffer<float>(storage.data(), static_cast<int>(dims.size()),
                       dims.data());
}

::testing::AssertionResult closeGemm(double got, double want, double mag) {
  if (std::fabs(got - want) <= 1e-5 * mag + 1e-6)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want
                                       << " (sum |terms| " << mag << ")";
}

::testing::AssertionResult closeSoft(double got, double want) {
  if (std::fabs(got - want) <= 1e-4 * (std::fabs(want) + 1.0))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

//===----------------------------------------------------------------------===//
// Linear and Matmul
//===----------------------------------------------------------------------===//

/// x[M,K] w[K,N] (+ bias) by the Linear kernel, compared with a double
/// loop. `width` > 0 hands w to the kernel pre-packed into panels of that
/// width (KernelSpec::weightPanel, as tfm-pack-weights stores it).
void checkLinear(int M, int K, int N, bool hasBias, int width = 0,
                 std::optional<UnaryKind> activation = std::nullopt) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = hasBias;
  spec.weightPanel = width;
  spec.activation = activation;
  Kernel kernel(spec);
  Buffer<float> x = uniform({K, M}), w = uniform({N, K}), bias = uniform({N});
  Buffer<float> weight = w;
  if (width > 0) {
    weight = Buffer<float>(width, K, static_cast<int>(attune::panelCount(N, width)));
    attune::packPanels(reinterpret_cast<const uint8_t *>(w.data()),
                       reinterpret_cast<uint8_t *>(weight.data()), K, N, width,
                       sizeof(float));
  }
  Buffer<float> out(N, M);
  std::vector<Halide::Buffer<>> inputs = {x, weight};
  if (hasBias)
    inputs.push_back(bias);
  kernel.run(inputs, out);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double want = hasBias ? bias(n) : 0.0, mag = std::fabs(want);
      for (int k = 0; k < K; ++k) {
        want += double(x(k, m)) * w(n, k);
        mag += std::fabs(double(x(k, m)) * w(n, k));
      }
      if (activation) {
        ASSERT_EQ(*activation, UnaryKind::Relu) << "checkLinear's reference has relu only";
        want = std::max(want, 0.0);
      }
      ASSERT_TRUE(closeGemm(out(n, m), want, mag))
          << "panels " << width << ": M=" << M << " K=" << K << " N=" << N
          << " at m=" << m << " n=" << n;
    }
}

/// N not a multiple of the width, so the last panel is padded.
TEST(GemmLinearKernel, ReadsPrePackedPanels) {
  const int f32Panel = static_cast<int>(attune::kF32PanelWidth);
  for (bool bias : {false, true}) {
    checkLinear(7, 13, 70, bias, 64);   // two panels, the last padded
    checkLinear(129, 65, 200, bias, 96); // the layout before kF32PanelWidth
    checkLinear(5, 9, 16, bias, 64);    // one panel, mostly padding
    // The layout attune-compile uses: on AVX-512 and AVX2 the extern stage
    // (linear_f32.c), with tiles (8 rows by three panels; 4 rows by a panel
    // and a half) partial in rows and in columns (the last panels from a
    // zero-padded copy; read again past the last), 96-column tasks split
    // into row blocks when there are few, and K of 1.
    checkLinear(129, 65, 200, bias, f32Panel);
    checkLinear(1, 1, 1, bias, f32Panel);
    checkLinear(9, 1, 50, bias, f32Panel);
    checkLinear(17, 33, 24, bias, f32Panel);
    checkLinear(96, 16, 400, bias, f32Panel);
    // With an activation the Halide tile reads three panels side by side
    // (AVX-512) or one (AVX2).
    checkLinear(50, 37, 70, bias, f32Panel, UnaryKind::Relu);
  }
  checkLinear(33, 40, 100, true, 32);  // a narrower layout
  checkLinear(33, 40, 100, true, 192); // a wider one
  checkLinear(19, 24, 170, false, 80); // five AVX-512 vectors: read whole
  // The panels must cover the output's columns: in the Halide tile and in
  // the extern stage (on AVX-512; elsewhere a Halide tile over panels of
  // 16 with an activation, whose panels must be the output's).
  for (int width : {64, f32Panel}) {
    KernelSpec spec;
    spec.kind = KernelKind::Linear;
    spec.weightPanel = width;
    Buffer<float> x = uniform({8, 4}), packed(width, 8, 1), out(width + 1, 4);
    EXPECT_THROW(Kernel(spec).run({x, packed}, out), Halide::RuntimeError) << width;
    spec.activation = UnaryKind::Relu;
    EXPECT_THROW(Kernel(spec).run({x, packed}, out), Halide::RuntimeError) << width;
  }
}

/// Which linears run the f32 extern stage (runtime/model/linear_f32.c):
/// the AVX2 and AVX-512 levels' f32 linears over kF32PanelWidth panels
/// without an activation, each level its own tile; everything else is the
/// Halide GEMM.
TEST(GemmLinearKernel, F32ExternStageWhereItApplies) {
  auto runsOn = [](const KernelSpec &spec, attune_isa_t isa) {
    detail::BuiltKernel built = detail::buildKernel(spec, attune::targets::cpu::halideTarget(isa));
    return built.output.is_extern() ? built.output.extern_function_name() : std::string();
  };
  KernelSpec plain;
  plain.kind = KernelKind::Linear;
  plain.weightPanel = attune::kF32PanelWidth;
  KernelSpec biased = plain, activated = plain, rowMajor = plain, wide = plain;
  biased.hasBias = true;
  activated.activation = UnaryKind::GeluTanh;
  rowMajor.weightPanel = 0;
  wide.weightPanel = 96;
  for (attune_isa_t isa : {ATTUNE_ISA_AVX512, ATTUNE_ISA_AVX512_SPR}) {
    EXPECT_EQ(runsOn(plain, isa), kLinearF32Avx512Symbol);
    EXPECT_EQ(runsOn(biased, isa), kLinearF32Avx512BiasSymbol);
    for (const KernelSpec *spec : {&activated, &rowMajor, &wide})
      EXPECT_EQ(runsOn(*spec, isa), "") << spec->symbolName();
  }
  EXPECT_EQ(runsOn(plain, ATTUNE_ISA_AVX2), kLinearF32Avx2Symbol);
  EXPECT_EQ(runsOn(biased, ATTUNE_ISA_AVX2), kLinearF32Avx2BiasSymbol);
  for (const KernelSpec *spec : {&activated, &rowMajor, &wide})
    EXPECT_EQ(runsOn(*spec, ATTUNE_ISA_AVX2), "") << spec->symbolName();
  EXPECT_EQ(runsOn(plain, ATTUNE_ISA_BASELINE), "");
}

/// The extern stage's tasks (row tiles by column ranges) on the JIT
/// threads give the output of one thread: each task writes its own block.
TEST(GemmLinearKernel, F32ExternStageTasksOnJitThreads) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = true;
  spec.weightPanel = attune::kF32PanelWidth;
  JitKernel kernel(spec, attune::targets::cpu::jitTarget(spec));
  const int M = 150, K = 64, N = 400, W = static_cast<int>(spec.weightPanel);
  Buffer<float> x = uniform({K, M}), w = uniform({N, K}), bias = uniform({N});
  Buffer<float> packed(W, K, static_cast<int>(attune::panelCount(N, W)));
  attune::packPanels(reinterpret_cast<const uint8_t *>(w.data()),
                     reinterpret_cast<uint8_t *>(packed.data()), K, N, W, sizeof(float));
  Buffer<float> one(N, M), two(N, M);
  kernel.run({x, packed, bias}, one, /*singleThread=*/true);
  const int before = Halide::Internal::JITSharedRuntime::set_num_threads(2);
  kernel.run({x, packed, bias}, two, /*singleThread=*/false);
  Halide::Internal::JITSharedRuntime::set_num_threads(before);
  one.for_each_element([&](int n, int m) {
    ASSERT_EQ(one(n, m), two(n, m)) << "at m=" << m << " n=" << n;
  });
}

/// Linear over bf16 pair panels of `width` (KernelSpec::weightType), checked
/// against double loops over the bf16-rounded operands (tight) and over the
/// f32 ones (the bf16 error bound).
void checkLinearBf16(int M, int K, int N, bool hasBias, int width,
                     std::optional<UnaryKind> activation = std::nullopt) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = hasBias;
  spec.weightPanel = width;
  spec.weightType = attune::ScalarType::BF16;
  spec.activation = activation;
  Kernel kernel(spec);
  Buffer<float> x = uniform({K, M}), w = uniform({N, K}), bias = uniform({N});
  std::vector<int64_t> shape = attune::pairPanelStorageShape(K, N, width);
  Buffer<> packed(Halide::BFloat(16), {2, width, static_cast<int>(shape[1]),
                                       static_cast<int>(shape[0])});
  attune::packPairPanelsBf16(w.data(), reinterpret_cast<uint16_t *>(packed.data()),
                             K, N, width);
  Buffer<float> out(N, M);
  std::vector<Halide::Buffer<>> inputs = {x, packed};
  if (hasBias)
    inputs.push_back(bias);
  kernel.run(inputs, out);
  auto round = [](float v) { return attune::bf16ToFloat(attune::floatToBf16(v)); };
  auto act = [&](double v) {
    if (!activation)
      return v;
    EXPECT_EQ(*activation, UnaryKind::Relu);
    return v > 0 ? v : 0.0;
  };
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double exact = hasBias ? bias(n) : 0.0, full = exact, mag = std::fabs(exact);
      for (int k = 0; k < K; ++k) {
        exact += double(round(x(k, m))) * round(w(n, k));
        full += double(x(k, m)) * w(n, k);
        mag += std::fabs(double(x(k, m)) * w(n, k));
      }
      const double got = out(n, m);
      ASSERT_TRUE(closeGemm(got, act(exact), mag))
          << "bf16 panels " << width << ": M=" << M << " K=" << K << " N=" << N
          << " at m=" << m << " n=" << n;
      ASSERT_LE(std::fabs(got - act(full)), std::ldexp(mag, -8) + 1e-6)
          << "against f32: M=" << M << " K=" << K << " N=" << N << " at m=" << m
          << " n=" << n;
    }
}

/// Odd K (a zero row pads the last pair), N past the last panel, M past
/// the row tile; the 96-wide layout attune-compile writes.
TEST(GemmLinearKernel, Bf16PairPanelsMatchLoops) {
  for (bool bias : {false, true}) {
    checkLinearBf16(1, 1, 1, bias, 32);
    checkLinearBf16(7, 13, 70, bias, 96);
    checkLinearBf16(129, 65, 200, bias, 96);
  }
  checkLinearBf16(64, 256, 192, true, 96);             // whole tiles only
  checkLinearBf16(300, 100, 330, true, 96);  // three row groups, a partial column range
  checkLinearBf16(9, 31, 40, true, 32, UnaryKind::Relu); // the epilogue
  // The panels must cover x's K.
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.weightPanel = 32;
  spec.weightType = attune::ScalarType::BF16;
  Buffer<float> x = uniform({8, 4}), out(32, 4);
  Buffer<> packed(Halide::BFloat(16), {2, 32, 3, 1});
  EXPECT_THROW(Kernel(spec).run({x, packed}, out), Halide::RuntimeError);
}

/// The avx512_zen4 variant is compiled with LLVM's znver4 model, whose
/// AMD-only extensions (SSE4A's extrq/insertq, CLZERO, ...) the level
/// does not check for (Sapphire Rapids runs that level too): the bf16
/// linear, the only kernel built for it, must use vdpbf16ps and none of them.
TEST(GemmLinearKernel, Bf16Zen4VariantUsesNoAmdOnlyInstructions) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = true;
  spec.activation = UnaryKind::GeluTanh;
  spec.weightPanel = 96;
  spec.weightType = attune::ScalarType::BF16;
  Halide::Target target = attune::targets::cpu::halideTarget(ATTUNE_ISA_AVX512_ZEN4)
                              .with_feature(Halide::Target::NoRuntime);
  detail::BuiltKernel kernel = detail::buildKernel(spec, target);
  std::vector<Halide::Argument> args(kernel.inputs.begin(), kernel.inputs.end());
  std::string path = ::testing::TempDir() + "/bf16_zen4_" + std::to_string(getpid()) + ".s";
  kernel.output.compile_to_assembly(path, args, "bf16_zen4", target);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(text.str().find("vdpbf16ps"), std::string::npos);
  for (const char *amdOnly : {"extrq", "insertq", "clzero", "monitorx", "mwaitx", "rdpru"})
    EXPECT_EQ(text.str().find(std::string("\t") + amdOnly), std::string::npos) << amdOnly;
}

TEST(GemmLinearKernel, MatchesLoopsOnOddShapes) {
  for (bool bias : {false, true}) {
    checkLinear(1, 1, 1, bias);
    checkLinear(7, 13, 70, bias);
    checkLinear(129, 65, 200, bias);
  }
  checkLinear(64, 256, 128, true); // whole tiles only
}

void checkMatmul(int Bt, int M, int K, int N, bool tA, bool tB) {
  KernelSpec spec;
  spec.kind = KernelKind::Matmul;
  spec.transposeA = tA;
  spec.transposeB = tB;
  Kernel kernel(spec);
  Buffer<float> a = tA ? uniform({M, K, Bt}) : uniform({K, M, Bt});
  Buffer<float> b = tB ? uniform({K, N, Bt}) : uniform({N, K, Bt});
  Buffer<float> out(N, M, Bt);
  kernel.run({a, b}, out);
  for (int z = 0; z < Bt; ++z)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double want = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
          double term = double(tA ? a(m, k, z) : a(k, m, z)) *
                        (tB ? b(k, n, z) : b(n, k, z));
          want += term;
          mag += std::fabs(term);
        }
        ASSERT_TRUE(closeGemm(out(n, m, z), want, mag))
            << "Bt=" << Bt << " M=" << M << " K=" << K << " N=" << N
            << " tA=" << tA << " tB=" << tB << " at " << z << "," << m << ","
            << n;
      }
}

TEST(GemmMatmulKernel, MatchesLoopsForEveryTransposition) {
  for (bool tA : {false, true})
    for (bool tB : {false, true}) {
      checkMatmul(1, 1, 1, 1, tA, tB);
      checkMatmul(3, 7, 19, 131, tA, tB);
      checkMatmul(2, 129, 64, 70, tA, tB);
    }
}

/// The host expresses a batch broadcast with stride 0 and a head split with
/// permuted strides; the kernel must read both as given.
TEST(GemmMatmulKernel, ReadsBroadcastAndPermutedOperands) {
  KernelSpec spec;
  spec.kind = KernelKind::Matmul;
  spec.transposeB = true;
  Kernel kernel(spec);
  const int Bt = 3, M = 9, K = 20, N = 33;
  // a: [Bt, M, K] viewed from storage laid out [M, Bt, K].
  Buffer<float> aStore = uniform({K, Bt, M});
  Buffer<float> a = stridedView(aStore, {K, M, Bt}, {1, K * Bt, K});
  // b: [Bt, N, K] with the batch broadcast (stride 0).
  Buffer<float> bStore = uniform({K, N});
  Buffer<float> b = stridedView(bStore, {K, N, Bt}, {1, K, 0});
  Buffer<float> out(N, M, Bt);
  kernel.run({a, b}, out);
  for (int z = 0; z < Bt; ++z)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double want = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
          want += double(a(k, m, z)) * b(k, n, z);
          mag += std::fabs(double(a(k, m, z)) * b(k, n, z));
        }
        ASSERT_TRUE(closeGemm(out(n, m, z), want, mag));
      }
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

TEST(GemmSoftmaxKernel, MatchesLoopsAndIsStable) {
  KernelSpec spec;
  spec.kind = KernelKind::Softmax;
  Kernel kernel(spec);
  for (int L : {1, 7, 16, 129, 1000}) {
    const int rows = 11;
    // Wide range: exp would overflow without subtracting the row max.
    Buffer<float> x = uniform({L, rows}, -60.f, 100.f);
    if (L > 1)
      x(0, 1) = -std::numeric_limits<float>::infinity(); // a masked entry
    x(0, 2) = -1e9f; // a "masked_fill" value
    Buffer<float> out(L, rows);
    kernel.run({x}, out);
    for (int r = 0; r < rows; ++r) {
      double mx = -kInf;
      for (int l = 0; l < L; ++l)
        mx = std::max(mx, double(x(l, r)));
      double sum = 0;
      for (int l = 0; l < L; ++l)
        sum += std::exp(double(x(l, r)) - mx);
      for (int l = 0; l < L; ++l)
        ASSERT_TRUE(closeSoft(out(l, r), std::exp(double(x(l, r)) - mx) / sum))
            << "L=" << L << " row " << r << " l=" << l;
    }
  }
}

/// A row that is entirely -inf (every key masked) has no softmax; the kernel
/// outputs zeros, as fused attention does, instead of NaN.
TEST(GemmSoftmaxKernel, FullyMaskedRowIsZero) {
  KernelSpec spec;
  spec.kind = KernelKind::Softmax;
  Kernel kernel(spec);
  Buffer<float> x = uniform({37, 2});
  for (int l = 0; l < 37; ++l)
    x(l, 1) = -std::numeric_limits<float>::infinity();
  Buffer<float> out(37, 2);
  kernel.run({x}, out);
  double sum = 0;
  for (int l = 0; l < 37; ++l) {
    EXPECT_EQ(out(l, 1), 0.0f);
    sum += out(l, 0);
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

//===----------------------------------------------------------------------===//
// Fused attention
//===----------------------------------------------------------------------===//

struct AttentionCase {
  int B = 1, H = 2, Hkv = 2, Sq = 7, Sk = 7, D = 64;
  bool causal = false, mask = false, keyPadding = false;
  float scoreScale = 1.0f;     // multiplies q, to make scores large
  bool maskPerKeyOnly = false; // mask [B, 1, 1, Sk]: stride 0 over rows too
};

std::string describe(const AttentionCase &c) {
  return "B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
         " Hkv=" + std::to_string(c.Hkv) + " Sq=" + std::to_string(c.Sq) +
         " Sk=" + std::to_string(c.Sk) + " D=" + std::to_string(c.D) +
         " causal=" + std::to_string(c.causal) +
         " mask=" + std::to_string(c.mask) +
         " keyPadding=" + std::to_string(c.keyPadding);
}

/// softmax(scale * q k^T + mask, masked keys -> -inf) v by the definition,
/// in double; a row with no key left is 0.
double referenceAttention(const AttentionCase &c, const Buffer<float> &q,
                          const Buffer<float> &k, const Buffer<float> &v,
                          const Buffer<float> &mask,
                          const Buffer<bool> &keyPadding, double scale,
                          Buffer<double> &out) {
  const int group = c.H / c.Hkv;
  std::vector<double> s(c.Sk);
  double maxAbs = 0;
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.H; ++h)
      for (int i = 0; i < c.Sq; ++i) {
        double mx = -kInf;
        for (int j = 0; j < c.Sk; ++j) {
          bool allowed = !(c.causal && j > i + (c.Sk - c.Sq)) &&
                         !(c.keyPadding && !keyPadding(j, b));
          double dot = 0;
          for (int d = 0; d < c.D; ++d)
            dot += double(q(d, i, h, b)) * k(d, j, h / group, b);
          s[j] =
              allowed ? dot * scale + (c.mask ? mask(j, i, h, b) : 0.0) : -kInf;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < c.Sk; ++j) {
          s[j] = s[j] == -kInf ? 0.0 : std::exp(s[j] - mx);
          sum += s[j];
        }
        for (int d = 0; d < c.D; ++d) {
          double acc = 0;
          for (int j = 0; j < c.Sk; ++j)
            acc += s[j] * v(d, j, h / group, b);
          out(d, i, h, b) = sum > 0 ? acc / sum : 0.0;
          maxAbs = std::max(maxAbs, std::fabs(out(d, i, h, b)));
        }
      }
  return maxAbs;
}

/// JIT compilation takes seconds; each spec is compiled once per process.
Kernel &cachedKernel(const KernelSpec &spec) {
  static std::map<std::string, std::unique_ptr<Kernel>> cache;
  std::unique_ptr<Kernel> &slot =
      cache[spec.symbolName() + spec.scheduleKey()];
  if (!slot)
    slot = std::make_unique<Kernel>(spec);
  return *slot;
}

void checkAttention(const AttentionCase &c) {
  SCOPED_TRACE(describe(c));
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = c.D;
  spec.scale = 1.0 / std::sqrt(double(c.D));
  spec.causal = c.causal;
  spec.hasMask = c.mask;
  spec.hasKeyPadding = c.keyPadding;
  Kernel &kernel = cachedKernel(spec);

  Buffer<float> q = uniform({c.D, c.Sq, c.H, c.B}, -c.scoreScale, c.scoreScale);
  Buffer<float> k = uniform({c.D, c.Sk, c.Hkv, c.B});
  Buffer<float> v = uniform({c.D, c.Sk, c.Hkv, c.B});
  // The mask is [B, 1, Sq, Sk] broadcast over heads (stride 0), with some
  // -inf entries and, for query row 1, every entry -inf.
  Buffer<float> maskStore = uniform({c.Sk, c.Sq, c.B}, -3.f, 3.f);
  std::bernoulli_distribution drop(0.2);
  maskStore.for_each_value([&](float &m) {
    if (drop(gemmRng()))
      m = -std::numeric_limits<float>::infinity();
  });
  if (c.Sq > 1)
    for (int b = 0; b < c.B; ++b)
      for (int j = 0; j < c.Sk; ++j)
        maskStore(j, 1, b) = -std::numeric_limits<float>::infinity();
  Buffer<float> mask = c.maskPerKeyOnly
                           ? stridedView(maskStore, {c.Sk, c.Sq, c.H, c.B},
                                         {1, 0, 0, c.Sk * c.Sq})
                           : stridedView(maskStore, {c.Sk, c.Sq, c.H, c.B},
                                         {1, c.Sk, 0, c.Sk * c.Sq});
  // Key padding: batch 0 keeps its first keys; the last batch (when B > 1)
  // masks every key.
  Buffer<bool> keyPadding(c.Sk, c.B);
  for (int b = 0; b < c.B; ++b)
    for (int j = 0; j < c.Sk; ++j)
      keyPadding(j, b) = (b + 1 < c.B || c.B == 1) && j < c.Sk - c.Sk / 3;

  std::vector<Halide::Buffer<>> inputs = {q, k, v};
  if (c.mask)
    inputs.push_back(mask);
  if (c.keyPadding)
    inputs.push_back(keyPadding);
  Buffer<float> out(c.D, c.Sq, c.H, c.B);
  kernel.run(inputs, out);

  Buffer<double> want(c.D, c.Sq, c.H, c.B);
  referenceAttention(c, q, k, v, mask, keyPadding, spec.scale, want);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.H; ++h)
      for (int i = 0; i < c.Sq; ++i)
        for (int d = 0; d < c.D; ++d)
          ASSERT_TRUE(closeSoft(out(d, i, h, b), want(d, i, h, b)))
              << "at b=" << b << " h=" << h << " i=" << i << " d=" << d;
}

TEST(FusedAttentionKernel, MatchesLoopsOnOddShapes) {
  for (bool causal : {false, true})
    for (int S : {1, 7, 129})
      for (int D : {64, 80, 128}) {
        AttentionCase c;
        c.Sq = c.Sk = S;
        c.D = D;
        c.causal = causal;
        checkAttention(c);
      }
}

/// Several key blocks and query tiles, with partial last ones.
TEST(FusedAttentionKernel, MatchesLoopsAcrossBlocks) {
  for (bool causal : {false, true}) {
    AttentionCase c;
    c.H = c.Hkv = 1;
    c.Sq = c.Sk = 600;
    c.causal = causal;
    checkAttention(c);
  }
}

TEST(FusedAttentionKernel, GroupedQueryHeads) {
  AttentionCase c;
  c.B = 2;
  c.H = 6;
  c.Hkv = 2;
  c.Sq = c.Sk = 70;
  checkAttention(c);
  c.Hkv = 1; // multi-query
  c.causal = true;
  checkAttention(c);
}

/// Causal with Sq != Sk aligns the diagonal to the end: query i sees keys
/// j <= i + (Sk - Sq). With Sq > Sk the first rows see no key and output 0.
TEST(FusedAttentionKernel, CausalWithDifferentLengths) {
  for (auto [sq, sk] :
       {std::pair{1, 300}, {7, 129}, {129, 300}, {300, 129}, {129, 7}}) {
    AttentionCase c;
    c.Sq = sq;
    c.Sk = sk;
    c.causal = true;
    checkAttention(c);
  }
}

TEST(FusedAttentionKernel, AdditiveMaskAndKeyPadding) {
  for (bool causal : {false, true}) {
    AttentionCase c;
    c.B = 2;
    c.Sq = 129;
    c.Sk = 200;
    c.causal = causal;
    c.mask = true;
    checkAttention(c);
    c.mask = false;
    c.keyPadding = true; // batch 1 has every key padded: rows of 0
    checkAttention(c);
    c.mask = true;
    checkAttention(c);
    c.keyPadding = false;
    c.maskPerKeyOnly = true; // the Hugging Face padding mask layout
    checkAttention(c);
  }
}

/// Scores of magnitude ~100: exp overflows unless every block is shifted by
/// its maximum.
TEST(FusedAttentionKernel, LargeScoresStayFinite) {
  AttentionCase c;
  c.Sq = c.Sk = 300;
  c.scoreScale = 12.0f;
  checkAttention(c);
}

TEST(FusedAttentionKernel, FullyMaskedRowsAreZero) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 64;
  spec.hasKeyPadding = true;
  Kernel kernel(spec);
  Buffer<float> q = uniform({64, 9, 2, 1}), k = uniform({64, 5, 2, 1}),
                v = uniform({64, 5, 2, 1});
  Buffer<bool> keyPadding(5, 1);
  keyPadding.fill(false);
  Buffer<float> out(64, 9, 2, 1);
  kernel.run({q, k, v, keyPadding}, out);
  out.for_each_value([](float value) { ASSERT_EQ(value, 0.0f); });
}

/// A row masked by an additive finite fill (-1e9, as `(1 - mask) * -1e9`
/// writes it) is the softmax of the f32 sums q.k + m, which round to a grid
/// of 64: with scores of magnitude ~100 some keys land on other grid points
/// than their neighbours, and the row is not uniform. The fused kernel must
/// round as the graph does (it once added m to base-2 scores, a grid of 128,
/// and gave another row: attune-fuzz-graphs seed 100, graph 1345).
TEST(FusedAttentionKernel, FiniteFillRowRoundsAsTheGraph) {
  const int D = 16, S = 12;
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = D;
  spec.scale = 1.0;
  spec.hasMask = true;
  Kernel &kernel = cachedKernel(spec);
  Buffer<float> q = uniform({D, S, 1, 1}, -5.f, 5.f), k = uniform({D, S, 1, 1}, -5.f, 5.f),
                v = uniform({D, S, 1, 1});
  Buffer<float> maskStore(S);
  maskStore.fill(-1e9f);
  Buffer<float> mask = stridedView(maskStore, {S, S, 1, 1}, {1, 0, 0, 0});
  Buffer<float> out(D, S, 1, 1);
  kernel.run({q, k, v, mask}, out);
  int distinctRows = 0;
  for (int i = 0; i < S; ++i) {
    std::vector<double> s(S);
    double mx = -kInf;
    std::set<float> grid;
    for (int j = 0; j < S; ++j) {
      float dot = 0;
      for (int d = 0; d < D; ++d)
        dot += q(d, i, 0, 0) * k(d, j, 0, 0);
      float sum = dot + -1e9f; // the graph's add, in f32
      grid.insert(sum);
      s[j] = sum;
      mx = std::max(mx, s[j]);
    }
    distinctRows += grid.size() > 1;
    double total = 0;
    for (double &x : s)
      total += (x = std::exp(x - mx));
    for (int d = 0; d < D; ++d) {
      double want = 0;
      for (int j = 0; j < S; ++j)
        want += s[j] / total * v(d, j, 0, 0);
      ASSERT_TRUE(closeSoft(out(d, i, 0, 0), want)) << "at i=" << i << " d=" << d;
    }
  }
  // The case is only a test if rounding separates some keys.
  EXPECT_GT(distinctRows, S / 2);
}

/// Key padding given as integers (an exported attention_mask of i64), not
/// bool: nonzero attends.
TEST(FusedAttentionKernel, IntegerKeyPadding) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 64;
  spec.scale = 0.125;
  spec.hasKeyPadding = true;
  spec.keyPaddingType = ScalarType::I64;
  Kernel kernel(spec);
  const int Sq = 5, Sk = 9;
  Buffer<float> q = uniform({64, Sq, 1, 1}), k = uniform({64, Sk, 1, 1}),
                v = uniform({64, Sk, 1, 1});
  Buffer<int64_t> keyPadding(Sk, 1);
  for (int j = 0; j < Sk; ++j)
    keyPadding(j, 0) = j % 2 ? 0 : 7; // odd keys padded
  Buffer<float> out(64, Sq, 1, 1);
  kernel.run({q, k, v, keyPadding}, out);
  for (int i = 0; i < Sq; ++i) {
    std::vector<double> p(Sk, 0.0);
    double mx = -kInf, sum = 0;
    for (int j = 0; j < Sk; j += 2) {
      for (int d = 0; d < 64; ++d)
        p[j] += double(q(d, i, 0, 0)) * k(d, j, 0, 0) * 0.125;
      mx = std::max(mx, p[j]);
    }
    for (int j = 0; j < Sk; j += 2)
      sum += (p[j] = std::exp(p[j] - mx));
    for (int d = 0; d < 64; ++d) {
      double want = 0;
      for (int j = 0; j < Sk; j += 2)
        want += p[j] / sum * v(d, j, 0, 0);
      ASSERT_TRUE(closeSoft(out(d, i, 0, 0), want)) << "i=" << i << " d=" << d;
    }
  }
}

TEST(FusedAttentionKernel, RejectsBadSpecsAndShapes) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 0;
  EXPECT_THROW(detail::buildKernel(spec, attune::targets::cpu::jitTarget()),
               Halide::CompileError);
  spec.headDim = 64;
  spec.elementType = ScalarType::I32;
  EXPECT_THROW(detail::buildKernel(spec, attune::targets::cpu::jitTarget()),
               Halide::CompileError);

  spec.elementType = ScalarType::F32;
  Kernel kernel(spec);
  Buffer<float> out(64, 4, 3, 1);
  // 3 query heads cannot share 2 key/value heads.
  EXPECT_THROW(kernel.run({uniform({64, 4, 3, 1}), uniform({64, 4, 2, 1}),
                           uniform({64, 4, 2, 1})},
                          out),
               Halide::RuntimeError);
  // A head dim other than the spec's.
  EXPECT_THROW(kernel.run({uniform({32, 4, 3, 1}), uniform({32, 4, 3, 1}),
                           uniform({32, 4, 3, 1})},
                          out),
               Halide::RuntimeError);
  // v with fewer keys than k.
  EXPECT_THROW(kernel.run({uniform({64, 4, 3, 1}), uniform({64, 4, 3, 1}),
                           uniform({64, 3, 3, 1})},
                          out),
               Halide::RuntimeError);
}

//===----------------------------------------------------------------------===//
// Against the reference evaluator
//===----------------------------------------------------------------------===//

using attune::reference::Tensor;
using attune::testing::oracle;
using attune::testing::shapeOf;
using attune::testing::toTensor;

/// Evaluates one op (see Oracle::eval) with a float result shaped like `out`.
Tensor evaluateOneOp(const std::string &op, const std::vector<Tensor> &inputs,
                     const Buffer<float> &out) {
  return oracle().eval(op, inputs, shapeOf(out), ScalarType::F32);
}

void expectMatchesEvaluator(const Buffer<float> &out, const Tensor &want) {
  Tensor got = toTensor(out);
  ASSERT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < want.data.size(); ++i)
    ASSERT_TRUE(closeSoft(got.data[i], want.data[i])) << "at flat index " << i;
}

TEST(GemmKernelsVsEvaluator, LinearMatmulSoftmax) {
  {
    KernelSpec spec;
    spec.kind = KernelKind::Linear;
    spec.hasBias = true;
    Buffer<float> x = uniform({37, 9}), w = uniform({70, 37}),
                  bias = uniform({70}), out(70, 9);
    Kernel(spec).run({x, w, bias}, out);
    Tensor want =
        evaluateOneOp("tfm.linear %a0, %a1, %a2 : {T0}, {T1}, {T2} -> {R}",
                      {toTensor(x), toTensor(w), toTensor(bias)}, out);
    expectMatchesEvaluator(out, want);
  }
  {
    KernelSpec spec;
    spec.kind = KernelKind::Matmul;
    spec.transposeB = true;
    Buffer<float> a = uniform({64, 33, 3}), b = uniform({64, 70, 3}),
                  out(70, 33, 3);
    Kernel(spec).run({a, b}, out);
    Tensor want = evaluateOneOp(
        "tfm.matmul %a0, %a1 {transpose_b = true} : {T0}, {T1} -> {R}",
        {toTensor(a), toTensor(b)}, out);
    expectMatchesEvaluator(out, want);
  }
  {
    KernelSpec spec;
    spec.kind = KernelKind::Softmax;
    Buffer<float> x = uniform({129, 5}, -20.f, 20.f), out(129, 5);
    Kernel(spec).run({x}, out);
    Tensor want =
        evaluateOneOp("tfm.softmax %a0 : {T0} -> {R}", {toTensor(x)}, out);
    expectMatchesEvaluator(out, want);
  }
}

/// tfm.linear's activation applied in the kernel's epilogue, against the
/// evaluator's linear with the same attribute, on rows and columns that
/// leave partial register tiles; inputs in [-4, 4] reach GELU's and SiLU's
/// tails.
TEST(GemmKernelsVsEvaluator, LinearActivationEpilogue) {
  const std::pair<UnaryKind, const char *> activations[] = {
      {UnaryKind::Relu, "relu"},
      {UnaryKind::GeluErf, "gelu"},
      {UnaryKind::GeluTanh, "gelu_tanh"},
      {UnaryKind::Silu, "silu"}};
  for (auto [kind, name] : activations)
    for (bool bias : {false, true}) {
      SCOPED_TRACE(std::string(name) + (bias ? " with bias" : ""));
      KernelSpec spec;
      spec.kind = KernelKind::Linear;
      spec.hasBias = bias;
      spec.activation = kind;
      Buffer<float> x = uniform({37, 9}, -2.f, 2.f), w = uniform({70, 37}),
                    b = uniform({70}), out(70, 9);
      std::vector<Halide::Buffer<>> inputs = {x, w};
      std::vector<Tensor> tensors = {toTensor(x), toTensor(w)};
      if (bias) {
        inputs.push_back(b);
        tensors.push_back(toTensor(b));
      }
      Kernel(spec).run(inputs, out);
      std::string op = std::string("tfm.linear %a0, %a1") +
                       (bias ? ", %a2" : "") + " {activation = #tfm.activation<" +
                       name + ">} : {T0}, {T1}" + (bias ? ", {T2}" : "") +
                       " -> {R}";
      expectMatchesEvaluator(out, evaluateOneOp(op, tensors, out));
    }
  // An activation on any kernel but Linear is refused.
  KernelSpec matmul;
  matmul.kind = KernelKind::Matmul;
  matmul.activation = UnaryKind::Relu;
  EXPECT_NE(validateKernelSpec(matmul).find("only applied by linear"),
            std::string::npos);
}

/// GQA, causal with Sq != Sk, an additive mask broadcast over heads and key
/// padding, all at once.
TEST(FusedAttentionKernel, MatchesReferenceEvaluator) {
  const int B = 2, H = 4, Hkv = 2, Sq = 33, Sk = 70, D = 80;
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "non-causal");
    KernelSpec spec;
    spec.kind = KernelKind::Attention;
    spec.headDim = D;
    spec.scale = 0.125;
    spec.causal = causal;
    spec.hasMask = true;
    spec.hasKeyPadding = true;
    Buffer<float> q = uniform({D, Sq, H, B}), k = uniform({D, Sk, Hkv, B}),
                  v = uniform({D, Sk, Hkv, B});
    Buffer<float> maskStore = uniform({Sk, Sq, 1, B}, -2.f, 2.f);
    Buffer<float> mask =
        stridedView(maskStore, {Sk, Sq, H, B}, {1, Sk, 0, Sk * Sq});
    Buffer<bool> keyPadding(Sk, B);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < Sk; ++j)
        keyPadding(j, b) = b == 0 || j % 3 != 0;
    Buffer<float> out(D, Sq, H, B);
    cachedKernel(spec).run({q, k, v, mask, keyPadding}, out);
    std::string attrs = causal ? "{scale = 0.125 : f64, causal = true}"
                               : "{scale = 0.125 : f64}";
    Tensor want = evaluateOneOp(
        "tfm.attention %a0, %a1, %a2 mask(%a3 : {T3}) key_padding_mask(%a4 : "
        "{T4}) " +
            attrs + " : {T0}, {T1}, {T2} -> {R}",
        {toTensor(q), toTensor(k), toTensor(v), toTensor(maskStore),
         toTensor(keyPadding, ScalarType::Bool)},
        out);
    expectMatchesEvaluator(out, want);
  }
}

/// Softcapping (c * tanh(s / c) on the scaled scores, before the mask), on
/// the blocked path and on the decode path (a few query rows), with scores
/// well past the cap (scale 1, D = 64: |s| up to about 20 against c = 5),
/// an additive mask and causal masking after it.
TEST(FusedAttentionKernel, SoftcapMatchesReferenceEvaluator) {
  const int B = 1, H = 2, Sk = 150, D = 64;
  for (int Sq : {3, 70}) {
    SCOPED_TRACE("Sq " + std::to_string(Sq));
    KernelSpec spec;
    spec.kind = KernelKind::Attention;
    spec.headDim = D;
    spec.scale = 1.0;
    spec.softcap = 5.0;
    spec.causal = true;
    spec.hasMask = true;
    Buffer<float> q = uniform({D, Sq, H, B}), k = uniform({D, Sk, H, B}),
                  v = uniform({D, Sk, H, B});
    Buffer<float> maskStore = uniform({Sk, Sq, 1, 1}, -2.f, 2.f);
    Buffer<float> mask = stridedView(maskStore, {Sk, Sq, H, B}, {1, Sk, 0, 0});
    Buffer<float> out(D, Sq, H, B);
    cachedKernel(spec).run({q, k, v, mask}, out);
    Tensor want = evaluateOneOp(
        "tfm.attention %a0, %a1, %a2 mask(%a3 : {T3}) {scale = 1.0 : f64, causal = true, "
        "softcap = 5.0 : f64} : {T0}, {T1}, {T2} -> {R}",
        {toTensor(q), toTensor(k), toTensor(v), toTensor(maskStore)}, out);
    expectMatchesEvaluator(out, want);
    // Without the cap the result is another one: the test sees the cap.
    spec.softcap = 0;
    Buffer<float> uncapped(D, Sq, H, B);
    cachedKernel(spec).run({q, k, v, mask}, uncapped);
    double largest = 0;
    uncapped.for_each_element([&](int d, int i, int h, int b) {
      largest = std::max(largest, double(std::fabs(uncapped(d, i, h, b) - out(d, i, h, b))));
    });
    EXPECT_GT(largest, 0.05);
  }
}

/// Half-precision elements are widened on load, computed in f32 and rounded
/// on the store. Compared with the evaluator's f64 attention on the same
/// (already rounded) inputs, not with the f32 kernel, which would share any
/// error of the algorithm: within half an ulp of the type (2^-11 relative for
/// f16, 2^-8 for bf16) plus the f32 tolerance, 1e-4 * (|want| + 1).
template <typename Half>
void checkHalfAttention(ScalarType type, double halfUlp) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 64;
  spec.scale = 0.125;
  spec.causal = true;
  spec.elementType = type;
  const int Sq = 37, Sk = 53, H = 2;
  std::vector<Buffer<Half>> in;
  for (int S : {Sq, Sk, Sk}) {
    Buffer<float> x = uniform({64, S, H, 1});
    Buffer<Half> y(64, S, H, 1);
    y.for_each_element([&](int d, int i, int h, int b) {
      y(d, i, h, b) = Half(x(d, i, h, b));
    });
    in.push_back(y);
  }
  Buffer<Half> got(64, Sq, H, 1);
  Kernel(spec).run({in[0], in[1], in[2]}, got);
  Tensor want = oracle().eval(
      "tfm.attention %a0, %a1, %a2 {scale = 0.125 : f64, causal = true} : "
      "{T0}, {T1}, {T2} -> {R}",
      {toTensor(in[0], type), toTensor(in[1], type), toTensor(in[2], type)},
      shapeOf(got), type);
  Tensor have = toTensor(got, type);
  ASSERT_EQ(have.shape, want.shape);
  // On AMX (bf16 on Sapphire Rapids) the probabilities are rounded to bf16
  // for the second product: up to half an ulp of each, 2^-9 max|v| (v is
  // in [-1, 1]) beside the output's own rounding.
  const double probabilityRounding =
      type == ScalarType::BF16 &&
              attune::targets::cpu::jitTarget(spec).has_feature(Halide::Target::AVX512_SapphireRapids)
          ? 0x1p-9
          : 0.0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double w = want.data[i];
    ASSERT_LE(std::fabs(have.data[i] - w),
              halfUlp * std::fabs(w) + probabilityRounding + 1e-4 * (std::fabs(w) + 1))
        << "at flat index " << i << ": got " << have.data[i] << ", want " << w;
  }
}

/// Attention on AMX tiles (runtime/model/amx_kernels.c), the avx512_spr
/// variant of a plain or causal attention on bf16 tensors or with bf16
/// products on f32 ones (--precision=bf16): against the definition in
/// double on the same bf16 values, across the shapes its blocking has edges
/// at (32-row tasks, 32-key pieces, 256-key blocks), GQA and MQA, Dv != D,
/// key padding (the last batch padded entirely), rows that see no key (0),
/// decoding (up to 16 query rows per kv head, which take the kernel's
/// streaming path without tiles), scores that grow along the keys (past
/// the softmax's lazily kept max) and RoPE (both layouts, partial rotary
/// dims, a position offset, queries before the first key's position), which
/// the kernel applies in f32 to q and k and then rounds to bf16: the
/// reference does the same.
/// RoPE over the first `dims` dims (none when 0), base 10000.
RopeSpec ropeOver(int dims, bool interleaved, int offset) {
  RopeSpec rope;
  rope.enabled = dims > 0;
  rope.rotaryDims = dims;
  rope.interleaved = interleaved;
  rope.positionOffset = offset;
  return rope;
}

/// An f32 attention with head dims D and Dv, scale 1/sqrt(D).
KernelSpec attentionSpec(int D, int Dv, bool causal, bool keyPadding, const RopeSpec &rope) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = D;
  spec.valueDim = Dv == D ? 0 : Dv;
  spec.scale = 1.0 / std::sqrt(double(D));
  spec.causal = causal;
  spec.hasKeyPadding = keyPadding;
  spec.rope = rope;
  return spec;
}

/// Attention by its definition, in double, for `spec`'s causal flag,
/// scale and modifiers (their referenceBias, given `operands`):
/// softmax(scale q.k + bias) v over the keys a row sees (key padding:
/// `attends(j, b)` when given); a row that sees none is 0. q [D, Sq, H,
/// B], k [D, Sk, Hkv, B], v [Dv, Sk, Hkv, B]; returns [Dv, Sq, H, B].
template <typename T>
Buffer<double> attentionByDefinition(const KernelSpec &spec, const Buffer<T> &q,
                                     const Buffer<T> &k, const Buffer<T> &v,
                                     const Buffer<bool> *attends,
                                     const std::vector<attune::modifiers::ReferenceOperand> &operands) {
  const int D = q.dim(0).extent(), Sq = q.dim(1).extent(), H = q.dim(2).extent(),
            B = q.dim(3).extent(), Sk = k.dim(1).extent(), Dv = v.dim(0).extent();
  const int group = H / k.dim(2).extent(), diag = Sk - Sq;
  Buffer<double> out(Dv, Sq, H, B);
  std::vector<double> s(Sk);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Sq; ++i) {
        const int visible = spec.causal ? std::clamp(i + diag + 1, 0, Sk) : Sk;
        double mx = -kInf, sum = 0;
        for (int j = 0; j < visible; ++j) {
          s[j] = -kInf;
          if (attends && !(*attends)(j, b))
            continue;
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(q(d, i, h, b)) * double(k(d, j, h / group, b));
          double bias = 0;
          for (const ModifierSpec &m : spec.modifiers)
            bias += attune::modifiers::lookupModifier(m.name)->referenceBias(
                m.params, operands, H, h, j - (i + diag));
          if (bias == -kInf)
            continue;
          mx = std::max(mx, s[j] = dot * spec.scale + bias);
        }
        for (int j = 0; j < visible; ++j)
          sum += (s[j] = s[j] == -kInf ? 0.0 : std::exp(s[j] - mx));
        for (int cv = 0; cv < Dv; ++cv) {
          double acc = 0;
          for (int j = 0; j < visible; ++j)
            acc += s[j] * double(v(cv, j, h / group, b));
          out(cv, i, h, b) = sum > 0 ? acc / sum : 0.0;
        }
      }
  return out;
}

TEST(FusedAttentionKernel, Bf16OnAmxMatchesLoops) {
  KernelSpec probe;
  probe.kind = KernelKind::Attention;
  probe.elementType = ScalarType::BF16;
  if (!attune::targets::cpu::jitTarget(probe).has_feature(Halide::Target::AVX512_SapphireRapids))
    GTEST_SKIP() << "this CPU has no AMX (or ATTUNE_CPU caps it below avx512_spr): the "
                    "AMX attention cannot run here";
  struct Case {
    int B, H, Hkv, Sq, Sk, D, Dv;
    bool causal;
    bool f32; // f32 tensors with bf16 products, else bf16 tensors
    bool keyPadding = false;
    int ropeDims = 0; // RoPE over these dims (0: none)
    bool interleaved = false;
    int ropeOffset = 0;
    // Key j scaled by 1 + keyGrowth * j: scores that grow block after
    // block, past the softmax's lazily kept max.
    float keyGrowth = 0;
    // Score modifiers: "alibi", "t5" (bidirectional buckets, a table),
    // "window" (a causal sliding window of `window` keys), "window+alibi".
    std::string modifier = "";
    int window = 0;
  };
  for (Case c :
       {Case{1, 2, 2, 7, 7, 64, 64, false, false}, Case{2, 4, 2, 70, 129, 64, 32, false, false},
        Case{1, 2, 1, 129, 300, 128, 128, true, false},
        Case{1, 2, 2, 300, 129, 64, 64, true, false}, Case{1, 1, 1, 1, 600, 128, 128, false, false},
        Case{1, 3, 3, 33, 257, 96, 64, false, false}, Case{2, 4, 2, 70, 129, 64, 32, true, true},
        Case{1, 2, 2, 300, 600, 128, 128, false, true},
        Case{3, 2, 1, 70, 300, 64, 64, false, false, true},
        Case{2, 2, 2, 129, 129, 128, 64, true, true, true},
        Case{1, 2, 1, 70, 300, 128, 128, true, false, false, 128},
        Case{2, 4, 2, 33, 129, 64, 64, false, false, false, 32, true, 5},
        Case{1, 2, 2, 1, 600, 128, 128, true, true, false, 64, false, 3},
        Case{2, 2, 2, 129, 129, 64, 64, true, false, true, 64, true},
        Case{1, 2, 2, 40, 20, 64, 64, false, false, false, 64},
        // The decode path (at most 16 query rows per kv head):
        // GQA rows of 4 heads, keys split into slices and combined
        // (few kv heads), queries before the first key, RoPE.
        Case{1, 8, 2, 1, 1500, 128, 128, true, true},
        Case{2, 8, 2, 4, 1100, 64, 64, true, false, true, 64, true, 2},
        Case{1, 2, 2, 4, 3, 64, 32, true, false},
        Case{1, 4, 4, 3, 700, 96, 96, false, true, false, 96, false, 7},
        Case{1, 2, 2, 64, 900, 64, 64, false, false, false, 0, false, 0, 0.02f},
        Case{1, 1, 1, 40, 700, 128, 128, true, true, false, 0, false, 0, 0.05f},
        // Modifiers (a bias of head and distance read from a
        // table): tiled and decode paths; a sliding window whose
        // rows skip the key blocks before it (and decode slices
        // wholly before it), with key padding and GQA.
        Case{1, 3, 3, 300, 300, 64, 64, true, false, false, 0, false, 0, 0, "alibi"},
        Case{2, 2, 2, 70, 129, 64, 64, false, true, false, 0, false, 0, 0, "t5"},
        Case{1, 4, 2, 700, 700, 64, 64, true, false, true, 0, false, 0, 0, "window", 300},
        Case{1, 2, 2, 40, 900, 128, 128, true, false, false, 64, false, 0, 0, "window+alibi", 500},
        Case{1, 8, 2, 1, 1500, 128, 128, true, false, false, 0, false, 0, 0, "window+alibi", 700},
        Case{2, 4, 4, 3, 600, 64, 64, true, true, true, 0, false, 0, 0, "t5"}}) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) + "/" +
                 std::to_string(c.Hkv) + " Sq=" + std::to_string(c.Sq) +
                 " Sk=" + std::to_string(c.Sk) + " D=" + std::to_string(c.D) +
                 " Dv=" + std::to_string(c.Dv) + " causal=" + std::to_string(c.causal) +
                 (c.f32 ? " f32 tensors, bf16 products" : " bf16 tensors") +
                 (c.keyPadding ? ", key padding" : "") +
                 (c.ropeDims ? ", RoPE " + std::to_string(c.ropeDims) +
                                   (c.interleaved ? " interleaved" : " halves") + " offset " +
                                   std::to_string(c.ropeOffset)
                             : "") +
                 (c.modifier.empty() ? "" : ", " + c.modifier));
    KernelSpec spec = attentionSpec(c.D, c.Dv, c.causal, c.keyPadding,
                                    ropeOver(c.ropeDims, c.interleaved, c.ropeOffset));
    spec.elementType = c.f32 ? ScalarType::F32 : ScalarType::BF16;
    spec.bf16Products = c.f32;
    const int buckets = 32;
    if (c.modifier == "alibi" || c.modifier == "window+alibi")
      spec.modifiers.push_back({"alibi", {{"max_bias", 8.0}, {"symmetric", 0.0}}, {}});
    if (c.modifier == "window" || c.modifier == "window+alibi")
      spec.modifiers.insert(
          spec.modifiers.begin(),
          {"sliding_window", {{"window", double(c.window)}, {"symmetric", 0.0}}, {}});
    if (c.modifier == "t5")
      spec.modifiers.push_back(
          {"t5", {{"num_buckets", buckets}, {"max_distance", 128.0}, {"bidirectional", 1.0}}, {2}});
    // T5's table [num_buckets, H] (Halide order: h innermost), bf16-exact.
    Buffer<float> t5Table(c.H, buckets);
    t5Table.for_each_element([&](int h, int bucket) {
      t5Table(h, bucket) =
          float(Halide::bfloat16_t(0.25f * float((h * 7 + bucket * 5) % 17) - 2.f));
    });
    std::vector<double> t5Rows(t5Table.begin(), t5Table.end());
    // Values a bf16 holds exactly, so that the f32 case's rounding in the
    // kernel changes nothing and one reference serves both.
    auto bf16Of = [](const Buffer<float> &x) {
      Buffer<Halide::bfloat16_t> y(x.width(), x.height(), x.channels(), x.dim(3).extent());
      y.for_each_element([&](int a, int i, int h, int b) {
        y(a, i, h, b) = Halide::bfloat16_t(x(a, i, h, b));
      });
      return y;
    };
    auto growKeys = [](Buffer<float> x, float growth) {
      for (int b = 0; b < x.dim(3).extent(); ++b)
        for (int h = 0; h < x.channels(); ++h)
          for (int j = 0; j < x.height(); ++j)
            for (int d = 0; d < x.width(); ++d)
              x(d, j, h, b) *= 1.0f + growth * float(j);
      return x;
    };
    auto f32Of = [](const Buffer<Halide::bfloat16_t> &x) {
      Buffer<float> y(x.width(), x.height(), x.channels(), x.dim(3).extent());
      y.for_each_element([&](int a, int i, int h, int b) { y(a, i, h, b) = float(x(a, i, h, b)); });
      return y;
    };
    Buffer<Halide::bfloat16_t> q = bf16Of(uniform({c.D, c.Sq, c.H, c.B}, -2.f, 2.f)),
                               k = bf16Of(growKeys(uniform({c.D, c.Sk, c.Hkv, c.B}, -2.f, 2.f),
                                                   c.keyGrowth)),
                               v = bf16Of(uniform({c.Dv, c.Sk, c.Hkv, c.B}));
    // Batch b attends to keys j with (j + b) % 3 != 0; the last batch to
    // none (its rows are 0).
    Buffer<bool> attends(c.Sk, c.B);
    attends.for_each_element(
        [&](int j, int b) { attends(j, b) = b + 1 < c.B && (j + b) % 3 != 0; });
    Buffer<float> got(c.Dv, c.Sq, c.H, c.B);
    std::vector<Halide::Buffer<>> inputs;
    if (c.f32)
      inputs = {f32Of(q), f32Of(k), f32Of(v)};
    else
      inputs = {q, k, v};
    if (c.keyPadding)
      inputs.push_back(attends);
    if (c.modifier == "t5") {
      Buffer<Halide::bfloat16_t> t5Bf16(c.H, buckets);
      t5Bf16.for_each_element(
          [&](int h, int bucket) { t5Bf16(h, bucket) = Halide::bfloat16_t(t5Table(h, bucket)); });
      if (c.f32)
        inputs.push_back(t5Table);
      else
        inputs.push_back(t5Bf16);
    }
    if (c.f32) {
      Kernel(spec).run(inputs, got);
    } else {
      Buffer<Halide::bfloat16_t> out(c.Dv, c.Sq, c.H, c.B);
      Kernel(spec).run(inputs, out);
      got = f32Of(out);
    }
    const int diag = c.Sk - c.Sq;
    if (c.ropeDims) {
      // Row `row` of x rotated at position `pos` in f32, then rounded to
      // bf16, as the kernel does.
      auto rotate = [&](Buffer<Halide::bfloat16_t> &x, int row, int head, int batch, int pos) {
        std::vector<float> in(c.D);
        for (int d = 0; d < c.D; ++d)
          in[d] = float(x(d, row, head, batch));
        for (int pair = 0; pair < c.ropeDims / 2; ++pair) {
          const double angle = double(pos) * ropeInverseFrequency(spec.rope, pair);
          const float cs = float(std::cos(angle)), sn = float(std::sin(angle));
          const int a = c.interleaved ? 2 * pair : pair;
          const int b2 = c.interleaved ? 2 * pair + 1 : pair + c.ropeDims / 2;
          x(a, row, head, batch) = Halide::bfloat16_t(in[a] * cs - in[b2] * sn);
          x(b2, row, head, batch) = Halide::bfloat16_t(in[b2] * cs + in[a] * sn);
        }
      };
      for (int b = 0; b < c.B; ++b) {
        for (int h = 0; h < c.H; ++h)
          for (int i = 0; i < c.Sq; ++i)
            rotate(q, i, h, b, i + diag + c.ropeOffset);
        for (int h = 0; h < c.Hkv; ++h)
          for (int j = 0; j < c.Sk; ++j)
            rotate(k, j, h, b, j + c.ropeOffset);
      }
    }
    Buffer<double> want = attentionByDefinition(spec, q, k, v, c.keyPadding ? &attends : nullptr,
                                                {{t5Rows.data(), {buckets, c.H}}});
    // The output's rounding (half an ulp, 2^-8 relative; none for f32), and
    // the probabilities' (2^-9 max|v|, |v| <= 1).
    want.for_each_element([&](int cv, int i, int h, int b) {
      ASSERT_LE(std::fabs(double(got(cv, i, h, b)) - want(cv, i, h, b)),
                (c.f32 ? 0.0 : 0x1p-8) * std::fabs(want(cv, i, h, b)) + 0x1p-9 + 1e-5)
          << "at b=" << b << " h=" << h << " i=" << i << " c=" << cv;
    });
  }
}

/// Where the f32 extern stage (runtime/model/attention_f32.c) replaces the
/// Halide pipeline: f32 attentions on the AVX-512 and AVX2 levels, with
/// causal masking, key padding, RoPE, modifiers that add a bias of (head,
/// distance), the content terms of Transformer-XL, DeBERTa and Shaw and
/// Shaw's value term; additive masks, softcapping, content terms with RoPE,
/// other element types and value head dims under 8 keep the pipeline, as
/// does the baseline level.
TEST(FusedAttentionKernel, F32ExternStageWhereItApplies) {
  const attune_isa_t isa = attune::targets::cpu::isaOf(attune::targets::cpu::jitTarget());
  const std::string expected = isa >= ATTUNE_ISA_AVX512 ? kFlashAttentionAvx512Symbol
                               : isa == ATTUNE_ISA_AVX2 ? kFlashAttentionAvx2Symbol
                                                        : "";
  auto runsOn = [](const KernelSpec &spec) {
    detail::BuiltKernel built = detail::buildKernel(spec, attune::targets::cpu::jitTarget(spec));
    return built.output.is_extern() ? built.output.extern_function_name() : std::string();
  };
  KernelSpec plain;
  plain.kind = KernelKind::Attention;
  plain.headDim = 64;
  EXPECT_EQ(runsOn(plain), expected);
  KernelSpec padded = plain;
  padded.causal = true;
  padded.hasKeyPadding = true;
  padded.modifiers.push_back({"alibi", {{"max_bias", 8.0}, {"symmetric", 0.0}}, {}});
  padded.rope.enabled = true;
  padded.rope.rotaryDims = 32;
  EXPECT_EQ(runsOn(padded), expected);
  KernelSpec xl = plain, deberta = plain;
  xl.causal = true;
  xl.modifiers.push_back({"xl", {{"max_distance", 511.0}}, {2, 2, 3}});
  deberta.modifiers.push_back({"deberta", {{"span", 256.0}, {"max_position", 512.0}}, {3, 3}});
  KernelSpec shaw = plain;
  shaw.modifiers.push_back({"shaw", {{"max_distance", 4.0}}, {2, 2}});
  EXPECT_EQ(runsOn(xl), expected);
  EXPECT_EQ(runsOn(deberta), expected);
  EXPECT_EQ(runsOn(shaw), expected);
  KernelSpec masked = plain, softcap = plain, narrow = plain, half = plain, rotatedXl = xl;
  rotatedXl.rope.enabled = true;
  rotatedXl.rope.rotaryDims = 32;
  masked.hasMask = true;
  softcap.softcap = 30.0;
  narrow.valueDim = 4;
  half.elementType = ScalarType::F16;
  for (const KernelSpec *spec : {&masked, &softcap, &narrow, &half, &rotatedXl})
    EXPECT_EQ(runsOn(*spec), "") << spec->symbolName();
}

/// The f32 extern stage flushes denormals while its tiles run (ALiBi's
/// rescales made them, and each cost a microcode assist), and gives the
/// caller's thread its floating-point flags back: in this process (no
/// library thread pool) the tiles run on the calling thread.
TEST(FusedAttentionKernel, F32ExternStageRestoresTheCallersFloatFlags) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 64;
  spec.causal = true;
  spec.modifiers.push_back({"alibi", {{"max_bias", 8.0}, {"symmetric", 0.0}}, {}});
  Kernel kernel(spec);
  if (!kernel.built.output.is_extern())
    GTEST_SKIP() << "this level runs the Halide pipeline";
  Buffer<float> q = uniform({64, 300, 2, 1}), k = uniform({64, 300, 2, 1}),
                v = uniform({64, 300, 2, 1}), out(64, 300, 2, 1);
  const unsigned before = _mm_getcsr();
  kernel.run({q, k, v}, out);
  EXPECT_EQ(_mm_getcsr(), before);
  EXPECT_EQ(before & 0x8040u, 0u) << "the test process itself flushes denormals";
}

/// In a process that JIT-compiles kernels the extern stage's tasks run on
/// the threads JitKernel::run is given (attune_jit_par_for), and give the
/// same output as on one: each task writes its own rows.
TEST(FusedAttentionKernel, F32ExternStageTasksOnJitThreads) {
  KernelSpec spec = attentionSpec(64, 64, /*causal=*/true, /*keyPadding=*/false, {});
  JitKernel kernel(spec, attune::targets::cpu::jitTarget(spec));
  Buffer<float> q = uniform({64, 300, 4, 1}), k = uniform({64, 300, 4, 1}),
                v = uniform({64, 300, 4, 1}), one(64, 300, 4, 1), two(64, 300, 4, 1);
  kernel.run({q, k, v}, one, /*singleThread=*/true);
  const int before = Halide::Internal::JITSharedRuntime::set_num_threads(2);
  kernel.run({q, k, v}, two, /*singleThread=*/false);
  Halide::Internal::JITSharedRuntime::set_num_threads(before);
  one.for_each_element([&](int c, int i, int h, int b) {
    ASSERT_EQ(one(c, i, h, b), two(c, i, h, b)) << "at h=" << h << " i=" << i << " c=" << c;
  });
}

/// The f32 extern stage against attention by its definition: odd head
/// dims, Dv != D (a last group of value columns that overlaps the one
/// before: Dv = 20 and 42 with AVX-512's 8 columns a group, 42 with AVX2's
/// 4, also over packed values), GQA and MQA, causal with Sq < Sk and Sq > Sk (rows that see no
/// key), key padding with a batch padded entirely, heads of a few tiles
/// (one task walking the keys for all of them) and one head of a few
/// (a task each), ALiBi, T5 buckets and
/// sliding windows narrower than a key block (blocks skipped), RoPE (both
/// layouts, partial rotary dims that are no multiple of the vector, an
/// offset) and tiles straddling the decode threshold (16 query rows: more
/// take the tiles, fewer the Halide decode path, whose output the stage
/// copies).
TEST(FusedAttentionKernel, F32ExternStageMatchesLoops) {
  struct Case {
    int B, H, Hkv, Sq, Sk, D, Dv;
    bool causal, keyPadding;
    std::string modifier; // "", "alibi", "t5", "window", "window+alibi"
    int window = 0;
    float scoreScale = 1.0f; // multiplies q: large scores
    int ropeDims = 0;        // RoPE over these dims (0: none)
    bool interleaved = false;
    int ropeOffset = 0;
  };
  const int buckets = 32;
  for (const Case &c :
       {Case{1, 2, 2, 17, 17, 64, 64, false, false, ""}, Case{1, 2, 2, 16, 40, 64, 64, true, false, ""},
        Case{2, 6, 2, 260, 300, 33, 40, true, true, ""},
        Case{1, 2, 1, 270, 301, 36, 42, false, true, ""},
        Case{1, 4, 1, 300, 129, 80, 80, true, false, ""},
        Case{1, 1, 1, 100, 300, 64, 64, true, false, ""},
        Case{2, 3, 3, 70, 300, 64, 20, false, true, "alibi"},
        Case{1, 4, 2, 200, 333, 64, 64, false, false, "t5"},
        Case{1, 4, 2, 700, 700, 64, 64, true, true, "window", 50},
        Case{1, 2, 2, 150, 500, 128, 128, false, false, "window+alibi", 40},
        Case{1, 2, 2, 100, 100, 16, 16, false, false, "", 0, 12.0f},
        Case{1, 4, 2, 130, 200, 64, 64, true, false, "", 0, 1.0f, 64},
        Case{2, 2, 1, 70, 90, 80, 64, false, true, "alibi", 0, 1.0f, 44, true, 3},
        Case{1, 2, 2, 9, 300, 128, 128, true, false, "", 0, 1.0f, 128, false, 11},
        Case{1, 2, 2, 40, 40, 72, 72, false, false, "", 0, 1.0f, 50, false, 0}}) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) + "/" +
                 std::to_string(c.Hkv) + " Sq=" + std::to_string(c.Sq) +
                 " Sk=" + std::to_string(c.Sk) + " D=" + std::to_string(c.D) +
                 " Dv=" + std::to_string(c.Dv) + " causal=" + std::to_string(c.causal) +
                 (c.keyPadding ? ", key padding" : "") +
                 (c.modifier.empty() ? "" : ", " + c.modifier) +
                 (c.ropeDims ? ", RoPE " + std::to_string(c.ropeDims) +
                                   (c.interleaved ? " interleaved" : " halves") + " offset " +
                                   std::to_string(c.ropeOffset)
                             : ""));
    KernelSpec spec = attentionSpec(c.D, c.Dv, c.causal, c.keyPadding,
                                    ropeOver(c.ropeDims, c.interleaved, c.ropeOffset));
    if (c.modifier == "alibi" || c.modifier == "window+alibi")
      spec.modifiers.push_back({"alibi", {{"max_bias", 8.0}, {"symmetric", 1.0}}, {}});
    if (c.modifier == "window" || c.modifier == "window+alibi")
      spec.modifiers.push_back({"sliding_window",
                                {{"window", double(c.window)},
                                 {"symmetric", c.modifier == "window" ? 0.0 : 1.0}},
                                {}});
    if (c.modifier == "t5")
      spec.modifiers.push_back(
          {"t5", {{"num_buckets", buckets}, {"max_distance", 128.0}, {"bidirectional", 1.0}}, {2}});
    Buffer<float> q = uniform({c.D, c.Sq, c.H, c.B}, -c.scoreScale, c.scoreScale),
                  k = uniform({c.D, c.Sk, c.Hkv, c.B}), v = uniform({c.Dv, c.Sk, c.Hkv, c.B});
    // Batch b attends to keys j with (j + b) % 3 != 0; the last batch of
    // several to none (its rows are 0).
    Buffer<bool> attends(c.Sk, c.B);
    attends.for_each_element(
        [&](int j, int b) { attends(j, b) = (c.B == 1 || b + 1 < c.B) && (j + b) % 3 != 0; });
    Buffer<float> t5Table = uniform({c.H, buckets}, -2.f, 2.f);
    std::vector<double> t5Rows(t5Table.begin(), t5Table.end());
    std::vector<Halide::Buffer<>> inputs = {q, k, v};
    if (c.keyPadding)
      inputs.push_back(attends);
    if (c.modifier == "t5")
      inputs.push_back(t5Table);
    Buffer<float> got(c.Dv, c.Sq, c.H, c.B);
    Kernel kernel(spec);
    ASSERT_TRUE(kernel.built.output.is_extern() || attune::targets::cpu::isaOf(kernel.target) <
                                                      ATTUNE_ISA_AVX2);
    kernel.run(inputs, got);
    // RoPE by its definition, in double: q row i at position i + Sk - Sq +
    // offset, k row j at j + offset.
    auto widened = [](const Buffer<float> &x) {
      Buffer<double> y(x.width(), x.height(), x.channels(), x.dim(3).extent());
      y.for_each_element([&](int d, int row, int head, int b) { y(d, row, head, b) = x(d, row, head, b); });
      return y;
    };
    auto rotated = [&](const Buffer<float> &x, int diag) {
      Buffer<double> y = widened(x);
      for (int b = 0; b < y.dim(3).extent(); ++b)
        for (int head = 0; head < y.channels(); ++head)
          for (int row = 0; row < y.height(); ++row)
            for (int pair = 0; pair < c.ropeDims / 2; ++pair) {
              const double angle =
                  double(row + diag + c.ropeOffset) * ropeInverseFrequency(spec.rope, pair);
              const int first = c.interleaved ? 2 * pair : pair;
              const int second = c.interleaved ? 2 * pair + 1 : pair + c.ropeDims / 2;
              const double a = x(first, row, head, b), s2 = x(second, row, head, b);
              y(first, row, head, b) = a * std::cos(angle) - s2 * std::sin(angle);
              y(second, row, head, b) = s2 * std::cos(angle) + a * std::sin(angle);
            }
      return y;
    };
    Buffer<double> want =
        attentionByDefinition(spec, rotated(q, c.Sk - c.Sq), rotated(k, 0), widened(v),
                              c.keyPadding ? &attends : nullptr, {{t5Rows.data(), {buckets, c.H}}});
    want.for_each_element([&](int cv, int i, int h, int b) {
      ASSERT_TRUE(closeSoft(got(cv, i, h, b), want(cv, i, h, b)))
          << "at b=" << b << " h=" << h << " i=" << i << " c=" << cv;
    });
  }
}

TEST(FusedAttentionKernel, HalfPrecisionMatchesReferenceEvaluator) {
  checkHalfAttention<Halide::float16_t>(ScalarType::F16, 0x1p-11);
  checkHalfAttention<Halide::bfloat16_t>(ScalarType::BF16, 0x1p-8);
}

//===----------------------------------------------------------------------===//
// Schedule parameters
//===----------------------------------------------------------------------===//

/// The ISA name schedules are keyed by for the JIT target ("avx2", ...).
std::string jitIsaName() {
  return attune_isa_name(
      attune::targets::cpu::isaOf(attune::targets::cpu::jitTarget()));
}

/// A tuner's candidate other than the default must compute the same thing.
TEST(GemmScheduleParams, NonDefaultCandidateMatchesEvaluator) {
  std::vector<ScheduleParams> candidates =
      detail::gemmScheduleCandidates(attune::targets::cpu::jitTarget());
  ASSERT_GE(candidates.size(), 2u);
  const ScheduleParams &params = candidates[candidates.size() / 2];
  ASSERT_NE(params, candidates.front());
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = true;
  spec.schedules[jitIsaName()] = params;
  Buffer<float> x = uniform({37, 29}), w = uniform({70, 37}),
                bias = uniform({70}), out(70, 29);
  Kernel(spec).run({x, w, bias}, out);
  expectMatchesEvaluator(
      out, evaluateOneOp("tfm.linear %a0, %a1, %a2 : {T0}, {T1}, {T2} -> {R}",
                         {toTensor(x), toTensor(w), toTensor(bias)}, out));
}

/// keyBound (a static key length, or a bounded symbol) shortens the key
/// block: with 20 keys at most, a 256-key block would compute 236 masked
/// keys; queryBound picks one query tile that covers the queries. Both are
/// schedule choices: the kernel stays correct for any length, within the
/// bounds and past them (several blocks and tiles).
TEST(FusedAttentionScheduleParams, BoundsShortenTheTilesAndStayCorrect) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = 16;
  spec.scale = 0.25;
  spec.causal = true;
  spec.keyBound = 20;
  spec.queryBound = 50; // one 64-row tile, not two of 48
  EXPECT_EQ(spec.scheduleKey(), "key_bound=20;query_bound=50;");
  for (auto [Sq, Sk] : {std::pair{50, 20}, {9, 7}, {70, 45}}) {
    SCOPED_TRACE("Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk));
    Buffer<float> q = uniform({16, Sq, 2, 1}), k = uniform({16, Sk, 2, 1}),
                  v = uniform({16, Sk, 2, 1}), out(16, Sq, 2, 1);
    Kernel(spec).run({q, k, v}, out);
    expectMatchesEvaluator(
        out, evaluateOneOp("tfm.attention %a0, %a1, %a2 {causal = true, scale = 0.25 : f64} "
                           ": {T0}, {T1}, {T2} -> {R}",
                           {toTensor(q), toTensor(k), toTensor(v)}, out));
  }
}

TEST(FusedAttentionScheduleParams, NonDefaultCandidateMatchesEvaluator) {
  const int B = 1, H = 2, Sq = 45, Sk = 300, D = 64;
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = D;
  spec.scale = 0.125;
  std::vector<ScheduleParams> candidates = detail::attentionScheduleCandidates(
      spec, attune::targets::cpu::jitTarget());
  ASSERT_GE(candidates.size(), 2u);
  const ScheduleParams &params = candidates[candidates.size() / 2];
  ASSERT_NE(params, candidates.front());
  spec.schedules[jitIsaName()] = params;
  Buffer<float> q = uniform({D, Sq, H, B}), k = uniform({D, Sk, H, B}),
                v = uniform({D, Sk, H, B}), out(D, Sq, H, B);
  Kernel(spec).run({q, k, v}, out);
  expectMatchesEvaluator(
      out, evaluateOneOp("tfm.attention %a0, %a1, %a2 {scale = 0.125 : f64} "
                         ": {T0}, {T1}, {T2} -> {R}",
                         {toTensor(q), toTensor(k), toTensor(v)}, out));
}

/// A tuner times every candidate: none may be refused by its builder, at any
/// level this machine runs (building defines and schedules the pipeline;
/// nothing is compiled here).
TEST(ScheduleParams, EveryCandidateIsAccepted) {
  for (attune_isa_t isa : attune::targets::cpu::testedIsas()) {
    Halide::Target target = attune::targets::cpu::halideTarget(isa);
    SCOPED_TRACE(attune_isa_name(isa));
    KernelSpec linear;
    linear.kind = KernelKind::Linear;
    for (const ScheduleParams &params : detail::gemmScheduleCandidates(target)) {
      linear.schedules[attune_isa_name(isa)] = params;
      EXPECT_NO_THROW(detail::buildKernel(linear, target))
          << linear.scheduleKey();
    }
    for (int D : {64, 80, 128}) {
      for (bool causal : {false, true}) {
        KernelSpec attention;
        attention.kind = KernelKind::Attention;
        attention.headDim = D;
        attention.causal = causal;
        std::vector<ScheduleParams> candidates =
            detail::attentionScheduleCandidates(attention, target);
        EXPECT_GE(candidates.size(), 2u);
        for (const ScheduleParams &params : candidates) {
          attention.schedules[attune_isa_name(isa)] = params;
          EXPECT_NO_THROW(detail::buildKernel(attention, target))
              << "D=" << D << " " << attention.scheduleKey();
        }
      }
    }
  }
}

/// `params` on `kind` must be refused with a message naming `name`.
/// `params` must be refused, naming `name`. Attentions get an additive mask
/// (`masked`), which keeps the Halide kernel on every level, unless they
/// test the f32 extern stage's own parameter.
void expectRejected(KernelKind kind, const ScheduleParams &params,
                    const std::string &name, bool masked = true) {
  KernelSpec spec;
  spec.kind = kind;
  spec.headDim = 64;
  spec.hasMask = kind == KernelKind::Attention && masked;
  spec.schedules[jitIsaName()] = params;
  try {
    detail::buildKernel(spec, attune::targets::cpu::jitTarget());
    ADD_FAILURE() << "accepted an invalid " << name;
  } catch (const Halide::CompileError &e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos)
        << e.what();
  }
}

TEST(ScheduleParams, NegativeInvalidValuesAreRejected) {
  expectRejected(KernelKind::Linear, {{"rows", 0}}, "rows");
  expectRejected(KernelKind::Matmul, {{"panel_vectors", -1}}, "panel_vectors");
  expectRejected(KernelKind::Linear, {{"rows", 8}, {"panel_vectors", 4}},
                 "accumulators");
  expectRejected(KernelKind::Attention, {{"query_tile", 13}}, "query_tile");
  expectRejected(KernelKind::Attention, {{"key_block", 100}, {"key_unroll", 8}},
                 "key_block");
  expectRejected(KernelKind::Attention, {{"key_unroll", 0}}, "key_unroll");
  expectRejected(KernelKind::Attention, {{"value_cols", 24}}, "value_cols");
  expectRejected(KernelKind::Attention, {{"value_rows", 7}}, "value_rows");
  expectRejected(KernelKind::Attention, {{"key_unroll", 16}, {"key_block", 128}},
                 "accumulators");
  expectRejected(KernelKind::Attention, {{"score_vectors", 5}},
                 "score_vectors");
  expectRejected(KernelKind::Attention, {{"flash_key_block", 0}}, "flash_key_block",
                 /*masked=*/false);
}

} // namespace
