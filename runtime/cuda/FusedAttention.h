//===- FusedAttention.h - launch the GPU's fused attention kernel -*- C++ -*-===//
//
// The host side of compiler/targets/cuda/attention/FlashAttention.cuh: checks
// an AttentionParams and launches the kernels attune-compile (or
// gpu_attention_gen) writes for it, extern "C" attune_attention_<name> and
// attune_attention_<name>_combine, with the kernel's grid
// (ceil(querySeq / 64) * keySplits x heads x batch), its 128 threads and the
// dynamic shared memory its head sizes need.
//
// Split over keys (FlashDecoding): a grid of few query tiles (decoding: one
// query row per head) leaves most of the GPU idle while each block walks
// every key. With AttentionParams::keySplits > 1 each block covers
// splitKeys keys and writes an unnormalised partial result, and the combine
// kernel merges the splits; attentionKeySplits picks how many.
//
// A configuration's compile-time half (head sizes, masks, storage type) is in
// the kernel; the caller passes the head sizes it was compiled for, which
// decide the shared memory. Which of the optional arrays (mask, key padding,
// bias, RoPE angles) the kernel reads is not known here, so only q, k, v, the
// result and (when split) the partial buffers are checked for null.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_FUSEDATTENTION_H
#define ATTUNE_RUNTIME_CUDA_FUSEDATTENTION_H

#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/CudaModule.h"

#include "compiler/targets/cuda/attention/FlashAttention.cuh"

namespace attune::cuda {

/// A launch: grid, block and dynamic shared memory.
struct AttentionLaunch {
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedBytes;
};

/// Checks `params` and the head sizes (`headDim`, `valueDim`: multiples of
/// 16, at most 128, as FlashAttention.cuh compiles) and gives the launches
/// they take: the attention kernel's and, when params.keySplits > 1, the
/// combine kernel's after it. ATTUNE_INVALID_ARGUMENT, with a message naming
/// the field, for a null query, key, value or result, a non-positive size,
/// heads not a multiple of kvHeads, heads or batch beyond the grid's 65535
/// blocks in y and z, a packedGroup other than 0, 1 or heads / kvHeads or
/// one beside a bias table, and for a split: a negative keySplits,
/// splitKeys not a positive multiple of 64, splits that do not cover the
/// keys, null partial buffers or a grid beyond 2^31 - 1 blocks in x.
attune_status_t attentionLaunch(int headDim, int valueDim, const gpu::AttentionParams &params,
                                AttentionLaunch *attention, AttentionLaunch *combine) noexcept;

/// The AttentionParams::packedGroup to run `params` with: heads / kvHeads
/// when query heads share key/value heads (GQA, MQA), there is no bias
/// table, and a group's queries fit one block (querySeq x group <= 64:
/// decoding), so that each key/value head's K and V are read once instead
/// of once per query head; else 1.
int attentionPackedGroup(const gpu::AttentionParams &params) noexcept;

/// How many key splits to run `params` with on a GPU of `multiprocessors`
/// SMs, by FlashAttention-2's rule (num_splits_heuristic, counting two
/// 128-thread blocks per SM): 1 when the unsplit grid (query tiles x heads x
/// batch, with params.packedGroup as set) already fills 80% of the GPU,
/// else the fewest splits whose last
/// wave of blocks is within 85% of the best such count's, up to 128 splits
/// and one key block per split. The count is one whose attentionSplitKeys
/// leaves no split empty.
int attentionKeySplits(const gpu::AttentionParams &params, int multiprocessors) noexcept;

/// The keys each of params.keySplits splits covers: the keys shared out
/// evenly, rounded up to whole key blocks (kAttentionBlockKeys).
int attentionSplitKeys(const gpu::AttentionParams &params) noexcept;

/// The floats of AttentionParams::partialResult and then partialStats that
/// a split launch needs (0 when params.keySplits <= 1): keySplits x batch x
/// heads x querySeq rows of valueDim results and 2 statistics.
size_t attentionPartialFloats(const gpu::AttentionParams &params, int valueDim) noexcept;

/// Checks `params` (attentionLaunch) and queues `kernel` of `module` on
/// `device`'s stream with them as its one by-value argument, then, when
/// params.keySplits > 1, `combine` (the kernel's attentionCombine). The
/// module must be loaded on `device`. Returns before the kernels run: the
/// pointers in `params` must stay valid until the stream has run them.
/// Nothing is cached between calls (the kernels are looked up each time).
attune_status_t launchAttention(Device &device, CudaModule &module, const char *kernel,
                                const char *combine, int headDim, int valueDim,
                                const gpu::AttentionParams &params) noexcept;

/// The same without a split (params.keySplits 0 or 1): one kernel.
attune_status_t launchAttention(Device &device, CudaModule &module, const char *kernel, int headDim,
                                int valueDim, const gpu::AttentionParams &params) noexcept;

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_FUSEDATTENTION_H
