//===- IsaDispatch.cpp - what a library refuses under an ATTUNE_CPU cap ---===//
//
// A generated library dispatches each kernel at run time through Halide's
// halide_can_use_target_features(count, features), where `features` is the
// bitmask of the variant's Halide target features. The library's host code
// installs a replacement that refuses a variant when the process caps the
// level (ATTUNE_CPU) below it. It cannot ask Halide which level a bitmask
// means, so the compiler, which knows the variants it built, hands it per
// level L the bits that only variants above L have: a variant with any of
// them is above the cap, one without is at or below it.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/Kernels.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <algorithm>

namespace attune::codegen {

namespace {

/// The words of halide_target_feature_t bits `target` has, as the dispatch
/// wrapper passes them.
std::vector<uint64_t> featureWords(const Halide::Target &target,
                                   size_t numWords) {
  std::vector<uint64_t> words(numWords, 0);
  for (int f = 0; f < Halide::Target::FeatureEnd; ++f)
    if (target.has_feature(static_cast<Halide::Target::Feature>(f)))
      words[f / 64] |= uint64_t(1) << (f % 64);
  return words;
}

} // namespace

std::string computeIsaDispatch(const CpuTargetOptions &options,
                               IsaDispatchTable &table) {
  try {
    const size_t numWords = (Halide::Target::FeatureEnd + 63) / 64;
    const size_t numLevels = std::size(targets::cpu::kAllIsas);
    // Every variant as compileKernelObject builds it (the no_runtime bit is
    // in all of them, so it never separates levels), baseline included.
    const Halide::Target base = targets::cpu::halideTarget(ATTUNE_ISA_BASELINE)
                                    .with_feature(Halide::Target::NoRuntime);
    std::vector<std::pair<attune_isa_t, std::vector<uint64_t>>> variants;
    variants.emplace_back(ATTUNE_ISA_BASELINE, featureWords(base, numWords));
    for (const std::string &features : options.featureSets) {
      std::string text = base.to_string() + "-" + features;
      if (features.empty() || !Halide::Target::validate_target_string(text))
        return "expected a Halide feature set such as 'avx2-fma-f16c', got '" +
               features + "'";
      Halide::Target target(text);
      variants.emplace_back(targets::cpu::isaOf(target),
                            featureWords(target, numWords));
    }

    table.wordsPerLevel = numWords;
    table.forbidden.assign(numLevels * numWords, 0);
    table.effectiveLevel.assign(numLevels, ATTUNE_ISA_BASELINE);
    for (size_t level = 0; level < numLevels; ++level) {
      std::vector<uint64_t> above(numWords, 0), allowed(numWords, 0);
      for (const auto &[isa, words] : variants) {
        std::vector<uint64_t> &into =
            static_cast<size_t>(isa) > level ? above : allowed;
        for (size_t w = 0; w < numWords; ++w)
          into[w] |= words[w];
        if (static_cast<size_t>(isa) <= level)
          table.effectiveLevel[level] =
              std::max<int32_t>(table.effectiveLevel[level], isa);
      }
      for (size_t w = 0; w < numWords; ++w)
        table.forbidden[level * numWords + w] = above[w] & ~allowed[w];
    }
    // A variant above a level that has no bit of its own would pass the
    // check there (e.g. the same features listed at two levels): the cap
    // would not hold, so refuse to build such a library.
    for (const auto &[isa, words] : variants)
      for (size_t level = 0; level < static_cast<size_t>(isa); ++level) {
        bool separated = false;
        for (size_t w = 0; w < numWords; ++w)
          separated |= (words[w] & table.forbidden[level * numWords + w]) != 0;
        if (!separated)
          return std::string("a kernel variant at level '") +
                 attune_isa_name(isa) +
                 "' has no feature that tells it apart from the variants at '" +
                 attune_isa_name(static_cast<attune_isa_t>(level)) +
                 "', so ATTUNE_CPU could not cap it";
      }
    return "";
  } catch (const Halide::Error &error) {
    return std::string("cannot compute the dispatch table: ") + error.what();
  }
}

} // namespace attune::codegen
