//===- GpuAttentionKernels.h - the attention kernels built for GPU tests -*- C++ -*-===//
//
// The FlashAttention.cuh configurations that the build compiles with nvcc
// (gpu_attention_gen, through AttentionKernels.h as attune-compile does)
// into gpu_attention.fatbin, for gpu_attention_test and
// gpu_attention_benchmark to run on a GPU. One line each:
//
//   ATTUNE_GPU_ATTENTION(name, head dim, value dim, causal, mask,
//                        key padding, bias, softcap, rotary dims,
//                        interleaved, storage type)
//
// The kernel's symbol is attune_attention_<name>. The first eight and the
// f16 ones but bench128_f16 are the emulated test's configurations
// (FlashAttentionEmuTest.cpp); the bf16 ones at D = 64 and 128 are the
// benchmark's (bench128_t5, bench64_t5: with T5's bias table, what the
// modifier costs; bench128_padded: with key padding, a batch padded at the
// end as Hugging Face's attention_mask pads it),
// and bench128_f16 (f16 storage multiplies in f16: ProductsFor).
//
//===----------------------------------------------------------------------===//

// clang-format off
ATTUNE_GPU_ATTENTION(plain64,        64,  64, false, false, false, false, false,  0, false, float)
ATTUNE_GPU_ATTENTION(causal64,       64,  64, true,  false, false, false, false,  0, false, float)
ATTUNE_GPU_ATTENTION(masked128,     128, 128, false, true,  true,  false, false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(biased64,       64,  64, true,  false, false, true,  true,   0, false, float)
ATTUNE_GPU_ATTENTION(rope64,         64,  64, true,  false, false, false, false, 32, false, float)
ATTUNE_GPU_ATTENTION(rope_interleaved64, 64, 64, false, false, false, false, false, 64, true, float)
ATTUNE_GPU_ATTENTION(narrow,         64,  32, false, false, true,  false, false,  0, false, float)
ATTUNE_GPU_ATTENTION(buckets64,      64,  64, false, true,  false, true,  false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench64,        64,  64, false, false, false, false, false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench64_causal, 64,  64, true,  false, false, false, false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench128,      128, 128, false, false, false, false, false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench128_causal, 128, 128, true, false, false, false, false, 0, false, bf16)
ATTUNE_GPU_ATTENTION(bench128_t5,   128, 128, false, false, false, true,  false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench64_t5,     64,  64, false, false, false, true,  false,  0, false, bf16)
ATTUNE_GPU_ATTENTION(bench128_padded, 128, 128, false, false, true, false, false, 0, false, bf16)
ATTUNE_GPU_ATTENTION(masked128_f16, 128, 128, false, true,  true,  false, false,  0, false, f16)
ATTUNE_GPU_ATTENTION(causal64_f16,   64,  64, true,  false, false, false, false,  0, false, f16)
ATTUNE_GPU_ATTENTION(rope_buckets64_f16, 64, 64, true, false, false, true, false, 32, false, f16)
ATTUNE_GPU_ATTENTION(bench128_f16,  128, 128, false, false, false, false, false,  0, false, f16)
// clang-format on
