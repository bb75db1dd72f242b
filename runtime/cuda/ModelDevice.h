//===- ModelDevice.h - a CUDA model's memory and run on its GPU -*- C++ -*-===//
//
// What a handle of a library compiled with --target=cuda keeps on the GPU:
// the device and its stream, cuBLASLt with one plan per matrix product the
// library asked for, the weights (uploaded once), a workspace that starts
// with the library's embedded constants, the library's attention kernels
// (loaded at their first call) and staging buffers for callers that pass
// host memory. The generated run() queues Halide kernels and calls back
// into matmul() for the products and attention() for fused attention;
// everything it queues goes on the handle's stream, which this class waits
// for.
//
// With ATTUNE_CUDA_PROFILE=1 in the environment when the device is opened,
// every call is bracketed by CUDA events (the run's mark() calls), and
// closing the handle prints each kernel's time per run and share of the
// total to stderr.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_MODELDEVICE_H
#define ATTUNE_RUNTIME_CUDA_MODELDEVICE_H

#include "attune/runtime.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/CudaModule.h"

#include <array>
#include <map>
#include <string>
#include <memory>
#include <vector>

namespace attune::cuda {

class ModelDevice {
public:
  /// Opens device 0 and cuBLASLt and uploads the `weightsSize` bytes at
  /// `weights`. ATTUNE_NO_DEVICE naming what is missing when the machine
  /// has no driver, GPU or cuBLASLt.
  static attune_status_t open(const attune_model_abi_t &abi, const void *weights,
                              std::unique_ptr<ModelDevice> *out) noexcept;
  /// Releases the library's kernels from the context (unless
  /// keepKernels()), then the memory.
  ~ModelDevice();
  /// Leaves the library's kernels loaded at destruction: another handle of
  /// the same library is open and may be running them.
  void keepKernels() { releaseKernels_ = false; }
  ModelDevice(const ModelDevice &) = delete;
  ModelDevice &operator=(const ModelDevice &) = delete;

  /// Runs the library on device buffers and waits for it. `workspaceBytes`
  /// is abi.workspace_size(symbols).
  attune_status_t run(const int64_t *symbols, int64_t workspaceBytes, void *const *inputs,
                      void *const *outputs) noexcept;

  /// run() for host tensors, already checked against the descriptor: copies
  /// the inputs in and the outputs out through staging buffers kept for the
  /// next run. `bytes` gives each input's and then each output's size.
  attune_status_t runHost(const int64_t *symbols, int64_t workspaceBytes,
                          const attune_tensor_t *inputs, attune_tensor_t *outputs,
                          const std::vector<size_t> &bytes) noexcept;

  Device &device() { return *device_; }

private:
  explicit ModelDevice(const attune_model_abi_t &abi) : abi_(abi) {}

  /// Device memory that grows to the largest size asked for.
  struct Buffer {
    api::CUdeviceptr pointer = 0;
    size_t capacity = 0;
  };
  attune_status_t reserve(Buffer &buffer, size_t bytes) noexcept;

  /// attune_abi_device_t::matmul.
  static int32_t matmul(void *user, const attune_abi_matmul_t *op,
                        struct halide_buffer_t *const *args, int32_t numArgs);
  attune_status_t runMatmul(const attune_abi_matmul_t &op, struct halide_buffer_t *const *args,
                            int32_t numArgs) noexcept;
  /// attune_abi_device_t::attention.
  static int32_t attention(void *user, const attune_abi_attention_t *op,
                           struct halide_buffer_t *const *args, int32_t numArgs);
  attune_status_t runAttention(const attune_abi_attention_t &op,
                               struct halide_buffer_t *const *args, int32_t numArgs) noexcept;
  /// The device copy of the library's `count` elements at `host` (RoPE's
  /// angles, ALiBi's slopes, a bias table's rows), uploaded at the first
  /// call; may throw std::bad_alloc (runAttention catches it).
  template <class T>
  attune_status_t constantArray(const T *host, int64_t count, const T **device) {
    const void *copy = nullptr;
    attune_status_t status = constantBytes(host, count * sizeof(T), &copy);
    *device = static_cast<const T *>(copy);
    return status;
  }
  attune_status_t constantBytes(const void *host, size_t size, const void **device);

  const attune_model_abi_t &abi_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<CublasLt> lt_;
  Buffer weights_, workspace_;
  /// Whether workspace_ holds the constants (it is refilled when it grows).
  bool constantsLoaded_ = false;
  std::vector<Buffer> staging_;
  /// runHost's device addresses of the staged inputs, then outputs.
  std::vector<void *> addresses_;
  /// One plan per product and shape, as cuBLASLt's heuristic is slow next
  /// to a product: keyed by the op's fields, the element type and every
  /// extent and stride.
  std::map<std::vector<int64_t>, std::unique_ptr<LinearPlan>> plans_;
  /// The attention kernels' modules, by fatbin address, loaded at their
  /// first call; RoPE's angles and the modifiers' bias slopes on the
  /// device, by their address in the library; the key splits' workspace
  /// (AttentionParams::partialResult).
  std::map<const void *, std::unique_ptr<CudaModule>> modules_;
  std::map<const void *, Buffer> constantArrays_;
  Buffer attentionSplits_;
  /// A failed matmul's or attention's status, returned once run() reports
  /// the failure.
  attune_status_t matmulStatus_ = ATTUNE_OK;
  bool releaseKernels_ = true;

  /// attune_abi_device_t::mark: records an event before each call when
  /// profiling.
  static void mark(void *user, const char *name);
  /// Adds the last run's times between its marks to the totals.
  attune_status_t collectProfile() noexcept;
  void printProfile() const;
  struct Profile {
    std::vector<api::CUevent> events; ///< reused from run to run
    std::vector<const char *> names;  ///< this run's, by mark
    std::map<std::string, std::pair<double, int64_t>> totals; ///< ms, calls
    int64_t runs = 0;
  };
  std::unique_ptr<Profile> profile_;
};

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_MODELDEVICE_H
