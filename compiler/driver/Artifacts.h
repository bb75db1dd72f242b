//===- Artifacts.h - objects, link and header of a library -----*- C++ -*-===//
//
// Internal to the driver: the steps after host code generation that write
// files. Each returns "" on success or a message naming what failed (with
// the command and its output where a tool was run).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_DRIVER_ARTIFACTS_H
#define ATTUNE_COMPILER_DRIVER_ARTIFACTS_H

#include "compiler/support/KernelCatalog.h"
#include "compiler/targets/TargetBackend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <functional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace attune::pipeline {
class KernelCache;
} // namespace attune::pipeline

namespace attune::driver {

/// A scratch directory removed with everything in it when the compile ends,
/// on success and on every failure path alike.
struct ScratchDir {
  llvm::SmallString<256> path;
  ~ScratchDir();
  /// `name` inside the directory.
  std::string file(llvm::StringRef name) const;
};

/// Runs `program args...`, its output going to `logName` in `scratch`.
std::string runCommand(llvm::StringRef program, llvm::ArrayRef<std::string> args,
                       const ScratchDir &scratch, llvm::StringRef logName);

std::string writeFile(llvm::StringRef file, llvm::StringRef contents);

/// A TargetMachine for the machine that runs the compiler. The host code only
/// sequences kernel calls, so it targets the baseline CPU of the triple: the
/// kernels carry the ISA-specific code and dispatch at run time.
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(std::string &error);

/// The -O2 pipeline over the host code.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm);

std::string emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                       llvm::StringRef file);

struct KernelBuildStats {
  unsigned compiled = 0, cached = 0;
};

/// Produces one object per kernel, the target's runtime and the C support
/// code every model library links (runtime/model/: the scratch cache behind
/// Halide's halide_malloc, the AMX kernels; codegen::compileModelSupport),
/// from the cache where possible, compiling the rest on `jobs` threads.
/// Objects are listed in a deterministic order (kernels in order of first
/// use, then the runtime, then the support code).
/// `progress`, when set, is called (under a lock) each time an item is ready,
/// with the items ready, those compiled (not from the cache) and the total.
using KernelProgress = std::function<void(size_t ready, size_t compiled, size_t total)>;
std::string buildKernelObjects(const std::vector<codegen::KernelSpec> &kernels,
                               const targets::TargetBackend &target,
                               const pipeline::KernelCache &cache,
                               const ScratchDir &scratch, unsigned jobs,
                               std::vector<std::string> &objects,
                               KernelBuildStats &stats,
                               const KernelProgress &progress = nullptr);

/// The weights blob as an object `<symbol>.o` defining `symbol` (global,
/// hidden), the model's own name for the bytes the host code calls
/// `attune_weights_data`: the shared library links it with that name as an
/// alias (weightsAliasFlag), the static archive holds it as a member of its
/// own, so the blob is copied once into each and never through `ld -r`.
std::string buildWeightsObject(llvm::StringRef blob, llvm::StringRef cc,
                               llvm::StringRef symbol, const ScratchDir &scratch,
                               std::string &object);

/// The linker flag that makes `attune_weights_data` name `weightsSymbol`.
std::string weightsAliasFlag(llvm::StringRef weightsSymbol);

/// The symbol a model's weights object defines: `<staticSymbol>_weights`.
std::string weightsSymbolOf(llvm::StringRef staticSymbol);

/// The name of the descriptor function in the static archive of model
/// `modelName`: `<id>_attune_model_abi`, where <id> is the name with every
/// character outside [A-Za-z0-9_] replaced by '_' and "model_" put in front
/// of a leading digit. When that changed the name, <id> ends in '_' and 8 hex
/// digits of a hash of the name, so "a-b" and "a_b" stay apart.
std::string staticDescriptorSymbol(llvm::StringRef modelName);

/// The static archive `archive`: one relocatable object made from `objects`
/// (`ld -r`) in which the descriptor is renamed `staticSymbol` and is the
/// only global definition; kernels and the Halide runtime become local, and
/// COMDAT groups are dissolved, so that archives of several models link into
/// one program without clashing. With `weightsObject` (buildWeightsObject,
/// defining weightsSymbolOf(staticSymbol)) the weights are a second member,
/// which the first's reference to `attune_weights_data`, renamed, reaches.
/// Undefined references (libc, libpthread, libdl, libm) stay for the final
/// link.
std::string buildStaticArchive(llvm::ArrayRef<std::string> objects,
                               llvm::StringRef weightsObject,
                               llvm::StringRef staticSymbol, llvm::StringRef ld,
                               llvm::StringRef objcopy, llvm::StringRef ar,
                               const ScratchDir &scratch, llvm::StringRef archive);

/// The C header for `library`, described through the runtime's own view of
/// it (opening it is also the last check that what was linked loads).
/// `inputName` is the model file named in the header's first line;
/// `staticSymbol` the descriptor function of the static archive;
/// `externalWeights` the weights file of a library that keeps its weights
/// out (opened with it, so that the check covers the file too; named in the
/// header by its base name), or "" when they are embedded.
std::string buildHeader(llvm::StringRef library, llvm::StringRef headerPath,
                        llvm::StringRef inputName, llvm::StringRef blob,
                        llvm::StringRef staticSymbol,
                        llvm::StringRef externalWeights, std::string &header);

} // namespace attune::driver

#endif // ATTUNE_COMPILER_DRIVER_ARTIFACTS_H
