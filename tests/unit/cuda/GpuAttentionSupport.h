//===- GpuAttentionSupport.h - the attention fatbin for GPU tests -*- C++ -*-===//
//
// What gpu_attention_test and gpu_attention_benchmark share: where the build
// (or the bundle) keeps gpu_attention.fatbin, the kernels of
// GpuAttentionKernels.h it holds, and loading it onto a device.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_GPUATTENTIONSUPPORT_H
#define ATTUNE_TESTS_UNIT_CUDA_GPUATTENTIONSUPPORT_H

#include "runtime/cuda/CudaModule.h"
#include "runtime/cuda/FusedAttention.h"
#include "runtime/src/Status.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace attune::cuda::gputest {

/// One kernel of GpuAttentionKernels.h, as the host sees it.
struct AttentionKernel {
  const char *name;    // the line's name: plain64, bench128_causal, ...
  const char *symbol;  // attune_attention_<name>
  const char *combine; // attune_attention_<name>_combine: merges key splits
  int headDim, valueDim;
  bool causal;
  bool keyPadding; // reads a key padding mask (AttentionParams::keyPadding)
  bool bias;       // reads a bias table (AttentionParams::biasTable)
  bool half; // 16-bit storage (bf16, f16) of q, k, v and the result; f32 otherwise
  bool f16;  // that storage is f16 (and so are the products)
};

inline const std::vector<AttentionKernel> &attentionKernels() {
  using gpu::bf16, gpu::f16; // storage types of GpuAttentionKernels.h
  static const std::vector<AttentionKernel> kernels = {
// clang-format off
#define ATTUNE_GPU_ATTENTION(NAME, D, DV, CAUSAL, MASK, PADDING, BIAS, SOFTCAP, ROT, INTER, TYPE)  \
  {#NAME, "attune_attention_" #NAME, "attune_attention_" #NAME "_combine", D, DV, CAUSAL, PADDING, \
   BIAS,                                                                                           \
   !std::is_same_v<TYPE, float>, std::is_same_v<TYPE, f16>},
#include "tests/unit/cuda/GpuAttentionKernels.h"
#undef ATTUNE_GPU_ATTENTION
    // clang-format on
  };
  return kernels;
}

/// $ATTUNE_GPU_ATTENTION_FATBIN (the bundle sets it to its copy), else the
/// build's gpu_attention.fatbin.
inline std::string attentionFatbinPath() {
  if (const char *path = std::getenv("ATTUNE_GPU_ATTENTION_FATBIN"); path && *path)
    return path;
  return ATTUNE_GPU_ATTENTION_FATBIN;
}

/// Loads gpu_attention.fatbin onto `device`: "" when it loaded, else why
/// not. The file is read once per process.
inline std::string loadAttentionKernels(Device &device, std::unique_ptr<CudaModule> *module) {
  static const std::vector<char> image = [] {
    std::ifstream file(attentionFatbinPath(), std::ios::binary);
    std::vector<char> bytes(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>{});
    // PTX text must end in NUL; a fatbin or cubin carries its own size.
    if (!bytes.empty())
      bytes.push_back('\0');
    return bytes;
  }();
  if (image.empty())
    return "cannot read " + attentionFatbinPath() +
           " (ATTUNE_GPU_ATTENTION_FATBIN=path names another copy)";
  if (CudaModule::load(device, image.data(), module) != ATTUNE_OK)
    return attentionFatbinPath() + ": " + runtime::statusMessage();
  return "";
}

} // namespace attune::cuda::gputest

#endif // ATTUNE_TESTS_UNIT_CUDA_GPUATTENTIONSUPPORT_H
