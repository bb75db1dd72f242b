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
// 4 * B * H * S^2 * D flops (half of that when causal), over wall time;
// peak_GFLOPs and peak_fraction compare it with the FMA peak of the ISA the
// JIT code runs at (benchmarks/Peak.h).
//
//   attention_kernel_benchmark --benchmark_filter='S:2048' \
//       --benchmark_out=attn.json --benchmark_out_format=json
//
// Schedule candidates side by side: ATTUNE_BENCH_SCHEDULES="a:rows=4,
// panel_vectors=3;b:query_tile=32" adds, per label, fused rows named
// ".../fused@a/..." (S = 128, 512 and 2048, D = 32 and 64, causal and not,
// one thread) whose kernels carry those parameters for the JIT target's ISA
// (a parameter a kernel kind does not know is ignored by it). Add
// --benchmark_enable_random_interleaving=true and --benchmark_repetitions
// to interleave them on a noisy machine.
//
// ATTUNE_BENCH_DUMP=DIR writes each kernel's assembly and
// lowered statement there (<symbol>.s, <symbol>.stmt; a schedule variant
// overwrites its default's files).
//
// The library-level benchmark (compiled model libraries) is
// attention_benchmark.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/JitKernel.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "benchmarks/Peak.h"

#include "Halide.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace attune::codegen;

namespace {

constexpr int kBatch = 1;
constexpr int kHeads = 12;

/// Threads for the benchmark being run: T=1 runs parallel loops serially on
/// the calling thread (JitKernel), T>1 uses Halide's pool (sized by
/// HL_NUM_THREADS, else the core count).
int gThreads = 1;

/// A kernel JIT-compiled once per process for the JIT target, run at the
/// benchmark's thread count.
struct Jit {
  explicit Jit(const KernelSpec &spec)
      : kernel(spec, attune::targets::cpu::jitTarget()) {
    // What the timed code is, for reading its inner loops (spills, ...).
    if (const char *dir = std::getenv("ATTUNE_BENCH_DUMP"))
      kernel.dump(std::string(dir) + "/" + spec.symbolName());
  }
  void run(const std::vector<Halide::Buffer<>> &inputs, Halide::Buffer<> out) {
    kernel.run(inputs, out, /*singleThread=*/gThreads == 1);
  }
  JitKernel kernel;
};

Jit &kernelFor(const KernelSpec &spec) {
  static std::map<std::string, std::unique_ptr<Jit>> cache;
  std::unique_ptr<Jit> &slot = cache[spec.symbolName() + spec.scheduleKey()];
  if (!slot)
    slot = std::make_unique<Jit>(spec);
  return *slot;
}

/// A label and the schedule parameters it stands for ("" and none: default).
struct Variant {
  std::string label;
  ScheduleParams params;
};

/// Parses ATTUNE_BENCH_SCHEDULES (see the file comment); a malformed entry
/// is reported and skipped.
std::vector<Variant> variantsFromEnvironment() {
  std::vector<Variant> out;
  const char *text = std::getenv("ATTUNE_BENCH_SCHEDULES");
  if (!text)
    return out;
  std::string all(text);
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find(';', start);
    if (end == std::string::npos)
      end = all.size();
    std::string entry = all.substr(start, end - start);
    start = end + 1;
    size_t colon = entry.find(':');
    if (colon == std::string::npos || colon == 0) {
      std::fprintf(stderr, "ATTUNE_BENCH_SCHEDULES: skipping '%s'\n",
                   entry.c_str());
      continue;
    }
    Variant v{entry.substr(0, colon), {}};
    std::string list = entry.substr(colon + 1);
    size_t pos = 0;
    while (pos < list.size()) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos)
        comma = list.size();
      std::string item = list.substr(pos, comma - pos);
      pos = comma + 1;
      size_t eq = item.find('=');
      if (eq != std::string::npos)
        v.params[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
    }
    out.push_back(v);
  }
  return out;
}

/// `spec` with `params` for the JIT target's ISA.
KernelSpec withSchedule(KernelSpec spec, const ScheduleParams &params) {
  if (!params.empty())
    spec.schedules[attune_isa_name(attune::targets::cpu::isaOf(
        attune::targets::cpu::jitTarget()))] = params;
  return spec;
}

/// Attention's parameters among `params`, so that a variant naming other
/// kinds' parameters still builds.
ScheduleParams only(const ScheduleParams &params,
                    std::initializer_list<const char *> names) {
  ScheduleParams out;
  for (const char *name : names)
    if (params.count(name))
      out[name] = params.at(name);
  return out;
}

const std::initializer_list<const char *> kAttentionParams = {
    "query_tile", "key_block", "key_unroll", "score_vectors", "value_cols",
    "value_rows"};

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

void BM_Fused(benchmark::State &state, int S, int D, bool causal, int threads,
              const ScheduleParams &params = {}) {
  Jit *built = nullptr;
  try {
    built = &kernelFor(withSchedule(attentionSpec(D, causal),
                                    only(params, kAttentionParams)));
  } catch (const Halide::CompileError &e) {
    state.SkipWithError(e.what()); // an invalid candidate
    return;
  }
  Jit &attention = *built;
  Halide::Buffer<float> q = randomBuffer({D, S, kHeads, kBatch}),
                        k = randomBuffer({D, S, kHeads, kBatch}),
                        v = randomBuffer({D, S, kHeads, kBatch}),
                        out(D, S, kHeads, kBatch);
  setThreads(state, threads);
  attention.run({q, k, v}, out); // warm up: page in, start the pool
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    attention.run({q, k, v}, out);
    benchmark::DoNotOptimize(out.data());
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  attune::bench::setFlopCounters(state, attentionFlops(S, D, causal), threads,
                                 seconds.count());
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
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    unfused.run(q, k, v, out);
    benchmark::DoNotOptimize(out.data());
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  attune::bench::setFlopCounters(state, attentionFlops(S, D, causal), threads,
                                 seconds.count());
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
  std::vector<Variant> variants = {{"", {}}};
  for (const Variant &v : variantsFromEnvironment())
    variants.push_back(v);
  for (const Variant &v : variants) {
    const std::string at = v.label.empty() ? "" : "@" + v.label;
    if (v.label.empty())
      continue;
    for (int causal : {0, 1})
      for (int S : {128, 512, 2048})
        for (int D : {32, 64}) {
          const std::string name = "BM_AttentionKernel/fused" + at +
                                   "/S:" + std::to_string(S) +
                                   "/D:" + std::to_string(D) +
                                   "/causal:" + std::to_string(causal) +
                                   "/T:1";
          benchmark::RegisterBenchmark(name.c_str(), BM_Fused, S, D,
                                       causal != 0, 1, v.params)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
  }
  for (int threads : {1, 2})
    for (int causal : {0, 1})
      for (int S : {128, 256, 512, 1024, 2048, 4096})
        for (int D : {32, 64}) {
          const std::string suffix = "/S:" + std::to_string(S) +
                                     "/D:" + std::to_string(D) +
                                     "/causal:" + std::to_string(causal) +
                                     "/T:" + std::to_string(threads);
          benchmark::RegisterBenchmark(
              ("BM_AttentionKernel/fused" + suffix).c_str(), BM_Fused, S, D,
              causal != 0, threads, ScheduleParams{})
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
  attune::bench::peak(); // measured once, before any timing
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
