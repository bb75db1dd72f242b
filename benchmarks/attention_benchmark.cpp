//===- attention_benchmark.cpp - fused vs unfused attention, as shipped ---===//
//
// Measures what fusing attention buys in the libraries attune-compile writes:
// the same exporter-style attention model (examples/attention/*.mlir)
// compiled with fusion (one tfm.attention kernel) and with
// --no-fuse-attention (matmul, scale, mask, softmax, matmul kernels with the
// S x S scores in the workspace), run through the runtime's C API.
//
//   BM_Attention/<fused|unfused>/S:<seq>/D:64/causal:<0|1>/T:<threads>
//
// with a GFLOPs rate counter (4·B·H·S²·D flops per run, half when causal).
// Each thread count gets its own copy of each library: every library carries
// its own Halide runtime and thread pool, whose size is best set once.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

constexpr int64_t kBatch = 1, kHeads = 12, kHeadDim = 64;

/// Opened libraries, one per (variant, causal, threads), kept for the run.
std::map<std::string, attune_model_t *> &models() {
  static std::map<std::string, attune_model_t *> opened;
  return opened;
}

attune_model_t *openModel(const std::string &variant, bool causal, int threads) {
  std::string key = variant + (causal ? "_causal" : "_full") + "_t" + std::to_string(threads);
  auto it = models().find(key);
  if (it != models().end())
    return it->second;
  std::string name = "libattention_" + std::string(causal ? "causal" : "full") + "_" +
                     variant + ".so";
  fs::path source = fs::path(ATTUNE_BENCHMARK_LIB_DIR) / name;
  // A private copy per thread count, so each has its own Halide thread pool.
  fs::path dir = fs::temp_directory_path() /
                 ("attune-bench-" + std::to_string(::getpid()) + "-t" + std::to_string(threads));
  fs::create_directories(dir);
  fs::path copy = dir / name;
  std::error_code ec;
  fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    std::fprintf(stderr, "attention_benchmark: cannot copy %s: %s\n", source.c_str(),
                 ec.message().c_str());
    std::exit(1);
  }
  attune_model_t *model = nullptr;
  if (attune_model_open(copy.c_str(), &model) != ATTUNE_OK ||
      attune_model_set_num_threads(model, threads) != ATTUNE_OK) {
    std::fprintf(stderr, "attention_benchmark: %s\n", attune_status_message());
    std::exit(1);
  }
  models()[key] = model;
  return model;
}

attune_tensor_t makeTensor(std::vector<float> &storage, int64_t seq) {
  attune_tensor_t t{};
  t.data = storage.data();
  t.dtype = ATTUNE_DTYPE_F32;
  t.rank = 4;
  t.shape[0] = kBatch, t.shape[1] = kHeads, t.shape[2] = seq, t.shape[3] = kHeadDim;
  return t;
}

void BM_Attention(benchmark::State &state, std::string variant, int64_t seq, bool causal,
                  int threads) {
  attune_model_t *model = openModel(variant, causal, threads);
  size_t n = kBatch * kHeads * seq * kHeadDim;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> q(n), k(n), v(n), o(n);
  for (size_t i = 0; i < n; ++i)
    q[i] = normal(rng), k[i] = normal(rng), v[i] = normal(rng);
  attune_tensor_t inputs[3] = {makeTensor(q, seq), makeTensor(k, seq), makeTensor(v, seq)};
  attune_tensor_t output = makeTensor(o, seq);
  // One untimed run: the first one allocates the workspace (for unfused
  // attention at S=4096, three 805 MB score tensors) and faults its pages in.
  if (attune_model_run(model, inputs, 3, &output, 1) != ATTUNE_OK) {
    state.SkipWithError(attune_status_message());
    return;
  }
  for (auto _ : state) {
    if (attune_model_run(model, inputs, 3, &output, 1) != ATTUNE_OK) {
      state.SkipWithError(attune_status_message());
      break;
    }
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  double flops = 4.0 * kBatch * kHeads * double(seq) * double(seq) * kHeadDim;
  if (causal)
    flops /= 2;
  state.counters["GFLOPs"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

int main(int argc, char **argv) {
  for (int threads : {1, 2})
    for (bool causal : {false, true})
      for (int64_t seq : {128, 512, 1024, 2048, 4096})
        for (const char *variant : {"fused", "unfused"}) {
          std::string name = std::string("BM_Attention/") + variant + "/S:" +
                             std::to_string(seq) + "/D:" + std::to_string(kHeadDim) +
                             "/causal:" + (causal ? "1" : "0") + "/T:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), BM_Attention, std::string(variant), seq,
                                       causal, threads)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto &[key, model] : models())
    attune_model_close(model);
  return 0;
}
