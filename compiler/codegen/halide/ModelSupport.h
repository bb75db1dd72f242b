//===- ModelSupport.h - the C code every Halide library links -------------===//
//
// The C files of runtime/model/ go into every model library (compiler/
// driver) and every kernel library attune-tune times (AotKernel):
//  - scratch_cache.c installs a cache of freed blocks behind the Halide
//    runtime's halide_malloc/halide_free (see that file for why: glibc
//    trimmed a kernel's per-call scratch back to the system, and every call
//    faulted it in again);
//  - par_for.c replaces the Halide runtime's thread pool with one whose
//    workers spin between the loops of a run and which runs loops alone
//    where that measures faster (see that file: Halide's pool made small
//    models slower on 2 threads than on 1);
//  - amx_kernels.c is bf16 attention on Intel AMX tiles, the extern stage
//    the avx512_spr variant of a bf16 attention kernel calls
//    (AttentionKernel.cpp), and the bf16 linear on AMX (MatmulKernels.cpp);
//  - attention_f32.c (with attention_f32_isa.inc and attention_f32_tile.inc,
//    which it includes per ISA and tile height) is f32 attention for
//    AVX-512 and AVX2, the extern stage those variants of an f32 attention
//    kernel call (AttentionKernel.cpp);
//  - extern_stage.h is what the last two share;
//  - cuda_support.c, in --target=cuda libraries only, runs their Halide
//    CUDA kernels in the runtime's context and on its stream.
// They are embedded in the compiler as strings and compiled with the
// system's `cc` when a library is linked, so that no tool needs the source
// tree at run time. Processes that JIT kernels (tests, benchmarks) get
// the kernels linked in and registered as JIT externs (JitKernel).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_MODELSUPPORT_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_MODELSUPPORT_H

#include <string>

namespace attune::codegen {

/// The AMX attention's extern stages (runtime/model/amx_kernels.c):
/// without and with a key padding operand.
inline constexpr const char *kAmxAttentionSymbol = "attune_attention_bf16_amx";
inline constexpr const char *kAmxPaddedAttentionSymbol = "attune_attention_bf16_amx_padded";
/// The f32 attention for AVX-512 and for AVX2 + FMA
/// (runtime/model/attention_f32.c).
inline constexpr const char *kFlashAttentionAvx512Symbol = "attune_attention_f32_avx512";
inline constexpr const char *kFlashAttentionAvx2Symbol = "attune_attention_f32_avx2";
/// The AMX linear over bf16 pair panels, without and with a bias.
inline constexpr const char *kAmxLinearSymbol = "attune_linear_bf16_amx";
inline constexpr const char *kAmxLinearBiasSymbol = "attune_linear_bf16_amx_bias";
/// The f32 linear over 16-wide panels for AVX-512 and for AVX2 + FMA
/// (runtime/model/linear_f32.c), without and with a bias.
inline constexpr const char *kLinearF32Avx512Symbol = "attune_linear_f32_avx512";
inline constexpr const char *kLinearF32Avx512BiasSymbol = "attune_linear_f32_avx512_bias";
inline constexpr const char *kLinearF32Avx2Symbol = "attune_linear_f32_avx2";
inline constexpr const char *kLinearF32Avx2BiasSymbol = "attune_linear_f32_avx2_bias";

/// Writes the sources into `directory` and compiles them with the system's
/// `cc` into one position-independent `object`; with `cuda`, for a library
/// of --target=cuda, also cuda_support.c, which ties the Halide CUDA
/// runtime to the runtime's device. Returns "" or what failed.
std::string compileModelSupport(const std::string &directory, const std::string &object,
                                bool cuda = false);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_MODELSUPPORT_H
