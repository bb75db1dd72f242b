//===- GpuAttentionGen.cpp - compile the GPU tests' attention kernels -----===//
//
// gpu_attention_gen OUT.fatbin [OUT.cu]: the kernels of GpuAttentionKernels.h
// through AttentionKernels.h (the source attune-compile writes, nvcc for
// sm_80 and sm_90 plus sm_90 PTX), for binaries that run them on a GPU.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/cuda/attention/AttentionKernels.h"
#include "compiler/targets/cuda/attention/WarpOps.cuh"

#include <cstdio>
#include <fstream>
#include <type_traits>

using attune::ScalarType;
using attune::targets::cuda::AttentionKernelSpec;

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT.fatbin [OUT.cu]\n", argv[0]);
    return 2;
  }
  using attune::gpu::bf16, attune::gpu::f16;
  std::vector<AttentionKernelSpec> specs;
#define ATTUNE_GPU_ATTENTION(NAME, D, DV, CAUSAL, MASK, PADDING, BIAS, SOFTCAP, ROT, INTER, \
                             TYPE)                                                          \
  specs.push_back({#NAME, D, DV, CAUSAL, MASK, PADDING, BIAS, SOFTCAP, ROT, INTER,          \
                   std::is_same_v<TYPE, float>  ? ScalarType::F32                            \
                   : std::is_same_v<TYPE, bf16> ? ScalarType::BF16                           \
                                                : ScalarType::F16});
#include "tests/unit/cuda/GpuAttentionKernels.h"
#undef ATTUNE_GPU_ATTENTION
  for (const AttentionKernelSpec &spec : specs) {
    std::string reason = attune::targets::cuda::unsupportedReason(spec);
    if (!reason.empty()) {
      std::fprintf(stderr, "gpu_attention_gen: %s: %s\n", spec.name.c_str(), reason.c_str());
      return 1;
    }
  }
  std::string source = attune::targets::cuda::attentionKernelSource(specs);
  if (argc == 3)
    std::ofstream(argv[2]) << source;
  std::vector<char> fatbin;
  std::string error, report;
  if (!attune::targets::cuda::compileFatbin(source, {80, 90}, fatbin, error, &report)) {
    std::fprintf(stderr, "gpu_attention_gen: %s\n", error.c_str());
    return 1;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out.write(fatbin.data(), std::streamsize(fatbin.size()));
  if (!out) {
    std::fprintf(stderr, "gpu_attention_gen: cannot write %s\n", argv[1]);
    return 1;
  }
  std::printf("%zu kernels, %zu bytes of fatbin\n", specs.size(), fatbin.size());
  return 0;
}
