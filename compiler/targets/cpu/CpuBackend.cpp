//===- CpuBackend.cpp - the x86-64 CPU target backend ---------------------===//

#include "compiler/targets/cpu/CpuBackend.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/codegen/host/HostCodegen.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "compiler/support/PanelLayout.h"

#include "attune/runtime.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace attune::targets::cpu {
namespace {

class CpuBackend final : public TargetBackend {
public:
  explicit CpuBackend(codegen::CpuTargetOptions options) : options(std::move(options)) {}

  std::string name() const override { return "cpu"; }

  std::string describeHost() const override {
    std::string text = std::string("host cpu: ") + attune_isa_name(attune_host_isa());
    const char *cap = std::getenv("ATTUNE_CPU");
    if (cap && *cap)
      text += std::string(" (libraries capped at ATTUNE_CPU=") + cap + ")";
    return text;
  }

  std::vector<std::string> variants() const override {
    std::vector<std::string> names = options.featureSets;
    names.push_back("baseline");
    return names;
  }

  std::string cacheKey() const override {
    std::string key;
    for (const std::string &features : options.featureSets)
      key += features + ",";
    return key;
  }

  std::string compileKernel(const codegen::KernelSpec &spec,
                            const std::string &objectPath) const override {
    return codegen::compileKernelObject(spec, options, objectPath);
  }

  std::string compileRuntime(const std::string &objectPath) const override {
    return codegen::compileHalideRuntime(options, objectPath);
  }

  std::string compileSupport(const std::string &directory,
                             const std::string &objectPath) const override {
    return codegen::compileModelSupport(directory, objectPath);
  }

  std::string configureHost(codegen::HostLoweringOptions &host) const override {
    // What the library refuses under an ATTUNE_CPU cap, from the variants
    // the kernels are built with.
    return codegen::computeIsaDispatch(options, host.isaDispatch);
  }

  int64_t weightPanelWidth(bool bf16) const override {
    // f32: kF32PanelWidth (16 floats), which the AVX-512 linear
    // (runtime/model/linear_f32.c) streams 8 columns at a time and the
    // Halide tiles read in place (AVX2 one panel, AVX-512 three); bf16 pair
    // panels: kBf16PanelWidth (96), read by AMX and vdpbf16ps. Packing
    // first measured on all-MiniLM-L6-v2 at 128 tokens (AMD EPYC Zen 5, 96
    // floats then): AVX-512 15.8 -> 14.2 ms, the AVX2 variant of the same
    // library 28.4 -> 27.3. Without an AVX-512 variant, nothing is packed
    // (the AVX2 tile reads a plain matrix as well).
    if (!buildsAvx512())
      return 0;
    return bf16 ? attune::kBf16PanelWidth : attune::kF32PanelWidth;
  }

  std::vector<std::string> linkLibraries() const override {
    // The Halide runtime's thread pool, its symbol lookups
    // (halide_get_library_symbol), and the libm functions kernels call.
    return {"-lpthread", "-ldl", "-lm"};
  }

private:
  bool buildsAvx512() const {
    for (const std::string &features : options.featureSets)
      if (features.find("avx512") != std::string::npos)
        return true;
    return false;
  }

  codegen::CpuTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend> createCpuBackend(const TargetOptions &targetOptions,
                                                std::string &error) {
  codegen::CpuTargetOptions options;
  if (!targetOptions.cpuFeatureSets.empty()) {
    options.featureSets.clear();
    for (const std::string &features : targetOptions.cpuFeatureSets) {
      // Checked here, not only by Halide: the string becomes part of symbol
      // names and file names.
      bool plain = !features.empty() &&
                   std::all_of(features.begin(), features.end(), [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                            c == '-';
                   });
      if (!plain || !codegen::isValidCpuFeatureSet(features)) {
        error = "invalid --cpu-features entry '" + features +
                "', expected a Halide feature list such as avx2-fma-f16c";
        return nullptr;
      }
      options.featureSets.push_back(features);
    }
  }
  return std::make_unique<CpuBackend>(std::move(options));
}

std::vector<std::string> hostFeatureSets(std::string &error) {
  attune_isa_t isa;
  if (attune_cpu_isa(&isa) != ATTUNE_OK) {
    error = attune_status_message();
    return {};
  }
  std::vector<std::string> sets;
  if (isa != ATTUNE_ISA_BASELINE)
    sets.push_back(halideFeatures(isa));
  if (isa == ATTUNE_ISA_AVX512_ZEN4)
    sets.push_back(halideFeatures(ATTUNE_ISA_AVX512));
  return sets;
}

} // namespace attune::targets::cpu
