//===- MatmulKernels.cpp - Linear, batched Matmul and Softmax (Halide) ----===//
//
// The dense kernels outside attention. Linear, ComplexLinear and Matmul
// share one GEMM: B is packed into panels of `panel_vectors` vectors so that
// the inner loop streams it contiguously, and a panel x `rows` block of the
// output is accumulated in registers while K is walked. Softmax is three
// vectorised passes over a row held in cache.
//
// Schedule parameters of Linear, ComplexLinear and Matmul
// (KernelSpec::schedules, per ISA;
// a missing one takes the formula's value; an invalid one is rejected by
// failSpec naming it, so a tuner can skip it):
//
//   rows           output rows of the register tile (the broadcast A values
//                  per K step). >= 1. Default: 6 with 32 vector registers,
//                  3 with 16.
//   panel_vectors  width of the packed B panel and of the register tile, in
//                  vectors (V = 16 floats on AVX-512, 8 on AVX2, 4 on SSE).
//                  >= 1. Default 4.
//
//   rows * panel_vectors accumulators, plus the panel_vectors B vectors
//   (LLVM loads each once per K step and reuses it across the rows) and the
//   broadcast A value, must fit in the vector registers: rows *
//   panel_vectors + panel_vectors + 1 <= 32 (AVX-512) or 16 (AVX2 and
//   below); more spills inside the K loop.
//
// Linear with bf16 weights (KernelSpec::weightType, --precision=bf16) reads
// pair panels (PanelLayout.h) and rounds x to bf16 once per call. Where the
// target has AMX (Halide's avx512_sapphirerapids) a linear without an
// activation is an extern stage on AMX tiles (runtime/model/amx_kernels.c:
// 128x768x768 0.129 ms against 1.30 on vdpbf16ps and 0.805 in f32, one
// thread of an Intel Xeon). Where it has AVX512-BF16 (avx512_zen4)
// each K pair is one vdpbf16ps: 32 products per instruction, twice the f32
// FMA's 16. Elsewhere the pair is split into two f32 vectors (a shift and a
// mask of the 32-bit word) and multiplied by FMAs, with x rounded the same
// way, so every variant computes the same products. Its parameters are
// Linear's (rows, panel_vectors), with their own defaults: 8 x 2 vectors
// with 32 registers (vdpbf16ps at 8 x 2 and 6 x 4 measured 490 and 482
// GFLOP/s, M=512 K=768 N=3072, one Zen 5 thread; 3 x 6 449), 5 x 2 with 16
// (split path on AVX2: 5 x 2 18.6 ms, 3 x 3 18.9, 12 x 1 19.6, 4 x 2 19.8,
// 3 x 2 24.1; the f32 kernel takes 17.9).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/support/PanelLayout.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include <functional>
#include <limits>
#include <string>

namespace attune::codegen::detail {
namespace {

using namespace Halide;

/// Register tile of the GEMM micro-kernel for a vector width.
struct GemmTiles {
  int vec = 16;   // floats per vector register
  int panel = 64; // output columns per tile (packed B panel width)
  int rows = 6;   // output rows per tile
};

/// The formula's parameters for `target` (see the table at the top).
ScheduleParams defaultGemmParams(const Target &target) {
  // 24 of 32 zmm accumulate (6 x 4), 4 hold B, 1 the broadcast A value.
  // With 16 ymm the same shape (3 x 4 + 4 + 1 = 17) spilled an accumulator
  // every K step; 4 x 3 + 3 + 1 = 16 does not, and has one broadcast per
  // 3 FMAs instead of 2 (6 x 2) for the load ports.
  if (vectorRegisterCount(target) >= 32)
    return {{"panel_vectors", 4}, {"rows", 6}};
  return {{"panel_vectors", 3}, {"rows", 4}};
}

/// The tiles `spec` asks for on `target`; fails on an invalid parameter.
GemmTiles chooseGemmTiles(const KernelSpec &spec, const Target &target) {
  const ScheduleParams &params = scheduleFor(spec, target);
  const ScheduleParams defaults = defaultGemmParams(target);
  GemmTiles t;
  t.vec = std::max(1, target.natural_vector_size<float>());
  const int64_t panelVectors =
      scheduleParam(params, "panel_vectors", defaults.at("panel_vectors"));
  const int64_t rows = scheduleParam(params, "rows", defaults.at("rows"));
  if (panelVectors < 1 || panelVectors > 16)
    failSpec("gemm schedule: panel_vectors must be in [1, 16], got " +
             std::to_string(panelVectors));
  if (rows < 1 || rows > 32)
    failSpec("gemm schedule: rows must be in [1, 32], got " +
             std::to_string(rows));
  const int registers = vectorRegisterCount(target);
  if ((rows + 1) * panelVectors + 1 > registers)
    failSpec("gemm schedule: rows x panel_vectors = " +
             std::to_string(rows * panelVectors) +
             " accumulators do not fit in " + std::to_string(registers) +
             " vector registers with the B vectors and broadcast");
  t.panel = static_cast<int>(panelVectors) * t.vec;
  t.rows = static_cast<int>(rows);
  return t;
}

/// The shared GEMM: out(n, m, bt) = sum_k A(k, m, bt) * B(n, k, bt)
/// (+ bias(n)). `aAt`, `bAt` and `biasAt` (empty for no bias) read the
/// operands in that logical order from whatever layout the caller has.
struct GemmPipeline {
  bool batched = true;
  /// B comes pre-packed in panels no wider than the tile (KernelSpec::
  /// weightPanel; each vector of the tile within one panel): the panels are
  /// read in place, not copied. (Panels wider than the tile are still
  /// copied, from contiguous rows.)
  bool prePacked = false;
  /// True when B is contiguous along n, so packing is a plain vector copy.
  Expr bDenseN = Internal::const_true();
  Var n{"n"}, m{"m"}, bt{"bt"}, ni{"ni"}, no{"no"}, k{"k"};
  Func packedB{"gemm_packed_b"}, prod{"gemm_prod"}, out;
  RDom r;
};

// ALGORITHM
///
/// `prePackedAt`, when given, reads B already stored in panels: element ni
/// of tile panel `no` at row k (see buildLinearKernel); B is then not copied.
template <typename AAt, typename BAt>
GemmPipeline defineGemm(const KernelSpec &spec, const std::string &name,
                        AAt aAt, BAt bAt, Expr M, Expr N, Expr K,
                        const GemmTiles &t,
                        const std::function<Expr(Expr)> &biasAt, bool batched,
                        const std::function<Expr(Expr, Expr, Expr)> &prePackedAt = nullptr) {
  GemmPipeline g;
  g.batched = batched;
  g.out = Func(name + "_out");
  const int NT = t.panel;
  // Panel `no` of B, K x NT contiguous. Columns past N (last panel) repeat
  // column N-1; their results are never stored. Pre-packed panels hold
  // zeros there.
  if (prePackedAt) {
    g.packedB(g.ni, g.k, g.no, g.bt) = cast<float>(prePackedAt(g.ni, g.k, g.no));
    g.prePacked = spec.weightPanel > 0 && NT >= spec.weightPanel;
  } else {
    g.packedB(g.ni, g.k, g.no, g.bt) =
        cast<float>(bAt(min(g.no * NT + g.ni, N - 1), g.k, g.bt));
  }
  g.r = RDom(0, K, "rk");
  g.prod(g.ni, g.m, g.no, g.bt) = 0.0f;
  // Rows past M (last row tile) read row M-1 for the same reason.
  g.prod(g.ni, g.m, g.no, g.bt) +=
      cast<float>(aAt(g.r, clamp(g.m, 0, M - 1), g.bt)) *
      g.packedB(g.ni, g.r, g.no, g.bt);
  // Linear is the unbatched case: its one batch is bt = 0.
  Expr bt = batched ? Expr(g.bt) : Expr(0);
  Expr value = g.prod(g.n % NT, g.m, g.n / NT, bt);
  if (biasAt)
    value += cast<float>(biasAt(g.n));
  // The epilogue: applied to the accumulators as they are stored.
  if (spec.activation)
    value = activationExpr(*spec.activation, value);
  value = castToElement(spec, value);
  if (batched)
    g.out(g.n, g.m, g.bt) = value;
  else
    g.out(g.n, g.m) = value;
  return g;
}

// SCHEDULE
void scheduleGemmCPU(GemmPipeline &g, const GemmTiles &t) {
  const int NT = t.panel, MT = t.rows, V = t.vec;
  Var mo("mo"), mi("mi"), nio("nio"), nii("nii"), task("task");
  // Tiles of NT x MT; tails are guarded and producers still compute whole
  // tiles (bound_extent) so the micro-kernel always has constant extents.
  g.out.split(g.n, g.no, g.ni, NT, TailStrategy::GuardWithIf)
      .split(g.m, mo, mi, MT, TailStrategy::GuardWithIf);
  if (g.batched)
    g.out.reorder(g.ni, mi, mo, g.no, g.bt).fuse(g.no, g.bt, task);
  else
    g.out.reorder(g.ni, mi, mo, g.no).rename(g.no, task);
  g.out.parallel(task).vectorize(g.ni, V, TailStrategy::GuardWithIf);

  // One packed panel per task, reused by every row tile. A tile touches one
  // panel; bounds inference cannot prove that through the guarded tail of
  // n (n / NT with n <= N - 1), and a non-constant extent would put the
  // accumulators on the heap, so it is stated.
  if (g.prePacked) {
    g.packedB.compute_inline(); // the panel is read where it is stored
  } else {
    g.packedB.compute_at(g.out, task)
        .bound_extent(g.no, 1)
        .vectorize(g.ni, V)
        .unroll(g.ni);
    g.packedB.specialize(g.bDenseN);
  }

  // Micro-kernel: NT x MT accumulators live in registers across K.
  g.prod.compute_at(g.out, mo)
      .bound_extent(g.m, MT)
      .bound_extent(g.no, 1)
      .vectorize(g.ni, V)
      .unroll(g.ni)
      .unroll(g.m);
  g.prod.update()
      .reorder(g.ni, g.m, g.r)
      .vectorize(g.ni, V)
      .unroll(g.ni)
      .unroll(g.m);
}

} // namespace

std::vector<ScheduleParams> gemmScheduleCandidates(const Target &target) {
  std::vector<ScheduleParams> out = {defaultGemmParams(target)};
  const int registers = vectorRegisterCount(target);
  // Tiles that use at least half the registers for accumulators (smaller
  // ones cannot hide the FMA latency) and still fit.
  for (int64_t panelVectors = 1; panelVectors <= 6; ++panelVectors)
    for (int64_t rows = 1; rows <= 16; ++rows) {
      const int64_t used = (rows + 1) * panelVectors + 1;
      if (used > registers || 2 * used < registers)
        continue;
      ScheduleParams p = {{"panel_vectors", panelVectors}, {"rows", rows}};
      if (p != out.front())
        out.push_back(p);
    }
  return out;
}

/// The tiles for B pre-packed in panels of `width`. Each K step of a tile
/// loads its `vectors` B vectors for rows x vectors FMAs, from L2 once the
/// panel outgrows L1, so rows are what keeps that traffic down. Tiles have
/// at most 8 rows.
///  - A tile as wide as the stored panel reads it in place, contiguously:
///    taken when it gets at least 6 rows (AVX-512 with 64 floats: 6 x 4).
///  - Else the tuned/formula tile, if its panel divides `width` (AVX2's 24
///    floats in a 96-wide layout: 4 x 3).
///  - Else whichever has more rows: the whole panel in place, or a slice
///    of 3 or more vectors dividing it (each with at least 3 rows). AVX-512's 96-wide
///    panels: 8 x 3 slices rather than the 4 x 6 whole panel, 3 to 10%
///    faster on whole models (GPT-2 block at 128 and 512 tokens, 1 and 2
///    threads, all-MiniLM-L6-v2; Intel Xeon, avx512_spr). 9 x 3, which
///    fills all 32 registers, was 3 to 7% slower than 8 x 3, and 7 x 3 in
///    between.
///  - Else the widest slice that divides it.
/// A slice copies its part of each stored row into a contiguous panel per
/// call, as the row-major path does (on MiniLM the AVX2 variant is then as
/// fast as with plain weights, or up to 4% faster).
GemmTiles prePackedTiles(GemmTiles t, int64_t width, const Target &target) {
  const int registers = vectorRegisterCount(target);
  if (width % t.vec != 0)
    failSpec("linear: a weight panel of " + std::to_string(width) +
             " floats is not a multiple of the " + std::to_string(t.vec) +
             "-float vector");
  // (rows + 1) * vectors + 1 <= registers, and at most 8 rows.
  auto rowsFor = [&](int vectors) {
    return std::min((registers - 1) / vectors - 1, 8);
  };
  const int whole = static_cast<int>(width / t.vec);
  // Panels narrower than 3 vectors (kF32PanelWidth's 16 floats): the tile
  // spans adjacent panels, each vector read in place from its panel. With
  // 16 registers (AVX2) the tuned or formula tile, 4 x 3 (one and a half
  // panels): on a GPT-2 block at 128 tokens 6 x 2 over one panel was 7%
  // slower. With 32, the most accumulators at 6 rows or more (the more rows
  // on a tie): 8 x 3 over three panels.
  if (whole < 3 && registers < 32)
    return t;
  if (whole < 3) {
    int best = 0;
    for (int vectors = whole; vectors <= 16; vectors += whole) {
      const int rows = rowsFor(vectors);
      if (rows < 6)
        break;
      if (best == 0 || rows * vectors > rowsFor(best) * best ||
          (rows * vectors == rowsFor(best) * best && rows > rowsFor(best)))
        best = vectors;
    }
    if (best > 0) {
      t.panel = best * t.vec;
      t.rows = rowsFor(best);
      return t;
    }
  }
  if (rowsFor(whole) >= 6) {
    t.panel = static_cast<int>(width);
    t.rows = rowsFor(whole);
    return t;
  }
  if (width % t.panel == 0)
    return t;
  int bestVectors = rowsFor(whole) >= 3 ? whole : 0;
  for (int vectors = 3; vectors < whole; ++vectors)
    if (whole % vectors == 0 && rowsFor(vectors) >= 3 &&
        (bestVectors == 0 || rowsFor(vectors) > rowsFor(bestVectors)))
      bestVectors = vectors;
  if (bestVectors == 0) {
    bestVectors = std::min(t.panel / t.vec, whole);
    while (bestVectors > 1 && width % (bestVectors * t.vec) != 0)
      --bestVectors;
  }
  t.panel = bestVectors * t.vec;
  t.rows = std::max(1, rowsFor(bestVectors));
  return t;
}

namespace {

/// True when `target` multiplies bf16 pairs natively (vdpbf16ps): Halide
/// lowers a two-lane f32(bf16) * f32(bf16) sum to it on the feature sets of
/// the avx512_zen4 level and above.
bool hasBf16DotProduct(const Target &target) {
  return targets::cpu::isaOf(target) >= ATTUNE_ISA_AVX512_ZEN4;
}

/// The weights' layout as the pair-panel kernels read it: dense pairs, W
/// columns a row, ceil(K/2) rows a panel.
void constrainPairPanels(ImageParam &w, int W, const Expr &K2) {
  w.dim(0).set_bounds(0, 2).set_stride(1);
  w.dim(1).set_bounds(0, W).set_stride(2);
  w.dim(2).set_extent(K2).set_stride(2 * W);
  w.dim(3).set_stride(K2 * 2 * W);
}

/// The linear over bf16 pair panels on AMX tiles (runtime/model/
/// amx_kernels.c), an extern stage: for the avx512_spr variant of a
/// linear without an activation, f32 in and out, panels of a multiple of
/// 32 columns. The pair panels are AMX's B operand layout as stored.
bool linearRunsOnAmx(const KernelSpec &spec, const Target &target) {
  return target.has_feature(Target::AVX512_SapphireRapids) &&
         spec.weightType == ScalarType::BF16 && spec.elementType == ScalarType::F32 &&
         !spec.activation && spec.weightPanel % 32 == 0;
}

/// A linear that is one extern stage of the f32 output: x (f32, [K, M]),
/// w (`weightType`, `weightDims` dimensions, dense or not) and, with a bias,
/// bias (f32, [N]) passed to `symbol`, or to `biasSymbol` with a bias. The
/// output's columns start at 0, its rows are x's, the bias covers its
/// columns; the caller constrains w's layout.
struct LinearExtern {
  ImageParam x, w, bias;
  std::vector<ImageParam> inputs;
  Func out;
};

LinearExtern defineLinearExtern(const KernelSpec &spec, ScalarType weightType, int weightDims,
                                bool weightDense, const std::string &name, const char *symbol,
                                const char *biasSymbol) {
  LinearExtern e;
  e.x = makeInput(ScalarType::F32, 2, "x", false);
  e.w = makeInput(weightType, weightDims, "w", weightDense);
  e.inputs = {e.x, e.w};
  std::vector<ExternFuncArgument> args = {e.x, e.w};
  if (spec.hasBias) {
    e.bias = makeInput(ScalarType::F32, 1, "bias", false);
    e.inputs.push_back(e.bias);
    args.push_back(e.bias);
  }
  e.out = Func(name);
  e.out.define_extern(spec.hasBias ? biasSymbol : symbol, args, Float(32), 2, NameMangling::C);
  OutputImageParam o = e.out.output_buffer();
  if (spec.hasBias)
    e.bias.dim(0).set_bounds(0, o.dim(0).extent());
  o.dim(0).set_min(0);
  o.dim(1).set_bounds(0, e.x.dim(1).extent());
  return e;
}

BuiltKernel buildAmxLinear(const KernelSpec &spec) {
  LinearExtern e = defineLinearExtern(spec, ScalarType::BF16, 4, true, "linear_amx",
                                      kAmxLinearSymbol, kAmxLinearBiasSymbol);
  constrainPairPanels(e.w, static_cast<int>(spec.weightPanel), (e.x.dim(0).extent() + 1) / 2);
  return {e.inputs, e.out};
}

/// Linear over bf16 pair panels [ceil(N/W), ceil(K/2), W, 2]; see the top
/// of this file.
BuiltKernel buildBf16LinearKernel(const KernelSpec &spec, const Target &target) {
  if (linearRunsOnAmx(spec, target))
    return buildAmxLinear(spec);
  const int W = static_cast<int>(spec.weightPanel);
  ImageParam x = makeInput(ScalarType::F32, 2, "x", false),
             w = makeInput(ScalarType::BF16, 4, "w", true);
  ImageParam bias;
  std::vector<ImageParam> inputs = {x, w};
  if (spec.hasBias) {
    bias = makeInput(ScalarType::F32, 1, "bias", false);
    inputs.push_back(bias);
  }
  const Expr M = x.dim(1).extent(), K = x.dim(0).extent(), K2 = (K + 1) / 2,
             N = w.dim(3).extent() * W;
  const int registers = vectorRegisterCount(target);
  const int V = std::max(1, target.natural_vector_size<float>());
  // The tile: `panel_vectors` vectors of columns (each of a pair's two rows
  // on the split path) by `rows` rows.
  const ScheduleParams &params = scheduleFor(spec, target);
  const bool dot = hasBf16DotProduct(target);
  const int64_t panelVectors = scheduleParam(params, "panel_vectors", 2);
  const int64_t rows = scheduleParam(params, "rows", registers >= 32 ? 8 : 5);
  // Live registers: the accumulators, the B vectors (doubled when split)
  // and the broadcast.
  const int64_t bVectors = dot ? panelVectors : 2 * panelVectors;
  if (panelVectors < 1 || rows < 1 || rows > 32 ||
      rows * panelVectors + bVectors + 1 > registers)
    failSpec("bf16 linear schedule: rows " + std::to_string(rows) + " x panel_vectors " +
             std::to_string(panelVectors) + " does not fit in " +
             std::to_string(registers) + " vector registers");
  const int NT = static_cast<int>(panelVectors) * V, MT = static_cast<int>(rows);
  if (W % NT != 0)
    failSpec("bf16 linear: a tile of " + std::to_string(NT) +
             " columns does not divide the " + std::to_string(W) + "-column panel");
  const int parts = W / NT;

  // ALGORITHM
  Var p("p"), k2("k2"), m("m"), n("n"), ni("ni"), no("no");
  // x rounded to bf16, in pairs along K; the row past an odd K is zero (so is
  // the weights'), and rows past M (the last row tile) repeat row M-1.
  Func pairs("linear_x_pairs");
  Expr kk = 2 * k2 + p;
  Expr xv = select(kk < K, x(min(kk, K - 1), clamp(m, 0, M - 1)), 0.0f);
  // The rounding is written out on the bits (Halide would emulate a cast
  // to bf16 and say so): to nearest even, a NaN kept. Without native bf16
  // products the rounded value stays an f32 and a stored bf16 widens by a
  // shift.
  auto widen = [](Expr bf16) {
    return reinterpret<float>(cast<uint32_t>(reinterpret<uint16_t>(bf16)) << 16);
  };
  auto u32 = [](uint32_t v) { return Expr(v); };
  Expr bits = reinterpret<uint32_t>(xv);
  Expr even = select(is_nan(xv), bits | u32(0x400000),
                     (bits + u32(0x7fff) + ((bits >> 16) & u32(1))));
  if (dot)
    pairs(p, k2, m) = reinterpret(BFloat(16), cast<uint16_t>(even >> 16));
  else
    pairs(p, k2, m) = reinterpret<float>(even & u32(0xffff0000u));
  auto weight = [&](Expr pp, Expr col, Expr kp, Expr tile) {
    Expr stored = w(pp, (tile % parts) * NT + col, kp, tile / parts);
    return dot ? cast<float>(stored) : widen(stored);
  };
  Func prod("linear_prod");
  prod(ni, m, no) = 0.0f;
  RDom r;
  if (dot) {
    r = RDom(0, 2, 0, K2, "rk");
    prod(ni, m, no) += cast<float>(pairs(r.x, r.y, m)) * weight(r.x, ni, r.y, no);
  } else {
    r = RDom(0, K2, "rk");
    prod(ni, m, no) += pairs(0, r, m) * weight(0, ni, r, no) +
                       pairs(1, r, m) * weight(1, ni, r, no);
  }
  Expr value = prod(n % NT, m, n / NT);
  if (spec.hasBias)
    value += bias(n);
  if (spec.activation)
    value = activationExpr(*spec.activation, value);
  Func out("linear_out");
  out(n, m) = castToElement(spec, value);

  // SCHEDULE
  Var mo("mo"), mi("mi"), mt("mt");
  out.split(n, no, ni, NT, TailStrategy::GuardWithIf)
      .split(m, mo, mi, MT, TailStrategy::GuardWithIf)
      .reorder(ni, mi, mo, no)
      .parallel(no)
      .vectorize(ni, V, TailStrategy::GuardWithIf);
  // Rounded once per call, before the tasks, in parallel over row blocks.
  pairs.compute_root()
      .split(m, mt, m, 64, TailStrategy::GuardWithIf)
      .parallel(mt)
      .vectorize(k2, V, TailStrategy::GuardWithIf);
  if (dot)
    pairs.vectorize(p, 2);
  prod.compute_at(out, mo)
      .bound_extent(m, MT)
      .bound_extent(no, 1)
      .vectorize(ni, V)
      .unroll(ni)
      .unroll(m);
  if (dot)
    prod.update()
        .reorder(r.x, ni, m, r.y)
        .atomic()
        .vectorize(r.x)
        .vectorize(ni, V)
        .unroll(ni)
        .unroll(m);
  else
    prod.update().reorder(ni, m, r).vectorize(ni, V).unroll(ni).unroll(m);

  OutputImageParam o = out.output_buffer();
  // Dense pair panels; bounds inference checks they cover x's K and the
  // output's columns.
  constrainPairPanels(w, W, K2);
  if (spec.hasBias)
    bias.dim(0).set_bounds(0, o.dim(0).extent());
  o.dim(0).set_min(0);
  o.dim(1).set_bounds(0, M);
  x.set_estimates({{0, 768}, {0, 512}});
  w.set_estimates({{0, 2}, {0, W}, {0, 384}, {0, 768 / W + 1}});
  if (spec.hasBias)
    bias.set_estimates({{0, 768}});
  out.set_estimates({{0, 768}, {0, 512}});
  return {inputs, out};
}

/// The f32 linear as an extern stage (runtime/model/linear_f32.c): for the
/// AVX-512 and AVX2 variants of a linear over f32 panels of kF32PanelWidth
/// columns without an activation (one with an activation stays in the
/// Halide kernel, whose epilogue applies it; the extern computes the
/// products and the bias only). One thread, fraction of the FMA peak at the
/// shapes of BERT, GPT-2 and MiniLM layers: 0.79-0.93 against 0.70-0.79 for
/// the Halide GEMM (Intel Xeon, AVX-512); 5-15% faster than it in
/// alternated runs (AMD EPYC Zen 3, AVX2): benchmarks/README.md.
bool linearRunsF32Extern(const KernelSpec &spec, const Target &target) {
  return targets::cpu::isaOf(target) >= ATTUNE_ISA_AVX2 &&
         spec.weightType == ScalarType::F32 && spec.elementType == ScalarType::F32 &&
         spec.weightPanel == attune::kF32PanelWidth && !spec.activation;
}

BuiltKernel buildF32LinearExtern(const KernelSpec &spec, const Target &target) {
  const int W = static_cast<int>(spec.weightPanel);
  const bool avx512 = targets::cpu::isaOf(target) >= ATTUNE_ISA_AVX512;
  LinearExtern e = defineLinearExtern(
      spec, ScalarType::F32, 3, false, "linear_f32",
      avx512 ? kLinearF32Avx512Symbol : kLinearF32Avx2Symbol,
      avx512 ? kLinearF32Avx512BiasSymbol : kLinearF32Avx2BiasSymbol);
  // Dense panels from 0, as tfm-pack-weights stores them (the extern takes
  // an output region starting on a panel: the output's columns start at 0).
  e.w.dim(0).set_bounds(0, W).set_stride(1);
  e.w.dim(1).set_bounds(0, e.x.dim(0).extent()).set_stride(W);
  e.w.dim(2).set_min(0).set_stride(W * e.x.dim(0).extent());
  return {e.inputs, e.out};
}

} // namespace

BuiltKernel buildLinearKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "linear");
  if (spec.weightType == ScalarType::BF16)
    return buildBf16LinearKernel(spec, target);
  if (linearRunsF32Extern(spec, target))
    return buildF32LinearExtern(spec, target);
  // Any strides: A is read as scalars and B through the packed panel.
  const ScalarType e = spec.elementType;
  const int W = static_cast<int>(spec.weightPanel);
  ImageParam x = makeInput(e, 2, "x", false),
             w = makeInput(e, W > 0 ? 3 : 2, "w", false);
  ImageParam bias;
  std::vector<ImageParam> inputs = {x, w};
  if (spec.hasBias) {
    bias = makeInput(e, 1, "bias", false);
    inputs.push_back(bias);
  }
  // x[M, K] is (k, m); w[K, N] is (n, k), or pre-packed [ceil(N/W), K, W]
  // (c, k, panel) with zeros past N, whose columns all exist: the N the
  // GEMM may read up to is the stored width (the output says the real N).
  const Expr M = x.dim(1).extent(), K = x.dim(0).extent(),
             N = W > 0 ? w.dim(2).extent() * W : w.dim(0).extent();
  GemmTiles t = chooseGemmTiles(spec, target);
  if (W > 0)
    t = prePackedTiles(t, W, target);
  // An activation in the tile's loop nest with every register in use made
  // LLVM spill an accumulator each K step (AVX2's 3 x 4: 1.25x slower on
  // all-MiniLM-L6-v2): one row fewer keeps a register free.
  const int panelVectors = t.panel / t.vec;
  if (spec.activation && t.rows > 1 &&
      (t.rows + 1) * panelVectors + 1 >= vectorRegisterCount(target))
    --t.rows;
  // ALGORITHM
  // Pre-packed: tile panel `no` (t.panel columns, dividing W) is part
  // no % (W / t.panel) of stored panel no / (W / t.panel), so its element
  // ni is read at a constant offset plus ni: a dense vector load. A tile
  // spanning panels (wider than W, which vectors divide) reads column no *
  // t.panel + ni of panel (no * t.panel + ni) / W: a dense load per vector,
  // each within one panel; a last
  // tile's panels past the stored ones read the last (their columns are
  // past N, never stored).
  std::function<Expr(Expr, Expr, Expr)> prePackedAt;
  if (W > 0 && t.panel > W) {
    prePackedAt = [&, W](Expr ni, Expr kk, Expr no) {
      Expr column = no * t.panel + ni;
      return w(column % W, kk, min(column / W, w.dim(2).extent() - 1));
    };
  } else if (W > 0) {
    const int parts = W / t.panel;
    prePackedAt = [&, parts](Expr ni, Expr kk, Expr no) {
      return w((no % parts) * t.panel + ni, kk, no / parts);
    };
  }
  GemmPipeline g = defineGemm(
      spec, "linear", [&](Expr kk, Expr mm, Expr) { return x(kk, mm); },
      [&](Expr nn, Expr kk, Expr) { return w(nn, kk); }, M, N, K, t,
      spec.hasBias ? std::function<Expr(Expr)>([&](Expr nn) { return bias(nn); })
                   : nullptr,
      /*batched=*/false, prePackedAt);
  Func out = g.out;
  g.bDenseN = w.dim(0).stride() == 1;
  // SCHEDULE
  scheduleGemmCPU(g, t);

  OutputImageParam o = out.output_buffer();
  if (W > 0) {
    // Dense panels; bounds inference checks the output fits the panels,
    // except for a tile spanning panels, whose last panels are clamped:
    // there the panels are exactly the output's (as tfm-pack-weights
    // stores them).
    w.dim(0).set_bounds(0, W).set_stride(1);
    w.dim(1).set_extent(K).set_stride(W);
    w.dim(2).set_stride(K * W);
    if (t.panel > W)
      w.dim(2).set_extent((o.dim(0).extent() + W - 1) / W);
  } else {
    w.dim(1).set_extent(K);
    o.dim(0).set_bounds(0, N);
  }
  if (spec.hasBias)
    bias.dim(0).set_bounds(0, o.dim(0).extent());
  o.dim(0).set_min(0);
  o.dim(1).set_bounds(0, M);
  x.set_estimates({{0, 768}, {0, 512}});
  if (W > 0)
    w.set_estimates({{0, W}, {0, 768}, {0, 768 / W + 1}});
  else
    w.set_estimates({{0, 768}, {0, 768}});
  if (spec.hasBias)
    bias.set_estimates({{0, 768}});
  out.set_estimates({{0, 768}, {0, 512}});
  return {inputs, out};
}

BuiltKernel buildComplexLinearKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "complex_linear");
  // Any strides, as Linear's: A is read as scalars and B through the panel.
  const ScalarType e = spec.elementType;
  ImageParam x = makeInput(e, 2, "x", false), wr = makeInput(e, 2, "wr", false),
             wi = makeInput(e, 2, "wi", false);
  ImageParam br, bi;
  std::vector<ImageParam> inputs = {x, wr, wi};
  if (spec.hasBias) {
    br = makeInput(e, 1, "br", false);
    bi = makeInput(e, 1, "bi", false);
    inputs.push_back(br);
    inputs.push_back(bi);
  }
  // x[M, 2K] is (k2, m); wr and wi [K, N] are (n, k).
  const Expr M = x.dim(1).extent(), K = wr.dim(1).extent(), N = wr.dim(0).extent();
  GemmTiles t = chooseGemmTiles(spec, target);
  // ALGORITHM
  // (x_r + i x_i)(W_r + i W_i) + (b_r + i b_i) on [real | imaginary] rows is
  // the real product [x_r | x_i] [[W_r, W_i], [-W_i, W_r]] + [b_r | b_i]:
  // one GEMM of 2K x 2N whose B is that block matrix, formed as the panels
  // are packed (so once per panel, not per row tile) and never stored
  // whole. Columns n2 < N are real outputs, rows k2 < K multiply x_r.
  auto blockWeight = [&](Expr n2, Expr k2, Expr) {
    Expr realOut = n2 < N, realIn = k2 < K;
    Expr n = clamp(select(realOut, n2, n2 - N), 0, N - 1);
    Expr k = clamp(select(realIn, k2, k2 - K), 0, K - 1);
    Expr re = cast<float>(wr(n, k)), im = cast<float>(wi(n, k));
    return select(realIn == realOut, re, realOut, -im, im);
  };
  std::function<Expr(Expr)> blockBias;
  if (spec.hasBias)
    blockBias = [&](Expr n2) {
      return select(n2 < N, cast<float>(br(clamp(n2, 0, N - 1))),
                    cast<float>(bi(clamp(n2 - N, 0, N - 1))));
    };
  GemmPipeline g = defineGemm(
      spec, "complex_linear", [&](Expr kk, Expr mm, Expr) { return x(kk, mm); },
      blockWeight, M, 2 * N, 2 * K, t, blockBias, /*batched=*/false);
  g.bDenseN = wr.dim(0).stride() == 1 && wi.dim(0).stride() == 1;
  // SCHEDULE
  scheduleGemmCPU(g, t);

  x.dim(0).set_extent(2 * K);
  wi.dim(0).set_extent(N);
  wi.dim(1).set_extent(K);
  if (spec.hasBias) {
    br.dim(0).set_bounds(0, N);
    bi.dim(0).set_bounds(0, N);
  }
  OutputImageParam o = g.out.output_buffer();
  o.dim(0).set_bounds(0, 2 * N);
  o.dim(1).set_bounds(0, M);
  x.set_estimates({{0, 512}, {0, 512}});
  wr.set_estimates({{0, 256}, {0, 256}});
  wi.set_estimates({{0, 256}, {0, 256}});
  if (spec.hasBias) {
    br.set_estimates({{0, 256}});
    bi.set_estimates({{0, 256}});
  }
  g.out.set_estimates({{0, 512}, {0, 512}});
  return {inputs, g.out};
}

BuiltKernel buildMatmulKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "matmul");
  // Any strides (batch broadcast by stride 0, transposed views): A is read
  // as scalars and B through the packed panel.
  const ScalarType e = spec.elementType;
  ImageParam a = makeInput(e, 3, "a", false), b = makeInput(e, 3, "b", false);
  // a is (k, m, bt), or (m, k, bt) when transposeA; b is (n, k, bt), or
  // (k, n, bt) when transposeB.
  const bool tA = spec.transposeA, tB = spec.transposeB;
  const Expr M = tA ? a.dim(0).extent() : a.dim(1).extent();
  const Expr K = tA ? a.dim(1).extent() : a.dim(0).extent();
  const Expr N = tB ? b.dim(1).extent() : b.dim(0).extent();
  GemmTiles t = chooseGemmTiles(spec, target);
  // ALGORITHM
  GemmPipeline g = defineGemm(
      spec, "matmul",
      [&](Expr kk, Expr mm, Expr bb) {
        return tA ? a(mm, kk, bb) : a(kk, mm, bb);
      },
      [&](Expr nn, Expr kk, Expr bb) {
        return tB ? b(kk, nn, bb) : b(nn, kk, bb);
      },
      M, N, K, t, /*biasAt=*/nullptr, /*batched=*/true);
  g.bDenseN = b.dim(tB ? 1 : 0).stride() == 1;
  // SCHEDULE
  scheduleGemmCPU(g, t);

  b.dim(tB ? 0 : 1).set_extent(K);
  b.dim(2).set_extent(a.dim(2).extent());
  OutputImageParam o = g.out.output_buffer();
  o.dim(0).set_bounds(0, N);
  o.dim(1).set_bounds(0, M);
  o.dim(2).set_bounds(0, a.dim(2).extent());
  a.set_estimates({{0, 512}, {0, 512}, {0, 12}});
  b.set_estimates({{0, 512}, {0, 512}, {0, 12}});
  g.out.set_estimates({{0, 512}, {0, 512}, {0, 12}});
  return {{a, b}, g.out};
}

BuiltKernel buildSoftmaxKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "softmax");
  ImageParam x = makeInput(spec.elementType, 2, "x", true);
  const Expr L = x.dim(0).extent();
  const int V = std::max(1, target.natural_vector_size<float>());
  const Expr negInf = Expr(-std::numeric_limits<float>::infinity());

  // ALGORITHM
  // softmax(x)_l = exp(x_l - max x) / sum exp(x - max x). A row of -inf (all
  // masked) has no defined softmax; it outputs 0, as fused attention does.
  Var l("l"), row("row"), lane("lane");
  RDom r(0, L, "rl");
  Func rowMax("softmax_row_max"), e("softmax_exp"), rowSum("softmax_row_sum"),
      out("softmax_out");
  rowMax(row) = negInf;
  rowMax(row) = max(rowMax(row), cast<float>(x(r, row)));
  Expr shifted = cast<float>(x(l, row)) - rowMax(row);
  // fast_exp is only valid above the float underflow; below it the weight
  // is 0 (this also maps -inf and NaN from an all -inf row to 0).
  e(l, row) = select(shifted > -87.0f, fast_exp(shifted), 0.0f);
  rowSum(row) = 0.0f;
  rowSum(row) += e(r, row);
  out(l, row) = castToElement(
      spec, select(rowSum(row) > 0.0f, e(l, row) / rowSum(row), 0.0f));

  // SCHEDULE
  OutputImageParam o = out.output_buffer();
  o.dim(0).set_bounds(0, L);
  o.dim(1).set_bounds(0, x.dim(1).extent());
  x.set_estimates({{0, 512}, {0, 6144}});
  out.set_estimates({{0, 512}, {0, 6144}});
  RVar ro("ro"), ri("ri");
  if (isGpuTarget(target)) {
    // One block per row: each reduction in kGpuThreads lanes (one per
    // thread, in shared memory) that one thread then combines; the
    // exponentials are recomputed for the output rather than stored.
    Var lv("l_v"), ll("l_l");
    out.split(l, lv, ll, kGpuThreads, TailStrategy::GuardWithIf)
        .reorder(lv, ll, row)
        .gpu_blocks(row)
        .gpu_threads(ll);
    for (Func *reduction : {&rowMax, &rowSum}) {
      reduction->compute_at(out, row);
      Func lanes = reduction->update().split(r, ro, ri, kGpuThreads).rfactor(ri, lane);
      lanes.compute_at(out, row).gpu_threads(lane);
      lanes.update().gpu_threads(lane);
    }
    return {{x}, out};
  }
  // Rows in parallel (groups of 8 to amortise task overhead); within a row
  // the reductions are split into V lanes (rfactor) so that they vectorise.
  Var rowo("rowo"), rowi("rowi");
  out.split(row, rowo, rowi, 8, TailStrategy::GuardWithIf)
      .parallel(rowo)
      .vectorize(l, V, TailStrategy::GuardWithIf);
  rowMax.compute_at(out, rowi);
  Func maxLanes = rowMax.update().split(r, ro, ri, V).rfactor(ri, lane);
  maxLanes.compute_at(rowMax, row).vectorize(lane);
  maxLanes.update().vectorize(lane);
  e.compute_at(out, rowi).vectorize(l, V, TailStrategy::GuardWithIf);
  rowSum.compute_at(out, rowi);
  Func sumLanes = rowSum.update().split(r, ro, ri, V).rfactor(ri, lane);
  sumLanes.compute_at(rowSum, row).vectorize(lane);
  sumLanes.update().vectorize(lane);
  return {{x}, out};
}

} // namespace attune::codegen::detail
