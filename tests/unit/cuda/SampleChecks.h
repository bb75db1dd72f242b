//===- SampleChecks.h - what the GPU tests do alike ------------*- C++ -*-===//
//
// What GpuScheduleTest (JIT) and GpuKernelTest (ahead of time) do alike:
// open the GPU or skip, fill a sample's inputs with random values and
// compare the GPU's output with the CPU's. Both hold Halide::Runtime::Buffer (a
// Halide::Buffer's get()), so that the AOT test needs no Halide compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_SAMPLECHECKS_H
#define ATTUNE_TESTS_UNIT_CUDA_SAMPLECHECKS_H

#include "tests/unit/cuda/GpuTestSupport.h"

#include "HalideBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace attune::cuda::gputest {

/// Random contents by element type: floats in [-2, 2], integers in
/// [0, limit) (or [0, 100) when the sample names no limit), int8 and bool
/// 0 or 1.
inline void fillRandom(Halide::Runtime::Buffer<> &buffer, int limit, std::mt19937 &rng) {
  std::uniform_real_distribution<float> real(-2.f, 2.f);
  std::uniform_int_distribution<int> integer(0, (limit > 0 ? limit : 100) - 1);
  const halide_type_t t = buffer.type();
  if (t.code == halide_type_float && t.bits == 32)
    buffer.as<float>().for_each_value([&](float &v) { v = real(rng); });
  else if (t.code == halide_type_int && t.bits == 32)
    buffer.as<int32_t>().for_each_value([&](int32_t &v) { v = integer(rng); });
  else if (t.code == halide_type_int && t.bits == 64)
    buffer.as<int64_t>().for_each_value([&](int64_t &v) { v = integer(rng); });
  else if (t.code == halide_type_int && t.bits == 8)
    buffer.as<int8_t>().for_each_value([&](int8_t &v) { v = integer(rng) % 2; });
  else if (t.code == halide_type_uint && t.bits == 1)
    buffer.as<bool>().for_each_value([&](bool &v) { v = integer(rng) % 2; });
  else
    ADD_FAILURE() << "no random values for an input of this type";
}

/// Element `i` of a dense buffer, as f64.
inline double valueAt(const Halide::Runtime::Buffer<> &buffer, size_t i) {
  const halide_type_t t = buffer.type();
  const void *data = buffer.data();
  if (t.code == halide_type_float && t.bits == 32)
    return static_cast<const float *>(data)[i];
  if (t.code == halide_type_int && t.bits == 32)
    return static_cast<const int32_t *>(data)[i];
  if (t.code == halide_type_int && t.bits == 64)
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  if (t.code == halide_type_uint && t.bits == 1)
    return static_cast<const bool *>(data)[i];
  ADD_FAILURE() << "unexpected output type";
  return 0;
}

/// The GPU's output against the CPU's, element by element. The CPU's own
/// exp/sin/cos and sums against libdevice's and another order of summation:
/// a few f32 ulps on values of order 1.
inline void expectSameOutputs(const Halide::Runtime::Buffer<> &gpu,
                              const Halide::Runtime::Buffer<> &cpu) {
  ASSERT_EQ(gpu.number_of_elements(), cpu.number_of_elements());
  size_t bad = 0;
  for (size_t i = 0; i < cpu.number_of_elements(); ++i) {
    const double got = valueAt(gpu, i), want = valueAt(cpu, i);
    const bool same = got == want || std::fabs(got - want) <= 1e-5 + 1e-5 * std::fabs(want);
    if (!same && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": GPU " << got << ", CPU " << want;
  }
  EXPECT_EQ(bad, 0u) << "of " << cpu.number_of_elements() << " elements";
}

} // namespace attune::cuda::gputest

#endif // ATTUNE_TESTS_UNIT_CUDA_SAMPLECHECKS_H
