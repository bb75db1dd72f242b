//===- SafeTensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
// "__metadata__": {...}}, then the data. Used for weights files given to the
// compiler and for the weights blob embedded in a generated library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_SAFETENSORS_H
#define ATTUNE_COMPILER_FRONTENDS_SAFETENSORS_H

#include "compiler/support/ScalarType.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attune {

struct SafeTensorEntry {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0; ///< from the start of the data section
  uint64_t size = 0;   ///< bytes
};

/// A parsed view over bytes the caller keeps alive. Every offset and size is
/// checked against the buffer, so a corrupt file is an error, not a crash.
/// The buffer need not be aligned, and neither need the tensors in it (files
/// from other writers put them at any byte): read their data with memcpy.
class SafeTensorsView {
public:
  /// Checks the rules of the format as the reference implementation does: a
  /// header of at most 100,000,000 bytes holding a JSON object, no name
  /// twice, data_offsets that tile the data section exactly (sorted, each
  /// tensor starting where the one before ends, from 0 to the end of the
  /// buffer) and match dtype and shape. Each error names the tensor and the
  /// field at fault.
  static llvm::Expected<SafeTensorsView> parse(const void *data, size_t size);
  const SafeTensorEntry *lookup(llvm::StringRef name) const;
  /// The entry `name@panels<W>` for some W (a matrix an attune library
  /// stores packed into panels, compiler/support/PanelLayout.h), the first
  /// in file order, or null.
  const SafeTensorEntry *lookupPanels(llvm::StringRef name) const;
  /// The entry of a merged weight (tfm-merge-projections, MergedWeights.h)
  /// that holds the part keyed `name` ("q.weight^T"), plain or packed, the
  /// first in file order, or null; `offset` and `total` receive the part's
  /// first column and the merged width.
  const SafeTensorEntry *lookupMergedPart(llvm::StringRef name, int64_t &offset,
                                          int64_t &total) const;
  const std::vector<SafeTensorEntry> &entries() const { return entries_; }
  const uint8_t *dataStart() const { return dataStart_; }
  /// Offset of the data section from the start of the buffer.
  uint64_t dataOffset() const { return dataOffset_; }

private:
  std::vector<SafeTensorEntry> entries_;
  /// Name -> position in entries_, so binding a model's weights is linear.
  llvm::StringMap<size_t> index_;
  const uint8_t *dataStart_ = nullptr;
  uint64_t dataOffset_ = 0;
};

/// One tensor to write.
struct SafeTensorData {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  /// With `bytes` empty: data owned elsewhere that outlives the write (an
  /// entry of another blob passed through unchanged, not copied first).
  llvm::ArrayRef<uint8_t> borrowed;
  llvm::ArrayRef<uint8_t> data() const {
    return bytes.empty() ? borrowed : llvm::ArrayRef<uint8_t>(bytes);
  }
};

/// Serialises tensors in the given order; each tensor's data starts on a
/// 64-byte boundary of the buffer (the header is padded with spaces), so a
/// kernel can read the embedded blob in place.
std::string writeSafeTensors(const std::vector<SafeTensorData> &tensors);

/// Name used in the format for a scalar type ("F32", "I64", "BOOL", ...).
llvm::StringRef safeTensorsDTypeName(ScalarType type);

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_SAFETENSORS_H
