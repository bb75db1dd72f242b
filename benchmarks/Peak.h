//===- Peak.h - the FMA peak of the ISA attune's code runs at ---*- C++ -*-===//
//
// Benchmarks report how far a kernel is from what one core can do, so a
// figure reads the same on any machine: the peak is measured at start, for
// the level attune's libraries and JIT code run at (attune_cpu_isa(): the
// host's, capped by ATTUNE_CPU), by a loop of independent multiply-add chains
// compiled for that level.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_BENCHMARKS_PEAK_H
#define ATTUNE_BENCHMARKS_PEAK_H

#include "attune/runtime.h"

namespace benchmark {
class State;
} // namespace benchmark

namespace attune::bench {

/// fp32 GFLOP/s one thread reaches on `isa`'s widest multiply-add: the best
/// of 15 runs of 12 independent chains (AVX-512 and AVX2 FMA; baseline SSE
/// mul + add, which has no FMA), over the thread's CPU time.
double measurePeakGflops(attune_isa_t isa);

/// The level attune's code runs at in this process and its one-thread peak,
/// measured once. Exits with a message when ATTUNE_CPU is invalid. The first
/// call prints both to stderr and adds them to the benchmark context.
struct Peak {
  attune_isa_t isa;
  double gflopsPerThread;
};
const Peak &peak();

/// Sets the counters every row reports for a benchmark that did
/// `flopsPerIteration` useful flops in each of its iterations, which took
/// `seconds` of wall time in all: `GFLOPs` (a rate), `peak_GFLOPs` (the peak
/// of `threads` threads) and `peak_fraction` (GFLOP/s over that peak).
void setFlopCounters(benchmark::State &state, double flopsPerIteration,
                     int threads, double seconds);

} // namespace attune::bench

#endif // ATTUNE_BENCHMARKS_PEAK_H
