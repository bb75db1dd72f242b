//===- GpuSamples.h - one sample spec per kernel kind with a GPU schedule -===//
//
// The samples GpuScheduleTest compiles and JIT-runs and gpu_sample_kernels
// (GpuKernelGen.cpp) compiles ahead of time for the CUDA device test and
// benchmark: one spec per kernel kind that has a GPU schedule, with the
// input and output shapes the tests run it at.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLES_H
#define ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLES_H

#include "compiler/codegen/halide/KernelBuilders.h"

#include <functional>
#include <string>
#include <vector>

namespace attune::codegen::samples {

/// One sample: a spec, the shapes of its inputs in signature order
/// (innermost first) and of its output, and the range of integer inputs
/// (indices must fall inside the tables they index).
struct Sample {
  std::string name;
  KernelSpec spec;
  std::vector<std::vector<int>> inputShapes;
  std::vector<int> outputShape;
  int indexLimit = 0;
};

inline KernelSpec makeSpec(KernelKind kind, const std::function<void(KernelSpec &)> &edit = {}) {
  KernelSpec spec;
  spec.kind = kind;
  if (edit)
    edit(spec);
  return spec;
}

inline std::vector<Sample> samples() {
  using K = KernelKind;
  std::vector<Sample> s;
  // Ragged sizes: no extent a multiple of the 128 threads of a block.
  s.push_back({"embedding", makeSpec(K::Embedding), {{70, 50}, {13}}, {70, 13}, 50});
  s.push_back(
      {"learned_position", makeSpec(K::LearnedPosition), {{40, 9, 2}, {40, 16}}, {40, 9, 2}});
  s.push_back({"sinusoidal", makeSpec(K::Sinusoidal), {{40, 9, 2}}, {40, 9, 2}});
  s.push_back({"sinusoidal_concat",
               makeSpec(K::Sinusoidal, [](KernelSpec &k) { k.form = SinusoidalForm::Concat; }),
               {{41, 9, 2}},
               {41, 9, 2}});
  s.push_back(
      {"multiplicative_position", makeSpec(K::MultiplicativePosition), {{40, 9, 2}}, {40, 9, 2}});
  s.push_back({"recursive_position",
               makeSpec(K::RecursivePosition, [](KernelSpec &k) { k.timeStep = 0.1; }),
               {{12, 9, 2}, {12}, {5, 13}, {5}, {12, 6}, {12}},
               {12, 9, 2}});
  s.push_back({"complex_embedding",
               makeSpec(K::ComplexEmbedding),
               {{9, 2}, {24, 30}, {24, 30}, {24, 30}},
               {48, 9, 2},
               30});
  s.push_back({"layer_norm",
               makeSpec(K::LayerNorm, [](KernelSpec &k) { k.epsilon = 1e-5; }),
               {{300, 7}, {300}, {300}},
               {300, 7}});
  s.push_back({"rms_norm",
               makeSpec(K::RmsNorm, [](KernelSpec &k) { k.epsilon = 1e-6; }),
               {{300, 7}, {300}},
               {300, 7}});
  s.push_back({"softmax", makeSpec(K::Softmax), {{300, 6}}, {300, 6}});
  s.push_back({"binary_add",
               makeSpec(K::Binary, [](KernelSpec &k) { k.rank = 3; }),
               {{37, 5, 3}, {37, 5, 3}},
               {37, 5, 3}});
  s.push_back({"where",
               makeSpec(K::Where,
                        [](KernelSpec &k) {
                          k.rank = 2;
                          k.condType = ScalarType::I8;
                        }),
               {{37, 5}, {37, 5}, {37, 5}},
               {37, 5},
               2});
  s.push_back({"unary_gelu",
               makeSpec(K::Unary, [](KernelSpec &k) { k.unary = UnaryKind::GeluErf; }),
               {{1000}},
               {1000}});
  s.push_back({"causal_mask",
               makeSpec(K::CausalMask, [](KernelSpec &k) { k.value = -1e9; }),
               {{20, 20, 3}},
               {20, 20, 3}});
  s.push_back(
      {"copy", makeSpec(K::Copy, [](KernelSpec &k) { k.rank = 3; }), {{5, 6, 7}}, {5, 6, 7}});
  s.push_back({"repeat_interleave",
               makeSpec(K::RepeatInterleave, [](KernelSpec &k) { k.repeats = 2; }),
               {{5, 4, 3}},
               {5, 8, 3}});
  s.push_back({"rope",
               makeSpec(K::Rope,
                        [](KernelSpec &k) {
                          k.headDim = 64;
                          k.rope.enabled = true;
                          k.rope.rotaryDims = 64;
                        }),
               {{64, 9, 2, 1}},
               {64, 9, 2, 1}});
  s.push_back({"score_bias_alibi",
               makeSpec(K::ScoreBias,
                        [](KernelSpec &k) {
                          k.modifiers = {{"alibi", {{"max_bias", 8.0}, {"symmetric", 0.0}}, {}}};
                        }),
               {{20, 17, 3, 1}},
               {20, 17, 3, 1}});
  s.push_back(
      {"score_bias_t5",
       makeSpec(K::ScoreBias,
                [](KernelSpec &k) {
                  k.modifiers = {
                      {"t5",
                       {{"num_buckets", 32.0}, {"max_distance", 128.0}, {"bidirectional", 1.0}},
                       {2}}};
                }),
       {{20, 17, 3, 1}, {3, 32}},
       {20, 17, 3, 1}});
  // Shaw's value term: p[Sk, Sq, H, B] times the value table's rows.
  s.push_back({"score_values_shaw", makeSpec(K::ScoreValues, [](KernelSpec &k) {
                 k.modifiers = {{"shaw", {{"max_distance", 4.0}}, {2, 2}}};
               }),
               {{20, 17, 3, 1}, {16, 9}, {24, 9}}, {24, 17, 3, 1}});
  s.push_back({"arange", makeSpec(K::Arange), {}, {300}});
  s.push_back({"compare",
               makeSpec(K::Compare, [](KernelSpec &k) { k.rank = 2; }),
               {{37, 5}, {37, 5}},
               {37, 5}});
  s.push_back({"cast",
               makeSpec(K::Cast, [](KernelSpec &k) { k.sourceType = ScalarType::I64; }),
               {{1000}},
               {1000},
               100});
  s.push_back(
      {"gather_elements", makeSpec(K::GatherElements), {{3, 40, 5}, {3, 7, 5}}, {3, 7, 5}, 40});
  return s;
}

} // namespace attune::codegen::samples

#endif // ATTUNE_TESTS_UNIT_CUDA_GPUSAMPLES_H
