//===- AttentionReference.h - inputs and a float64 reference for the GPU attention kernel -*- C++ -*-===//
//
// An attention case (shapes, layout, which masks and terms), its random
// inputs in the kernel's storage types, the AttentionParams that describe
// them, and tfm.attention's definition evaluated in double over the same
// values: shared by the emulated test (FlashAttentionEmuTest.cpp) and the
// one that runs the compiled kernels on a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_ATTENTIONREFERENCE_H
#define ATTUNE_TESTS_UNIT_CUDA_ATTENTIONREFERENCE_H

#include "compiler/targets/cuda/attention/FlashAttention.cuh"
#include "tests/unit/cuda/T5Buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace attune::gpu::testing {

struct AttentionCase {
  int batch = 1, heads = 2, kvHeads = 2, querySeq = 64, keySeq = 64;
  int headDim = 64, valueDim = 64;
  bool bshd = false;
  bool causal = false;
  enum Mask { MaskNone, MaskPerBatch } mask = MaskNone; // [B, 1, Sq, Sk]
  /// Per batch, how many leading keys attend; empty: no key padding.
  std::vector<int> keyPadding;
  /// The key padding's element size: 1 (bool), 4 (i32) or 8 (i64, as
  /// Hugging Face's attention_mask). Wider elements hold their nonzero
  /// value in the top byte, so that a kernel reading fewer bytes sees 0.
  int keyPaddingBytes = 1;
  /// A bias table (Config::kBias): BiasAlibiWindow has a row per distance
  /// (ALiBi's slope times it, -inf for keys with i - j >= window);
  /// BiasBuckets is T5's [num_buckets, H] read by the bucket of the
  /// distance (bidirectional, 32 buckets, max_distance 128).
  enum Bias { BiasNone, BiasAlibiWindow, BiasBuckets } bias = BiasNone;
  int window = 0;
  float softcap = 0.0f;
  int rotaryDims = 0;
  bool ropeInterleaved = false;
  int ropeOffset = 0;
  /// keySplits > 1: split the keys into parts of splitKeys (FlashDecoding).
  int keySplits = 1, splitKeys = 0;
  /// AttentionParams::packedGroup: heads / kvHeads to pack a key/value
  /// head's query heads into its blocks; 0: not.
  int packedGroup = 0;
  /// A bias linear in the distance (ALiBi): head h adds slopes[h] * delta
  /// (slopes[h] * |delta| when slopesAbsolute); empty: none.
  std::vector<float> slopes;
  bool slopesAbsolute = false;
  /// Distances outside [visibleLow, visibleHigh] are masked (a sliding
  /// window without a bias table).
  int visibleLow = INT_MIN, visibleHigh = INT_MAX;
};

inline float roundToBf16(float x) { return floatBits(toBf16Bits(x) << 16); }
inline float roundToF16(float x) { return toFloat(f16{u16(toF16BitsOnHost(x))}); }

/// The kernel's types: q, k, v, the bias table and the result (Config::In,
/// Config::Out), and the products' (Config::Product).
enum class Storage { F32, BF16, F16 };
template <class T> constexpr Storage kStorageOf =
    kIsF16<T> ? Storage::F16 : kIsBf16<T> ? Storage::BF16 : Storage::F32;

/// `x` rounded to `type` (nearest even).
inline float roundTo(Storage type, float x) {
  return type == Storage::BF16 ? roundToBf16(x) : type == Storage::F16 ? roundToF16(x) : x;
}

/// A case's inputs. Values are kept as f32 (already rounded to the storage
/// type) for the reference, and in the storage type for the kernel.
class AttentionData {
public:
  AttentionData(const AttentionCase &c, Storage storage, Storage products)
      : c(c), storage_(storage), products_(products) {
    if (products == Storage::F32)
      throw std::logic_error("the kernel's products are bf16 or f16");
    std::mt19937 random(1234 + c.querySeq * 7 + c.keySeq);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto fill = [&](std::vector<float> &v, size_t n, float amplitude) {
      v.resize(n);
      for (float &x : v)
        x = roundTo(storage_, amplitude * uniform(random));
    };
    fill(q, size_t(c.batch) * c.heads * c.querySeq * c.headDim, 2.0f);
    fill(k, size_t(c.batch) * c.kvHeads * c.keySeq * c.headDim, 2.0f);
    fill(v, size_t(c.batch) * c.kvHeads * c.keySeq * c.valueDim, 1.0f);
    if (c.mask == AttentionCase::MaskPerBatch) {
      // In the storage type, as tfm.attention's mask.
      mask.resize(size_t(c.batch) * c.querySeq * c.keySeq);
      for (float &x : mask)
        x = uniform(random) < -0.8f ? -std::numeric_limits<float>::infinity()
                                    : roundTo(storage_, 2.0f * uniform(random));
      if (storage_ != Storage::F32)
        toHalf(mask, mask16);
    }
    if (!c.keyPadding.empty()) {
      keyPadding.assign(size_t(c.batch) * c.keySeq * c.keyPaddingBytes, 0);
      for (int b = 0; b < c.batch; ++b)
        for (int j = 0; j < c.keyPadding[b]; ++j)
          keyPadding[(size_t(b) * c.keySeq + j + 1) * c.keyPaddingBytes - 1] = 1;
    }
    if (c.bias == AttentionCase::BiasAlibiWindow) {
      // [H][distance], padded, to test the stride; a row per distance.
      biasHeadStride = c.querySeq + c.keySeq + 2, biasRowStride = 1;
      bias.assign(size_t(c.heads) * biasHeadStride, 0.0f);
      biasRowLow = 1 - c.keySeq;
      for (int h = 0; h < c.heads; ++h) {
        float slope = std::pow(2.0f, -8.0f * (h + 1) / c.heads);
        for (int delta = 1 - c.keySeq; delta <= c.querySeq - 1; ++delta)
          bias[h * biasHeadStride + delta + c.keySeq - 1] =
              delta <= -c.window ? -std::numeric_limits<float>::infinity() : slope * delta;
      }
      for (int x = 0; x < c.querySeq + c.keySeq - 1; ++x)
        biasRows.push_back(x);
    } else if (c.bias == AttentionCase::BiasBuckets) {
      // T5's [num_buckets, H] and the bucket of each distance in
      // [-max_distance, max_distance], the edge buckets beyond: two sides
      // of 16, 8 of them exact, the rest log-spaced up to 128.
      const int buckets = 32, maxDistance = 128;
      biasHeadStride = 1, biasRowStride = c.heads;
      fill(bias, size_t(buckets) * c.heads, 3.0f);
      biasRowLow = -maxDistance;
      biasRows = t5BucketRows(buckets, maxDistance);
    }
    if (!bias.empty() && storage_ != Storage::F32) {
      for (float &x : bias)
        x = roundTo(storage_, x);
      toHalf(bias, bias16);
    }
    for (int p = 0; p < c.rotaryDims / 2; ++p)
      theta.push_back(float(std::pow(10000.0, -2.0 * p / c.rotaryDims)));
    if (storage_ != Storage::F32) {
      toHalf(q, q16);
      toHalf(k, k16);
      toHalf(v, v16);
    }
    if (c.keySplits > 1) {
      size_t rows = size_t(c.keySplits) * c.batch * c.heads * c.querySeq;
      partialResult.assign(rows * c.valueDim, NAN);
      partialStats.assign(rows * 2, NAN);
    }
    resultBytes_.assign(size_t(c.batch) * c.heads * c.querySeq * c.valueDim *
                            (storage_ == Storage::F32 ? 4 : 2),
                        0xff); // NaN in either type: a row left unwritten shows
  }

  /// Element offset of (b, h, s, 0) in a [B, heads, S, dim] tensor.
  size_t offset(int b, int h, int s, int heads, int seq, int dim) const {
    return c.bshd ? ((size_t(b) * seq + s) * heads + h) * dim
                  : ((size_t(b) * heads + h) * seq + s) * dim;
  }
  void strides(int heads, int seq, int dim, i64 out[3]) const {
    if (c.bshd) {
      out[0] = i64(seq) * heads * dim, out[1] = dim, out[2] = i64(heads) * dim;
    } else {
      out[0] = i64(heads) * seq * dim, out[1] = i64(seq) * dim, out[2] = dim;
    }
  }

  /// The kernel's arguments, pointing at this object's host memory.
  template <class In, class Out> AttentionParams params() {
    static_assert(std::is_same_v<In, Out>, "the cases store inputs and result alike");
    if (kStorageOf<In> != storage_)
      throw std::logic_error("the kernel's storage type is not the case's");
    AttentionParams p{};
    if constexpr (sizeof(In) == 2) {
      p.query = q16.data(), p.key = k16.data(), p.value = v16.data();
    } else {
      p.query = q.data(), p.key = k.data(), p.value = v.data();
    }
    p.result = resultBytes_.data();
    strides(c.heads, c.querySeq, c.headDim, p.queryStride);
    strides(c.kvHeads, c.keySeq, c.headDim, p.keyStride);
    strides(c.kvHeads, c.keySeq, c.valueDim, p.valueStride);
    strides(c.heads, c.querySeq, c.valueDim, p.resultStride);
    p.batch = c.batch, p.heads = c.heads, p.kvHeads = c.kvHeads;
    p.querySeq = c.querySeq, p.keySeq = c.keySeq;
    p.scale = 1.0f / std::sqrt(float(c.headDim));
    p.softcap = c.softcap;
    if constexpr (sizeof(In) == 2)
      p.mask = mask16.empty() ? nullptr : mask16.data();
    else
      p.mask = mask.empty() ? nullptr : mask.data();
    p.maskStride[0] = i64(c.querySeq) * c.keySeq, p.maskStride[1] = 0;
    p.maskStride[2] = c.keySeq, p.maskStride[3] = 1;
    p.keyPadding = keyPadding.empty() ? nullptr : keyPadding.data();
    p.keyPaddingStride = c.keySeq;
    p.keyPaddingBytes = c.keyPaddingBytes;
    if constexpr (sizeof(In) == 2)
      p.biasTable = bias16.empty() ? nullptr : bias16.data();
    else
      p.biasTable = bias.empty() ? nullptr : bias.data();
    p.biasHeadStride = biasHeadStride, p.biasRowStride = biasRowStride;
    p.biasRows = biasRows.empty() ? nullptr : biasRows.data();
    p.biasRowLow = biasRowLow, p.biasRowCount = int(biasRows.size());
    p.deltaLow = c.bias == AttentionCase::BiasAlibiWindow ? 1 - c.window : c.visibleLow;
    p.deltaHigh = c.visibleHigh;
    p.biasSlopes = c.slopes.empty() ? nullptr : c.slopes.data();
    p.biasAbsolute = c.slopesAbsolute;
    p.ropeTheta = theta.empty() ? nullptr : theta.data();
    p.ropeOffset = c.ropeOffset;
    p.keySplits = c.keySplits, p.splitKeys = c.splitKeys;
    p.packedGroup = c.packedGroup;
    p.partialResult = partialResult.empty() ? nullptr : partialResult.data();
    p.partialStats = partialStats.empty() ? nullptr : partialStats.data();
    return p;
  }

  template <class Out> std::vector<float> resultAsFloat() const {
    size_t n = resultBytes_.size() / sizeof(Out);
    std::vector<float> out(n);
    const Out *r = reinterpret_cast<const Out *>(resultBytes_.data());
    for (size_t x = 0; x < n; ++x)
      out[x] = toFloat(r[x]);
    return out;
  }
  std::vector<unsigned char> &resultBytes() { return resultBytes_; }

  /// tfm.attention over q, k, v rounded to the products' type (after RoPE,
  /// in double), in double; in the result's layout.
  std::vector<double> reference() const {
    const AttentionCase &c = this->c;
    std::vector<double> out(size_t(c.batch) * c.heads * c.querySeq * c.valueDim, 0.0);
    int shift = c.keySeq - c.querySeq;
    double scale = 1.0f / std::sqrt(float(c.headDim)); // the kernel's f32 scale
    for (int b = 0; b < c.batch; ++b) {
      for (int h = 0; h < c.heads; ++h) {
        int g = h / (c.heads / c.kvHeads);
        for (int i = 0; i < c.querySeq; ++i) {
          std::vector<double> qi =
              rotated(&q[offset(b, h, i, c.heads, c.querySeq, c.headDim)], i + shift);
          std::vector<double> s(c.keySeq, -INFINITY);
          double maximum = -INFINITY;
          for (int j = 0; j < c.keySeq; ++j) {
            int delta = j - i - shift;
            if ((c.causal && delta > 0) || delta < c.visibleLow || delta > c.visibleHigh)
              continue;
            if (!keyPadding.empty() &&
                !keyPadding[(size_t(b) * c.keySeq + j + 1) * c.keyPaddingBytes - 1])
              continue;
            std::vector<double> kj =
                rotated(&k[offset(b, g, j, c.kvHeads, c.keySeq, c.headDim)], j);
            double dot = 0.0;
            for (int d = 0; d < c.headDim; ++d)
              dot += qi[d] * kj[d];
            double x = scale * dot;
            if (c.softcap > 0)
              x = c.softcap * std::tanh(x / c.softcap);
            if (!mask.empty())
              x += mask[(size_t(b) * c.querySeq + i) * c.keySeq + j];
            if (!bias.empty())
              x += biasAt(h, delta);
            if (!c.slopes.empty())
              x += double(c.slopes[h]) * (c.slopesAbsolute ? std::abs(delta) : delta);
            s[j] = x;
            maximum = std::max(maximum, x);
          }
          if (maximum == -INFINITY)
            continue; // no key: zeros
          double sum = 0.0;
          for (double &x : s) {
            x = std::exp(x - maximum);
            sum += x;
          }
          double *o = &out[offset(b, h, i, c.heads, c.querySeq, c.valueDim)];
          for (int j = 0; j < c.keySeq; ++j) {
            if (s[j] == 0.0)
              continue;
            const float *vj = &v[offset(b, g, j, c.kvHeads, c.keySeq, c.valueDim)];
            for (int d = 0; d < c.valueDim; ++d)
              o[d] += s[j] / sum * roundTo(products_, vj[d]);
          }
        }
      }
    }
    return out;
  }

  /// bias_h(delta) as the kernel defines it from the table and the rows.
  double biasAt(int h, int delta) const {
    long long at = (long long)delta - biasRowLow;
    at = std::clamp<long long>(at, 0, (long long)biasRows.size() - 1);
    return bias[h * biasHeadStride + biasRows[at] * biasRowStride];
  }

  const AttentionCase c;
  std::vector<float> q, k, v, mask, bias, theta;
  std::vector<unsigned char> keyPadding;
  /// The bias table (Config::kBias; rounded to the storage type) and
  /// the row of each distance from biasRowLow.
  i64 biasHeadStride = 0, biasRowStride = 0;
  std::vector<int> biasRows;
  int biasRowLow = 0;
  /// The key splits' workspace (keySplits > 1).
  std::vector<float> partialResult, partialStats;

  /// The products' type: what the tolerance is for.
  Storage products() const { return products_; }

private:
  /// `from` (already rounded to the storage type) as its 16-bit values.
  void toHalf(const std::vector<float> &from, std::vector<u16> &to) const {
    to.resize(from.size());
    for (size_t x = 0; x < from.size(); ++x)
      to[x] = u16(storage_ == Storage::F16 ? toF16BitsOnHost(from[x]) : toBf16Bits(from[x]));
  }

  /// The row at `row` (headDim values) rotated to `position` as tfm.rope
  /// defines it, then rounded to the products' type.
  std::vector<double> rotated(const float *row, int position) const {
    int d = c.headDim, r = c.rotaryDims;
    std::vector<double> out(row, row + d);
    double n = double(position + c.ropeOffset);
    for (int p = 0; p < r / 2; ++p) {
      int a = c.ropeInterleaved ? 2 * p : p, bIndex = c.ropeInterleaved ? 2 * p + 1 : p + r / 2;
      double angle = n * double(theta[p]);
      double x = row[a], y = row[bIndex];
      out[a] = x * std::cos(angle) - y * std::sin(angle);
      out[bIndex] = y * std::cos(angle) + x * std::sin(angle);
    }
    for (double &x : out)
      x = roundTo(products_, float(x));
    return out;
  }

  Storage storage_, products_;
  std::vector<u16> q16, k16, v16, bias16, mask16;
  std::vector<unsigned char> resultBytes_;
};

/// The data of `c` for `Config`: its causality, storage and product types.
/// Its head sizes and RoPE come from the configuration too; its masks and
/// terms must be those the configuration reads.
template <class Config> AttentionData dataFor(AttentionCase c) {
  c.causal = Config::kCausal;
  c.headDim = Config::kHeadDim, c.valueDim = Config::kValueDim;
  c.rotaryDims = Config::kRotaryDims, c.ropeInterleaved = Config::kRopeInterleaved;
  if (Config::kMask != (c.mask != AttentionCase::MaskNone) ||
      Config::kKeyPadding != !c.keyPadding.empty() ||
      Config::kBias != (c.bias != AttentionCase::BiasNone) ||
      Config::kSoftcap != (c.softcap > 0.0f) || Config::kLinearBias != !c.slopes.empty())
    throw std::logic_error("the case's masks and terms are not the configuration's");
  return AttentionData(c, kStorageOf<typename Config::In>,
                       kStorageOf<typename Config::Product>);
}

/// `got` (the result as f32, in the result's layout) against the reference;
/// see FlashAttentionEmuTest.cpp for the tolerance.
inline void expectCloseToReference(const AttentionData &data, const std::vector<float> &got) {
  std::vector<double> want = data.reference();
  ASSERT_EQ(got.size(), want.size());
  double maxV = 0.0;
  for (float x : data.v)
    maxV = std::max(maxV, double(std::fabs(x)));
  // bf16's rounding (2^-9) or f16's (2^-12): see FlashAttentionEmuTest.cpp.
  const bool f16 = data.products() == Storage::F16;
  const double relL2Bound = f16 ? 5e-4 : 4e-3;
  double bound = (f16 ? 1e-3 : 8e-3) * maxV, worst = 0.0, errSquares = 0.0, refSquares = 0.0;
  size_t worstAt = 0;
  for (size_t x = 0; x < got.size(); ++x) {
    double err = std::fabs(double(got[x]) - want[x]);
    if (!(err <= worst) || std::isnan(err)) {
      worst = std::isnan(err) ? INFINITY : err;
      worstAt = x;
    }
    errSquares += err * err;
    refSquares += want[x] * want[x];
  }
  double relL2 = std::sqrt(errSquares / std::max(refSquares, 1e-300));
  EXPECT_LE(worst, bound) << "element " << worstAt << ": got " << got[worstAt] << ", want "
                          << want[worstAt];
  EXPECT_LT(relL2, relL2Bound) << "relative L2 error";
  ::testing::Test::RecordProperty("max_abs_err", std::to_string(worst));
  if (std::getenv("ATTUNE_PRINT_ERRORS"))
    std::printf("max abs err %.3g (bound %.3g), rel L2 %.3g\n", worst, bound, relL2);
  ::testing::Test::RecordProperty("rel_l2_err", std::to_string(relL2));
}

} // namespace attune::gpu::testing

#endif // ATTUNE_TESTS_UNIT_CUDA_ATTENTIONREFERENCE_H
