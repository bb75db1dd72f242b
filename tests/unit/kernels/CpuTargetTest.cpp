//===- CpuTargetTest.cpp - host CPU detection and the JIT target ----------===//
//
// The compiler and its tests JIT for what attune_host_isa() says, capped by
// ATTUNE_CPU. These tests hold that level against libgcc's own view of the
// CPU (__builtin_cpu_supports, which also checks the OS-enabled state), and
// check that a bad ATTUNE_CPU is an error, not a target that crashes.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/cpu/CpuTarget.h"

#include "attune/runtime.h"
#include "tests/support/ScopedEnv.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace {

using namespace attune::targets::cpu;
using F = Halide::Target::Feature;

/// ATTUNE_CPU set (nullptr: unset) for one scope.
class ScopedCpuCap {
public:
  explicit ScopedCpuCap(const char *value) : env("ATTUNE_CPU", value) {}

private:
  attune::testing::ScopedEnv env;
};

bool hasAnyAvx512(const Halide::Target &t) {
  return t.has_feature(F::AVX512) || t.has_feature(F::AVX512_Skylake) ||
         t.has_feature(F::AVX512_Cannonlake) || t.has_feature(F::AVX512_Zen4) ||
         t.has_feature(F::AVX512_Zen5) || t.has_feature(F::AVX512_SapphireRapids);
}

TEST(CpuTarget, HostLevelIsWhatTheOsLetsUsRun) {
  attune_isa_t host = attune_host_isa();
  __builtin_cpu_init();
  bool osAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  bool osAvx512 = __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd");
  EXPECT_EQ(host >= ATTUNE_ISA_AVX2, osAvx2) << attune_isa_name(host);
  EXPECT_EQ(host >= ATTUNE_ISA_AVX512, osAvx512) << attune_isa_name(host);
  bool osZen4 = osAvx512 && __builtin_cpu_supports("avx512bf16") &&
                __builtin_cpu_supports("avx512vnni") &&
                __builtin_cpu_supports("avx512ifma") &&
                __builtin_cpu_supports("avx512vbmi") &&
                __builtin_cpu_supports("avx512vbmi2") &&
                __builtin_cpu_supports("avx512bitalg") &&
                __builtin_cpu_supports("avx512vpopcntdq") &&
                __builtin_cpu_supports("gfni") && __builtin_cpu_supports("vaes") &&
                __builtin_cpu_supports("vpclmulqdq");
  EXPECT_EQ(host >= ATTUNE_ISA_AVX512_ZEN4, osZen4) << attune_isa_name(host);
  if (host >= ATTUNE_ISA_AVX512_SPR) {
    EXPECT_TRUE(__builtin_cpu_supports("avx512fp16"));
    EXPECT_TRUE(__builtin_cpu_supports("amx-tile"));
  }
}

TEST(CpuTarget, JitTargetHasNoFeatureTheOsCannotRun) {
  ScopedCpuCap uncapped(nullptr);
  Halide::Target target = jitTarget();
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    EXPECT_FALSE(hasAnyAvx512(target)) << target.to_string();
  }
  if (!__builtin_cpu_supports("avx2")) {
    EXPECT_FALSE(target.has_feature(F::AVX2)) << target.to_string();
  }
  if (!__builtin_cpu_supports("fma")) {
    EXPECT_FALSE(target.has_feature(F::FMA)) << target.to_string();
  }
  if (!__builtin_cpu_supports("avx512fp16")) {
    EXPECT_FALSE(target.has_feature(F::AVX512_SapphireRapids)) << target.to_string();
  }
  // Kernels without bf16 products have no avx512_zen4 variant: they JIT as
  // a library runs them, at avx512 there.
  attune_isa_t host = attune_host_isa();
  EXPECT_EQ(isaOf(target), host == ATTUNE_ISA_AVX512_ZEN4 ? ATTUNE_ISA_AVX512 : host);
  attune::codegen::KernelSpec bf16;
  bf16.kind = attune::codegen::KernelKind::Linear;
  bf16.weightPanel = 96;
  bf16.weightType = attune::ScalarType::BF16;
  Halide::Target bf16Target = jitTarget(bf16);
  EXPECT_EQ(isaOf(bf16Target), host) << bf16Target.to_string();
  if (!__builtin_cpu_supports("avx512bf16")) {
    EXPECT_FALSE(bf16Target.has_feature(F::AVX512_Zen4)) << bf16Target.to_string();
  }
}

TEST(CpuTarget, CapLowersTheJitTarget) {
  ScopedCpuCap cap("baseline");
  Halide::Target target = jitTarget();
  EXPECT_EQ(isaOf(target), ATTUNE_ISA_BASELINE) << target.to_string();
  EXPECT_FALSE(target.has_feature(F::AVX2)) << target.to_string();
  if (attune_host_isa() >= ATTUNE_ISA_AVX2) {
    ScopedCpuCap avx2("avx2");
    Halide::Target t2 = jitTarget();
    EXPECT_TRUE(t2.has_feature(F::AVX2) && t2.has_feature(F::FMA)) << t2.to_string();
    EXPECT_FALSE(hasAnyAvx512(t2)) << t2.to_string();
  }
}

TEST(CpuTarget, BadCapIsAnErrorNamingTheValue) {
  {
    ScopedCpuCap cap("avx9000");
    attune_isa_t isa;
    EXPECT_EQ(attune_cpu_isa(&isa), ATTUNE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(attune_status_message()).find("'avx9000'"), std::string::npos)
        << attune_status_message();
    EXPECT_THROW(jitTarget(), std::runtime_error);
  }
  if (attune_host_isa() < ATTUNE_ISA_AVX512_SPR) {
    ScopedCpuCap cap("avx512_spr");
    attune_isa_t isa;
    EXPECT_EQ(attune_cpu_isa(&isa), ATTUNE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(attune_status_message()).find("more than this machine"),
              std::string::npos)
        << attune_status_message();
  }
  {
    ScopedCpuCap empty("");
    attune_isa_t isa;
    ASSERT_EQ(attune_cpu_isa(&isa), ATTUNE_OK);
    EXPECT_EQ(isa, attune_host_isa());
  }
}

TEST(CpuTarget, LevelsRoundTripThroughTheirNames) {
  for (attune_isa_t isa : kAllIsas) {
    attune_isa_t parsed;
    ASSERT_EQ(attune_isa_from_name(attune_isa_name(isa), &parsed), ATTUNE_OK);
    EXPECT_EQ(parsed, isa);
    EXPECT_EQ(isaOf(halideTarget(isa)), isa) << halideTarget(isa).to_string();
  }
  attune_isa_t parsed;
  EXPECT_EQ(attune_isa_from_name("AVX2", &parsed), ATTUNE_INVALID_ARGUMENT);
  EXPECT_STREQ(attune_isa_name(static_cast<attune_isa_t>(7)), "unknown");
}

} // namespace
