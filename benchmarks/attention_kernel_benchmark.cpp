//===- attention_kernel_benchmark.cpp - fused vs unfused attention kernels ===//
//
// Times the Halide kernels themselves, JIT-compiled for the host at startup:
//
//   fused    one Attention kernel (never stores the S x S scores)
//   unfused  Matmul(Q, K, transposeB) -> Binary mul (scale) -> [CausalMask]
//            -> Softmax -> Matmul(P, V), through S x S buffers allocated once
//
// B = 1, H = 12, fp32, over S, D, causal and the Halide thread count T.
// Names: BM_AttentionKernel/<fused|unfused>/S:<S>/D:<D>/causal:<0|1>/T:<T>.
// The "GFLOPs" counter is GFLOP/s of attention's useful work,
// 4 * B * H * S^2 * D flops (half of that when causal), over wall time.
//
//   attention_kernel_benchmark --benchmark_filter='S:2048' \
//       --benchmark_out=attn.json --benchmark_out_format=json
//
// The library-level benchmark (compiled model libraries) is
// attention_benchmark.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace attune::codegen;

namespace {

constexpr int kBatch = 1;
constexpr int kHeads = 12;

/// Threads for the benchmark being run. Halide's JIT thread pool is sized once
/// per process and lowering its count later has no effect, so T=1 replaces the
/// parallel-for launcher with a serial loop on the calling thread; T>1 uses the
/// pool (sized by HL_NUM_THREADS, else the core count).
int gThreads = 1;

int serialParFor(Halide::JITUserContext *context,
                 int (*task)(Halide::JITUserContext *, int, uint8_t *), int min,
                 int extent, uint8_t *closure) {
  for (int idx = min; idx < min + extent; ++idx)
    if (int status = task(context, idx, closure))
      return status;
  return 0;
}

/// A kernel JIT-compiled once per process and rebound on every call.
struct Jit {
  explicit Jit(const KernelSpec &spec)
      : built(detail::buildKernel(spec, attune::targets::cpu::jitTarget())) {
    built.output.compile_jit(attune::targets::cpu::jitTarget());
  }
  void run(const std::vector<Halide::Buffer<>> &inputs, Halide::Buffer<> out) {
    for (size_t i = 0; i < inputs.size(); ++i)
      built.inputs[i].set(inputs[i]);
    built.output.jit_handlers().custom_do_par_for =
        gThreads == 1 ? serialParFor : nullptr;
    built.output.realize(out, attune::targets::cpu::jitTarget());
  }
  detail::BuiltKernel built;
};

Jit &kernelFor(const KernelSpec &spec) {
  static std::map<std::string, std::unique_ptr<Jit>> cache;
  std::unique_ptr<Jit> &slot = cache[spec.symbolName() + spec.scheduleKey()];
  if (!slot)
    slot = std::make_unique<Jit>(spec);
  return *slot;
}

KernelSpec attentionSpec(int D, bool causal) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = D;
  spec.scale = 1.0 / std::sqrt(double(D));
  spec.causal = causal;
  return spec;
}

KernelSpec matmulSpec(bool transposeB) {
  KernelSpec spec;
  spec.kind = KernelKind::Matmul;
  spec.transposeB = transposeB;
  return spec;
}

KernelSpec scaleSpec() {
  KernelSpec spec;
  spec.kind = KernelKind::Binary;
  spec.binary = BinaryKind::Mul;
  spec.rank = 3;
  return spec;
}

KernelSpec causalMaskSpec() {
  KernelSpec spec;
  spec.kind = KernelKind::CausalMask;
  spec.value = -std::numeric_limits<double>::infinity();
  return spec;
}

KernelSpec softmaxSpec() {
  KernelSpec spec;
  spec.kind = KernelKind::Softmax;
  return spec;
}

Halide::Buffer<float> randomBuffer(const std::vector<int> &shape) {
  Halide::Buffer<float> buf(shape);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  buf.for_each_value([&](float &v) { v = dist(gen); });
  return buf;
}

/// `storage` seen with another shape and strides (innermost first).
Halide::Buffer<float> view(Halide::Buffer<float> &storage,
                           const std::vector<int> &shape,
                           const std::vector<int> &strides) {
  std::vector<halide_dimension_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims.push_back(halide_dimension_t(0, shape[i], strides[i]));
  return Halide::Buffer<float>(storage.data(), static_cast<int>(dims.size()),
                               dims.data());
}

double attentionFlops(int S, int D, bool causal) {
  double flops = 4.0 * kBatch * kHeads * double(S) * S * D;
  return causal ? flops / 2 : flops;
}

void setThreads(benchmark::State &state, int threads) {
  gThreads = threads;
  if (threads > 1)
    Halide::Internal::JITSharedRuntime::set_num_threads(threads);
  state.counters["threads"] = threads;
}

void BM_Fused(benchmark::State &state, int S, int D, bool causal, int threads) {
  Jit &attention = kernelFor(attentionSpec(D, causal));
  Halide::Buffer<float> q = randomBuffer({D, S, kHeads, kBatch}),
                        k = randomBuffer({D, S, kHeads, kBatch}),
                        v = randomBuffer({D, S, kHeads, kBatch}),
                        out(D, S, kHeads, kBatch);
  setThreads(state, threads);
  attention.run({q, k, v}, out); // warm up: page in, start the pool
  for (auto _ : state) {
    attention.run({q, k, v}, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(attentionFlops(S, D, causal) / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

/// The decomposed chain on [B*H, S, D] tensors, with the S x S buffers
/// allocated once.
struct Unfused {
  Unfused(int S, int D, bool causal)
      : S(S), qk(kernelFor(matmulSpec(/*transposeB=*/true))),
        scale(kernelFor(scaleSpec())), softmax(kernelFor(softmaxSpec())),
        pv(kernelFor(matmulSpec(/*transposeB=*/false))),
        mask(causal ? &kernelFor(causalMaskSpec()) : nullptr),
        scores(S, S, kBatch * kHeads), probs(S, S, kBatch * kHeads), factor(1) {
    factor(0) = static_cast<float>(1.0 / std::sqrt(double(D)));
    factorB = view(factor, {S, S, kBatch * kHeads}, {0, 0, 0});
  }
  /// q, k, v and out are [B*H, S, D] (innermost first: D, S, B*H).
  void run(Halide::Buffer<float> &q, Halide::Buffer<float> &k,
           Halide::Buffer<float> &v, Halide::Buffer<float> &out) {
    const int Bt = kBatch * kHeads;
    qk.run({q, k}, scores);              // Q K^T
    scale.run({scores, factorB}, probs); // * scale
    Halide::Buffer<float> *softIn = &probs, *softOut = &scores;
    if (mask) {
      mask->run({probs}, scores); // j > i + (Sk - Sq) -> -inf
      softIn = &scores;
      softOut = &probs;
    }
    // Softmax reads the scores as [Bt * S, S] rows.
    softmax.run({view(*softIn, {S, S * Bt}, {1, S})},
                view(*softOut, {S, S * Bt}, {1, S}));
    pv.run({*softOut, v}, out); // P V
  }
  int S;
  Jit &qk, &scale, &softmax, &pv;
  Jit *mask;
  Halide::Buffer<float> scores, probs, factor, factorB;
};

void BM_Unfused(benchmark::State &state, int S, int D, bool causal,
                int threads) {
  const int Bt = kBatch * kHeads;
  Halide::Buffer<float> q = randomBuffer({D, S, Bt}),
                        k = randomBuffer({D, S, Bt}),
                        v = randomBuffer({D, S, Bt}), out(D, S, Bt);
  Unfused unfused(S, D, causal);
  setThreads(state, threads);
  unfused.run(q, k, v, out); // warm up
  for (auto _ : state) {
    unfused.run(q, k, v, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(attentionFlops(S, D, causal) / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

/// Both paths must compute the same thing, or the comparison means nothing.
bool pathsAgree(int S, int D, bool causal) {
  Halide::Buffer<float> q = randomBuffer({D, S, kHeads, kBatch}),
                        k = randomBuffer({D, S, kHeads, kBatch}),
                        v = randomBuffer({D, S, kHeads, kBatch}),
                        fused(D, S, kHeads, kBatch);
  kernelFor(attentionSpec(D, causal)).run({q, k, v}, fused);
  // The same storage as [B*H, S, D].
  auto flat = [&](Halide::Buffer<float> &x) {
    return view(x, {D, S, kBatch * kHeads}, {1, D, D * S});
  };
  Halide::Buffer<float> qf = flat(q), kf = flat(k), vf = flat(v);
  Halide::Buffer<float> unfused(D, S, kBatch * kHeads);
  Unfused(S, D, causal).run(qf, kf, vf, unfused);
  Halide::Buffer<float> fusedFlat = flat(fused);
  double worst = 0;
  unfused.for_each_element([&](int d, int i, int bh) {
    worst = std::max(
        worst, double(std::fabs(unfused(d, i, bh) - fusedFlat(d, i, bh))));
  });
  if (worst > 1e-4) {
    std::fprintf(stderr,
                 "fused and unfused attention differ by %g (S=%d D=%d "
                 "causal=%d)\n",
                 worst, S, D, int(causal));
    return false;
  }
  return true;
}

void registerAll() {
  for (int threads : {1, 2})
    for (int causal : {0, 1})
      for (int S : {128, 256, 512, 1024, 2048, 4096})
        for (int D : {64}) {
          const std::string suffix = "/S:" + std::to_string(S) +
                                     "/D:" + std::to_string(D) +
                                     "/causal:" + std::to_string(causal) +
                                     "/T:" + std::to_string(threads);
          benchmark::RegisterBenchmark(
              ("BM_AttentionKernel/fused" + suffix).c_str(), BM_Fused, S, D,
              causal != 0, threads)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
          benchmark::RegisterBenchmark(
              ("BM_AttentionKernel/unfused" + suffix).c_str(), BM_Unfused, S, D,
              causal != 0, threads)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
}

} // namespace

int main(int argc, char **argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  // Compile every kernel before any timing starts.
  for (int causal : {0, 1})
    kernelFor(attentionSpec(64, causal != 0));
  kernelFor(matmulSpec(true));
  kernelFor(matmulSpec(false));
  kernelFor(scaleSpec());
  kernelFor(causalMaskSpec());
  kernelFor(softmaxSpec());
  if (!pathsAgree(200, 64, false) || !pathsAgree(200, 64, true))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
