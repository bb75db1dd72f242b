//===- Kernels.h - Halide kernels, compiled ahead of time -------*- C++ -*-===//
//
// Ahead-of-time compilation of the kernels of compiler/support/KernelCatalog.h
// (which also documents the buffer conventions every kernel follows) into
// multi-target objects. No Halide type appears here either, so the driver can
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELS_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELS_H

#include "compiler/support/IsaDispatch.h"
#include "compiler/support/KernelCatalog.h"

#include <string>
#include <vector>

namespace attune::codegen {

/// Code generation targets. `features` is a Halide target string suffix such
/// as "avx512_sapphirerapids" or "avx2-fma-f16c"; the library dispatches at
/// run time to the best one the CPU supports (the first in this list that
/// it can run), with a baseline x86-64 fallback. avx512_skylake covers the
/// AVX-512 CPUs without Sapphire Rapids' AMX/FP16 (Skylake-X to Ice Lake,
/// Zen 4/5), which would otherwise fall back to AVX2; avx512_zen4 (Zen 4/5's
/// AVX512-BF16) is built only for the kernels that multiply bf16
/// (targets::cpu::buildsVariant), the others run avx512_skylake there.
struct CpuTargetOptions {
  std::vector<std::string> featureSets = {"avx512_sapphirerapids", "avx512_zen4",
                                          "avx512_skylake", "avx2-fma-f16c"};
};

/// True when `features` is a Halide feature list ("avx2-fma-f16c") that
/// forms a valid x86-64 Linux target.
bool isValidCpuFeatureSet(const std::string &features);

/// Compiles `spec` ahead of time into an object file defining the C symbol
/// spec.symbolName() (int fn(halide_buffer_t*...)), without a Halide runtime.
/// Returns an empty string on success, else a message naming the problem.
std::string compileKernelObject(const KernelSpec &spec,
                                const CpuTargetOptions &options,
                                const std::string &objectPath);

/// Compiles the one Halide runtime every generated library carries.
std::string compileHalideRuntime(const CpuTargetOptions &options,
                                 const std::string &objectPath);

/// The CUDA target: kernels run on an NVIDIA GPU of at least this compute
/// capability (major * 10 + minor). Halide 21 generates PTX for 8.0 and
/// 8.6 at most; the driver compiles that PTX for a newer GPU (sm_90) when
/// it loads it.
struct CudaTargetOptions {
  int capability = 80;
};

/// "80" or "86" are what Halide can target; "" when `capability` is one,
/// else a message naming the choices.
std::string checkCudaCapability(int capability);

/// Compiles `spec` into an object defining spec.symbolName(): its GPU
/// schedule, with PTX for `options.capability` embedded and x86-64 host code
/// that launches it through the Halide CUDA runtime (which
/// compileCudaHalideRuntime supplies). Kinds without a GPU schedule (the
/// matmuls, which go to cuBLASLt, and attention) are an error naming them.
std::string compileCudaKernelObject(const KernelSpec &spec, const CudaTargetOptions &options,
                                    const std::string &objectPath);

/// The Halide runtime of a CUDA library, its CUDA module included.
std::string compileCudaHalideRuntime(const CudaTargetOptions &options,
                                     const std::string &objectPath);

/// Fills `table` for the kernel variants `options` builds. Returns an empty
/// string on success, else a message naming the problem.
std::string computeIsaDispatch(const CpuTargetOptions &options,
                               IsaDispatchTable &table);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_KERNELS_H
