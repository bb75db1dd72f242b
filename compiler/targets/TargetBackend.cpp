//===- TargetBackend.cpp - the registry of code generation targets --------===//

#include "compiler/targets/TargetBackend.h"
#include "compiler/targets/cpu/CpuBackend.h"
#include "compiler/targets/cuda/CudaBackend.h"

namespace attune::targets {

TargetBackend::~TargetBackend() = default;

std::unique_ptr<TargetBackend> createTargetBackend(const std::string &name,
                                                   const TargetOptions &options,
                                                   std::string &error) {
  if (name == "cpu")
    return cpu::createCpuBackend(options, error);
  if (name == "cuda")
    return cuda::createCudaBackend(options, error);
  error = "unknown --target value '" + name + "', expected cpu or cuda";
  return nullptr;
}

} // namespace attune::targets
