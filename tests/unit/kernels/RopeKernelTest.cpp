//===- RopeKernelTest.cpp - RoPE against its reference implementations ----===//
//
// The Rope kernel (JIT-compiled at this process's ISA level) against literal
// transcriptions, in double, of the code the two layouts come from:
//
// Hugging Face LLaMA / GPT-NeoX (split halves, partial rotary as NeoX's
// rotary_pct), modeling_llama.py:
//
//   inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
//   freqs = torch.outer(t, inv_freq)
//   emb = torch.cat((freqs, freqs), dim=-1)
//   def rotate_half(x):
//       x1 = x[..., : x.shape[-1] // 2]
//       x2 = x[..., x.shape[-1] // 2 :]
//       return torch.cat((-x2, x1), dim=-1)
//   q_embed = (q * cos) + (rotate_half(q) * sin)
//   (GPT-NeoX: q_rot, q_pass = q[..., :rotary_ndims], q[..., rotary_ndims:];
//    q = torch.cat((apply_rotary(q_rot), q_pass), dim=-1))
//
// GPT-J (interleaved pairs), modeling_gptj.py:
//
//   def rotate_every_two(x):
//       x1 = x[:, :, :, ::2]
//       x2 = x[:, :, :, 1::2]
//       x = torch.stack((-x2, x1), dim=-1)
//       return x.flatten(-2)
//   sin, cos = sinusoids with each frequency repeated twice
//       (torch.repeat_interleave(sin, 2, 3))
//   return (tensor * cos) + (rotate_every_two(tensor) * sin)
//
// Tolerance: the kernel's tables are computed in double and rounded to f32,
// the rotation in f32: |got - want| <= 2e-6 (|want| + 1).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace attune::codegen;

namespace {

/// x[s][d] of one head, rotated the Hugging Face LLaMA / NeoX way.
std::vector<double> rotateHalfReference(const std::vector<double> &x, int64_t D,
                                        int64_t rotary, double base, int64_t pos) {
  std::vector<double> out = x;
  int64_t half = rotary / 2;
  std::vector<double> invFreq(half), cos(rotary), sin(rotary), rotated(rotary);
  for (int64_t i = 0; i < half; ++i)
    invFreq[i] = 1.0 / std::pow(base, double(2 * i) / double(rotary));
  for (int64_t i = 0; i < rotary; ++i) { // emb = cat(freqs, freqs)
    cos[i] = std::cos(pos * invFreq[i % half]);
    sin[i] = std::sin(pos * invFreq[i % half]);
  }
  for (int64_t i = 0; i < rotary; ++i) // rotate_half: cat(-x2, x1)
    rotated[i] = i < half ? -x[i + half] : x[i - half];
  for (int64_t i = 0; i < rotary; ++i)
    out[i] = x[i] * cos[i] + rotated[i] * sin[i];
  (void)D;
  return out;
}

/// The same row rotated the GPT-J way (every two).
std::vector<double> rotateEveryTwoReference(const std::vector<double> &x, int64_t D,
                                            int64_t rotary, double base, int64_t pos) {
  std::vector<double> out = x;
  std::vector<double> cos(rotary), sin(rotary), rotated(rotary);
  for (int64_t i = 0; i < rotary; ++i) { // repeat_interleave(sin, 2)
    double invFreq = 1.0 / std::pow(base, double(2 * (i / 2)) / double(rotary));
    cos[i] = std::cos(pos * invFreq);
    sin[i] = std::sin(pos * invFreq);
  }
  for (int64_t i = 0; i < rotary; i += 2) { // stack((-x2, x1)).flatten
    rotated[i] = -x[i + 1];
    rotated[i + 1] = x[i];
  }
  for (int64_t i = 0; i < rotary; ++i)
    out[i] = x[i] * cos[i] + rotated[i] * sin[i];
  (void)D;
  return out;
}

struct RopeCase {
  int64_t D, rotary;
  bool interleaved;
  int64_t offset, S, alignLength; // alignLength 0: no align input
  double base;
};

void checkRope(const RopeCase &c) {
  SCOPED_TRACE("D " + std::to_string(c.D) + " rotary " + std::to_string(c.rotary) +
               (c.interleaved ? " interleaved" : " halves") + " offset " +
               std::to_string(c.offset) + " S " + std::to_string(c.S) + " align " +
               std::to_string(c.alignLength));
  KernelSpec spec;
  spec.kind = KernelKind::Rope;
  spec.headDim = c.D;
  spec.rope.enabled = true;
  spec.rope.base = c.base;
  spec.rope.rotaryDims = c.rotary;
  spec.rope.interleaved = c.interleaved;
  spec.rope.positionOffset = c.offset;
  spec.ropeAligned = c.alignLength > 0;
  ASSERT_EQ(validateKernelSpec(spec), "");
  const Halide::Target target = attune::targets::cpu::jitTarget();
  detail::BuiltKernel built = detail::buildKernel(spec, target);

  const int H = 3, B = 2;
  Halide::Buffer<float> x(int(c.D), int(c.S), H, B);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  x.for_each_value([&](float &v) { v = dist(rng); });
  built.inputs[0].set(x);
  Halide::Buffer<float> align;
  if (spec.ropeAligned) {
    align = Halide::Buffer<float>(1, int(c.alignLength), 1, 1);
    built.inputs[1].set(align);
  }
  Halide::Buffer<float> out(int(c.D), int(c.S), H, B);
  built.jit().realize(out, target);

  const int64_t shift = spec.ropeAligned ? c.alignLength - c.S : 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < c.S; ++s) {
        std::vector<double> row(c.D);
        for (int d = 0; d < c.D; ++d)
          row[d] = x(d, s, h, b);
        int64_t pos = s + shift + c.offset;
        std::vector<double> want =
            c.interleaved ? rotateEveryTwoReference(row, c.D, c.rotary, c.base, pos)
                          : rotateHalfReference(row, c.D, c.rotary, c.base, pos);
        for (int d = 0; d < c.D; ++d)
          ASSERT_NEAR(out(d, s, h, b), want[d], 2e-6 * (std::fabs(want[d]) + 1))
              << "b " << b << " h " << h << " s " << s << " d " << d;
      }
}

TEST(RopeKernel, SplitHalvesMatchHuggingFaceLlama) {
  checkRope({64, 64, false, 0, 37, 0, 10000.0});
  checkRope({128, 128, false, 0, 5, 0, 500000.0}); // LLaMA 3's theta
}

TEST(RopeKernel, PartialRotaryMatchesGptNeox) {
  checkRope({80, 20, false, 0, 19, 0, 10000.0}); // rotary_pct 0.25
  checkRope({64, 32, false, 7, 9, 0, 10000.0});
}

TEST(RopeKernel, InterleavedMatchesGptJ) {
  checkRope({64, 64, true, 0, 33, 0, 10000.0});
  checkRope({256, 64, true, 0, 7, 0, 10000.0}); // GPT-J: rotary_dim 64 of 256
}

TEST(RopeKernel, PositionsAtTheEndOfALongerSequence) {
  // Decoding: 3 queries after 2045 cached keys, positions up to 2047.
  checkRope({64, 64, false, 0, 3, 2048, 10000.0});
  checkRope({64, 64, true, 5, 1, 4096, 10000.0});
}

} // namespace
