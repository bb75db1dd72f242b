//===- CudaAttentionFakeTest.cpp - a fused GPU attention through the runtime, no GPU -===//
//
// tests/unit/cuda/Inputs/attention_only.mlir compiled with --target=cuda
// --precision=bf16 is one call of the library's own attention kernel (GQA,
// causal, a mask, key padding, RoPE, ALiBi, a window), and attention_t5.mlir
// another (an encoder's: T5's bias table read by bucket, GQA, a mask, key
// padding as Hugging Face's i64 attention_mask). This runs each through the whole
// runtime on the stand-in driver (fake_cuda_driver.c, whose device memory is
// host memory): attune_model_run stages the inputs, the generated run()
// calls the runtime's attention entry, which reads the operands' buffers,
// uploads the RoPE angles, loads the library's fatbin and launches its
// kernel. The stand-in records the launch, and this test's launch hook then
// runs the kernel the library was compiled with (FlashAttention.cuh, the
// same configuration, compiled for the host) on the warp emulator with the
// grid, block, shared memory and AttentionParams the runtime passed. The
// result must match the model compiled for the CPU (fused, f32 products)
// within the bf16 products' tolerance: |err| <= 1e-2 * max|v| + rel L2 <
// 5e-3. attention_f16.mlir is attention_only.mlir in f16, compiled with
// --target=cuda alone: its kernel multiplies in f16, and is held to 2e-3 *
// max|v| and 1e-3 (the f16 result's own rounding is 2^-11 of it; bf16
// products would not meet them); so is attention_only.mlir compiled with
// --precision=f16 (f32 data, f16 products). Also with the keys split (a decode-shaped
// call), which adds the combine kernel's launch. The models' ALiBi, window and T5 buckets check
// the slopes, visible range and bias rows the compiler derives from the
// modifiers, and the table the runtime passes.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "compiler/targets/cuda/attention/FlashAttention.cuh"
#include "tests/unit/cuda/WarpEmulator.h"
#include "tests/unit/cuda/fake_cuda_driver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attune::gpu;

/// What attention_only.mlir's and attention_t5.mlir's attentions compile
/// into (the kernels' configurations; the test checks the library's kernel
/// name says so).
using AlibiConfig = AttentionConfig<32, 32, /*causal=*/true, /*mask=*/true, /*keyPadding=*/true,
                                    /*bias=*/false, /*softcap=*/false, /*rotaryDims=*/16,
                                    /*interleaved=*/false, float, float, /*linearBias=*/true>;
using T5Config = AttentionConfig<32, 32, /*causal=*/false, /*mask=*/true, /*keyPadding=*/true,
                                 /*bias=*/true, /*softcap=*/false, /*rotaryDims=*/0,
                                 /*interleaved=*/false, float, float>;
/// attention_only.mlir with --precision=f16: f32 data, f16 products.
using AlibiF16ProductsConfig =
    AttentionConfig<32, 32, /*causal=*/true, /*mask=*/true, /*keyPadding=*/true,
                    /*bias=*/false, /*softcap=*/false, /*rotaryDims=*/16,
                    /*interleaved=*/false, float, float, /*linearBias=*/true, /*Product=*/f16>;
using AlibiF16Config =
    AttentionConfig<32, 32, /*causal=*/true, /*mask=*/true, /*keyPadding=*/true,
                    /*bias=*/false, /*softcap=*/false, /*rotaryDims=*/16,
                    /*interleaved=*/false, f16, f16, /*linearBias=*/true, /*Product=*/f16>;

/// A model of the test: its two builds, the fragment of its kernel's name
/// that says which configuration it is, and the launch hook that emulates
/// that configuration.
struct Model {
  const char *gpu, *cpu, *kernelName;
  void (*hook)(const AttuneFakeCudaLaunch *);
  /// The key padding's type: bool, or i64 as Hugging Face's attention_mask.
  bool paddingI64 = false;
  /// q, k, v, the mask and the result in f16 (else f32).
  bool f16 = false;
  /// f32 data multiplied in f16 (--precision=f16): f16's tolerance.
  bool f16Products = false;
};

int emulatedLaunches = 0;
std::string launchedKernels;
/// AttentionParams::packedGroup of the last attention kernel launched.
int lastPackedGroup = -1;

/// The stand-in driver's launch hook: runs the launched kernel on the
/// emulator with exactly what the runtime passed.
template <class Config> void runLaunch(const AttuneFakeCudaLaunch *launch) {
  std::string name = launch->kernel;
  launchedKernels += name + " ";
  const AttentionParams &params = *static_cast<const AttentionParams *>(launch->params[0]);
  emu::LaunchShape shape;
  for (int i = 0; i < 3; ++i)
    shape.grid[i] = static_cast<int>(launch->grid[i]);
  shape.threads = static_cast<int>(launch->block[0] * launch->block[1] * launch->block[2]);
  shape.sharedBytes = launch->sharedBytes;
  bool combine = name.size() > 8 && name.compare(name.size() - 8, 8, "_combine") == 0;
  if (combine) {
    emu::launch(shape, [&] { attentionCombine<Config>(params); });
  } else {
    lastPackedGroup = params.packedGroup;
    emu::launch(shape, [&] { flashAttention<Config>(params); });
  }
  ++emulatedLaunches;
}

struct Inputs {
  int64_t seq, keys;
  std::vector<float> q, k, v, mask, out;
  std::vector<unsigned char> padding;
  std::vector<int64_t> padding64; // the same as i64
  std::vector<uint16_t> q16, k16, v16, mask16, out16; // the same as f16
};

Inputs makeInputs(int64_t seq, int64_t keys, unsigned seed) {
  Inputs in{seq, keys};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  auto fill = [&](std::vector<float> &x, size_t n, float scale) {
    x.resize(n);
    for (float &e : x)
      e = scale * uniform(rng);
  };
  fill(in.q, 2 * 4 * seq * 32, 2.f);
  fill(in.k, 2 * 2 * keys * 32, 2.f);
  fill(in.v, 2 * 2 * keys * 32, 1.f);
  fill(in.mask, 2 * seq * keys, 1.f);
  in.padding.assign(2 * keys, 1);
  for (int64_t j = keys * 3 / 4; j < keys; ++j)
    in.padding[keys + j] = 0; // batch 1 ends with padding
  in.padding64.assign(in.padding.begin(), in.padding.end());
  in.out.assign(2 * 4 * seq * 32, std::nanf(""));
  return in;
}

/// Runs `library` (a build of `model`) on `in`; with an f16 model, on the
/// inputs rounded to f16 (which in's f32 copies then hold too).
attune_status_t run(attune_model_t *library, Inputs &in, const Model &model) {
  attune_tensor_t padding = {in.padding.data(), ATTUNE_DTYPE_BOOL, 2, {2, in.keys}};
  if (model.paddingI64)
    padding = {in.padding64.data(), ATTUNE_DTYPE_I64, 2, {2, in.keys}};
  void *q = in.q.data(), *k = in.k.data(), *v = in.v.data(), *mask = in.mask.data();
  void *out = in.out.data();
  if (model.f16) {
    auto toF16 = [](std::vector<float> &from, std::vector<uint16_t> &to) {
      to.resize(from.size());
      for (size_t i = 0; i < from.size(); ++i) {
        to[i] = uint16_t(toF16BitsOnHost(from[i]));
        from[i] = toFloat(f16{to[i]});
      }
      return to.data();
    };
    q = toF16(in.q, in.q16), k = toF16(in.k, in.k16), v = toF16(in.v, in.v16);
    mask = toF16(in.mask, in.mask16);
    in.out16.assign(in.out.size(), 0x7e00); // NaN
    out = in.out16.data();
  }
  const attune_dtype_t type = model.f16 ? ATTUNE_DTYPE_F16 : ATTUNE_DTYPE_F32;
  attune_tensor_t inputs[5] = {{q, type, 4, {2, 4, in.seq, 32}},
                               {k, type, 4, {2, 2, in.keys, 32}},
                               {v, type, 4, {2, 2, in.keys, 32}},
                               {mask, type, 4, {2, 1, in.seq, in.keys}},
                               padding};
  attune_tensor_t output = {out, type, 4, {2, 4, in.seq, 32}};
  attune_status_t status = attune_model_run(library, inputs, 5, &output, 1);
  if (model.f16)
    for (size_t i = 0; i < in.out.size(); ++i)
      in.out[i] = toFloat(f16{in.out16[i]});
  return status;
}

class CudaAttentionFake : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("ATTUNE_CUDA_DRIVER", ATTUNE_FAKE_CUDA_DRIVER, 1);
    setenv("ATTUNE_CUBLASLT", ATTUNE_FAKE_CUBLASLT, 1);
  }
};

const Model kAlibi = {ATTUNE_ATTENTION_ONLY_CUDA_BF16, ATTUNE_ATTENTION_ONLY_CPU,
                      "_causal_mask_kpm_bool_alibi_", &runLaunch<AlibiConfig>};
const Model kT5 = {ATTUNE_ATTENTION_T5_CUDA_BF16, ATTUNE_ATTENTION_T5_CPU, "_mask_kpm_i64_t5_",
                   &runLaunch<T5Config>, /*paddingI64=*/true};
const Model kAlibiF16 = {ATTUNE_ATTENTION_F16_CUDA, ATTUNE_ATTENTION_F16_CPU,
                         "attention_f16_d32_", &runLaunch<AlibiF16Config>,
                         /*paddingI64=*/false, /*f16=*/true};
const Model kAlibiF16Products = {ATTUNE_ATTENTION_ONLY_CUDA_F16, ATTUNE_ATTENTION_ONLY_CPU,
                                 "_alibi_", &runLaunch<AlibiF16ProductsConfig>,
                                 /*paddingI64=*/false, /*f16=*/false, /*f16Products=*/true};

void expectMatchesCpu(const Model &model, int64_t seq, int64_t keys, int expectedLaunches) {
  attune_model_t *gpu = nullptr, *cpu = nullptr;
  ASSERT_EQ(attune_model_open(model.gpu, &gpu), ATTUNE_OK) << attune_status_message();
  ASSERT_EQ(attune_model_open(model.cpu, &cpu), ATTUNE_OK) << attune_status_message();
  Inputs onGpu = makeInputs(seq, keys, 7), onCpu = makeInputs(seq, keys, 7);
  ASSERT_EQ(run(cpu, onCpu, model), ATTUNE_OK) << attune_status_message();

  // The stand-in driver is loaded by the first run; its hook then runs
  // every launch of the next one.
  Inputs warmUp = makeInputs(seq, keys, 7);
  emulatedLaunches = 0;
  attune_status_t first = run(gpu, warmUp, model);
  AttuneFakeCuda fake = attuneFakeCuda(ATTUNE_FAKE_CUDA_DRIVER);
  ASSERT_TRUE(fake.onLaunch && fake.lastLaunch) << "the stand-in driver is not loaded";
  ASSERT_EQ(first, ATTUNE_OK) << attune_status_message();
  fake.onLaunch(model.hook);
  launchedKernels.clear();
  ASSERT_EQ(run(gpu, onGpu, model), ATTUNE_OK) << attune_status_message();
  fake.onLaunch(nullptr);
  EXPECT_EQ(emulatedLaunches, expectedLaunches) << launchedKernels;
  EXPECT_NE(launchedKernels.find(model.kernelName), std::string::npos)
      << "the library's kernel is not the configuration this test emulates: "
      << launchedKernels;
  const AttuneFakeCudaLaunch *last = fake.lastLaunch();
  EXPECT_EQ(last->block[0], unsigned(kAttentionThreads));

  double maxV = 0, worst = 0, errSquares = 0, refSquares = 0;
  for (float x : onCpu.v)
    maxV = std::max(maxV, double(std::fabs(x)));
  for (size_t i = 0; i < onCpu.out.size(); ++i) {
    double err = std::fabs(double(onGpu.out[i]) - onCpu.out[i]);
    if (!(err <= worst))
      worst = std::isnan(err) ? INFINITY : err;
    errSquares += err * err;
    refSquares += double(onCpu.out[i]) * onCpu.out[i];
  }
  const double relL2 = std::sqrt(errSquares / refSquares);
  const bool f16Tolerance = model.f16 || model.f16Products;
  EXPECT_LE(worst, (f16Tolerance ? 2e-3 : 1e-2) * maxV);
  EXPECT_LT(relL2, f16Tolerance ? 1e-3 : 5e-3);
  if (std::getenv("ATTUNE_PRINT_ERRORS"))
    std::printf("max abs err %.3g of max|v| %.3g, rel L2 %.3g\n", worst, maxV, relL2);
  attune_model_close(gpu);
  attune_model_close(cpu);
}

TEST_F(CudaAttentionFake, PrefillMatchesTheCpuBuild) {
  // 3 query blocks of 64 against 150 keys: one launch, no split.
  expectMatchesCpu(kAlibi, /*seq=*/130, /*keys=*/150, /*expectedLaunches=*/1);
}

TEST_F(CudaAttentionFake, F16MultipliesInF16AndMatchesTheCpuBuild) {
  expectMatchesCpu(kAlibiF16, /*seq=*/130, /*keys=*/150, /*expectedLaunches=*/1);
}

TEST_F(CudaAttentionFake, F16PrecisionMultipliesF32InF16AndMatchesTheCpuBuild) {
  // --precision=f16: the kernel is the f16-products one, and its result is
  // within f16's tolerance of the f32 CPU build (bf16 products are not).
  expectMatchesCpu(kAlibiF16Products, /*seq=*/130, /*keys=*/150, /*expectedLaunches=*/1);
  EXPECT_NE(launchedKernels.find("_f16products"), std::string::npos) << launchedKernels;
}

TEST_F(CudaAttentionFake, T5BucketsMatchTheCpuBuild) {
  // 300 queries and keys: distances past max_distance (128) on both sides.
  expectMatchesCpu(kT5, /*seq=*/300, /*keys=*/300, /*expectedLaunches=*/1);
}

TEST_F(CudaAttentionFake, DecodeSplitsTheKeysAndCombines) {
  // Two query rows against 2000 keys: 8 blocks fill no H100 (132 SMs), so
  // the runtime splits the keys and launches the combine kernel after the
  // attention kernel. (The device is opened with the handle: the count is
  // read then.)
  setenv("ATTUNE_FAKE_CUDA_SMS", "132", 1);
  // The 4 query heads share 2 key/value heads: packed in pairs, except
  // beside T5's table, which is staged per head.
  expectMatchesCpu(kAlibi, /*seq=*/2, /*keys=*/2000, /*expectedLaunches=*/2);
  EXPECT_EQ(lastPackedGroup, 2);
  expectMatchesCpu(kT5, /*seq=*/2, /*keys=*/2000, /*expectedLaunches=*/2);
  EXPECT_EQ(lastPackedGroup, 1);
  expectMatchesCpu(kAlibiF16, /*seq=*/2, /*keys=*/2000, /*expectedLaunches=*/2);
  EXPECT_EQ(lastPackedGroup, 2);
  unsetenv("ATTUNE_FAKE_CUDA_SMS");
}

} // namespace
