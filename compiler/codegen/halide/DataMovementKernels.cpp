//===- DataMovementKernels.cpp - copies, transposes, repeat-interleave ----===//
//
// Kernels that only move elements, so they take every element type (token
// ids and masks move too). Copy is how the host materialises a transpose, a
// broadcast, a slice or one operand of a concat: it reads any strides and
// writes an output dense innermost (a concat's is a window of its result).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

using namespace Halide;

namespace attune::codegen::detail {

BuiltKernel buildCopyKernel(const KernelSpec &spec, const Target &target) {
  const int rank = spec.rank;
  ImageParam x = makeInput(spec.elementType, rank, "x", /*denseInner=*/false);
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("i" + std::to_string(i));

  // ALGORITHM
  Func out("out");
  out(vars) = x(std::vector<Expr>(vars.begin(), vars.end()));

  // SCHEDULE
  static const int sizes[] = {64, 128, 12, 1, 1, 1, 1, 1};
  std::vector<int> estimates(sizes, sizes + rank);
  setInputEstimates(x, estimates);
  constrainOutput(out, estimates);
  scheduleElementwiseCPU(out, vars, target);
  return {{x}, out};
}

BuiltKernel buildRepeatInterleaveKernel(const KernelSpec &spec,
                                        const Target &target) {
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  Var j("j"), i("i"), o("o");

  // ALGORITHM
  Func out("out");
  out(j, i, o) = x(j, i / static_cast<int>(spec.repeats), o);

  // SCHEDULE
  setInputEstimates(x, {128, 2, 1});
  constrainOutput(out, {128, 2 * static_cast<int>(spec.repeats), 1});
  scheduleElementwiseCPU(out, {j, i, o}, target);
  return {{x}, out};
}

} // namespace attune::codegen::detail
