//===- TargetBackend.h - what a code generation target provides -*- C++ -*-===//
//
// A target is one interface with one implementation per backend, as IREE's
// HAL target backends are: it says what this machine can run of it, builds
// the kernel objects (with whatever variants it dispatches between at run
// time), supplies the support code every library of the target carries, and
// says what a library must link. The driver asks the target; it never tests
// ISA names or feature strings itself.
//
// Halide-free and exception-free, so the MLIR-side driver can include it; a
// backend's implementation may use Halide behind it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TARGETS_TARGETBACKEND_H
#define ATTUNE_COMPILER_TARGETS_TARGETBACKEND_H

#include "compiler/support/KernelCatalog.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace attune::codegen {
struct HostLoweringOptions;
} // namespace attune::codegen

namespace attune::targets {

/// Options every backend may read; each takes the ones it understands.
struct TargetOptions {
  /// CPU: Halide feature sets to build kernel variants for, best first
  /// (--cpu-features). Empty: the backend's default list.
  std::vector<std::string> cpuFeatureSets;
  /// CUDA: the compute capability the device code is for (--cuda-arch=sm_80
  /// gives 80).
  int cudaCapability = 80;
  /// --precision: F32, BF16 or F16 (the type the products' operands are
  /// rounded to; F16 only where roundsProducts()).
  ScalarType precision = ScalarType::F32;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The name --target spells ("cpu", "cuda").
  virtual std::string name() const = 0;

  /// One line on what this machine can execute of the target, e.g.
  /// "host cpu: avx512 (ATTUNE_CPU not set)", for --verbose.
  virtual std::string describeHost() const = 0;

  /// The kernel variants each object carries, best first, e.g.
  /// {"avx512_sapphirerapids", ..., "baseline"}.
  virtual std::vector<std::string> variants() const = 0;

  /// Everything besides a kernel's spec that changes its object (the variant
  /// list, ...), for the kernel cache key.
  virtual std::string cacheKey() const = 0;

  /// Compiles `spec` into a relocatable object at `objectPath` defining
  /// spec.symbolName(). Returns "" or a message naming the problem.
  virtual std::string compileKernel(const codegen::KernelSpec &spec,
                                    const std::string &objectPath) const = 0;

  /// Compiles the support code every library of this target links once (the
  /// Halide runtime). Returns "" or a message.
  virtual std::string compileRuntime(const std::string &objectPath) const = 0;

  /// Compiles the C support code (runtime/model) the target's libraries link,
  /// writing its sources into `directory`. Returns "" or a message.
  virtual std::string compileSupport(const std::string &directory,
                                     const std::string &objectPath) const = 0;

  /// Why this target runs every attention of `module` (the model, before the
  /// graph pipeline) unfused, as matmuls, a softmax and the ops between them
  /// (the graph pipeline then decomposes tfm.attention), or "" when it may
  /// have a fused attention kernel for some (unfusedAttentionReasonFor then
  /// says which).
  virtual std::string unfusedAttentionReason(mlir::Operation *module) const { return ""; }

  /// Why the code generator is known to crash on `kernel` for this target,
  /// and what to do instead ("" when it is not): added to the error of a
  /// kernel whose compiling process died.
  virtual std::string knownCompilerCrash(const codegen::KernelSpec &kernel) const {
    return "";
  }

  /// Why this target has no fused kernel for the tfm.attention `attention`
  /// that the graph pipeline left ("" when it has one): the driver then
  /// decomposes that op alone, and --verbose says why. Default: "".
  virtual std::string unfusedAttentionReasonFor(mlir::Operation *attention) const {
    return "";
  }

  /// Whether --precision (bf16 or f16) rounds the products' operands as it
  /// computes them (the CUDA target's tensor cores, HostLoweringOptions::
  /// matmulProducts) rather than storing the weights packed in bf16 (the
  /// CPU, which has no --precision=f16).
  virtual bool roundsProducts() const { return false; }

  /// The tuning database's levels this target's kernels look up their
  /// entries at (TuningDatabase::apply): empty, the CPU's ISA levels (the
  /// default); the CUDA target's GPU architectures ("sm_80", "sm_90").
  virtual std::vector<std::string> tuningLevels() const { return {}; }

  /// The activations a linear may fold in (tfm-fuse-epilogues); empty: all
  /// of them.
  virtual std::vector<std::string> epilogueActivations() const { return {}; }

  /// Adds what the generated host code needs from the target (for the CPU:
  /// how the library caps its run-time dispatch under ATTUNE_CPU) to
  /// `options`. Returns "" or a message naming the problem.
  virtual std::string configureHost(codegen::HostLoweringOptions &options) const = 0;

  /// The panel width (columns) in which this target's GEMMs read a linear's
  /// weight in place (tfm-pack-weights' panel-width), f32 or, with `bf16`,
  /// bf16 pair panels (--precision=bf16), or 0 when storing weights packed
  /// does not pay for the variants it builds.
  virtual int64_t weightPanelWidth(bool bf16) const = 0;

  /// Libraries a generated shared library links ("-lpthread", ...).
  virtual std::vector<std::string> linkLibraries() const = 0;
};

/// The backend `name` names, configured by `options`; on failure returns null
/// and sets `error` to a message naming the problem (an unknown target, a
/// bad feature set, a target this build cannot generate code for).
std::unique_ptr<TargetBackend> createTargetBackend(const std::string &name,
                                                   const TargetOptions &options,
                                                   std::string &error);

} // namespace attune::targets

#endif // ATTUNE_COMPILER_TARGETS_TARGETBACKEND_H
