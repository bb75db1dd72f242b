//===- FusedAttentionFakeTest.cpp - the attention launch on a fake driver -===//
//
// runtime/cuda/FusedAttention.cpp against fake_cuda_driver.c: the launch
// geometry of FlashAttention.cuh's kernel (ceil(querySeq / 64) x heads x
// batch blocks of 128 threads, attentionSharedBytes of dynamic shared
// memory, the AttentionParams as the one by-value argument), the key split
// (the kernel over query tiles x splits, then the combine kernel, in that
// order), the choice of how many splits, and every check of the params,
// each refused with a message naming the field before anything is
// launched. Linked into cuda_device_test; gpu_attention_test runs the same
// launches on a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/FusedAttention.h"
#include "runtime/src/Status.h"
#include "tests/unit/cuda/GpuAttentionSupport.h"
#include "tests/unit/cuda/fake_cuda_driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

using attune::cuda::CudaModule;
using attune::cuda::Device;
using attune::gpu::AttentionParams;
using attune::runtime::statusMessage;

namespace {

constexpr const char *kImage = "fake-module: attune_attention_bench128 "
                               "attune_attention_bench128_combine attune_attention_narrow";

class FakeAttention : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(Device::open(0, &device, ATTUNE_FAKE_CUDA_DRIVER), ATTUNE_OK) << statusMessage();
    ASSERT_EQ(CudaModule::load(*device, kImage, &module), ATTUNE_OK) << statusMessage();
    fake = attuneFakeCuda(ATTUNE_FAKE_CUDA_DRIVER);
    ASSERT_NE(fake.lastLaunch, nullptr);
    ASSERT_NE(fake.onLaunch, nullptr);
  }
  void TearDown() override {
    if (fake.onLaunch)
      fake.onLaunch(nullptr);
  }

  /// Params of a valid call; the pointers are never read by the stand-in.
  static AttentionParams valid() {
    static char q, k, v, o;
    AttentionParams p{};
    p.query = &q, p.key = &k, p.value = &v, p.result = &o;
    p.batch = 3, p.heads = 8, p.kvHeads = 2, p.querySeq = 130, p.keySeq = 77;
    p.scale = 0.125f;
    return p;
  }
  static bool says(const std::string &text) {
    return std::string(statusMessage()).find(text) != std::string::npos;
  }

  /// Params of a valid split over 4 x 64 keys (77 of them); the partial
  /// buffers are never read by the stand-in.
  static AttentionParams validSplit() {
    static float partial[1];
    AttentionParams p = valid();
    p.keySplits = 4, p.splitKeys = 64;
    p.partialResult = p.partialStats = partial;
    return p;
  }

  /// Every launch the stand-in sees from now on, with its argument.
  struct Launch {
    std::string kernel;
    unsigned grid[3], block[3], sharedBytes;
    AttentionParams params;
  };
  static std::vector<Launch> &launches() {
    static std::vector<Launch> all;
    return all;
  }
  void recordLaunches() {
    launches().clear();
    fake.onLaunch([](const AttuneFakeCudaLaunch *launch) {
      Launch copy{launch->kernel, {}, {}, launch->sharedBytes, {}};
      std::memcpy(copy.grid, launch->grid, sizeof copy.grid);
      std::memcpy(copy.block, launch->block, sizeof copy.block);
      std::memcpy(&copy.params, launch->params[0], sizeof copy.params);
      launches().push_back(copy);
    });
  }

  std::unique_ptr<Device> device;
  std::unique_ptr<CudaModule> module;
  AttuneFakeCuda fake;
};

TEST_F(FakeAttention, LaunchesTheKernelsGridWithTheParamsByValue) {
  static AttentionParams seen;
  fake.onLaunch([](const AttuneFakeCudaLaunch *launch) {
    std::memcpy(&seen, launch->params[0], sizeof seen);
  });
  AttentionParams p = valid();
  ASSERT_EQ(
      attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", 128, 64, p),
      ATTUNE_OK)
      << statusMessage();
  const AttuneFakeCudaLaunch &launch = *fake.lastLaunch();
  EXPECT_STREQ(launch.kernel, "attune_attention_bench128");
  EXPECT_EQ(launch.grid[0], 3u); // ceil(130 / 64) query blocks
  EXPECT_EQ(launch.grid[1], 8u); // heads
  EXPECT_EQ(launch.grid[2], 3u); // batch
  EXPECT_EQ(launch.block[0], unsigned(attune::gpu::kAttentionThreads));
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.sharedBytes, unsigned(attune::gpu::attentionSharedBytes(128, 64)));
  EXPECT_EQ(launch.stream, static_cast<void *>(device->stream()));
  EXPECT_EQ(std::memcmp(&seen, &p, sizeof p), 0) << "the kernel's argument is not the params";

  // One query block exactly, and the smallest head sizes.
  p.querySeq = 64;
  ASSERT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_narrow", 16, 16, p),
            ATTUNE_OK)
      << statusMessage();
  EXPECT_EQ(fake.lastLaunch()->grid[0], 1u);
  EXPECT_EQ(fake.lastLaunch()->sharedBytes, unsigned(attune::gpu::attentionSharedBytes(16, 16)));
}

TEST_F(FakeAttention, BadParamsAreRefusedNamingTheFieldBeforeAnyLaunch) {
  struct Case {
    const char *what;
    std::function<void(AttentionParams &, int &headDim, int &valueDim)> change;
    const char *message;
  };
  const Case cases[] = {
      {"null query", [](AttentionParams &p, int &, int &) { p.query = nullptr; },
       "params.query is null"},
      {"null key", [](AttentionParams &p, int &, int &) { p.key = nullptr; }, "params.key is null"},
      {"null value", [](AttentionParams &p, int &, int &) { p.value = nullptr; },
       "params.value is null"},
      {"null result", [](AttentionParams &p, int &, int &) { p.result = nullptr; },
       "params.result is null"},
      {"no batch", [](AttentionParams &p, int &, int &) { p.batch = 0; },
       "params.batch is 0; it must be positive"},
      {"negative heads", [](AttentionParams &p, int &, int &) { p.heads = -8; },
       "params.heads is -8; it must be positive"},
      {"no kv heads", [](AttentionParams &p, int &, int &) { p.kvHeads = 0; },
       "params.kvHeads is 0; it must be positive"},
      {"no queries", [](AttentionParams &p, int &, int &) { p.querySeq = 0; },
       "params.querySeq is 0; it must be positive"},
      {"no keys", [](AttentionParams &p, int &, int &) { p.keySeq = -1; },
       "params.keySeq is -1; it must be positive"},
      {"heads not a multiple of kvHeads",
       [](AttentionParams &p, int &, int &) { p.heads = 6, p.kvHeads = 4; },
       "params.heads (6) is not a multiple of params.kvHeads (4)"},
      {"too many heads", [](AttentionParams &p, int &, int &) { p.heads = 65536, p.kvHeads = 1; },
       "params.heads is 65536; the grid has at most 65535 blocks in y"},
      {"too large a batch", [](AttentionParams &p, int &, int &) { p.batch = 70000; },
       "params.batch is 70000; the grid has at most 65535 blocks in z"},
      {"head size not a multiple of 16", [](AttentionParams &, int &d, int &) { d = 72; },
       "headDim is 72; the kernel takes multiples of 16 up to 128"},
      {"head size beyond 128", [](AttentionParams &, int &d, int &) { d = 256; }, "headDim is 256"},
      {"no value size", [](AttentionParams &, int &, int &dv) { dv = 0; }, "valueDim is 0"},
  };
  const int before = fake.lastLaunch()->launches;
  for (const Case &c : cases) {
    AttentionParams p = valid();
    int headDim = 128, valueDim = 64;
    c.change(p, headDim, valueDim);
    EXPECT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", headDim,
                                            valueDim, p),
              ATTUNE_INVALID_ARGUMENT)
        << c.what;
    EXPECT_TRUE(says(c.message)) << c.what << ": " << statusMessage();
  }
  EXPECT_EQ(fake.lastLaunch()->launches, before) << "a refused call launched";
}

TEST_F(FakeAttention, ASplitLaunchesTheKernelOverEverySplitThenTheCombine) {
  recordLaunches();
  AttentionParams p = validSplit();
  ASSERT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_bench128",
                                          "attune_attention_bench128_combine", 128, 64, p),
            ATTUNE_OK)
      << statusMessage();
  ASSERT_EQ(launches().size(), 2u);
  const Launch &attention = launches()[0], &combine = launches()[1];
  EXPECT_EQ(attention.kernel, "attune_attention_bench128");
  EXPECT_EQ(attention.grid[0], 3u * 4u); // query tiles x splits
  EXPECT_EQ(attention.grid[1], 8u);
  EXPECT_EQ(attention.grid[2], 3u);
  EXPECT_EQ(attention.sharedBytes, unsigned(attune::gpu::attentionSharedBytes(128, 64)));
  EXPECT_EQ(combine.kernel, "attune_attention_bench128_combine");
  EXPECT_EQ(combine.grid[0], (130u * 64u + 127u) / 128u); // a thread per result element
  EXPECT_EQ(combine.grid[1], 8u);
  EXPECT_EQ(combine.grid[2], 3u);
  EXPECT_EQ(combine.block[0], unsigned(attune::gpu::kAttentionThreads));
  EXPECT_EQ(combine.sharedBytes, 0u);
  for (const Launch &launch : launches())
    EXPECT_EQ(std::memcmp(&launch.params, &p, sizeof p), 0) << launch.kernel;

  // One split or none is the plain launch, whatever combine is.
  for (int splits : {0, 1}) {
    launches().clear();
    p.keySplits = splits;
    ASSERT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_bench128",
                                            "attune_attention_bench128_combine", 128, 64, p),
              ATTUNE_OK)
        << statusMessage();
    ASSERT_EQ(launches().size(), 1u);
    EXPECT_EQ(launches()[0].grid[0], 3u);
  }
}

TEST_F(FakeAttention, BadSplitsAreRefusedBeforeAnyLaunch) {
  struct Case {
    const char *what;
    std::function<void(AttentionParams &)> change;
    const char *message;
  };
  const Case cases[] = {
      {"negative splits", [](AttentionParams &p) { p.keySplits = -2; }, "params.keySplits is -2"},
      {"split keys not whole key blocks", [](AttentionParams &p) { p.splitKeys = 100; },
       "params.splitKeys is 100; a split covers a positive multiple of 64 keys"},
      {"no split keys", [](AttentionParams &p) { p.splitKeys = 0; }, "params.splitKeys is 0"},
      {"splits short of the keys", [](AttentionParams &p) { p.keySplits = 2, p.keySeq = 200; },
       "params.keySplits (2) x params.splitKeys (64) do not cover the 200 keys"},
      {"no partial result", [](AttentionParams &p) { p.partialResult = nullptr; },
       "params.partialResult is null with 4 key splits"},
      {"no partial statistics", [](AttentionParams &p) { p.partialStats = nullptr; },
       "params.partialStats is null with 4 key splits"},
  };
  const int before = fake.lastLaunch()->launches;
  for (const Case &c : cases) {
    AttentionParams p = validSplit();
    c.change(p);
    EXPECT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_bench128",
                                            "attune_attention_bench128_combine", 128, 64, p),
              ATTUNE_INVALID_ARGUMENT)
        << c.what;
    EXPECT_TRUE(says(c.message)) << c.what << ": " << statusMessage();
  }
  // A split needs its combine kernel, named and in the module.
  EXPECT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", 128, 64,
                                          validSplit()),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_TRUE(says("params.keySplits is 4 but no combine kernel was given")) << statusMessage();
  EXPECT_EQ(attune::cuda::launchAttention(*device, *module, "attune_attention_narrow",
                                          "attune_attention_narrow_combine", 64, 64, validSplit()),
            ATTUNE_NOT_FOUND);
  EXPECT_TRUE(says("no kernel 'attune_attention_narrow_combine'")) << statusMessage();
  EXPECT_EQ(fake.lastLaunch()->launches, before) << "a refused call launched";
}

TEST(AttentionKeySplits, SplitsOnlyAGridThatLeavesTheGpuIdle) {
  AttentionParams p{};
  p.batch = 1, p.heads = 32, p.kvHeads = 32;
  const int sms = 132; // an H100 SXM
  // Prefill: 64 query tiles x 32 heads already fill the GPU.
  p.querySeq = p.keySeq = 4096;
  EXPECT_EQ(attune::cuda::attentionKeySplits(p, sms), 1);
  // Decoding: 32 blocks on 264 slots; 8 splits give 256 blocks (7 would
  // fill only 85% of them, short of the 97% that 8 give).
  p.querySeq = 1, p.keySeq = 131072;
  EXPECT_EQ(attune::cuda::attentionKeySplits(p, sms), 8);
  // No more splits than key blocks: 2 blocks of 64 keys.
  p.keySeq = 100;
  EXPECT_EQ(attune::cuda::attentionKeySplits(p, sms), 2);
  p.keySeq = 64;
  EXPECT_EQ(attune::cuda::attentionKeySplits(p, sms), 1);
  // Nonsense in, no split out.
  EXPECT_EQ(attune::cuda::attentionKeySplits(p, 0), 1);
}

TEST_F(FakeAttention, PackedGroupsRunOneBlockRowPerKeyValueHead) {
  // 8 query heads on 2 key/value heads, 3 queries: packed, a key/value
  // head's 4 query heads share a block (12 rows), so the grid's y is 2.
  AttentionParams p = valid();
  p.heads = 8, p.kvHeads = 2, p.querySeq = 3, p.keySeq = 500;
  EXPECT_EQ(attune::cuda::attentionPackedGroup(p), 4);
  p.packedGroup = 4;
  ASSERT_EQ(
      attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", 128, 64, p),
      ATTUNE_OK)
      << statusMessage();
  EXPECT_EQ(fake.lastLaunch()->grid[0], 1u);
  EXPECT_EQ(fake.lastLaunch()->grid[1], 2u);
  // Not packed: prefill (more rows than a block), no GQA, a bias table.
  p.querySeq = 17;
  EXPECT_EQ(attune::cuda::attentionPackedGroup(p), 1);
  p.querySeq = 3, p.kvHeads = 8;
  EXPECT_EQ(attune::cuda::attentionPackedGroup(p), 1);
  p.kvHeads = 2;
  static const float table[1] = {0.0f};
  p.biasTable = table;
  EXPECT_EQ(attune::cuda::attentionPackedGroup(p), 1);
  // A group other than heads / kvHeads, or beside a bias table, is refused.
  EXPECT_EQ(
      attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", 128, 64, p),
      ATTUNE_INVALID_ARGUMENT);
  EXPECT_TRUE(says("params.packedGroup is 4; a packed group is heads / kvHeads (4) and takes no "
                   "bias table"))
      << statusMessage();
  p.biasTable = nullptr, p.packedGroup = 2;
  EXPECT_EQ(
      attune::cuda::launchAttention(*device, *module, "attune_attention_bench128", 128, 64, p),
      ATTUNE_INVALID_ARGUMENT);
  // Packed, decoding fills fewer blocks: more key splits.
  AttentionParams d{};
  d.batch = 1, d.heads = 32, d.kvHeads = 8, d.querySeq = 1, d.keySeq = 131072;
  const int unpacked = attune::cuda::attentionKeySplits(d, 132);
  d.packedGroup = attune::cuda::attentionPackedGroup(d);
  EXPECT_EQ(d.packedGroup, 4);
  EXPECT_GT(attune::cuda::attentionKeySplits(d, 132), unpacked);
}

TEST(AttentionKeySplits, EverySplitHasKeysAndTheSplitsCoverThem) {
  AttentionParams p{};
  p.batch = 2, p.heads = 4, p.kvHeads = 4, p.querySeq = 1;
  for (int sms : {8, 108, 132}) {
    for (int keys : {65, 1000, 5000, 8192, 131072}) {
      p.keySeq = keys;
      p.keySplits = attune::cuda::attentionKeySplits(p, sms);
      ASSERT_GE(p.keySplits, 1);
      p.splitKeys = attune::cuda::attentionSplitKeys(p);
      EXPECT_EQ(p.splitKeys % attune::gpu::kAttentionBlockKeys, 0);
      EXPECT_GE(static_cast<long long>(p.keySplits) * p.splitKeys, keys)
          << keys << " keys on " << sms << " SMs";
      EXPECT_LT(static_cast<long long>(p.keySplits - 1) * p.splitKeys, keys)
          << "the last of " << p.keySplits << " splits is empty";
      EXPECT_EQ(attune::cuda::attentionPartialFloats(p, 96),
                p.keySplits > 1 ? size_t(p.keySplits) * 2 * 4 * 1 * 98 : 0u);
    }
  }
}

TEST_F(FakeAttention, TheBuildsFatbinLoadsWithEveryKernelAndNoOther) {
  // The stand-in reads a real fatbin's symbols, as a --target=cuda library
  // hands the runtime one.
  std::unique_ptr<CudaModule> fatbin;
  std::string why = attune::cuda::gputest::loadAttentionKernels(*device, &fatbin);
  ASSERT_EQ(why, "");
  attune::cuda::api::CUfunction function = nullptr;
  for (const attune::cuda::gputest::AttentionKernel &kernel :
       attune::cuda::gputest::attentionKernels()) {
    EXPECT_EQ(fatbin->function(kernel.symbol, &function), ATTUNE_OK) << statusMessage();
    EXPECT_EQ(fatbin->function(kernel.combine, &function), ATTUNE_OK) << statusMessage();
  }
  EXPECT_EQ(fatbin->function("attune_attention_plain6", &function), ATTUNE_NOT_FOUND);
  EXPECT_EQ(fatbin->function("attune_attention_missing", &function), ATTUNE_NOT_FOUND);
}

TEST_F(FakeAttention, AKernelTheModuleLacksIsNamed) {
  EXPECT_EQ(
      attune::cuda::launchAttention(*device, *module, "attune_attention_plain64", 64, 64, valid()),
      ATTUNE_NOT_FOUND);
  EXPECT_TRUE(says("the CUDA module has no kernel 'attune_attention_plain64'")) << statusMessage();
}

TEST_F(FakeAttention, AModuleOfAnotherDeviceIsRefused) {
  std::unique_ptr<Device> other;
  ASSERT_EQ(Device::open(0, &other, ATTUNE_FAKE_CUDA_DRIVER), ATTUNE_OK) << statusMessage();
  EXPECT_EQ(
      attune::cuda::launchAttention(*other, *module, "attune_attention_bench128", 128, 64, valid()),
      ATTUNE_INVALID_ARGUMENT);
  EXPECT_TRUE(says("the kernel's module is loaded on another device")) << statusMessage();
}

} // namespace
