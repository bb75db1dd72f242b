//===- CpuTarget.cpp - the x86-64 CPU as a code generation target ---------===//

#include "compiler/targets/cpu/CpuTarget.h"

#include <stdexcept>

namespace attune::targets::cpu {

const char *halideFeatures(attune_isa_t isa) {
  switch (isa) {
  case ATTUNE_ISA_BASELINE:
    return "";
  case ATTUNE_ISA_AVX2:
    return "avx2-fma-f16c";
  case ATTUNE_ISA_AVX512:
    // Skylake-X's set (F/CD/BW/DQ/VL): the AVX-512 every such CPU has,
    // Zen 4 and Zen 5 included.
    return "avx512_skylake";
  case ATTUNE_ISA_AVX512_ZEN4:
    // LLVM's znver4 model: the AVX-512 extensions the runtime checks for
    // this level (attune_host_isa); the kernels built for it (bf16
    // products) use none of the AMD-only instructions the model also has.
    return "avx512_zen4";
  case ATTUNE_ISA_AVX512_SPR:
    return "avx512_sapphirerapids";
  }
  return "";
}

std::string halideTargetString(const std::string &features) {
  // Every target this compiler builds for shares this OS and architecture.
  std::string text = "x86-64-linux";
  return features.empty() ? text : text + "-" + features;
}

Halide::Target halideTarget(attune_isa_t isa) {
  return Halide::Target(halideTargetString(halideFeatures(isa)));
}

attune_isa_t isaOf(const Halide::Target &target) {
  using F = Halide::Target::Feature;
  if (target.has_feature(F::AVX512_SapphireRapids))
    return ATTUNE_ISA_AVX512_SPR;
  if (target.has_feature(F::AVX512_Zen4) || target.has_feature(F::AVX512_Zen5))
    return ATTUNE_ISA_AVX512_ZEN4;
  if (target.has_feature(F::AVX512) || target.has_feature(F::AVX512_Skylake) ||
      target.has_feature(F::AVX512_Cannonlake) || target.has_feature(F::AVX512_KNL))
    return ATTUNE_ISA_AVX512;
  if (target.has_feature(F::AVX2) || target.has_feature(F::FMA) ||
      target.has_feature(F::AVX) || target.has_feature(F::F16C))
    return ATTUNE_ISA_AVX2;
  return ATTUNE_ISA_BASELINE;
}

bool buildsVariant(const codegen::KernelSpec &spec, attune_isa_t isa) {
  return isa != ATTUNE_ISA_AVX512_ZEN4 || codegen::usesBf16DotProduct(spec);
}

namespace {

attune_isa_t processIsa() {
  attune_isa_t isa;
  if (attune_cpu_isa(&isa) != ATTUNE_OK)
    throw std::runtime_error(attune_status_message());
  return isa;
}

} // namespace

Halide::Target jitTarget() {
  attune_isa_t isa = processIsa();
  return halideTarget(isa == ATTUNE_ISA_AVX512_ZEN4 ? ATTUNE_ISA_AVX512 : isa);
}

Halide::Target jitTarget(const codegen::KernelSpec &spec) {
  attune_isa_t isa = processIsa();
  while (isa > ATTUNE_ISA_BASELINE && !buildsVariant(spec, isa))
    isa = static_cast<attune_isa_t>(isa - 1);
  return halideTarget(isa);
}

std::vector<attune_isa_t> testedIsas() {
  std::vector<attune_isa_t> isas = {attune_host_isa()};
  if (isas.front() > ATTUNE_ISA_AVX2)
    isas.push_back(ATTUNE_ISA_AVX2);
  return isas;
}

} // namespace attune::targets::cpu
