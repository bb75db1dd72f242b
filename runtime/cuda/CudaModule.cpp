//===- CudaModule.cpp - device code loaded from memory and launched -------===//

#include "runtime/cuda/CudaModule.h"

#include "runtime/src/Status.h"

#include <climits>
#include <cstdio>
#include <new>

namespace attune::cuda {

using runtime::fail;
using namespace api;

attune_status_t CudaModule::load(Device &device, const void *image,
                                 std::unique_ptr<CudaModule> *module) noexcept {
  module->reset();
  if (!image)
    return fail(ATTUNE_INVALID_ARGUMENT, "CudaModule::load: no image");
  const Driver &driver = device.driver();
  Device::Scope scope(device);
  CUmodule loaded = nullptr;
  if (attune_status_t status =
          driver.check(driver.cuModuleLoadData(&loaded, image), "cuModuleLoadData"))
    return status;
  module->reset(new (std::nothrow) CudaModule(device, loaded));
  if (!*module) {
    driver.cuModuleUnload(loaded);
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
  return ATTUNE_OK;
}

CudaModule::~CudaModule() {
  Device::Scope scope(device_);
  device_.driver().cuModuleUnload(module_);
}

attune_status_t CudaModule::function(const char *name, CUfunction *function) noexcept {
  *function = nullptr;
  if (!name)
    return fail(ATTUNE_INVALID_ARGUMENT, "CudaModule::function: no name");
  const Driver &driver = device_.driver();
  Device::Scope scope(device_);
  CUresult result = driver.cuModuleGetFunction(function, module_, name);
  if (result == CUDA_ERROR_NOT_FOUND)
    return fail(ATTUNE_NOT_FOUND, "the CUDA module has no kernel '%s'", name);
  char what[256];
  std::snprintf(what, sizeof what, "cuModuleGetFunction('%s')", name);
  return driver.check(result, what);
}

attune_status_t CudaModule::launch(CUfunction function, const unsigned grid[3],
                                   const unsigned block[3], unsigned sharedBytes,
                                   void **params) noexcept {
  if (!function)
    return fail(ATTUNE_INVALID_ARGUMENT, "CudaModule::launch: no function");
  if (sharedBytes > INT_MAX)
    return fail(ATTUNE_INVALID_ARGUMENT, "CudaModule::launch: %u bytes of shared memory",
                sharedBytes);
  const Driver &driver = device_.driver();
  Device::Scope scope(device_);
  // A kernel may use up to 48 KiB of dynamic shared memory as it is; beyond
  // that (up to the device's opt-in limit, 227 KiB on sm_90) the launch is
  // refused unless the function's limit was raised first.
  if (sharedBytes > kDefaultSharedBytes)
    if (attune_status_t status = driver.check(
            driver.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      int(sharedBytes)),
            "cuFuncSetAttribute(max dynamic shared memory)"))
      return status;
  return driver.check(driver.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                            block[2], sharedBytes, device_.stream(), params,
                                            nullptr),
                      "cuLaunchKernel");
}

} // namespace attune::cuda
