//===- PanelLayout.h - a matrix stored as column panels ---------*- C++ -*-===//
//
// The storage of a `tensor<K x N, #tfm.panels<W>>` (tfm.weight packed by
// tfm-pack-weights): ceil(N / W) panels of [K, W], each row-major, element
// (k, n) at ((n / W) * K + k) * W + n % W, the last panel's columns past N
// zero. The weight binder packs, the reference evaluator unpacks, code
// generation hands the panels to the GEMM as a [ceil(N/W), K, W] buffer.
// Header-only and dependency-free, like the rest of compiler/support.
//
// With --precision=bf16 the panels hold bf16 (round to nearest even) with
// pairs of K rows interleaved: [ceil(N / W), ceil(K / 2), W, 2], element
// (k, n) at (((n / W) * ceil(K / 2) + k / 2) * W + n % W) * 2 + k % 2, the
// row past an odd K zero. One 32-bit word is then the (k, k+1) pair of a
// column, the operand layout of AVX512-BF16's vdpbf16ps.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H
#define ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H

#include "compiler/support/ScalarType.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace attune {

/// The panel widths attune-compile packs in for the CPU (CpuBackend's
/// weightPanelWidth, tfm-pack-weights' default):
///  - f32: 16 columns. The AVX-512 linear (runtime/model/linear_f32.c,
///    whose kF32LinearPanel is this number) reads three panels side by side
///    in place, one contiguous stream each; the Halide GEMM's tiles read
///    them in place too (AVX2's 4 x 3 vectors of 8 span one and a half).
///  - bf16 pair panels: 96 columns, a multiple of AMX's 32-column B tiles
///    and of vdpbf16ps's 2 x 16-float tile.
inline constexpr int64_t kF32PanelWidth = 16;
inline constexpr int64_t kBf16PanelWidth = 96;

/// A packed matrix's entry in a weights blob is its plain entry's name,
/// this marker, the width, ",bf16" for bf16 pair panels, and '>':
/// "fc.weight^T@panels<96>", "fc.weight^T@panels<96,bf16>".
inline constexpr const char *kPanelsKeyMarker = "@panels<";

/// The blob key of the matrix `plainKey` packed into panels of `width`.
inline std::string panelsBlobKey(const std::string &plainKey, int64_t width,
                                 bool bf16Pairs = false) {
  return plainKey + kPanelsKeyMarker + std::to_string(width) +
         (bf16Pairs ? ",bf16>" : ">");
}

/// True for the blob key of bf16 pair panels ("...@panels<96,bf16>").
inline bool isBf16PanelsKey(const std::string &key) {
  const std::string suffix = ",bf16>";
  return key.find(kPanelsKeyMarker) != std::string::npos && key.size() >= suffix.size() &&
         key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Panels a [K, N] matrix takes at width W.
inline int64_t panelCount(int64_t n, int64_t width) {
  return (n + width - 1) / width;
}

/// The stored shape, outermost first: [ceil(N / W), K, W].
inline std::vector<int64_t> panelStorageShape(int64_t k, int64_t n,
                                              int64_t width) {
  return {panelCount(n, width), k, width};
}

/// Packs the row-major [K, N] matrix at `src` (elements of `elementBytes`)
/// into `dst`, which holds panelCount(N, W) * K * W elements.
inline void packPanels(const uint8_t *src, uint8_t *dst, int64_t k, int64_t n,
                       int64_t width, size_t elementBytes) {
  const int64_t panels = panelCount(n, width);
  std::memset(dst, 0, static_cast<size_t>(panels * k * width) * elementBytes);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t columns = std::min(width, n - p * width);
    for (int64_t row = 0; row < k; ++row)
      std::memcpy(dst + static_cast<size_t>((p * k + row) * width) * elementBytes,
                  src + static_cast<size_t>(row * n + p * width) * elementBytes,
                  static_cast<size_t>(columns) * elementBytes);
  }
}

/// The inverse of packPanels: `dst` receives the row-major [K, N] matrix.
inline void unpackPanels(const uint8_t *src, uint8_t *dst, int64_t k, int64_t n,
                         int64_t width, size_t elementBytes) {
  const int64_t panels = panelCount(n, width);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t columns = std::min(width, n - p * width);
    for (int64_t row = 0; row < k; ++row)
      std::memcpy(dst + static_cast<size_t>(row * n + p * width) * elementBytes,
                  src + static_cast<size_t>((p * k + row) * width) * elementBytes,
                  static_cast<size_t>(columns) * elementBytes);
  }
}

/// The stored shape of bf16 pair panels, outermost first:
/// [ceil(N / W), ceil(K / 2), W, 2].
inline std::vector<int64_t> pairPanelStorageShape(int64_t k, int64_t n,
                                                  int64_t width) {
  return {panelCount(n, width), (k + 1) / 2, width, 2};
}

/// The bf16 bits nearest `value` (ties to even); a NaN stays a quiet NaN of
/// the same sign.
inline uint16_t floatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bf16ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// Packs the row-major f32 [K, N] matrix at `src` into bf16 pair panels at
/// `dst` (pairPanelStorageShape's element count).
inline void packPairPanelsBf16(const float *src, uint16_t *dst, int64_t k,
                               int64_t n, int64_t width) {
  const int64_t panels = panelCount(n, width), pairs = (k + 1) / 2;
  std::memset(dst, 0, static_cast<size_t>(panels * pairs * width * 2) * 2);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t col = 0; col < n; ++col)
      dst[(((col / width) * pairs + row / 2) * width + col % width) * 2 + row % 2] =
          floatToBf16(src[row * n + col]);
}

/// The inverse of packPairPanelsBf16, widening to f32 (exact).
inline void unpackPairPanelsBf16(const uint16_t *src, float *dst, int64_t k,
                                 int64_t n, int64_t width) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t row = 0; row < k; ++row)
    for (int64_t col = 0; col < n; ++col)
      dst[row * n + col] = bf16ToFloat(
          src[(((col / width) * pairs + row / 2) * width + col % width) * 2 + row % 2]);
}

/// The stored form of a packed [K, N] matrix whose logical element type is
/// `logical`, told from a blob entry's dtype and shape: panels of its own
/// dtype [ceil(N/W), K, W], bf16 pair panels of an f32 matrix
/// [ceil(N/W), ceil(K/2), W, 2], or neither. `width` receives W.
enum class PanelForm { None, Panels, Bf16Pairs };
inline PanelForm panelForm(ScalarType stored, const std::vector<int64_t> &shape,
                           int64_t k, int64_t n, ScalarType logical,
                           int64_t &width) {
  width = shape.size() >= 3 ? shape[2] : 0;
  if (width < 1)
    return PanelForm::None;
  if (stored == logical && shape == panelStorageShape(k, n, width))
    return PanelForm::Panels;
  if (stored == ScalarType::BF16 && logical == ScalarType::F32 &&
      shape == pairPanelStorageShape(k, n, width))
    return PanelForm::Bf16Pairs;
  return PanelForm::None;
}

/// Unpacks a matrix stored in `form` into the row-major [K, N] matrix of
/// its logical type (`logicalBytes` per element) at `dst`.
inline void unpackPanelForm(PanelForm form, const uint8_t *src, uint8_t *dst,
                            int64_t k, int64_t n, int64_t width,
                            size_t logicalBytes) {
  if (form == PanelForm::Bf16Pairs) {
    std::vector<uint16_t> pairs(static_cast<size_t>(
        panelCount(n, width) * ((k + 1) / 2) * width * 2));
    std::memcpy(pairs.data(), src, pairs.size() * sizeof(uint16_t));
    std::vector<float> out(static_cast<size_t>(k * n));
    unpackPairPanelsBf16(pairs.data(), out.data(), k, n, width);
    std::memcpy(dst, out.data(), out.size() * sizeof(float));
    return;
  }
  unpackPanels(src, dst, k, n, width, logicalBytes);
}

} // namespace attune

#endif // ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H
