//===- ExternalWeights.h - a weights file, mapped and checked --*- C++ -*-===//
//
// A library compiled with --weights-storage=external records its weights
// file's base name, size and XXH64 instead of the bytes (runtime.h,
// "External weights"). This finds the file, maps it read-only and checks it
// against that record before a handle is returned, so that the kernels only
// ever read a blob of the size and content they were compiled for.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_SRC_EXTERNALWEIGHTS_H
#define ATTUNE_RUNTIME_SRC_EXTERNALWEIGHTS_H

#include "attune/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace attune::runtime {

/// XXH64 of `size` bytes with `seed`, as xxHash's reference defines it (and
/// LLVM's llvm::xxHash64, which the compiler records, computes with seed 0).
uint64_t xxh64(const void *data, size_t size, uint64_t seed = 0) noexcept;

/// A read-only mapping of a whole file, unmapped when destroyed.
class WeightsMapping {
public:
  WeightsMapping() = default;
  WeightsMapping(const WeightsMapping &) = delete;
  WeightsMapping &operator=(const WeightsMapping &) = delete;
  ~WeightsMapping();

  const void *data() const { return data_; }
  size_t size() const { return size_; }
  /// Takes ownership of the mapping [data, data + size), unmapping any
  /// earlier one.
  void reset(void *data, size_t size);

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

/// Finds, maps and checks the weights file of `abi`, whose weights_storage
/// is ATTUNE_WEIGHTS_EXTERNAL and whose other weights fields the descriptor
/// validation has checked. Where it looks, in order: `weightsPath` (the
/// caller's, or null), ATTUNE_WEIGHTS_PATH, the directory of `libraryPath`
/// (null for a static model); a directory given by either of the first two
/// holds the file under abi.weights_file. `origin` names the model in
/// messages ("'libm.so'", "the statically linked model"). On success `out`
/// holds the mapping; on failure it is left empty and the status says why,
/// naming the file.
attune_status_t mapExternalWeights(const attune_model_abi_t &abi,
                                   const char *weightsPath,
                                   const char *libraryPath,
                                   const std::string &origin,
                                   WeightsMapping &out);

} // namespace attune::runtime

#endif // ATTUNE_RUNTIME_SRC_EXTERNALWEIGHTS_H
