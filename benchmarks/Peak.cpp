//===- Peak.cpp - the FMA peak of the ISA attune's code runs at -----------===//

#include "benchmarks/Peak.h"

#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace attune::bench {
namespace {

// Twelve chains: enough independent multiply-adds in flight to cover the
// FMA latency (4 cycles) on two pipes on every x86 core of interest, few
// enough to stay in registers (12 accumulators + 2 constants <= 16).
constexpr int kChains = 12;
constexpr long kIterations = 4'000'000;

/// Each kernel returns a value that depends on every chain, so none of the
/// work can be dropped; the constants keep the values finite and normal.
__attribute__((target("avx512f"))) float chainsAvx512(long n) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ps(float(c));
  const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c)
    sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  return total;
}

__attribute__((target("avx2,fma"))) float chainsAvx2(long n) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(float(c));
  const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c)
    sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  return total;
}

/// Baseline x86-64 has SSE2 and no FMA: a multiply and a dependent add per
/// step, 8 flops per 4-wide pair.
float chainsSse(long n) {
  __m128 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm_set1_ps(float(c));
  const __m128 mul = _mm_set1_ps(0.9999999f), add = _mm_set1_ps(1e-7f);
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], mul), add);
  __m128 sum = acc[0];
  for (int c = 1; c < kChains; ++c)
    sum = _mm_add_ps(sum, acc[c]);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

} // namespace

double measurePeakGflops(attune_isa_t isa) {
  float (*kernel)(long) = chainsSse;
  int lanes = 4;
  if (isa >= ATTUNE_ISA_AVX512)
    kernel = chainsAvx512, lanes = 16;
  else if (isa == ATTUNE_ISA_AVX2)
    kernel = chainsAvx2, lanes = 8;
  const double flops = 2.0 * lanes * kChains * double(kIterations);
  volatile float sink = kernel(kIterations / 10); // warm up: clocks, caches
  // The thread's CPU time, not wall time: the peak is what the core does
  // while this thread runs on it, and a shared machine may preempt it.
  auto cpuSeconds = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  // The best run, not the median: a peak is what the core can do, and on a
  // shared virtual machine a run is slowed (never sped up) by a neighbour or
  // by the hypervisor taking the CPU, which the thread's CPU time still
  // counts. Medians of five swung from 92 to 122 GFLOP/s (AVX2, Zen 5).
  double best = 0;
  for (int run = 0; run < 15; ++run) {
    double start = cpuSeconds();
    sink = kernel(kIterations);
    best = std::max(best, flops / (cpuSeconds() - start) / 1e9);
  }
  (void)sink;
  return best;
}

const Peak &peak() {
  static const Peak measured = [] {
    attune_isa_t isa;
    if (attune_cpu_isa(&isa) != ATTUNE_OK) {
      std::fprintf(stderr, "%s\n", attune_status_message());
      std::exit(1);
    }
    Peak p{isa, measurePeakGflops(isa)};
    char gflops[32];
    std::snprintf(gflops, sizeof gflops, "%.1f", p.gflopsPerThread);
    std::fprintf(stderr,
                 "attune ISA: %s, fp32 FMA peak %s GFLOP/s per thread\n",
                 attune_isa_name(isa), gflops);
    benchmark::AddCustomContext("attune_isa", attune_isa_name(isa));
    benchmark::AddCustomContext("peak_GFLOPs_per_thread", gflops);
    return p;
  }();
  return measured;
}

void setFlopCounters(benchmark::State &state, double flopsPerIteration,
                     int threads, double seconds) {
  state.counters["GFLOPs"] = benchmark::Counter(
      flopsPerIteration / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  double threadPeak = peak().gflopsPerThread * threads;
  state.counters["peak_GFLOPs"] = threadPeak;
  // Not a rate counter: those print as "x/s", which a fraction is not.
  double achieved =
      flopsPerIteration * double(state.iterations()) / seconds / 1e9;
  state.counters["peak_fraction"] = seconds > 0 ? achieved / threadPeak : 0.0;
}

} // namespace attune::bench
