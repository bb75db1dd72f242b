//===- CudaDeviceTest.cpp - the runtime's device layer on a fake driver ---===//
//
// runtime/cuda/CudaDevice.cpp against fake_cuda_driver.c, a libcuda.so.1
// stand-in whose device memory is host memory, so that every path of the
// device layer — the driver that does not load or is too old, cuInit
// failing, no device, an allocation beyond the device's memory, copies,
// events, modules loaded from memory and kernel launches — runs on every
// machine. gpu_kernel_test and gpu_attention_test run the same layer on a
// real GPU.
//
// The first driver that loads stays loaded for the process, so the tests
// that expect a load to fail come first (ctest also runs each test in a
// process of its own).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/CudaModule.h"
#include "runtime/src/Status.h"
#include "tests/unit/cuda/fake_cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using attune::cuda::CudaModule;
using attune::cuda::Device;
using attune::runtime::statusMessage;

namespace {

class FakeDriver : public testing::Test {
protected:
  void TearDown() override { unsetenv("ATTUNE_FAKE_CUDA"); }
  static attune_status_t open(std::unique_ptr<Device> *device, int ordinal = 0) {
    return Device::open(ordinal, device, ATTUNE_FAKE_CUDA_DRIVER);
  }
  static bool says(const std::string &text) {
    return std::string(statusMessage()).find(text) != std::string::npos;
  }
};

TEST_F(FakeDriver, TooOldADriverIsNamed) {
  std::unique_ptr<Device> device;
  EXPECT_EQ(Device::open(0, &device, ATTUNE_FAKE_OLD_CUDA_DRIVER), ATTUNE_NO_DEVICE);
  EXPECT_EQ(device, nullptr);
  EXPECT_TRUE(says("has no cuEventElapsedTime_v2: it is older than CUDA 12.8")) << statusMessage();
}

TEST_F(FakeDriver, CuInitFailingIsNoDevice) {
  setenv("ATTUNE_FAKE_CUDA", "init_fails", 1);
  std::unique_ptr<Device> device;
  EXPECT_EQ(open(&device), ATTUNE_NO_DEVICE);
  EXPECT_TRUE(says("cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"))
      << statusMessage();
}

TEST_F(FakeDriver, NoDeviceIsNoDevice) {
  setenv("ATTUNE_FAKE_CUDA", "no_devices", 1);
  std::unique_ptr<Device> device;
  EXPECT_EQ(open(&device), ATTUNE_NO_DEVICE);
  EXPECT_TRUE(says("no CUDA device 0: the driver reports 0 devices")) << statusMessage();
}

TEST_F(FakeDriver, AnOrdinalBeyondTheDevicesIsNoDevice) {
  std::unique_ptr<Device> device;
  EXPECT_EQ(open(&device, 1), ATTUNE_NO_DEVICE);
  EXPECT_TRUE(says("no CUDA device 1: the driver reports 1 device")) << statusMessage();
  EXPECT_EQ(open(&device, -1), ATTUNE_NO_DEVICE);
}

TEST_F(FakeDriver, OpensAndDescribesTheDevice) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  EXPECT_EQ(device->name(), "attune fake GPU");
  EXPECT_EQ(device->multiprocessors(), 4);
  EXPECT_EQ(device->computeCapability(), 80);
  EXPECT_EQ(device->totalMemory(), size_t(1) << 30);
  EXPECT_NE(device->stream(), nullptr);
}

TEST_F(FakeDriver, MemoryRoundTripsAndTooLargeAnAllocationIsOutOfMemory) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  std::vector<int> data(100), back(100, -1);
  for (int i = 0; i < 100; ++i)
    data[i] = i * i;
  attune::cuda::api::CUdeviceptr a = 0, b = 0, none = 7;
  ASSERT_EQ(device->alloc(400, &a), ATTUNE_OK);
  ASSERT_EQ(device->alloc(400, &b), ATTUNE_OK);
  EXPECT_EQ(device->upload(a, data.data(), 400), ATTUNE_OK);
  EXPECT_EQ(device->copy(b, a, 400), ATTUNE_OK);
  EXPECT_EQ(device->download(back.data(), b, 400), ATTUNE_OK);
  EXPECT_EQ(back, data);
  EXPECT_EQ(device->synchronize(), ATTUNE_OK);
  EXPECT_EQ(device->free(a), ATTUNE_OK);
  EXPECT_EQ(device->free(b), ATTUNE_OK);

  // Nothing to allocate: no pointer, no error; freeing it is a no-op.
  EXPECT_EQ(device->alloc(0, &none), ATTUNE_OK);
  EXPECT_EQ(none, 0u);
  EXPECT_EQ(device->free(none), ATTUNE_OK);

  attune::cuda::api::CUdeviceptr huge = 7;
  EXPECT_EQ(device->alloc(size_t(2) << 30, &huge), ATTUNE_OUT_OF_MEMORY);
  EXPECT_EQ(huge, 0u);
  EXPECT_TRUE(says("cuMemAlloc of 2147483648 bytes failed: the attune fake GPU has 1073741824 bytes"))
      << statusMessage();
}

TEST_F(FakeDriver, TimerNeedsAStart) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  float ms = -1;
  {
    Device::Timer timer(*device);
    EXPECT_EQ(timer.stop(&ms), ATTUNE_INVALID_ARGUMENT);
    EXPECT_TRUE(says("Timer::stop without a start")) << statusMessage();
  }
  Device::Timer timer(*device);
  ASSERT_EQ(timer.start(), ATTUNE_OK) << statusMessage();
  ASSERT_EQ(timer.stop(&ms), ATTUNE_OK) << statusMessage();
  EXPECT_GE(ms, 0.f);
}

TEST_F(FakeDriver, DriverErrorsAreNamed) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  EXPECT_EQ(device->driver().check(1, "cuSomething"), ATTUNE_INTERNAL);
  EXPECT_TRUE(says("cuSomething failed: CUDA_ERROR_INVALID_VALUE")) << statusMessage();
  EXPECT_EQ(device->driver().check(2, "cuMemAlloc"), ATTUNE_OUT_OF_MEMORY);
  EXPECT_EQ(device->driver().check(999, "cuOther"), ATTUNE_INTERNAL);
  EXPECT_TRUE(says("cuOther failed: CUresult 999")) << statusMessage();
}

// --- Modules (CudaModule.cpp). The stand-in's images are "fake-module:"
// and the kernels' names.

TEST_F(FakeDriver, AModuleLoadsFromMemoryAndUnloadsWithItsObject) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  AttuneFakeCuda fake = attuneFakeCuda(ATTUNE_FAKE_CUDA_DRIVER);
  ASSERT_NE(fake.liveModules, nullptr);
  std::unique_ptr<CudaModule> module;
  ASSERT_EQ(CudaModule::load(*device, "fake-module: first second", &module), ATTUNE_OK)
      << statusMessage();
  EXPECT_EQ(&module->device(), device.get());
  EXPECT_EQ(fake.liveModules(), 1);
  attune::cuda::api::CUfunction first = nullptr, second = nullptr;
  EXPECT_EQ(module->function("first", &first), ATTUNE_OK) << statusMessage();
  EXPECT_EQ(module->function("second", &second), ATTUNE_OK) << statusMessage();
  EXPECT_NE(first, nullptr);
  EXPECT_NE(first, second);
  module.reset();
  EXPECT_EQ(fake.liveModules(), 0);
}

TEST_F(FakeDriver, AnImageTheDriverRefusesIsNamed) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  std::unique_ptr<CudaModule> module;
  EXPECT_EQ(CudaModule::load(*device, nullptr, &module), ATTUNE_INVALID_ARGUMENT);
  EXPECT_TRUE(says("CudaModule::load: no image")) << statusMessage();
  EXPECT_EQ(CudaModule::load(*device, "\177ELF for another GPU", &module), ATTUNE_INTERNAL);
  EXPECT_EQ(module, nullptr);
  EXPECT_TRUE(says("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE")) << statusMessage();
}

TEST_F(FakeDriver, AKernelTheModuleLacksIsNamed) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  std::unique_ptr<CudaModule> module;
  ASSERT_EQ(CudaModule::load(*device, "fake-module: attune_attention_plain64", &module), ATTUNE_OK)
      << statusMessage();
  attune::cuda::api::CUfunction function = nullptr;
  EXPECT_EQ(module->function("attune_attention_plain128", &function), ATTUNE_NOT_FOUND);
  EXPECT_EQ(function, nullptr);
  EXPECT_TRUE(says("the CUDA module has no kernel 'attune_attention_plain128'")) << statusMessage();
  EXPECT_EQ(module->function(nullptr, &function), ATTUNE_INVALID_ARGUMENT);
}

TEST_F(FakeDriver, ALaunchGoesOnTheDeviceStreamWithItsShapeAndArguments) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  AttuneFakeCuda fake = attuneFakeCuda(ATTUNE_FAKE_CUDA_DRIVER);
  ASSERT_NE(fake.lastLaunch, nullptr);
  ASSERT_NE(fake.onLaunch, nullptr);
  std::unique_ptr<CudaModule> module;
  ASSERT_EQ(CudaModule::load(*device, "fake-module: kernel", &module), ATTUNE_OK)
      << statusMessage();
  attune::cuda::api::CUfunction function = nullptr;
  ASSERT_EQ(module->function("kernel", &function), ATTUNE_OK) << statusMessage();

  // The hook runs inside cuLaunchKernel, while the arguments are valid.
  static int seen = 0;
  fake.onLaunch([](const AttuneFakeCudaLaunch *launch) {
    seen = *static_cast<const int *>(launch->params[0]);
  });
  int argument = 42;
  void *params[] = {&argument};
  const unsigned grid[3] = {3, 2, 5}, block[3] = {128, 1, 1};
  const int before = fake.lastLaunch()->launches;
  ASSERT_EQ(module->launch(function, grid, block, 1024, params), ATTUNE_OK) << statusMessage();
  fake.onLaunch(nullptr);
  const AttuneFakeCudaLaunch &launch = *fake.lastLaunch();
  EXPECT_EQ(launch.launches, before + 1);
  EXPECT_STREQ(launch.kernel, "kernel");
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 2u);
  EXPECT_EQ(launch.grid[2], 5u);
  EXPECT_EQ(launch.block[0], 128u);
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.sharedBytes, 1024u);
  EXPECT_EQ(launch.stream, static_cast<void *>(device->stream()));
  EXPECT_EQ(seen, 42);

  // The driver's refusal of a shape is named.
  const unsigned tooTall[3] = {1, 70000, 1};
  EXPECT_EQ(module->launch(function, tooTall, block, 0, params), ATTUNE_INTERNAL);
  EXPECT_TRUE(says("cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE")) << statusMessage();
  EXPECT_EQ(module->launch(nullptr, grid, block, 0, params), ATTUNE_INVALID_ARGUMENT);
}

TEST_F(FakeDriver, SharedMemoryBeyond48KiBRaisesTheKernelsLimitFirst) {
  std::unique_ptr<Device> device;
  ASSERT_EQ(open(&device), ATTUNE_OK) << statusMessage();
  AttuneFakeCuda fake = attuneFakeCuda(ATTUNE_FAKE_CUDA_DRIVER);
  ASSERT_NE(fake.lastLaunch, nullptr);
  std::unique_ptr<CudaModule> module;
  ASSERT_EQ(CudaModule::load(*device, "fake-module: raised direct", &module), ATTUNE_OK)
      << statusMessage();
  attune::cuda::api::CUfunction raised = nullptr, direct = nullptr;
  ASSERT_EQ(module->function("raised", &raised), ATTUNE_OK);
  ASSERT_EQ(module->function("direct", &direct), ATTUNE_OK);
  const unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  const unsigned bytes = 100 * 1024;

  // The stand-in, as the driver, refuses the launch without the attribute...
  {
    Device::Scope scope(*device);
    EXPECT_EQ(device->driver().cuLaunchKernel(direct, 1, 1, 1, 128, 1, 1, bytes, device->stream(),
                                              nullptr, nullptr),
              1 /* CUDA_ERROR_INVALID_VALUE */);
  }
  // ...which CudaModule::launch sets.
  ASSERT_EQ(module->launch(raised, grid, block, bytes, nullptr), ATTUNE_OK) << statusMessage();
  EXPECT_EQ(fake.lastLaunch()->sharedBytes, bytes);

  // Beyond what the device allows at all, the attribute is what fails.
  EXPECT_EQ(module->launch(raised, grid, block, 300 * 1024, nullptr), ATTUNE_INTERNAL);
  EXPECT_TRUE(says("cuFuncSetAttribute(max dynamic shared memory) failed: "
                   "CUDA_ERROR_INVALID_VALUE"))
      << statusMessage();
}

} // namespace
