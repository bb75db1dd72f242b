//===- ScratchCache.h - the scratch cache every Halide library links ------===//
//
// runtime/model/scratch_cache.c installs a cache of freed blocks behind the
// Halide runtime's halide_malloc/halide_free (see that file for why: glibc
// trimmed a kernel's per-call scratch back to the system, and every call
// faulted it in again). It is linked into every model library
// (compiler/driver) and every kernel library attune-tune times (AotKernel),
// so that the tuner measures kernels as libraries run them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_SCRATCHCACHE_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_SCRATCHCACHE_H

#include <string>

namespace attune::codegen {

/// The C source of the scratch cache.
const char *scratchCacheSource();

/// Writes the source into `directory` and compiles it with the system's `cc`
/// into `object` (position independent). Returns "" or what failed.
std::string compileScratchCache(const std::string &directory,
                                const std::string &object);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_SCRATCHCACHE_H
