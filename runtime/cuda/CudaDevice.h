//===- CudaDevice.h - one NVIDIA GPU through the dlopen'd driver -*- C++ -*-===//
//
// The runtime's view of a GPU: the CUDA driver loaded with dlopen, the
// device's primary context (the one cuBLASLt and the CUDA runtime also use,
// so all three share allocations and streams), one stream on which every
// kernel of a model runs, device memory, copies and events.
//
// Nothing here aborts: when there is no driver, no device, or a call fails,
// the function returns a status and records a message that names what failed
// (attune_status_message). ATTUNE_NO_DEVICE means the machine cannot run CUDA
// code at all; ATTUNE_OUT_OF_MEMORY an allocation the device refused;
// ATTUNE_INTERNAL any other driver error, with its CUresult name.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_CUDADEVICE_H
#define ATTUNE_RUNTIME_CUDA_CUDADEVICE_H

#include "attune/runtime.h"
#include "runtime/cuda/CudaApi.h"

#include <cstddef>
#include <memory>
#include <string>

namespace attune::cuda {

/// The driver's entry points, resolved once per process.
struct Driver {
#define ATTUNE_CUDA_DRIVER_FUNCTION(name, symbol) api::name##_t name = nullptr;
#include "runtime/cuda/DriverFunctions.inc"
#undef ATTUNE_CUDA_DRIVER_FUNCTION

  /// Loads `path` (by default $ATTUNE_CUDA_DRIVER, else "libcuda.so.1"),
  /// resolves every entry point and calls cuInit. The first successful load
  /// is kept for the life of the process and every later call returns it,
  /// whatever its path; a failure is not kept, so that a later call with
  /// another path can succeed.
  static attune_status_t load(const Driver **driver, const char *path = nullptr) noexcept;

  /// Records "`what` failed: CUDA_ERROR_X (text)" and returns the status
  /// that `result` maps to (ATTUNE_OK for CUDA_SUCCESS).
  attune_status_t check(api::CUresult result, const char *what) const noexcept;
};

/// One GPU, its primary context and a non-blocking stream.
class Device {
public:
  /// Opens device `ordinal` (0 for the first). ATTUNE_NO_DEVICE when the
  /// driver does not load, cuInit fails or there is no such device.
  static attune_status_t open(int ordinal, std::unique_ptr<Device> *device,
                              const char *driverPath = nullptr) noexcept;
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Driver &driver() const { return *driver_; }
  api::CUcontext context() const { return context_; }
  api::CUstream stream() const { return stream_; }
  const std::string &name() const { return name_; }
  int multiprocessors() const { return multiprocessors_; }
  /// Compute capability as major * 10 + minor (90 for an H100).
  int computeCapability() const { return computeCapability_; }
  size_t totalMemory() const { return totalMemory_; }

  /// Device memory. alloc of 0 bytes gives 0 and succeeds; free of 0 is a
  /// no-op. The context is made current for the call and popped after.
  attune_status_t alloc(size_t bytes, api::CUdeviceptr *pointer) noexcept;
  attune_status_t free(api::CUdeviceptr pointer) noexcept;

  /// Copies on the device's stream; upload and download wait for the copy.
  attune_status_t upload(api::CUdeviceptr to, const void *from, size_t bytes) noexcept;
  attune_status_t download(void *to, api::CUdeviceptr from, size_t bytes) noexcept;
  attune_status_t copy(api::CUdeviceptr to, api::CUdeviceptr from, size_t bytes) noexcept;
  attune_status_t synchronize() noexcept;

  /// A pair of events around work on the stream: start(), the work,
  /// stop(&ms) waits for the work and gives the time between the events.
  class Timer {
  public:
    explicit Timer(Device &device) : device_(device) {}
    ~Timer();
    attune_status_t start() noexcept;
    attune_status_t stop(float *milliseconds) noexcept;

  private:
    Device &device_;
    api::CUevent begin_ = nullptr, end_ = nullptr;
  };

  /// Makes the context current on this thread for a scope.
  class Scope {
  public:
    explicit Scope(const Device &device);
    ~Scope();

  private:
    const Device &device_;
  };

private:
  Device() = default;
  const Driver *driver_ = nullptr;
  api::CUdevice device_ = 0;
  api::CUcontext context_ = nullptr;
  api::CUstream stream_ = nullptr;
  std::string name_;
  int multiprocessors_ = 0;
  int computeCapability_ = 0;
  size_t totalMemory_ = 0;
};

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_CUDADEVICE_H
