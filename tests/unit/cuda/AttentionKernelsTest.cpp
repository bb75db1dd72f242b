//===- AttentionKernelsTest.cpp - the GPU attention kernels' source and nvcc -===//
//
// compiler/targets/cuda/attention/AttentionKernels.h: which specs have a
// kernel, the source written for them, and nvcc turning it into a fatbin
// for sm_80 and sm_90 (or saying why not). Needs the CUDA toolkit's nvcc,
// which the build needs too.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/cuda/attention/AttentionKernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>

namespace attune::targets::cuda {
namespace {

using ::testing::HasSubstr;

AttentionKernelSpec spec(const std::string &name) {
  AttentionKernelSpec s;
  s.name = name;
  return s;
}

TEST(AttentionKernels, SaysWhichSpecsHaveNoKernel) {
  EXPECT_EQ(unsupportedReason(spec("ok_64")), "");
  AttentionKernelSpec s = spec("odd");
  s.headDim = 72;
  EXPECT_THAT(unsupportedReason(s), HasSubstr("head size 72"));
  s = spec("wide");
  s.valueDim = 256;
  EXPECT_THAT(unsupportedReason(s), HasSubstr("head size 256"));
  s = spec("rope");
  s.rotaryDims = 6;
  EXPECT_THAT(unsupportedReason(s), HasSubstr("rotary dimensions 6"));
  s = spec("half");
  s.storage = ScalarType::F16;
  EXPECT_EQ(unsupportedReason(s), "");
  s.storage = ScalarType::I32;
  EXPECT_THAT(unsupportedReason(s), HasSubstr("storage type i32"));
  EXPECT_THAT(unsupportedReason(spec("a-b")), HasSubstr("kernel name 'a-b'"));
  EXPECT_THAT(unsupportedReason(spec("")), HasSubstr("kernel name ''"));
}

TEST(AttentionKernels, SourceConfiguresEachKernel) {
  AttentionKernelSpec a = spec("first"), b = spec("second");
  b.headDim = 128, b.valueDim = 64, b.causal = true, b.keyPadding = true, b.rotaryDims = 64,
  b.storage = ScalarType::BF16, b.linearBias = true;
  AttentionKernelSpec c = spec("third");
  c.storage = ScalarType::F16;
  std::string source = attentionKernelSource({a, b, c});
  EXPECT_THAT(source, HasSubstr("#include \"FlashAttention.cuh\""));
  EXPECT_THAT(source, HasSubstr("AttentionConfig<64, 64, false, false, false, false, false, 0, "
                                "false, float, float, false, bf16>"));
  EXPECT_THAT(source, HasSubstr("AttentionConfig<128, 64, true, false, true, false, false, 64, "
                                "false, bf16, bf16, true, bf16>"));
  // f16 operands multiply in f16.
  EXPECT_THAT(source, HasSubstr("AttentionConfig<64, 64, false, false, false, false, false, 0, "
                                "false, f16, f16, false, f16>"));
  for (const char *symbol : {"attune_attention_first(", "attune_attention_first_combine(",
                             "attune_attention_second(", "attune_attention_second_combine("})
    EXPECT_THAT(source, HasSubstr(symbol));
  EXPECT_THAT(source, HasSubstr("// head 128, value 64, causal, key padding, linear bias, RoPE "
                                "on 64 half-split dimensions, bf16 storage, bf16 products"));
  EXPECT_THAT(source, HasSubstr("// head 64, value 64, f16 storage, f16 products"));
  // product_type = bf16 on f16 operands.
  c.bf16Products = true;
  EXPECT_THAT(attentionKernelSource({c}),
              HasSubstr("AttentionConfig<64, 64, false, false, false, false, false, 0, "
                        "false, f16, f16, false, bf16>"));
  // product_type = f16 on f32 operands (--precision=f16).
  c.bf16Products = false;
  c.f16Products = true;
  c.storage = ScalarType::F32;
  EXPECT_THAT(attentionKernelSource({c}),
              HasSubstr("AttentionConfig<64, 64, false, false, false, false, false, 0, "
                        "false, float, float, false, f16>"));
  c.bf16Products = true;
  EXPECT_THAT(unsupportedReason(c), HasSubstr("both bf16 and f16 products"));
}

TEST(AttentionKernels, HeadersAreCarried) {
  auto headers = attentionKernelHeaders();
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].first, "FlashAttention.cuh");
  EXPECT_THAT(headers[0].second, HasSubstr("flashAttention(const AttentionParams &p)"));
  EXPECT_EQ(headers[1].first, "WarpOps.cuh");
  EXPECT_THAT(headers[1].second, HasSubstr("mma.sync.aligned.m16n8k16"));
}

TEST(AttentionKernels, NvccBuildsSm80AndSm90) {
  AttentionKernelSpec s = spec("softcapped");
  s.softcap = true, s.bias = true, s.mask = true;
  // The most registers: D = 128 with every mask, T5's table and RoPE.
  AttentionKernelSpec wide = spec("wide");
  wide.headDim = wide.valueDim = 128, wide.causal = true;
  wide.bias = wide.mask = wide.keyPadding = true, wide.rotaryDims = 64;
  wide.storage = ScalarType::BF16;
  // f16 in, f16 products (mma's f16 form, cvt.rn.f16x2).
  AttentionKernelSpec half = spec("half");
  half.headDim = half.valueDim = 128, half.storage = ScalarType::F16;
  std::vector<char> fatbin;
  std::string error, report;
  ASSERT_TRUE(compileFatbin(attentionKernelSource({s, wide, half}), {80, 90}, fatbin, error,
                            &report))
      << error;
  if (std::getenv("ATTUNE_PRINT_PTXAS"))
    std::printf("%s\n", report.c_str());
  // A fatbin starts with its magic number, 0xba55ed50 little-endian.
  ASSERT_GE(fatbin.size(), 16u);
  uint32_t magic;
  std::memcpy(&magic, fatbin.data(), sizeof magic);
  EXPECT_EQ(magic, 0xba55ed50u);
  // ptxas compiled both kernels for both architectures, spilling a few
  // words at most. ptxas fits a kernel under a register count that lets one
  // more block per SM run (168 for 3 blocks of 128 threads, 128 for 4) when
  // it is a few registers short, spilling those (the bench128 kernel that
  // ran at 224 TFLOP/s on an H200 is such a build: 168 registers, 12 bytes
  // spilled on sm_80). More than 128 bytes is a kernel that no longer fits.
  for (const char *arch : {"'sm_80'", "'sm_90'"})
    for (const std::string kernel : {"softcapped", "wide", "half"}) {
      EXPECT_THAT(report, HasSubstr("'attune_attention_" + kernel + "' for " + arch));
      EXPECT_THAT(report, HasSubstr("'attune_attention_" + kernel + "_combine' for " + arch));
    }
  ASSERT_NE(report.find(" bytes spill stores"), std::string::npos) << report;
  size_t at = 0;
  while ((at = report.find(" bytes spill stores", at)) != std::string::npos) {
    size_t start = report.rfind(", ", at);
    EXPECT_LE(std::stoi(report.substr(start + 2, at - start - 2)), 128) << report;
    ++at;
  }
}

/// The registers ptxas reports for `kernel` on `arch` ("sm_90"), or -1.
int registersOf(const std::string &report, const std::string &kernel, const std::string &arch) {
  size_t at = report.find("Compiling entry function '" + kernel + "' for '" + arch + "'");
  if (at == std::string::npos || (at = report.find("Used ", at)) == std::string::npos)
    return -1;
  return std::stoi(report.substr(at + 5));
}

TEST(AttentionKernels, TunedBlocksPerSmBoundEachArchitecture) {
  // The tuning database's blocks_per_sm is per architecture: held to 4
  // blocks on sm_90 (65536 / (4 x 128) = 128 registers) the D = 128 kernel
  // fits 128 registers there, while sm_80 keeps attentionBlocksPerSm's 3
  // (at most 168, more than 128). Out of range is refused.
  AttentionKernelSpec s = spec("tuned");
  s.headDim = s.valueDim = 128, s.storage = ScalarType::BF16;
  s.blocksPerSm = {{90, 4}};
  ASSERT_EQ(unsupportedReason(s), "");
  std::string source = attentionKernelSource({s});
  EXPECT_THAT(source, HasSubstr("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900\n"
                                "#define ATTUNE_BOUNDS_tuned __launch_bounds__(kAttentionThreads, "
                                "4) // tuned\n#else\n#define ATTUNE_BOUNDS_tuned "
                                "__launch_bounds__(kAttentionThreads, 3)\n#endif\n"));
  EXPECT_THAT(source, HasSubstr("__global__ void ATTUNE_BOUNDS_tuned\nattune_attention_tuned("));
  std::vector<char> fatbin;
  std::string error, report;
  ASSERT_TRUE(compileFatbin(source, {80, 90}, fatbin, error, &report)) << error;
  EXPECT_LE(registersOf(report, "attune_attention_tuned", "sm_90"), 128) << report;
  const int sm80 = registersOf(report, "attune_attention_tuned", "sm_80");
  EXPECT_GT(sm80, 128) << report;
  EXPECT_LE(sm80, 168) << report;

  s.blocksPerSm = {{90, 17}};
  EXPECT_THAT(unsupportedReason(s), HasSubstr("blocks per SM 17 for sm_90"));
  std::string unknown;
  EXPECT_EQ(blocksPerSmParam({{"blocks_per_sm", 2}}, unknown), 2);
  EXPECT_EQ(unknown, "");
  EXPECT_EQ(blocksPerSmParam({}, unknown), std::nullopt);
  EXPECT_EQ(blocksPerSmParam({{"query_tile", 48}}, unknown), std::nullopt);
  EXPECT_THAT(unknown, HasSubstr("unknown tuning parameter 'query_tile'"));
}

TEST(AttentionKernels, NvccErrorsAreQuoted) {
  std::vector<char> fatbin;
  std::string error;
  EXPECT_FALSE(compileFatbin("this is not CUDA;\n", {80}, fatbin, error));
  EXPECT_THAT(error, HasSubstr("nvcc failed with exit code"));
  EXPECT_THAT(error, HasSubstr("attention.cu"));
  EXPECT_THAT(error, HasSubstr("error"));
  EXPECT_FALSE(compileFatbin(attentionKernelSource({spec("x")}), {}, fatbin, error));
  EXPECT_THAT(error, HasSubstr("no GPU architecture"));
}

TEST(AttentionKernels, MissingNvccIsNamed) {
  const char *saved = std::getenv("ATTUNE_NVCC");
  std::string restore = saved ? saved : "";
  setenv("ATTUNE_NVCC", "/nonexistent/nvcc", 1);
  std::vector<char> fatbin;
  std::string error;
  EXPECT_FALSE(compileFatbin(attentionKernelSource({spec("x")}), {80}, fatbin, error));
  EXPECT_THAT(error, HasSubstr("'/nonexistent/nvcc' (from ATTUNE_NVCC) is not an executable"));
  if (saved)
    setenv("ATTUNE_NVCC", restore.c_str(), 1);
  else
    unsetenv("ATTUNE_NVCC");
}

} // namespace
} // namespace attune::targets::cuda
