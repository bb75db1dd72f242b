//===- HalideCuda.cpp - Halide's CUDA kernels on attune's device ----------===//

#include "runtime/cuda/HalideCuda.h"

#include "runtime/src/Status.h"

#include "HalideRuntimeCuda.h"

#include <atomic>
#include <cstring>

namespace attune::cuda {

using runtime::fail;

namespace {

std::atomic<Device *> halideDevice{nullptr};
/// The last message the Halide runtime reported on this thread.
thread_local char halideMessage[1024];

// The Halide runtime pushes the context it is given and pops it when the
// kernel call ends, so acquiring only names the device's context.
int acquireContext(void *, void **context, bool) {
  Device *device = halideDevice.load();
  if (!device)
    return halide_error_code_device_interface_no_device;
  *context = device->context();
  return halide_error_code_success;
}

int releaseContext(void *) { return halide_error_code_success; }

int getStream(void *, void *, void **stream) {
  Device *device = halideDevice.load();
  *stream = device ? device->stream() : nullptr;
  return halide_error_code_success;
}

void recordError(void *, const char *message) {
  std::strncpy(halideMessage, message, sizeof halideMessage - 1);
  halideMessage[sizeof halideMessage - 1] = 0;
  // Halide's messages end with a newline; the status message does not.
  size_t length = std::strlen(halideMessage);
  if (length && halideMessage[length - 1] == '\n')
    halideMessage[length - 1] = 0;
}

} // namespace

HalideOnDevice::HalideOnDevice(Device &device) {
  halideDevice.store(&device);
  halide_set_cuda_acquire_context(acquireContext);
  halide_set_cuda_release_context(releaseContext);
  halide_set_cuda_get_stream(getStream);
  routeHalideErrors();
}

HalideOnDevice::~HalideOnDevice() {
  halide_device_release(nullptr, halide_cuda_device_interface());
  halideDevice.store(nullptr);
}

void routeHalideErrors() { halide_set_error_handler(recordError); }

const char *lastHalideError() { return halideMessage; }

DeviceTensor::DeviceTensor(api::CUdeviceptr data, halide_type_t type,
                           std::initializer_list<int> shape)
    : DeviceTensor(data, type, shape.begin(), static_cast<int>(shape.size())) {}

DeviceTensor::DeviceTensor(api::CUdeviceptr data, halide_type_t type, const int *shape, int rank) {
  buffer_.type = type;
  buffer_.dimensions = rank;
  buffer_.dim = dims_;
  // Ranks above 8 do not occur: attune's kernels have at most 5 dimensions.
  int stride = 1;
  for (int i = 0; i < rank && i < 8; ++i) {
    dims_[i] = {0, shape[i], stride, 0};
    stride *= shape[i];
  }
  // The device pointer is the buffer's device handle (what
  // halide_cuda_wrap_device_ptr stores), and its contents are on the device.
  buffer_.device = data;
  buffer_.device_interface = halide_cuda_device_interface();
  buffer_.flags = halide_buffer_flag_device_dirty;
}

DeviceTensor::DeviceTensor(const DeviceTensor &other) { *this = other; }

DeviceTensor &DeviceTensor::operator=(const DeviceTensor &other) {
  buffer_ = other.buffer_;
  std::memcpy(dims_, other.dims_, sizeof dims_);
  buffer_.dim = dims_;
  return *this;
}

attune_status_t runHalideKernel(Device &device, const char *name, int (*argv)(void **),
                                void **args) noexcept {
  halideMessage[0] = 0;
  int result = argv(args);
  if (result != 0)
    return fail(ATTUNE_INTERNAL, "kernel %s failed with Halide error %d: %s", name, result,
                halideMessage[0] ? halideMessage : "no message");
  return device.synchronize();
}

} // namespace attune::cuda
