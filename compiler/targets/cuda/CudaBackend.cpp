//===- CudaBackend.cpp - the NVIDIA GPU target backend --------------------===//

#include "compiler/targets/cuda/CudaBackend.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/codegen/halide/Process.h"
#include "compiler/codegen/host/HostCodegen.h"
#include "compiler/modifiers/ScoreModifier.h"
#include "compiler/targets/cuda/attention/AttentionKernels.h"
#include "dialects/tfm/TfmOps.h"

#include <cstdio>
#include <fstream>

namespace attune::targets::cuda {
namespace {

/// `type` as the IR prints it, for messages.
std::string typeName(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// Whether an op of `module` yields bf16 or f16 tensors.
bool computesIn16Bits(mlir::Operation *module) {
  bool found = false;
  module->walk([&](mlir::Operation *op) {
    for (mlir::Type type : op->getResultTypes())
      if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
        if (tensor.getElementType().isBF16() || tensor.getElementType().isF16()) {
          found = true;
          return mlir::WalkResult::interrupt();
        }
    return mlir::WalkResult::advance();
  });
  return found;
}

/// The tuning database's level for GPU architecture `arch`: "sm_90".
std::string architectureLevel(int arch) { return "sm_" + std::to_string(arch); }

/// The FlashAttention.cuh configuration of an attention kernel spec, named
/// after the spec's symbol, for the architectures of `capability`'s
/// fatbin; `error` says when a tuning entry holds a parameter the kernel
/// does not read.
AttentionKernelSpec attentionKernelSpec(const codegen::KernelSpec &spec, int capability,
                                        std::string &error) {
  AttentionKernelSpec kernel;
  for (int arch : attentionArchitectures(capability)) {
    auto schedule = spec.schedules.find(architectureLevel(arch));
    if (schedule == spec.schedules.end())
      continue;
    std::optional<int> blocks = blocksPerSmParam(schedule->second, error);
    if (!error.empty()) {
      error = "its tuning entry for " + schedule->first + ": " + error;
      return kernel;
    }
    if (blocks)
      kernel.blocksPerSm[arch] = *blocks;
  }
  std::string symbol = spec.symbolName(), prefix = "attune_attention_";
  kernel.name = symbol.rfind(prefix, 0) == 0 ? symbol.substr(prefix.size()) : symbol;
  kernel.headDim = int(spec.headDim);
  kernel.valueDim = int(spec.valueHeadDim());
  kernel.causal = spec.causal;
  kernel.mask = spec.hasMask;
  kernel.keyPadding = spec.hasKeyPadding;
  // Its modifiers are a DeviceBias (unfusedAttentionReasonFor): a table
  // read by bucket (T5's), or slopes per head (zeros for a window alone);
  // and the visible distances.
  for (const codegen::ModifierSpec &modifier : spec.modifiers)
    if (modifiers::lookupModifier(modifier.name)->tableBias(modifier.params))
      kernel.bias = true;
  kernel.linearBias = !spec.modifiers.empty() && !kernel.bias;
  kernel.softcap = spec.softcap > 0;
  if (spec.rope.enabled) {
    kernel.rotaryDims = int(spec.rope.rotaryDims > 0 ? spec.rope.rotaryDims : spec.headDim);
    kernel.ropeInterleaved = spec.rope.interleaved;
  }
  kernel.storage = spec.elementType;
  kernel.bf16Products = spec.bf16Products;
  kernel.f16Products = spec.f16Products;
  return kernel;
}

/// The fatbin of `spec`'s attention kernel (nvcc) in an object defining
/// `<symbol>_image` (cc), which the host code hands the runtime
/// (attune_abi_attention_t).
std::string compileAttentionObject(const codegen::KernelSpec &spec, int capability,
                                   const std::string &objectPath) {
  std::string error;
  AttentionKernelSpec kernel = attentionKernelSpec(spec, capability, error);
  if (!error.empty())
    return error;
  if (std::string reason = unsupportedReason(kernel); !reason.empty())
    return "no GPU attention kernel for it: " + reason;
  std::vector<char> fatbin;
  if (!compileFatbin(attentionKernelSource({kernel}), attentionArchitectures(capability),
                     fatbin, error))
    return error;
  codegen::ScratchDir scratch;
  if (scratch.path.empty())
    return "cannot create a scratch directory for its fatbin";
  std::string source = scratch.path + "/image.c";
  {
    std::ofstream out(source);
    std::string symbol = spec.symbolName();
    out << "// The fatbin of " << symbol << " (FlashAttention.cuh).\n"
        << "const unsigned char " << symbol << "_image[] __attribute__((aligned(64))) = {";
    char hex[8];
    for (size_t i = 0; i < fatbin.size(); ++i) {
      std::snprintf(hex, sizeof hex, "%s%u", i % 32 ? "," : ",\n", unsigned(uint8_t(fatbin[i])));
      out << (i == 0 ? hex + 1 : hex);
    }
    out << "};\n";
    if (!out)
      return "cannot write " + source;
  }
  return codegen::runShellCommand("cc -c -fPIC " + codegen::shellQuote(source) + " -o " +
                                      codegen::shellQuote(objectPath),
                                  "compiling its fatbin into an object");
}

class CudaBackend final : public TargetBackend {
public:
  CudaBackend(codegen::CudaTargetOptions options, ScalarType precision)
      : options(options), precision(precision) {}

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
    if (spec.kind == codegen::KernelKind::Attention)
      return compileAttentionObject(spec, options.capability, objectPath);
    return codegen::compileCudaKernelObject(spec, options, objectPath);
  }

  std::string knownCompilerCrash(const codegen::KernelSpec &kernel) const override {
    if (kernel.elementType != ScalarType::BF16)
      return "";
    // Seen on layer norm, softmax, GELU and add; copies and gathers build.
    return "note: Halide 21's CUDA back end aborts on bf16 arithmetic (an LLVM 'Invalid cast' "
           "assertion in its PTX code generation); build the model in f32, with "
           "--precision=bf16 for bf16 products on the tensor cores, or in f16";
  }

  std::string compileRuntime(const std::string &objectPath) const override {
    return codegen::compileCudaHalideRuntime(options, objectPath);
  }

  std::string compileSupport(const std::string &directory,
                             const std::string &objectPath) const override {
    return codegen::compileModelSupport(directory, objectPath, /*cuda=*/true);
  }

  std::string configureHost(codegen::HostLoweringOptions &host) const override {
    // One variant: nothing for ATTUNE_CPU to cap. (matmulProducts is the
    // driver's to set, from --precision.)
    host.cuda = true;
    return "";
  }

  std::string unfusedAttentionReason(mlir::Operation *module) const override {
    // The kernel multiplies 16-bit values: f32 attentions with
    // --precision=bf16's product_type, and those of a model computing in
    // bf16 or f16, which multiply in their own type (the others of such a
    // model are decomposed one by one: unfusedAttentionReasonFor).
    if (precision != ScalarType::F32 || computesIn16Bits(module))
      return "";
    return "the CUDA target's fused attention computes bf16 or f16 products (build with "
           "--precision=bf16 or --precision=f16): in f32, attention runs as cuBLASLt batched "
           "matmuls around a Halide softmax";
  }

  std::string unfusedAttentionReasonFor(mlir::Operation *op) const override;

  bool roundsProducts() const override {
    // cuBLASLt's CUBLAS_COMPUTE_32F_FAST_16BF and _16F: f32 data in and
    // out, the operands rounded to bf16 (or TF32) or to f16 for the tensor
    // cores.
    return true;
  }

  std::vector<std::string> tuningLevels() const override {
    // The architectures of the fatbin: the fused attention's launch bounds
    // per architecture (AttentionKernelSpec::blocksPerSm). The Halide
    // kernels' GPU schedules are one formula (BuilderSupport.h's
    // kGpuThreads), which no entry changes.
    std::vector<std::string> levels;
    for (int arch : attentionArchitectures(options.capability))
      levels.push_back(architectureLevel(arch));
    return levels;
  }

  std::vector<std::string> epilogueActivations() const override {
    // cuBLASLt's epilogues (CUBLASLT_EPILOGUE_RELU, _GELU: the tanh form).
    return {"relu", "gelu_tanh"};
  }

  int64_t weightPanelWidth(bool) const override {
    // cuBLASLt reads the row-major [K, N] weight as it is.
    return 0;
  }

  std::vector<std::string> linkLibraries() const override {
    // The Halide runtime dlopens the driver and uses pthreads.
    return {"-lpthread", "-ldl", "-lm"};
  }

private:
  codegen::CudaTargetOptions options;
  ScalarType precision;
};

std::string CudaBackend::unfusedAttentionReasonFor(mlir::Operation *op) const {
  auto attention = mlir::dyn_cast<tfm::AttentionOp>(op);
  if (!attention)
    return "not a tfm.attention";
  auto query = mlir::cast<mlir::RankedTensorType>(attention.getQuery().getType());
  // Products of bf16 or f16 operands are in their type (tfm.attention);
  // f32 ones are bf16 or f16 with product_type (--precision=bf16 or f16).
  mlir::Type element = query.getElementType();
  const bool roundedProducts = attention.getProductType().has_value();
  if (!roundedProducts && !element.isBF16() && !element.isF16())
    return "its products are f32 (the GPU kernel's tensor cores multiply bf16 or f16: build "
           "with --precision=bf16 or --precision=f16)";
  if (mlir::ArrayAttr list = attention.getModifiersAttr(); list && !list.empty()) {
    // The kernel evaluates a bias linear in the distance (ALiBi) or one
    // read from a table by the distance's bucket (T5), and a visible range
    // (a window); content and value terms (Shaw, Transformer-XL, DeBERTa)
    // need more.
    const auto suffix = " (the GPU kernel evaluates biases linear in the distance, as ALiBi's, "
                        "bucketed bias tables, as T5's, and windows)";
    int64_t heads = query.getDimSize(attention.getHeadAxis());
    if (mlir::ShapedType::isDynamic(heads))
      return "its head count is dynamic (the GPU kernel's ALiBi slopes are per head)";
    std::vector<std::pair<const modifiers::ScoreModifier *, modifiers::ModifierParams>> given;
    for (auto [attr, group] : llvm::zip_equal(list, attention.getModifierOperandGroups())) {
      tfm::ResolvedModifier resolved;
      if (std::string problem =
              tfm::parseModifier(mlir::cast<mlir::DictionaryAttr>(attr), resolved);
          !problem.empty())
        return problem;
      modifiers::AttentionDims dims;
      dims.heads = heads;
      std::vector<std::vector<int64_t>> shapes;
      for (mlir::Value operand : group) {
        auto type = mlir::cast<mlir::RankedTensorType>(operand.getType());
        // The kernel reads a table in the storage type of q.
        if (type.getElementType() != query.getElementType())
          return "its score modifier " + resolved.definition->name() + "'s table is " +
                 typeName(type.getElementType()) + " and its query " +
                 typeName(query.getElementType()) + " (the GPU kernel reads both alike)";
        shapes.emplace_back(type.getShape().begin(), type.getShape().end());
      }
      if (std::string problem =
              modifiers::checkModifier(*resolved.definition, resolved.params, dims, shapes);
          !problem.empty())
        return problem;
      given.push_back({resolved.definition, resolved.params});
    }
    modifiers::DeviceBias bias;
    if (std::string reason = modifiers::deviceBiasOf(given, heads, bias); !reason.empty())
      return reason + suffix;
  }
  auto value = mlir::cast<mlir::RankedTensorType>(attention.getValue().getType());
  AttentionKernelSpec kernel;
  kernel.name = "check";
  kernel.headDim = query.isDynamicDim(3) ? -1 : int(query.getDimSize(3));
  kernel.valueDim = value.isDynamicDim(3) ? -1 : int(value.getDimSize(3));
  kernel.storage = element.isF32() ? ScalarType::F32
                   : element.isBF16() ? ScalarType::BF16
                                      : ScalarType::F16;
  if (mlir::DictionaryAttr rope = attention.getRopeAttr()) {
    auto dims = rope.getAs<mlir::IntegerAttr>("rotary_dims");
    kernel.rotaryDims = dims ? int(dims.getInt()) : kernel.headDim;
  }
  if (std::string reason = unsupportedReason(kernel); !reason.empty())
    return reason;
  if (mlir::Value padding = attention.getKeyPaddingMask()) {
    // tfm.attention takes i1, i8, i32 and i64 masks, as the kernel does.
    mlir::Type type = mlir::cast<mlir::RankedTensorType>(padding.getType()).getElementType();
    unsigned bits = type.getIntOrFloatBitWidth();
    if (!type.isInteger() || (bits != 1 && bits != 8 && bits != 32 && bits != 64))
      return "its key padding mask has " + typeName(type) +
             " elements (the GPU kernel reads i1, i8, i32 and i64)";
  }
  return "";
}

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
  return std::make_unique<CudaBackend>(options, targetOptions.precision);
}

} // namespace attune::targets::cuda
