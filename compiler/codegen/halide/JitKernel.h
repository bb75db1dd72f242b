//===- JitKernel.h - a kernel compiled in process ---------------*- C++ -*-===//
//
// For the code that runs kernels without building a library: the tuner, the
// kernel benchmarks. One kernel JIT-compiled once for a target, rebound to
// new buffers on every run, on one thread or on Halide's thread pool (and
// the extern stages' tasks on a pool of as many threads: runExternTasks).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_JITKERNEL_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_JITKERNEL_H

#include "compiler/codegen/halide/KernelBuilders.h"

#include "Halide.h"

#include <cstdint>
#include <vector>

namespace attune::codegen {

namespace detail {
/// Runs task(nullptr, i, closure) for i in [0, count) on the calling thread
/// and up to `threads` - 1 workers kept for the process (threads started
/// for the loop when another loop is using them); 0, or a failed task's
/// code. What runtime/model's extern stages run their tasks on in a
/// process that JIT-compiles kernels (attune_jit_par_for).
int runExternTasks(int threads, int (*task)(void *, int, uint8_t *), int count,
                   uint8_t *closure);
} // namespace detail

class JitKernel {
public:
  /// Builds and compiles `spec` for `target` (targets::cpu::jitTarget() for
  /// what this process may execute). Throws Halide::CompileError when the
  /// builder rejects the spec or its schedule parameters.
  JitKernel(const KernelSpec &spec, const Halide::Target &target);

  /// Binds `inputs` (in kernelSignature order) and computes `out`. With
  /// `singleThread`, parallel loops run serially on the calling thread:
  /// Halide's JIT thread pool is sized once per process and cannot shrink,
  /// so this is how a one-thread figure is taken in a process that also
  /// uses the pool.
  void run(const std::vector<Halide::Buffer<>> &inputs, Halide::Buffer<> out,
           bool singleThread);

  /// Writes the kernel's assembly and lowered statement to `base`.s and
  /// `base`.stmt, for reading its inner loops.
  void dump(const std::string &base);

private:
  Halide::Target target;
  detail::BuiltKernel built;
};

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_JITKERNEL_H
