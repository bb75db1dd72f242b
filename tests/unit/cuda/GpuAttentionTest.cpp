//===- GpuAttentionTest.cpp - the GPU attention kernels on a GPU ----------===//
//
// The kernels of GpuAttentionKernels.h, compiled by nvcc into
// gpu_attention.fatbin at build time, loaded with CudaModule and launched
// with launchAttention on the first GPU, against the float64 reference of
// AttentionReference.h: the emulated test's cases in bf16, f32 and f16
// (FlashAttentionEmuTest.cpp: the same cases on the same configurations,
// with the same tolerance, so the emulator and the hardware answer the same
// question); the split over keys (the kernel over query tiles x splits,
// then the combine kernel) for decoding, a causal block, and splits and
// whole batches that see no key; and one larger case (B=1, H=4, S=1024,
// bf16 or f16) per kernel the benchmark times, unsplit and with as many splits as
// the runtime picks for this GPU. Every array a case uses is uploaded; the
// result buffer starts as NaN, so a row the kernel leaves unwritten shows.
//
// Without a GPU every test skips with the reason (under ATTUNE_REQUIRE_GPU=1
// it fails instead). The fatbin is the build's, or the one
// $ATTUNE_GPU_ATTENTION_FATBIN names (the bundle's copy).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaModule.h"
#include "runtime/cuda/FusedAttention.h"
#include "runtime/src/Status.h"
#include "tests/unit/cuda/AttentionReference.h"
#include "tests/unit/cuda/GpuAttentionSupport.h"
#include "tests/unit/cuda/GpuTestSupport.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace attune::gpu {
namespace {

using attune::runtime::statusMessage;
using cuda::CudaModule;
using cuda::Device;
using testing::AttentionCase;
using testing::AttentionData;

/// One type per line of GpuAttentionKernels.h: its configuration, as the
/// fatbin's kernel was compiled with it, and the kernel's symbol.
namespace kernels {
#define ATTUNE_GPU_ATTENTION(NAME, D, DV, CAUSAL, MASK, PADDING, BIAS, SOFTCAP, ROT, INTER, TYPE)  \
  struct NAME {                                                                                    \
    using Config =                                                                                 \
        AttentionConfig<D, DV, CAUSAL, MASK, PADDING, BIAS, SOFTCAP, ROT, INTER, TYPE, TYPE,       \
                        false, typename ProductsFor<TYPE>::type>;                                  \
    static constexpr const char *kSymbol = "attune_attention_" #NAME;                              \
    static constexpr const char *kCombine = "attune_attention_" #NAME "_combine";                  \
  };
#include "tests/unit/cuda/GpuAttentionKernels.h"
#undef ATTUNE_GPU_ATTENTION
} // namespace kernels

/// Device copies of host arrays, freed with the object.
class DeviceArrays {
public:
  explicit DeviceArrays(Device &device) : device_(device) {}
  ~DeviceArrays() {
    for (cuda::api::CUdeviceptr pointer : pointers_)
      device_.free(pointer);
  }
  DeviceArrays(const DeviceArrays &) = delete;
  DeviceArrays &operator=(const DeviceArrays &) = delete;

  /// Replaces `field`, a host pointer to `bytes` bytes, with a device copy
  /// of them; a null field (an array the case does not have) stays null.
  /// False, with the runtime's message, when the device refuses.
  template <class T> bool put(T *&field, size_t bytes) {
    if (!field)
      return true;
    cuda::api::CUdeviceptr pointer = 0;
    if (device_.alloc(bytes, &pointer) != ATTUNE_OK)
      return false;
    pointers_.push_back(pointer);
    if (device_.upload(pointer, field, bytes) != ATTUNE_OK)
      return false;
    field = reinterpret_cast<T *>(pointer);
    return true;
  }

  /// `bytes` of uninitialised device memory into `pointer`.
  bool alloc(size_t bytes, cuda::api::CUdeviceptr *pointer) {
    if (device_.alloc(bytes, pointer) != ATTUNE_OK)
      return false;
    pointers_.push_back(*pointer);
    return true;
  }

private:
  Device &device_;
  std::vector<cuda::api::CUdeviceptr> pointers_;
};

/// How runOnDevice splits the keys: not at all, as the runtime would on
/// this GPU (attentionKeySplits), or into a given count (> 1).
constexpr int kNoSplit = 0, kRuntimeSplits = -1;

/// Runs `Kernel` on `device` over `data` with `keySplits` and puts the
/// result, as f32, in `got` (and the splits it ran with in `usedSplits`).
template <class Kernel>
void runOnDevice(Device &device, AttentionData &data, std::vector<float> *got,
                 int keySplits = kNoSplit, int *usedSplits = nullptr) {
  using Config = typename Kernel::Config;
  using In = typename Config::In;
  using Out = typename Config::Out;
  std::unique_ptr<CudaModule> module;
  std::string why = cuda::gputest::loadAttentionKernels(device, &module);
  ASSERT_EQ(why, "");

  const AttentionCase &c = data.c;
  AttentionParams p = data.params<In, Out>();
  const size_t query = size_t(c.batch) * c.heads * c.querySeq * c.headDim;
  const size_t key = size_t(c.batch) * c.kvHeads * c.keySeq * c.headDim;
  const size_t value = size_t(c.batch) * c.kvHeads * c.keySeq * c.valueDim;
  DeviceArrays arrays(device);
  ASSERT_TRUE(arrays.put(p.query, query * sizeof(In))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.key, key * sizeof(In))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.value, value * sizeof(In))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.result, data.resultBytes().size())) << statusMessage();
  ASSERT_TRUE(arrays.put(p.mask, data.mask.size() * sizeof(In))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.keyPadding, data.keyPadding.size())) << statusMessage();
  ASSERT_TRUE(arrays.put(p.biasTable, data.bias.size() * sizeof(In))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.biasRows, data.biasRows.size() * sizeof(int))) << statusMessage();
  ASSERT_TRUE(arrays.put(p.ropeTheta, data.theta.size() * sizeof(float))) << statusMessage();
  if (keySplits == kRuntimeSplits)
    p.packedGroup = cuda::attentionPackedGroup(p);
  p.keySplits = keySplits == kRuntimeSplits ? cuda::attentionKeySplits(p, device.multiprocessors())
                                            : keySplits;
  if (usedSplits)
    *usedSplits = p.keySplits;
  if (p.keySplits > 1) {
    p.splitKeys = cuda::attentionSplitKeys(p);
    const size_t floats = cuda::attentionPartialFloats(p, Config::kValueDim);
    const size_t rows = floats / (Config::kValueDim + 2);
    cuda::api::CUdeviceptr partial = 0;
    ASSERT_TRUE(arrays.alloc(floats * sizeof(float), &partial)) << statusMessage();
    p.partialResult = reinterpret_cast<float *>(partial);
    p.partialStats = p.partialResult + rows * Config::kValueDim;
  }

  ASSERT_EQ(cuda::launchAttention(device, *module, Kernel::kSymbol, Kernel::kCombine,
                                  Config::kHeadDim, Config::kValueDim, p),
            ATTUNE_OK)
      << statusMessage();
  // The kernel's own faults surface here.
  ASSERT_EQ(device.synchronize(), ATTUNE_OK) << statusMessage();
  ASSERT_EQ(device.download(data.resultBytes().data(),
                            reinterpret_cast<cuda::api::CUdeviceptr>(p.result),
                            data.resultBytes().size()),
            ATTUNE_OK)
      << statusMessage();
  *got = data.resultAsFloat<Out>();
}

template <class Kernel>
void expectMatches(Device &device, const AttentionCase &c, int keySplits = kNoSplit) {
  AttentionData data = testing::dataFor<typename Kernel::Config>(c);
  std::vector<float> got;
  int splits = 0;
  runOnDevice<Kernel>(device, data, &got, keySplits, &splits);
  if (::testing::Test::HasFatalFailure())
    return;
  SCOPED_TRACE("key splits: " + std::to_string(splits));
  testing::expectCloseToReference(data, got);
}

TEST(GpuAttention, EveryKernelIsInTheFatbin) {
  REQUIRE_DEVICE(device);
  std::unique_ptr<CudaModule> module;
  std::string why = cuda::gputest::loadAttentionKernels(*device, &module);
  ASSERT_EQ(why, "");
  for (const cuda::gputest::AttentionKernel &kernel : cuda::gputest::attentionKernels()) {
    cuda::api::CUfunction function = nullptr;
    EXPECT_EQ(module->function(kernel.symbol, &function), ATTUNE_OK) << statusMessage();
  }
}

// --- FlashAttentionEmuTest.cpp's cases, on the hardware.

TEST(GpuAttention, PlainWithPartialBlocks) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 2, c.querySeq = 100, c.keySeq = 100;
  expectMatches<kernels::plain64>(*device, c);
}

TEST(GpuAttention, CausalQueryBlockAtTheEndOfTheKeysWithGqaInBshd) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 150, c.bshd = true;
  expectMatches<kernels::causal64>(*device, c);
}

TEST(GpuAttention, RowsThatSeeNoKeyAreZero) {
  REQUIRE_DEVICE(device);
  // Sq > Sk: causal rows i < Sq - Sk see no key at all.
  AttentionCase c;
  c.querySeq = 80, c.keySeq = 40;
  AttentionData data = testing::dataFor<kernels::causal64::Config>(c);
  std::vector<float> got;
  runOnDevice<kernels::causal64>(*device, data, &got);
  if (HasFatalFailure())
    return;
  for (int i = 0; i < 40; ++i)
    for (int d = 0; d < 64; ++d)
      ASSERT_EQ(got[i * 64 + d], 0.0f) << "row " << i << " saw no key";
  testing::expectCloseToReference(data, got);
}

TEST(GpuAttention, AdditiveMaskAndKeyPaddingInBf16) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 1, c.querySeq = 65, c.keySeq = 90;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{90, 57}}; // batch 1 attends to its first 57 keys
  expectMatches<kernels::masked128>(*device, c);
}

TEST(GpuAttention, EveryKeyPaddedGivesZeros) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.batch = 2, c.querySeq = 20, c.keySeq = 30;
  c.keyPadding = {{30, 0}};
  AttentionData data = testing::dataFor<kernels::narrow::Config>(c);
  std::vector<float> got;
  runOnDevice<kernels::narrow>(*device, data, &got);
  if (HasFatalFailure())
    return;
  size_t perBatch = size_t(c.heads) * 20 * kernels::narrow::Config::kValueDim;
  for (size_t x = perBatch; x < 2 * perBatch; ++x)
    ASSERT_EQ(got[x], 0.0f);
  testing::expectCloseToReference(data, got);
}

TEST(GpuAttention, BiasTableWindowAndSoftcap) {
  REQUIRE_DEVICE(device);
  // An ALiBi-like bias with a sliding window of 40 keys (-inf before it),
  // whose visible range lets the kernel skip key blocks.
  AttentionCase c;
  c.heads = 3, c.kvHeads = 3, c.querySeq = 130, c.keySeq = 200;
  c.bias = AttentionCase::BiasAlibiWindow;
  c.window = 40;
  c.softcap = 5.0f;
  expectMatches<kernels::biased64>(*device, c);
}

TEST(GpuAttention, BucketedBiasTableWithAMaskInBf16) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 300, c.keySeq = 300;
  c.bias = AttentionCase::BiasBuckets;
  c.mask = AttentionCase::MaskPerBatch;
  expectMatches<kernels::buckets64>(*device, c);
}

TEST(GpuAttention, RopeOnHalfTheDimensions) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.heads = 2, c.kvHeads = 1, c.querySeq = 50, c.keySeq = 120;
  c.ropeOffset = 7;
  expectMatches<kernels::rope64>(*device, c);
}

TEST(GpuAttention, RopeInterleavedOnEveryDimension) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.querySeq = 64, c.keySeq = 64;
  expectMatches<kernels::rope_interleaved64>(*device, c);
}

TEST(GpuAttention, ValueSizeBelowHeadSizeWithPadding) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.batch = 2, c.querySeq = 33, c.keySeq = 77;
  c.keyPadding = {{77, 40}};
  expectMatches<kernels::narrow>(*device, c);
}

TEST(GpuAttention, F16StorageMultipliesInF16) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 1, c.querySeq = 65, c.keySeq = 150;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{150, 100}};
  c.keyPaddingBytes = 8;
  expectMatches<kernels::masked128_f16>(*device, c);
}

TEST(GpuAttention, F16CausalGqaInBshdAndDecodingOverSplits) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 150, c.bshd = true;
  expectMatches<kernels::causal64_f16>(*device, c);
  AttentionCase d;
  d.heads = 4, d.kvHeads = 1, d.querySeq = 2, d.keySeq = 700;
  d.packedGroup = 4;
  expectMatches<kernels::causal64_f16>(*device, d, 3);
}

TEST(GpuAttention, F16RopeAndBucketedBiasTable) {
  REQUIRE_DEVICE(device);
  AttentionCase c;
  c.heads = 2, c.kvHeads = 2, c.querySeq = 100, c.keySeq = 180, c.ropeOffset = 5;
  c.bias = AttentionCase::BiasBuckets;
  expectMatches<kernels::rope_buckets64_f16>(*device, c);
}

// --- The split over keys.

TEST(GpuAttention, DecodingSplitAsTheRuntimeSplitsIt) {
  REQUIRE_DEVICE(device);
  // One query row per head against 5000 keys (not whole key blocks), GQA
  // with each key/value head's query heads packed into its blocks.
  AttentionCase c;
  c.batch = 2, c.heads = 4, c.kvHeads = 2, c.querySeq = 1, c.keySeq = 5000;
  AttentionData data = testing::dataFor<kernels::bench128::Config>(c);
  std::vector<float> got;
  int splits = 0;
  runOnDevice<kernels::bench128>(*device, data, &got, kRuntimeSplits, &splits);
  if (HasFatalFailure())
    return;
  EXPECT_GT(splits, 1) << "8 blocks on " << device->multiprocessors() << " SMs were not split";
  testing::expectCloseToReference(data, got);
}

TEST(GpuAttention, CausalSplitWithPartialTilesInBshd) {
  REQUIRE_DEVICE(device);
  // 2 query tiles (the second partial) x 5 splits of 640 keys.
  AttentionCase c;
  c.heads = 2, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 3000, c.bshd = true;
  expectMatches<kernels::bench64_causal>(*device, c, 5);
}

TEST(GpuAttention, SplitsAndBatchesThatSeeNoKey) {
  REQUIRE_DEVICE(device);
  // Batch 0 attends to its first 100 keys, so 7 of its 8 splits see none;
  // batch 1 to none at all, which is zeros.
  AttentionCase c;
  c.batch = 2, c.querySeq = 20, c.keySeq = 1000;
  c.keyPadding = {{100, 0}};
  AttentionData data = testing::dataFor<kernels::narrow::Config>(c);
  std::vector<float> got;
  runOnDevice<kernels::narrow>(*device, data, &got, 8);
  if (HasFatalFailure())
    return;
  size_t perBatch = size_t(c.heads) * 20 * kernels::narrow::Config::kValueDim;
  for (size_t x = perBatch; x < 2 * perBatch; ++x)
    ASSERT_EQ(got[x], 0.0f);
  testing::expectCloseToReference(data, got);
}

// --- The benchmark's kernels at a size where every block walks many key
// blocks (16 of them), in bf16: unsplit, then as the runtime would run
// them here (64 blocks: split on a GPU with more than 40 SMs).

AttentionCase large() {
  AttentionCase c;
  c.batch = 1, c.heads = 4, c.kvHeads = 4, c.querySeq = 1024, c.keySeq = 1024;
  return c;
}

TEST(GpuAttention, LargeBench64) {
  REQUIRE_DEVICE(device);
  expectMatches<kernels::bench64>(*device, large());
  expectMatches<kernels::bench64>(*device, large(), kRuntimeSplits);
}

TEST(GpuAttention, LargeBench64Causal) {
  REQUIRE_DEVICE(device);
  expectMatches<kernels::bench64_causal>(*device, large());
  expectMatches<kernels::bench64_causal>(*device, large(), kRuntimeSplits);
}

TEST(GpuAttention, LargeBench128) {
  REQUIRE_DEVICE(device);
  expectMatches<kernels::bench128>(*device, large());
  expectMatches<kernels::bench128>(*device, large(), kRuntimeSplits);
}

TEST(GpuAttention, LargeBench128F16) {
  REQUIRE_DEVICE(device);
  expectMatches<kernels::bench128_f16>(*device, large());
  expectMatches<kernels::bench128_f16>(*device, large(), kRuntimeSplits);
}

TEST(GpuAttention, LargeBench128T5) {
  // T5's buckets: most key blocks lie past max_distance (one edge bucket).
  REQUIRE_DEVICE(device);
  AttentionCase c = large();
  c.bias = AttentionCase::BiasBuckets;
  expectMatches<kernels::bench128_t5>(*device, c);
  expectMatches<kernels::bench128_t5>(*device, c, kRuntimeSplits);
  expectMatches<kernels::bench64_t5>(*device, c);
}

TEST(GpuAttention, LargeBench128Padded) {
  // The last quarter of the keys padded: full blocks, one partly padded,
  // and padding-only blocks, which are skipped.
  REQUIRE_DEVICE(device);
  AttentionCase c = large();
  c.keyPadding = {c.keySeq - c.keySeq / 4 - 8};
  expectMatches<kernels::bench128_padded>(*device, c);
  expectMatches<kernels::bench128_padded>(*device, c, kRuntimeSplits);
}

TEST(GpuAttention, LargeBench128Causal) {
  REQUIRE_DEVICE(device);
  expectMatches<kernels::bench128_causal>(*device, large());
  expectMatches<kernels::bench128_causal>(*device, large(), kRuntimeSplits);
}

} // namespace
} // namespace attune::gpu
