//===- DataMovementKernels.cpp - copies, repeat-interleave, gathers -------===//
//
// Kernels that only move elements, so they take every element type (token
// ids and masks move too). Copy is how the host materialises a transpose, a
// broadcast, a slice or one operand of a concat: it reads any strides and
// writes an output dense innermost (a concat's is a window of its result).
// GatherElements reads rows chosen by an index tensor, checking each index.
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

BuiltKernel buildGatherElementsKernel(const KernelSpec &spec,
                                      const Target &target) {
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/true);
  ImageParam indices = makeInput(spec.indexType, 3, "indices", /*denseInner=*/true);
  Var i("i"), n("n"), o("o");

  // ALGORITHM
  // x[O, L, I] and indices[O, N, I]: the host puts the gathered axis in
  // dimension 1 whatever the op's rank. Indices are compared in their own
  // type, so an i64 index past 2^31 is out of range rather than wrapped.
  Expr L = x.dim(1).extent();
  Expr k = indices(i, n, o);
  Expr length = cast(k.type(), L);
  Expr inRange = k >= -length && k < length;
  Expr wrapped = select(k < 0, k + length, k);
  // The clamp bounds the load for Halide's bounds inference (rows [0, L)),
  // so no index is ever read outside x; a require turns a bad one into the
  // kernel's error, with a message that says where in the dense indices
  // tensor it sits, as the runtime does for token ids.
  Expr row = clamp(cast<int32_t>(wrapped), 0, L - 1);
  Expr position = (cast<int64_t>(o) * indices.dim(1).extent() + n) *
                      indices.dim(0).extent() + i;
  // Halide::require() as it lowers, but with only our message: require()
  // also prints the value and a space between every argument.
  using Internal::Call;
  Expr message = Call::make(type_of<const char *>(), Call::stringify,
                            {Expr("gather_elements: indices element "), position,
                             Expr(" is "), k, Expr(", outside ["), -L, Expr(", "), L,
                             Expr(")")},
                            Call::PureIntrinsic);
  Expr failed = Call::make(Int(32), "halide_error_requirement_failed",
                           {Expr("-dim <= index < dim"), message}, Call::Extern);
  Expr value = x(i, row, o);
  Func out("out");
  out(i, n, o) = Call::make(value.type(), Call::require,
                            {likely(inRange), value, failed},
                            Call::PureIntrinsic);
  // The dims around the axis are the same tensor dims in x and indices.
  x.dim(0).set_extent(indices.dim(0).extent());
  x.dim(2).set_extent(indices.dim(2).extent());

  // SCHEDULE
  setInputEstimates(x, {1, 512, 6144});
  setInputEstimates(indices, {1, 512, 6144});
  constrainOutput(out, {1, 512, 6144});
  // Gathering along the last axis (DeBERTa's relative scores) leaves
  // I = 1: vectorise along n there, not along a dimension of one element.
  // A specialisation inherits the directives made before it: made first,
  // it starts from none.
  const int vec = floatVectorWidth(target);
  Expr I = out.output_buffer().dim(0).extent();
  Stage last = out.specialize(I == 1);
  Var nv("n_v"), nl("n_l");
  last.split(n, nv, nl, vec, TailStrategy::GuardWithIf)
      .vectorize(nl)
      .parallel(o, max(1, (1 << 14) / max(out.output_buffer().dim(1).extent(), 1)),
                TailStrategy::GuardWithIf);
  scheduleElementwiseCPU(out, {i, n, o}, target);
  return {{x, indices}, out};
}

} // namespace attune::codegen::detail
