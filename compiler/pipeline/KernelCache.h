//===- KernelCache.h - on-disk cache of compiled kernel objects -*- C++ -*-===//
//
// Compiling a Halide kernel takes seconds; a model reuses the same few
// kernels and a user recompiles the same model many times. The cache keeps
// each compiled object under a key made of the kernel's symbol name (which
// encodes its spec), its schedule parameters, the target feature sets and an
// id of the compiler build, so a rebuilt compiler or Halide, or a new tuning,
// never reuses a stale object.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_PIPELINE_KERNELCACHE_H
#define ATTUNE_COMPILER_PIPELINE_KERNELCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace attune::pipeline {

/// $ATTUNE_KERNEL_CACHE, else $XDG_CACHE_HOME/attune, else ~/.cache/attune;
/// empty if none of them can be formed (no HOME).
std::string defaultKernelCacheDir();

/// Identifies the running compiler build: the path, size and modification
/// time of the executable (which links the kernel builders) and of every
/// loaded shared object whose name contains "Halide", hashed.
/// Computed once per process.
const std::string &compilerBuildId();

/// The cache key of one object: `name` (a kernel's symbolName(), or
/// "halide_runtime"), then a hash of the name, `schedule` (the spec's
/// scheduleKey(): tuned parameters change the code but not the name), the
/// feature sets in order and `buildId`. Safe as a file name.
std::string kernelCacheKey(llvm::StringRef name, llvm::StringRef schedule,
                           llvm::ArrayRef<std::string> featureSets,
                           llvm::StringRef buildId);

/// A directory of objects named "<key>.o". Safe to share between concurrent
/// compiles: entries are written to a unique temporary name and renamed into
/// place, so a reader sees a whole object or none.
class KernelCache {
public:
  /// An empty `dir` disables the cache (lookups miss, stores do nothing).
  explicit KernelCache(std::string dir) : dir(std::move(dir)) {}

  bool enabled() const { return !dir.empty(); }
  const std::string &directory() const { return dir; }

  /// The cached object for `key`, if there is one.
  std::optional<std::string> lookup(llvm::StringRef key) const;

  /// Copies `objectPath` into the cache under `key`. Returns an empty string
  /// on success, else a message naming the problem.
  std::string store(llvm::StringRef key, llvm::StringRef objectPath) const;

private:
  std::string pathFor(llvm::StringRef key) const;
  std::string dir;
};

} // namespace attune::pipeline

#endif // ATTUNE_COMPILER_PIPELINE_KERNELCACHE_H
