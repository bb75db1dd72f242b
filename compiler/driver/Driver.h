//===- Driver.h - the compiler as a library ---------------------*- C++ -*-===//
//
// A tfm model in, a native library (or one of the intermediate forms) out:
// parse and verify, bind weights, run the graph pipeline, generate host code,
// build the kernels through the target, link, write the header. attune-compile
// is a thin main over this, as iree-compile is over IREE's compiler API; tests
// and a future Python binding call it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_DRIVER_DRIVER_H
#define ATTUNE_COMPILER_DRIVER_DRIVER_H

#include "compiler/targets/TargetBackend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>

namespace attune::tuning {
class TuningDatabase;
} // namespace attune::tuning

namespace attune::driver {

/// What a compile writes.
enum class Emit {
  Input,    ///< the model as read, before any pass (an import's tfm IR)
  Mlir,     ///< tfm IR after the graph passes (text)
  HostMlir, ///< LLVM-dialect host code (text)
  Llvm,     ///< LLVM IR of the host code (text)
  Obj,      ///< the host object (outputFile)
  Lib,      ///< outputFile (.so), the .a beside it and the .h (and the
            ///< weights file with WeightStorage::External)
};

/// Where a library keeps its weights (--weights-storage).
enum class WeightStorage {
  Embedded, ///< inside the .so and the .a
  External, ///< in <output stem>.safetensors beside them, which the runtime
            ///< maps at open (runtime.h, "External weights")
};

struct DriverOptions {
  /// The model's file name, for messages and the header ("-" for stdin).
  std::string inputFile;
  /// Where Obj and Lib write; text emits go to the stream compileModel gets.
  std::string outputFile;
  Emit emit = Emit::Lib;
  /// The code generation target; must outlive the compile.
  const targets::TargetBackend *target = nullptr;

  bool fuseAttention = true;
  /// --no-raise-encodings turns it off (CompileOptions::raiseEncodings).
  bool raiseEncodings = true;
  /// --fuse-epilogues (CompileOptions::fuseEpilogues).
  bool fuseEpilogues = false;
  /// --no-propagate-layouts turns it off (CompileOptions::propagateLayouts).
  bool propagateLayouts = true;
  /// --no-fuse-residual-norms turns it off (CompileOptions::fuseResidualNorms).
  bool fuseResidualNorms = true;
  /// --merge-projections (CompileOptions::mergeProjections).
  bool mergeProjections = false;
  /// --no-pack-weights turns it off; on, the target's weightPanelWidth()
  /// decides (CompileOptions::weightPanelWidth).
  bool packWeights = true;
  /// --precision: F32 (the default), BF16 (on the CPU: linear weights
  /// stored as bf16 and multiplied in bf16 with f32 accumulation, which
  /// needs packWeights; on a target that roundsProducts(): the linears' and
  /// attentions' operands rounded to bf16), or F16 (only on such a target:
  /// rounded to f16). Data and everything else stay f32.
  ScalarType precision = ScalarType::F32;
  /// --fusion-report: every attention site as JSON ("" for none).
  std::string fusionReportPath;
  /// --dump-phases-to: one numbered file per phase ("" for none).
  std::string dumpPhasesTo;
  /// --graph: a drawing of the model function after the graph passes,
  /// FILE.dot or FILE.svg (pipeline/GraphDot.h); "" for none. Written
  /// whatever `emit` is, except Input, which stops before the passes.
  std::string graphPath;
  /// Safetensors weights for the model's tfm.weight ops; "" seeds them from
  /// their init attributes with `seed`.
  std::string weightsFile;
  uint64_t seed = 0;
  /// External: --emit=lib writes the weights blob to <output stem>
  /// .safetensors instead of linking it in, and the library records that
  /// file's name, size and hash; other emits show the host code that reads
  /// such a file. A model without weights has nothing to keep outside and
  /// writes no file.
  WeightStorage weightStorage = WeightStorage::Embedded;
  /// The function to compile ("" for the only public one) and the name the
  /// library records ("" for the function's name).
  std::string entry, modelName;
  /// Schedule parameters by kernel signature and ISA (attune-tune's
  /// database); null keeps every kernel on its builder's formula.
  const tuning::TuningDatabase *tuning = nullptr;
  /// Kernel object cache directory; "" disables the cache.
  std::string kernelCacheDir;
  /// Threads compiling kernels (at least 1).
  unsigned jobs = 1;
  /// Remarks, phase timings and a summary on `log`.
  bool verbose = false;
  /// Once kernels have taken kProgressAfterSeconds, a line on `log` per
  /// kernel ready ("kernels 7/9 ready, 5 compiled, 4.2 s"); on a terminal
  /// the line is rewritten in place.
  bool progress = false;
  bool progressOnTerminal = false;
};

/// Kernel compiles shorter than this print no progress line.
inline constexpr double kProgressAfterSeconds = 2.0;

/// Compiles the model in `buffer`. Text emits go to `textOut`; --verbose
/// output and MLIR diagnostics (with file:line:col) go to `log`. Returns ""
/// on success, else one message naming what failed; a failed compile never
/// leaves a half-written library where an old one was.
std::string compileModel(std::unique_ptr<llvm::MemoryBuffer> buffer,
                         const DriverOptions &options, llvm::raw_ostream &textOut,
                         llvm::raw_ostream &log);

} // namespace attune::driver

#endif // ATTUNE_COMPILER_DRIVER_DRIVER_H
