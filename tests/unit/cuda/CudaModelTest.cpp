//===- CudaModelTest.cpp - a --target=cuda library against the CPU build --===//
//
// examples/gpt2-block compiled twice, for the GPU (--target=cuda) and for
// the CPU, run through the runtime's C API on the same token ids: the GPU
// library's outputs must match the CPU library's (which e2e_test checks
// against the reference evaluator). The libraries are the ones this build
// compiles (tests/unit/cuda/CMakeLists.txt), or ATTUNE_CUDA_MODEL and
// ATTUNE_CPU_MODEL where scripts/gpu-bundle.sh carried them to a GPU
// machine. Without a GPU every test skips with the reason (fails under
// ATTUNE_REQUIRE_GPU=1).
//
// Tolerance: the GPU runs attention unfused in f32 (cuBLASLt's f32 products,
// another order of summation than the CPU's fused kernel) and libdevice's
// exp and tanh; on a block's outputs of order 1-10 that is a few 1e-6
// relative. Each element must lie within 1e-4 of the output's largest
// magnitude (plus 1e-4 of its own).
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "runtime/cuda/CudaDevice.h"
#include "tests/unit/cuda/GpuTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attune::cuda;
using namespace attune::cuda::gputest;

#define REQUIRE_GPU(device)                                                                        \
  std::unique_ptr<Device> device;                                                                  \
  if (std::string why = openFirstDevice(&device); !why.empty()) {                                  \
    if (gpuRequired())                                                                             \
      FAIL() << "ATTUNE_REQUIRE_GPU=1 but " << why;                                                \
    GTEST_SKIP() << "GPU execution not checked: " << why;                                          \
  }

std::string libraryPath(const char *variable, const char *built) {
  const char *path = std::getenv(variable);
  return path && *path ? path : built;
}

struct Opened {
  attune_model_t *model = nullptr;
  explicit Opened(const std::string &path) {
    EXPECT_EQ(attune_model_open(path.c_str(), &model), ATTUNE_OK)
        << path << ": " << attune_status_message();
  }
  ~Opened() { attune_model_close(model); }
};

/// Random token ids in [0, bound) for [1, seq].
std::vector<int32_t> randomIds(int64_t seq, int64_t bound, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(bound - 1));
  std::vector<int32_t> ids(seq);
  for (int32_t &v : ids)
    v = id(rng);
  return ids;
}

/// gpt2_block's one input and one output at [1, seq].
struct Block {
  std::vector<int32_t> ids;
  std::vector<float> hidden;
  attune_tensor_t input{}, output{};
  Block(std::vector<int32_t> tokens, int64_t width) : ids(std::move(tokens)) {
    const int64_t seq = static_cast<int64_t>(ids.size());
    hidden.assign(seq * width, std::nanf(""));
    input = {ids.data(), ATTUNE_DTYPE_I32, 2, {1, seq}};
    output = {hidden.data(), ATTUNE_DTYPE_F32, 3, {1, seq, width}};
  }
};

void expectClose(const std::vector<float> &gpu, const std::vector<float> &cpu,
                 const std::string &what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  double largest = 0;
  for (float v : cpu)
    largest = std::max(largest, static_cast<double>(std::fabs(v)));
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double error = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    worst = std::max(worst, error);
    if (!(error <= 1e-4 * largest + 1e-4 * std::fabs(cpu[i])) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i] << " on the GPU, "
                    << cpu[i] << " on the CPU";
  }
  EXPECT_EQ(bad, 0u) << what;
  std::printf("%s: largest |cpu| %.3g, largest |gpu - cpu| %.3g\n", what.c_str(), largest, worst);
}

TEST(CudaModel, MatchesTheCpuBuild) {
  REQUIRE_GPU(device);
  Opened gpu(libraryPath("ATTUNE_CUDA_MODEL", ATTUNE_BUILT_CUDA_MODEL));
  Opened cpu(libraryPath("ATTUNE_CPU_MODEL", ATTUNE_BUILT_CPU_MODEL));
  ASSERT_TRUE(gpu.model && cpu.model);
  ASSERT_EQ(attune_model_device(gpu.model), ATTUNE_DEVICE_CUDA);
  attune_tensor_info_t ids, hidden;
  ASSERT_EQ(attune_model_input_info(gpu.model, 0, &ids), ATTUNE_OK);
  ASSERT_EQ(attune_model_output_info(gpu.model, 0, &hidden), ATTUNE_OK);
  // Odd lengths: no extent a multiple of a thread block or a cuBLASLt tile.
  for (int64_t seq : {1, 7, 128, 333, 512}) {
    std::vector<int32_t> tokens = randomIds(seq, ids.index_bound, 11 + seq);
    Block onGpu(tokens, hidden.dims[2]), onCpu(tokens, hidden.dims[2]);
    ASSERT_EQ(attune_model_run(gpu.model, &onGpu.input, 1, &onGpu.output, 1), ATTUNE_OK)
        << "seq " << seq << ": " << attune_status_message();
    ASSERT_EQ(attune_model_run(cpu.model, &onCpu.input, 1, &onCpu.output, 1), ATTUNE_OK)
        << attune_status_message();
    expectClose(onGpu.hidden, onCpu.hidden, "seq " + std::to_string(seq));
  }
}

TEST(CudaModel, RunsOnDeviceBuffers) {
  REQUIRE_GPU(device);
  Opened gpu(libraryPath("ATTUNE_CUDA_MODEL", ATTUNE_BUILT_CUDA_MODEL));
  ASSERT_TRUE(gpu.model);
  attune_tensor_info_t ids, hidden;
  ASSERT_EQ(attune_model_input_info(gpu.model, 0, &ids), ATTUNE_OK);
  ASSERT_EQ(attune_model_output_info(gpu.model, 0, &hidden), ATTUNE_OK);
  const int64_t seq = 64, width = hidden.dims[2];
  Block onHost(randomIds(seq, ids.index_bound, 5), width);
  ASSERT_EQ(attune_model_run(gpu.model, &onHost.input, 1, &onHost.output, 1), ATTUNE_OK)
      << attune_status_message();

  api::CUdeviceptr dIds = 0, dHidden = 0;
  ASSERT_EQ(device->alloc(seq * sizeof(int32_t), &dIds), ATTUNE_OK);
  ASSERT_EQ(device->alloc(seq * width * sizeof(float), &dHidden), ATTUNE_OK);
  ASSERT_EQ(device->upload(dIds, onHost.ids.data(), seq * sizeof(int32_t)), ATTUNE_OK);
  attune_tensor_t input{reinterpret_cast<void *>(dIds), ATTUNE_DTYPE_I32, 2, {1, seq}};
  attune_tensor_t output{reinterpret_cast<void *>(dHidden), ATTUNE_DTYPE_F32, 3,
                         {1, seq, width}};
  ASSERT_EQ(attune_model_run_device(gpu.model, &input, 1, &output, 1), ATTUNE_OK)
      << attune_status_message();
  std::vector<float> back(seq * width);
  ASSERT_EQ(device->download(back.data(), dHidden, back.size() * sizeof(float)), ATTUNE_OK);
  EXPECT_EQ(back, onHost.hidden) << "the same kernels on the same inputs";

  // Token ids on the device are range-checked as on the host.
  int32_t outside = static_cast<int32_t>(ids.index_bound);
  ASSERT_EQ(device->upload(dIds + 3 * sizeof(int32_t), &outside, sizeof outside), ATTUNE_OK);
  EXPECT_EQ(attune_model_run_device(gpu.model, &input, 1, &output, 1), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune_status_message()).find("element 3"), std::string::npos)
      << attune_status_message();
  device->free(dIds);
  device->free(dHidden);
}

} // namespace
