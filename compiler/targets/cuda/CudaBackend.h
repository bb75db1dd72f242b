//===- CudaBackend.h - the NVIDIA GPU target backend ------------*- C++ -*-===//
//
// --target=cuda: a library whose kernels run on an NVIDIA GPU. Every kernel
// kind with a GPU schedule (the norms, softmax, embeddings, positional
// encodings, element-wise and data-movement kernels) is a Halide kernel with
// PTX embedded in its object; linears and batched matmuls are handed to the
// runtime, which runs them with cuBLASLt (Halide has no tensor-core code);
// attention runs unfused, as those. The host code takes device addresses and
// queues everything on the stream the runtime gives it (HostCodegen.h's
// HostLoweringOptions::cuda, runtime/model/cuda_support.c). Halide-free
// interface.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TARGETS_CUDA_CUDABACKEND_H
#define ATTUNE_COMPILER_TARGETS_CUDA_CUDABACKEND_H

#include "compiler/targets/TargetBackend.h"

namespace attune::targets::cuda {

/// The CUDA backend for `options.cudaCapability`; null with `error` set for
/// a capability Halide cannot generate code for.
std::unique_ptr<TargetBackend> createCudaBackend(const TargetOptions &options,
                                                 std::string &error);

} // namespace attune::targets::cuda

#endif // ATTUNE_COMPILER_TARGETS_CUDA_CUDABACKEND_H
