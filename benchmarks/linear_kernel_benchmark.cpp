//===- linear_kernel_benchmark.cpp - the Linear kernel against the peak ---===//
//
// Times the Linear kernel (out[M,N] = x[M,K] · w[K,N], no bias), JIT-compiled
// at startup for jitTarget() (the host's ISA capped by ATTUNE_CPU), at the
// sizes of a GPT-2 block and of all-MiniLM-L6-v2 at 128 tokens:
//
//   BM_Linear/M:<M>/K:<K>/N:<N>/T:<T>
//
// M x K x N = (128·B) x 768 x 768 for B in {1, 4} (the attention
// projections), 512 x 768 x 3072 (the MLP's first layer), and MiniLM's
// 128 x 384 x 384, 128 x 384 x 1536 and 128 x 1536 x 384. Counters:
// GFLOPs (2·M·K·N per run), peak_GFLOPs and peak_fraction against the FMA
// peak measured at start (benchmarks/Peak.h).
//
//   BM_LinearBf16/M:<M>/K:<K>/N:<N>/T:<T>
//
// the same shapes with --precision=bf16's kernel: w in bf16 pair panels of
// 96 columns (PanelLayout.h's kBf16PanelWidth), x rounded to bf16, f32
// accumulation, at
// jitTarget(spec) (avx512_zen4's vdpbf16ps where the CPU has AVX512-BF16).
// Its peak_fraction is still against the f32 FMA peak, so it can pass 1.
//
//   BM_LinearPanels/M:<M>/K:<K>/N:<N>/T:<T>
//
// the f32 kernel over w packed into panels of 16 columns (PanelLayout.h's
// kF32PanelWidth), the layout attune-compile stores constant weights in
// (--no-pack-weights keeps them row-major): what a compiled model's
// linears run (on the AVX-512 levels runtime/model/linear_f32.c). BM_Linear's row-major w
// is copied into panels inside the kernel, from 768 strided rows per panel.
//
// Each shape's output is checked against a double-precision loop on a sample
// of rows before it is timed; a mismatch skips the row with an error and
// makes the binary exit non-zero.
//
//===----------------------------------------------------------------------===//

#include "benchmarks/Peak.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/JitKernel.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/support/PanelLayout.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace attune::codegen;

namespace {

/// Threads for the benchmark being run: T=1 runs parallel loops serially on
/// the calling thread (JitKernel), T>1 uses Halide's pool (the f32 extern
/// stage's tasks: JitKernel's pool of as many threads).
int gThreads = 1;

/// Set when a check fails: main then exits non-zero.
bool gFailed = false;

/// Columns of the weight panels: attune-compile's width.
constexpr int kPanel = static_cast<int>(attune::kF32PanelWidth);
constexpr int kBf16Panel = static_cast<int>(attune::kBf16PanelWidth);

/// How the benchmark stores w[K,N].
enum class Weights { RowMajor, Panels, Bf16Panels };

/// The Linear kernel without bias for one weight form, JIT-compiled once
/// for the process.
struct LinearJit {
  explicit LinearJit(Weights form)
      : kernel(spec(form), attune::targets::cpu::jitTarget(spec(form))) {}
  static KernelSpec spec(Weights form) {
    KernelSpec s;
    s.kind = KernelKind::Linear;
    if (form != Weights::RowMajor)
      s.weightPanel = form == Weights::Bf16Panels ? kBf16Panel : kPanel;
    if (form == Weights::Bf16Panels)
      s.weightType = attune::ScalarType::BF16;
    return s;
  }
  void run(Halide::Buffer<float> &x, Halide::Buffer<> &w, Halide::Buffer<float> &out) {
    kernel.run({x, w}, out, /*singleThread=*/gThreads == 1);
  }
  JitKernel kernel;
};

LinearJit &linear(Weights form) {
  static LinearJit rowMajor(Weights::RowMajor), panels(Weights::Panels),
      bf16(Weights::Bf16Panels);
  return form == Weights::RowMajor ? rowMajor
         : form == Weights::Panels ? panels
                                   : bf16;
}

/// w[K,N] as the kernel reads it: as is, or packed into f32 panels or
/// bf16 pair panels.
Halide::Buffer<> weightsFor(Halide::Buffer<float> &w, Weights form) {
  const int K = w.dim(1).extent(), N = w.dim(0).extent();
  if (form == Weights::RowMajor)
    return w;
  if (form == Weights::Panels) {
    std::vector<int64_t> shape = attune::panelStorageShape(K, N, kPanel);
    Halide::Buffer<float> packed(kPanel, static_cast<int>(shape[1]),
                                 static_cast<int>(shape[0]));
    attune::packPanels(reinterpret_cast<const uint8_t *>(w.data()),
                       reinterpret_cast<uint8_t *>(packed.data()), K, N, kPanel,
                       sizeof(float));
    return packed;
  }
  std::vector<int64_t> shape = attune::pairPanelStorageShape(K, N, kBf16Panel);
  Halide::Buffer<> packed(Halide::BFloat(16),
                          {2, kBf16Panel, static_cast<int>(shape[1]),
                           static_cast<int>(shape[0])});
  attune::packPairPanelsBf16(w.data(), reinterpret_cast<uint16_t *>(packed.data()), K, N,
                             kBf16Panel);
  return packed;
}

const char *benchmarkName(Weights form) {
  return form == Weights::RowMajor ? "BM_Linear"
         : form == Weights::Panels ? "BM_LinearPanels"
                                   : "BM_LinearBf16";
}

Halide::Buffer<float> randomBuffer(int inner, int outer) {
  Halide::Buffer<float> buf(inner, outer);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  buf.for_each_value([&](float &v) { v = dist(gen); });
  return buf;
}

/// x[M,K] · w[K,N] once, compared with a double loop on rows 0, M-1 and a
/// few between, every column: |got - want| <= 1e-5 * sum_k |x_k w_k| + 1e-6
/// (an f32 dot product's error grows with the magnitudes summed, as in
/// tests/unit/kernels/GemmKernelTest.cpp); for bf16, the loop multiplies
/// the bf16-rounded operands. Empty when it matches.
std::string check(int M, int K, int N, Weights form) {
  const bool bf16 = form == Weights::Bf16Panels;
  Halide::Buffer<float> x = randomBuffer(K, M), w = randomBuffer(N, K),
                        out(N, M);
  Halide::Buffer<> weights = weightsFor(w, form);
  gThreads = 1;
  linear(form).run(x, weights, out);
  auto operand = [bf16](float v) {
    return bf16 ? attune::bf16ToFloat(attune::floatToBf16(v)) : v;
  };
  for (int m : {0, 1, M / 3, M / 2, M - 1})
    for (int n = 0; n < N; ++n) {
      double want = 0, magnitude = 0;
      for (int k = 0; k < K; ++k) {
        double term = double(operand(x(k, m))) * operand(w(n, k));
        want += term;
        magnitude += std::fabs(term);
      }
      if (!(std::fabs(out(n, m) - want) <= 1e-5 * magnitude + 1e-6)) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "%s %dx%dx%d wrong at [%d,%d]: %.7g vs %.7g",
                      benchmarkName(form), M, K, N, m, n, double(out(n, m)), want);
        return buf;
      }
    }
  return "";
}

void BM_Linear(benchmark::State &state, int M, int K, int N, int threads, Weights form) {
  static std::vector<std::string> errors; // SkipWithError keeps the pointer
  std::string error = check(M, K, N, form);
  if (!error.empty()) {
    std::fprintf(stderr, "linear_kernel_benchmark: %s\n", error.c_str());
    errors.push_back(error);
    gFailed = true;
    state.SkipWithError(errors.back().c_str());
    return;
  }
  Halide::Buffer<float> x = randomBuffer(K, M), w = randomBuffer(N, K),
                        out(N, M);
  Halide::Buffer<> weights = weightsFor(w, form);
  gThreads = threads;
  if (threads > 1)
    Halide::Internal::JITSharedRuntime::set_num_threads(threads);
  linear(form).run(x, weights, out); // warm up: page in, start the pool
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    linear(form).run(x, weights, out);
    benchmark::DoNotOptimize(out.data());
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  attune::bench::setFlopCounters(state, 2.0 * M * K * N, threads, seconds.count());
}

} // namespace

int main(int argc, char **argv) {
  struct Shape {
    int M, K, N;
  };
  for (Weights form : {Weights::RowMajor, Weights::Panels, Weights::Bf16Panels})
    for (int threads : {1, 2})
      for (Shape s :
           {Shape{128, 768, 768}, Shape{512, 768, 768}, Shape{512, 768, 3072},
            // all-MiniLM-L6-v2 at 128 tokens: projections, MLP in and out.
            Shape{128, 384, 384}, Shape{128, 384, 1536}, Shape{128, 1536, 384}}) {
        std::string name = std::string(benchmarkName(form)) +
                           "/M:" + std::to_string(s.M) + "/K:" + std::to_string(s.K) +
                           "/N:" + std::to_string(s.N) + "/T:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Linear, s.M, s.K, s.N, threads,
                                     form)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  attune::bench::peak();
  for (Weights form : {Weights::RowMajor, Weights::Panels, Weights::Bf16Panels})
    linear(form); // compile before any timing
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (gFailed) {
    std::fprintf(
        stderr,
        "linear_kernel_benchmark: FAILED: a result was wrong (see above)\n");
    return 1;
  }
  return 0;
}
