//===- CudaRuntimeFakeTest.cpp - a CUDA library through the runtime, no GPU -===//
//
// tests/unit/cuda/Inputs/matmul_only.mlir compiled with --target=cuda calls
// no Halide kernel, only cuBLASLt products, so the runtime can run it end to
// end on fake_cuda_driver.c (device memory is host memory) and
// fake_cublaslt.c (the products as loops): the first run opening the device
// and uploading the weights, the constants copied to the head of the device
// workspace (again when it grows), host buffers staged in and out, one plan
// per product and shape, device buffers, token checks, the profile. The
// outputs must match the same model compiled for the CPU. What this cannot
// cover, the Halide CUDA kernels, cuda_model_test runs on a GPU.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Opened {
  attune_model_t *model = nullptr;
  explicit Opened(const char *path) {
    EXPECT_EQ(attune_model_open(path, &model), ATTUNE_OK) << path << ": "
                                                          << attune_status_message();
  }
  ~Opened() { attune_model_close(model); }
};

/// Runs `model` on x[tokens, 4] (host or "device" memory: the fake
/// driver's device addresses are host addresses) and returns y[tokens, 5].
std::vector<float> run(attune_model_t *model, const std::vector<float> &x, bool onDevice = false) {
  const int64_t tokens = static_cast<int64_t>(x.size() / 4);
  std::vector<float> y(tokens * 5, std::nanf(""));
  attune_tensor_t input{const_cast<float *>(x.data()), ATTUNE_DTYPE_F32, 2, {tokens, 4}};
  attune_tensor_t output{y.data(), ATTUNE_DTYPE_F32, 2, {tokens, 5}};
  attune_status_t status = onDevice ? attune_model_run_device(model, &input, 1, &output, 1)
                                    : attune_model_run(model, &input, 1, &output, 1);
  EXPECT_EQ(status, ATTUNE_OK) << attune_status_message();
  return y;
}

std::vector<float> randomInput(int64_t tokens, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(tokens * 4);
  for (float &v : x)
    v = normal(rng);
  return x;
}

void expectSame(const std::vector<float> &gpu, const std::vector<float> &cpu) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_NEAR(gpu[i], cpu[i], 1e-5f * (1 + std::fabs(cpu[i]))) << "y element " << i;
}

class CudaRuntimeOnFakes : public testing::Test {
protected:
  void SetUp() override {
    setenv("ATTUNE_CUDA_DRIVER", ATTUNE_FAKE_CUDA_DRIVER, 1);
    setenv("ATTUNE_CUBLASLT", ATTUNE_FAKE_CUBLASLT, 1);
  }
};

TEST_F(CudaRuntimeOnFakes, MatchesTheCpuBuild) {
  Opened gpu(ATTUNE_MATMUL_ONLY_CUDA), cpu(ATTUNE_MATMUL_ONLY_CPU);
  ASSERT_TRUE(gpu.model && cpu.model);
  ASSERT_EQ(attune_model_device(gpu.model), ATTUNE_DEVICE_CUDA);
  // Growing shapes: new plans, a larger workspace, the constants copied
  // into it again; then a smaller one that reuses both.
  for (int64_t tokens : {3, 9, 40, 5}) {
    SCOPED_TRACE("tokens " + std::to_string(tokens));
    std::vector<float> x = randomInput(tokens, static_cast<unsigned>(tokens));
    expectSame(run(gpu.model, x), run(cpu.model, x));
  }
}

TEST_F(CudaRuntimeOnFakes, RunsOnDeviceBuffers) {
  Opened gpu(ATTUNE_MATMUL_ONLY_CUDA), cpu(ATTUNE_MATMUL_ONLY_CPU);
  ASSERT_TRUE(gpu.model && cpu.model);
  std::vector<float> x = randomInput(11, 1);
  expectSame(run(gpu.model, x, /*onDevice=*/true), run(cpu.model, x));
  // The CPU model takes no device buffers.
  attune_tensor_t input{x.data(), ATTUNE_DTYPE_F32, 2, {11, 4}};
  std::vector<float> y(55);
  attune_tensor_t output{y.data(), ATTUNE_DTYPE_F32, 2, {11, 5}};
  EXPECT_EQ(attune_model_run_device(cpu.model, &input, 1, &output, 1), ATTUNE_INVALID_ARGUMENT);
  // Shapes are checked before the device is touched.
  output.shape[1] = 4;
  EXPECT_EQ(attune_model_run_device(gpu.model, &input, 1, &output, 1), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune_status_message()).find("output 'y': expected shape [11, 5]"),
            std::string::npos)
      << attune_status_message();
}

TEST_F(CudaRuntimeOnFakes, ProfileNamesEveryCall) {
  setenv("ATTUNE_CUDA_PROFILE", "1", 1);
  testing::internal::CaptureStderr();
  {
    Opened gpu(ATTUNE_MATMUL_ONLY_CUDA);
    ASSERT_TRUE(gpu.model);
    run(gpu.model, randomInput(6, 2));
    run(gpu.model, randomInput(6, 3));
  }
  std::string printed = testing::internal::GetCapturedStderr();
  unsetenv("ATTUNE_CUDA_PROFILE");
  EXPECT_NE(printed.find("GPU time of model 'matmuls' by kernel over 2 runs"), std::string::npos)
      << printed;
  // Two linears and one batched product a run.
  EXPECT_NE(printed.find("2.0  cublasLt linear"), std::string::npos) << printed;
  EXPECT_NE(printed.find("1.0  cublasLt batched matmul"), std::string::npos) << printed;
}

/// The relative L2 distance of `library`'s output from the f32 CPU build's.
double relativeToCpu(const char *library) {
  Opened rounded(library), cpu(ATTUNE_MATMUL_ONLY_CPU);
  EXPECT_TRUE(rounded.model && cpu.model);
  if (!rounded.model || !cpu.model)
    return -1;
  std::vector<float> x = randomInput(32, 7);
  std::vector<float> got = run(rounded.model, x), want = run(cpu.model, x);
  double error = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    error += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += want[i] * double(want[i]);
  }
  return std::sqrt(error / norm);
}

/// --precision=bf16: the products round their operands to bf16 (the fake
/// cuBLASLt does what CUBLAS_COMPUTE_32F_FAST_16BF allows), so the output
/// moves from the f32 one by bf16's error and no more: relative L2 within
/// 2e-2 (each of the three products rounds both operands, 2^-9 relative
/// each), and above 1e-5, so that f32 products would fail it.
TEST_F(CudaRuntimeOnFakes, Bf16ProductsRoundTheOperands) {
  const double relative = relativeToCpu(ATTUNE_MATMUL_ONLY_CUDA_BF16);
  EXPECT_LT(relative, 2e-2);
  EXPECT_GT(relative, 1e-5) << "the products did not round to bf16";
  std::printf("bf16 products: relative L2 error %.3g against f32\n", relative);
}

/// --precision=f16: the same with f16 (CUBLAS_COMPUTE_32F_FAST_16F): 2^-12
/// relative each, so within 3e-3, which bf16 products would not meet,
/// and above 1e-6.
TEST_F(CudaRuntimeOnFakes, F16ProductsRoundTheOperands) {
  const double relative = relativeToCpu(ATTUNE_MATMUL_ONLY_CUDA_F16);
  EXPECT_LT(relative, 3e-3);
  EXPECT_GT(relative, 1e-6) << "the products did not round to f16";
  std::printf("f16 products: relative L2 error %.3g against f32\n", relative);
}

/// A library's kernels live in the device's shared context, so they are
/// released with its last open handle: closing one of two handles must not
/// pull them from under the other.
TEST_F(CudaRuntimeOnFakes, KernelsAreReleasedWithTheLastHandle) {
  void *library = dlopen(ATTUNE_CUDA_STUB_MODEL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(library) << dlerror();
  auto releases = reinterpret_cast<int (*)()>(dlsym(library, "cuda_stub_model_releases"));
  ASSERT_TRUE(releases);
  auto *first = new Opened(ATTUNE_CUDA_STUB_MODEL);
  auto *second = new Opened(ATTUNE_CUDA_STUB_MODEL);
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  attune_tensor_t input{x, ATTUNE_DTYPE_F32, 1, {4}}, output{y, ATTUNE_DTYPE_F32, 1, {4}};
  for (Opened *handle : {first, second})
    ASSERT_EQ(attune_model_run(handle->model, &input, 1, &output, 1), ATTUNE_OK)
        << attune_status_message();
  EXPECT_EQ(y[3], 4.f);
  const int before = releases();
  delete first;
  EXPECT_EQ(releases(), before) << "released while another handle is open";
  ASSERT_EQ(attune_model_run(second->model, &input, 1, &output, 1), ATTUNE_OK);
  delete second;
  EXPECT_EQ(releases(), before + 1);
  dlclose(library);
}

TEST_F(CudaRuntimeOnFakes, MissingCublasLtIsNoDevice) {
  setenv("ATTUNE_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
  Opened gpu(ATTUNE_MATMUL_ONLY_CUDA);
  ASSERT_TRUE(gpu.model);
  std::vector<float> x = randomInput(2, 4), y(10);
  attune_tensor_t input{x.data(), ATTUNE_DTYPE_F32, 2, {2, 4}};
  attune_tensor_t output{y.data(), ATTUNE_DTYPE_F32, 2, {2, 5}};
  EXPECT_EQ(attune_model_run(gpu.model, &input, 1, &output, 1), ATTUNE_NO_DEVICE);
  EXPECT_NE(std::string(attune_status_message()).find("/nonexistent/libcublasLt.so.13"),
            std::string::npos)
      << attune_status_message();
  // The handle stays usable once cuBLASLt is there.
  setenv("ATTUNE_CUBLASLT", ATTUNE_FAKE_CUBLASLT, 1);
  EXPECT_EQ(attune_model_run(gpu.model, &input, 1, &output, 1), ATTUNE_OK)
      << attune_status_message();
}

} // namespace
