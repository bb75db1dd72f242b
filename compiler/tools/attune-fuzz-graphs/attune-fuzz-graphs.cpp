//===- attune-fuzz-graphs.cpp - differential fuzzer of attention fusion ---===//
//
//   attune-fuzz-graphs --seed=1 --count=20
//   attune-fuzz-graphs --seed=7 --time=3600 --save-failures=found/
//   attune-fuzz-graphs --replay found/7-12.mlir
//
// Generates small random tfm programs with attention written out as
// exporters write it (GraphGen.h), compiles each fused and unfused, runs both
// libraries on the same random inputs and compares them with the reference
// evaluator (GraphCheck.h). Each graph runs in a forked child with a time
// limit. A failing program is shrunk (ops removed one at a time while the
// failure persists) and, with --save-failures, written as DIR/<seed>-<index>
// .mlir with a header saying what failed. The last line is always
//
//   graphs N, compiled N, fused sites K, not fused M, mismatches X, crashes Y
//
// where "crashes" counts every failure that is not a wrong number (a signal,
// a hang, a compile or runtime error on a valid program). The exit status is
// 1 if X or Y is not 0.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/attune-fuzz-graphs/GraphCheck.h"
#include "compiler/tools/attune-fuzz-graphs/GraphGen.h"
#include "compiler/targets/cpu/CpuBackend.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace llvm;
using namespace attune::fuzzgraphs;

static cl::OptionCategory fuzzCategory("attune-fuzz-graphs options");

static cl::opt<uint64_t> seed("seed", cl::init(1), cl::desc("Run seed"),
                              cl::cat(fuzzCategory));
static cl::opt<uint64_t> numGraphs("count", cl::init(0),
                               cl::desc("Graphs to generate (0: until --time runs out)"),
                               cl::cat(fuzzCategory));
static cl::opt<uint64_t> firstIndex(
    "first", cl::init(0),
    cl::desc("Index of the first graph (so --first=12 --count=1 redoes graph 12 of a run)"),
    cl::cat(fuzzCategory));
static cl::opt<double> timeLimit("time", cl::init(0),
                                 cl::desc("Stop starting graphs after this many seconds "
                                          "(0: no limit)"),
                                 cl::value_desc("SECONDS"), cl::cat(fuzzCategory));
static cl::opt<std::string>
    saveFailures("save-failures",
                 cl::desc("Write each failing program, shrunk, to DIR/<seed>-<index>.mlir"),
                 cl::value_desc("DIR"), cl::cat(fuzzCategory));
static cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("Kernel cache shared by every compile (default: $ATTUNE_KERNEL_CACHE, "
             "else ~/.cache/attune-fuzz-graphs)"),
    cl::value_desc("DIR"), cl::cat(fuzzCategory));
static cl::opt<double> graphTimeout("graph-timeout", cl::init(300),
                                    cl::desc("Seconds one graph may take (compiles, "
                                             "runs, reference) before it is a hang"),
                                    cl::cat(fuzzCategory));
// Plain string, checked below: a bad value gets the tool's own error line.
static cl::opt<std::string> variants(
    "variants", cl::init("all"),
    cl::desc("CPU variants each library is built with: all (attune-compile's "
             "default) or host (only the one this process runs, per "
             "attune_cpu_isa(), so ATTUNE_CPU picks it, plus baseline): a "
             "cold graph compiles about half as much, and the variants never "
             "run here are not compiled"),
    cl::value_desc("all|host"), cl::cat(fuzzCategory));
static cl::opt<unsigned> jobs("j", cl::Prefix, cl::init(2),
                              cl::desc("Threads compiling kernels"), cl::cat(fuzzCategory));
static cl::opt<int> shrinkAttempts("shrink-attempts", cl::init(40),
                                   cl::desc("Candidates tried when shrinking one failure "
                                            "(0: no shrinking)"),
                                   cl::cat(fuzzCategory));
static cl::opt<bool> selfTest(
    "self-test",
    cl::desc("Perturb the fused library's first output before comparing: every graph "
             "must then be reported as a mismatch (checks that the fuzzer can fail)"),
    cl::cat(fuzzCategory));
static cl::opt<bool> printPrograms("print-programs",
                                   cl::desc("Print each program before checking it"),
                                   cl::cat(fuzzCategory));
static cl::list<std::string> replay(
    "replay", cl::desc("Check these saved programs instead of generating (their "
                       "fuzz-dims header gives the dynamic sizes)"),
    cl::value_desc("FILE.mlir"), cl::cat(fuzzCategory));

namespace {

std::string defaultCache() {
  if (const char *env = std::getenv("ATTUNE_KERNEL_CACHE"); env && *env)
    return env;
  SmallString<256> home;
  if (!sys::path::home_directory(home))
    return "";
  sys::path::append(home, ".cache", "attune-fuzz-graphs");
  return home.str().str();
}

bool isCrash(Outcome o) {
  return o == Outcome::CompileError || o == Outcome::RuntimeError ||
         o == Outcome::ReferenceError || o == Outcome::Crash || o == Outcome::Timeout;
}

} // namespace

int main(int argc, char **argv) {
  // The driver applies MLIR's pass manager, context and printer options as
  // attune-compile does; they must exist (at their defaults) to be applied.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(fuzzCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "attune-fuzz-graphs: differential fuzzing of attention fusion\n");
  if (numGraphs == 0 && timeLimit <= 0 && replay.empty()) {
    errs() << "attune-fuzz-graphs: error: give --count, --time or --replay\n";
    return 1;
  }

  SmallString<256> workRoot;
  SmallString<256> tempPrefix;
  sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tempPrefix);
  sys::path::append(tempPrefix, "attune-fuzz-graphs");
  if (std::error_code ec = sys::fs::createUniqueDirectory(tempPrefix, workRoot)) {
    errs() << "attune-fuzz-graphs: error: cannot create a scratch directory: " << ec.message()
           << "\n";
    return 1;
  }
  if (!saveFailures.empty())
    if (std::error_code ec = sys::fs::create_directories(saveFailures)) {
      errs() << "attune-fuzz-graphs: error: --save-failures: cannot create '" << saveFailures
             << "': " << ec.message() << "\n";
      return 1;
    }

  CheckOptions options;
  options.kernelCacheDir = kernelCache.empty() ? defaultCache() : kernelCache.getValue();
  options.jobs = jobs;
  if (variants == "host") {
    std::string error;
    options.cpuFeatureSets = attune::targets::cpu::hostFeatureSets(error);
    if (!error.empty()) {
      errs() << "attune-fuzz-graphs: error: --variants=host: " << error << "\n";
      return 1;
    }
  } else if (variants != "all") {
    errs() << "attune-fuzz-graphs: error: --variants='" << variants
           << "', expected all or host\n";
    return 1;
  }
  options.perturbFused = selfTest;
  options.timeoutSeconds = graphTimeout;
  outs() << "attune-fuzz-graphs: seed " << seed << ", kernel cache '" << options.kernelCacheDir
         << "', variants "
         << (options.cpuFeatureSets.empty() ? std::string("all")
                                            : join(options.cpuFeatureSets, ",") + ",baseline")
         << ", tolerance |got - ref| <= "
         << format("%g + %g|ref|\n", options.atol, options.rtol);
  outs().flush();

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t graphs = 0, compiled = 0, fusedSites = 0, notFused = 0, mismatches = 0, crashes = 0;
  int64_t invalid = 0, missed = 0, unexpected = 0;

  const uint64_t first = replay.empty() ? firstIndex.getValue() : 0;
  for (uint64_t index = first;; ++index) {
    if (!replay.empty() ? index >= replay.size()
                        : (numGraphs && index - first >= numGraphs) ||
                              (timeLimit > 0 && elapsed() >= timeLimit))
      break;
    Program program;
    std::string name;
    if (!replay.empty()) {
      auto buffer = MemoryBuffer::getFile(replay[index]);
      if (!buffer) {
        errs() << "attune-fuzz-graphs: error: cannot read '" << replay[index] << "'\n";
        return 1;
      }
      program = parseProgramFile((*buffer)->getBuffer().str());
      name = replay[index];
    } else {
      program = generateProgram(seed, index);
      name = std::to_string(seed) + "-" + std::to_string(index);
    }
    if (!program.inputSeed)
      program.inputSeed = seed * 1000003 + index + 1;
    if (printPrograms)
      outs() << programHeader(program, "") << program.mlir;

    SmallString<256> workDir(workRoot);
    sys::path::append(workDir, "g" + std::to_string(index));
    options.workDir = workDir.str().str();
    options.inputSeed = program.inputSeed;
    auto graphStart = std::chrono::steady_clock::now();
    CheckResult result = checkIsolated(program, options);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - graphStart).count();
    // Ctrl-C or a SIGTERM: the graph in flight has no verdict; report the
    // ones that have.
    if (result.outcome == Outcome::Interrupted)
      break;
    ++graphs;

    int sites = static_cast<int>(program.sites.size());
    if (result.outcome == Outcome::InvalidProgram) {
      // A generator bug: reported, but not the compiler's failure.
      ++invalid;
      outs() << "graph " << name << ": generator error: " << result.message << " ("
             << program.description << ")\n";
    } else {
      bool libsBuilt = result.outcome == Outcome::Ok || result.outcome == Outcome::Mismatch ||
                       result.outcome == Outcome::RuntimeError ||
                       result.outcome == Outcome::ReferenceError;
      if (libsBuilt)
        ++compiled;
      if (result.fusedSites >= 0) {
        fusedSites += result.fusedSites;
        notFused += std::max(0, sites - result.fusedSites);
        int mustFuse = 0, mustNot = 0;
        for (Expect e : program.sites)
          mustFuse += e == Expect::Fuse, mustNot += e == Expect::NotFuse;
        if (result.fusedSites < mustFuse) {
          ++missed;
          outs() << "graph " << name << ": note: " << result.fusedSites << " of " << sites
                 << " sites fused, " << mustFuse << " expected (" << program.description
                 << ")\n";
        } else if (result.fusedSites > sites - mustNot) {
          ++unexpected;
          outs() << "graph " << name << ": note: " << result.fusedSites << " of " << sites
                 << " sites fused, near misses among them (" << program.description << ")\n";
        }
      }
      if (result.outcome == Outcome::Mismatch)
        ++mismatches;
      else if (isCrash(result.outcome))
        ++crashes;
      outs() << "graph " << name << ": " << outcomeName(result.outcome) << ", fused "
             << std::max(0, result.fusedSites) << "/" << sites << ", "
             << format("%.1f s", seconds) << " (" << program.description << ")\n";
      if (result.outcome != Outcome::Ok) {
        outs() << "  " << StringRef(result.message).rtrim() << "\n";
        outs().flush();
        Program smallest = program;
        int attempts = 0;
        // The self-test's failure is the fuzzer's own: nothing to shrink.
        if (shrinkAttempts > 0 && !selfTest) {
          Outcome wanted = result.outcome;
          CheckOptions shrinkOptions = options;
          smallest = shrinkFailure(
              program,
              [&](const Program &candidate) {
                return checkIsolated(candidate, shrinkOptions).outcome == wanted;
              },
              shrinkAttempts, attempts);
          outs() << "  shrunk from " << countOps(program.mlir) << " to "
                 << countOps(smallest.mlir) << " ops in " << attempts << " attempts\n";
        }
        if (!saveFailures.empty() && replay.empty()) {
          SmallString<256> path(saveFailures);
          sys::path::append(path, name + ".mlir");
          std::error_code ec;
          raw_fd_ostream os(path, ec);
          if (ec) {
            errs() << "attune-fuzz-graphs: error: cannot write '" << path
                   << "': " << ec.message() << "\n";
          } else {
            std::string note = "attune-fuzz-graphs --seed=" + std::to_string(seed) +
                               ", graph " + std::to_string(index) + ": " +
                               outcomeName(result.outcome) + "\n" + result.message;
            if (smallest.mlir != program.mlir)
              note += "\nshrunk from " + std::to_string(countOps(program.mlir)) + " to " +
                      std::to_string(countOps(smallest.mlir)) +
                      " ops (the failure above is the original's)";
            os << programHeader(smallest, note) << smallest.mlir;
            outs() << "  saved " << path << "\n";
          }
        }
      }
    }
    outs().flush();
    if (result.outcome == Outcome::Ok)
      (void)sys::fs::remove_directories(workDir);
  }
  (void)sys::fs::remove_directories(workRoot);

  if (invalid || missed || unexpected)
    outs() << "generator errors " << invalid << ", graphs with a missed fusion " << missed
           << ", graphs with a fused near miss " << unexpected << "\n";
  if (int sig = stopSignal())
    outs() << "stopped by signal " << sig << " (" << strsignal(sig)
           << "); the graph in flight is not counted\n";
  outs() << format("time %.1f s\n", elapsed());
  outs() << "graphs " << graphs << ", compiled " << compiled << ", fused sites " << fusedSites
         << ", not fused " << notFused << ", mismatches " << mismatches << ", crashes "
         << crashes << "\n";
  if (int sig = stopSignal())
    return 128 + sig;
  return mismatches || crashes ? 1 : 0;
}
