//===- Kernels.cpp - kernel dispatch and ahead-of-time compilation --------===//
//
// The dispatch from a spec to the builder of its kind, and the AOT driver
// that compiles a spec for several x86 feature sets into one object that
// picks the best of them at run time.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/Process.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

using namespace Halide;

namespace attune::codegen {

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace detail {

// A kind added to the enum without a builder must not build: -Wswitch is an
// error here, not the warning -Wall makes it.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
BuiltKernel buildKernel(const KernelSpec &spec, const Target &target) {
  std::string problem = validateKernelSpec(spec);
  if (!problem.empty())
    failSpec(problem);
  switch (spec.kind) {
  case KernelKind::Embedding:
    return buildEmbeddingKernel(spec, target);
  case KernelKind::LearnedPosition:
    return buildLearnedPositionKernel(spec, target);
  case KernelKind::Sinusoidal:
    return buildSinusoidalKernel(spec, target);
  case KernelKind::LayerNorm:
    return buildLayerNormKernel(spec, target);
  case KernelKind::RmsNorm:
    return buildRmsNormKernel(spec, target);
  case KernelKind::Binary:
    return buildBinaryKernel(spec, target);
  case KernelKind::Where:
    return buildWhereKernel(spec, target);
  case KernelKind::Unary:
    return buildUnaryKernel(spec, target);
  case KernelKind::CausalMask:
    return buildCausalMaskKernel(spec, target);
  case KernelKind::Copy:
    return buildCopyKernel(spec, target);
  case KernelKind::RepeatInterleave:
    return buildRepeatInterleaveKernel(spec, target);
  case KernelKind::Linear:
    requireCpuTarget(target, "linear", "on a GPU, matmuls are for cuBLASLt");
    return buildLinearKernel(spec, target);
  case KernelKind::Matmul:
    requireCpuTarget(target, "matmul", "on a GPU, matmuls are for cuBLASLt");
    return buildMatmulKernel(spec, target);
  case KernelKind::Softmax:
    return buildSoftmaxKernel(spec, target);
  case KernelKind::Attention:
    requireCpuTarget(target, "attention", "not written yet");
    return buildAttentionKernel(spec, target);
  case KernelKind::ScoreBias:
    return buildScoreBiasKernel(spec, target);
  case KernelKind::ScoreValues:
    return buildScoreValuesKernel(spec, target);
  case KernelKind::Rope:
    return buildRopeKernel(spec, target);
  case KernelKind::MultiplicativePosition:
    return buildMultiplicativePositionKernel(spec, target);
  case KernelKind::RecursivePosition:
    return buildRecursivePositionKernel(spec, target);
  case KernelKind::ComplexEmbedding:
    return buildComplexEmbeddingKernel(spec, target);
  case KernelKind::ComplexLinear:
    requireCpuTarget(target, "complex_linear", "on a GPU, matmuls are for cuBLASLt");
    return buildComplexLinearKernel(spec, target);
  case KernelKind::Arange:
    return buildArangeKernel(spec, target);
  case KernelKind::Compare:
    return buildCompareKernel(spec, target);
  case KernelKind::Cast:
    return buildCastKernel(spec, target);
  case KernelKind::GatherElements:
    return buildGatherElementsKernel(spec, target);
  }
  // validateKernelSpec rejected every value outside the enum.
  failSpec("unknown kernel kind " + std::to_string(static_cast<int>(spec.kind)));
}
#pragma GCC diagnostic pop

} // namespace detail

//===----------------------------------------------------------------------===//
// Ahead-of-time compilation
//===----------------------------------------------------------------------===//

namespace {

/// The targets a kernel is compiled for, best first, baseline last; every
/// one without a runtime (compileHalideRuntime supplies the one copy). With
/// `spec`, only the levels it is built for (targets::cpu::buildsVariant).
std::string makeTargets(const KernelSpec *spec, const CpuTargetOptions &options,
                        std::vector<Target> &targets,
                        std::vector<std::string> &suffixes) {
  for (const std::string &features : options.featureSets) {
    if (!isValidCpuFeatureSet(features))
      return "expected a Halide feature set such as 'avx2-fma-f16c', got '" +
             features + "'";
    Target target = Target(targets::cpu::halideTargetString(features))
                        .with_feature(Target::NoRuntime);
    if (spec && !targets::cpu::buildsVariant(*spec, targets::cpu::isaOf(target)))
      continue;
    targets.push_back(target);
    // The suffix becomes part of a symbol name: keep it an identifier.
    std::string suffix = features;
    std::replace(suffix.begin(), suffix.end(), '-', '_');
    suffixes.push_back(suffix);
  }
  targets.push_back(targets::cpu::halideTarget(ATTUNE_ISA_BASELINE)
                        .with_feature(Target::NoRuntime));
  suffixes.push_back("baseline");
  return "";
}

/// Halide's compile-time messages while a kernel object is built: errors
/// are thrown as Halide's own reporter throws them, warnings printed as it
/// prints them, except one. Halide warns that a "(b)float16 type operation
/// is emulated" for every kernel that converts or computes in f16 or bf16
/// without instructions for it, and advises adding the target feature: the
/// baseline variant (no F16C) for f16, and every variant for bf16, even
/// avx512_sapphirerapids (AVX512-BF16 converts and multiplies, but a bf16
/// max or add is done in f32). A cold compile of a bf16 attention printed
/// 3 such lines, of an fp16 model 11. The variants and their features are
/// attune's choice (the runtime runs the best one the machine has), and
/// the emulation (arithmetic in f32, rounded back) is what the kernel tests
/// check against the reference evaluator, so the advice has nothing a user
/// can act on: the warning is dropped.
class KernelCompileReporter final : public CompileTimeErrorReporter {
public:
  void warning(const char *message) override {
    if (std::string_view(message).find("type operation is emulated") !=
        std::string_view::npos)
      return;
    std::fputs(message, stderr);
  }
  [[noreturn]] void error(const char *message) override {
    throw CompileError(message);
  }
};

/// Installs the reporter for one kernel's compile (the process's Halide
/// compiles are sequential: attune-compile builds each kernel in a child
/// process of its own).
class ScopedKernelReporter {
public:
  ScopedKernelReporter() { set_custom_compile_time_error_reporter(&reporter); }
  ~ScopedKernelReporter() { set_custom_compile_time_error_reporter(nullptr); }
  ScopedKernelReporter(const ScopedKernelReporter &) = delete;
  ScopedKernelReporter &operator=(const ScopedKernelReporter &) = delete;

private:
  KernelCompileReporter reporter;
};

} // namespace

bool isValidCpuFeatureSet(const std::string &features) {
  return !features.empty() &&
         Target::validate_target_string(targets::cpu::halideTargetString(features));
}

std::string compileKernelObject(const KernelSpec &spec,
                                const CpuTargetOptions &options,
                                const std::string &objectPath) {
  ScopedKernelReporter reporter;
  try {
    std::string problem = validateKernelSpec(spec);
    if (!problem.empty())
      return problem;
    std::vector<Target> targets;
    std::vector<std::string> suffixes;
    problem = makeTargets(&spec, options, targets, suffixes);
    if (!problem.empty())
      return problem;

    ScratchDir scratch;
    if (scratch.path.empty())
      return "cannot create a scratch directory for kernel " + spec.symbolName();
    const std::string name = spec.symbolName();
    const std::string stem = scratch.path + "/" + name + ".o";

    auto factory = [&spec](const std::string &fnName, const Target &target) {
      detail::BuiltKernel kernel = detail::buildKernel(spec, target);
      std::vector<Argument> args(kernel.inputs.begin(), kernel.inputs.end());
      return Pipeline(kernel.output).compile_to_module(args, fnName, target);
    };
    // With several targets Halide writes one object per target plus the
    // wrapper that defines `name` and dispatches on the CPU's features
    // (through halide_can_use_target_features, from the runtime).
    compile_multitarget(name, {{OutputFileType::object, stem}}, targets,
                        suffixes, factory);

    std::vector<std::string> objects;
    for (const auto &entry : std::filesystem::directory_iterator(scratch.path))
      if (entry.path().extension() == ".o")
        objects.push_back(entry.path().string());
    std::sort(objects.begin(), objects.end());
    if (objects.empty())
      return "Halide wrote no object for kernel " + name;

    // One object per kernel is what the driver links: merge the per-target
    // objects and the wrapper into a single relocatable object.
    std::error_code ec;
    std::filesystem::remove(objectPath, ec);
    if (objects.size() == 1) {
      std::filesystem::copy_file(objects.front(), objectPath, ec);
      if (ec)
        return "cannot write '" + objectPath + "': " + ec.message();
      return "";
    }
    const char *linker = std::getenv("ATTUNE_LD");
    std::string command = shellQuote(linker && *linker ? linker : "ld") +
                          " -r -o " + shellQuote(objectPath);
    for (const std::string &object : objects)
      command += " " + shellQuote(object);
    return runShellCommand(command, "merging the objects of kernel " + name);
  } catch (const Halide::Error &error) {
    return std::string("Halide failed to compile kernel ") + spec.symbolName() +
           ": " + error.what();
  } catch (const std::exception &error) {
    return std::string("compiling kernel ") + spec.symbolName() +
           " failed: " + error.what();
  }
}

namespace {

/// Host code for baseline x86-64 (it only launches), device code for
/// `options.capability`.
Target cudaTarget(const CudaTargetOptions &options) {
  return targets::cpu::halideTarget(ATTUNE_ISA_BASELINE)
      .with_feature(Target::CUDA)
      .with_feature(options.capability == 86 ? Target::CUDACapability86
                                             : Target::CUDACapability80);
}

} // namespace

std::string checkCudaCapability(int capability) {
  if (capability == 80 || capability == 86)
    return "";
  return "CUDA compute capability " + std::to_string(capability) +
         " is not one Halide 21 generates code for: expected 80 (sm_80, which also "
         "runs on sm_89 and sm_90 GPUs) or 86";
}

std::string compileCudaKernelObject(const KernelSpec &spec, const CudaTargetOptions &options,
                                    const std::string &objectPath) {
  try {
    if (std::string problem = validateKernelSpec(spec); !problem.empty())
      return problem;
    if (std::string problem = checkCudaCapability(options.capability); !problem.empty())
      return problem;
    Target target = cudaTarget(options).with_feature(Target::NoRuntime);
    detail::BuiltKernel kernel = detail::buildKernel(spec, target);
    std::vector<Argument> args(kernel.inputs.begin(), kernel.inputs.end());
    // One kernel, one object, one CUDA module: a library links many such
    // objects side by side (Halide::link_modules would keep one module's
    // device code of several, see tests/unit/cuda/GpuKernelGen.cpp).
    Pipeline(kernel.output).compile_to_object(objectPath, args, spec.symbolName(), target);
    if (!std::filesystem::exists(objectPath))
      return "Halide wrote no object for kernel " + spec.symbolName();
    return "";
  } catch (const Halide::Error &error) {
    return std::string("Halide failed to compile kernel ") + spec.symbolName() +
           " for CUDA: " + error.what();
  } catch (const std::exception &error) {
    return std::string("compiling kernel ") + spec.symbolName() + " for CUDA failed: " +
           error.what();
  }
}

std::string compileCudaHalideRuntime(const CudaTargetOptions &options,
                                     const std::string &objectPath) {
  try {
    if (std::string problem = checkCudaCapability(options.capability); !problem.empty())
      return problem;
    compile_standalone_runtime(objectPath, cudaTarget(options));
    if (!std::filesystem::exists(objectPath))
      return "Halide wrote no runtime object at '" + objectPath + "'";
    return "";
  } catch (const Halide::Error &error) {
    return std::string("Halide failed to compile its CUDA runtime: ") + error.what();
  } catch (const std::exception &error) {
    return std::string("compiling the Halide CUDA runtime failed: ") + error.what();
  }
}

std::string compileHalideRuntime(const CpuTargetOptions &options,
                                 const std::string &objectPath) {
  try {
    // The runtime is shared by every target a kernel was compiled for, so it
    // uses only the baseline's features; the feature sets are still checked
    // here so a bad option fails before anything else is written.
    std::vector<Target> targets;
    std::vector<std::string> suffixes;
    std::string problem = makeTargets(nullptr, options, targets, suffixes);
    if (!problem.empty())
      return problem;
    compile_standalone_runtime(objectPath,
                               targets::cpu::halideTarget(ATTUNE_ISA_BASELINE));
    if (!std::filesystem::exists(objectPath))
      return "Halide wrote no runtime object at '" + objectPath + "'";
    return "";
  } catch (const Halide::Error &error) {
    return std::string("Halide failed to compile its runtime: ") + error.what();
  } catch (const std::exception &error) {
    return std::string("compiling the Halide runtime failed: ") + error.what();
  }
}

} // namespace attune::codegen
