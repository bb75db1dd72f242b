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
  if (target.has_feature(F::AVX512) || target.has_feature(F::AVX512_Skylake) ||
      target.has_feature(F::AVX512_Cannonlake) || target.has_feature(F::AVX512_Zen4) ||
      target.has_feature(F::AVX512_Zen5) || target.has_feature(F::AVX512_KNL))
    return ATTUNE_ISA_AVX512;
  if (target.has_feature(F::AVX2) || target.has_feature(F::FMA) ||
      target.has_feature(F::AVX) || target.has_feature(F::F16C))
    return ATTUNE_ISA_AVX2;
  return ATTUNE_ISA_BASELINE;
}

Halide::Target jitTarget() {
  attune_isa_t isa;
  if (attune_cpu_isa(&isa) != ATTUNE_OK)
    throw std::runtime_error(attune_status_message());
  return halideTarget(isa);
}

std::vector<attune_isa_t> testedIsas() {
  std::vector<attune_isa_t> isas = {attune_host_isa()};
  if (isas.front() > ATTUNE_ISA_AVX2)
    isas.push_back(ATTUNE_ISA_AVX2);
  return isas;
}

} // namespace attune::targets::cpu
