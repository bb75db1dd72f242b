//===- AotKernel.h - a kernel compiled ahead of time, run in process -*- C++ -*-===//
//
// For the tuner: one kernel compiled the way a library compiles it (an
// object file for one CPU target, through Halide's ahead-of-time code
// generator, with its own copy of the Halide runtime), linked into a shared
// object, loaded, and run on Halide buffers.
//
// Why not the JIT: the same schedule can compile to different code in the
// JIT and in an object. Measured on an AMD EPYC Zen 5 at AVX2, fused
// attention with a GEMM #1 tile that needs all 16 vector registers: JIT
// 97 GFLOP/s, the same schedule in a library 74 (LLVM reloads an operand
// from the stack in the object's inner loop), while a tile one register
// smaller ran at 97 in the library. Parameters chosen by timing the JIT did
// not hold in the libraries that shipped them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_AOTKERNEL_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_AOTKERNEL_H

#include "compiler/codegen/halide/KernelBuilders.h"

#include "Halide.h"

#include <string>
#include <vector>

namespace attune::codegen {

class AotKernel {
public:
  /// Builds `spec` for `target` (no "jit" feature: a target a library's
  /// variant is built for, e.g. targets::cpu::halideTarget(isa)), compiles
  /// it to an object, links it with `cc` into a shared object in a scratch
  /// directory, and loads it. Throws Halide::CompileError when the builder
  /// rejects the spec or its parameters, std::runtime_error when compiling,
  /// linking or loading fails.
  AotKernel(const KernelSpec &spec, const Halide::Target &target);
  ~AotKernel();
  AotKernel(const AotKernel &) = delete;
  AotKernel &operator=(const AotKernel &) = delete;

  /// Computes `out` from `inputs` (in kernelSignature order). With
  /// `singleThread` the kernel's own Halide runtime runs one thread, as a
  /// library does after attune_model_set_num_threads(model, 1); otherwise
  /// it uses the runtime's default (one thread per core). Throws
  /// std::runtime_error when the kernel returns an error.
  void run(const std::vector<Halide::Buffer<>> &inputs, Halide::Buffer<> out,
           bool singleThread);

private:
  void *handle = nullptr;
  int (*entry)(void **) = nullptr;
  int (*setNumThreads)(int) = nullptr;
  int threads = -1; // what setNumThreads was last given
  std::string name;
};

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_AOTKERNEL_H
