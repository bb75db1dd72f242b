//===- WarpEmulator.h - run attune's CUDA kernels on host threads -*- C++ -*-===//
//
// The host side of compiler/targets/cuda/attention/WarpOps.cuh: a kernel
// compiled by a host C++ compiler calls attune::gpu::emu for its thread
// and block indices, barriers, shuffles and tensor-core products, and
// `launch` runs it: one block at a time, each of its threads a host thread,
// each collective evaluated from its definition in the PTX ISA once every
// lane of the warp has arrived. Slow (a barrier per collective) and exact
// in what it emulates: the kernels' indexing, fragment layouts, online
// softmax and masking, on machines without a GPU. The hardware's own
// accumulation order and exp2 approximation are not emulated: mma sums in
// f32 in k order, exp2 is std::exp2.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_WARPEMULATOR_H
#define ATTUNE_TESTS_UNIT_CUDA_WARPEMULATOR_H

#include <cstddef>
#include <functional>

namespace attune::gpu::emu {

struct LaunchShape {
  int grid[3] = {1, 1, 1};
  /// A multiple of 32.
  int threads = 32;
  size_t sharedBytes = 0;
};

/// Runs `body` as every thread of every block of `shape`. Shared memory is
/// filled with 0xcd before each block, so that a kernel reading what it did
/// not write sees garbage, as on a GPU. An exception in a thread (a 16-byte
/// access off its boundary, say) makes the block's other threads give up at
/// their next barrier, and launch rethrows it: a test fails, the binary
/// does not abort or hang.
void launch(const LaunchShape &shape, const std::function<void()> &body);

/// The warp-wide tensor-core products (mma calls of a whole warp) every
/// launch has run so far: what a test counts to see that work was skipped.
long long products();

} // namespace attune::gpu::emu

#endif // ATTUNE_TESTS_UNIT_CUDA_WARPEMULATOR_H
