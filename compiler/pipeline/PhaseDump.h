//===- PhaseDump.h - numbered dumps of every compile phase ------*- C++ -*-===//
//
// --dump-phases-to=DIR writes one file per phase of a compile, numbered in
// the order the phases ran, so `ls DIR` reads as the path of the model
// through the compiler and two compiles can be diffed file by file:
//
//   00-input.mlir  01-canonicalize.mlir  02-cse.mlir
//   03-tfm-raise-encodings.mlir  04-tfm-fuse-attention.mlir
//   05-tfm-propagate-layouts.mlir  06-tfm-pack-weights.mlir  07-cse.mlir
//   08-host-llvm.mlir  09-memory-plan.txt  10-tuning.txt  11-llvm.ll
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_PIPELINE_PHASEDUMP_H
#define ATTUNE_COMPILER_PIPELINE_PHASEDUMP_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassInstrumentation.h"

#include <memory>
#include <string>

namespace attune::pipeline {

/// Writes numbered phase files into one directory. Not thread-safe: the
/// graph pipeline runs its passes on the module, one after another.
class PhaseDumper {
public:
  /// `dir` is created on first write if it does not exist.
  explicit PhaseDumper(std::string dir) : dir(std::move(dir)) {}

  /// "NN-<phase><extension>" with NN zero-padded to two digits, so the
  /// names of a compile (about ten phases) sort in phase order; past 99 the
  /// number just grows.
  static std::string fileName(unsigned index, llvm::StringRef phase,
                              llvm::StringRef extension);

  /// Writes `contents` as the next phase file. Returns the file's path, or
  /// an empty string after recording an error (see error()).
  std::string dump(llvm::StringRef phase, llvm::StringRef extension,
                   llvm::StringRef contents);
  /// Prints `op` (with its regions, without debug locations) as the next
  /// phase file, "<phase>.mlir".
  std::string dump(llvm::StringRef phase, mlir::Operation *op);

  /// The first write error, empty if none. Dumps are a debugging aid, so a
  /// failed write does not stop the compile, but the driver reports it.
  const std::string &error() const { return firstError; }
  unsigned numDumped() const { return next; }

private:
  std::string dir;
  unsigned next = 0;
  std::string firstError;
};

/// A pass instrumentation that dumps the module after every pass, named by
/// the pass's argument ("canonicalize", "tfm-fuse-attention"), and after a
/// failing pass as "<argument>-failed". Nested pipelines dump their anchor's
/// enclosing module, so every file is a whole, parseable module.
std::unique_ptr<mlir::PassInstrumentation>
createPhaseDumpInstrumentation(PhaseDumper &dumper);

} // namespace attune::pipeline

#endif // ATTUNE_COMPILER_PIPELINE_PHASEDUMP_H
