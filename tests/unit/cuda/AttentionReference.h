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

/// A case's inputs. Values are kept as f32 (already rounded to bf16 when
/// the storage is bf16) for the reference, and in the storage type for the
/// kernel.
class AttentionData {
public:
  AttentionData(const AttentionCase &c, bool bf16Storage) : c(c), bf16Storage_(bf16Storage) {
    std::mt19937 random(1234 + c.querySeq * 7 + c.keySeq);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto fill = [&](std::vector<float> &v, size_t n, float amplitude) {
      v.resize(n);
      for (float &x : v) {
        x = amplitude * uniform(random);
        if (bf16Storage_)
          x = roundToBf16(x);
      }
    };
    fill(q, size_t(c.batch) * c.heads * c.querySeq * c.headDim, 2.0f);
    fill(k, size_t(c.batch) * c.kvHeads * c.keySeq * c.headDim, 2.0f);
    fill(v, size_t(c.batch) * c.kvHeads * c.keySeq * c.valueDim, 1.0f);
    if (c.mask == AttentionCase::MaskPerBatch) {
      mask.resize(size_t(c.batch) * c.querySeq * c.keySeq);
      for (float &x : mask)
        x = uniform(random) < -0.8f ? -std::numeric_limits<float>::infinity()
                                    : 2.0f * uniform(random);
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
    if (!bias.empty() && bf16Storage_) {
      for (float &x : bias)
        x = roundToBf16(x);
      toBf16(bias, biasBf16);
    }
    for (int p = 0; p < c.rotaryDims / 2; ++p)
      theta.push_back(float(std::pow(10000.0, -2.0 * p / c.rotaryDims)));
    if (bf16Storage_) {
      toBf16(q, qBf16);
      toBf16(k, kBf16);
      toBf16(v, vBf16);
    }
    if (c.keySplits > 1) {
      size_t rows = size_t(c.keySplits) * c.batch * c.heads * c.querySeq;
      partialResult.assign(rows * c.valueDim, NAN);
      partialStats.assign(rows * 2, NAN);
    }
    resultBytes_.assign(size_t(c.batch) * c.heads * c.querySeq * c.valueDim *
                            (bf16Storage_ ? 2 : 4),
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
    AttentionParams p{};
    if constexpr (std::is_same_v<In, bf16>) {
      p.query = qBf16.data(), p.key = kBf16.data(), p.value = vBf16.data();
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
    p.mask = mask.empty() ? nullptr : mask.data();
    p.maskStride[0] = i64(c.querySeq) * c.keySeq, p.maskStride[1] = 0;
    p.maskStride[2] = c.keySeq, p.maskStride[3] = 1;
    p.keyPadding = keyPadding.empty() ? nullptr : keyPadding.data();
    p.keyPaddingStride = c.keySeq;
    p.keyPaddingBytes = c.keyPaddingBytes;
    if constexpr (std::is_same_v<In, bf16>)
      p.biasTable = biasBf16.empty() ? nullptr : biasBf16.data();
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

  /// tfm.attention over q, k, v rounded to bf16 (after RoPE, in double), in
  /// double; in the result's layout.
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
              o[d] += s[j] / sum * roundToBf16(vj[d]);
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
  /// The bias table (Config::kBias; rounded to bf16 with bf16 storage) and
  /// the row of each distance from biasRowLow.
  i64 biasHeadStride = 0, biasRowStride = 0;
  std::vector<int> biasRows;
  int biasRowLow = 0;
  /// The key splits' workspace (keySplits > 1).
  std::vector<float> partialResult, partialStats;

private:
  static void toBf16(const std::vector<float> &from, std::vector<bf16> &to) {
    to.resize(from.size());
    for (size_t x = 0; x < from.size(); ++x)
      to[x].bits = u16(toBf16Bits(from[x]));
  }

  /// The row at `row` (headDim values) rotated to `position` as tfm.rope
  /// defines it, then rounded to bf16.
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
      x = roundToBf16(float(x));
    return out;
  }

  bool bf16Storage_;
  std::vector<bf16> qBf16, kBf16, vBf16, biasBf16;
  std::vector<unsigned char> resultBytes_;
};

/// The data of `c` for `Config`: its causality and storage type.
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
  return AttentionData(c, std::is_same_v<typename Config::In, bf16>);
}

/// `got` (the result as f32, in the result's layout) against the reference;
/// see FlashAttentionEmuTest.cpp for the tolerance.
inline void expectCloseToReference(const AttentionData &data, const std::vector<float> &got) {
  std::vector<double> want = data.reference();
  ASSERT_EQ(got.size(), want.size());
  double maxV = 0.0;
  for (float x : data.v)
    maxV = std::max(maxV, double(std::fabs(x)));
  double bound = 8e-3 * maxV, worst = 0.0, errSquares = 0.0, refSquares = 0.0;
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
  EXPECT_LT(relL2, 4e-3) << "relative L2 error";
  ::testing::Test::RecordProperty("max_abs_err", std::to_string(worst));
  if (std::getenv("ATTUNE_PRINT_ERRORS"))
    std::printf("max abs err %.3g (bound %.3g), rel L2 %.3g\n", worst, bound, relL2);
  ::testing::Test::RecordProperty("rel_l2_err", std::to_string(relL2));
}

} // namespace attune::gpu::testing

#endif // ATTUNE_TESTS_UNIT_CUDA_ATTENTIONREFERENCE_H
