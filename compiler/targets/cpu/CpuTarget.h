//===- CpuTarget.h - the x86-64 CPU as a code generation target -*- C++ -*-===//
//
// What the compiler knows about x86-64 CPUs: the instruction-set levels it
// builds kernel variants for, the Halide features of each level, and the
// target JIT code (tests, benchmarks, the tuner) must use on this machine.
// The host's level comes from the runtime's attune_host_isa() (CPUID and the
// OS-enabled state), never from Halide's get_host_target(), which trusts the
// CPU model and claims AVX-512 on guests that cannot execute it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TARGETS_CPU_CPUTARGET_H
#define ATTUNE_COMPILER_TARGETS_CPU_CPUTARGET_H

#include "attune/runtime.h"
#include "compiler/support/KernelCatalog.h"

#include "Halide.h"

#include <string>
#include <vector>

namespace attune::targets::cpu {

/// Every level, lowest first.
constexpr attune_isa_t kAllIsas[] = {ATTUNE_ISA_BASELINE, ATTUNE_ISA_AVX2,
                                     ATTUNE_ISA_AVX512, ATTUNE_ISA_AVX512_ZEN4,
                                     ATTUNE_ISA_AVX512_SPR};

/// The Halide feature list of `isa` ("avx2-fma-f16c", ...; "" for baseline).
const char *halideFeatures(attune_isa_t isa);

/// The Halide target string for a feature list on the OS and architecture
/// every attune target shares: "x86-64-linux" plus "-" + `features` unless
/// `features` is empty (baseline).
std::string halideTargetString(const std::string &features);

/// x86-64-linux with the features of `isa`.
Halide::Target halideTarget(attune_isa_t isa);

/// The level a Halide target's features call for: the highest level whose
/// defining feature the target has (baseline when none).
attune_isa_t isaOf(const Halide::Target &target);

/// True when a library builds `spec` for `isa`: every kernel for every level
/// but avx512_zen4, which only kernels that multiply bf16 (Linear with bf16
/// weights, codegen::usesBf16DotProduct) have; the others run their avx512
/// variant there.
bool buildsVariant(const codegen::KernelSpec &spec, attune_isa_t isa);

/// The target for JIT-compiled code in this process: the level
/// attune_cpu_isa() allows (the host's, capped by ATTUNE_CPU), as a library
/// would run a kernel without bf16 products (avx512 on avx512_zen4). Throws
/// std::runtime_error with the runtime's message when ATTUNE_CPU is invalid.
Halide::Target jitTarget();

/// The target a library would run `spec` at in this process: jitTarget()'s
/// level, lowered to the best variant buildsVariant() gives the kernel.
Halide::Target jitTarget(const codegen::KernelSpec &spec);

/// The levels this machine can execute that tests should cover: the best one
/// and AVX2 (when the machine has it), best first, without repeats.
std::vector<attune_isa_t> testedIsas();

} // namespace attune::targets::cpu

#endif // ATTUNE_COMPILER_TARGETS_CPU_CPUTARGET_H
