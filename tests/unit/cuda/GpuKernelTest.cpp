//===- GpuKernelTest.cpp - the CUDA runtime and kernels, run on a GPU -----===//
//
// What a library built for CUDA runs, tested where it runs: the runtime's
// dlopen'd driver (runtime/cuda/CudaDevice.h), cuBLASLt linear layers
// (CublasLt.h) and Halide kernels compiled ahead of time for sm_80 and called
// on device memory through HalideCuda.h. This binary links no Halide
// compiler, MLIR or LLVM, so it can be carried to a GPU machine as it is
// (scripts/gpu-bundle.sh).
//
// Everywhere: a missing driver or library is a status that names it, and a
// CUDA kernel with no device returns Halide's error instead of aborting.
// With a GPU (skipped with the reason elsewhere, failed instead under
// ATTUNE_REQUIRE_GPU=1):
//  - device memory round trips and an impossible allocation is
//    ATTUNE_OUT_OF_MEMORY;
//  - cuBLASLt linear layers in f32, tf32, bf16 and f16 with every epilogue,
//    and attention's batched products, against a double-precision reference
//    on the same (rounded) inputs;
//  - every Halide sample on the device against the same sample compiled for
//    the CPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/HalideCuda.h"
#include "tests/unit/cuda/GpuSampleManifest.h"
#include "tests/unit/cuda/GpuTestSupport.h"
#include "tests/unit/cuda/SampleChecks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace attune::cuda;
using namespace attune::cuda::gputest;

namespace {

TEST(CudaDevice, MissingDriverIsAStatus) {
  // First in this file, so that in a run of the whole binary no driver has
  // loaded yet: once one has, every later load returns it, whatever the path.
  std::unique_ptr<Device> device;
  attune_status_t status = Device::open(0, &device, "/nonexistent/libcuda.so.1");
  if (status == ATTUNE_OK)
    GTEST_SKIP() << "a driver was already loaded in this process";
  EXPECT_EQ(status, ATTUNE_NO_DEVICE);
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("/nonexistent/libcuda.so.1"),
            std::string::npos)
      << attune::runtime::statusMessage();
}

TEST(HalideCuda, KernelWithoutDeviceReturnsAnError) {
  std::unique_ptr<Device> device;
  if (openFirstDevice(&device).empty())
    GTEST_SKIP() << "this machine has a GPU";
  // The default Halide runtime would print the error; a library routes it
  // into its status. No device: the CUDA runtime's initialisation fails and
  // the kernel returns that, with a message, instead of aborting.
  routeHalideErrors();
  const GpuSample &sample = kGpuSamples[0];
  std::vector<DeviceTensor> tensors;
  for (const GpuTensorSpec &input : sample.inputs)
    tensors.emplace_back(0x1000, input.type, input.shape.data(), (int)input.shape.size());
  tensors.emplace_back(0x1000, sample.output.type, sample.output.shape.data(),
                       (int)sample.output.shape.size());
  std::vector<void *> args;
  for (DeviceTensor &tensor : tensors)
    args.push_back(tensor.get());
  EXPECT_NE(sample.cuda(args.data()), 0) << sample.name;
  EXPECT_NE(std::string(lastHalideError()).find("CUDA"), std::string::npos) << lastHalideError();
}

TEST(CudaDevice, MemoryRoundTrip) {
  REQUIRE_DEVICE(device);
  std::printf("device: %s, %d SMs, compute capability %d, %zu MiB\n", device->name().c_str(),
              device->multiprocessors(), device->computeCapability(),
              device->totalMemory() >> 20);
  EXPECT_GE(device->computeCapability(), 80);
  std::vector<float> data(1000), back(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = 0.5f * i;
  api::CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(device->alloc(4000, &a), ATTUNE_OK) << attune::runtime::statusMessage();
  ASSERT_EQ(device->alloc(4000, &b), ATTUNE_OK) << attune::runtime::statusMessage();
  ASSERT_EQ(device->upload(a, data.data(), 4000), ATTUNE_OK);
  ASSERT_EQ(device->copy(b, a, 4000), ATTUNE_OK);
  ASSERT_EQ(device->download(back.data(), b, 4000), ATTUNE_OK);
  EXPECT_EQ(back, data);
  EXPECT_EQ(device->free(a), ATTUNE_OK);
  EXPECT_EQ(device->free(b), ATTUNE_OK);

  // 1 PiB: refused by the device, reported with the size, nothing aborts.
  api::CUdeviceptr huge = 0;
  EXPECT_EQ(device->alloc(size_t(1) << 50, &huge), ATTUNE_OUT_OF_MEMORY);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("1125899906842624 bytes"),
            std::string::npos)
      << attune::runtime::statusMessage();
}

TEST(CublasLt, MissingLibraryIsAStatus) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CublasLt> lt;
  EXPECT_EQ(CublasLt::open(*device, &lt, "/nonexistent/libcublasLt.so.13"), ATTUNE_NO_DEVICE);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("/nonexistent/libcublasLt.so.13"),
            std::string::npos)
      << attune::runtime::statusMessage();
}

// --- cuBLASLt linear layers against a double-precision reference.

struct LinearCase {
  MatmulType type;
  Epilogue epilogue;
  bool weightTransposed;
};

std::string caseName(const testing::TestParamInfo<LinearCase> &info) {
  return std::string(matmulTypeName(info.param.type)) + "_" + epilogueName(info.param.epilogue) +
         (info.param.weightTransposed ? "_wT" : "");
}

class CublasLtLinear : public testing::TestWithParam<LinearCase> {};

/// The value `type` stores for `v` on the device, and back as a float.
float storedAs(MatmulType type, float v) {
  unsigned char bytes[4];
  encodeElement(type, v, bytes);
  return decodeElement(type, bytes);
}

TEST_P(CublasLtLinear, MatchesReference) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CublasLt> lt;
  ASSERT_EQ(CublasLt::open(*device, &lt), ATTUNE_OK) << attune::runtime::statusMessage();
  const LinearCase c = GetParam();
  // M is ragged (no multiple of any tile); K and N are multiples of 8, as
  // tensor-core layouts want for 16-bit data.
  LinearShape shape;
  shape.m = 203, shape.k = 96, shape.n = 136;
  shape.type = c.type, shape.epilogue = c.epilogue, shape.weightTransposed = c.weightTransposed;
  std::unique_ptr<LinearPlan> plan;
  ASSERT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_OK) << attune::runtime::statusMessage();

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float &x : v)
      x = storedAs(c.type, uniform(rng));
    return v;
  };
  const int64_t M = shape.m, K = shape.k, N = shape.n;
  std::vector<float> x = random(M * K), w = random(K * N), b = random(N);
  api::CUdeviceptr dx, dw, db, dy;
  const size_t e = elementBytes(c.type);
  ASSERT_EQ(device->alloc(M * K * e, &dx), ATTUNE_OK);
  ASSERT_EQ(device->alloc(K * N * e, &dw), ATTUNE_OK);
  ASSERT_EQ(device->alloc(N * e, &db), ATTUNE_OK);
  ASSERT_EQ(device->alloc(M * N * e, &dy), ATTUNE_OK);
  // w is [K, N]; transposed, the device gets [N, K].
  std::vector<float> wDevice = w;
  if (c.weightTransposed)
    for (int64_t kk = 0; kk < K; ++kk)
      for (int64_t n = 0; n < N; ++n)
        wDevice[n * K + kk] = w[kk * N + n];
  ASSERT_EQ(device->upload(dx, encode(c.type, x).data(), M * K * e), ATTUNE_OK);
  ASSERT_EQ(device->upload(dw, encode(c.type, wDevice).data(), K * N * e), ATTUNE_OK);
  ASSERT_EQ(device->upload(db, encode(c.type, b).data(), N * e), ATTUNE_OK);
  ASSERT_EQ(plan->run(dx, dw, db, dy), ATTUNE_OK) << attune::runtime::statusMessage();
  std::vector<unsigned char> y(M * N * e);
  ASSERT_EQ(device->download(y.data(), dy, y.size()), ATTUNE_OK)
      << attune::runtime::statusMessage();

  const bool bias = c.epilogue == Epilogue::Bias || c.epilogue == Epilogue::BiasRelu ||
                    c.epilogue == Epilogue::BiasGelu;
  size_t bad = 0;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0, magnitude = 0;
      for (int64_t kk = 0; kk < K; ++kk) {
        sum += double(x[m * K + kk]) * w[kk * N + n];
        magnitude += std::fabs(double(x[m * K + kk]) * w[kk * N + n]);
      }
      if (bias)
        sum += b[n], magnitude += std::fabs(b[n]);
      if (c.epilogue == Epilogue::Relu || c.epilogue == Epilogue::BiasRelu)
        sum = std::max(sum, 0.0);
      if (c.epilogue == Epilogue::Gelu || c.epilogue == Epilogue::BiasGelu)
        sum = 0.5 * sum * (1 + std::tanh(std::sqrt(2 / M_PI) * (sum + 0.044715 * sum * sum * sum)));
      // Tolerances: the products summed in fp32 (a few ulps of the sum of
      // magnitudes), TF32's inputs rounded to 10-bit mantissas (2^-11
      // relative each, so 2^-10 of the magnitudes), and a 16-bit output
      // rounded once (half an ulp: 2^-9 relative for bf16, 2^-12 for f16),
      // plus the activation's own float evaluation.
      double tolerance = 1e-6 * magnitude + 1e-6;
      if (c.type == MatmulType::TF32)
        tolerance += std::ldexp(magnitude, -10);
      if (c.type == MatmulType::BF16)
        tolerance += std::ldexp(std::fabs(sum), -8);
      if (c.type == MatmulType::F16)
        tolerance += std::ldexp(std::fabs(sum), -11);
      double got = decodeElement(c.type, &y[(m * N + n) * e]);
      if (!(std::fabs(got - sum) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "y[" << m << ", " << n << "] = " << got << ", reference " << sum
                      << " (tolerance " << tolerance << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << M * N;
  for (api::CUdeviceptr p : {dx, dw, db, dy})
    device->free(p);
}

std::vector<LinearCase> linearCases() {
  std::vector<LinearCase> cases;
  for (MatmulType type : {MatmulType::F32, MatmulType::TF32, MatmulType::BF16, MatmulType::F16})
    for (Epilogue epilogue : {Epilogue::None, Epilogue::Bias, Epilogue::BiasRelu, Epilogue::Gelu,
                              Epilogue::BiasGelu})
      cases.push_back({type, epilogue, false});
  cases.push_back({MatmulType::BF16, Epilogue::Bias, true});
  cases.push_back({MatmulType::F32, Epilogue::None, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, CublasLtLinear, testing::ValuesIn(linearCases()), caseName);

TEST(CublasLtLinear, BadShapesAndPointersAreStatuses) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CublasLt> lt;
  ASSERT_EQ(CublasLt::open(*device, &lt), ATTUNE_OK) << attune::runtime::statusMessage();
  LinearShape shape;
  shape.m = 0, shape.k = 64, shape.n = 64;
  std::unique_ptr<LinearPlan> plan;
  EXPECT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("M=0"), std::string::npos);

  shape.m = 8, shape.heuristicRank = 16;
  EXPECT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("heuristic rank 16"),
            std::string::npos);
  shape.heuristicRank = 0;

  // A plan given no weight, or no bias for a bias epilogue, says which.
  shape.m = 8, shape.epilogue = Epilogue::Bias;
  ASSERT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_OK) << attune::runtime::statusMessage();
  api::CUdeviceptr buffer = 0;
  ASSERT_EQ(device->alloc(64 * 64 * 4, &buffer), ATTUNE_OK);
  EXPECT_EQ(plan->run(buffer, 0, buffer, buffer), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("null weight"), std::string::npos);
  EXPECT_EQ(plan->run(buffer, buffer, 0, buffer), ATTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attune::runtime::statusMessage()).find("needs a bias"), std::string::npos);
  device->free(buffer);
}

/// Attention's products as batches: scores = alpha · q·kᵀ over 3 heads with
/// k transposed, then the same with one k shared by every head (stride 0,
/// as the heads of a grouped-query head share theirs).
TEST(CublasLtLinear, BatchedProductsLikeAttention) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CublasLt> lt;
  ASSERT_EQ(CublasLt::open(*device, &lt), ATTUNE_OK) << attune::runtime::statusMessage();
  const int64_t heads = 3, M = 37, D = 64, N = 50;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> q(heads * M * D), k(heads * N * D);
  for (float &v : q)
    v = uniform(rng);
  for (float &v : k)
    v = uniform(rng);
  api::CUdeviceptr dq, dk, ds;
  ASSERT_EQ(device->alloc(q.size() * 4, &dq), ATTUNE_OK);
  ASSERT_EQ(device->alloc(k.size() * 4, &dk), ATTUNE_OK);
  ASSERT_EQ(device->alloc(heads * M * N * 4, &ds), ATTUNE_OK);
  ASSERT_EQ(device->upload(dq, q.data(), q.size() * 4), ATTUNE_OK);
  ASSERT_EQ(device->upload(dk, k.data(), k.size() * 4), ATTUNE_OK);
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "one k for every head" : "a k per head");
    LinearShape shape;
    shape.m = M, shape.k = D, shape.n = N, shape.batch = heads;
    shape.weightTransposed = true, shape.alpha = 0.125f;
    if (shared)
      shape.batchStrideW = 0;
    std::unique_ptr<LinearPlan> plan;
    ASSERT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_OK)
        << attune::runtime::statusMessage();
    EXPECT_EQ(plan->flops(), 2.0 * heads * M * N * D);
    ASSERT_EQ(plan->run(dq, dk, 0, ds), ATTUNE_OK) << attune::runtime::statusMessage();
    std::vector<float> scores(heads * M * N);
    ASSERT_EQ(device->download(scores.data(), ds, scores.size() * 4), ATTUNE_OK);
    size_t bad = 0;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const float *kRow = &k[((shared ? 0 : h) * N + j) * D];
          double want = 0, magnitude = 0;
          for (int64_t d = 0; d < D; ++d) {
            want += double(q[(h * M + i) * D + d]) * kRow[d];
            magnitude += std::fabs(double(q[(h * M + i) * D + d]) * kRow[d]);
          }
          want *= 0.125;
          // fp32 products summed in fp32: a few ulps of the magnitudes.
          const double got = scores[(h * M + i) * N + j];
          if (!(std::fabs(got - want) <= 1e-6 * magnitude + 1e-6) && bad++ < 5)
            ADD_FAILURE() << "head " << h << " score [" << i << ", " << j << "] = " << got
                          << ", reference " << want;
        }
    EXPECT_EQ(bad, 0u);
  }
  LinearShape negative;
  negative.m = negative.k = negative.n = 8, negative.batchStrideX = -2;
  std::unique_ptr<LinearPlan> plan;
  EXPECT_EQ(LinearPlan::create(*lt, negative, &plan), ATTUNE_INVALID_ARGUMENT);
  for (api::CUdeviceptr p : {dq, dk, ds})
    device->free(p);
}

/// What a model library's views give cuBLASLt (runtime/cuda/ModelDevice.cpp):
/// x stored transposed ([K, M], transpose_a) with rows longer than M, w and
/// y with rows longer than N, every operand starting 4 bytes into its
/// allocation, as a slice of a workspace slot can.
TEST(CublasLtLinear, StridedTransposedAndUnaligned) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CublasLt> lt;
  ASSERT_EQ(CublasLt::open(*device, &lt), ATTUNE_OK) << attune::runtime::statusMessage();
  const int64_t M = 45, K = 70, N = 33, ldX = 50, ldW = 40, ldY = 36;
  LinearShape shape;
  shape.m = M, shape.k = K, shape.n = N;
  shape.inputTransposed = true, shape.ldX = ldX, shape.ldW = ldW, shape.ldY = ldY;
  shape.alignment = 4;
  std::unique_ptr<LinearPlan> plan;
  ASSERT_EQ(LinearPlan::create(*lt, shape, &plan), ATTUNE_OK) << attune::runtime::statusMessage();
  shape.ldY = N - 1;
  std::unique_ptr<LinearPlan> tooShort;
  EXPECT_EQ(LinearPlan::create(*lt, shape, &tooShort), ATTUNE_INVALID_ARGUMENT);
  shape.ldY = ldY, shape.alignment = 3;
  EXPECT_EQ(LinearPlan::create(*lt, shape, &tooShort), ATTUNE_INVALID_ARGUMENT);

  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> x(K * ldX), w(K * ldW);
  for (float &v : x)
    v = uniform(rng);
  for (float &v : w)
    v = uniform(rng);
  api::CUdeviceptr dx, dw, dy;
  ASSERT_EQ(device->alloc(x.size() * 4 + 4, &dx), ATTUNE_OK);
  ASSERT_EQ(device->alloc(w.size() * 4 + 4, &dw), ATTUNE_OK);
  ASSERT_EQ(device->alloc(M * ldY * 4 + 4, &dy), ATTUNE_OK);
  ASSERT_EQ(device->upload(dx + 4, x.data(), x.size() * 4), ATTUNE_OK);
  ASSERT_EQ(device->upload(dw + 4, w.data(), w.size() * 4), ATTUNE_OK);
  ASSERT_EQ(plan->run(dx + 4, dw + 4, 0, dy + 4), ATTUNE_OK) << attune::runtime::statusMessage();
  std::vector<float> y(M * ldY);
  ASSERT_EQ(device->download(y.data(), dy + 4, y.size() * 4), ATTUNE_OK);
  size_t bad = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < K; ++k) {
        want += double(x[k * ldX + m]) * w[k * ldW + n];
        magnitude += std::fabs(double(x[k * ldX + m]) * w[k * ldW + n]);
      }
      const double got = y[m * ldY + n];
      if (!(std::fabs(got - want) <= 1e-6 * magnitude + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "y[" << m << ", " << n << "] = " << got << ", reference " << want;
    }
  EXPECT_EQ(bad, 0u);
  for (api::CUdeviceptr p : {dx, dw, dy})
    device->free(p);
}

// --- The Halide samples on the device against the same samples on the CPU.

class GpuKernels : public testing::TestWithParam<const GpuSample *> {};

TEST_P(GpuKernels, MatchCpu) {
  REQUIRE_DEVICE(device);
  HalideOnDevice halide(*device);
  const GpuSample &sample = *GetParam();
  std::mt19937 rng(7);
  std::vector<Halide::Runtime::Buffer<>> inputs;
  for (const GpuTensorSpec &spec : sample.inputs) {
    inputs.emplace_back(spec.type, spec.shape);
    fillRandom(inputs.back(), sample.indexLimit, rng);
  }
  Halide::Runtime::Buffer<> want(sample.output.type, sample.output.shape);
  std::vector<void *> args;
  for (auto &input : inputs)
    args.push_back(input.raw_buffer());
  args.push_back(want.raw_buffer());
  ASSERT_EQ(sample.cpu(args.data()), 0) << sample.name << " on the CPU: " << lastHalideError();

  // The same inputs in device memory only.
  std::vector<api::CUdeviceptr> pointers;
  std::vector<DeviceTensor> tensors;
  auto toDevice = [&](const Halide::Runtime::Buffer<> &host, bool upload) {
    api::CUdeviceptr pointer = 0;
    EXPECT_EQ(device->alloc(host.size_in_bytes(), &pointer), ATTUNE_OK);
    if (upload) {
      EXPECT_EQ(device->upload(pointer, host.data(), host.size_in_bytes()), ATTUNE_OK);
    }
    pointers.push_back(pointer);
    std::vector<int> shape;
    for (int d = 0; d < host.dimensions(); ++d)
      shape.push_back(host.dim(d).extent());
    tensors.emplace_back(pointer, host.type(), shape.data(), (int)shape.size());
  };
  for (auto &input : inputs)
    toDevice(input, true);
  toDevice(want, false);
  args.clear();
  for (DeviceTensor &tensor : tensors)
    args.push_back(tensor.get());
  ASSERT_EQ(runHalideKernel(*device, sample.name, sample.cuda, args.data()), ATTUNE_OK)
      << attune::runtime::statusMessage();
  Halide::Runtime::Buffer<> got(sample.output.type, sample.output.shape);
  ASSERT_EQ(device->download(got.data(), pointers.back(), got.size_in_bytes()), ATTUNE_OK);

  expectSameOutputs(got, want);
  for (api::CUdeviceptr pointer : pointers)
    device->free(pointer);
}

std::vector<const GpuSample *> allSamples() {
  std::vector<const GpuSample *> out;
  for (const GpuSample &sample : kGpuSamples)
    out.push_back(&sample);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Samples, GpuKernels, testing::ValuesIn(allSamples()),
                         [](const testing::TestParamInfo<const GpuSample *> &info) {
                           return std::string(info.param->name);
                         });

} // namespace
