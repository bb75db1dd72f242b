//===- Kernels.cpp - kernel catalogue and ahead-of-time compilation -------===//
//
// The parts of the catalogue every kernel shares: the symbol naming a spec,
// its C signature, the dispatch to one builder per kind, and the AOT driver
// that compiles a spec for several x86 feature sets into one object that
// picks the best of them at run time.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"

#include "Halide.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <unistd.h>

using namespace Halide;

namespace attune::codegen {

//===----------------------------------------------------------------------===//
// Names and signatures
//===----------------------------------------------------------------------===//

namespace {

/// A double, exactly: its IEEE-754 bits in hex. Printing "%g" would make two
/// nearby epsilons share a kernel; this never does.
std::string exactDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016" PRIx64, bits);
  return buffer;
}

const char *binaryName(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Add:
    return "add";
  case BinaryKind::Sub:
    return "sub";
  case BinaryKind::Mul:
    return "mul";
  case BinaryKind::Div:
    return "div";
  }
  return "binary_unknown";
}

const char *unaryName(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Relu:
    return "relu";
  case UnaryKind::GeluErf:
    return "gelu_erf";
  case UnaryKind::GeluTanh:
    return "gelu_tanh";
  case UnaryKind::Silu:
    return "silu";
  }
  return "unary_unknown";
}

const char *kindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Embedding:
    return "embedding";
  case KernelKind::LearnedPosition:
    return "learned_position";
  case KernelKind::Sinusoidal:
    return "sinusoidal";
  case KernelKind::LayerNorm:
    return "layer_norm";
  case KernelKind::RmsNorm:
    return "rms_norm";
  case KernelKind::Linear:
    return "linear";
  case KernelKind::Matmul:
    return "matmul";
  case KernelKind::Softmax:
    return "softmax";
  case KernelKind::Binary:
    return "binary";
  case KernelKind::Where:
    return "where";
  case KernelKind::Unary:
    return "unary";
  case KernelKind::CausalMask:
    return "causal_mask";
  case KernelKind::Copy:
    return "copy";
  case KernelKind::RepeatInterleave:
    return "repeat_interleave";
  case KernelKind::Attention:
    return "attention";
  }
  return nullptr;
}

} // namespace

std::string KernelSpec::symbolName() const {
  const char *kindStr = kindName(kind);
  std::string name = "attune_";
  if (!kindStr) // Not a kind: still a valid, distinct identifier.
    return name + "invalid_kind" + std::to_string(static_cast<int>(kind));
  name += kindStr;
  name += "_";
  name += detail::scalarTypeName(elementType);
  // Only the fields a kind is specialised on: two specs that differ in a
  // field their kind ignores are the same kernel and must share a name.
  switch (kind) {
  case KernelKind::Embedding:
    name += std::string("_ids_") + detail::scalarTypeName(indexType);
    break;
  case KernelKind::LearnedPosition:
  case KernelKind::Softmax:
    break;
  case KernelKind::Sinusoidal:
    if (form == SinusoidalForm::Interleaved) {
      name += "_interleaved_max" + exactDouble(maxTimescale);
    } else {
      name += "_concat_min" + exactDouble(minTimescale) + "_max" +
              exactDouble(maxTimescale);
    }
    break;
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm:
    name += "_eps" + exactDouble(epsilon);
    break;
  case KernelKind::Linear:
    name += hasBias ? "_bias" : "_nobias";
    break;
  case KernelKind::Matmul:
    name += transposeA ? "_ta" : "_na";
    name += transposeB ? "_tb" : "_nb";
    break;
  case KernelKind::Binary:
    name += std::string("_") + binaryName(binary) + "_r" + std::to_string(rank);
    break;
  case KernelKind::Where:
    name += std::string("_cond_") + detail::scalarTypeName(condType) + "_r" +
            std::to_string(rank);
    break;
  case KernelKind::Unary:
    name += std::string("_") + unaryName(unary);
    break;
  case KernelKind::CausalMask:
    name += "_fill" + exactDouble(value);
    break;
  case KernelKind::Copy:
    name += "_r" + std::to_string(rank);
    break;
  case KernelKind::RepeatInterleave:
    name += "_x" + std::to_string(repeats);
    break;
  case KernelKind::Attention:
    name += "_d" + std::to_string(headDim) + "_scale" + exactDouble(scale);
    if (causal)
      name += "_causal";
    if (hasMask)
      name += "_mask";
    if (hasKeyPadding)
      name += std::string("_kpm_") + detail::scalarTypeName(keyPaddingType);
    break;
  }
  // A negative rank or repeat count prints a '-': keep the identifier valid.
  std::replace(name.begin(), name.end(), '-', 'm');
  return name;
}

std::string KernelSpec::scheduleKey() const {
  // std::map iterates in key order, so equal schedules print equally.
  std::string key;
  for (const auto &[isa, params] : schedules) {
    key += isa + "{";
    for (const auto &[name, value] : params)
      key += name + "=" + std::to_string(value) + ";";
    key += "}";
  }
  return key;
}

std::vector<KernelArg> kernelSignature(const KernelSpec &spec) {
  const ScalarType e = spec.elementType;
  switch (spec.kind) {
  case KernelKind::Embedding:
    return {{"table", e, 2}, {"ids", spec.indexType, 1}, {"out", e, 2}};
  case KernelKind::LearnedPosition:
    return {{"x", e, 3}, {"table", e, 2}, {"out", e, 3}};
  case KernelKind::Sinusoidal:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::LayerNorm:
    return {{"x", e, 2}, {"gamma", e, 1}, {"beta", e, 1}, {"out", e, 2}};
  case KernelKind::RmsNorm:
    return {{"x", e, 2}, {"gamma", e, 1}, {"out", e, 2}};
  case KernelKind::Linear: {
    std::vector<KernelArg> args = {{"x", e, 2}, {"w", e, 2}};
    if (spec.hasBias)
      args.push_back({"bias", e, 1});
    args.push_back({"out", e, 2});
    return args;
  }
  case KernelKind::Matmul:
    return {{"a", e, 3}, {"b", e, 3}, {"out", e, 3}};
  case KernelKind::Softmax:
    return {{"x", e, 2}, {"out", e, 2}};
  case KernelKind::Binary:
    return {{"lhs", e, spec.rank}, {"rhs", e, spec.rank}, {"out", e, spec.rank}};
  case KernelKind::Where:
    return {{"cond", spec.condType, spec.rank},
            {"onTrue", e, spec.rank},
            {"onFalse", e, spec.rank},
            {"out", e, spec.rank}};
  case KernelKind::Unary:
    return {{"x", e, 1}, {"out", e, 1}};
  case KernelKind::CausalMask:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::Copy:
    return {{"x", e, spec.rank}, {"out", e, spec.rank}};
  case KernelKind::RepeatInterleave:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::Attention: {
    std::vector<KernelArg> args = {{"q", e, 4}, {"k", e, 4}, {"v", e, 4}};
    if (spec.hasMask)
      args.push_back({"mask", e, 4});
    if (spec.hasKeyPadding)
      args.push_back({"keyPadding", spec.keyPaddingType, 2});
    args.push_back({"out", e, 4});
    return args;
  }
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace detail {

namespace {

/// Highest rank a strided elementwise kernel takes: the tfm dialect's models
/// never go past 5-d, and Halide's buffers carry at most 16 dimensions.
constexpr int kMaxRank = 8;

/// Checks what no builder can recover from; returns "" when buildable.
std::string validateSpec(const KernelSpec &spec) {
  const char *kind = kindName(spec.kind);
  if (!kind)
    return "unknown kernel kind " + std::to_string(static_cast<int>(spec.kind));
  auto bad = [&](const std::string &what) { return std::string(kind) + ": " + what; };
  auto validType = [](ScalarType t) {
    return static_cast<int>(t) >= 0 && static_cast<int>(t) <= 6;
  };
  if (!validType(spec.elementType))
    return bad("expected a known element type, got " +
               std::to_string(static_cast<int>(spec.elementType)));
  switch (spec.kind) {
  case KernelKind::Binary:
  case KernelKind::Where:
  case KernelKind::Copy:
    if (spec.rank < 1 || spec.rank > kMaxRank)
      return bad("expected rank in [1, " + std::to_string(kMaxRank) + "], got " +
                 std::to_string(spec.rank));
    break;
  default:
    break;
  }
  switch (spec.kind) {
  case KernelKind::Embedding:
    if (spec.indexType != ScalarType::I32 && spec.indexType != ScalarType::I64)
      return bad(std::string("expected index type i32 or i64, got ") +
                 scalarTypeName(spec.indexType));
    break;
  case KernelKind::Where:
    if (!validType(spec.condType))
      return bad("expected a known condition type");
    break;
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm:
    if (!(spec.epsilon >= 0) || !std::isfinite(spec.epsilon))
      return bad("expected a finite epsilon >= 0, got " + std::to_string(spec.epsilon));
    break;
  case KernelKind::Sinusoidal:
    if (!(spec.maxTimescale > 0) || !std::isfinite(spec.maxTimescale))
      return bad("expected max timescale > 0, got " + std::to_string(spec.maxTimescale));
    if (spec.form == SinusoidalForm::Concat &&
        (!(spec.minTimescale > 0) || !std::isfinite(spec.minTimescale)))
      return bad("expected min timescale > 0, got " + std::to_string(spec.minTimescale));
    if (spec.form != SinusoidalForm::Interleaved && spec.form != SinusoidalForm::Concat)
      return bad("unknown sinusoidal form");
    break;
  case KernelKind::RepeatInterleave:
    if (spec.repeats < 1 || spec.repeats > INT32_MAX)
      return bad("expected repeats in [1, 2^31), got " + std::to_string(spec.repeats));
    break;
  case KernelKind::CausalMask:
    if (std::isnan(spec.value))
      return bad("expected a fill value that is not NaN");
    break;
  default:
    break;
  }
  return "";
}

} // namespace

BuiltKernel buildKernel(const KernelSpec &spec, const Target &target) {
  std::string problem = validateSpec(spec);
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
#ifdef ATTUNE_HAVE_MATMUL_KERNELS
  case KernelKind::Linear:
    return buildLinearKernel(spec, target);
  case KernelKind::Matmul:
    return buildMatmulKernel(spec, target);
  case KernelKind::Softmax:
    return buildSoftmaxKernel(spec, target);
#endif
#ifdef ATTUNE_HAVE_ATTENTION_KERNEL
  case KernelKind::Attention:
    return buildAttentionKernel(spec, target);
#endif
  default:
    break;
  }
  failSpec(std::string(kindName(spec.kind)) +
           ": this build of the code generator has no builder for the kind");
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Ahead-of-time compilation
//===----------------------------------------------------------------------===//

namespace {

/// Every kernel object and the runtime share this OS and architecture.
constexpr const char *kBaseTarget = "x86-64-linux";

/// Quotes `s` for /bin/sh.
std::string shellQuote(const std::string &s) {
  std::string quoted = "'";
  for (char c : s) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

/// A scratch directory removed when it goes out of scope.
class ScratchDir {
public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "attune-kernel-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      path = buffer.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
  std::string path;
};

/// The targets a kernel is compiled for, best first, baseline last; every
/// one without a runtime (compileHalideRuntime supplies the one copy).
std::string makeTargets(const CpuTargetOptions &options,
                        std::vector<Target> &targets,
                        std::vector<std::string> &suffixes) {
  for (const std::string &features : options.featureSets) {
    std::string text = std::string(kBaseTarget) + "-" + features;
    if (features.empty() || !Target::validate_target_string(text))
      return "expected a Halide feature set such as 'avx2-fma-f16c', got '" +
             features + "'";
    targets.push_back(Target(text).with_feature(Target::NoRuntime));
    // The suffix becomes part of a symbol name: keep it an identifier.
    std::string suffix = features;
    std::replace(suffix.begin(), suffix.end(), '-', '_');
    suffixes.push_back(suffix);
  }
  targets.push_back(Target(kBaseTarget).with_feature(Target::NoRuntime));
  suffixes.push_back("baseline");
  return "";
}

} // namespace

std::string compileKernelObject(const KernelSpec &spec,
                                const CpuTargetOptions &options,
                                const std::string &objectPath) {
  try {
    std::string problem = detail::validateSpec(spec);
    if (!problem.empty())
      return problem;
    std::vector<Target> targets;
    std::vector<std::string> suffixes;
    problem = makeTargets(options, targets, suffixes);
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
    command += " 2>&1";
    std::string output;
    if (FILE *pipe = popen(command.c_str(), "r")) {
      char buffer[512];
      while (size_t n = fread(buffer, 1, sizeof(buffer), pipe))
        output.append(buffer, n);
      int status = pclose(pipe);
      if (status != 0)
        return "merging the objects of kernel " + name + " failed (" + command +
               "): " + output;
    } else {
      return "cannot run the linker to merge kernel " + name;
    }
    return "";
  } catch (const Halide::Error &error) {
    return std::string("Halide failed to compile kernel ") + spec.symbolName() +
           ": " + error.what();
  } catch (const std::exception &error) {
    return std::string("compiling kernel ") + spec.symbolName() +
           " failed: " + error.what();
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
    std::string problem = makeTargets(options, targets, suffixes);
    if (!problem.empty())
      return problem;
    compile_standalone_runtime(objectPath, Target(kBaseTarget));
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
