//===- IsaDispatch.h - how a library caps its run-time dispatch -*- C++ -*-===//
//
// The table a generated library consults when ATTUNE_CPU caps the x86-64
// level its kernels may run at. The CPU target computes it from the variants
// it builds (with Halide's feature bits); host code generation embeds it.
// Plain data, so both sides can include it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_ISADISPATCH_H
#define ATTUNE_COMPILER_SUPPORT_ISADISPATCH_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attune::codegen {

/// What a library needs to cap its run-time dispatch at an instruction-set
/// level (ATTUNE_CPU), for the levels of attune_isa_t, lowest first.
struct IsaDispatchTable {
  /// Words of halide_target_feature_t bits per level.
  size_t wordsPerLevel = 0;
  /// forbidden[L * wordsPerLevel + w]: the bits of the variants above level
  /// L that no variant at or below L has. A variant whose features meet
  /// them must not run under a cap of L.
  std::vector<uint64_t> forbidden;
  /// effectiveLevel[L]: the highest level <= L the library has a variant
  /// for (baseline at least), i.e. the level it runs at under a cap of L.
  std::vector<int32_t> effectiveLevel;
};

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_SUPPORT_ISADISPATCH_H
