//===- WeightFiles.h - the safetensors files of a checkpoint ----*- C++ -*-===//
//
// A checkpoint is one safetensors file, or, past a few gigabytes, shards
// that an index names (Hugging Face's model.safetensors.index.json:
// {"metadata": {...}, "weight_map": {"tensor": "model-00001-of-00002
// .safetensors", ...}}). WeightFiles opens either, or the folder that holds
// them, and answers "where is tensor X" across all of it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_WEIGHTFILES_H
#define ATTUNE_COMPILER_FRONTENDS_WEIGHTFILES_H

#include "compiler/frontends/SafeTensors.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attune {

/// One tensor of a checkpoint, as WeightFiles::lookup finds it.
struct WeightFileTensor {
  const SafeTensorEntry *entry = nullptr;
  /// The tensor's first byte, at whatever alignment the file gives it (other
  /// writers pack tensors at any byte): read it with memcpy.
  const uint8_t *data = nullptr;
  /// The path of the file that holds it, for messages.
  llvm::StringRef file;
};

/// The tensors of a checkpoint. Each file is memory-mapped once, checked
/// whole when opened (every shard, and the index against the shards), and
/// kept mapped for as long as this object lives.
class WeightFiles {
public:
  /// Opens `path`, which is one of
  ///  - a safetensors file;
  ///  - an index, recognised by its `.json` extension, whose shard names are
  ///    paths relative to the index's folder;
  ///  - a folder holding `model.safetensors` or
  ///    `model.safetensors.index.json`. With both, the single file wins, as
  ///    it does in Hugging Face transformers' from_pretrained.
  /// With an index, each tensor it maps must be in the shard it names, and
  /// no tensor may be in two shards; a tensor a shard holds but the index
  /// does not list can still be looked up.
  static llvm::Expected<WeightFiles> open(llvm::StringRef path);

  /// The tensor called `name`, or nullopt when no file holds it.
  std::optional<WeightFileTensor> lookup(llvm::StringRef name) const;

  /// The tensor called `name@panels<W>` for some W: a matrix an attune
  /// library stores packed into panels (tfm-pack-weights), so a library's
  /// own weights (attune_model_weights, --weights-storage=external) bind
  /// back to the model. The first in file order; nullopt when none.
  std::optional<WeightFileTensor> lookupPacked(llvm::StringRef name) const;

  /// The merged weight (tfm-merge-projections) holding the part keyed
  /// `key` ("q.weight^T": stored as the IR reads it), plain or packed, so a
  /// library compiled with --merge-projections gives its weights back too;
  /// `offset` and `total` receive the part's first column and the merged
  /// width. The first in file order; nullopt when none.
  std::optional<WeightFileTensor> lookupMergedPart(llvm::StringRef key, int64_t &offset,
                                                   int64_t &total) const;

  /// "weights file 'PATH'" or "weights index 'PATH'", naming what was
  /// opened (after resolving a folder), to begin a message with.
  const std::string &description() const { return description_; }

  /// The safetensors files, in a fixed order (shards sorted by name).
  size_t numFiles() const { return files_.size(); }

private:
  struct File {
    std::string path;
    std::unique_ptr<llvm::MemoryBuffer> buffer;
    /// Points into *buffer, which moving a File does not move.
    SafeTensorsView view;
  };

  static llvm::Expected<File> openFile(llvm::StringRef path,
                                       llvm::StringRef description);
  static llvm::Expected<WeightFiles> openSingle(llvm::StringRef path);
  static llvm::Expected<WeightFiles> openIndex(llvm::StringRef path);

  std::vector<File> files_;
  /// Tensor name -> position in files_, for a sharded checkpoint.
  llvm::StringMap<size_t> shardOf_;
  std::string description_;
};

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_WEIGHTFILES_H
