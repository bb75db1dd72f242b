//===- GraphCheck.h - compile, run and compare one fuzzed graph -*- C++ -*-===//
//
// One program through the whole compiler twice (fused and unfused, through
// the driver library in-process), both libraries through the runtime on the
// same inputs, and the reference evaluator on the source IR. checkIsolated
// does it in a forked child with a time limit, so a crash, an abort or a hang
// of the compiler or of a library is a result, not the end of the fuzzer; and
// shrinkFailure removes ops one at a time while a failure persists.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHCHECK_H
#define ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHCHECK_H

#include "compiler/tools/attune-fuzz-graphs/GraphGen.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attune::fuzzgraphs {

struct CheckOptions {
  /// Scratch directory for this check's libraries (created if missing).
  std::string workDir;
  /// Kernel object cache shared by every compile of a run ("" for none).
  std::string kernelCacheDir;
  /// Threads compiling kernels.
  unsigned jobs = 1;
  /// The CPU variants kernels are built for, as --cpu-features takes them
  /// (empty: attune-compile's default list).
  std::vector<std::string> cpuFeatureSets;
  /// Seed of the random inputs.
  uint64_t inputSeed = 1;
  /// An output element passes when |got - ref| <= atol + rtol |ref| (f32
  /// outputs against the reference's double evaluation rounded per op).
  double atol = 1e-4, rtol = 1e-3;
  /// --self-test: add 1 to the first element of the fused library's first
  /// output before comparing, which must be reported as a mismatch.
  bool perturbFused = false;
  /// checkIsolated: the child is killed after this many seconds.
  double timeoutSeconds = 120;
};

enum class Outcome {
  Ok,
  Mismatch,      ///< a library's output differs from the reference
  CompileError,  ///< compileModel failed on a program that verifies
  RuntimeError,  ///< the runtime refused to open or run a library
  ReferenceError,///< the reference evaluator failed on the source
  Crash,         ///< the child died of a signal or exited without a result
  Timeout,       ///< the child ran past CheckOptions::timeoutSeconds
  InvalidProgram,///< the generator wrote IR that does not verify, or whose
                 ///< reference result is not finite: a generator bug
  Interrupted,   ///< SIGINT or SIGTERM arrived (stopSignal): no verdict
};

/// "mismatch", "crash", ...
const char *outcomeName(Outcome outcome);

struct CheckResult {
  Outcome outcome = Outcome::Ok;
  /// What failed, with the compiler's diagnostics or the worst element.
  std::string message;
  /// tfm.attention ops after the fused graph pipeline (-1 if unknown).
  int fusedSites = -1;
};

/// Checks `program` in this process (a crash kills the caller).
CheckResult checkProgram(const Program &program, const CheckOptions &options);

/// checkProgram in a forked child in its own process group, which is killed
/// after options.timeoutSeconds; a signal or an exit without a result is a
/// Crash naming it. The caller must not have started threads.
///
/// The first SIGINT or SIGTERM of the process kills the running child and
/// makes this and every later call return Interrupted, so that the caller
/// can stop and report what it has; a second one ends the process.
CheckResult checkIsolated(const Program &program, const CheckOptions &options);

/// The signal that interrupted checkIsolated, or 0.
int stopSignal();

/// The number of ops in the program's function, or -1 if it does not parse.
int countOps(const std::string &mlir);

/// Removes op `index` (in the function body, not the return) by replacing
/// the uses of each result with an operand of the same type, then erases
/// ops left unused; nullopt when the op has a used result with no such
/// operand, or the result does not verify.
std::optional<std::string> dropOp(const std::string &mlir, int index);

/// Replaces the result of op `index` by a new input of the function (the
/// op and whatever only it used go; inputs left unread go too): the
/// reduction for ops dropOp cannot remove, whose result has no operand's
/// type (reshapes, transposes). The input is named after the input the
/// value is computed from, plus "_cut<n>", so it is filled in the same
/// role; a dynamic dimension is named after the one entry of `dims` of its
/// size when the program runs (found by the reference evaluator), else gets
/// a new name added to `dims`. nullopt when the op has no operands or
/// not one used result, or the result does not verify.
std::optional<std::string> cutToInput(const std::string &mlir, int index,
                                      std::map<std::string, int64_t> &dims);

/// Shrinks `program` while `stillFails` says the failure persists: ops are
/// removed one at a time (dropOp, last first); when none can go, a value is
/// made an input (cutToInput, first first); until neither helps or
/// `maxAttempts` candidates have been checked. Returns the smallest program.
Program shrinkFailure(const Program &program,
                      const std::function<bool(const Program &)> &stillFails,
                      int maxAttempts, int &attemptsMade);

} // namespace attune::fuzzgraphs

#endif // ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHCHECK_H
