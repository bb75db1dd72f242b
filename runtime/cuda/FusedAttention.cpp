//===- FusedAttention.cpp - launch the GPU's fused attention kernel -------===//

#include "runtime/cuda/FusedAttention.h"

#include "runtime/src/Status.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace attune::cuda {

using runtime::fail;

namespace {

/// The most blocks a grid has in y and z.
constexpr int kMaxGridYZ = 65535;
/// The most key splits attentionKeySplits picks (FlashAttention-2's bound).
constexpr int kMaxKeySplits = 128;

/// Query tiles and heads of the attention kernel's grid (x before splits,
/// y): packed groups share a key/value head's blocks.
struct Tiles {
  long long tiles;
  int heads;
};
Tiles tilesOf(const gpu::AttentionParams &p) {
  const int pack = p.packedGroup > 1 ? p.packedGroup : 1;
  const long long rows = (long long)p.querySeq * pack;
  return {(rows + gpu::kAttentionBlockRows - 1) / gpu::kAttentionBlockRows,
          pack > 1 ? p.kvHeads : p.heads};
}

attune_status_t checkHeadSize(const char *name, int size) {
  if (size <= 0 || size % 16 != 0 || size > 128)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: %s is %d; the kernel takes multiples of 16 up to 128", name, size);
  return ATTUNE_OK;
}

} // namespace

attune_status_t attentionLaunch(int headDim, int valueDim, const gpu::AttentionParams &p,
                                AttentionLaunch *attention, AttentionLaunch *combine) noexcept {
  if (attune_status_t status = checkHeadSize("headDim", headDim))
    return status;
  if (attune_status_t status = checkHeadSize("valueDim", valueDim))
    return status;
  const struct {
    const char *name;
    const void *pointer;
  } pointers[] = {{"query", p.query}, {"key", p.key}, {"value", p.value}, {"result", p.result}};
  for (const auto &pointer : pointers)
    if (!pointer.pointer)
      return fail(ATTUNE_INVALID_ARGUMENT, "attention: params.%s is null", pointer.name);
  const struct {
    const char *name;
    int value;
  } sizes[] = {{"batch", p.batch},
               {"heads", p.heads},
               {"kvHeads", p.kvHeads},
               {"querySeq", p.querySeq},
               {"keySeq", p.keySeq}};
  for (const auto &size : sizes)
    if (size.value <= 0)
      return fail(ATTUNE_INVALID_ARGUMENT, "attention: params.%s is %d; it must be positive",
                  size.name, size.value);
  // Query head h reads key/value head h / (heads / kvHeads) (GQA).
  if (p.heads % p.kvHeads != 0)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: params.heads (%d) is not a multiple of params.kvHeads (%d)", p.heads,
                p.kvHeads);
  if (p.heads > kMaxGridYZ)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: params.heads is %d; the grid has at most %d blocks in y", p.heads,
                kMaxGridYZ);
  if (p.batch > kMaxGridYZ)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: params.batch is %d; the grid has at most %d blocks in z", p.batch,
                kMaxGridYZ);
  if (p.keySplits < 0)
    return fail(ATTUNE_INVALID_ARGUMENT, "attention: params.keySplits is %d", p.keySplits);
  if (p.packedGroup > 1 && (p.packedGroup != p.heads / p.kvHeads || p.biasTable))
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: params.packedGroup is %d; a packed group is heads / kvHeads (%d) "
                "and takes no bias table",
                p.packedGroup, p.heads / p.kvHeads);
  const auto [tiles, gridHeads] = tilesOf(p);
  const bool split = p.keySplits > 1;
  if (split) {
    // The kernel clips each split's keys to [s * splitKeys, (s + 1) *
    // splitKeys): keys past the last split would be left out silently.
    if (p.splitKeys <= 0 || p.splitKeys % gpu::kAttentionBlockKeys != 0)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "attention: params.splitKeys is %d; a split covers a positive multiple of %d "
                  "keys",
                  p.splitKeys, gpu::kAttentionBlockKeys);
    if ((long long)p.keySplits * p.splitKeys < p.keySeq)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "attention: params.keySplits (%d) x params.splitKeys (%d) do not cover the %d "
                  "keys",
                  p.keySplits, p.splitKeys, p.keySeq);
    if (!p.partialResult || !p.partialStats)
      return fail(ATTUNE_INVALID_ARGUMENT, "attention: params.%s is null with %d key splits",
                  p.partialResult ? "partialStats" : "partialResult", p.keySplits);
    if (tiles * p.keySplits > INT_MAX)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "attention: %lld query tiles x %d key splits exceed the grid's %d blocks in x",
                  tiles, p.keySplits, INT_MAX);
  }
  attention->grid[0] = unsigned(tiles * (split ? p.keySplits : 1));
  attention->grid[1] = unsigned(gridHeads);
  attention->grid[2] = unsigned(p.batch);
  attention->block[0] = gpu::kAttentionThreads;
  attention->block[1] = attention->block[2] = 1;
  attention->sharedBytes = unsigned(gpu::attentionSharedBytes(headDim, valueDim));
  // attentionCombine: a thread per result element of a (batch, head).
  const long long elements = (long long)p.querySeq * valueDim;
  combine->grid[0] =
      split ? unsigned((elements + gpu::kAttentionThreads - 1) / gpu::kAttentionThreads) : 0;
  combine->grid[1] = unsigned(p.heads);
  combine->grid[2] = unsigned(p.batch);
  combine->block[0] = gpu::kAttentionThreads;
  combine->block[1] = combine->block[2] = 1;
  combine->sharedBytes = 0;
  return ATTUNE_OK;
}

int attentionKeySplits(const gpu::AttentionParams &p, int multiprocessors) noexcept {
  if (p.querySeq <= 0 || p.keySeq <= 0 || p.heads <= 0 || p.batch <= 0 || multiprocessors <= 0)
    return 1;
  // Two of the kernel's 128-thread blocks run on an SM at once, as
  // FlashAttention-2 counts for its own.
  const int slots = 2 * multiprocessors;
  const auto [tiles, gridHeads] = tilesOf(p);
  const long long blocks = tiles * gridHeads * p.batch;
  // Enough blocks to almost fill the GPU already.
  if (blocks >= 0.8 * slots)
    return 1;
  const int keyBlocks = (p.keySeq + gpu::kAttentionBlockKeys - 1) / gpu::kAttentionBlockKeys;
  const int most = std::min({kMaxKeySplits, slots, keyBlocks});
  auto ceilDiv = [](int a, int b) { return (a + b - 1) / b; };
  // n splits of ceil(keyBlocks / n) key blocks each: a count that shares
  // the blocks out as the count before it does leaves a split empty.
  auto eligible = [&](int n) {
    return n == 1 || ceilDiv(keyBlocks, n) != ceilDiv(keyBlocks, n - 1);
  };
  // The fraction of the last wave of blocks that has work.
  auto efficiency = [&](int n) {
    double waves = double(blocks) * n / slots;
    return waves / std::ceil(waves);
  };
  double best = 0.0;
  for (int n = 1; n <= most; ++n)
    if (eligible(n))
      best = std::max(best, efficiency(n));
  for (int n = 1; n <= most; ++n)
    if (eligible(n) && efficiency(n) >= 0.85 * best)
      return n;
  return 1;
}

int attentionPackedGroup(const gpu::AttentionParams &p) noexcept {
  if (p.kvHeads <= 0 || p.heads % p.kvHeads != 0 || p.biasTable)
    return 1;
  const int group = p.heads / p.kvHeads;
  return group > 1 && (long long)p.querySeq * group <= gpu::kAttentionBlockRows ? group : 1;
}

int attentionSplitKeys(const gpu::AttentionParams &p) noexcept {
  const int splits = std::max(p.keySplits, 1);
  const int keyBlocks = (p.keySeq + gpu::kAttentionBlockKeys - 1) / gpu::kAttentionBlockKeys;
  return (keyBlocks + splits - 1) / splits * gpu::kAttentionBlockKeys;
}

size_t attentionPartialFloats(const gpu::AttentionParams &p, int valueDim) noexcept {
  if (p.keySplits <= 1)
    return 0;
  const size_t rows = size_t(p.keySplits) * size_t(p.batch) * size_t(p.heads) * size_t(p.querySeq);
  return rows * size_t(valueDim + 2);
}

attune_status_t launchAttention(Device &device, CudaModule &module, const char *kernel,
                                const char *combine, int headDim, int valueDim,
                                const gpu::AttentionParams &params) noexcept {
  if (&module.device() != &device)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: the kernel's module is loaded on another device");
  AttentionLaunch attention, merge;
  if (attune_status_t status = attentionLaunch(headDim, valueDim, params, &attention, &merge))
    return status;
  const bool split = params.keySplits > 1;
  if (split && !combine)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attention: params.keySplits is %d but no combine kernel was given",
                params.keySplits);
  // Both kernels are looked up before either is queued, so that a missing
  // one queues nothing.
  api::CUfunction function = nullptr, combineFunction = nullptr;
  if (attune_status_t status = module.function(kernel, &function))
    return status;
  if (split)
    if (attune_status_t status = module.function(combine, &combineFunction))
      return status;
  // cuLaunchKernel copies the struct's bytes (the kernels' one by-value
  // argument) from this pointer before it returns.
  void *arguments[] = {const_cast<gpu::AttentionParams *>(&params)};
  if (attune_status_t status = module.launch(function, attention.grid, attention.block,
                                             attention.sharedBytes, arguments))
    return status;
  if (!split)
    return ATTUNE_OK;
  // The same stream: the combine runs after every split has written.
  return module.launch(combineFunction, merge.grid, merge.block, merge.sharedBytes, arguments);
}

attune_status_t launchAttention(Device &device, CudaModule &module, const char *kernel, int headDim,
                                int valueDim, const gpu::AttentionParams &params) noexcept {
  return launchAttention(device, module, kernel, nullptr, headDim, valueDim, params);
}

} // namespace attune::cuda
