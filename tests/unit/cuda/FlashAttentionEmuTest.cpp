//===- FlashAttentionEmuTest.cpp - the GPU attention kernel, emulated ------===//
//
// compiler/targets/cuda/attention/FlashAttention.cuh compiled for the host
// and run by the warp emulator (WarpEmulator.h) against a float64
// evaluation of tfm.attention's definition, for each feature a
// configuration compiles in: causal (with Sq != Sk), GQA, both head
// layouts, an additive mask, key padding, a modifier bias table with its
// visible range, softcapping, RoPE (both pairings, partial rotary
// dimensions), Dv != D, bf16 and f16 storage, and rows that see no key.
//
// The kernel rounds q, k and v to its product type (bf16, or f16 for f16
// storage) and so does the reference (after rotating, in double); the
// kernel also rounds the probabilities to that type before P.V, which the
// reference does not. Tolerance (AttentionReference.h): for bf16 products
// |err| <= 8e-3 * max|v| per element (a probability's bf16 rounding is
// 2^-9 of it) and a relative L2 error below 4e-3; for f16 products, whose
// rounding is 2^-12, 1e-3 and 5e-4, which a kernel rounding f16 inputs to
// bf16 does not meet. The same run on the GPU (gpu_attention_test)
// compares the hardware with the same reference.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/cuda/AttentionReference.h"
#include "tests/unit/cuda/WarpEmulator.h"

#include "compiler/targets/cuda/attention/FlashAttention.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace attune::gpu {
namespace {

using testing::AttentionCase;
using testing::AttentionData;

/// Runs `Config` on the emulator over `data` and returns the result as f32.
/// Runs the kernel (and the combine, with key splits) on `data`, its
/// arguments first changed by adjust(params).
template <class Config, class Adjust>
std::vector<float> runEmulated(AttentionData &data, Adjust adjust) {
  AttentionParams params = data.params<typename Config::In, typename Config::Out>();
  adjust(params);
  emu::LaunchShape shape;
  // A packed group's blocks cover its query heads (AttentionParams::packedGroup).
  const int pack = std::max(data.c.packedGroup, 1);
  shape.grid[0] = (data.c.querySeq * pack + kAttentionBlockRows - 1) / kAttentionBlockRows;
  shape.grid[1] = pack > 1 ? data.c.kvHeads : data.c.heads;
  shape.grid[2] = data.c.batch;
  shape.threads = kAttentionThreads;
  shape.sharedBytes = attentionSharedBytes(Config::kHeadDim, Config::kValueDim);
  shape.grid[0] *= std::max(data.c.keySplits, 1);
  emu::launch(shape, [&] { flashAttention<Config>(params); });
  if (data.c.keySplits > 1) {
    emu::LaunchShape combine;
    combine.grid[0] = (data.c.querySeq * Config::kValueDim + kAttentionThreads - 1) /
                      kAttentionThreads;
    combine.grid[1] = data.c.heads;
    combine.grid[2] = data.c.batch;
    combine.threads = kAttentionThreads;
    emu::launch(combine, [&] { attentionCombine<Config>(params); });
  }
  return data.resultAsFloat<typename Config::Out>();
}

template <class Config> std::vector<float> runEmulated(AttentionData &data) {
  return runEmulated<Config>(data, [](AttentionParams &) {});
}

template <class Config> void expectMatches(const AttentionCase &c) {
  AttentionData data = testing::dataFor<Config>(c);
  std::vector<float> got = runEmulated<Config>(data);
  testing::expectCloseToReference(data, got);
}

// Attributes: D, Dv, causal, mask, key padding, bias, softcap, rotary dims,
// interleaved, In, Out, linear bias, products (bf16 unless given).
using Plain64 = AttentionConfig<64, 64, false, false, false, false, false, 0, false, float, float>;
using Causal64 = AttentionConfig<64, 64, true, false, false, false, false, 0, false, float, float>;
using Masked128 = AttentionConfig<128, 128, false, true, true, false, false, 0, false, bf16, bf16>;
using Biased64 = AttentionConfig<64, 64, true, false, false, true, true, 0, false, float, float>;
using Rope64 = AttentionConfig<64, 64, true, false, false, false, false, 32, false, float, float>;
using RopeInterleaved64 =
    AttentionConfig<64, 64, false, false, false, false, false, 64, true, float, float>;
using Narrow = AttentionConfig<64, 32, false, false, true, false, false, 0, false, float, float>;
using Linear64 =
    AttentionConfig<64, 64, false, false, false, false, false, 0, false, float, float, true>;
using Buckets64 = AttentionConfig<64, 64, false, true, false, true, false, 0, false, bf16, bf16>;
using BucketsAlone64 =
    AttentionConfig<64, 64, false, false, false, true, false, 0, false, float, float>;
using MaskedF16 =
    AttentionConfig<128, 128, false, true, true, false, false, 0, false, f16, f16, false, f16>;
using CausalF16 =
    AttentionConfig<64, 64, true, false, false, false, false, 0, false, f16, f16, false, f16>;
using RopeBucketsF16 =
    AttentionConfig<64, 64, true, false, false, true, false, 32, false, f16, f16, false, f16>;
/// f16 operands with `product_type = bf16`: rounded to bf16 as they load.
using F16InBf16Out =
    AttentionConfig<64, 64, false, false, true, false, false, 0, false, f16, f16, false, bf16>;

/// f32 operands with `product_type = f16` (--precision=f16 on the CUDA
/// target): rounded to f16 as they load; with RoPE, which rotates the f32
/// rows before rounding.
using F32InF16Products =
    AttentionConfig<64, 64, true, true, true, false, false, 0, false, float, float, false, f16>;
using RopeF32InF16Products =
    AttentionConfig<128, 128, false, false, false, false, false, 64, false, float, float, false,
                    f16>;

TEST(FlashAttentionEmu, PlainWithPartialBlocks) {
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 2, c.querySeq = 100, c.keySeq = 100;
  expectMatches<Plain64>(c);
}

TEST(FlashAttentionEmu, CausalQueryBlockAtTheEndOfTheKeysWithGqaInBshd) {
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 150, c.bshd = true;
  expectMatches<Causal64>(c);
}

TEST(FlashAttentionEmu, RowsThatSeeNoKeyAreZero) {
  // Sq > Sk: causal rows i < Sq - Sk see no key at all.
  AttentionCase c;
  c.querySeq = 80, c.keySeq = 40;
  AttentionData data = testing::dataFor<Causal64>(c);
  std::vector<float> got = runEmulated<Causal64>(data);
  for (int i = 0; i < 40; ++i)
    for (int d = 0; d < 64; ++d)
      ASSERT_EQ(got[i * 64 + d], 0.0f) << "row " << i << " saw no key";
  testing::expectCloseToReference(data, got);
}

TEST(FlashAttentionEmu, AdditiveMaskAndKeyPaddingInBf16) {
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 1, c.querySeq = 65, c.keySeq = 90;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{90, 57}}; // batch 1 attends to its first 57 keys
  expectMatches<Masked128>(c);
  c.keyPaddingBytes = 4; // i32
  expectMatches<Masked128>(c);
}

/// Copies of the q, k and v a kernel's arguments point at, one element past
/// a 16-byte boundary, and the arguments pointed at them instead.
template <class Config> class Misaligned {
public:
  explicit Misaligned(const AttentionCase &c)
      : sizes{size_t(c.batch) * c.heads * c.querySeq * c.headDim,
              size_t(c.batch) * c.kvHeads * c.keySeq * c.headDim,
              size_t(c.batch) * c.kvHeads * c.keySeq * c.valueDim} {}
  void operator()(AttentionParams &p) {
    const void **pointers[3] = {&p.query, &p.key, &p.value};
    for (int i = 0; i < 3; ++i) {
      // vector storage is 16-byte aligned: one element in is not
      copies[i].assign((sizes[i] + 1) * kElement, 0);
      std::memcpy(copies[i].data() + kElement, *pointers[i], sizes[i] * kElement);
      *pointers[i] = copies[i].data() + kElement;
    }
  }

private:
  static constexpr size_t kElement = sizeof(typename Config::In);
  size_t sizes[3];
  std::vector<unsigned char> copies[3];
};

TEST(FlashAttentionEmu, MisalignedRowsLoadElementByElement) {
  // Rows off their 16-byte boundaries can be neither copied (bf16) nor
  // converted 4 at a time (f32): detail::rowLoadFor loads them element by
  // element, in both storage types. (The emulator throws at a 16-byte
  // access off its boundary, as a GPU faults.)
  AttentionCase c;
  c.querySeq = 70, c.keySeq = 130;
  AttentionData data = testing::dataFor<Plain64>(c);
  testing::expectCloseToReference(data, runEmulated<Plain64>(data, Misaligned<Plain64>(data.c)));

  c.batch = 2;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{130, 90}};
  AttentionData narrow = testing::dataFor<Masked128>(c);
  testing::expectCloseToReference(narrow,
                                  runEmulated<Masked128>(narrow, Misaligned<Masked128>(narrow.c)));
}

TEST(FlashAttentionEmu, EveryKeyPaddedGivesZeros) {
  AttentionCase c;
  c.batch = 2, c.querySeq = 20, c.keySeq = 30;
  c.keyPadding = {{30, 0}};
  AttentionData data = testing::dataFor<Narrow>(c);
  std::vector<float> got = runEmulated<Narrow>(data);
  size_t perBatch = size_t(c.heads) * 20 * Narrow::kValueDim;
  for (size_t x = perBatch; x < 2 * perBatch; ++x)
    ASSERT_EQ(got[x], 0.0f);
  testing::expectCloseToReference(data, got);
}

TEST(FlashAttentionEmu, KeyBlocksOfPaddingOnlyAreSkipped) {
  // A batch of two lengths padded to 256 keys (4 blocks of 64): batch 0
  // attends to all, batch 1 to its first 60, one block. Each (query tile,
  // head) block a warp computes runs 64/8 x 64/16 products for q.k^T and
  // 64/16 x 32/8 for p.v, 48 a warp, 4 warps: batch 1's three blocks of
  // padding are never computed.
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 2, c.querySeq = 64, c.keySeq = 256;
  c.keyPadding = {{256, 60}};
  c.keyPaddingBytes = 8; // i64, as Hugging Face's attention_mask
  AttentionData data = testing::dataFor<Narrow>(c);
  const long long before = emu::products();
  std::vector<float> got = runEmulated<Narrow>(data);
  const long long perBlock = 4 * (8 * 4 + 4 * 4);
  EXPECT_EQ(emu::products() - before, c.heads * (4 + 1) * perBlock);
  testing::expectCloseToReference(data, got);
}

TEST(FlashAttentionEmu, BiasTableWindowAndSoftcap) {
  // An ALiBi-like bias with a sliding window of 40 keys (-inf before it),
  // whose visible range lets the kernel skip key blocks.
  AttentionCase c;
  c.heads = 3, c.kvHeads = 3, c.querySeq = 130, c.keySeq = 200;
  c.bias = AttentionCase::BiasAlibiWindow;
  c.window = 40;
  c.softcap = 5.0f;
  expectMatches<Biased64>(c);
}

TEST(FlashAttentionEmu, BucketedBiasTableWithAMaskInBf16) {
  // T5's table read by the bucket of the distance, an encoder's keys on
  // both sides past max_distance (the edge buckets), GQA, and a mask.
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 300, c.keySeq = 300;
  c.bias = AttentionCase::BiasBuckets;
  c.mask = AttentionCase::MaskPerBatch;
  expectMatches<Buckets64>(c);
}

TEST(FlashAttentionEmu, BucketedBiasTableAloneFarFromTheDiagonal) {
  // T5's table and nothing else (bench128_t5's form), 400 queries and keys:
  // key blocks more than max_distance (128) from a query block on either
  // side read one edge bucket (flatBias) and take the plain path with it,
  // the others the per-score lookup; a last partial block and Sq != Sk
  // too.
  AttentionCase c;
  c.heads = 2, c.kvHeads = 2, c.querySeq = 400, c.keySeq = 400;
  c.bias = AttentionCase::BiasBuckets;
  expectMatches<BucketsAlone64>(c);
  c.querySeq = 130, c.keySeq = 450;
  expectMatches<BucketsAlone64>(c);
}

TEST(FlashAttentionEmu, BucketedBiasTableDecodingOverSplits) {
  // Three query rows at the end of 600 keys in splits of 128: the bucket
  // rows of the distances each split sees.
  AttentionCase c;
  c.heads = 2, c.kvHeads = 2, c.querySeq = 3, c.keySeq = 600;
  c.bias = AttentionCase::BiasBuckets;
  c.softcap = 8.0f;
  c.keySplits = 5, c.splitKeys = 128;
  expectMatches<Biased64>(c);
}

TEST(FlashAttentionEmu, RopeOnHalfTheDimensions) {
  AttentionCase c;
  c.heads = 2, c.kvHeads = 1, c.querySeq = 50, c.keySeq = 120;
  c.ropeOffset = 7;
  expectMatches<Rope64>(c);
}

TEST(FlashAttentionEmu, RopeInterleavedOnEveryDimension) {
  AttentionCase c;
  c.querySeq = 64, c.keySeq = 64;
  expectMatches<RopeInterleaved64>(c);
}

TEST(FlashAttentionEmu, ValueSizeBelowHeadSizeWithPadding) {
  AttentionCase c;
  c.batch = 2, c.querySeq = 33, c.keySeq = 77;
  c.keyPadding = {{77, 40}};
  expectMatches<Narrow>(c);
}

TEST(FlashAttentionEmu, LinearBiasInBothFormsWithAWindow) {
  // ALiBi's slopes, m_h * delta and (symmetric, for encoders) -m_h * |delta|,
  // with a window of 50 keys either side and Sq != Sk.
  AttentionCase c;
  c.heads = 3, c.kvHeads = 3, c.querySeq = 90, c.keySeq = 170;
  c.slopes = {0.25f, 0.0625f, 0.015625f};
  c.visibleLow = -49, c.visibleHigh = 49;
  expectMatches<Linear64>(c);
  c.slopes = {-0.25f, -0.0625f, -0.015625f};
  c.slopesAbsolute = true;
  expectMatches<Linear64>(c);
}

TEST(FlashAttentionEmu, DecodeSplitOverKeys) {
  // One query row against 1000 keys in 4 splits of 256 (the last one
  // partial), GQA as LLaMA decodes.
  AttentionCase c;
  c.heads = 4, c.kvHeads = 1, c.querySeq = 1, c.keySeq = 1000;
  c.keySplits = 4, c.splitKeys = 256;
  AttentionData data = testing::dataFor<Causal64>(c);
  const long long before = emu::products();
  std::vector<float> got = runEmulated<Causal64>(data);
  // Only the warp with the query row multiplies: 4 heads x 16 key blocks
  // x (64/8 x 64/16 + 64/16 x 64/8) products, not 4 warps' worth.
  EXPECT_EQ(emu::products() - before, 4 * 16 * (8 * 4 + 4 * 8));
  testing::expectCloseToReference(data, got);
}

TEST(FlashAttentionEmu, PackedGroupsReadEachKeyValueHeadOnce) {
  // GQA decoding: 8 query heads on 2 key/value heads, 3 query rows each at
  // the end of 700 keys, with a mask per batch, i32 key padding and the
  // keys in 3 splits. Packed, each key/value head's 4 query heads share
  // one block (12 rows): 2 blocks per split instead of 8.
  AttentionCase c;
  c.batch = 2, c.heads = 8, c.kvHeads = 2, c.querySeq = 3, c.keySeq = 700;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{700, 650}};
  c.keyPaddingBytes = 4;
  c.keySplits = 3, c.splitKeys = 256;
  c.packedGroup = 4;
  AttentionData data = testing::dataFor<Masked128>(c);
  const long long before = emu::products();
  std::vector<float> got = runEmulated<Masked128>(data);
  // One warp holds the 12 rows: per key block 64/8 x 128/16 + 64/16 x
  // 128/8 products. Batch 0 reads 11 key blocks (700 keys), batch 1 its
  // first 650 (the rest is padding): 11 blocks too.
  EXPECT_EQ(emu::products() - before, 2 * 2 * 11 * (8 * 8 + 4 * 16));
  testing::expectCloseToReference(data, got);
}

TEST(FlashAttentionEmu, PackedGroupsKeepEachHeadsRopeSlopesAndWindow) {
  // Each packed row keeps its own head's ALiBi slope, its own query's
  // RoPE position and window: MQA (4 query heads on 1) with RoPE, and GQA
  // with slopes per head and a window.
  AttentionCase c;
  c.heads = 4, c.kvHeads = 1, c.querySeq = 5, c.keySeq = 300, c.ropeOffset = 3;
  c.packedGroup = 4;
  expectMatches<Rope64>(c);
  AttentionCase l;
  l.heads = 4, l.kvHeads = 2, l.querySeq = 2, l.keySeq = 200;
  l.slopes = {0.5f, 0.125f, 0.03125f, 0.0078125f};
  l.visibleLow = -60, l.visibleHigh = 0;
  l.packedGroup = 2;
  expectMatches<Linear64>(l);
}

TEST(FlashAttentionEmu, SplitsWithoutVisibleKeysAndPadding) {
  // Causal rows at the end of 300 keys in 5 splits of 64 with the last
  // split past the keys; batch 1 attends only to its first 100 keys, so
  // its later splits see nothing and must not count in the combination.
  AttentionCase c;
  c.batch = 2, c.querySeq = 3, c.keySeq = 300;
  c.keyPadding = {{300, 100}};
  c.keySplits = 6, c.splitKeys = 64;
  expectMatches<Narrow>(c);
}

TEST(FlashAttentionEmu, F16StorageMultipliesInF16) {
  // f16 q, k and v: copied into shared memory as they are and multiplied
  // as f16 (mma's f16 form), with a mask and i64 key padding; held to f16's
  // tolerance, eight times bf16's.
  AttentionCase c;
  c.batch = 2, c.heads = 2, c.kvHeads = 1, c.querySeq = 65, c.keySeq = 150;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{150, 100}};
  c.keyPaddingBytes = 8;
  expectMatches<MaskedF16>(c);
  // Rows off their 16-byte boundaries: loaded element by element.
  AttentionData data = testing::dataFor<MaskedF16>(c);
  testing::expectCloseToReference(data,
                                  runEmulated<MaskedF16>(data, Misaligned<MaskedF16>(data.c)));
}

TEST(FlashAttentionEmu, F16CausalGqaInBshdAndDecodingOverSplits) {
  AttentionCase c;
  c.heads = 4, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 150, c.bshd = true;
  expectMatches<CausalF16>(c);
  AttentionCase d;
  d.heads = 4, d.kvHeads = 1, d.querySeq = 2, d.keySeq = 700;
  d.keySplits = 3, d.splitKeys = 256;
  d.packedGroup = 4;
  expectMatches<CausalF16>(d);
}

TEST(FlashAttentionEmu, F16OperandsWithBf16Products) {
  // tfm.attention's product_type = bf16 on f16 q, k and v: f16 rows are not
  // the product type, so they are converted as they load (never copied),
  // and held to bf16's tolerance.
  AttentionCase c;
  c.batch = 2, c.querySeq = 70, c.keySeq = 130;
  c.keyPadding = {{130, 100}};
  expectMatches<F16InBf16Out>(c);
}

TEST(FlashAttentionEmu, F32OperandsWithF16Products) {
  // Held to f16's tolerance: the products are f16, the data f32.
  AttentionCase c;
  c.batch = 2, c.heads = 4, c.kvHeads = 2, c.querySeq = 70, c.keySeq = 150;
  c.mask = AttentionCase::MaskPerBatch;
  c.keyPadding = {{150, 120}};
  expectMatches<F32InF16Products>(c);
  AttentionCase r;
  r.heads = 2, r.kvHeads = 2, r.querySeq = 90, r.keySeq = 90, r.ropeOffset = 3;
  expectMatches<RopeF32InF16Products>(r);
}

TEST(FlashAttentionEmu, F16RopeAndBucketedBiasTable) {
  // RoPE rotates f16 rows element by element and rounds them to f16; T5's
  // table is read in f16.
  AttentionCase c;
  c.heads = 2, c.kvHeads = 2, c.querySeq = 100, c.keySeq = 180, c.ropeOffset = 5;
  c.bias = AttentionCase::BiasBuckets;
  expectMatches<RopeBucketsF16>(c);
}

TEST(FlashAttentionEmu, AThreadThatThrowsFailsTheLaunch) {
  // One thread throws (as a 16-byte access off its boundary does) while
  // the others of its warp wait in a shuffle and the rest of the block at a
  // barrier: they give up, and launch rethrows the first exception, so a
  // test fails instead of the binary aborting or hanging.
  emu::LaunchShape shape;
  shape.grid[0] = 2, shape.threads = 64;
  for (int thrower : {3, 37}) {
    try {
      emu::launch(shape, [thrower] {
        if (blockIndex(0) == 1 && threadIndex() == thrower)
          throw std::logic_error("thread " + std::to_string(thrower));
        shuffleXor(1.0f, 1);
        syncThreads();
      });
      ADD_FAILURE() << "launch did not throw";
    } catch (const std::logic_error &error) {
      EXPECT_EQ(error.what(), "thread " + std::to_string(thrower));
    }
  }
  // The emulator works after a failed launch.
  emu::launch(shape, [] { EXPECT_EQ(shuffleXor(float(threadIndex()), 1), threadIndex() ^ 1); });
}

TEST(FlashAttentionEmu, F16RoundsToNearestEven) {
  // The host's f16 conversion, which the emulated kernel and the reference
  // use (the GPU's is cvt.rn): ties to even, the subnormals, overflow.
  EXPECT_EQ(toF16BitsOnHost(1.0f), 0x3c00u);
  EXPECT_EQ(toF16BitsOnHost(1.0f + 0x1p-11f), 0x3c00u); // tie: down to even
  EXPECT_EQ(toF16BitsOnHost(1.0f + 0x3p-11f), 0x3c02u); // tie: up to even
  EXPECT_EQ(toF16BitsOnHost(-65504.0f), 0xfbffu);
  EXPECT_EQ(toF16BitsOnHost(65519.0f), 0x7bffu);
  EXPECT_EQ(toF16BitsOnHost(65520.0f), 0x7c00u); // inf
  EXPECT_EQ(toF16BitsOnHost(0x1p-24f), 0x0001u);
  EXPECT_EQ(toF16BitsOnHost(0x1p-25f), 0x0000u); // tie: down to 0
  EXPECT_EQ(toF16BitsOnHost(0x3p-25f), 0x0002u); // tie: up to even
  EXPECT_EQ(toF16BitsOnHost(0x1.ffcp-15f), 0x0400u); // rounds up to 2^-14
  EXPECT_EQ(toF16BitsOnHost(-0.0f), 0x8000u);
  EXPECT_EQ(toF16BitsOnHost(NAN) & 0x7e00u, 0x7e00u);
  for (u16 bits : {u16(0x0001), u16(0x03ff), u16(0x0400), u16(0x3555), u16(0x7bff),
                   u16(0x8001), u16(0xc000)})
    EXPECT_EQ(toF16BitsOnHost(toFloat(f16{bits})), bits) << bits;
}

} // namespace
} // namespace attune::gpu
