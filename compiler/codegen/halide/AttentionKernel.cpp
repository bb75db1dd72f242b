//===- AttentionKernel.cpp - Fused attention (Halide) ---------------------===//
//
// softmax(scale * Q K^T + modifiers) V without storing the Sq x Sk scores.
//
// Which code runs an attention (buildAttentionKernel):
//  - bf16 attentions on AMX CPUs: runtime/model/amx_kernels.c, an extern
//    stage (runsOnAmx);
//  - f32 attentions on the avx2, avx512 and avx512_spr levels, without an
//    additive mask, softcapping or content modifiers: runtime/model/
//    attention_f32.c, an extern stage (flashSymbol) whose online softmax
//    keeps a running state across key blocks, which this pipeline cannot;
//    decode-shaped calls still take this file's decode path (see
//    buildFlashAttention);
//  - everything else (masks, softcapping, Shaw/Transformer-XL/DeBERTa,
//    f16/bf16 elsewhere, the baseline level, GPUs): the Halide pipeline
//    below.
//
// The kernel works on a tile of query rows at a time (one (b, h, tile) per
// parallel task). For each block of keys it computes, in cache:
//
//   S_blk = (scale * Q_tile) K_blk^T          register-tiled GEMM #1
//   m_blk = rowmax(S_blk), P_blk = exp(S_blk - m_blk), l_blk = rowsum(P_blk)
//   O_blk = P_blk V_blk                       register-tiled GEMM #2
//
// and keeps (O_blk, m_blk, l_blk) per block; once every key block of the tile
// is done the partials are merged with the usual log-sum-exp rescaling:
//
//   M = max_blk m_blk,  w_blk = exp(m_blk - M),
//   out = sum_blk w_blk O_blk / sum_blk w_blk l_blk.
//
// This is the online softmax of FlashAttention with the rescale of the running
// accumulator moved out of the key loop ("split-K" form): every block is
// normalised by its own maximum, so no block depends on another and the whole
// kernel is made of pure Halide Funcs (a running state updated across blocks
// would need a Func that reads itself through another Func, which Halide does
// not allow). The per-tile state is O(Sq_tile * Dv * Sk / keyBlock) floats,
// never O(Sq * Sk): at S = 4096, D = 64 it is 3 x 384 KiB per thread, in L2.
//
// Masks: a score that is masked (causal, key padding, a key past Sk in the
// last block) is -inf; P = 0 wherever s - m_blk is -inf or NaN (a block whose
// keys are all masked has m_blk = -inf), so the exponential never sees -inf,
// and a row whose keys are all masked ends with l = 0 and outputs 0. Causal
// blocks past the diagonal of a tile are never computed: the merge walks key
// blocks through an RDom whose predicate bounds it by the tile's last row, and
// bounds inference sizes the per-block work from it. A modifier that masks
// every key before some distance (a sliding window) bounds it from below the
// same way (ScoreModifier::visibleDeltas).
//
// Score modifiers (ALiBi, T5 buckets, a sliding window, ...; see
// compiler/modifiers) add bias(h, j - i') to each score, i' = i + Sk - Sq.
// The kernel evaluates the bias once per distance a tile spans, into a small
// table computed per task, and reads it per score: never Sq x Sk values.
// Content terms (Shaw, Transformer-XL, DeBERTa) add x . table[row(j - i')]
// for the query or key row x: looked up through a window per vector of rows
// when the row saturates within a short distance, else computed per key
// block as a product over distances beside GEMM #1 (see defineAttention);
// Shaw's value term is folded into GEMM #2 per block. On AVX2 and AVX-512
// the f32 extern stage (runtime/model/attention_f32.c) takes the content
// and value terms (see modifiersFitFlash), from tables by distance this
// kernel computes (flashContent).
//
// Decoding (Sq <= kDecodeRows, a few queries against a KV cache) takes
// another path in the same kernel, selected at run time: dot products
// vectorised along d, keys split into chunks processed in parallel and
// merged like the blocks (FlashDecoding), K and V read once.
//
// Schedule parameters (KernelSpec::schedules, per ISA; a missing one takes
// the formula's value, an invalid one is rejected by failSpec naming it so a
// tuner can skip it). V is the vector width in floats (16 on AVX-512, 8 on
// AVX2, 4 on SSE); R the vector registers (32 on AVX-512, else 16):
//
//   query_tile  query rows per parallel task; GEMM #1 vectorises over them.
//               A multiple of V, at most 16 V. Default 3 V (R = 32), 6 V
//               (R = 16).
//   key_block   keys per block of the split-K softmax. A multiple of
//               key_unroll, at most 4096. Default (R = 32) 256, 128 when
//               causal; (R = 16) 96.
//   score_vectors  query rows of GEMM #1's register tile, in vectors; it
//               divides query_tile / V. Default 3 (R = 32), 2 (R = 16).
//   key_unroll  keys of GEMM #1's register tile (score_vectors vectors x
//               key_unroll accumulators). >= 1. Default 8 (R = 32), 6 (16).
//   value_cols  output columns of GEMM #2's register tile (headDim here is
//               Dv, the value head dim): headDim, or a
//               multiple of V that divides headDim. Default (R = 32):
//               headDim up to 6 V, else 4 V when that divides headDim, else
//               headDim; (R = 16): 2 V when that divides headDim.
//   value_rows  query rows of GEMM #2's register tile (value_cols / V
//               vectors x value_rows). Divides query_tile. Default: 24
//               accumulators (R = 32), 12 (R = 16), as far as query_tile
//               allows.
//
// A register tile of a vectors x n accumulators needs (n + 1) a + 1
// registers (the accumulators, the a operand vectors LLVM loads once per
// step and reuses, the broadcast): more than R spills in the inner loop and
// is refused. (The formula's GEMM #2 tile can exceed R for head dims with
// many vectors and no multiple of the preferred width: slow, still correct.)
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/modifiers/ScoreModifier.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <limits>
#include <string>

namespace attune::codegen::detail {
namespace {

using namespace Halide;

/// Scores are kept in base 2 (log2(e) is folded into the scale), so that
/// probabilities are 2^(s - max). Below this, 2^x is under FLT_MIN: the
/// weight is exactly 0, which also keeps fastExp2 inside its valid range.
constexpr float kExp2Floor = -126.0f;

/// 2^t for t in [-126, 0]: t = k + f with k = round(t), f in [-0.5, 0.5];
/// 2^f by a degree-4 minimax polynomial (relative error 3e-6), 2^k by adding
/// k to the exponent bits. 9 vector ops, against about 16 for Halide's
/// fast_exp (whose range reduction and clamping this shape makes
/// unnecessary); the exponential is ~15% of the kernel's instructions.
Expr fastExp2(const Expr &t) {
  Expr k = round(t);
  Expr f = t - k;
  Expr poly =
      (((0.009594103f * f + 0.05591741f) * f + 0.24024136f) * f + 0.69312179f) *
          f +
      0.99999946f;
  Expr bits = reinterpret<int32_t>(poly) + (cast<int32_t>(k) << 23);
  return reinterpret<float>(bits);
}

constexpr double kLog2E = 1.4426950408889634;

/// The decode path (see defineAttention): up to this many query rows, keys
/// in parallel chunks of kDecodeChunk.
constexpr int kDecodeRows = 16;
constexpr int kDecodeChunk = 256;

/// Tile sizes (see the parameter table at the top).
struct AttentionTiles {
  int vec = 16;       // floats per vector register
  int queryTile = 48; // query rows per task (GEMM #1 vectorises over them)
  int keyBlock = 128; // keys per block: S=128 is one block, little causal waste
  int scoreVectors = 3; // GEMM #1 register tile: scoreVectors x keyUnroll
  int keyUnroll = 8;
  int valueCols = 64; // GEMM #2 register tile: valueCols x valueRows
  int valueRows = 6;
};

/// Vector registers a register tile of `vectors` x `count` accumulators
/// needs: the accumulators, the `vectors` operand vectors LLVM loads once
/// per reduction step and reuses, and the broadcast scalar.
int tileRegisters(int vectors, int count) { return (count + 1) * vectors + 1; }

/// The formula (see the parameter table at the top).
AttentionTiles defaultTiles(const Target &target, int headDim, bool causal) {
  AttentionTiles t;
  t.vec = std::max(1, target.natural_vector_size<float>());
  const int R = vectorRegisterCount(target);
  const int vectorsPerRow = (headDim + t.vec - 1) / t.vec;
  if (R >= 32) {
    // 24 of 32 zmm accumulate in both GEMMs: 3 x 8 and (64 floats) x 6.
    t.queryTile = 3 * t.vec;
    t.scoreVectors = 3;
    t.keyUnroll = 8;
    // Longer GEMM #2 loops and half the per-block work (statistics, partial
    // stores, merge) gained 3-4% without a mask; causal loses more to the
    // masked half of a diagonal block than that.
    t.keyBlock = causal ? 128 : 256;
    if (vectorsPerRow <= 6) {
      t.valueCols = headDim;
      t.valueRows = std::max(1, 24 / vectorsPerRow);
    } else if (headDim % (4 * t.vec) == 0) {
      t.valueCols = 4 * t.vec;
      t.valueRows = 6;
    } else {
      t.valueCols = headDim;
      t.valueRows = std::max(1, 24 / vectorsPerRow);
    }
  } else {
    // 16 registers: the 3 x 4 tiles that fill 12 accumulators need 17
    // registers with their operands and spilled every step. 2 x 6 (GEMM #1)
    // and (2 vectors) x 6 (GEMM #2) use 15, over 48 query rows.
    t.queryTile = 6 * t.vec;
    t.scoreVectors = 2;
    t.keyUnroll = 6;
    t.keyBlock = 96;
    if (headDim % (2 * t.vec) == 0) {
      t.valueCols = 2 * t.vec;
      t.valueRows = 6;
    } else {
      t.valueCols = headDim;
      t.valueRows = std::max(1, 12 / vectorsPerRow);
    }
  }
  // Keep the query tile a multiple of the GEMM #2 row tile.
  while (t.queryTile % t.valueRows != 0)
    --t.valueRows;
  return t;
}

ScheduleParams toParams(const AttentionTiles &t) {
  return {{"query_tile", t.queryTile},   {"key_block", t.keyBlock},
          {"score_vectors", t.scoreVectors}, {"key_unroll", t.keyUnroll},
          {"value_cols", t.valueCols},   {"value_rows", t.valueRows}};
}

/// The tiles `spec` asks for on `target`; fails on an invalid parameter.
AttentionTiles chooseTiles(const KernelSpec &spec, const Target &target) {
  // GEMM #2's tile is along the value head dim, the only dim a tile sizes.
  const int headDim = static_cast<int>(spec.valueHeadDim());
  AttentionTiles t = defaultTiles(target, headDim, spec.causal);
  const ScheduleParams &params = scheduleFor(spec, target);
  auto get = [&](const char *name, int fallback, int64_t lo, int64_t hi) {
    int64_t value = scheduleParam(params, name, fallback);
    if (value < lo || value > hi)
      failSpec(std::string("attention schedule: ") + name + " must be in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
               std::to_string(value));
    return static_cast<int>(value);
  };
  const int V = t.vec, R = vectorRegisterCount(target);
  t.queryTile = get("query_tile", t.queryTile, V, 16 * V);
  if (t.queryTile % V != 0)
    failSpec("attention schedule: query_tile must be a multiple of the "
             "vector width " + std::to_string(V) + ", got " +
             std::to_string(t.queryTile));
  // A query_tile given alone keeps GEMM #1's tile when that divides it.
  int scoreFallback = t.scoreVectors;
  if ((t.queryTile / V) % scoreFallback != 0)
    scoreFallback = 1;
  t.scoreVectors = get("score_vectors", scoreFallback, 1, t.queryTile / V);
  if ((t.queryTile / V) % t.scoreVectors != 0)
    failSpec("attention schedule: score_vectors " +
             std::to_string(t.scoreVectors) + " does not divide query_tile / " +
             std::to_string(V) + " = " + std::to_string(t.queryTile / V));
  t.keyUnroll = get("key_unroll", t.keyUnroll, 1, 64);
  t.keyBlock = get("key_block", t.keyBlock, 1, 4096);
  if (t.keyBlock % t.keyUnroll != 0)
    failSpec("attention schedule: key_block " + std::to_string(t.keyBlock) +
             " is not a multiple of key_unroll " +
             std::to_string(t.keyUnroll));
  if (tileRegisters(t.scoreVectors, t.keyUnroll) > R)
    failSpec("attention schedule: score_vectors x key_unroll = " +
             std::to_string(t.scoreVectors * t.keyUnroll) +
             " accumulators do not fit in " + std::to_string(R) +
             " vector registers with their operands");
  t.valueCols = get("value_cols", t.valueCols, 1, headDim);
  if (t.valueCols != headDim &&
      (t.valueCols % V != 0 || headDim % t.valueCols != 0))
    failSpec("attention schedule: value_cols must be headDim or a multiple "
             "of " + std::to_string(V) + " dividing headDim " +
             std::to_string(headDim) + ", got " +
             std::to_string(t.valueCols));
  int rowsFallback = std::min(t.valueRows, t.queryTile);
  while (t.queryTile % rowsFallback != 0)
    --rowsFallback;
  t.valueRows = get("value_rows", rowsFallback, 1, t.queryTile);
  if (t.queryTile % t.valueRows != 0)
    failSpec("attention schedule: value_rows " + std::to_string(t.valueRows) +
             " does not divide query_tile " + std::to_string(t.queryTile));
  const int valueVectors = (t.valueCols + V - 1) / V;
  // The formula may exceed the registers for head dims with many vectors
  // and no multiple of the preferred width (slow, still correct); a value
  // given explicitly must fit.
  if ((params.count("value_cols") || params.count("value_rows")) &&
      tileRegisters(valueVectors, t.valueRows) > R)
    failSpec("attention schedule: value_cols / " + std::to_string(V) +
             " x value_rows = " + std::to_string(valueVectors * t.valueRows) +
             " accumulators do not fit in " + std::to_string(R) +
             " vector registers with their operands");
  // No call has more keys than keyBound: a longer block would compute
  // masked keys only (a 256-key block over 64 keys does 4x the work).
  if (spec.keyBound > 0 && spec.keyBound < t.keyBlock)
    t.keyBlock = static_cast<int>((spec.keyBound + t.keyUnroll - 1) / t.keyUnroll) *
                 t.keyUnroll;
  // No call has more queries than queryBound: when they fit one tile of at
  // most 4 vectors that computes fewer rows than the tiles would (64 rows,
  // not two 48-row tiles), take it, with GEMM #1's and #2's row tiles
  // dividing it.
  if (spec.queryBound > 0) {
    const int64_t rows = (spec.queryBound + V - 1) / V * V;
    const int64_t tiled = (spec.queryBound + t.queryTile - 1) / t.queryTile * t.queryTile;
    if (rows <= 4 * V && rows < tiled) {
      t.queryTile = static_cast<int>(rows);
      while ((t.queryTile / V) % t.scoreVectors != 0)
        --t.scoreVectors;
      while (t.queryTile % t.valueRows != 0)
        --t.valueRows;
    }
  }
  return t;
}

/// Every Func and Var of the kernel, so the schedule can name them.
struct AttentionPipeline {
  std::vector<ImageParam> inputs;
  ImageParam q, k, v;
  /// The score modifiers in Halide (their inputs are among `inputs`).
  ModifierBias modifiers;
  ImageParam mask; // defined when spec.hasMask
  ImageParam keyPadding; // defined when spec.hasKeyPadding
  Func modifierBias; // defined when a modifier has a bias
  /// Each modifier's own bias (ModifierBias::terms), for the extern stages
  /// that sum them themselves.
  std::vector<Func> biasTerms;
  /// Content terms (Shaw, Transformer-XL, DeBERTa), per term: by lookup,
  /// the products of the query tile (query side, per task) or of every key
  /// (key side, per call) with the table's rows; by distance, the table
  /// expanded per distance and the per-block product (see defineAttention).
  struct ContentFuncs {
    bool querySide = true, byDistance = false;
    Func product, offsetProduct, tableByRow, table, window;
  };
  std::vector<ContentFuncs> content;
  /// Shaw's value term: per block, the probability mass at each clipped
  /// distance (the two edges summed, the band gathered).
  Func valueWeight, edgeBefore, edgeAfter;
  RDom rv;
  /// The decode path (see defineAttention), when `decodes`: `decoded` is
  /// its output (c, i, h, b), which `out` selects when decodeCondition holds.
  bool decodes = false;
  Expr decodeCondition, decoded;
  Var dj{"dj"}, dc{"dc"};
  Func decodeDot{"attn_decode_dot"}, decodeScore{"attn_decode_score"},
      decodeMax{"attn_decode_max"}, decodeProb{"attn_decode_prob"},
      decodeSum{"attn_decode_sum"}, decodeAcc{"attn_decode_acc"},
      decodePartial{"attn_decode_partial"}, decodeRowMax{"attn_decode_row_max"},
      decodeWeight{"attn_decode_weight"}, decodeRowSum{"attn_decode_row_sum"},
      decodeRowAcc{"attn_decode_row_acc"};
  RDom rc, rcc;
  Func keyRotated;   // defined with rope: k rotated, once per call
  Func queryRotated{"attn_q_rotated"}; // defined with rope: the tile's q rotated
  bool ropeInterleaved = false;
  int ropeHalf = 0; // rotary dims / 2
  RopeTables rope;   // defined with rope
  Var c{"c"}, d{"d"}, i{"i"}, jj{"jj"}, kb{"kb"}, h{"h"}, b{"b"};
  Func qScaled{"attn_q_scaled"}, scoreAcc{"attn_score_acc"},
      score{"attn_score"}, blockMax{"attn_block_max"}, prob{"attn_prob"},
      blockSum{"attn_block_sum"}, pvAcc{"attn_pv_acc"}, partial{"attn_partial"},
      rowMax{"attn_row_max"}, weight{"attn_block_weight"},
      rowSum{"attn_row_sum"}, rowAcc{"attn_row_acc"}, out{"attn_out"};
  RDom rd, rj, rkb;
};

/// Shapes every attention kernel relies on (q [D, Sq, H, B], k [D, Sk,
/// Hkv, B], v [Dv, Sk, Hkv, B], out [Dv, Sq, H, B]); a mismatch is a
/// runtime error naming the buffer rather than an out-of-bounds read.
void constrainAttentionShapes(ImageParam &q, ImageParam &k, ImageParam &v, OutputImageParam o,
                              int D, int Dv) {
  q.dim(0).set_bounds(0, D);
  k.dim(0).set_bounds(0, D);
  v.dim(0).set_bounds(0, Dv);
  v.dim(1).set_extent(k.dim(1).extent());
  v.dim(2).set_extent(k.dim(2).extent());
  k.dim(3).set_extent(q.dim(3).extent());
  v.dim(3).set_extent(q.dim(3).extent());
  o.dim(0).set_bounds(0, Dv);
  o.dim(1).set_bounds(0, q.dim(1).extent());
  o.dim(2).set_bounds(0, q.dim(2).extent());
  o.dim(3).set_bounds(0, q.dim(3).extent());
}

// ALGORITHM
AttentionPipeline defineAttention(const KernelSpec &spec,
                                  const AttentionTiles &t) {
  AttentionPipeline p;
  const int D = static_cast<int>(spec.headDim);
  const int Dv = static_cast<int>(spec.valueHeadDim());
  const int KB = t.keyBlock;
  const Expr negInf = Expr(-std::numeric_limits<float>::infinity());

  // f16/bf16 tensors are widened on load; all arithmetic is f32.
  const ScalarType e = spec.elementType;
  ImageParam q = makeInput(e, 4, "q", true), k = makeInput(e, 4, "k", true),
             v = makeInput(e, 4, "v", true);
  p.inputs = {q, k, v};
  p.q = q;
  p.k = k;
  p.v = v;
  ImageParam mask, keyPad;
  if (spec.hasMask) {
    // Broadcast dimensions have stride 0, so no stride is fixed.
    mask = makeInput(e, 4, "mask", false);
    p.inputs.push_back(mask);
    p.mask = mask;
  }
  if (spec.hasKeyPadding) {
    keyPad = makeInput(spec.keyPaddingType, 2, "keyPadding", true);
    p.inputs.push_back(keyPad);
    p.keyPadding = keyPad;
  }
  auto f32 = [](Expr x) { return cast<float>(x); };
  ModifierBias bias;
  if (!spec.modifiers.empty()) {
    bias = declareModifierBias(spec, q.dim(2).extent());
    p.inputs.insert(p.inputs.end(), bias.inputs.begin(), bias.inputs.end());
    if (bias.func.defined())
      p.modifierBias = bias.func;
    p.biasTerms = bias.terms;
    p.modifiers = bias;
  }

  Var &c = p.c, &d = p.d, &i = p.i, &jj = p.jj, &kb = p.kb, &h = p.h, &b = p.b;
  const Expr Sq = q.dim(1).extent(), Sk = k.dim(1).extent();
  const Expr H = q.dim(2).extent(), Hkv = k.dim(2).extent();
  // GQA: query head h reads key/value head h / (H / Hkv).
  const Expr group = max(H / max(Hkv, 1), 1);
  const Expr hk = h / group;
  // Causal alignment when Sq != Sk: query i sees keys j <= i + (Sk - Sq).
  const Expr diag = Sk - Sq;
  const Expr numBlocks = (Sk + KB - 1) / KB;

  // Q^T of the tile, pre-scaled: GEMM #1 vectorises over query rows. Rows
  // past Sq (the last tile) read row Sq-1; their output is never stored.
  // With RoPE, q is rotated at its position here and k into keyRotated
  // (once per call, see the schedule).
  const Expr row = clamp(i, 0, Sq - 1);
  Expr qValue = f32(q(d, row, h, b));
  if (spec.rope.enabled) {
    p.rope = declareRopeTables(spec.rope);
    p.ropeInterleaved = spec.rope.interleaved;
    p.ropeHalf = static_cast<int>(spec.rope.rotaryDims / 2);
    const int32_t offset = static_cast<int32_t>(spec.rope.positionOffset);
    // Rotated along d (q's own layout: q and the tables load densely),
    // then read transposed by qScaled as plain q is.
    p.queryRotated(d, i, h, b) = ropeRotate(
        spec.rope, p.rope, [&](Expr e) { return f32(q(e, row, h, b)); }, d,
        row + diag + offset, D);
    qValue = p.queryRotated(d, i, h, b);
    Var j("j"), g("g");
    p.keyRotated(d, j, g, b) = ropeRotate(
        spec.rope, p.rope, [&](Expr e) { return f32(k(e, j, g, b)); }, d,
        j + offset, D);
  }
  p.qScaled(i, d, h, b) = qValue * cast<float>(Expr(spec.scale * kLog2E));

  // GEMM #1: raw scores of key block kb, i innermost.
  p.rd = RDom(0, D, "rd");
  const Expr key = kb * KB + jj;
  const Expr keyClamped = min(key, Sk - 1);
  p.scoreAcc(i, jj, kb, h, b) = 0.0f;
  p.scoreAcc(i, jj, kb, h, b) +=
      p.qScaled(i, p.rd, h, b) *
      (p.keyRotated.defined() ? Expr(p.keyRotated(p.rd, keyClamped, hk, b))
                              : f32(k(p.rd, keyClamped, hk, b)));

  // The terms every score gets from the mask and the modifiers' biases, for
  // query row i and key `at` (shared with the decode path below).
  auto addMaskAndBias = [&](Expr s, const Expr &at) {
    const Expr atClamped = min(at, Sk - 1);
    // Softcapping, before anything is added: c * tanh(x / c) on the natural
    // score x is C * tanh(s / C) on the base-2 one, C = c * log2(e).
    if (spec.softcap > 0) {
      const double cap = spec.softcap * kLog2E;
      s = static_cast<float>(cap) * tanhExpr(s * static_cast<float>(1.0 / cap));
    }
    if (spec.hasMask) {
      // The mask is added in the graph's units, scale * q.k + m, and the sum
      // taken to base 2 after: a finite fill such as -1e9 rounds the sum to
      // its own grid (64 at 1e9), and a row it masks entirely is the softmax
      // of those rounded sums. Adding m * log2(e) to base-2 scores would
      // round on another grid (128 at 1.44e9) and give another row.
      // In base 2 a mask of finfo.min overflows to -inf, which would turn a
      // row masked by a finite fill into 0 instead of the uniform average
      // the graph computes (s + finfo.min == finfo.min): finite sums are
      // clamped to stay finite. -inf is told apart by its bits: Halide
      // compiles float compares with LLVM's no-infs flag, under which
      // `m == -inf` folds to false.
      Expr m = f32(mask(atClamped, row, h, b));
      Expr isNegInf =
          reinterpret<uint32_t>(m) == Internal::make_const(UInt(32), 0xFF800000u);
      const float lowest = -std::numeric_limits<float>::max() / static_cast<float>(kLog2E);
      Expr natural = s * static_cast<float>(1.0 / kLog2E) + m;
      s = select(isNegInf, negInf, max(natural, lowest) * static_cast<float>(kLog2E));
    }
    // Modifiers: a function of the head and the key-query distance, looked
    // up per score from a per-tile table of distances (scheduled below).
    if (p.modifierBias.defined())
      s += p.modifierBias(atClamped - (row + diag), h) * static_cast<float>(kLog2E);
    return s;
  };
  // The distances j - i' at which a key can be visible at all: at most 0
  // when causal, and what the modifiers allow.
  const VisibleDistances visible = visibleDistances(spec, /*withCausal=*/true);
  // Whether query row i sees key `at`: keys past Sk, outside the visible
  // distances (after the diagonal when causal, outside a window, tested on
  // integers: VisibleDistances::contains), and padding are masked.
  auto keyVisible = [&](const Expr &at) {
    Expr allowed = at < Sk && visible.contains(at - (i + diag));
    if (spec.hasKeyPadding) {
      Expr attend = keyPad(min(at, Sk - 1), b);
      if (!attend.type().is_bool())
        attend = attend != cast(attend.type(), 0);
      allowed = allowed && attend;
    }
    return allowed;
  };

  Expr s = addMaskAndBias(p.scoreAcc(i, jj, kb, h, b), key);
  const Expr delta = keyClamped - (row + diag);
  // Content terms, in the scaled base-2 units of the scores. Two ways,
  // chosen per term (see ContentFuncs):
  //  - lookup: x . table[r] for each row r once, per tile (query side) or
  //    per call (key side), then one lookup per score: through a window per
  //    vector of query rows on the query side (a dense load, see below), a
  //    gather on the key side (the row differs across the vector of query
  //    rows). For rows that saturate within a short distance (Shaw's clip,
  //    narrow DeBERTa spans);
  //  - by distance: the table expanded to one row per distance u = i' - j,
  //    E(u) = table[row(-u)], and the term computed per key block as a
  //    second product beside GEMM #1, sum_d x_d E(i' - j, d): along the
  //    vector of query rows u is consecutive, so E loads densely. The work
  //    of another GEMM #1, and no gathers (Transformer-XL, whose rows follow
  //    the distance; DeBERTa's wide log buckets).
  const float contentScale = static_cast<float>(spec.scale * kLog2E);
  const int vectorWidth = t.vec;
  for (size_t term = 0; term < bias.content.size(); ++term) {
    const ModifierBias::Content &c = bias.content[term];
    AttentionPipeline::ContentFuncs f;
    f.querySide = c.querySide;
    const std::string name = "attn_content" + std::to_string(term);
    Var r("r"), j("j"), u("u"), dd("dd");
    // scale * offset_h . row(x) for each table row x (XL's v . r): the part
    // of (q_i + offset) . table[row] that is the same for every query row.
    auto offsetProduct = [&](const Var &x, const std::function<Expr(Expr)> &rowElement) {
      Func product(name + "_offset");
      RDom ro(0, D, "ro");
      product(x, h) = sum(c.offset(ro, h) * rowElement(ro)) * contentScale;
      return product;
    };
    Expr keyValue = p.keyRotated.defined() ? Expr(p.keyRotated(p.rd, keyClamped, hk, b))
                                           : f32(k(p.rd, keyClamped, hk, b));
    f.byDistance = c.saturation < 0 || c.saturation > kContentLookupDistance;
    if (f.byDistance) {
      // u = i' - j from unclamped rows and keys: consecutive along the
      // vector; rows past Sq and keys past Sk are never stored or unmasked.
      const Expr distance = (i + diag) - key;
      f.table = Func(name + "_by_distance");
      f.table(u, dd, h) = c.table(dd, h, clamp(c.row(-u), 0, c.rows - 1)) *
                          (c.querySide ? 1.0f : contentScale);
      f.product = Func(name + "_product");
      Expr init = 0.0f;
      if (c.offset.defined()) {
        f.offsetProduct = offsetProduct(u, [&](Expr e) { return f.table(u, e, h); });
        init = f.offsetProduct(distance, h);
      }
      f.product(i, jj, kb, h, b) = init;
      f.product(i, jj, kb, h, b) +=
          (c.querySide ? Expr(p.qScaled(i, p.rd, h, b)) : keyValue) *
          f.table(distance, p.rd, h);
      s += f.product(i, jj, kb, h, b);
    } else if (c.querySide) {
      // (q_i + offset) . table[r]: qScaled carries the scale already.
      f.product = Func(name + "_q");
      Expr init = 0.0f;
      if (c.offset.defined()) {
        f.offsetProduct = offsetProduct(r, [&](Expr e) { return c.table(e, h, r); });
        init = f.offsetProduct(r, h);
      }
      f.product(i, r, h, b) = init;
      f.product(i, r, h, b) += p.qScaled(i, p.rd, h, b) * c.table(p.rd, h, r);
      // Looked up through a window per vector of V query rows: with u =
      // j - i'_0 (i'_0 the vector's first row), row i'_0 + l sees distance
      // u - l, and every key more than the saturation distance before or
      // after the vector reads the window's edge. The lookup index is then
      // the same across the vector's lanes, a dense load, and the gathers
      // are the window's, V + 2 D_s per row per tile instead of one per
      // score.
      const int W = vectorWidth, Ds = static_cast<int>(c.saturation);
      const Expr lane = i % W, first = i - lane;
      f.window = Func(name + "_window");
      f.window(i, u, h, b) = f.product(i, clamp(c.row(u - lane), 0, c.rows - 1), h, b);
      s += f.window(i, clamp(key - diag - first, -Ds, W - 1 + Ds), h, b);
    } else {
      // k_j . table[r] for every key, once per call; the table's rows
      // transposed so that the product vectorises over them.
      f.tableByRow = Func(name + "_by_row");
      f.tableByRow(r, dd, h) = c.table(dd, h, r);
      f.product = Func(name + "_k");
      Expr anyKey = p.keyRotated.defined() ? Expr(p.keyRotated(p.rd, j, hk, b))
                                           : f32(k(p.rd, j, hk, b));
      f.product(r, j, h, b) = 0.0f;
      f.product(r, j, h, b) += anyKey * f.tableByRow(r, p.rd, h) * contentScale;
      s += f.product(clamp(c.row(delta), 0, c.rows - 1), keyClamped, h, b);
    }
    p.content.push_back(f);
  }
  p.score(i, jj, kb, h, b) = select(keyVisible(key), s, negInf);

  // Per-block softmax statistics.
  // The keys of block kb that exist: all KB but in the last block, where
  // the predicate (solved for rj) ends every loop over the block's keys at
  // Sk. A short sequence then costs its keys, not a whole block.
  p.rj = RDom(0, KB, "rj");
  p.rj.where(kb * KB + p.rj < Sk);
  p.blockMax(i, kb, h, b) = negInf;
  p.blockMax(i, kb, h, b) =
      max(p.blockMax(i, kb, h, b), p.score(i, p.rj, kb, h, b));
  Expr x = p.score(i, jj, kb, h, b) - p.blockMax(i, kb, h, b);
  // False for -inf and NaN (all-masked block): those weights are 0.
  p.prob(i, jj, kb, h, b) = select(x > kExp2Floor, fastExp2(x), 0.0f);
  p.blockSum(i, kb, h, b) = 0.0f;
  p.blockSum(i, kb, h, b) += p.prob(i, p.rj, kb, h, b);

  // GEMM #2: this block's unnormalised output, c innermost.
  p.pvAcc(c, i, kb, h, b) = 0.0f;
  p.pvAcc(c, i, kb, h, b) +=
      p.prob(i, p.rj, kb, h, b) * f32(v(c, min(kb * KB + p.rj, Sk - 1), hk, b));
  if (bias.value) {
    // Shaw's value term: sum_j p_ij table[clip(delta, -K, K) + K]. The block's
    // probabilities are summed by clipped distance: the keys at K or more
    // before (after) the query share row 0 (2K), each distance between has
    // one key, gathered. Then a (2K + 1)-deep product adds the rows.
    const int K = bias.value->maxDistance;
    Var r("r");
    const Expr blockDelta = kb * KB + p.rj - (row + diag);
    p.edgeBefore = Func("attn_value_before");
    p.edgeBefore(i, kb, h, b) = 0.0f;
    p.edgeBefore(i, kb, h, b) +=
        select(blockDelta <= -K, p.prob(i, p.rj, kb, h, b), 0.0f);
    p.edgeAfter = Func("attn_value_after");
    p.edgeAfter(i, kb, h, b) = 0.0f;
    p.edgeAfter(i, kb, h, b) += select(blockDelta >= K, p.prob(i, p.rj, kb, h, b), 0.0f);
    const Expr bandKey = row + diag + (r - K) - kb * KB;
    Expr band = select(bandKey >= 0 && bandKey < KB,
                       p.prob(i, clamp(bandKey, 0, KB - 1), kb, h, b), 0.0f);
    p.valueWeight = Func("attn_value_weight");
    p.valueWeight(i, r, kb, h, b) =
        select(r == 0, p.edgeBefore(i, kb, h, b),
               r == 2 * K, p.edgeAfter(i, kb, h, b), band);
    p.rv = RDom(0, 2 * K + 1, "rv");
    p.pvAcc(c, i, kb, h, b) +=
        p.valueWeight(i, p.rv, kb, h, b) * bias.value->table(c, p.rv);
  }

  // Everything the merge needs from one block, as one Func so that it can be
  // computed per block yet read after the key loop. The statistics repeat
  // across c; only c = 0 is read.
  p.partial(c, i, kb, h, b) =
      Tuple(p.pvAcc(c, i, kb, h, b), p.blockMax(i, kb, h, b),
            p.blockSum(i, kb, h, b));

  // Merge the blocks. Blocks wholly outside the keys a row can see (after
  // its diagonal when causal, before a sliding window) are never computed:
  // the predicate bounds the blocks of each tile.
  p.rkb = RDom(0, numBlocks, "rkb");
  // One where() per bound, each solved for rkb: bounds inference then sizes
  // the tile's blocks from both (written as `rkb * KB + KB - 1 >= ...`, the
  // lower bound made it give up on both and compute every block).
  if (visible.boundedAbove())
    p.rkb.where(p.rkb * KB <= i + diag + static_cast<int32_t>(visible.hi));
  if (visible.boundedBelow())
    p.rkb.where(p.rkb >= (i + diag + static_cast<int32_t>(visible.lo)) / KB);
  p.rowMax(i, h, b) = negInf;
  p.rowMax(i, h, b) = max(p.rowMax(i, h, b), p.partial(0, i, p.rkb, h, b)[1]);
  Expr y = p.partial(0, i, kb, h, b)[1] - p.rowMax(i, h, b);
  p.weight(i, kb, h, b) = select(y > kExp2Floor, fastExp2(y), 0.0f);
  p.rowSum(i, h, b) = 0.0f;
  p.rowSum(i, h, b) +=
      p.partial(0, i, p.rkb, h, b)[2] * p.weight(i, p.rkb, h, b);
  p.rowAcc(c, i, h, b) = 0.0f;
  p.rowAcc(c, i, h, b) +=
      p.partial(c, i, p.rkb, h, b)[0] * p.weight(i, p.rkb, h, b);

  Expr den = p.rowSum(i, h, b);
  Expr result = select(den > 0.0f, p.rowAcc(c, i, h, b) / den, 0.0f);

  // DECODE: a few query rows against many keys (kDecodeRows or fewer, the
  // shape of generating with a KV cache). A query tile of t.queryTile rows
  // would compute (and GEMM #1 would vectorise over) mostly rows that are
  // not there. Instead each row's scores are dot products vectorised along
  // d, and the keys are split into chunks of kDecodeChunk, processed in
  // parallel, each with its own softmax statistics, merged as the blocks
  // above are (FlashDecoding's split over keys). K and V are each read once.
  // The output selects this path when Sq <= kDecodeRows; the schedule
  // specialises on the same condition, so each branch computes only its
  // own Funcs. Content and value terms (Shaw, Transformer-XL, DeBERTa) keep
  // the tiled path (and the f32 extern stage computes every call of theirs).
  p.decodes = bias.content.empty() && !bias.value;
  if (p.decodes) {
    const int KC = kDecodeChunk;
    Var &j = p.dj, &cc = p.dc;
    Expr keyRow = p.keyRotated.defined()
                      ? Expr(p.keyRotated(p.rd, min(j, Sk - 1), hk, b))
                      : f32(k(p.rd, min(j, Sk - 1), hk, b));
    p.decodeDot(j, i, h, b) = 0.0f;
    p.decodeDot(j, i, h, b) += p.qScaled(i, p.rd, h, b) * keyRow;
    p.decodeScore(j, i, h, b) =
        select(keyVisible(j), addMaskAndBias(p.decodeDot(j, i, h, b), j), negInf);
    p.rc = RDom(0, KC, "rc");
    const Expr chunkKey = cc * KC + p.rc;
    p.decodeMax(cc, i, h, b) = negInf;
    p.decodeMax(cc, i, h, b) = max(p.decodeMax(cc, i, h, b), p.decodeScore(chunkKey, i, h, b));
    Expr xd = p.decodeScore(j, i, h, b) - p.decodeMax(j / KC, i, h, b);
    p.decodeProb(j, i, h, b) = select(xd > kExp2Floor, fastExp2(xd), 0.0f);
    p.decodeSum(cc, i, h, b) = 0.0f;
    p.decodeSum(cc, i, h, b) += p.decodeProb(chunkKey, i, h, b);
    p.decodeAcc(c, cc, i, h, b) = 0.0f;
    p.decodeAcc(c, cc, i, h, b) +=
        p.decodeProb(chunkKey, i, h, b) * f32(v(c, min(chunkKey, Sk - 1), hk, b));
    p.decodePartial(c, cc, i, h, b) = Tuple(
        p.decodeAcc(c, cc, i, h, b), p.decodeMax(cc, i, h, b), p.decodeSum(cc, i, h, b));
    // Merge the chunks, skipping those a sliding window or the diagonal
    // hides, as the blocks above.
    p.rcc = RDom(0, (Sk + KC - 1) / KC, "rcc");
    if (visible.boundedAbove())
      p.rcc.where(p.rcc * KC <= i + diag + static_cast<int32_t>(visible.hi));
    if (visible.boundedBelow())
      p.rcc.where(p.rcc >= (i + diag + static_cast<int32_t>(visible.lo)) / KC);
    p.decodeRowMax(i, h, b) = negInf;
    p.decodeRowMax(i, h, b) =
        max(p.decodeRowMax(i, h, b), p.decodePartial(0, p.rcc, i, h, b)[1]);
    Expr yd = p.decodePartial(0, cc, i, h, b)[1] - p.decodeRowMax(i, h, b);
    p.decodeWeight(cc, i, h, b) = select(yd > kExp2Floor, fastExp2(yd), 0.0f);
    p.decodeRowSum(i, h, b) = 0.0f;
    p.decodeRowSum(i, h, b) +=
        p.decodePartial(0, p.rcc, i, h, b)[2] * p.decodeWeight(p.rcc, i, h, b);
    p.decodeRowAcc(c, i, h, b) = 0.0f;
    p.decodeRowAcc(c, i, h, b) +=
        p.decodePartial(c, p.rcc, i, h, b)[0] * p.decodeWeight(p.rcc, i, h, b);
    Expr decodeDen = p.decodeRowSum(i, h, b);
    p.decoded = select(decodeDen > 0.0f, p.decodeRowAcc(c, i, h, b) / decodeDen, 0.0f);
    p.decodeCondition = Sq <= kDecodeRows;
    result = select(p.decodeCondition, p.decoded, result);
  }
  result = require(H % max(Hkv, 1) == 0, result, "attention: query heads", H,
                   "not a multiple of key/value heads", Hkv);
  p.out(c, i, h, b) = castToElement(spec, result);

  constrainAttentionShapes(q, k, v, p.out.output_buffer(), D, Dv);
  if (spec.hasMask) {
    mask.dim(0).set_extent(Sk);
    mask.dim(1).set_extent(Sq);
    mask.dim(2).set_extent(H);
    mask.dim(3).set_extent(q.dim(3).extent());
  }
  if (spec.hasKeyPadding) {
    keyPad.dim(0).set_bounds(0, Sk);
    keyPad.dim(1).set_bounds(0, q.dim(3).extent());
  }

  // Estimates for an autoscheduler baseline: BERT-base-like shapes.
  q.set_estimates({{0, D}, {0, 512}, {0, 12}, {0, 1}});
  k.set_estimates({{0, D}, {0, 512}, {0, 12}, {0, 1}});
  v.set_estimates({{0, Dv}, {0, 512}, {0, 12}, {0, 1}});
  if (spec.hasMask)
    mask.set_estimates({{0, 512}, {0, 512}, {0, 12}, {0, 1}});
  if (spec.hasKeyPadding)
    keyPad.set_estimates({{0, 512}, {0, 1}});
  p.out.set_estimates({{0, Dv}, {0, 512}, {0, 12}, {0, 1}});
  return p;
}

// SCHEDULE
/// The decode path's Funcs (see defineAttention), computed per task of
/// `stage`, a stage of `consumer` that computes p.decoded: one task per
/// (head, batch), its rows together, the chunks of keys in parallel inside
/// it. Names the stage's task loop `task`.
void scheduleDecodeCPU(AttentionPipeline &p, Func consumer, Stage stage, const Var &task, int V,
                       TailStrategy headTail) {
  Var &c = p.c, &i = p.i, &h = p.h, &b = p.b;
  Var io("io"), ii("ii"), ioh("ioh");
  stage.split(i, io, ii, kDecodeRows, TailStrategy::GuardWithIf)
      .fuse(io, h, ioh)
      .fuse(ioh, b, task)
      .parallel(task)
      .vectorize(c, V, headTail);
  Var dj = p.dj, dc = p.dc;
  const TailStrategy guard = TailStrategy::GuardWithIf;
  p.decodePartial.compute_at(consumer, task)
      .reorder(c, i, dc)
      .parallel(dc)
      .vectorize(c, V, headTail);
  // Per chunk: each row's dot products along d, vector accumulators
  // reduced once per key; the statistics and P V along the chunk.
  p.decodeDot.compute_at(p.decodePartial, dc).vectorize(dj, V, guard);
  p.decodeDot.update().reorder(p.rd, dj, i).atomic().vectorize(p.rd, V);
  p.decodeScore.compute_at(p.decodePartial, dc).vectorize(dj, V, guard);
  p.decodeMax.compute_at(p.decodePartial, dc);
  p.decodeMax.update().atomic().vectorize(p.rc, V);
  p.decodeProb.compute_at(p.decodePartial, dc).vectorize(dj, V, guard);
  p.decodeSum.compute_at(p.decodePartial, dc);
  p.decodeSum.update().atomic().vectorize(p.rc, V);
  p.decodeAcc.compute_at(p.decodePartial, dc).vectorize(c, V, headTail);
  p.decodeAcc.update().reorder(c, p.rc, i).vectorize(c, V, headTail).unroll(c);
  // The merge, per task.
  p.decodeRowMax.compute_at(consumer, task);
  p.decodeWeight.compute_at(consumer, task);
  p.decodeRowSum.compute_at(consumer, task);
  p.decodeRowAcc.compute_at(consumer, task).vectorize(c, V, headTail);
  p.decodeRowAcc.update().reorder(c, p.rcc, i).vectorize(c, V, headTail);
}

/// RoPE's Funcs (see defineAttention), for a consumer whose task loop is
/// `task`: the tables once per call, and k rotated once per call into a
/// buffer of k's size, which GEMM #1 reads as it would read k. (Rotating
/// each key block inside the task rotated every key once per query tile:
/// a third of the kernel's time at S = 2048.)
void scheduleRopeCPU(AttentionPipeline &p, Func consumer, const Var &task, const Target &target,
                     int V, TailStrategy qkTail) {
  scheduleRopeTables(p.rope, target);
  std::vector<Var> args = p.keyRotated.args();
  Var gb("gb");
  p.keyRotated.compute_root().fuse(args[2], args[3], gb).parallel(gb);
  p.queryRotated.compute_at(consumer, task);
  // Split halves (LLaMA, NeoX): one loop per half of the rotary dims, so
  // that each vector's partner and table rows are dense (d + R/2 or
  // d - R/2, not a select between them per lane, which is a gather).
  for (Func rotated : {p.keyRotated, p.queryRotated}) {
    Var dim = rotated.args()[0];
    if (!p.ropeInterleaved && p.ropeHalf % V == 0) {
      Var dh("dh"), dl("dl");
      rotated.split(dim, dh, dl, p.ropeHalf, TailStrategy::GuardWithIf)
          .unroll(dh)
          .vectorize(dl, V);
    } else {
      rotated.vectorize(dim, V, qkTail);
    }
  }
}

void scheduleAttentionCPU(AttentionPipeline &p, const AttentionTiles &t, int headDim, int valueDim,
                          const Target &target) {
  Var &c = p.c, &i = p.i, &jj = p.jj, &kb = p.kb, &h = p.h, &b = p.b;
  const int QT = t.queryTile, V = t.vec;
  // Loops along the value head dim (the output, GEMM #2) and along q and k's.
  const TailStrategy headTail =
      valueDim % V == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf;
  const TailStrategy qkTail =
      headDim % V == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf;

  // One task per (query tile, head, batch). The last tile is guarded; the
  // per-block producers below are computed over whole, aligned tiles
  // (align_bounds) so that the micro-kernels have constant extents and
  // unroll. (A causal tile whose leading rows see no key can need rows of
  // two aligned tiles; that is the only case where more than QT rows are
  // computed.)
  Var io("io"), ii("ii"), task("task"), ioh("ioh");
  if (p.decodes) {
    // DECODE (Sq <= kDecodeRows), in the output's specialisation. The Funcs
    // both paths share (qScaled, the modifier bias, rotated k) are computed
    // at `task` in either.
    scheduleDecodeCPU(p, p.out, p.out.specialize(p.decodeCondition), task, V, headTail);
  }
  p.out.split(i, io, ii, QT, TailStrategy::GuardWithIf)
      .fuse(io, h, ioh)
      .fuse(ioh, b, task)
      .parallel(task)
      .vectorize(c, V, headTail);

  // Merge, per tile. These Funcs are computed over exactly the rows the
  // tile needs (fewer when the causal predicate empties leading rows), never
  // more, so that they never ask for partials outside the tile.
  const TailStrategy guard = TailStrategy::GuardWithIf;
  p.rowMax.compute_at(p.out, task).vectorize(i, V, guard);
  p.rowMax.update().vectorize(i, V, guard);
  p.weight.compute_at(p.out, task).vectorize(i, V, guard);
  p.rowSum.compute_at(p.out, task).vectorize(i, V, guard);
  p.rowSum.update().vectorize(i, V, guard);
  p.rowAcc.compute_at(p.out, task).vectorize(c, V, headTail);
  p.rowAcc.update().reorder(c, p.rkb, i).vectorize(c, V, headTail);

  // Q^T, once per tile.
  p.qScaled.compute_at(p.out, task).align_bounds(i, QT).vectorize(i, V);

  if (p.keyRotated.defined())
    scheduleRopeCPU(p, p.out, task, target, V, qkTail);

  // Modifier bias of every distance the tile's scores span (about Sk + QT
  // values per task, against QT x Sk scores): GEMM #1's rows read it as a
  // contiguous run, reversed.
  if (p.modifierBias.defined())
    p.modifierBias.compute_at(p.out, task)
        .vectorize(p.modifierBias.args()[0], V, TailStrategy::GuardWithIf);

  // Content terms: the query tile's products with every table row it can
  // need, per tile, register-tiled as GEMM #1 is; every key's products once
  // per call. The rows are inlined into the lookups: bounds inference sizes
  // the products from them (Transformer-XL's rows follow the distance, so a
  // tile needs about Sk + query_tile of them, fewer when causal).
  for (AttentionPipeline::ContentFuncs &f : p.content) {
    std::vector<Var> args = f.product.args();
    if (f.byDistance) {
      // The expanded table once per call; the product beside GEMM #1, on
      // the same register tile (scheduled with it below).
      std::vector<Var> targs = f.table.args();
      Var dh("dh");
      f.table.compute_root().fuse(targs[1], targs[2], dh).parallel(dh).vectorize(
          targs[0], V, TailStrategy::GuardWithIf);
      if (f.offsetProduct.defined())
        f.offsetProduct.compute_root().vectorize(f.offsetProduct.args()[0], V,
                                                 TailStrategy::GuardWithIf);
      continue;
    }
    if (f.querySide) {
      Var ro("ro"), ri("ri"), io("io"), ii("ii");
      if (f.offsetProduct.defined())
        f.offsetProduct.compute_at(p.out, task);
      f.product.compute_at(p.out, task).align_bounds(args[0], QT).vectorize(args[0], V);
      f.product.update()
          .split(args[1], ro, ri, t.keyUnroll, TailStrategy::GuardWithIf)
          .split(args[0], io, ii, t.scoreVectors * V)
          .reorder(ii, ri, p.rd, io, ro)
          .vectorize(ii, V)
          .unroll(ii)
          .unroll(ri);
      f.window.compute_at(p.out, task).align_bounds(f.window.args()[0], QT).vectorize(
          f.window.args()[0], V);
    } else {
      Var hb("hb"), ro("ro"), ri("ri");
      f.tableByRow.compute_root();
      f.product.compute_root().fuse(args[2], args[3], hb).parallel(hb).vectorize(
          args[0], V, TailStrategy::GuardWithIf);
      f.product.update()
          .fuse(args[2], args[3], hb)
          .parallel(hb)
          .split(args[0], ro, ri, V, TailStrategy::GuardWithIf)
          .reorder(ri, p.rd, ro, args[1], hb)
          .vectorize(ri);
    }
  }

  // Key-block loop: partial is computed per tile, block by block; the
  // scores, probabilities and statistics of one block live inside it.
  Var co("co"), ci("ci"), ro("ro"), ri("ri");
  p.partial.compute_at(p.out, task)
      .align_bounds(i, QT)
      .split(i, ro, ri, t.valueRows)
      .split(c, co, ci, t.valueCols)
      .reorder(ci, ri, co, ro, kb)
      .vectorize(ci, V, headTail);

  // GEMM #1: scoreVectors vectors of query rows x keyUnroll keys of
  // accumulators; each strip of rows walks the whole key block.
  Var jo("jo"), ji("ji"), so("so"), si("si");
  p.score.compute_at(p.partial, kb)
      .align_bounds(i, QT)
      .split(i, so, si, t.scoreVectors * V)
      .split(jj, jo, ji, t.keyUnroll, TailStrategy::RoundUp)
      .reorder(si, ji, jo, so)
      .vectorize(si, V);
  if (p.mask.defined()) {
    // A padding mask [B, 1, 1, Sk] has stride 0 along the query rows, which
    // this loop vectorises over: one scalar per key instead of a gather.
    p.score.specialize(p.mask.dim(1).stride() == 0);
  }
  p.scoreAcc.compute_at(p.score, jo).vectorize(i, V).unroll(i).unroll(jj);
  p.scoreAcc.update().reorder(i, jj, p.rd).vectorize(i, V).unroll(i).unroll(jj);
  for (AttentionPipeline::ContentFuncs &f : p.content)
    if (f.byDistance) {
      f.product.compute_at(p.score, jo).vectorize(i, V).unroll(i).unroll(jj);
      f.product.update().reorder(i, jj, p.rd).vectorize(i, V).unroll(i).unroll(jj);
    }

  // Row statistics of the block: QT/V vector accumulators kept in registers
  // across the block's keys (the rows are a whole number of tiles).
  Var bo("bo"), bi("bi");
  p.blockMax.compute_at(p.partial, kb).vectorize(i, V);
  p.blockMax.update()
      .split(i, bo, bi, QT)
      .reorder(bi, p.rj, bo)
      .vectorize(bi, V)
      .unroll(bi);
  p.prob.compute_at(p.partial, kb).vectorize(i, V);
  p.blockSum.compute_at(p.partial, kb).vectorize(i, V);
  p.blockSum.update()
      .split(i, bo, bi, QT)
      .reorder(bi, p.rj, bo)
      .vectorize(bi, V)
      .unroll(bi);

  // GEMM #2: valueCols x valueRows accumulators over the block's keys.
  p.pvAcc.compute_at(p.partial, co)
      .vectorize(c, V, headTail)
      .unroll(c)
      .unroll(i);
  p.pvAcc.update()
      .reorder(c, i, p.rj)
      .vectorize(c, V, headTail)
      .unroll(c)
      .unroll(i);
  if (p.valueWeight.defined()) {
    // Shaw's value term: the block's mass by distance, then its product
    // with the table on the same register tile as GEMM #2.
    for (Func edge : {p.edgeBefore, p.edgeAfter}) {
      edge.compute_at(p.partial, kb).vectorize(i, V);
      edge.update().split(i, bo, bi, QT).reorder(bi, p.rj, bo).vectorize(bi, V).unroll(bi);
    }
    p.valueWeight.compute_at(p.partial, kb).vectorize(i, V);
    p.pvAcc.update(1)
        .reorder(c, i, p.rv)
        .vectorize(c, V, headTail)
        .unroll(c)
        .unroll(i);
  }
}

} // namespace

/// Whether every modifier of `spec` only adds a bias of (head, distance)
/// (ALiBi, T5 buckets, a sliding window): the extern stages read those from
/// a table over distances (biasTableArgument); content and value terms they
/// have not.
static bool modifiersAreBiasOnly(const KernelSpec &spec) {
  for (const ModifierSpec &modifier : spec.modifiers) {
    const modifiers::ScoreModifier *definition = modifiers::lookupModifier(modifier.name);
    if (!definition || !definition->contentTerms(modifier.params).empty() ||
        definition->valueTerm(modifier.params))
      return false;
  }
  return true;
}

/// Whether runtime/model/attention_f32.c applies every modifier of `spec`:
/// biases of (head, distance); content terms it computes by distance
/// (tables per head or shared, on the query or the key side, with
/// Transformer-XL's offset v on the query side folded into a bias); and
/// key-side head vectors (Transformer-XL's u), a bias per key; and Shaw's
/// value term (at most one, as ModifierBias takes). Query-side head vectors
/// and content terms with RoPE (whose rotated keys the stage does not
/// transpose) keep the pipeline.
static bool modifiersFitFlash(const KernelSpec &spec) {
  for (const ModifierSpec &modifier : spec.modifiers) {
    const modifiers::ScoreModifier *definition = modifiers::lookupModifier(modifier.name);
    if (!definition)
      return false;
    for (const modifiers::ContentTerm &term : definition->contentTerms(modifier.params))
      if (spec.rope.enabled || (term.form == modifiers::ContentTerm::HeadVector &&
                                term.side == modifiers::ContentTerm::Query))
        return false;
  }
  return true;
}

/// Whether the extern stages can apply `spec`'s RoPE (or it has none): an
/// even number of rotary dims within the head, an offset their int
/// positions hold.
static bool ropeFitsExtern(const KernelSpec &spec) {
  return !spec.rope.enabled ||
         (spec.rope.rotaryDims >= 2 && spec.rope.rotaryDims % 2 == 0 &&
          spec.rope.rotaryDims <= spec.headDim && spec.rope.positionOffset >= 0 &&
          spec.rope.positionOffset <= INT32_MAX / 2);
}

/// RoPE's constants as the extern stages take them (extern_stage.h's
/// ropeTables): theta, then the fine cos and sin (RopeConstants); one
/// unused element without RoPE.
static Buffer<double> ropeTableArgument(const KernelSpec &spec) {
  const int half = spec.rope.enabled ? static_cast<int>(spec.rope.rotaryDims / 2) : 0;
  Buffer<double> table(std::max(half * (1 + 2 * kRopeStep), 1), "attn_extern_rope");
  table.fill(0.0);
  if (spec.rope.enabled) {
    const RopeConstants c = ropeConstants(spec.rope);
    double *at = table.data();
    for (const std::vector<double> *part : {&c.theta, &c.fineCos, &c.fineSin})
      at = std::copy(part->begin(), part->end(), at);
  }
  return table;
}

/// Whether this attention runs on AMX tiles (runtime/model/amx_kernels.c)
/// in the variant for `target`: bf16 q, k, v, or f32 ones with bf16
/// products, on a CPU with AMX (Halide's avx512_sapphirerapids), plain or
/// causal, with or without key padding and RoPE (q and k rotated in f32
/// as they are packed, then rounded to bf16), head dims multiples of 32 up
/// to 256. Additive masks, modifiers and softcapping keep the Halide
/// pipeline (in f32). The extern chooses per call: with at most 16 query
/// rows per kv head (decoding) it streams K and V in AVX-512 instead of
/// tiling them.
static bool runsOnAmx(const KernelSpec &spec, const Target &target) {
  const int64_t D = spec.headDim, Dv = spec.valueHeadDim();
  const bool bf16 = spec.elementType == ScalarType::BF16 ||
                    (spec.elementType == ScalarType::F32 && spec.bf16Products);
  return target.has_feature(Target::AVX512_SapphireRapids) && bf16 && !spec.hasMask &&
         modifiersAreBiasOnly(spec) && ropeFitsExtern(spec) && spec.softcap == 0 &&
         D % 32 == 0 && Dv % 32 == 0 && D <= 256 && Dv <= 256;
}

/// The smallest value head dim runtime/model/attention_f32.c takes (its
/// kFlashMinValueDim: GEMM #2's column groups are 8 wide).
constexpr int64_t kFlashMinValueDim = 8;
/// Its key block when the tuning database has none: blocks of 96 to 256
/// keys were within 5% of each other at S = 2048, D = 64 (Intel Xeon, both
/// ISAs), 64 slower by 3-10%.
constexpr int kFlashKeyBlock = 128;

/// The extern stage of runtime/model/attention_f32.c that the variant for
/// `target` runs this attention as, or null (the Halide pipeline): f32
/// tensors with f32 products, no additive mask or softcapping, modifiers
/// it applies (modifiersFitFlash), RoPE the extern applies, a value head dim
/// of at least kFlashMinValueDim, on an AVX-512 or AVX2 level (the baseline
/// level and GPUs keep the pipeline).
static const char *flashSymbol(const KernelSpec &spec, const Target &target) {
  if (isGpuTarget(target) || spec.elementType != ScalarType::F32 || spec.bf16Products ||
      spec.hasMask || spec.softcap != 0 || !ropeFitsExtern(spec) ||
      !modifiersFitFlash(spec) || spec.valueHeadDim() < kFlashMinValueDim)
    return nullptr;
  const attune_isa_t isa = targets::cpu::isaOf(target);
  if (isa >= ATTUNE_ISA_AVX512)
    return kFlashAttentionAvx512Symbol;
  if (isa == ATTUNE_ISA_AVX2)
    return kFlashAttentionAvx2Symbol;
  return nullptr;
}

std::vector<ScheduleParams> attentionScheduleCandidates(const KernelSpec &spec,
                                                        const Target &target) {
  // The value head dim sizes GEMM #2's tiles.
  const int D = static_cast<int>(std::max<int64_t>(spec.valueHeadDim(), 1));
  const AttentionTiles base = defaultTiles(target, D, spec.causal);
  // The AMX kernel has no schedule parameters: nothing to time.
  if (runsOnAmx(spec, target))
    return {toParams(base)};
  // The f32 extern stage's register tiles are fixed by its ISA; its key
  // block is the one parameter (the formula's first).
  if (flashSymbol(spec, target)) {
    std::vector<ScheduleParams> out = {{{"flash_key_block", kFlashKeyBlock}}};
    for (int KB : {64, 96, 128, 192, 256})
      if (KB != kFlashKeyBlock)
        out.push_back({{"flash_key_block", KB}});
    return out;
  }
  const int V = base.vec, R = vectorRegisterCount(target);
  std::vector<ScheduleParams> out = {toParams(base)};
  // A register tile is worth timing when it fits with its operands and
  // keeps at least 8 accumulators (fewer cannot hide the FMA latency on two
  // FMA pipes).
  auto worth = [&](int vectors, int count) {
    return tileRegisters(vectors, count) <= R && vectors * count >= 8;
  };
  std::vector<int> colChoices = {D};
  for (int cols = V; cols < D; cols += V)
    if (D % cols == 0)
      colChoices.push_back(cols);
  for (int qv : {2, 3, 4, 6}) {
    const int QT = qv * V;
    for (int sv = 1; sv <= qv; ++sv) {
      if (qv % sv != 0)
        continue;
      // The two largest key unrolls that fit.
      int kuMax = (R - 1) / sv - 1;
      for (int ku = kuMax; ku >= std::max(1, kuMax - 1); --ku) {
        if (!worth(sv, ku))
          continue;
        for (int KB : {64, 96, 128, 192, 256}) {
          if (KB % ku != 0)
            continue;
          // GEMM #2: for each column width, the most rows that fit.
          for (int cols : colChoices) {
            const int cv = (cols + V - 1) / V;
            int rows = std::min((R - 1) / cv - 1, QT);
            while (rows >= 1 && QT % rows != 0)
              --rows;
            if (rows < 1 || !worth(cv, rows))
              continue;
            AttentionTiles t = base;
            t.queryTile = QT;
            t.scoreVectors = sv;
            t.keyUnroll = ku;
            t.keyBlock = KB;
            t.valueCols = cols;
            t.valueRows = rows;
            ScheduleParams p = toParams(t);
            if (p != out.front())
              out.push_back(p);
          }
        }
      }
    }
  }
  return out;
}

/// The score modifiers' biases as an extern stage's argument
/// (runtime/model/extern_stage.h's isBiasTable): table(x, h, m) is
/// modifier m's bias at distance x - (Sk - 1), x in [0, Sk + Sq - 1) (the
/// extern asks for that region), computed at root, one modifier per m,
/// summed (and taken to log2 units) by the extern. Not summed here: Halide
/// compiles float code assuming no infinities, and LLVM folded a sliding
/// window's -inf plus ALiBi's bias to the bias alone. Without modifiers, an
/// unused element. deltaLo and deltaHi bound the distances any key is
/// visible at (ScoreModifier::visibleDeltas), clamped to +-2^30: farther
/// exclude nothing a buffer can hold, and stay clear of the extern's int
/// overflow.
/// An extern stage's argument that the stage does not read: one zero of
/// `dims` dimensions (the stages check the flag beside it, not its shape).
static Buffer<float> unusedArgument(int dims, const char *name) {
  Buffer<float> unused(std::vector<int>(dims, 1), name);
  unused.fill(0.0f);
  return unused;
}

namespace {
struct BiasTable {
  ExternFuncArgument argument;
  int32_t tables = 0, deltaLo = 0, deltaHi = 0;
};
} // namespace
static BiasTable biasTableArgument(const KernelSpec &spec, const std::vector<Func> &terms,
                                   const Expr &Sk) {
  BiasTable out;
  out.tables = static_cast<int32_t>(terms.size());
  VisibleDistances visible;
  if (!terms.empty()) {
    Var x("x"), h("h"), m("m");
    Func table("attn_extern_bias");
    table(x, h, m) = 0.0f;
    for (size_t t = 0; t < terms.size(); ++t)
      table(x, h, static_cast<int>(t)) = terms[t](x - (Sk - 1), h);
    table.compute_root();
    for (size_t t = 0; t < terms.size(); ++t)
      table.update(static_cast<int>(t)).vectorize(x, 16, TailStrategy::GuardWithIf).parallel(h);
    out.argument = table;
    visible = visibleDistances(spec, /*withCausal=*/false);
  } else {
    out.argument = unusedArgument(3, "attn_extern_no_bias");
  }
  const int64_t kFar = VisibleDistances::kFar;
  out.deltaLo = static_cast<int32_t>(std::clamp<int64_t>(visible.lo, -kFar, kFar));
  out.deltaHi = static_cast<int32_t>(std::clamp<int64_t>(visible.hi, -kFar, kFar));
  return out;
}

/// The AMX attention as an extern stage: q, k, v and the output as the
/// Halide pipeline has them, with the same shape checks.
BuiltKernel buildAmxAttention(const KernelSpec &spec) {
  const int D = static_cast<int>(spec.headDim), Dv = static_cast<int>(spec.valueHeadDim());
  const ScalarType e = spec.elementType;
  ImageParam q = makeInput(e, 4, "q", true), k = makeInput(e, 4, "k", true),
             v = makeInput(e, 4, "v", true);
  std::vector<ImageParam> inputs = {q, k, v};
  std::vector<ExternFuncArgument> args = {q, k, v};
  ImageParam keyPad;
  if (spec.hasKeyPadding) {
    keyPad = makeInput(spec.keyPaddingType, 2, "keyPadding", true);
    keyPad.dim(0).set_bounds(0, k.dim(1).extent());
    keyPad.dim(1).set_bounds(0, q.dim(3).extent());
    inputs.push_back(keyPad);
    args.push_back(keyPad);
  }
  args.push_back(ropeTableArgument(spec));
  ModifierBias bias;
  if (!spec.modifiers.empty())
    bias = declareModifierBias(spec, q.dim(2).extent());
  inputs.insert(inputs.end(), bias.inputs.begin(), bias.inputs.end());
  const BiasTable table = biasTableArgument(spec, bias.terms, k.dim(1).extent());
  args.push_back(table.argument);
  args.push_back(Expr(static_cast<float>(spec.scale)));
  args.push_back(Expr(spec.causal ? 1 : 0));
  args.push_back(Expr(spec.rope.enabled ? static_cast<int32_t>(spec.rope.rotaryDims) : 0));
  args.push_back(Expr(spec.rope.interleaved ? 1 : 0));
  args.push_back(Expr(static_cast<int32_t>(spec.rope.enabled ? spec.rope.positionOffset : 0)));
  args.push_back(Expr(table.tables));
  args.push_back(k.dim(1).extent());
  args.push_back(Expr(table.deltaLo));
  args.push_back(Expr(table.deltaHi));
  Func out("attn_amx");
  out.define_extern(spec.hasKeyPadding ? kAmxPaddedAttentionSymbol : kAmxAttentionSymbol, args,
                    toHalideType(e), 4, NameMangling::C);
  constrainAttentionShapes(q, k, v, out.output_buffer(), D, Dv);
  return {inputs, out};
}

/// The key block of the f32 extern stage, `flash_key_block` (its one
/// schedule parameter; a tuning entry may hold the Halide kernel's beside
/// it, for the attentions of the same key that keep the pipeline):
/// `spec`'s for `target`, else `formula`, at most keyBound (a longer block
/// would visit masked keys only).
static int flashKeyBlock(const KernelSpec &spec, const Target &target, int formula) {
  int64_t block = scheduleParam(scheduleFor(spec, target), "flash_key_block", formula);
  if (block < 1 || block > 4096)
    failSpec("attention schedule: flash_key_block must be in [1, 4096], got " +
             std::to_string(block));
  if (spec.keyBound > 0 && spec.keyBound < block)
    block = spec.keyBound;
  return static_cast<int>(block);
}

/// runtime/model/attention_f32.c's distances before and after those of the
/// scores in a content table (its kContentPad).
constexpr int kFlashContentPad = 64;

/// The content terms of `p`'s modifiers as attention_f32.c takes them.
namespace {
struct FlashContent {
  /// table(d, x, h, t): term t's row for the distance i - j = x - (Sk - 1)
  /// - kFlashContentPad, contentScale folded in on the key side; and
  /// keyVectors(d, h), the key-side head vectors summed; or unused
  /// elements.
  ExternFuncArgument table, keyVectors;
  int32_t terms = 0, keySideTerms = 0, hasKeyVectors = 0;
  /// Shaw's value table (c, r), r = clip(delta, -K, K) + K, and K; or an
  /// unused element and -1.
  ExternFuncArgument valueTable;
  int32_t valueK = -1;
  /// The distance from which every table holds its edge row
  /// (ScoreModifier::saturationDistance, the largest of the terms'), or -1.
  int32_t saturation = 0;
  /// Transformer-XL's v . r per distance, as bias terms (delta, h) in the
  /// natural-log units of the modifiers' biases.
  std::vector<Func> offsetBiases;
};
} // namespace
static FlashContent flashContent(const KernelSpec &spec, const AttentionPipeline &p) {
  FlashContent out;
  const float contentScale = static_cast<float>(spec.scale * kLog2E);
  Var x("x"), d("d"), h("h"), t("t"), delta("delta");
  const Expr Sq = p.q.dim(1).extent(), Sk = p.k.dim(1).extent();
  // The distance i - j of x, and the modifiers' delta = j - (i + Sk - Sq).
  const Expr rowDelta = -((x - (Sk - 1) - kFlashContentPad) + (Sk - Sq));
  Func table("attn_extern_content"), keyVectors("attn_extern_key_vectors");
  Expr tableValue = 0.0f, vectorSum = 0.0f;
  const RDom rd(0, static_cast<int>(spec.headDim), "rd");
  for (const ModifierBias::Content &c : p.modifiers.content) {
    if (c.headVector) { // key side (modifiersFitFlash)
      vectorSum += c.table(d, h, 0);
      out.hasKeyVectors = 1;
      continue;
    }
    const Expr row = clamp(c.row(rowDelta), 0, c.rows - 1);
    Expr value = c.table(d, h, row) * (c.querySide ? 1.0f : contentScale);
    tableValue = out.terms == 0 ? value : select(t == out.terms, value, tableValue);
    if (!c.querySide)
      out.keySideTerms |= 1 << out.terms;
    ++out.terms;
    out.saturation = c.saturation < 0 || out.saturation < 0 || c.saturation > INT32_MAX / 2
                         ? -1
                         : std::max(out.saturation, static_cast<int32_t>(c.saturation));
    if (c.offset.defined()) {
      Func bias("attn_extern_content_offset");
      bias(delta, h) = sum(c.offset(rd, h) * c.table(rd, h, clamp(c.row(delta), 0, c.rows - 1))) *
                       static_cast<float>(spec.scale);
      out.offsetBiases.push_back(bias);
    }
  }
  if (out.terms == 0)
    out.saturation = -1;
  if (out.terms) {
    // A row of D per distance (the stage broadcasts a distance's elements
    // in turn); term by term (t unrolled: each copy computes its own term
    // only).
    table(d, x, h, t) = tableValue;
    table.compute_root()
        .bound(t, 0, out.terms)
        .reorder(d, x, h, t)
        .unroll(t)
        .parallel(h)
        .vectorize(d, 16, TailStrategy::GuardWithIf);
    out.table = table;
  } else {
    out.table = unusedArgument(4, "attn_extern_no_content");
  }
  if (p.modifiers.value) {
    Func value("attn_extern_value_table");
    value(d, x) = p.modifiers.value->table(d, x);
    value.compute_root();
    out.valueTable = value;
    out.valueK = p.modifiers.value->maxDistance;
  } else {
    out.valueTable = unusedArgument(2, "attn_extern_no_value_table");
  }
  if (out.hasKeyVectors) {
    keyVectors(d, h) = vectorSum;
    keyVectors.compute_root();
    out.keyVectors = keyVectors;
  } else {
    out.keyVectors = unusedArgument(2, "attn_extern_no_key_vectors");
  }
  return out;
}

/// The f32 attention as runtime/model/attention_f32.c's extern stage
/// `symbol`, on the inputs `p` declares. The stage computes every call of
/// more than kDecodeRows query rows; for fewer it asks for, and copies, the
/// Halide kernel's decode path (p.decoded, scheduled here as it is in
/// scheduleAttentionCPU), which splits the keys over threads. Attentions
/// with content terms have no decode path (see defineAttention): the stage
/// computes all their calls.
static BuiltKernel buildFlashAttention(const KernelSpec &spec, const Target &target,
                                       const char *symbol, AttentionPipeline &p,
                                       const AttentionTiles &t) {
  const int D = static_cast<int>(spec.headDim), Dv = static_cast<int>(spec.valueHeadDim());
  ExternFuncArgument decodedArgument;
  if (p.decodes) {
    Func decoded("attn_decoded");
    decoded(p.c, p.i, p.h, p.b) = p.decoded;
    // SCHEDULE (of the decode path)
    Var task("task");
    const TailStrategy headTail =
        Dv % t.vec == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf;
    decoded.compute_root().bound(p.c, 0, Dv);
    scheduleDecodeCPU(p, decoded, decoded, task, t.vec, headTail);
    p.qScaled.compute_at(decoded, task).vectorize(p.i, t.vec, TailStrategy::GuardWithIf);
    if (p.modifierBias.defined())
      p.modifierBias.compute_at(decoded, task)
          .vectorize(p.modifierBias.args()[0], t.vec, TailStrategy::GuardWithIf);
    if (p.keyRotated.defined())
      scheduleRopeCPU(p, decoded, task, target, t.vec,
                      D % t.vec == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf);
    decodedArgument = decoded;
  } else {
    decodedArgument = unusedArgument(4, "attn_extern_no_decode");
  }
  const FlashContent content = flashContent(spec, p);
  std::vector<Func> biasTerms = p.biasTerms;
  biasTerms.insert(biasTerms.end(), content.offsetBiases.begin(), content.offsetBiases.end());

  std::vector<ExternFuncArgument> args = {p.q, p.k, p.v};
  if (spec.hasKeyPadding) {
    args.push_back(p.keyPadding);
  } else {
    Buffer<uint8_t> unused(1, 1, "attn_extern_no_padding");
    unused.fill(1);
    args.push_back(unused);
  }
  args.push_back(ropeTableArgument(spec));
  const BiasTable table = biasTableArgument(spec, biasTerms, p.k.dim(1).extent());
  args.push_back(table.argument);
  args.push_back(decodedArgument);
  args.push_back(content.table);
  args.push_back(content.keyVectors);
  args.push_back(content.valueTable);
  args.push_back(Expr(static_cast<float>(spec.scale)));
  args.push_back(Expr(spec.causal ? 1 : 0));
  args.push_back(Expr(spec.hasKeyPadding ? 1 : 0));
  args.push_back(Expr(spec.rope.enabled ? static_cast<int32_t>(spec.rope.rotaryDims) : 0));
  args.push_back(Expr(spec.rope.interleaved ? 1 : 0));
  args.push_back(Expr(static_cast<int32_t>(spec.rope.enabled ? spec.rope.positionOffset : 0)));
  args.push_back(Expr(table.tables));
  args.push_back(p.k.dim(1).extent());
  args.push_back(Expr(table.deltaLo));
  args.push_back(Expr(table.deltaHi));
  args.push_back(Expr(t.keyBlock));
  args.push_back(Expr(p.decodes ? kDecodeRows : 0));
  args.push_back(Expr(content.terms));
  args.push_back(Expr(content.keySideTerms));
  args.push_back(Expr(content.saturation));
  args.push_back(Expr(content.hasKeyVectors));
  args.push_back(Expr(content.valueK));
  Func out("attn_flash");
  out.define_extern(symbol, args, Float(32), 4, NameMangling::C);
  constrainAttentionShapes(p.q, p.k, p.v, out.output_buffer(), D, Dv);
  return {p.inputs, out};
}

BuiltKernel buildAttentionKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "attention");
  for (auto [name, dim] : {std::pair<const char *, int64_t>{"headDim", spec.headDim},
                            {"value head dim", spec.valueHeadDim()}})
    if (dim <= 0 || dim > kMaxAttentionHeadDim)
      failSpec(std::string("attention: expected a static ") + name + " in [1, " +
               std::to_string(kMaxAttentionHeadDim) + "], got " + std::to_string(dim));
  if (runsOnAmx(spec, target))
    return buildAmxAttention(spec);
  if (const char *symbol = flashSymbol(spec, target)) {
    // The Halide tiles only size the decode path's vectors here.
    AttentionTiles tiles =
        defaultTiles(target, static_cast<int>(spec.valueHeadDim()), spec.causal);
    tiles.keyBlock = flashKeyBlock(spec, target, kFlashKeyBlock);
    AttentionPipeline p = defineAttention(spec, tiles);
    return buildFlashAttention(spec, target, symbol, p, tiles);
  }
  AttentionTiles tiles = chooseTiles(spec, target);
  AttentionPipeline p = defineAttention(spec, tiles);
  // SCHEDULE (CPU targets only: buildKernel refuses GPU ones.) The output
  // and GEMM #2 run along the value head dim.
  scheduleAttentionCPU(p, tiles, static_cast<int>(spec.headDim),
                       static_cast<int>(spec.valueHeadDim()), target);
  return {p.inputs, p.out};
}

} // namespace attune::codegen::detail
