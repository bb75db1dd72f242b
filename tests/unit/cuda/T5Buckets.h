//===- T5Buckets.h - T5's bucket of each distance, for GPU attention tests -*- C++ -*-===//
//
// The rows a bias table by bucket is read through (AttentionParams::
// biasRows): T5's bidirectional buckets (Hugging Face's
// _relative_position_bucket) of each distance in [-maxDistance,
// maxDistance], the edge buckets beyond. The tests' own copy of the
// formula: ModifierTest checks the compiler's (T5Bias.cpp) against the
// same definition.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_T5BUCKETS_H
#define ATTUNE_TESTS_UNIT_CUDA_T5BUCKETS_H

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace attune::gpu::testing {

/// The bucket of delta = -maxDistance + x at x, for `buckets` buckets over
/// both sides.
inline std::vector<int> t5BucketRows(int buckets, int maxDistance) {
  const int side = buckets / 2, exact = side / 2;
  std::vector<int> rows;
  for (int delta = -maxDistance; delta <= maxDistance; ++delta) {
    int n = std::abs(delta);
    int bucket = n < exact ? n
                           : std::min(side - 1, exact + int(std::log(float(n) / exact) /
                                                            std::log(float(maxDistance) / exact) *
                                                            (side - exact)));
    rows.push_back((delta > 0 ? side : 0) + bucket);
  }
  return rows;
}

} // namespace attune::gpu::testing

#endif // ATTUNE_TESTS_UNIT_CUDA_T5BUCKETS_H
