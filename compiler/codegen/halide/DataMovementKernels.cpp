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
  scheduleElementwise(out, vars, target);
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
  scheduleElementwise(out, {j, i, o}, target);
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
  Expr I = indices.dim(0).extent(), N = indices.dim(1).extent();
  auto inRange = [&](const Expr &k) {
    Expr length = cast(k.type(), L);
    return k >= -length && k < length;
  };

  // The check comes first, as a stage of its own. A failing check inside
  // the gather's parallel loop would report from a worker thread, and the
  // library keeps the message of the thread that called it (LLVMEmitter's
  // thread-local error buffer), so the caller would get a bare code. Each
  // row o finds its first bad element (n * I + i, or I * N for none) in
  // parallel; the first bad row is then found, and the index there
  // reported, on the calling thread.
  RDom r(0, I, 0, N, "r");
  Func rowBad("row_first_bad");
  rowBad(o) = I * N;
  rowBad(o) = min(rowBad(o), select(inRange(indices(r.x, r.y, o)), I * N, r.y * I + r.x));
  RDom rows(0, indices.dim(2).extent(), "rows");
  Func firstBad("first_bad"); // its flat position in indices, or -1
  firstBad() = cast<int64_t>(-1);
  firstBad() = select(firstBad() < 0 && rowBad(rows) < I * N,
                      cast<int64_t>(rows) * I * N + rowBad(rows), firstBad());
  // Halide::require() as it lowers, with only our message (require() also
  // prints its value, and a space between every argument). The position is
  // taken apart to read the index; the clamps only tell bounds inference
  // what is true.
  using Internal::Call;
  // The bad index of each row is read beside the row's search, so that on a
  // GPU only the small per-row results come back to the host for the check.
  Func rowBadIndex("row_bad_index");
  rowBadIndex(o) = indices(clamp(rowBad(o) % I, 0, I - 1), clamp(rowBad(o) / I, 0, N - 1), o);
  Expr p = firstBad();
  Expr badK = rowBadIndex(clamp(cast<int32_t>(p / I / N), 0, indices.dim(2).extent() - 1));
  Expr message = Call::make(type_of<const char *>(), Call::stringify,
                            {Expr("gather_elements: indices element "), p, Expr(" is "),
                             badK, Expr(", outside ["), -L, Expr(", "), L, Expr(")")},
                            Call::PureIntrinsic);
  Expr failed = Call::make(Int(32), "halide_error_requirement_failed",
                           {Expr("-dim <= index < dim"), message}, Call::Extern);
  // 0 once every index is known good, spelled p + 1 (p is -1 then):
  // Halide drops a Func whose value is a constant, check and all.
  Func check("index_check");
  check() = Call::make(Int(32), Call::require,
                       {likely(p < 0), cast<int32_t>(p + 1), failed},
                       Call::PureIntrinsic);

  // The gather: negative indices wrap. Adding check() (0) makes the gather
  // wait for the check; the clamp keeps every load inside x for bounds
  // inference whatever an index holds.
  Expr k = indices(i, n, o);
  Expr wrapped = select(k < 0, k + cast(k.type(), L), k);
  Expr row = clamp(cast<int32_t>(wrapped) + check(), 0, L - 1);
  Func out("out");
  out(i, n, o) = x(i, row, o);
  // The dims around the axis are the same tensor dims in x and indices.
  x.dim(0).set_extent(indices.dim(0).extent());
  x.dim(2).set_extent(indices.dim(2).extent());

  // SCHEDULE
  setInputEstimates(x, {1, 512, 6144});
  setInputEstimates(indices, {1, 512, 6144});
  constrainOutput(out, {1, 512, 6144});
  const int grain = 1 << 14; // elements per parallel task, as elsewhere
  if (isGpuTarget(target)) {
    // One thread per row searches it; the first bad row and the check run
    // on the host, over the per-row results.
    Var ot("o_thread"), ob("o_block");
    rowBad.compute_root().gpu_tile(o, ob, ot, kGpuThreads, TailStrategy::GuardWithIf);
    rowBad.update().gpu_tile(o, ob, ot, kGpuThreads, TailStrategy::GuardWithIf);
    rowBadIndex.compute_root().gpu_tile(o, ob, ot, kGpuThreads, TailStrategy::GuardWithIf);
    firstBad.compute_root();
    check.compute_root();
    scheduleElementwiseGPU(out, {i, n, o});
    return {{x, indices}, out};
  }
  Expr rowsPerTask = max(1, grain / max(I * N, 1));
  const int vec = floatVectorWidth(target);
  rowBad.compute_root();
  // The min over a row is a vector reduction along whichever of i and n is
  // not a single element.
  RVar rv("r_v"), rl("r_l");
  rowBad.update()
      .specialize(I == 1)
      .atomic()
      .split(r.y, rv, rl, vec, TailStrategy::GuardWithIf)
      .vectorize(rl)
      .parallel(o, rowsPerTask, TailStrategy::GuardWithIf);
  rowBad.update()
      .atomic()
      .split(r.x, rv, rl, vec, TailStrategy::GuardWithIf)
      .vectorize(rl)
      .parallel(o, rowsPerTask, TailStrategy::GuardWithIf);
  rowBadIndex.compute_root();
  firstBad.compute_root();
  check.compute_root();
  // Gathering along the last axis (DeBERTa's relative scores) leaves
  // I = 1: vectorise along n there, not along a dimension of one element.
  // A specialisation inherits the directives made before it: made first,
  // it starts from none.
  Stage last = out.specialize(out.output_buffer().dim(0).extent() == 1);
  Var nv("n_v"), nl("n_l");
  last.split(n, nv, nl, vec, TailStrategy::GuardWithIf)
      .vectorize(nl)
      .parallel(o, rowsPerTask, TailStrategy::GuardWithIf);
  scheduleElementwise(out, {i, n, o}, target, grain);
  return {{x, indices}, out};
}

} // namespace attune::codegen::detail
