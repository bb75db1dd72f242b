//===- attention_benchmark.cpp - fused vs unfused attention, as shipped ---===//
//
// Measures what fusing attention buys in the libraries attune-compile writes:
// the same exporter-style attention model (examples/attention/*.mlir)
// compiled with fusion (one tfm.attention kernel) and with
// --no-fuse-attention (matmul, scale, mask, softmax, matmul kernels with the
// S x S scores in the workspace), run through the runtime's C API.
//
//   BM_Attention/<fused|unfused>/S:<seq>/D:<64|128>/causal:<0|1>/T:<threads>
//   BM_Attention/<fused|unfused>_<modifier>/S:<seq>/D:64/causal:<0|1>/T:<threads>
//
// the second for each position encoding's example (examples/attention/
// attention_<modifier>.mlir: rope, alibi, t5, shaw, xl, deberta, window,
// padding, softcap (Gemma 2's, as exporters write it), and rope_exported,
// alibi_exported and deberta_exported, the first two and DeBERTa as
// exporters write them), with a GFLOPs rate counter of the useful work of plain
// attention: 4·B·H·S²·D flops per run, half when causal, and 4·B·H·D per
// visible (query, key) pair for the sliding window, whose kernel skips the
// key blocks outside it. (The content modifiers' own products, Transformer-
// XL's second score matmul for one, are not counted: the rate is what the
// modifier costs against plain attention.)
// and peak_GFLOPs / peak_fraction against the FMA peak of the ISA the
// libraries run at (benchmarks/Peak.h), measured at start, and
// `run_peak_MB`: the resident memory one run adds (workspace and kernel
// temporaries: the S x S scores of the unfused build), measured once per
// row in a fresh process (`--rss-probe`).
//
//   BM_Decode/<fused|unfused>/Sq:1/Sk:4096/H:32/D:128/T:<threads>
//
// one decoding step (examples/attention/attention_decode.mlir): a few
// queries against a long KV cache, memory-bound. Its counters are the K/V
// bytes read per second (`kv_GBps`), the time reading K and V once takes at
// this machine's bandwidth for that thread count (`kv_read_ms`, the
// bandwidth measured at start by streaming through 1 GiB), and the ratio of
// the two (`kv_read_ratio`: 1 is the floor).
// Each thread count gets its own copy of each library: every library carries
// its own Halide runtime and thread pool, whose size is best set once.
//
// Before the first timing of a shape, both libraries run once on the same
// inputs and are checked against each other and against a double-precision
// attention loop written here; a mismatch skips the row with an error and
// makes the binary exit non-zero, so no number is printed for a wrong result.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "benchmarks/Peak.h"
#include "compiler/modifiers/ScoreModifier.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

constexpr int64_t kBatch = 1, kHeads = 12;

/// Set when a check or a run fails: main then exits non-zero.
bool gFailed = false;

/// Opened libraries, one per (variant, causal, head dim, threads), kept for
/// the run.
std::map<std::string, attune_model_t *> &models() {
  static std::map<std::string, attune_model_t *> opened;
  return opened;
}

/// One score modifier's example: its name in rows and files, the modifier
/// kind and parameters the example compiles with (for the reference), and
/// whether it is causal. D = 64.
struct ModifierForm {
  const char *name;
  /// The score modifier's kind; "" for RoPE, which rotates q and k instead.
  const char *kind;
  attune::modifiers::ModifierParams params;
  bool causal;
  /// The shapes of the modifier's tables, inputs after q, k, v (N(0, 1)).
  std::vector<std::vector<int64_t>> operands;
  /// A [1, S] key padding mask follows q, k, v: the last quarter of the
  /// keys are padding.
  bool hasPadding = false;
  /// The attention's scale; 0: 1/sqrt(D).
  double scale = 0;
  /// The softcap c of the scaled scores (c tanh(s / c)); 0: none.
  double softcap = 0;
};
const ModifierForm kModifierForms[] = {
    {"rope", "", {}, true, {}},
    {"alibi", "alibi", {}, true, {}},
    {"t5", "t5", {{"num_buckets", 32}, {"max_distance", 128}}, false, {{32, kHeads}},
     false, 1.0},
    // Shaw et al.: K = 16, tables shared by the heads.
    {"shaw", "shaw", {{"max_distance", 16}}, false, {{33, 64}, {33, 64}}},
    // Transformer-XL: u, v and r for every distance up to 4095 (the longest
    // row), causal.
    {"xl", "xl", {{"max_distance", 4095}}, true, {{kHeads, 64}, {kHeads, 64}, {4096, kHeads, 64}}},
    // DeBERTa-v3-base: 256 log buckets up to 512, scale 1/sqrt(3 d).
    {"deberta", "deberta", {{"span", 256}, {"max_position", 512}}, false,
     {{512, kHeads, 64}, {512, kHeads, 64}}, false, 0.07216878364870322},
    {"window", "sliding_window", {{"window", 512}}, true, {}},
    {"padding", "", {}, false, {}, true},
    // rope and alibi as exporters write them (rotate_half from slices,
    // ALiBi from an arange difference): the default build raises them to
    // the same fused kernel, the unfused one runs the graph as written.
    {"rope_exported", "", {}, true, {}},
    {"alibi_exported", "alibi", {}, true, {}},
    // DeBERTa as Hugging Face's DebertaV2 computes it (gathers of relative
    // scores by log-bucketed positions, on heads merged into the batch):
    // raised to the deberta modifier by default. The scale is the graph's,
    // 1 / f32(sqrt(192)).
    {"deberta_exported", "deberta", {{"span", 256}, {"max_position", 512}}, false,
     {{512, kHeads, 64}, {512, kHeads, 64}}, false, 1.0 / double(13.856406f)},
    // Gemma 2's logit softcapping, 50 tanh(s / 50), causal.
    {"softcap", "", {}, true, {}, false, 0, 50.0},
};

/// `row` (D values) rotated at position `n` as LLaMA does (split halves,
/// base 10000, every dimension): the example attention_rope.mlir's RoPE.
void ropeRow(std::vector<double> &row, double n) {
  const int64_t D = row.size(), half = D / 2;
  std::vector<double> in = row;
  for (int64_t i = 0; i < half; ++i) {
    double angle = n * std::pow(10000.0, -2.0 * double(i) / double(D));
    row[i] = in[i] * std::cos(angle) - in[i + half] * std::sin(angle);
    row[i + half] = in[i + half] * std::cos(angle) + in[i] * std::sin(angle);
  }
}
const ModifierForm *findForm(const std::string &name) {
  for (const ModifierForm &form : kModifierForms)
    if (name == form.name)
      return &form;
  return nullptr;
}

/// examples/attention/attention_<form>.mlir: "full", "causal", with a
/// "_d<D>" suffix for head dims other than 64, or the modifier's name.
std::string formName(const std::string &modifier, bool causal, int64_t headDim) {
  if (!modifier.empty())
    return modifier;
  return std::string(causal ? "causal" : "full") +
         (headDim == 64 ? "" : "_d" + std::to_string(headDim));
}

attune_model_t *openModel(const std::string &variant, const std::string &modifier,
                          bool causal, int64_t headDim, int threads) {
  std::string name = "libattention_" + formName(modifier, causal, headDim) + "_" +
                     variant + ".so";
  std::string key = name + "_t" + std::to_string(threads);
  auto it = models().find(key);
  if (it != models().end())
    return it->second;
  fs::path source = fs::path(ATTUNE_BENCHMARK_LIB_DIR) / name;
  // A private copy per thread count, so each has its own Halide thread pool.
  fs::path dir = fs::temp_directory_path() /
                 ("attune-bench-" + std::to_string(::getpid()) + "-t" +
                  std::to_string(threads));
  fs::create_directories(dir);
  fs::path copy = dir / name;
  std::error_code ec;
  fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    std::fprintf(stderr, "attention_benchmark: cannot copy %s: %s\n",
                 source.c_str(), ec.message().c_str());
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

attune_tensor_t makeTensor(std::vector<float> &storage, int64_t seq,
                           int64_t headDim) {
  attune_tensor_t t{};
  t.data = storage.data();
  t.dtype = ATTUNE_DTYPE_F32;
  t.rank = 4;
  t.shape[0] = kBatch, t.shape[1] = kHeads, t.shape[2] = seq,
  t.shape[3] = headDim;
  return t;
}

/// Q, K, V ~ N(0, 1) as [B, H, S, D] (scores q·k/sqrt(D) then have unit
/// variance at every D), the form's N(0, 1) tables, and an output buffer.
struct Problem {
  Problem(int64_t seq, int64_t headDim, const ModifierForm *form = nullptr)
      : seq(seq), headDim(headDim), form(form) {
    size_t n = kBatch * kHeads * seq * headDim;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    q.resize(n), k.resize(n), v.resize(n), o.resize(n);
    for (size_t i = 0; i < n; ++i)
      q[i] = normal(rng), k[i] = normal(rng), v[i] = normal(rng);
    if (form)
      for (const std::vector<int64_t> &shape : form->operands) {
        int64_t count = 1;
        for (int64_t dim : shape)
          count *= dim;
        tables.emplace_back(count);
        for (float &t : tables.back())
          t = normal(rng);
      }
    if (form && form->hasPadding) {
      padding.assign(seq, 1);
      for (int64_t j = seq - seq / 4; j < seq; ++j)
        padding[j] = 0;
    }
  }
  attune_status_t run(attune_model_t *model) {
    attune_tensor_t inputs[8] = {makeTensor(q, seq, headDim),
                                 makeTensor(k, seq, headDim),
                                 makeTensor(v, seq, headDim)};
    int count = 3;
    if (!padding.empty()) {
      attune_tensor_t &t = inputs[count++];
      t.data = padding.data();
      t.dtype = ATTUNE_DTYPE_BOOL;
      t.rank = 2;
      t.shape[0] = 1, t.shape[1] = seq;
    }
    for (size_t n = 0; n < tables.size(); ++n) {
      attune_tensor_t &t = inputs[count++];
      t.data = tables[n].data();
      t.dtype = ATTUNE_DTYPE_F32;
      t.rank = static_cast<int>(form->operands[n].size());
      for (int d = 0; d < t.rank; ++d)
        t.shape[d] = form->operands[n][d];
    }
    attune_tensor_t output = makeTensor(o, seq, headDim);
    return attune_model_run(model, inputs, count, &output, 1);
  }
  int64_t seq, headDim;
  const ModifierForm *form;
  std::vector<float> q, k, v, o;
  std::vector<std::vector<float>> tables;
  std::vector<uint8_t> padding;
};

/// Output row `i` of head `bh` (batch-major) in double precision, straight
/// from the definition: softmax(scale (q·k^T + content) + bias, keys j <= i
/// when causal) V + value term, the modifier's terms its reference semantics
/// (compiler/modifiers) with the form's parameters and tables.
std::vector<double> referenceRow(const Problem &p, int64_t bh, int64_t i,
                                 bool causal) {
  const int64_t S = p.seq, D = p.headDim, base = bh * S * D;
  const int64_t keys = causal ? i + 1 : S;
  const ModifierForm *form = p.form;
  const double scale = form && form->scale != 0 ? form->scale : 1.0 / std::sqrt(double(D));
  const bool rope =
      form && std::string(form->kind).empty() && !form->hasPadding && form->softcap == 0;
  const attune::modifiers::ScoreModifier *modifier =
      form && !rope ? attune::modifiers::lookupModifier(form->kind) : nullptr;
  attune::modifiers::ModifierParams params = form ? form->params
                                                  : attune::modifiers::ModifierParams{};
  std::vector<std::vector<double>> tableData;
  std::vector<attune::modifiers::ReferenceOperand> operands;
  for (const std::vector<float> &table : p.tables)
    tableData.emplace_back(table.begin(), table.end());
  for (size_t n = 0; n < tableData.size(); ++n)
    operands.push_back({tableData[n].data(), form->operands[n]});
  if (modifier) {
    std::vector<std::vector<int64_t>> shapes;
    for (const auto &operand : operands)
      shapes.push_back(operand.shape);
    std::string problem =
        attune::modifiers::checkModifier(*modifier, params, {kHeads, S, S, D, D}, shapes);
    if (!problem.empty()) {
      std::fprintf(stderr, "attention_benchmark: %s\n", problem.c_str());
      std::exit(1);
    }
  }
  const int64_t h = bh % kHeads;
  std::vector<double> score(keys);
  double max = -INFINITY, sum = 0;
  std::vector<double> queryRow(p.q.begin() + base + i * D,
                               p.q.begin() + base + (i + 1) * D);
  if (rope)
    ropeRow(queryRow, double(i));
  for (int64_t j = 0; j < keys; ++j) {
    std::vector<double> keyRow(p.k.begin() + base + j * D,
                               p.k.begin() + base + (j + 1) * D);
    if (rope)
      ropeRow(keyRow, double(j));
    double dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += queryRow[d] * keyRow[d];
    if (modifier)
      dot += attune::modifiers::referenceContent(*modifier, params, operands, h, j - i,
                                                 queryRow.data(), keyRow.data(), D);
    score[j] = dot * scale;
    if (form && form->softcap > 0)
      score[j] = form->softcap * std::tanh(score[j] / form->softcap);
    if (!p.padding.empty() && !p.padding[j])
      score[j] = -INFINITY;
    if (modifier)
      score[j] += modifier->referenceBias(params, operands, kHeads, h, j - i);
    max = std::max(max, score[j]);
  }
  for (double &s : score)
    sum += (s = s == -INFINITY ? 0.0 : std::exp(s - max));
  std::vector<double> row(D, 0.0);
  for (int64_t j = 0; j < keys; ++j) {
    for (int64_t d = 0; d < D; ++d)
      row[d] += score[j] / sum * p.v[base + j * D + d];
    if (modifier)
      attune::modifiers::addReferenceValue(*modifier, params, operands, score[j] / sum,
                                           j - i, row.data(), D);
  }
  return row;
}

/// Tolerances. The kernels use Halide's fast_exp (~2^-18 relative) and f32
/// sums over up to S keys; outputs are weighted means of N(0, 1) values:
/// each library within 1e-4 * (|want| + 1) of the double reference, so within
/// twice that of each other.
constexpr double kRefTol = 1e-4, kPairTol = 2e-4;

/// "" when `got` is within kRefTol of the reference `want`, else a message
/// naming the library and the element.
std::string compareWithReference(const char *variant, double got, double want,
                                 int64_t head, int64_t row, int64_t col) {
  if (std::fabs(got - want) <= kRefTol * (std::fabs(want) + 1))
    return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s differs from the reference at head %lld row %lld col %lld: %.7g vs %.7g",
                variant, (long long)head, (long long)row, (long long)col, got, want);
  return buf;
}

/// Runs the fused and the unfused library once on the same inputs and
/// compares them element by element, and both with referenceRow on a sample
/// of rows of every head (first, last, middle, a few pseudo-random ones: the
/// reference at S=4096 over every row would take minutes). Returns an empty
/// string when all agree, else what differed.
std::string checkShape(const std::string &modifier, int64_t seq, int64_t headDim,
                       bool causal, int threads) {
  char buf[256];
  Problem p(seq, headDim, findForm(modifier));
  std::vector<float> out[2];
  const char *variants[2] = {"fused", "unfused"};
  for (int i = 0; i < 2; ++i) {
    if (p.run(openModel(variants[i], modifier, causal, headDim, threads)) != ATTUNE_OK)
      return std::string(variants[i]) + " failed: " + attune_status_message();
    out[i] = p.o;
  }
  const int64_t D = headDim;
  for (size_t e = 0; e < out[0].size(); ++e) {
    double a = out[0][e], b = out[1][e];
    if (!(std::fabs(a - b) <= kPairTol * (std::fabs(b) + 1))) {
      std::snprintf(buf, sizeof buf,
                    "fused and unfused differ at head %lld row %lld col %lld: "
                    "%.7g vs %.7g",
                    (long long)(e / (seq * D)), (long long)(e / D % seq),
                    (long long)(e % D), a, b);
      return buf;
    }
  }
  std::vector<int64_t> rows = {0, 1, seq / 2, seq - 1};
  for (int64_t r = 1; r <= 4; ++r)
    rows.push_back((r * 7919) % seq);
  for (int64_t bh = 0; bh < kBatch * kHeads; ++bh)
    for (int64_t i : rows) {
      std::vector<double> want = referenceRow(p, bh, i, causal);
      for (int v = 0; v < 2; ++v)
        for (int64_t d = 0; d < D; ++d) {
          if (std::string error = compareWithReference(
                  variants[v], out[v][(bh * seq + i) * D + d], want[d], bh, i, d);
              !error.empty())
            return error;
        }
    }
  return "";
}

/// Runs `problem` on `model` once untimed (the first run allocates the
/// workspace, for unfused attention at S=4096 three 805 MB score tensors,
/// and faults its pages in), then once per benchmark iteration. Returns the
/// timed runs' wall time in seconds, or -1 after a failed run (the row is
/// skipped with the runtime's message).
template <typename ProblemT>
double timeRuns(benchmark::State &state, ProblemT &problem, attune_model_t *model) {
  auto fail = [&] {
    gFailed = true;
    state.SkipWithError(attune_status_message());
    return -1.0;
  };
  if (problem.run(model) != ATTUNE_OK)
    return fail();
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (problem.run(model) != ATTUNE_OK)
      return fail();
    benchmark::DoNotOptimize(problem.o.data());
    benchmark::ClobberMemory();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The resident memory (MB) one run of `variant` adds beyond its inputs and
/// the opened library: `--rss-probe` below, run as a fresh process (in this
/// one, or a fork of it, the heap keeps pages other rows' runs freed, and
/// a run reusing them adds nothing resident). -1 when the probe fails.
double runPeakMegabytes(const std::string &variant, const std::string &modifier,
                        int64_t seq, int64_t headDim, bool causal) {
  static std::map<std::string, double> measured;
  std::string key = variant + ":" + (modifier.empty() ? "-" : modifier) + ":" +
                    std::to_string(seq) + ":" + std::to_string(headDim) + ":" +
                    std::to_string(int(causal));
  if (auto it = measured.find(key); it != measured.end())
    return it->second;
  std::string command = "/proc/" + std::to_string(::getpid()) + "/exe --rss-probe=" + key;
  double megabytes = -1;
  if (FILE *probe = ::popen(command.c_str(), "r")) {
    if (std::fscanf(probe, "%lf", &megabytes) != 1)
      megabytes = -1;
    if (::pclose(probe) != 0)
      megabytes = -1;
  }
  return measured[key] = megabytes;
}

/// `--rss-probe=variant:modifier:seq:headDim:causal`: opens the library,
/// allocates the inputs, runs once on one thread and prints its resident
/// high-water mark after the run minus its resident size before, in MB.
int rssProbe(const std::string &spec) {
  char variant[32] = {}, modifier[32] = {};
  long long seq = 0, headDim = 0;
  int causal = 0;
  if (std::sscanf(spec.c_str(), "%31[^:]:%31[^:]:%lld:%lld:%d", variant, modifier, &seq,
                  &headDim, &causal) != 5)
    return 2;
  std::string form = std::string(modifier) == "-" ? "" : modifier;
  fs::path library = fs::path(ATTUNE_BENCHMARK_LIB_DIR) /
                     ("libattention_" + formName(form, causal, headDim) + "_" + variant + ".so");
  attune_model_t *model = nullptr;
  if (attune_model_open(library.c_str(), &model) != ATTUNE_OK ||
      attune_model_set_num_threads(model, 1) != ATTUNE_OK)
    return 1;
  Problem p(seq, headDim, findForm(form));
  long pages = 0, resident = 0;
  FILE *statm = std::fopen("/proc/self/statm", "r");
  if (!statm || std::fscanf(statm, "%ld %ld", &pages, &resident) != 2)
    return 1;
  std::fclose(statm);
  const double before = double(resident) * double(::sysconf(_SC_PAGESIZE));
  if (p.run(model) != ATTUNE_OK)
    return 1;
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  std::printf("%.3f\n", std::max(0.0, double(usage.ru_maxrss) * 1024.0 - before) / 1e6);
  attune_model_close(model);
  return 0;
}

/// checkShape's verdict, computed once per shape and thread count; the
/// strings live for the run (SkipWithError keeps the pointer in 1.7).
const std::string &verdict(const std::string &modifier, int64_t seq,
                           int64_t headDim, bool causal, int threads) {
  static std::map<std::string, std::string> verdicts;
  std::string key = modifier + "/" + std::to_string(seq) + "/" +
                    std::to_string(headDim) + "/" + std::to_string(causal) + "/" +
                    std::to_string(threads);
  auto it = verdicts.find(key);
  if (it == verdicts.end()) {
    it = verdicts
             .emplace(key, checkShape(modifier, seq, headDim, causal, threads))
             .first;
    if (!it->second.empty())
      std::fprintf(stderr,
                   "attention_benchmark: %s S=%lld D=%lld causal=%d T=%d: %s\n",
                   modifier.empty() ? "plain" : modifier.c_str(), (long long)seq,
                   (long long)headDim, int(causal), threads, it->second.c_str());
  }
  return it->second;
}

void BM_Attention(benchmark::State &state, std::string variant,
                  std::string modifier, int64_t seq, int64_t headDim, bool causal,
                  int threads) {
  const std::string &error = verdict(modifier, seq, headDim, causal, threads);
  if (!error.empty()) {
    gFailed = true;
    state.SkipWithError(error.c_str());
    return;
  }
  attune_model_t *model = openModel(variant, modifier, causal, headDim, threads);
  Problem p(seq, headDim, findForm(modifier));
  const double seconds = timeRuns(state, p, model);
  if (seconds < 0)
    return;
  double flops = 4.0 * kBatch * kHeads * double(seq) * double(seq) * headDim;
  if (causal)
    flops /= 2;
  // A sliding window's useful work is the pairs it leaves visible.
  if (const ModifierForm *form = findForm(modifier);
      form && std::string(form->kind) == "sliding_window") {
    const double window = form->params.at("window");
    double pairs = 0;
    for (int64_t i = 0; i < seq; ++i)
      pairs += std::min(double(i + 1), window);
    flops = 4.0 * kBatch * kHeads * pairs * headDim;
  }
  attune::bench::setFlopCounters(state, flops, threads, seconds);
  state.counters["run_peak_MB"] = runPeakMegabytes(variant, modifier, seq, headDim, causal);
}

//===----------------------------------------------------------------------===//
// Decoding: a few queries against a long KV cache
//===----------------------------------------------------------------------===//

constexpr int64_t kDecodeHeads = 32, kDecodeDim = 128;

/// Bytes per second `threads` threads read by streaming through 1 GiB (each
/// its own half), best of 5: the floor a memory-bound kernel is held to.
double measureReadBandwidth(int threads) {
  static std::map<int, double> measured;
  if (auto it = measured.find(threads); it != measured.end())
    return it->second;
  const size_t words = (size_t(1) << 30) / sizeof(uint64_t);
  std::vector<uint64_t> buffer(words);
  for (size_t i = 0; i < words; ++i)
    buffer[i] = i;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<uint64_t> sums(threads);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const size_t lo = words * t / threads, hi = words * (t + 1) / threads;
        uint64_t sum = 0;
        for (size_t i = lo; i < hi; ++i)
          sum += buffer[i];
        sums[t] = sum;
      });
    for (std::thread &thread : pool)
      thread.join();
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    benchmark::DoNotOptimize(sums.data());
    best = std::max(best, double(words * sizeof(uint64_t)) / seconds.count());
  }
  std::fprintf(stderr, "attention_benchmark: read bandwidth, %d thread(s): %.1f GB/s\n",
               threads, best / 1e9);
  return measured[threads] = best;
}

/// q [1, H, Sq, D], k and v [1, H, Sk, D], N(0, 1).
struct DecodeProblem {
  DecodeProblem(int64_t sq, int64_t sk) : sq(sq), sk(sk) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal;
    q.resize(kDecodeHeads * sq * kDecodeDim);
    k.resize(kDecodeHeads * sk * kDecodeDim);
    v.resize(k.size());
    o.resize(q.size());
    for (float *x : {q.data(), k.data(), v.data()})
      for (size_t i = 0, n = x == q.data() ? q.size() : k.size(); i < n; ++i)
        x[i] = normal(rng);
  }
  static attune_tensor_t tensor(std::vector<float> &storage, int64_t seq) {
    attune_tensor_t t{};
    t.data = storage.data();
    t.dtype = ATTUNE_DTYPE_F32;
    t.rank = 4;
    t.shape[0] = 1, t.shape[1] = kDecodeHeads, t.shape[2] = seq, t.shape[3] = kDecodeDim;
    return t;
  }
  attune_status_t run(attune_model_t *model) {
    attune_tensor_t inputs[3] = {tensor(q, sq), tensor(k, sk), tensor(v, sk)};
    attune_tensor_t output = tensor(o, sq);
    return attune_model_run(model, inputs, 3, &output, 1);
  }
  /// Output row i of head h in double: softmax over the keys j <= i + Sk - Sq.
  std::vector<double> referenceRow(int64_t h, int64_t i) const {
    const int64_t D = kDecodeDim, keys = i + (sk - sq) + 1;
    const float *Q = &q[(h * sq + i) * D], *K = &k[h * sk * D], *V = &v[h * sk * D];
    std::vector<double> s(keys), row(D, 0.0);
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < D; ++d)
        dot += double(Q[d]) * K[j * D + d];
      m = std::max(m, s[j] = dot / std::sqrt(double(D)));
    }
    for (int64_t j = 0; j < keys; ++j)
      sum += (s[j] = std::exp(s[j] - m));
    for (int64_t j = 0; j < keys; ++j)
      for (int64_t d = 0; d < D; ++d)
        row[d] += s[j] / sum * V[j * D + d];
    return row;
  }
  int64_t sq, sk;
  std::vector<float> q, k, v, o;
};

/// Both decode libraries against each other and the reference on every
/// head; "" when they agree.
std::string checkDecode(int64_t sq, int64_t sk, int threads) {
  DecodeProblem p(sq, sk);
  std::vector<float> out[2];
  const char *variants[2] = {"fused", "unfused"};
  for (int v = 0; v < 2; ++v) {
    if (p.run(openModel(variants[v], "decode", false, kDecodeDim, threads)) != ATTUNE_OK)
      return std::string(variants[v]) + " failed: " + attune_status_message();
    out[v] = p.o;
  }
  for (int64_t h = 0; h < kDecodeHeads; ++h)
    for (int64_t i = 0; i < sq; ++i) {
      std::vector<double> want = p.referenceRow(h, i);
      for (int v = 0; v < 2; ++v)
        for (int64_t d = 0; d < kDecodeDim; ++d)
          if (std::string error = compareWithReference(
                  variants[v], out[v][(h * sq + i) * kDecodeDim + d], want[d], h, i, d);
              !error.empty())
            return error;
    }
  return "";
}

void BM_Decode(benchmark::State &state, std::string variant, int64_t sq, int64_t sk,
               int threads) {
  static std::map<std::string, std::string> verdicts;
  std::string key = std::to_string(sq) + "/" + std::to_string(sk) + "/" + std::to_string(threads);
  if (!verdicts.count(key)) {
    verdicts[key] = checkDecode(sq, sk, threads);
    if (!verdicts[key].empty())
      std::fprintf(stderr, "attention_benchmark: decode Sq=%lld Sk=%lld T=%d: %s\n",
                   (long long)sq, (long long)sk, threads, verdicts[key].c_str());
  }
  if (!verdicts[key].empty()) {
    gFailed = true;
    state.SkipWithError(verdicts[key].c_str());
    return;
  }
  attune_model_t *model = openModel(variant, "decode", false, kDecodeDim, threads);
  DecodeProblem p(sq, sk);
  const double seconds = timeRuns(state, p, model);
  if (seconds < 0)
    return;
  const double perRun = seconds / double(state.iterations());
  const double kvBytes = 2.0 * kDecodeHeads * double(sk) * kDecodeDim * sizeof(float);
  const double readSeconds = kvBytes / measureReadBandwidth(threads);
  state.counters["kv_GBps"] = kvBytes / perRun / 1e9;
  state.counters["kv_read_ms"] = readSeconds * 1e3;
  state.counters["kv_read_ratio"] = perRun / readSeconds;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]).rfind("--rss-probe=", 0) == 0)
    return rssProbe(std::string(argv[1]).substr(std::strlen("--rss-probe=")));
  for (int threads : {1, 2})
    for (bool causal : {false, true})
      for (int64_t headDim : {64, 128})
        for (int64_t seq : {128, 512, 1024, 2048, 4096})
          for (const char *variant : {"fused", "unfused"}) {
            std::string name = std::string("BM_Attention/") + variant +
                               "/S:" + std::to_string(seq) +
                               "/D:" + std::to_string(headDim) +
                               "/causal:" + (causal ? "1" : "0") +
                               "/T:" + std::to_string(threads);
            benchmark::RegisterBenchmark(name.c_str(), BM_Attention,
                                         std::string(variant), std::string(),
                                         seq, headDim, causal, threads)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
          }
  for (int threads : {1, 2})
    for (const ModifierForm &form : kModifierForms)
      for (int64_t seq : {512, 2048, 4096})
        for (const char *variant : {"fused", "unfused"}) {
          std::string name = std::string("BM_Attention/") + variant + "_" +
                             form.name + "/S:" + std::to_string(seq) +
                             "/D:64/causal:" + (form.causal ? "1" : "0") +
                             "/T:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), BM_Attention,
                                       std::string(variant), std::string(form.name),
                                       seq, int64_t(64), form.causal, threads)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
  for (int threads : {1, 2})
    for (const char *variant : {"fused", "unfused"}) {
      std::string name = std::string("BM_Decode/") + variant +
                         "/Sq:1/Sk:4096/H:32/D:128/T:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_Decode, std::string(variant),
                                   int64_t(1), int64_t(4096), threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  attune::bench::peak(); // measured before any library spins up threads
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto &[key, model] : models())
    attune_model_close(model);
  if (gFailed) {
    std::fprintf(
        stderr,
        "attention_benchmark: FAILED: a library gave a wrong result or an "
        "error (see above); its rows carry no timing\n");
    return 1;
  }
  return 0;
}
