//===- FmaPeak.h - measured fp32 peak of one core at an ISA level -*- C++ -*-===//
//
// A kernel's GFLOP/s means little without the machine's: the benchmarks
// measure, at start and in the same conditions as the kernels (the machines
// are shared), what one thread reaches with 12 independent multiply-add
// chains at the vector width of the level the kernels were built for, and
// report their figures as a fraction of it. 12 chains cover the FMA latency
// (4 cycles) on two FMA pipes with room to spare.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_BENCHMARKS_FMAPEAK_H
#define ATTUNE_BENCHMARKS_FMAPEAK_H

#include "attune/runtime.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace attune::bench {
namespace detail {

/// Runs `iterations` steps of 12 chains; returns flops done. The result is
/// folded into `sink` so that the chains are not optimised away.
__attribute__((target("avx512f"))) inline double
chainsAvx512(int64_t iterations, float &sink) {
  __m512 acc[12];
  for (int j = 0; j < 12; ++j)
    acc[j] = _mm512_set1_ps(0.001f * j);
  const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < 12; ++j)
      acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  for (int j = 1; j < 12; ++j)
    acc[0] = _mm512_add_ps(acc[0], acc[j]);
  sink += _mm512_reduce_add_ps(acc[0]);
  return double(iterations) * 12 * 16 * 2;
}

__attribute__((target("avx2,fma"))) inline double chainsAvx2(int64_t iterations,
                                                             float &sink) {
  __m256 acc[12];
  for (int j = 0; j < 12; ++j)
    acc[j] = _mm256_set1_ps(0.001f * j);
  const __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < 12; ++j)
      acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  float lanes[8];
  for (int j = 1; j < 12; ++j)
    acc[0] = _mm256_add_ps(acc[0], acc[j]);
  _mm256_storeu_ps(lanes, acc[0]);
  sink += lanes[0];
  return double(iterations) * 12 * 8 * 2;
}

/// SSE2 has no FMA: a multiply and an add per chain step (2 flops/lane).
inline double chainsBaseline(int64_t iterations, float &sink) {
  __m128 acc[12];
  for (int j = 0; j < 12; ++j)
    acc[j] = _mm_set1_ps(0.001f * j);
  const __m128 a = _mm_set1_ps(0.9999999f), b = _mm_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < 12; ++j)
      acc[j] = _mm_add_ps(_mm_mul_ps(acc[j], a), b);
  for (int j = 1; j < 12; ++j)
    acc[0] = _mm_add_ps(acc[0], acc[j]);
  sink += _mm_cvtss_f32(acc[0]);
  return double(iterations) * 12 * 4 * 2;
}

} // namespace detail

/// GFLOP/s of `iterations` chain steps at `isa` on the calling thread.
inline double fmaChainsGflops(attune_isa_t isa, int64_t iterations) {
  static float sink = 0;
  auto start = std::chrono::steady_clock::now();
  double flops = isa >= ATTUNE_ISA_AVX512 ? detail::chainsAvx512(iterations, sink)
                 : isa == ATTUNE_ISA_AVX2 ? detail::chainsAvx2(iterations, sink)
                                          : detail::chainsBaseline(iterations, sink);
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  return flops / seconds.count() / 1e9;
}

/// Median over `runs` runs of about 20 ms of the one-thread multiply-add
/// peak at `isa`, in GFLOP/s. `isa` must be one the machine executes.
inline double measureFmaPeak(attune_isa_t isa, int runs = 9) {
  fmaChainsGflops(isa, 1 << 20); // warm up: clocks, page in
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r)
    rates.push_back(fmaChainsGflops(isa, 1 << 22));
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

} // namespace attune::bench

#endif // ATTUNE_BENCHMARKS_FMAPEAK_H
