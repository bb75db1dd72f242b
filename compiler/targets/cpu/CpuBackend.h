//===- CpuBackend.h - the x86-64 CPU target backend -------------*- C++ -*-===//
//
// Builds every kernel as one object holding a variant per x86-64 feature set
// (best first, baseline last) that picks the best the running CPU supports,
// and links the Halide runtime once per library. Halide-free interface; the
// implementation calls the Halide code generator.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TARGETS_CPU_CPUBACKEND_H
#define ATTUNE_COMPILER_TARGETS_CPU_CPUBACKEND_H

#include "compiler/targets/TargetBackend.h"

namespace attune::targets::cpu {

/// The CPU backend for `options.cpuFeatureSets` (default: every level above
/// baseline, best first); null with `error` set for a malformed feature set.
std::unique_ptr<TargetBackend> createCpuBackend(const TargetOptions &options,
                                                std::string &error);

/// The feature sets (for TargetOptions::cpuFeatureSets) of only the variants
/// this process would run: the level attune_cpu_isa() gives (the host's,
/// capped by ATTUNE_CPU). At avx512_zen4 that is avx512_zen4 and
/// avx512_skylake, since only kernels with bf16 products build the former
/// (buildsVariant). Baseline has no feature set: the result is empty, which
/// means the default list. On an invalid ATTUNE_CPU, sets `error`.
std::vector<std::string> hostFeatureSets(std::string &error);

} // namespace attune::targets::cpu

#endif // ATTUNE_COMPILER_TARGETS_CPU_CPUBACKEND_H
