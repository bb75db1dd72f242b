//===- MergedWeights.h - a weight stored as the concatenation of parts -*- C++ -*-===//
//
// tfm-merge-projections gives linears that read one input one weight: the
// concatenation of theirs along the last axis (a tfm.weight with
// `part_sizes`). Its entry in a library's weights blob is keyed by its
// parts' plain keys and extents, in order, so that anything reading the blob
// (the reference evaluator running the model as written, whose weights are
// the parts) can find a part inside it:
//
//   "q.weight^T#384|k.weight^T#384|v.weight^T#384"
//
// with the panel marker appended when it is packed (PanelLayout.h). Part
// names contain neither '|' nor '#': the pass does not merge weights whose
// names do, and the verifier rejects a merged tfm.weight that names one.
// Header-only and dependency-free, like the rest of compiler/support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_MERGEDWEIGHTS_H
#define ATTUNE_COMPILER_SUPPORT_MERGEDWEIGHTS_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace attune {

/// Separates the parts of a merged tfm.weight's name and blob key.
inline constexpr char kWeightPartSeparator = '|';
/// Separates a part's key from its extent in a merged blob key.
inline constexpr char kWeightPartExtent = '#';

/// One part of a merged weight: its plain blob key ("q.weight^T") and its
/// extent along the last axis.
struct WeightPart {
  std::string key;
  int64_t extent = 0;
};

/// The plain blob key of a weight merged from `parts`.
inline std::string mergedBlobKey(const std::vector<WeightPart> &parts) {
  std::string key;
  for (const WeightPart &part : parts) {
    if (!key.empty())
      key += kWeightPartSeparator;
    key += part.key + kWeightPartExtent + std::to_string(part.extent);
  }
  return key;
}

/// The parts of a merged weight's plain blob key, or nothing when `key` is
/// not one (fewer than two parts, or a part without a positive extent).
inline std::optional<std::vector<WeightPart>>
parseMergedBlobKey(const std::string &key) {
  std::vector<WeightPart> parts;
  size_t begin = 0;
  while (begin <= key.size()) {
    size_t end = key.find(kWeightPartSeparator, begin);
    if (end == std::string::npos)
      end = key.size();
    const std::string piece = key.substr(begin, end - begin);
    const size_t mark = piece.rfind(kWeightPartExtent);
    if (mark == std::string::npos || mark == 0 || mark + 1 == piece.size() ||
        mark + 19 < piece.size()) // more digits than an int64 extent has
      return std::nullopt;
    int64_t extent = 0;
    for (size_t i = mark + 1; i < piece.size(); ++i) {
      if (piece[i] < '0' || piece[i] > '9')
        return std::nullopt;
      extent = extent * 10 + (piece[i] - '0');
    }
    if (extent < 1)
      return std::nullopt;
    parts.push_back({piece.substr(0, mark), extent});
    begin = end + 1;
  }
  if (parts.size() < 2)
    return std::nullopt;
  return parts;
}

/// Concatenates row-major tensors along their last axis: part i holds
/// `rows` x extents[i] elements of `elementBytes`; `dst` receives
/// rows x sum(extents).
inline void concatLastAxis(const std::vector<const uint8_t *> &parts,
                           const std::vector<int64_t> &extents, int64_t rows,
                           size_t elementBytes, uint8_t *dst) {
  int64_t total = 0;
  for (int64_t extent : extents)
    total += extent;
  int64_t offset = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const size_t rowBytes = static_cast<size_t>(extents[p]) * elementBytes;
    for (int64_t row = 0; row < rows; ++row)
      std::memcpy(dst + (static_cast<size_t>(row * total + offset)) * elementBytes,
                  parts[p] + static_cast<size_t>(row) * rowBytes, rowBytes);
    offset += extents[p];
  }
}

/// The columns [offset, offset + extent) of a row-major rows x total
/// tensor: the inverse of concatLastAxis for one part.
inline void sliceLastAxis(const uint8_t *src, int64_t rows, int64_t total,
                          int64_t offset, int64_t extent, size_t elementBytes,
                          uint8_t *dst) {
  const size_t rowBytes = static_cast<size_t>(extent) * elementBytes;
  for (int64_t row = 0; row < rows; ++row)
    std::memcpy(dst + static_cast<size_t>(row) * rowBytes,
                src + static_cast<size_t>(row * total + offset) * elementBytes,
                rowBytes);
}

} // namespace attune

#endif // ATTUNE_COMPILER_SUPPORT_MERGEDWEIGHTS_H
