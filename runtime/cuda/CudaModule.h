//===- CudaModule.h - device code loaded from memory and launched -*- C++ -*-===//
//
// Kernels compiled ahead of time by nvcc (a fatbin with SASS per GPU
// architecture and PTX for later ones, a cubin, or PTX text) loaded into a
// Device's context with cuModuleLoadData, looked up by symbol and launched on
// the device's stream. The driver picks the image's SASS for the device, or
// JIT-compiles its PTX, at load.
//
// Like the rest of the device layer nothing here aborts: a failed call
// returns a status and records a message naming the driver call and, for a
// lookup, the symbol (attune_status_message).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_CUDAMODULE_H
#define ATTUNE_RUNTIME_CUDA_CUDAMODULE_H

#include "runtime/cuda/CudaDevice.h"

#include <memory>

namespace attune::cuda {

/// One loaded module. It belongs to the device it was loaded on, which must
/// outlive it. Not thread-safe: calls on one module come from one thread at
/// a time, as calls on its Device do.
class CudaModule {
public:
  /// Loads `image` (a fatbin or cubin, or NUL-terminated PTX) into the
  /// device's context. The driver copies what it needs: the caller may free
  /// `image` once this returns. ATTUNE_INVALID_ARGUMENT for a null image;
  /// a driver failure (an image with no code for this GPU, say) is
  /// ATTUNE_INTERNAL naming cuModuleLoadData and the CUresult.
  static attune_status_t load(Device &device, const void *image,
                              std::unique_ptr<CudaModule> *module) noexcept;
  /// Unloads the module (its functions become invalid).
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  Device &device() const { return device_; }

  /// The kernel `name` (its extern "C" symbol) into `function`, valid while
  /// the module is loaded. A symbol the module lacks is ATTUNE_NOT_FOUND with
  /// a message naming it; a null name is ATTUNE_INVALID_ARGUMENT.
  attune_status_t function(const char *name, api::CUfunction *function) noexcept;

  /// Queues `function` on the device's stream: grid[0..2] blocks of
  /// block[0..2] threads, `sharedBytes` of dynamic shared memory, and
  /// `params` as cuLaunchKernel takes them (one pointer to each argument's
  /// value, read before this returns). Above the default 48 KiB of dynamic
  /// shared memory the function's limit is raised to `sharedBytes` first.
  /// Does not wait for the kernel; its own errors show at the next
  /// synchronizing call.
  attune_status_t launch(api::CUfunction function, const unsigned grid[3], const unsigned block[3],
                         unsigned sharedBytes, void **params) noexcept;

  /// The dynamic shared memory any kernel may use without asking.
  static constexpr unsigned kDefaultSharedBytes = 48 * 1024;

private:
  CudaModule(Device &device, api::CUmodule module) : device_(device), module_(module) {}
  Device &device_;
  api::CUmodule module_;
};

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_CUDAMODULE_H
