//===- GpuSampleManifest.h - the AOT-compiled GPU samples, as data -*- C++ -*-===//
//
// gpu_kernel_gen writes gpu_samples_manifest.inc, an array kGpuSamples of
// these, one per sample of GpuSamples.h: its CPU and CUDA entry points and
// the shapes it runs at (innermost dimension first, as Halide's).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLEMANIFEST_H
#define ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLEMANIFEST_H

#include "HalideRuntime.h"

#include <vector>

namespace attune::cuda::gputest {

struct GpuTensorSpec {
  halide_type_t type;
  std::vector<int> shape;
};

struct GpuSample {
  const char *name;
  int (*cpu)(void **);
  int (*cuda)(void **);
  /// Integer inputs are drawn from [0, indexLimit) (0: [0, 100)).
  int indexLimit;
  std::vector<GpuTensorSpec> inputs;
  GpuTensorSpec output;
};

#include "gpu_samples_manifest.inc"

} // namespace attune::cuda::gputest

#endif // ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLEMANIFEST_H
