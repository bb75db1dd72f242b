//===- gpu_attention_benchmark.cpp - the GPU's fused attention, timed -----===//
//
// The bf16 kernels of tests/unit/cuda/GpuAttentionKernels.h (bench64,
// bench128 and their causal forms, and bench64_t5 and bench128_t5, with
// T5's bucketed bias table: what a modifier costs; bench128_padded, with the
// last quarter of every sequence's keys padded, as a batch of several
// lengths is) and bench128_f16 (f16 in, f16 products; FlashAttention.cuh
// compiled by nvcc into
// gpu_attention.fatbin at build time) launched through
// runtime/cuda/FusedAttention.h on whatever NVIDIA GPU this runs on:
//  - BM_FlashAttention/<kernel>/S:<S>: prefill, Sq = Sk = S from 512 to 16k,
//    with batch = 16384 / S and heads = 2048 / D, the grid of
//    scripts/gpu_attention_peers.py (and of FlashAttention's own benchmark),
//    so that every row does the same B·H·S·D and fills the GPU. TFLOP/s
//    counts 4·B·H·S²·D per launch (half when causal; the attended keys
//    instead of S once with key padding): the useful work, so
//    skipping masked key blocks is not credited as work done. `of_peak` is
//    that over 989 TFLOP/s. Keys are split as the runtime would split them
//    (attentionKeySplits; these grids fill the GPU, so not at all).
//  - BM_FlashAttentionDecode/bench128/<split>/Sk:<Sk>: one query row against
//    8k to 128k keys (B=1, H=32, D=128, non-causal), and the GB/s of reading
//    K and V once. `auto` splits the keys as the runtime does, `splits:1`
//    not at all (32 blocks walk every key on 32 of the GPU's SMs: what the
//    split saves), and `splits:<n>` tries other counts at each length, to tune
//    attentionKeySplits by. gpu_attention_peers.py's decode table, run after
//    this benchmark by the bundle, is the comparison.
//  - BM_FlashAttentionDecode/bench128_gqa4/<auto|unpacked>/Sk:<Sk>: the same
//    with 8 key/value heads (LLaMA-3's GQA): `auto` packs each one's 4 query
//    heads into its blocks as the runtime does (attentionPackedGroup: K and
//    V read once), `unpacked` does not (read 4 times); GB/s counts K and V
//    once.
// Inputs are uniform in [-1, 1], bhsd. Before it is timed each row's
// result is compared, on a few rows of the first and the last head, with a
// float64 attention over the same bf16 (f16) inputs (|err| <= 1e-2: the emulated
// and GPU tests' 8e-3·max|v| plus the result's bf16 rounding); a mismatch
// skips the row with the error. Times come from CUDA events around
// `kRepeats` back-to-back launches on the device's stream, per launch.
//
// Runs on a GPU machine as it is (nothing of Halide, MLIR or LLVM inside;
// the fatbin is the build's or $ATTUNE_GPU_ATTENTION_FATBIN):
// scripts/gpu-bundle.sh carries it there. Without a GPU every row is
// skipped with the reason.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaModule.h"
#include "runtime/cuda/FusedAttention.h"
#include "runtime/src/Status.h"
#include "tests/unit/cuda/GpuAttentionSupport.h"
#include "tests/unit/cuda/GpuTestSupport.h"
#include "tests/unit/cuda/T5Buckets.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace attune::cuda;
using namespace attune::cuda::gputest;
using attune::gpu::AttentionParams;

namespace {

constexpr int kRepeats = 20;
/// The H100 SXM's dense bf16 tensor-core peak from its data sheet, TFLOP/s;
/// the H200 has the same compute.
constexpr double kPeakTflops = 989;
/// Prefill rows keep B·S = 16384 and H·D = 2048.
constexpr int64_t kTokens = 16384, kWidth = 2048;
constexpr int64_t kPrefillElements = kTokens * kWidth;

struct Gpu {
  std::unique_ptr<Device> device;
  std::unique_ptr<CudaModule> module; // unloaded before the device closes
  std::string why;                    // why there is no device, or ""
};

Gpu &gpu() {
  static Gpu g = [] {
    Gpu g;
    g.why = openFirstDevice(&g.device);
    if (g.why.empty())
      g.why = loadAttentionKernels(*g.device, &g.module);
    if (g.why.empty())
      benchmark::AddCustomContext("gpu", g.device->name());
    return g;
  }();
  return g;
}

const AttentionKernel *findKernel(const std::string &name) {
  for (const AttentionKernel &kernel : attentionKernels())
    if (name == kernel.name)
      return &kernel;
  return nullptr;
}

/// Device memory, freed with the object.
struct DeviceBuffer {
  api::CUdeviceptr pointer = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { gpu().device->free(pointer); } // free(0) is a no-op
};

/// A device array of 16-bit values (bf16 or f16) and its host copy (the
/// bits).
struct HalfArray {
  std::vector<uint16_t> host;
  DeviceBuffer device;
};

/// q, k and v of the prefill rows (kPrefillElements each, uniform in
/// [-1, 1]) and a result buffer as large, made at the first row that needs
/// them and kept: every prefill row has the same B·H·S·D. The decode rows
/// tile their q, K and V with these q, k and v. Empty `why` when ready.
struct PrefillData {
  bool f16 = false; // f16 values, else bf16
  HalfArray q, k, v;
  DeviceBuffer result;
  std::string why;
};

/// `n` bf16 (or f16) values (their bits) uniform in [lo, hi), from a
/// 64-bit LCG at `state`: fast enough for 100M values, and the same every
/// run.
void fillUniform(std::vector<uint16_t> &bits, size_t n, float lo, float hi, uint64_t &state,
                 bool f16 = false) {
  bits.resize(n);
  for (uint16_t &b : bits) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float x = float(state >> 40) / float(1 << 24) * (hi - lo) + lo;
    b = uint16_t(f16 ? attune::gpu::toF16BitsOnHost(x) : attune::gpu::toBf16Bits(x));
  }
}

/// A device copy of the `bytes` at `host` in `to`; false, with the status
/// message recorded, when it could not be made.
bool upload(DeviceBuffer &to, const void *host, size_t bytes) {
  Device &device = *gpu().device;
  return device.alloc(bytes, &to.pointer) == ATTUNE_OK &&
         device.upload(to.pointer, host, bytes) == ATTUNE_OK;
}

void makePrefillData(PrefillData &d) {
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (HalfArray *array : {&d.q, &d.k, &d.v}) {
    fillUniform(array->host, kPrefillElements, -1.0f, 1.0f, state, d.f16);
    if (!upload(array->device, array->host.data(), array->host.size() * 2)) {
      d.why = attune::runtime::statusMessage();
      return;
    }
  }
  if (gpu().device->alloc(kPrefillElements * 2, &d.result.pointer) != ATTUNE_OK)
    d.why = attune::runtime::statusMessage();
}

/// Made after gpu(), so destroyed before it closes the device.
/// Of f16 values for an f16 kernel, else bf16.
PrefillData &prefillData(bool f16) {
  static PrefillData data[2];
  static bool made[2] = {false, false};
  if (!made[f16]) {
    data[f16].f16 = f16;
    makePrefillData(data[f16]);
    made[f16] = true;
  }
  return data[f16];
}

/// The value of 16-bit `bits`: f16 or bf16.
float halfValue(uint16_t bits, bool f16) {
  return f16 ? attune::gpu::toFloat(attune::gpu::f16{bits})
             : attune::gpu::floatBits(uint32_t(bits) << 16);
}

/// One attention launch's shape, bhsd and contiguous, over device arrays.
struct Shape {
  int batch, heads, querySeq, keySeq, dim;
  bool causal;
  int kvHeads = 0; // 0: heads (no GQA)
  /// Keys each sequence attends to, from the first (the rest are key
  /// padding); 0: every key, no key padding.
  int attended = 0;
  int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
};

/// T5's bias (32 buckets, max_distance 128) for kernels with a bias table:
/// the table [32][heads] (bf16, uniform in [-2, 2]) and the bucket of each
/// distance, on the device and on the host.
struct BiasTable {
  std::vector<uint16_t> table;
  std::vector<int> rows;
  DeviceBuffer deviceTable, deviceRows;
  std::string why;
  static constexpr int kBuckets = 32, kMaxDistance = 128;
  double at(int h, int delta, int heads) const {
    int x = std::clamp(delta + kMaxDistance, 0, 2 * kMaxDistance);
    return attune::gpu::floatBits(uint32_t(table[size_t(rows[x]) * heads + h]) << 16);
  }
};

void makeBiasTable(BiasTable &t, int heads) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  fillUniform(t.table, size_t(BiasTable::kBuckets) * heads, -2.0f, 2.0f, state);
  t.rows = attune::gpu::testing::t5BucketRows(BiasTable::kBuckets, BiasTable::kMaxDistance);
  if (!upload(t.deviceTable, t.table.data(), t.table.size() * 2) ||
      !upload(t.deviceRows, t.rows.data(), t.rows.size() * sizeof(int)))
    t.why = attune::runtime::statusMessage();
}

/// The table of `heads` heads, made at its first use and kept (after gpu(),
/// so freed before the device closes).
BiasTable &biasTable(int heads) {
  static std::map<int, std::unique_ptr<BiasTable>> tables;
  std::unique_ptr<BiasTable> &t = tables[heads];
  if (!t) {
    t = std::make_unique<BiasTable>();
    makeBiasTable(*t, heads);
  }
  return *t;
}

AttentionParams paramsFor(const Shape &s, api::CUdeviceptr q, api::CUdeviceptr k,
                          api::CUdeviceptr v, api::CUdeviceptr o) {
  AttentionParams p{};
  p.query = reinterpret_cast<const void *>(q);
  p.key = reinterpret_cast<const void *>(k);
  p.value = reinterpret_cast<const void *>(v);
  p.result = reinterpret_cast<void *>(o);
  using attune::gpu::i64;
  auto strides = [&](int heads, int seq, i64 out[3]) {
    out[0] = i64(heads) * seq * s.dim, out[1] = i64(seq) * s.dim, out[2] = s.dim;
  };
  strides(s.heads, s.querySeq, p.queryStride);
  strides(s.keyValueHeads(), s.keySeq, p.keyStride);
  strides(s.keyValueHeads(), s.keySeq, p.valueStride);
  strides(s.heads, s.querySeq, p.resultStride);
  p.batch = s.batch, p.heads = s.heads, p.kvHeads = s.keyValueHeads();
  p.querySeq = s.querySeq, p.keySeq = s.keySeq;
  p.scale = 1.0f / std::sqrt(float(s.dim));
  p.deltaLow = INT32_MIN, p.deltaHigh = INT32_MAX;
  return p;
}

/// Runs `launch` once into a result first filled with NaN and compares rows
/// 0, Sq/2 and Sq-1 of the first and the last (batch, head) with a float64
/// attention. q, k and v are read from the host copies, element x of a
/// tensor being host[x % host.size()] (the decode rows tile theirs). "" when
/// every row matches, else what did not.
template <typename Launch>
std::string checkRows(const Shape &s, const PrefillData &data, const BiasTable *bias,
                      api::CUdeviceptr result, Launch launch) {
  Device &device = *gpu().device;
  const size_t resultBytes = size_t(s.batch) * s.heads * s.querySeq * s.dim * 2;
  {
    Device::Scope scope(device);
    if (device.driver().check(
            device.driver().cuMemsetD8Async(result, 0xff, resultBytes, device.stream()),
            "cuMemsetD8Async"))
      return attune::runtime::statusMessage();
  }
  if (!launch() || device.synchronize() != ATTUNE_OK)
    return attune::runtime::statusMessage();
  auto at = [&](const std::vector<uint16_t> &host, size_t x) {
    return double(halfValue(host[x % host.size()], data.f16));
  };
  const int shift = s.keySeq - s.querySeq;
  const double scale = 1.0f / std::sqrt(float(s.dim)); // the kernel's f32 scale
  std::vector<int> rows = {0, s.querySeq / 2, s.querySeq - 1};
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end()); // Sq = 1: one row
  for (int bh : {0, s.batch * s.heads - 1}) {
    for (int i : rows) {
      const size_t row = (size_t(bh) * s.querySeq + i) * s.dim;
      // the (batch, key/value head) of (batch, head) bh
      const int group = s.heads / s.keyValueHeads();
      const size_t kv = size_t(bh / s.heads) * s.keyValueHeads() + (bh % s.heads) / group;
      const size_t keys = kv * s.keySeq * s.dim;
      std::vector<uint16_t> got(s.dim);
      if (device.download(got.data(), result + row * 2, s.dim * 2) != ATTUNE_OK)
        return attune::runtime::statusMessage();
      int visible = s.causal ? std::min(s.keySeq, i + shift + 1) : s.keySeq;
      if (s.attended > 0)
        visible = std::min(visible, s.attended);
      std::vector<double> score(visible), want(s.dim, 0.0);
      double maximum = -INFINITY, sum = 0.0;
      for (int j = 0; j < visible; ++j) {
        double dot = 0.0;
        for (int d = 0; d < s.dim; ++d)
          dot += at(data.q.host, row + d) * at(data.k.host, keys + size_t(j) * s.dim + d);
        score[j] = scale * dot;
        if (bias)
          score[j] += bias->at(bh % s.heads, j - (i + shift), s.heads);
        maximum = std::max(maximum, score[j]);
      }
      for (double &x : score)
        sum += x = std::exp(x - maximum);
      for (int j = 0; j < visible; ++j)
        for (int d = 0; d < s.dim; ++d)
          want[d] += score[j] / sum * at(data.v.host, keys + size_t(j) * s.dim + d);
      for (int d = 0; d < s.dim; ++d) {
        const double value = halfValue(got[d], data.f16);
        if (!(std::fabs(value - want[d]) <= 1e-2))
          return "head " + std::to_string(bh) + " row " + std::to_string(i) + " element " +
                 std::to_string(d) + ": got " + std::to_string(value) + ", want " +
                 std::to_string(want[d]);
      }
    }
  }
  return "";
}

/// Times `launch` in batches of kRepeats between two events; each batch
/// counts as kRepeats iterations, so the reported time is per launch.
template <typename Launch> void timeOnDevice(benchmark::State &state, Launch launch) {
  Device::Timer timer(*gpu().device);
  for (int i = 0; i < 3; ++i) // warm up: clocks, caches
    if (!launch())
      return;
  gpu().device->synchronize();
  while (state.KeepRunningBatch(kRepeats)) {
    float ms = 0;
    timer.start();
    for (int i = 0; i < kRepeats; ++i)
      if (!launch())
        return;
    if (timer.stop(&ms) != ATTUNE_OK)
      return state.SkipWithError(attune::runtime::statusMessage());
    state.SetIterationTime(ms / 1e3);
  }
}

/// The key splits: as the runtime picks them, or a given count (>= 1).
constexpr int kRuntimeSplits = 0;

/// Checks and times `kernel` on `shape` over q, k, v and result (device
/// arrays read as checkRows reads `data`) with `splits`, query heads packed
/// as the runtime packs them (attentionPackedGroup) or, without `pack`,
/// not; the row's `splits` and `packed` counters say how it ran.
void checkAndTime(benchmark::State &state, const AttentionKernel &kernel, const Shape &shape,
                  const PrefillData &data, api::CUdeviceptr q, api::CUdeviceptr k,
                  api::CUdeviceptr v, api::CUdeviceptr result, int splits, bool pack = true) {
  AttentionParams params = paramsFor(shape, q, k, v, result);
  const BiasTable *bias = nullptr;
  if (kernel.bias) {
    bias = &biasTable(shape.heads);
    if (!bias->why.empty())
      return state.SkipWithError(bias->why.c_str());
    params.biasTable = reinterpret_cast<const void *>(bias->deviceTable.pointer);
    params.biasHeadStride = 1, params.biasRowStride = shape.heads;
    params.biasRows = reinterpret_cast<const int *>(bias->deviceRows.pointer);
    params.biasRowLow = -BiasTable::kMaxDistance;
    params.biasRowCount = int(bias->rows.size());
  }
  DeviceBuffer padding;
  if (kernel.keyPadding) {
    // [B, Sk] bools: each sequence's first shape.attended keys attend.
    std::vector<unsigned char> attends(size_t(shape.batch) * shape.keySeq);
    for (size_t x = 0; x < attends.size(); ++x)
      attends[x] = int(x % shape.keySeq) < shape.attended;
    if (!upload(padding, attends.data(), attends.size()))
      return state.SkipWithError(attune::runtime::statusMessage());
    params.keyPadding = reinterpret_cast<const void *>(padding.pointer);
    params.keyPaddingStride = shape.keySeq, params.keyPaddingBytes = 1;
  }
  params.packedGroup = pack ? attentionPackedGroup(params) : 1;
  params.keySplits = splits == kRuntimeSplits
                         ? attentionKeySplits(params, gpu().device->multiprocessors())
                         : splits;
  DeviceBuffer partial;
  if (params.keySplits > 1) {
    params.splitKeys = attentionSplitKeys(params);
    const size_t floats = attentionPartialFloats(params, kernel.valueDim);
    if (gpu().device->alloc(floats * sizeof(float), &partial.pointer) != ATTUNE_OK)
      return state.SkipWithError(attune::runtime::statusMessage());
    params.partialResult = reinterpret_cast<float *>(partial.pointer);
    params.partialStats = params.partialResult + floats / (kernel.valueDim + 2) * kernel.valueDim;
  }
  // A launch for timeOnDevice: false, with the row skipped, when it fails.
  auto launch = [&] {
    if (launchAttention(*gpu().device, *gpu().module, kernel.symbol, kernel.combine, kernel.headDim,
                        kernel.valueDim, params) == ATTUNE_OK)
      return true;
    state.SkipWithError(attune::runtime::statusMessage());
    return false;
  };
  if (std::string wrong = checkRows(shape, data, bias, result, launch); !wrong.empty())
    return state.SkipWithError(("result check: " + wrong).c_str());
  timeOnDevice(state, launch);
  state.counters["splits"] = params.keySplits;
  state.counters["packed"] = params.packedGroup;
}

/// The kernel `name` of a row, with the GPU and its prefillData ready; null,
/// with the row skipped saying why, when one of them is not.
const AttentionKernel *kernelForRow(benchmark::State &state, const std::string &name) {
  std::string why;
  const AttentionKernel *kernel = nullptr;
  if (!gpu().why.empty())
    why = "no GPU: " + gpu().why;
  else if (!(kernel = findKernel(name)))
    why = "no kernel " + name + " in GpuAttentionKernels.h";
  else
    why = prefillData(kernel->f16).why;
  if (why.empty())
    return kernel;
  state.SkipWithError(why.c_str());
  return nullptr;
}

void BM_FlashAttention(benchmark::State &state, std::string name) {
  const AttentionKernel *kernel = kernelForRow(state, name);
  if (!kernel)
    return;
  PrefillData &data = prefillData(kernel->f16);
  const int seq = int(state.range(0));
  Shape shape{int(kTokens / seq), int(kWidth / kernel->headDim), seq, seq, kernel->headDim,
              kernel->causal};
  if (kernel->keyPadding)
    shape.attended = seq - seq / 4;
  checkAndTime(state, *kernel, shape, data, data.q.device.pointer, data.k.device.pointer,
               data.v.device.pointer, data.result.pointer, kRuntimeSplits);
  // The useful work: the keys each query attends to.
  const double keys = kernel->keyPadding ? shape.attended : seq;
  const double flops =
      4.0 * shape.batch * shape.heads * double(seq) * keys * shape.dim / (kernel->causal ? 2 : 1);
  state.counters["B"] = shape.batch;
  state.counters["H"] = shape.heads;
  state.counters["TFLOP/s"] =
      benchmark::Counter(flops / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_peak"] =
      benchmark::Counter(flops / 1e12 / kPeakTflops, benchmark::Counter::kIsIterationInvariantRate);
}

/// `bytes` of `to` filled with copies of the `from.host.size() * 2` bytes
/// of `from`, so that element x of `to` is from.host[x % from.host.size()].
bool tile(api::CUdeviceptr to, size_t bytes, const HalfArray &from) {
  const size_t chunk = from.host.size() * 2;
  for (size_t at = 0; at < bytes; at += chunk)
    if (gpu().device->copy(to + at, from.device.pointer, std::min(chunk, bytes - at)) != ATTUNE_OK)
      return false;
  return gpu().device->synchronize() == ATTUNE_OK;
}

void BM_FlashAttentionDecode(benchmark::State &state, std::string name, int splits, int kvHeads,
                             bool pack) {
  const AttentionKernel *kernel = kernelForRow(state, name);
  if (!kernel)
    return;
  PrefillData &data = prefillData(kernel->f16);
  Shape shape{1, 32, 1, int(state.range(0)), kernel->headDim, false, kvHeads};
  const size_t rowBytes = size_t(shape.heads) * shape.dim * 2;
  const size_t kvBytes = size_t(shape.keySeq) * kvHeads * shape.dim * 2;
  // q, K and V tile the prefill q, k and v, as checkRows reads them.
  DeviceBuffer q, k, v, result;
  Device &device = *gpu().device;
  if (device.alloc(kvBytes, &k.pointer) != ATTUNE_OK ||
      device.alloc(kvBytes, &v.pointer) != ATTUNE_OK ||
      device.alloc(rowBytes, &q.pointer) != ATTUNE_OK ||
      device.alloc(rowBytes, &result.pointer) != ATTUNE_OK || !tile(q.pointer, rowBytes, data.q) ||
      !tile(k.pointer, kvBytes, data.k) || !tile(v.pointer, kvBytes, data.v))
    return state.SkipWithError(attune::runtime::statusMessage());
  checkAndTime(state, *kernel, shape, data, q.pointer, k.pointer, v.pointer, result.pointer,
               splits, pack);
  state.counters["H"] = shape.heads;
  state.counters["Hkv"] = kvHeads;
  state.counters["GB/s"] = benchmark::Counter(2.0 * double(kvBytes) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void registerAll() {
  for (const char *name :
       {"bench64", "bench64_causal", "bench64_t5", "bench128", "bench128_causal", "bench128_t5",
        "bench128_padded", "bench128_f16"})
    benchmark::RegisterBenchmark((std::string("BM_FlashAttention/") + name).c_str(),
                                 BM_FlashAttention, std::string(name))
        ->ArgName("S")
        ->Arg(512)
        ->Arg(1024)
        ->Arg(2048)
        ->Arg(4096)
        ->Arg(8192)
        ->Arg(16384)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  // gpu_attention_peers.py's decode lengths, split as the runtime splits
  // them and not at all; at 32k keys, other counts of splits.
  auto decode = [](const std::string &split, int splits, std::vector<int64_t> keys,
                   int kvHeads = 32, bool pack = true) {
    const std::string row =
        kvHeads == 32 ? "bench128/" : "bench128_gqa" + std::to_string(32 / kvHeads) + "/";
    benchmark::RegisterBenchmark(("BM_FlashAttentionDecode/" + row + split).c_str(),
                                 BM_FlashAttentionDecode, std::string("bench128"), splits,
                                 kvHeads, pack)
        ->ArgName("Sk")
        ->ArgsProduct({keys})
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  };
  decode("auto", kRuntimeSplits, {8192, 32768, 131072});
  decode("splits:1", 1, {8192, 32768, 131072});
  // At 32k keys on an H200, 32 splits (157 us) beat the rule's 7 (188 us)
  // and 16 (192 us): the sweep at every length is what a better rule is
  // fitted to.
  for (int splits : {4, 16, 32, 64, 128})
    decode("splits:" + std::to_string(splits), splits, {8192, 32768, 131072});
  // GQA as LLaMA-3 decodes (32 query heads on 8 key/value heads): a key/
  // value head's 4 query heads packed into its blocks (K and V read once),
  // and not (read 4 times).
  decode("auto", kRuntimeSplits, {8192, 32768, 131072}, 8);
  decode("unpacked", kRuntimeSplits, {8192, 32768, 131072}, 8, false);
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  gpu(); // opens the device now, so that its name is in the printed context
  registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
