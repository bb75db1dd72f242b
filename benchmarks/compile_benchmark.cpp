//===- compile_benchmark.cpp - what attune-compile itself costs -----------===//
//
// Times attune-compile on whole models, each compile a process of its own:
//
//   BM_Compile/<model>/<cold|warm>/j:<N>
//
// cold: into an empty kernel cache (every kernel compiled, on N threads);
// warm: the cache already holds every kernel (what an edit of the weights or
// the host code costs). Counters: peak_RSS_MB (the compiler's peak resident
// memory, with the largest of the linker and assembler children it waited
// for: LLVM's ProcessStatistics), library_MB (the .so), archive_MB (the .a).
// Each row's time is the compile's wall time (manual time, seconds).
//
// Models: `--model=NAME=PATH` (repeatable; a .mlir, .onnx or checkpoint
// folder), else the GPT-2 block (examples/gpt2-block/block.mlir) and, when
// benchmarks/compare has written it, the 12-layer GPT-2 small checkpoint in
// build/compare-models/gpt2 (`benchmarks/compare --models gpt2 --check-only`
// makes it). Identical layers share kernels, so 12 layers should cost far
// less than 12 blocks (issue: at most 2x a block's cold time).
//
//   build/bin/compile_benchmark --benchmark_repetitions=3 \
//       --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include <benchmark/benchmark.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <optional>
#include <utility>
#include <vector>

namespace {

struct ModelSource {
  std::string name, path;
};

/// A fresh directory under the system temp dir, removed with its contents.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    if (!llvm::sys::fs::createUniqueDirectory("attune-compile-bench", p))
      path = p.str().str();
  }
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

double megabytes(const std::string &file) {
  uint64_t size = 0;
  return llvm::sys::fs::file_size(file, size) ? 0.0 : size / 1048576.0;
}

/// One attune-compile run: its wall seconds and peak RSS in KB, or an error.
struct CompileRun {
  double seconds = 0;
  uint64_t peakKB = 0;
  std::string error;
};

CompileRun compile(const std::string &model, const std::string &cache,
                   const std::string &output, unsigned jobs) {
  std::vector<std::string> args = {ATTUNE_COMPILE_PATH, model,       "-o", output,
                                   "--kernel-cache=" + cache, "-j", std::to_string(jobs)};
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::sys::ProcessStatistics> stats;
  std::string message;
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(""),
                                                std::nullopt};
  CompileRun run;
  int rc = llvm::sys::ExecuteAndWait(ATTUNE_COMPILE_PATH, argv, std::nullopt, redirects, 0,
                                     0, &message, nullptr, &stats);
  if (rc != 0)
    run.error = "attune-compile " + model + " failed (exit " + std::to_string(rc) + ") " +
                message;
  if (stats) {
    run.seconds = std::chrono::duration<double>(stats->TotalTime).count();
    run.peakKB = stats->PeakMemory;
  }
  return run;
}

void BM_Compile(benchmark::State &state, ModelSource model, bool warm, unsigned jobs) {
  static std::vector<std::string> errors; // SkipWithError keeps the pointer
  TempDir cache, out;
  if (cache.path.empty() || out.path.empty()) {
    state.SkipWithError("cannot create a temporary directory");
    return;
  }
  const std::string library = out.path + "/lib" + model.name + ".so";
  if (warm) {
    CompileRun prime = compile(model.path, cache.path, library, jobs);
    if (!prime.error.empty()) {
      errors.push_back(prime.error);
      state.SkipWithError(errors.back().c_str());
      return;
    }
  }
  double peakMB = 0;
  for (auto _ : state) {
    TempDir fresh;
    const std::string &dir = warm ? cache.path : fresh.path;
    auto start = std::chrono::steady_clock::now();
    CompileRun run = compile(model.path, dir, library, jobs);
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
    if (!run.error.empty()) {
      errors.push_back(run.error);
      state.SkipWithError(errors.back().c_str());
      return;
    }
    state.SetIterationTime(wall.count());
    peakMB = std::max(peakMB, run.peakKB / 1024.0);
  }
  state.counters["peak_RSS_MB"] = peakMB;
  state.counters["library_MB"] = megabytes(library);
  state.counters["archive_MB"] =
      megabytes(library.substr(0, library.size() - 3) + ".a");
}

} // namespace

int main(int argc, char **argv) {
  std::vector<ModelSource> models;
  std::vector<char *> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const char *prefix = "--model=";
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) != 0) {
      rest.push_back(argv[i]);
      continue;
    }
    std::string spec = argv[i] + std::strlen(prefix);
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::fprintf(stderr, "compile_benchmark: expected --model=NAME=PATH, got '%s'\n",
                   argv[i]);
      return 1;
    }
    models.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
  }
  if (models.empty()) {
    models.push_back({"gpt2_block", ATTUNE_SOURCE_DIR "/examples/gpt2-block/block.mlir"});
    const std::string gpt2 = ATTUNE_BUILD_DIR "/compare-models/gpt2";
    if (llvm::sys::fs::exists(gpt2 + "/config.json"))
      models.push_back({"gpt2_12_layers", gpt2});
    else
      std::fprintf(stderr,
                   "compile_benchmark: no %s (benchmarks/compare --models gpt2 "
                   "--check-only writes it): the 12-layer rows are left out\n",
                   gpt2.c_str());
  }
  for (const ModelSource &m : models)
    if (!llvm::sys::fs::exists(m.path)) {
      std::fprintf(stderr, "compile_benchmark: model '%s': no such file or folder '%s'\n",
                   m.name.c_str(), m.path.c_str());
      return 1;
    }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<unsigned> jobs = {1u};
  if (cores > 1)
    jobs.push_back(cores);
  for (const ModelSource &m : models)
    for (bool warm : {false, true})
      for (unsigned j : jobs) {
        if (warm && j > 1)
          continue; // nothing to compile in parallel
        std::string name = "BM_Compile/" + m.name + (warm ? "/warm" : "/cold") +
                           "/j:" + std::to_string(j);
        benchmark::RegisterBenchmark(name.c_str(), BM_Compile, m, warm, j)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kSecond);
      }
  int restc = static_cast<int>(rest.size());
  benchmark::Initialize(&restc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(restc, rest.data()))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
