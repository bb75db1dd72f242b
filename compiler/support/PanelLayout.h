//===- PanelLayout.h - a matrix stored as column panels ---------*- C++ -*-===//
//
// The storage of a `tensor<K x N, #tfm.panels<W>>` (tfm.weight packed by
// tfm-pack-weights): ceil(N / W) panels of [K, W], each row-major, element
// (k, n) at ((n / W) * K + k) * W + n % W, the last panel's columns past N
// zero. The weight binder packs, the reference evaluator unpacks, code
// generation hands the panels to the GEMM as a [ceil(N/W), K, W] buffer.
// Header-only and dependency-free, like the rest of compiler/support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H
#define ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace attune {

/// A packed matrix's entry in a weights blob is its plain entry's name,
/// this marker, the width and '>': "fc.weight^T@panels<96>".
inline constexpr const char *kPanelsKeyMarker = "@panels<";

/// The blob key of the matrix `plainKey` packed into panels of `width`.
inline std::string panelsBlobKey(const std::string &plainKey, int64_t width) {
  return plainKey + kPanelsKeyMarker + std::to_string(width) + ">";
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

} // namespace attune

#endif // ATTUNE_COMPILER_SUPPORT_PANELLAYOUT_H
