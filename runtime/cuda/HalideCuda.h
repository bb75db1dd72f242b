//===- HalideCuda.h - Halide's CUDA kernels on attune's device --*- C++ -*-===//
//
// Halide-generated CUDA kernels reach the GPU through the Halide runtime
// compiled beside them (one per library). By default that runtime creates
// its own context, launches on the legacy default stream and prints its
// errors. A library attune builds for CUDA instead installs the hooks below
// once, so that its Halide kernels and its cuBLASLt calls share the device's
// primary context and stream (no synchronisation between the two is needed)
// and a failing kernel returns an attune status with Halide's message.
//
// Buffers: every kernel input and output lives in device memory only (the
// GPU schedules never copy a buffer to the host, GpuScheduleTest checks it),
// so a halide_buffer_t here has no host pointer and its device field holds a
// CUdeviceptr.
//
// These functions need the Halide runtime symbols of a CUDA target, so they
// are linked only into binaries that hold Halide CUDA kernels, never into
// libattune_runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_HALIDECUDA_H
#define ATTUNE_RUNTIME_CUDA_HALIDECUDA_H

#include "runtime/cuda/CudaDevice.h"

#include "HalideRuntime.h"

#include <initializer_list>

namespace attune::cuda {

/// While it lives, the Halide runtime's CUDA context, stream and errors are
/// `device`'s. Its destructor releases what the Halide runtime holds on the
/// device (loaded modules, cached allocations) and detaches it, so it must
/// end before the device closes: the runtime's own cleanup at process exit
/// then finds no device instead of a closed one. One at a time.
class HalideOnDevice {
public:
  explicit HalideOnDevice(Device &device);
  ~HalideOnDevice();
  HalideOnDevice(const HalideOnDevice &) = delete;
  HalideOnDevice &operator=(const HalideOnDevice &) = delete;
};

/// Only the errors: the Halide runtime's messages are kept for
/// runHalideKernel's status (and lastHalideError) instead of printed.
void routeHalideErrors();

/// The last message the Halide runtime reported on this thread ("" if none
/// since the last runHalideKernel).
const char *lastHalideError();

/// A dense row-major tensor in device memory as a Halide buffer: `shape`
/// is given innermost first, as Halide's dimensions are.
class DeviceTensor {
public:
  DeviceTensor(api::CUdeviceptr data, halide_type_t type, std::initializer_list<int> shape);
  DeviceTensor(api::CUdeviceptr data, halide_type_t type, const int *shape, int rank);
  /// Copies point their buffer at their own dimensions.
  DeviceTensor(const DeviceTensor &other);
  DeviceTensor &operator=(const DeviceTensor &other);
  halide_buffer_t *get() { return &buffer_; }

private:
  halide_buffer_t buffer_ = {};
  halide_dimension_t dims_[8] = {};
};

/// Calls a Halide kernel through its `<name>_argv` entry and waits for the
/// device: ATTUNE_INTERNAL with Halide's message when it returns an error.
attune_status_t runHalideKernel(Device &device, const char *name, int (*argv)(void **),
                                void **args) noexcept;

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_HALIDECUDA_H
