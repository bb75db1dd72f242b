//===- AttentionKernels.h - tfm.attention as generated CUDA code -*- C++ -*-===//
//
// The GPU's fused attention: for each attention op of a model the compiler
// writes a configuration of FlashAttention.cuh's kernel (its head sizes,
// which masks and terms it reads, its storage type), as CUDA C++, and nvcc
// compiles the lot ahead of time into one fatbin: SASS for each GPU
// architecture asked for and the PTX of the newest, which the driver JIT-
// compiles for later GPUs. No MLIR or Halide here.
//
// The route, of those issue 10 names (CUDA C++ on CUTLASS/CuTe by nvcc or
// NVRTC, or MLIR's gpu/nvgpu/nvvm dialects): CUDA C++ compiled ahead of
// time by nvcc, with the tensor-core instructions written as PTX in a thin
// layer of warp operations (WarpOps.cuh), for three reasons.
//   - The same kernel source compiles for the host, where a test runs it
//     thread by thread on an emulator of those few operations
//     (tests/unit/cuda/FlashAttentionEmuTest.cpp): the indexing, masking and
//     online softmax are checked on every machine, not only on a GPU. CuTe's
//     layouts and copy atoms do not compile for the host that way.
//   - nvcc at compile time costs the library's user nothing at load (NVRTC
//     would compile at every process's first run, and its 109 MB
//     libnvrtc.so would have to be on the user's machine), and gives SASS
//     for the architectures asked for plus PTX for newer ones.
//   - mma.sync (sm_80, also run by sm_90) needs nothing CUTLASS adds. The
//     sm_90 path (wgmma on shared-memory descriptors, TMA, warp
//     specialisation) is where CuTe's layouts would pay their way; it is
//     not written yet.
// What a model compiles into the kernel is the configuration
// (AttentionConfig: head sizes, masks, bias table, softcap, RoPE, types);
// shapes, strides and pointers are run-time arguments (AttentionParams).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TARGETS_CUDA_ATTENTION_ATTENTIONKERNELS_H
#define ATTUNE_COMPILER_TARGETS_CUDA_ATTENTION_ATTENTIONKERNELS_H

#include "compiler/support/ScalarType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attune::targets::cuda {

/// One attention kernel: the compile-time half of FlashAttention.cuh's
/// AttentionConfig. The run-time half (shapes, strides, scale, pointers) is
/// AttentionParams.
struct AttentionKernelSpec {
  /// The kernel is `attune_attention_<name>` (letters, digits, '_').
  std::string name;
  int headDim = 64, valueDim = 64;
  /// `bias`: a bias table read by the bucket of the distance (T5's;
  /// AttentionParams::biasTable).
  bool causal = false, mask = false, keyPadding = false, bias = false, softcap = false;
  /// RoPE on load: 0 for none, else the rotary dimensions (a multiple of 4).
  int rotaryDims = 0;
  bool ropeInterleaved = false;
  /// q, k, v and the result: F32, BF16 or F16.
  ScalarType storage = ScalarType::F32;
  /// A per-head bias linear in the distance (ALiBi; AttentionParams::
  /// biasSlopes).
  bool linearBias = false;
  /// Per GPU architecture (80 for sm_80, ...), the blocks an SM must hold
  /// at once (__launch_bounds__'s second argument; 0: ptxas's choice), from
  /// the tuning database's `blocks_per_sm`; an architecture without one
  /// gets FlashAttention.cuh's attentionBlocksPerSm.
  std::map<int, int> blocksPerSm;

  /// tfm.attention's `product_type = bf16` on operands that are not bf16:
  /// f32 ones (--precision=bf16) or f16 ones, then rounded to bf16.
  bool bf16Products = false;
  /// tfm.attention's `product_type = f16` on f32 operands (--precision=f16),
  /// then rounded to f16.
  bool f16Products = false;

  /// The tensor cores' operand type: f16 for f16 storage (tfm.attention's
  /// f16 operands multiply in f16) unless bf16Products, and with
  /// f16Products; else bf16 (bf16 operands, or f32 ones with
  /// `product_type = bf16`).
  ScalarType products() const {
    if (f16Products)
      return ScalarType::F16;
    return storage == ScalarType::F16 && !bf16Products ? ScalarType::F16 : ScalarType::BF16;
  }

  /// The kernel's symbol, and that of the kernel that combines its key
  /// splits (AttentionParams::keySplits).
  std::string symbol() const { return "attune_attention_" + name; }
  std::string combineSymbol() const { return symbol() + "_combine"; }
};

/// Why `spec` has no kernel ("" when it has one): head sizes that are not
/// multiples of 16 or exceed 128, a storage type other than f32, bf16 and
/// f16, a bad name or rotary size, blocks per SM outside [0, 16].
std::string unsupportedReason(const AttentionKernelSpec &spec);

/// The CUDA source that defines the kernels of `specs` (symbol() and
/// combineSymbol() of each), as extern "C" __global__ functions including
/// "FlashAttention.cuh". Every spec must be supported.
std::string attentionKernelSource(const std::vector<AttentionKernelSpec> &specs);

/// The text of the kernel headers, as attune-compile carries them:
/// {file name, contents} for FlashAttention.cuh and WarpOps.cuh.
std::vector<std::pair<std::string, std::string>> attentionKernelHeaders();

/// Where nvcc is: $ATTUNE_NVCC, else $CUDA_HOME/bin/nvcc, else
/// /usr/local/cuda/bin/nvcc, else `nvcc` on PATH; "" when none exists.
std::string findNvcc();

/// The GPU architectures a library for compute capability `capability`
/// carries SASS for: its own and sm_90 (the H100), whose PTX the driver
/// compiles for later GPUs (compileFatbin).
std::vector<int> attentionArchitectures(int capability);

/// The tuning parameter a kernel reads from `params` (a tuning database
/// entry for one architecture): "blocks_per_sm", clamped to [-1, 1000]
/// (unsupportedReason refuses what lies outside [0, 16]); none when not
/// given, and then `error` names a parameter it does not know, if any.
std::optional<int> blocksPerSmParam(const std::map<std::string, int64_t> &params,
                                    std::string &error);

/// Compiles `source` with nvcc (and the kernel headers beside it) into a
/// fatbin with SASS for each of `architectures` (80 for sm_80, 90 for
/// sm_90, ...) and the PTX of the last one. On failure returns false with
/// `error` naming the step and quoting nvcc's messages. `ptxasReport`, when
/// given, receives ptxas's per-kernel register and spill report.
bool compileFatbin(const std::string &source, const std::vector<int> &architectures,
                   std::vector<char> &fatbin, std::string &error,
                   std::string *ptxasReport = nullptr);

} // namespace attune::targets::cuda

#endif // ATTUNE_COMPILER_TARGETS_CUDA_ATTENTION_ATTENTIONKERNELS_H
