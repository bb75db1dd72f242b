//===- CudaDevice.cpp - one NVIDIA GPU through the dlopen'd driver --------===//

#include "runtime/cuda/CudaDevice.h"

#include "runtime/src/Status.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <new>

namespace attune::cuda {

using runtime::fail;
using namespace api;

namespace {

std::mutex loadMutex;
const Driver *loadedDriver = nullptr; // the first driver that loaded, kept

/// What cuGetErrorName/String say about `result`, or its number when the
/// driver cannot say.
std::string describe(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

} // namespace

attune_status_t Driver::load(const Driver **driver, const char *path) noexcept {
  std::lock_guard<std::mutex> lock(loadMutex);
  if (loadedDriver) {
    *driver = loadedDriver;
    return ATTUNE_OK;
  }
  if (!path)
    path = std::getenv("ATTUNE_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  // RTLD_GLOBAL: the Halide runtime of a library's CUDA kernels looks for the
  // driver's symbols in the process before it tries dlopen("libcuda.so"),
  // which a machine with only the driver (no toolkit) does not have.
  void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return fail(ATTUNE_NO_DEVICE, "no CUDA driver: dlopen(\"%s\") failed: %s", path, dlerror());
  std::unique_ptr<Driver> loaded(new (std::nothrow) Driver);
  if (!loaded) {
    dlclose(handle);
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
#define ATTUNE_CUDA_DRIVER_FUNCTION(name, symbol)                                                 \
  loaded->name = reinterpret_cast<api::name##_t>(dlsym(handle, symbol));                          \
  if (!loaded->name) {                                                                             \
    dlclose(handle);                                                                               \
    return fail(ATTUNE_NO_DEVICE, "the CUDA driver %s has no %s: it is older than CUDA 12.8",     \
                path, symbol);                                                                     \
  }
#include "runtime/cuda/DriverFunctions.inc"
#undef ATTUNE_CUDA_DRIVER_FUNCTION
  if (CUresult result = loaded->cuInit(0); result != CUDA_SUCCESS) {
    std::string why = describe(*loaded, result);
    dlclose(handle);
    return fail(ATTUNE_NO_DEVICE, "cuInit failed: %s", why.c_str());
  }
  // The handle stays open for the life of the process, as the driver does.
  loadedDriver = loaded.release();
  *driver = loadedDriver;
  return ATTUNE_OK;
}

attune_status_t Driver::check(CUresult result, const char *what) const noexcept {
  if (result == CUDA_SUCCESS)
    return ATTUNE_OK;
  std::string why = describe(*this, result);
  return fail(result == CUDA_ERROR_OUT_OF_MEMORY ? ATTUNE_OUT_OF_MEMORY : ATTUNE_INTERNAL,
              "%s failed: %s", what, why.c_str());
}

attune_status_t Device::open(int ordinal, std::unique_ptr<Device> *device,
                             const char *driverPath) noexcept {
  const Driver *driver = nullptr;
  if (attune_status_t status = Driver::load(&driver, driverPath))
    return status;
  int count = 0;
  if (attune_status_t status = driver->check(driver->cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return status;
  if (ordinal < 0 || ordinal >= count)
    return fail(ATTUNE_NO_DEVICE, "no CUDA device %d: the driver reports %d device%s", ordinal,
                count, count == 1 ? "" : "s");
  std::unique_ptr<Device> opened(new (std::nothrow) Device);
  if (!opened)
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  opened->driver_ = driver;
  if (attune_status_t status =
          driver->check(driver->cuDeviceGet(&opened->device_, ordinal), "cuDeviceGet"))
    return status;
  CUdevice id = opened->device_;
  char name[256] = {};
  int major = 0, minor = 0;
  if (attune_status_t status = driver->check(driver->cuDeviceGetName(name, sizeof name - 1, id),
                                             "cuDeviceGetName"))
    return status;
  opened->name_ = name;
  if (attune_status_t status = driver->check(
          driver->cuDeviceGetAttribute(&opened->multiprocessors_,
                                       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, id),
          "cuDeviceGetAttribute(multiprocessors)"))
    return status;
  if (attune_status_t status = driver->check(
          driver->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, id),
          "cuDeviceGetAttribute(compute capability)"))
    return status;
  if (attune_status_t status = driver->check(
          driver->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, id),
          "cuDeviceGetAttribute(compute capability)"))
    return status;
  opened->computeCapability_ = major * 10 + minor;
  if (attune_status_t status =
          driver->check(driver->cuDeviceTotalMem(&opened->totalMemory_, id), "cuDeviceTotalMem"))
    return status;
  if (attune_status_t status = driver->check(
          driver->cuDevicePrimaryCtxRetain(&opened->context_, id), "cuDevicePrimaryCtxRetain"))
    return status;
  Scope scope(*opened);
  if (attune_status_t status = driver->check(
          driver->cuStreamCreate(&opened->stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
    return status;
  *device = std::move(opened);
  return ATTUNE_OK;
}

Device::~Device() {
  if (stream_) {
    Scope scope(*this);
    driver_->cuStreamSynchronize(stream_);
    driver_->cuStreamDestroy(stream_);
  }
  if (context_)
    driver_->cuDevicePrimaryCtxRelease(device_);
}

Device::Scope::Scope(const Device &device) : device_(device) {
  device_.driver_->cuCtxPushCurrent(device_.context_);
}

Device::Scope::~Scope() {
  CUcontext popped = nullptr;
  device_.driver_->cuCtxPopCurrent(&popped);
}

attune_status_t Device::alloc(size_t bytes, CUdeviceptr *pointer) noexcept {
  *pointer = 0;
  if (bytes == 0)
    return ATTUNE_OK;
  Scope scope(*this);
  CUresult result = driver_->cuMemAlloc(pointer, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(ATTUNE_OUT_OF_MEMORY, "cuMemAlloc of %zu bytes failed: the %s has %zu bytes", bytes,
                name_.c_str(), totalMemory_);
  return driver_->check(result, "cuMemAlloc");
}

attune_status_t Device::free(CUdeviceptr pointer) noexcept {
  if (!pointer)
    return ATTUNE_OK;
  Scope scope(*this);
  return driver_->check(driver_->cuMemFree(pointer), "cuMemFree");
}

attune_status_t Device::upload(CUdeviceptr to, const void *from, size_t bytes) noexcept {
  Scope scope(*this);
  if (attune_status_t status =
          driver_->check(driver_->cuMemcpyHtoDAsync(to, from, bytes, stream_), "cuMemcpyHtoD"))
    return status;
  return driver_->check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

attune_status_t Device::download(void *to, CUdeviceptr from, size_t bytes) noexcept {
  Scope scope(*this);
  if (attune_status_t status =
          driver_->check(driver_->cuMemcpyDtoHAsync(to, from, bytes, stream_), "cuMemcpyDtoH"))
    return status;
  return driver_->check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

attune_status_t Device::copy(CUdeviceptr to, CUdeviceptr from, size_t bytes) noexcept {
  Scope scope(*this);
  return driver_->check(driver_->cuMemcpyDtoDAsync(to, from, bytes, stream_), "cuMemcpyDtoD");
}

attune_status_t Device::synchronize() noexcept {
  Scope scope(*this);
  return driver_->check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

Device::Timer::~Timer() {
  Scope scope(device_);
  if (begin_)
    device_.driver_->cuEventDestroy(begin_);
  if (end_)
    device_.driver_->cuEventDestroy(end_);
}

attune_status_t Device::Timer::start() noexcept {
  const Driver &driver = *device_.driver_;
  Scope scope(device_);
  if (!begin_) {
    if (attune_status_t status =
            driver.check(driver.cuEventCreate(&begin_, CU_EVENT_DEFAULT), "cuEventCreate"))
      return status;
    if (attune_status_t status =
            driver.check(driver.cuEventCreate(&end_, CU_EVENT_DEFAULT), "cuEventCreate"))
      return status;
  }
  return driver.check(driver.cuEventRecord(begin_, device_.stream_), "cuEventRecord");
}

attune_status_t Device::Timer::stop(float *milliseconds) noexcept {
  const Driver &driver = *device_.driver_;
  if (!begin_)
    return fail(ATTUNE_INVALID_ARGUMENT, "Timer::stop without a start");
  Scope scope(device_);
  if (attune_status_t status =
          driver.check(driver.cuEventRecord(end_, device_.stream_), "cuEventRecord"))
    return status;
  if (attune_status_t status = driver.check(driver.cuEventSynchronize(end_), "cuEventSynchronize"))
    return status;
  return driver.check(driver.cuEventElapsedTime(milliseconds, begin_, end_), "cuEventElapsedTime");
}

} // namespace attune::cuda
