//===- CudaBackend.cpp - the NVIDIA GPU target backend --------------------===//

#include "compiler/targets/cuda/CudaBackend.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/codegen/host/HostCodegen.h"

namespace attune::targets::cuda {
namespace {

class CudaBackend final : public TargetBackend {
public:
  explicit CudaBackend(codegen::CudaTargetOptions options) : options(options) {}

  std::string name() const override { return "cuda"; }

  std::string describeHost() const override {
    // Whether this machine has a GPU is the runtime's question, asked at a
    // library's first run; compiling needs none.
    return "cuda: device code for sm_" + std::to_string(options.capability) +
           " (PTX, compiled by the driver for the GPU it runs on)";
  }

  std::vector<std::string> variants() const override {
    return {"sm_" + std::to_string(options.capability)};
  }

  std::string cacheKey() const override {
    return "cuda-sm_" + std::to_string(options.capability);
  }

  std::string compileKernel(const codegen::KernelSpec &spec,
                            const std::string &objectPath) const override {
    return codegen::compileCudaKernelObject(spec, options, objectPath);
  }

  std::string compileRuntime(const std::string &objectPath) const override {
    return codegen::compileCudaHalideRuntime(options, objectPath);
  }

  std::string compileSupport(const std::string &directory,
                             const std::string &objectPath) const override {
    return codegen::compileModelSupport(directory, objectPath, /*cuda=*/true);
  }

  std::string configureHost(codegen::HostLoweringOptions &host) const override {
    // One variant: nothing for ATTUNE_CPU to cap. (bf16Products is the
    // driver's to set, from --precision.)
    host.cuda = true;
    return "";
  }

  std::string unfusedAttentionReason() const override {
    return "the CUDA target has no fused attention kernel yet: attention runs as "
           "cuBLASLt batched matmuls around a Halide softmax";
  }

  bool bf16ByRoundingProducts() const override {
    // cuBLASLt's CUBLAS_COMPUTE_32F_FAST_16BF: f32 data in and out, the
    // operands rounded to bf16 (or TF32) for the tensor cores.
    return true;
  }

  bool readsTuningDatabase() const override {
    // Its entries are per CPU ISA level; the GPU schedules are one formula
    // (see BuilderSupport.h's kGpuThreads).
    return false;
  }

  std::vector<std::string> epilogueActivations() const override {
    // cuBLASLt's epilogues (CUBLASLT_EPILOGUE_RELU, _GELU: the tanh form).
    return {"relu", "gelu_tanh"};
  }

  int64_t weightPanelWidth() const override {
    // cuBLASLt reads the row-major [K, N] weight as it is.
    return 0;
  }

  std::vector<std::string> linkLibraries() const override {
    // The Halide runtime dlopens the driver and uses pthreads.
    return {"-lpthread", "-ldl", "-lm"};
  }

private:
  codegen::CudaTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend> createCudaBackend(const TargetOptions &targetOptions,
                                                 std::string &error) {
  if (!targetOptions.cpuFeatureSets.empty()) {
    error = "--cpu-features applies to --target=cpu, not to --target=cuda";
    return nullptr;
  }
  codegen::CudaTargetOptions options;
  options.capability = targetOptions.cudaCapability;
  if (std::string problem = codegen::checkCudaCapability(options.capability);
      !problem.empty()) {
    error = "invalid --cuda-arch: " + problem;
    return nullptr;
  }
  return std::make_unique<CudaBackend>(options);
}

} // namespace attune::targets::cuda
