//===- attune-tune.cpp - schedule parameters by measurement ---------------===//
//
//   attune-tune -o compiler/tuning/default.json [--isa=avx2,avx512]
//               [--budget-seconds=600] [--kernels=attention]
//
// For each kernel of a built-in list (the GEMM and attention kernels a
// Transformer spends its time in) and each ISA level, compiles every
// candidate of the builder's candidate grid for that level ahead of time, as
// a library's variant for that level is compiled (AotKernel: the JIT can
// give the same schedule different code), checks that it computes what the
// formula schedule computes on a small input with ragged sizes, times it on
// one representative shape on one thread (fastest of a few runs), re-times the formula and the fastest few side by side in
// rounds, and records the winner in the tuning database. One line per
// kernel and level says the winner and its GFLOP/s against the formula's.
//
// Timing runs on one thread: the parameters chosen here are per-core tiles,
// and one thread measures them without the noise of a shared pool.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/AotKernel.h"
#include "compiler/codegen/halide/Kernels.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "compiler/tuning/TuningDatabase.h"

#include "attune/runtime.h"

#include "Halide.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace attune::codegen;
namespace cl = llvm::cl;
namespace cpu = attune::targets::cpu;

static cl::OptionCategory tuneCategory("attune-tune options");
static cl::opt<std::string> outputFile("o", cl::Required,
                                       cl::desc("Tuning database to write"),
                                       cl::value_desc("FILE"),
                                       cl::cat(tuneCategory));
static cl::opt<std::string>
    isaList("isa",
            cl::desc("ISA levels to tune, comma-separated (default: every "
                     "level from avx2 up that this machine can run, capped "
                     "by ATTUNE_CPU)"),
            cl::value_desc("avx2,avx512,..."), cl::cat(tuneCategory));
static cl::opt<double>
    budgetSeconds("budget-seconds", cl::init(300),
                  cl::desc("Stop timing candidates after about this long "
                           "(shared evenly between kernels and levels; the "
                           "formula is always timed)"),
                  cl::cat(tuneCategory));
static cl::opt<std::string>
    kernelFilter("kernels",
                 cl::desc("Tune only kernels whose tuning key contains this"),
                 cl::value_desc("TEXT"), cl::cat(tuneCategory));
static cl::opt<unsigned> numRuns("runs", cl::init(5),
                                 cl::desc("Timed runs per candidate (the fastest counts)"),
                                 cl::cat(tuneCategory));
static cl::opt<unsigned>
    numFinalists("finalists", cl::init(5),
                 cl::desc("Candidates (the formula among them) re-timed "
                          "side by side at the end"),
                 cl::cat(tuneCategory));
static cl::opt<unsigned>
    numRounds("rounds", cl::init(5),
              cl::desc("Rounds of the side-by-side re-timing"),
              cl::cat(tuneCategory));
static cl::opt<bool>
    update("update",
           cl::desc("Start from the database already at -o and replace only "
                    "the entries tuned now (e.g. one ISA or --kernels)"),
           cl::cat(tuneCategory));
static cl::opt<double>
    minGain("min-gain", cl::init(0.02),
            cl::desc("Keep the formula unless a candidate is faster by more "
                     "than this fraction, so noise does not pick winners"),
            cl::cat(tuneCategory));

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "attune-tune: error: " << message << "\n";
  return 1;
}

/// One kernel to tune: its spec, a small ragged problem for the correctness
/// check, the timed problem, and the flops of the timed problem.
struct Problem {
  KernelSpec spec;
  std::string shapeName;
  /// Input shapes in kernelSignature order, then the output, innermost
  /// dimension first (Halide order).
  std::vector<std::vector<int>> checkShapes, timeShapes;
  double flops;
};

KernelSpec linearSpec(bool bias) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = bias;
  return spec;
}

KernelSpec attentionSpec(int64_t d, bool causal) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.headDim = d;
  spec.causal = causal;
  spec.scale = 1.0 / std::sqrt(double(d));
  return spec;
}

/// The built-in list: Linear (GPT-2's 768 -> 3072 at 512 tokens), the QK^T
/// matmul of unfused attention, and fused attention at head dims 32, 64
/// and 128.
std::vector<Problem> builtinProblems() {
  std::vector<Problem> problems;
  const int M = 512, K = 768, N = 3072;
  for (bool bias : {true, false}) {
    Problem p{linearSpec(bias), "M=512 K=768 N=3072", {}, {}, 2.0 * M * K * N};
    p.checkShapes = {{70, 37}, {93, 70}};
    p.timeShapes = {{K, M}, {N, K}};
    if (bias) {
      p.checkShapes.push_back({93});
      p.timeShapes.push_back({N});
    }
    p.checkShapes.push_back({93, 37});
    p.timeShapes.push_back({N, M});
    problems.push_back(p);
  }
  {
    // Scores = Q K^T per head: a[Bt, S, D], b[Bt, S, D] (transposed).
    const int Bt = 12, S = 1024, D = 64;
    KernelSpec spec;
    spec.kind = KernelKind::Matmul;
    spec.transposeB = true;
    Problem p{spec, "Bt=12 M=N=1024 K=64", {}, {}, 2.0 * Bt * S * S * D};
    p.checkShapes = {{64, 37, 2}, {64, 45, 2}, {45, 37, 2}};
    p.timeShapes = {{D, S, Bt}, {D, S, Bt}, {S, S, Bt}};
    problems.push_back(p);
  }
  // Head dim 32 is the small encoders' (all-MiniLM-L6-v2, BERT-small: 512
  // positions at most), timed at their longest sequence.
  const int B = 1, H = 12;
  for (auto [d, S] : {std::pair<int64_t, int>{32, 512}, {64, 1024}, {128, 1024}})
    for (bool causal : {false, true}) {
      int D = static_cast<int>(d);
      // Useful work only: a causal kernel does half of it.
      double flops = 4.0 * B * H * S * S * D * (causal ? 0.5 : 1.0);
      Problem p{attentionSpec(d, causal),
                "B=1 H=12 S=" + std::to_string(S) + " D=" + std::to_string(d),
                {}, {}, flops};
      std::vector<int> small = {D, 77, 2, 1}, big = {D, S, H, B};
      p.checkShapes = {small, small, small, small};
      p.timeShapes = {big, big, big, big};
      problems.push_back(p);
    }
  return problems;
}

Halide::Buffer<float> randomBuffer(const std::vector<int> &shape, unsigned seed) {
  Halide::Buffer<float> buffer(shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  buffer.for_each_value([&](float &v) { v = dist(gen); });
  return buffer;
}

/// A candidate compiled for one level, timed on one thread. Throws
/// Halide::Error when the builder rejects its parameters,
/// std::runtime_error when it cannot be compiled, linked or run.
struct Compiled {
  Compiled(const KernelSpec &spec, const Halide::Target &target)
      : kernel(spec, target) {}
  void run(const std::vector<Halide::Buffer<float>> &buffers) {
    std::vector<Halide::Buffer<>> inputs(buffers.begin(), buffers.end() - 1);
    kernel.run(inputs, buffers.back(), /*singleThread=*/true);
  }
  AotKernel kernel;
};

std::vector<Halide::Buffer<float>> makeBuffers(const std::vector<std::vector<int>> &shapes) {
  std::vector<Halide::Buffer<float>> buffers;
  for (size_t i = 0; i < shapes.size(); ++i)
    buffers.push_back(randomBuffer(shapes[i], 17 + i));
  return buffers;
}

/// Largest |a - b| over the output, relative to max(1, max |a|).
double relativeError(const Halide::Buffer<float> &a, const Halide::Buffer<float> &b) {
  double maxDiff = 0, maxRef = 1;
  a.for_each_element([&](const int *pos) {
    double x = a(pos), y = b(pos);
    maxRef = std::max(maxRef, std::fabs(x));
    maxDiff = std::max(maxDiff, std::isfinite(y) ? std::fabs(x - y) : INFINITY);
  });
  return maxDiff / maxRef;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double fastest(const std::vector<double> &times) {
  return *std::min_element(times.begin(), times.end());
}

/// Wall times of `runs` runs after one warm-up; stops after the first run
/// when that is already `cutoff` seconds or more, so clearly slower
/// candidates cost one run.
std::vector<double> timeRuns(Compiled &kernel,
                             const std::vector<Halide::Buffer<float>> &buffers,
                             unsigned runs, double cutoff) {
  kernel.run(buffers);
  std::vector<double> times;
  for (unsigned r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    kernel.run(buffers);
    times.push_back(secondsSince(start));
    if (r == 0 && times[0] >= cutoff)
      break;
  }
  return times;
}

/// The order candidates are tried in: the formula first, then spread over
/// the grid (golden-ratio steps), so a budget that runs out has still seen
/// every region of it rather than only the first rows.
std::vector<size_t> spreadOrder(size_t n) {
  std::vector<size_t> order;
  std::vector<char> taken(n, 0);
  if (n == 0)
    return order;
  order.push_back(0);
  taken[0] = 1;
  const double phi = 0.6180339887498949;
  for (size_t i = 1; order.size() < n; ++i) {
    size_t j = 1 + static_cast<size_t>(std::fmod(i * phi, 1.0) * (n - 1));
    while (taken[j])
      j = j + 1 < n ? j + 1 : 1;
    taken[j] = 1;
    order.push_back(j);
  }
  return order;
}

std::string formatParams(const ScheduleParams &params) {
  std::string text;
  for (const auto &[name, value] : params)
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return "{" + text + "}";
}

std::string cpuModelName() {
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!buffer)
    return "unknown";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.starts_with("model name"))
      return line.split(':').second.trim().str();
  return "unknown";
}

/// The levels to tune: --isa, else every level from AVX2 up to what this
/// process may run (the host's, capped by ATTUNE_CPU like every other JIT
/// user; an invalid ATTUNE_CPU is an error here too).
llvm::Expected<std::vector<attune_isa_t>> tunedIsas() {
  std::vector<attune_isa_t> isas;
  attune_isa_t host;
  if (attune_cpu_isa(&host) != ATTUNE_OK)
    return llvm::createStringError(attune_status_message());
  if (isaList.empty()) {
    for (attune_isa_t isa : cpu::kAllIsas)
      if (isa >= ATTUNE_ISA_AVX2 && isa <= host)
        isas.push_back(isa);
    return isas;
  }
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(isaList).split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    attune_isa_t isa;
    if (attune_isa_from_name(name.str().c_str(), &isa) != ATTUNE_OK)
      return llvm::createStringError("unknown --isa level '" + name +
                                     "', expected baseline, avx2, avx512, "
                                     "avx512_zen4 or avx512_spr");
    if (isa > host)
      return llvm::createStringError(
          "--isa level '" + name + "' cannot run on this machine (it runs " +
          attune_isa_name(host) + " at most)");
    isas.push_back(isa);
  }
  return isas;
}

std::vector<ScheduleParams> candidatesFor(const KernelSpec &spec,
                                          const Halide::Target &target) {
  if (spec.kind == KernelKind::Attention)
    return detail::attentionScheduleCandidates(spec, target);
  return detail::gemmScheduleCandidates(target);
}

/// Tunes one kernel at one level within `budget` seconds (the formula is
/// timed whatever the budget). Returns false, with `error` set, when even
/// the formula schedule cannot be built or run.
bool tuneOne(const Problem &problem, attune_isa_t isa, double budget,
             attune::tuning::TuningDatabase &db, std::string &error) {
  const auto start = std::chrono::steady_clock::now();
  const char *isaName = attune_isa_name(isa);
  const Halide::Target target = cpu::halideTarget(isa);
  const std::string key = attune::tuning::tuningKey(problem.spec);
  std::vector<ScheduleParams> candidates = candidatesFor(problem.spec, target);

  std::vector<Halide::Buffer<float>> check = makeBuffers(problem.checkShapes);
  std::vector<Halide::Buffer<float>> timed = makeBuffers(problem.timeShapes);
  Halide::Buffer<float> reference = check.back().copy();

  // Scan: every candidate the budget allows, timed once each.
  struct Timed {
    size_t index;
    double seconds;
    std::unique_ptr<Compiled> kernel;
  };
  std::vector<Timed> scanned;
  double bestScan = INFINITY;
  unsigned rejected = 0, wrong = 0;
  for (size_t index : spreadOrder(candidates.size())) {
    const bool isFormula = index == 0;
    if (!isFormula && secondsSince(start) > budget)
      break;
    KernelSpec spec = problem.spec;
    // The formula runs without parameters, as a kernel with no entry would.
    if (!isFormula)
      spec.schedules[isaName] = candidates[index];
    try {
      auto kernel = std::make_unique<Compiled>(spec, target);
      kernel->run(check);
      if (isFormula) {
        reference = check.back().copy();
      } else if (double err = relativeError(reference, check.back()); err > 1e-4) {
        llvm::errs() << "attune-tune: " << isaName << " " << key << ": candidate "
                     << formatParams(candidates[index])
                     << " differs from the formula by " << err << ", skipped\n";
        ++wrong;
        continue;
      }
      double seconds = fastest(timeRuns(*kernel, timed, numRuns, 1.5 * bestScan));
      bestScan = std::min(bestScan, seconds);
      scanned.push_back({index, seconds, std::move(kernel)});
    } catch (const Halide::Error &e) {
      if (isFormula) {
        error = std::string("the formula schedule of ") + key + " failed: " + e.what();
        return false;
      }
      ++rejected;
    } catch (const std::exception &e) {
      // Not a schedule the builder refused: compiling, linking or running
      // the object failed, and would for every candidate.
      error = std::string(isaName) + " " + key + ": " + e.what();
      return false;
    }
  }

  // Final: the formula and the fastest of the scan, re-timed in turns, so
  // load that came and went during the scan (a shared machine) does not
  // decide the winner. Each is scored by the fastest of all its runs here:
  // on a shared virtual machine noise only ever slows a run down, and
  // medians of the same two schedules swapped order from one run of the
  // tool to the next (AVX2 attention, Zen 5: 73-95 GFLOP/s for one).
  std::vector<Timed *> finalists = {&scanned.front()};
  {
    std::vector<Timed *> byTime;
    for (size_t i = 1; i < scanned.size(); ++i)
      byTime.push_back(&scanned[i]);
    std::stable_sort(byTime.begin(), byTime.end(),
                     [](Timed *a, Timed *b) { return a->seconds < b->seconds; });
    for (size_t i = 0; i < byTime.size() && finalists.size() < std::max(1u, numFinalists.getValue()); ++i)
      finalists.push_back(byTime[i]);
  }
  std::vector<std::vector<double>> finalTimes(finalists.size());
  for (unsigned round = 0; round < std::max(1u, numRounds.getValue()); ++round)
    for (size_t f = 0; f < finalists.size(); ++f) {
      std::vector<double> times =
          timeRuns(*finalists[f]->kernel, timed, numRuns, INFINITY);
      finalTimes[f].insert(finalTimes[f].end(), times.begin(), times.end());
    }
  const double formulaSeconds = fastest(finalTimes[0]);
  size_t winner = 0;
  for (size_t f = 1; f < finalists.size(); ++f)
    if (fastest(finalTimes[f]) < fastest(finalTimes[winner]))
      winner = f;
  // Ties within noise go to the formula: a winner must be clearly faster,
  // or a re-run on the same machine would flip between equals.
  if (fastest(finalTimes[winner]) * (1 + minGain) > formulaSeconds)
    winner = 0;
  const double bestSeconds = fastest(finalTimes[winner]);
  const ScheduleParams best = candidates[finalists[winner]->index];
  const unsigned tried = static_cast<unsigned>(scanned.size());
  const double gflops = problem.flops / bestSeconds * 1e-9;
  const double formulaGflops = problem.flops / formulaSeconds * 1e-9;
  llvm::outs() << llvm::format("%-7s %-26s %-70s %7.1f GFLOP/s, formula %7.1f "
                               "(%.2fx); %u/%zu timed, %u rejected, %u wrong, "
                               "%.0f s\n",
                               isaName, key.c_str(), formatParams(best).c_str(),
                               gflops, formulaGflops, gflops / formulaGflops,
                               tried, candidates.size(), rejected, wrong,
                               secondsSince(start));
  llvm::outs().flush();

  attune::tuning::TuningEntry entry;
  entry.isa = isaName;
  entry.kernel = key;
  entry.params = best;
  entry.measured = llvm::json::Object{
      {"shape", problem.shapeName},
      {"threads", 1},
      {"gflops", std::round(gflops * 10) / 10},
      {"formula_gflops", std::round(formulaGflops * 10) / 10},
      {"candidates", static_cast<int64_t>(candidates.size())},
      {"timed", static_cast<int64_t>(tried)},
      {"machine", cpuModelName()},
  };
  // An attention key's entry can hold the parameters of two kernels: the
  // Halide pipeline's and the f32 extern stage's (flash_key_block), since
  // which of them runs depends on the attention (an additive mask or RoPE
  // keeps the pipeline). The entry this one replaces keeps the other
  // kernel's, and what was measured for them.
  if (const attune::tuning::TuningEntry *previous = db.lookupKey(isaName, key)) {
    llvm::json::Array kept;
    for (const auto &[name, value] : previous->params)
      if (entry.params.insert({name, value}).second)
        kept.push_back(name);
    if (!kept.empty()) {
      llvm::json::Object keptMeasured(previous->measured);
      keptMeasured.erase("kept_params");
      keptMeasured.erase("kept_measured");
      entry.measured["kept_params"] = std::move(kept);
      if (!keptMeasured.empty())
        entry.measured["kept_measured"] = std::move(keptMeasured);
    }
  }
  db.insert(std::move(entry));
  return true;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(tuneCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attune-tune: choose kernel schedule parameters by measurement\n");
  if (numRuns == 0)
    return fail("--runs must be at least 1");
  auto isas = tunedIsas();
  if (!isas)
    return fail(llvm::toString(isas.takeError()));
  if (isas->empty())
    return fail("this machine runs no level from avx2 up; name one with --isa");

  std::vector<Problem> problems;
  for (Problem &problem : builtinProblems())
    if (kernelFilter.empty() ||
        llvm::StringRef(attune::tuning::tuningKey(problem.spec)).contains(kernelFilter))
      problems.push_back(problem);
  if (problems.empty())
    return fail("no kernel's tuning key contains '" + kernelFilter + "'");

  attune::tuning::TuningDatabase db;
  if (update) {
    auto existing = attune::tuning::TuningDatabase::load(outputFile);
    if (!existing)
      return fail("--update: " + llvm::toString(existing.takeError()));
    db = std::move(*existing);
  }
  const auto start = std::chrono::steady_clock::now();
  // Only the levels a library builds each kernel for (avx512_zen4: kernels
  // with bf16 products).
  size_t remaining = 0;
  for (attune_isa_t isa : *isas)
    for (const Problem &problem : problems)
      remaining += cpu::buildsVariant(problem.spec, isa);
  for (attune_isa_t isa : *isas)
    for (const Problem &problem : problems) {
      if (!cpu::buildsVariant(problem.spec, isa))
        continue;
      // What earlier kernels left unused goes to the later ones.
      double budget = std::max(0.0, budgetSeconds - secondsSince(start)) / remaining--;
      std::string error;
      if (!tuneOne(problem, isa, budget, db, error))
        return fail(error);
    }
  if (llvm::Error error = db.save(outputFile))
    return fail(llvm::toString(std::move(error)));
  llvm::outs() << "attune-tune: wrote " << outputFile << " ("
               << db.entries().size() << " entries) in "
               << llvm::format("%.0f", secondsSince(start)) << " s\n";
  return 0;
}
