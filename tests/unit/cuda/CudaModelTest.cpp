//===- CudaModelTest.cpp - --target=cuda libraries against their CPU builds -===//
//
// Example models compiled twice, for the GPU (--target=cuda) and for the
// CPU, and run through the runtime's C API on the same inputs: each GPU
// library's outputs must match its CPU build's (which e2e_test checks
// against the reference evaluator). The models cover what runs differently
// on the GPU: GPT-2's block (learned positions, tanh GELU), LLaMA's (RoPE,
// RMS norm, grouped-query heads, SiLU), T5's relative buckets, DeBERTa's
// disentangled terms, Shaw's value term, BERT's padding mask and erf GELU,
// and the encoder-decoder of the original Transformer.
//
// The libraries are found in one folder, <model>_cuda.so, <model>_cpu.so,
// <model>_cuda_bf16.so and _cuda_f16.so for some (--precision=bf16, f16) and
// <model>_cuda.safetensors (the weights all read: tests/unit/cuda/
// CMakeLists.txt compiles them with --no-pack-weights, so the files are the
// same): the one this build writes, or ATTUNE_CUDA_MODELS where
// scripts/gpu-bundle.sh carried them to a GPU machine. Without a GPU every
// test skips with the reason (fails under ATTUNE_REQUIRE_GPU=1).
//
// Inputs: every dynamic dimension named "batch" is B, every other S; token
// ids are random below their bound; a boolean mask keeps the first
// S - 2b positions of row b (so the second row of a batch has padding).
//
// Tolerance: the GPU runs attention unfused in f32 (cuBLASLt's f32
// products, another order of summation than the CPU's fused kernel) and
// libdevice's exp, erf and tanh; on outputs of order 1-10 that is a few
// 1e-6 relative. Each element must lie within 1e-4 of its output's largest
// magnitude, plus 1e-4 of its own.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "runtime/cuda/CudaDevice.h"
#include "tests/unit/cuda/GpuTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace attune::cuda;
using namespace attune::cuda::gputest;

std::string modelsDir() {
  const char *dir = std::getenv("ATTUNE_CUDA_MODELS");
  return dir && *dir ? dir : ATTUNE_BUILT_CUDA_MODELS;
}

/// The models in modelsDir() with a library <model><suffix>, sorted.
std::vector<std::string> models(const std::string &suffix = "_cuda.so") {
  std::vector<std::string> names;
  if (DIR *dir = opendir(modelsDir().c_str())) {
    while (dirent *entry = readdir(dir)) {
      std::string file = entry->d_name;
      if (file.size() > suffix.size() &&
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
        names.push_back(file.substr(0, file.size() - suffix.size()));
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Opened {
  attune_model_t *model = nullptr;
  Opened(const std::string &model_, const std::string &target) {
    std::string base = modelsDir() + "/" + model_;
    std::string library = base + "_" + target + ".so", weights = base + "_cuda.safetensors";
    EXPECT_EQ(attune_model_open_with_weights(library.c_str(), weights.c_str(), &model), ATTUNE_OK)
        << library << ": " << attune_status_message();
  }
  ~Opened() { attune_model_close(model); }
};

/// A model's inputs and outputs at batch B, sequence S, in host memory.
struct Tensors {
  std::vector<std::vector<unsigned char>> data;
  std::vector<attune_tensor_t> inputs, outputs;
};

Tensors makeTensors(attune_model_t *model, int64_t batch, int64_t seq, unsigned seed) {
  Tensors t;
  std::mt19937 rng(seed);
  auto shaped = [&](const attune_tensor_info_t &info) {
    attune_tensor_t tensor{};
    tensor.dtype = info.dtype;
    tensor.rank = info.rank;
    for (int32_t d = 0; d < info.rank; ++d)
      tensor.shape[d] = info.dims[d] >= 0                                    ? info.dims[d]
                        : std::strcmp(info.dim_names[d], "batch") == 0 ? batch
                                                                             : seq;
    return tensor;
  };
  const int32_t numInputs = attune_model_num_inputs(model);
  t.data.reserve(numInputs + attune_model_num_outputs(model));
  for (int32_t i = 0; i < numInputs; ++i) {
    attune_tensor_info_t info;
    EXPECT_EQ(attune_model_input_info(model, i, &info), ATTUNE_OK);
    attune_tensor_t tensor = shaped(info);
    int64_t count = 1;
    for (int32_t d = 0; d < tensor.rank; ++d)
      count *= tensor.shape[d];
    std::vector<unsigned char> bytes(count * attune_dtype_size(info.dtype));
    const int64_t row = tensor.rank ? tensor.shape[tensor.rank - 1] : 1;
    for (int64_t e = 0; e < count; ++e) {
      if (info.dtype == ATTUNE_DTYPE_I32) {
        int32_t bound = static_cast<int32_t>(info.index_bound > 0 ? info.index_bound : 100);
        int32_t v = std::uniform_int_distribution<int32_t>(0, bound - 1)(rng);
        std::memcpy(&bytes[e * 4], &v, 4);
      } else if (info.dtype == ATTUNE_DTYPE_BOOL) {
        bytes[e] = e % row < row - 2 * (e / row) ? 1 : 0;
      } else if (info.dtype == ATTUNE_DTYPE_F32) {
        float v = std::normal_distribution<float>(0.f, 1.f)(rng);
        std::memcpy(&bytes[e * 4], &v, 4);
      } else {
        ADD_FAILURE() << "input '" << info.name << "' has a dtype this test does not fill";
      }
    }
    t.data.push_back(std::move(bytes));
    tensor.data = t.data.back().data();
    t.inputs.push_back(tensor);
  }
  for (int32_t o = 0; o < attune_model_num_outputs(model); ++o) {
    attune_tensor_t shape{};
    EXPECT_EQ(attune_model_output_shape(model, t.inputs.data(), numInputs, o, &shape), ATTUNE_OK)
        << attune_status_message();
    int64_t count = 1;
    for (int32_t d = 0; d < shape.rank; ++d)
      count *= shape.shape[d];
    t.data.emplace_back(count * attune_dtype_size(shape.dtype), 0xff);
    shape.data = t.data.back().data();
    t.outputs.push_back(shape);
  }
  return t;
}

void expectClose(const attune_tensor_t &gpu, const attune_tensor_t &cpu, const std::string &what) {
  ASSERT_EQ(gpu.dtype, ATTUNE_DTYPE_F32) << what;
  int64_t count = 1;
  for (int32_t d = 0; d < cpu.rank; ++d)
    count *= cpu.shape[d];
  const float *g = static_cast<const float *>(gpu.data), *c = static_cast<const float *>(cpu.data);
  double largest = 0;
  for (int64_t i = 0; i < count; ++i)
    largest = std::max(largest, static_cast<double>(std::fabs(c[i])));
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double error = std::fabs(static_cast<double>(g[i]) - c[i]);
    worst = std::max(worst, error);
    if (!(error <= 1e-4 * largest + 1e-4 * std::fabs(c[i])) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << " on the GPU, " << c[i]
                    << " on the CPU";
  }
  EXPECT_EQ(bad, 0) << what << " (of " << count << ")";
  std::printf("%s: largest |cpu| %.3g, largest |gpu - cpu| %.3g\n", what.c_str(), largest, worst);
}

/// Runs `gpu` and `cpu` on the same inputs at `batch`, `seq`; false (with
/// the failure recorded) when a run fails.
bool runBoth(attune_model_t *gpu, attune_model_t *cpu, int64_t batch, int64_t seq,
             unsigned seed, Tensors &onGpu, Tensors &onCpu, const std::string &what) {
  onGpu = makeTensors(gpu, batch, seq, seed);
  onCpu = makeTensors(cpu, batch, seq, seed);
  for (auto [model, t, where] : {std::tuple(cpu, &onCpu, "CPU"), std::tuple(gpu, &onGpu, "GPU")})
    if (attune_model_run(model, t->inputs.data(), t->inputs.size(), t->outputs.data(),
                         t->outputs.size()) != ATTUNE_OK) {
      ADD_FAILURE() << what << " on the " << where << ": " << attune_status_message();
      return false;
    }
  return true;
}

class CudaModel : public testing::TestWithParam<std::string> {};

TEST_P(CudaModel, MatchesTheCpuBuild) {
  REQUIRE_DEVICE(device);
  Opened gpu(GetParam(), "cuda"), cpu(GetParam(), "cpu");
  ASSERT_TRUE(gpu.model && cpu.model);
  ASSERT_EQ(attune_model_device(gpu.model), ATTUNE_DEVICE_CUDA);
  // Odd lengths: no extent a multiple of a thread block or a cuBLASLt tile.
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 7}, {2, 33}, {1, 128}};
  for (auto [batch, seq] : sizes) {
    std::string what = GetParam() + " batch " + std::to_string(batch) + " seq " +
                       std::to_string(seq);
    Tensors onGpu, onCpu;
    ASSERT_TRUE(runBoth(gpu.model, cpu.model, batch, seq, 7 * seq + batch, onGpu, onCpu, what));
    for (size_t o = 0; o < onCpu.outputs.size(); ++o)
      expectClose(onGpu.outputs[o], onCpu.outputs[o], what + " output " + std::to_string(o));
  }
}

/// The same run on buffers already on the device gives the same outputs
/// (the same kernels and plans, so within rounding if not bit for bit), and
/// token ids there are range-checked as on the host.
TEST_P(CudaModel, RunsOnDeviceBuffers) {
  REQUIRE_DEVICE(device);
  Opened gpu(GetParam(), "cuda");
  ASSERT_TRUE(gpu.model);
  Tensors host = makeTensors(gpu.model, 1, 64, 5);
  ASSERT_EQ(attune_model_run(gpu.model, host.inputs.data(), host.inputs.size(),
                             host.outputs.data(), host.outputs.size()),
            ATTUNE_OK)
      << attune_status_message();
  std::vector<api::CUdeviceptr> buffers;
  std::vector<attune_tensor_t> inputs = host.inputs, outputs = host.outputs;
  auto onDevice = [&](attune_tensor_t &tensor, bool upload) {
    size_t bytes = attune_dtype_size(tensor.dtype);
    for (int32_t d = 0; d < tensor.rank; ++d)
      bytes *= tensor.shape[d];
    api::CUdeviceptr pointer = 0;
    ASSERT_EQ(device->alloc(bytes, &pointer), ATTUNE_OK);
    buffers.push_back(pointer);
    if (upload)
      ASSERT_EQ(device->upload(pointer, tensor.data, bytes), ATTUNE_OK);
    tensor.data = reinterpret_cast<void *>(pointer);
  };
  for (attune_tensor_t &tensor : inputs)
    onDevice(tensor, true);
  for (attune_tensor_t &tensor : outputs)
    onDevice(tensor, false);
  ASSERT_EQ(attune_model_run_device(gpu.model, inputs.data(), inputs.size(), outputs.data(),
                                    outputs.size()),
            ATTUNE_OK)
      << attune_status_message();
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::vector<unsigned char> back(host.data[inputs.size() + o].size());
    ASSERT_EQ(device->download(back.data(), reinterpret_cast<uintptr_t>(outputs[o].data),
                               back.size()),
              ATTUNE_OK);
    attune_tensor_t fromDevice = host.outputs[o];
    fromDevice.data = back.data();
    expectClose(fromDevice, host.outputs[o], GetParam() + " on device buffers, output " +
                                                 std::to_string(o));
  }
  // An id at its bound, at element 3 of the first input that has one.
  for (int32_t i = 0; i < static_cast<int32_t>(inputs.size()); ++i) {
    attune_tensor_info_t info;
    ASSERT_EQ(attune_model_input_info(gpu.model, i, &info), ATTUNE_OK);
    if (info.index_bound <= 0 || info.dtype != ATTUNE_DTYPE_I32)
      continue;
    int32_t outside = static_cast<int32_t>(info.index_bound);
    ASSERT_EQ(device->upload(reinterpret_cast<uintptr_t>(inputs[i].data) + 3 * sizeof(int32_t),
                             &outside, sizeof outside),
              ATTUNE_OK);
    EXPECT_EQ(attune_model_run_device(gpu.model, inputs.data(), inputs.size(), outputs.data(),
                                      outputs.size()),
              ATTUNE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(attune_status_message()).find("element 3"), std::string::npos)
        << attune_status_message();
    break;
  }
  for (api::CUdeviceptr pointer : buffers)
    device->free(pointer);
}

/// `variant` (<model>_cuda_bf16.so or _cuda_f16.so) against the f32 CPU
/// build: each output's relative L2 error below `bound`.
void expectWithinOfF32(const std::string &model, const char *variant, double bound) {
  Opened gpu(model, variant), cpu(model, "cpu");
  ASSERT_TRUE(gpu.model && cpu.model);
  const std::pair<int64_t, int64_t> sizes[] = {{1, 7}, {2, 33}, {1, 128}};
  for (auto [batch, seq] : sizes) {
    std::string what = model + " " + variant + " batch " + std::to_string(batch) + " seq " +
                       std::to_string(seq);
    Tensors onGpu, onCpu;
    ASSERT_TRUE(runBoth(gpu.model, cpu.model, batch, seq, 3 * seq + batch, onGpu, onCpu, what));
    for (size_t o = 0; o < onCpu.outputs.size(); ++o) {
      const float *g = static_cast<const float *>(onGpu.outputs[o].data);
      const float *c = static_cast<const float *>(onCpu.outputs[o].data);
      const size_t count = onCpu.data[onCpu.inputs.size() + o].size() / sizeof(float);
      double error = 0, norm = 0;
      for (size_t i = 0; i < count; ++i) {
        error += (double(g[i]) - c[i]) * (double(g[i]) - c[i]);
        norm += double(c[i]) * c[i];
      }
      const double relative = std::sqrt(error / norm);
      EXPECT_LT(relative, bound) << what << " output " << o;
      std::printf("%s output %zu: relative L2 error %.3g against f32\n", what.c_str(), o,
                  relative);
    }
  }
}

/// --precision=bf16 (<model>_cuda_bf16.so): the products round their
/// operands to bf16 (or TF32, cuBLASLt's choice) on tensor cores. Against
/// the f32 CPU build each output's relative L2 error must stay within 3e-2:
/// a block's products each round both operands (2^-9 relative), and the
/// errors of its dozen products add up; the f32 GPU build is 1e-5 away.
class CudaModelBf16 : public testing::TestWithParam<std::string> {};

TEST_P(CudaModelBf16, StaysWithinBf16OfTheF32Build) {
  REQUIRE_DEVICE(device);
  expectWithinOfF32(GetParam(), "cuda_bf16", 3e-2);
}

/// --precision=f16 (<model>_cuda_f16.so): the same with f16 operands
/// (2^-12 relative), within 1e-2.
class CudaModelF16 : public testing::TestWithParam<std::string> {};

TEST_P(CudaModelF16, StaysWithinF16OfTheF32Build) {
  REQUIRE_DEVICE(device);
  expectWithinOfF32(GetParam(), "cuda_f16", 1e-2);
}

std::string testName(const testing::TestParamInfo<std::string> &info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}
INSTANTIATE_TEST_SUITE_P(Examples, CudaModel, testing::ValuesIn(models()), testName);
INSTANTIATE_TEST_SUITE_P(Examples, CudaModelBf16, testing::ValuesIn(models("_cuda_bf16.so")),
                         testName);
INSTANTIATE_TEST_SUITE_P(Examples, CudaModelF16, testing::ValuesIn(models("_cuda_f16.so")),
                         testName);
// A build or bundle without the libraries finds no model: say so.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaModel);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaModelBf16);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaModelF16);
TEST(CudaModels, AreThere) {
  EXPECT_FALSE(models().empty()) << "no <model>_cuda.so in " << modelsDir();
}

} // namespace
