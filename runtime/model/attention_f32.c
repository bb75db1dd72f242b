/* Part of every model library attune-compile links and of every kernel
 * library attune-tune times, like amx_kernels.c (see
 * compiler/codegen/halide/ModelSupport.h): fused f32 attention for CPUs with
 * AVX-512 or AVX2 + FMA, the extern stage the avx512, avx512_spr and avx2
 * variants of an f32 attention kernel call (AttentionKernel.cpp says which
 * attentions: plain or causal, key padding, score modifiers that add a bias
 * of (head, distance) and the content terms of Transformer-XL and DeBERTa,
 * MHA/MQA/GQA, Sq != Sk, f32 tensors).
 *
 * What. out[c, i, h, b] = sum_j softmax_j(scale * q[:, i, h, b] . k[:, j,
 * hk, b] + bias) v[c, j, hk, b], hk = h / (H / Hkv); causal rows see keys
 * j <= i + (Sk - Sq); keys whose key padding is 0, and scores whose bias is
 * -inf, are masked; a row that sees no key is 0. Content terms add scale *
 * x . E_t[i - j] to a score, x row i of q or row j of k and E_t a table by
 * distance (attention_f32_tile.inc's tileContent). All arithmetic is f32.
 *
 * Why not a Halide schedule. Halide's kernel (AttentionKernel.cpp) has no
 * running state across key blocks: each block's output is normalised by its
 * own maximum and stored, the block statistics are stored beside every
 * output column, the scores and the probabilities are two buffers, and
 * the blocks are merged after the key loop. On an Intel Xeon (AVX-512, one
 * core) the best of 57 tuned schedules reached 0.59 of the FMA peak there,
 * this kernel 0.75 (benchmarks/README.md). The kernel is small: two
 * register-tiled products and an online softmax, the shape of IREE's and
 * oneDNN's micro-kernels. Decoding (a few query rows) keeps the Halide
 * kernel's split over keys: the stage takes its output as an input and asks
 * for it only then (see attentionF32).
 *
 * How. A tile is up to RV vectors of query rows of one head (48 with
 * AVX-512, 16 with AVX2; a head's last tile only as tall as its rows need)
 * and walks the keys in blocks of keyBlock. Every buffer of a tile has the
 * rows along the vector: Q^T [D][QT] (scaled by scale * log2 e, so that
 * probabilities are powers of 2), the block's scores [keyBlock][QT] and the
 * output accumulator O^T [Dv][QT]. Both products are then the same
 * register tile, RV row vectors times a broadcast:
 *   GEMM #1  s[j][:] = sum_d Q^T[d][:] k[j][d]    NK keys at a time,
 *   GEMM #2  O^T[c][:] += sum_j s[j][:] v[j][c]   NC value columns at a time,
 * reading k and v in place or packed once per call (see packKeysFrom and
 * packValuesFrom). GEMM #1's stores add the masks and biases and take the
 * block's row maxima; the softmax moves the running max, turns the scores
 * into probabilities in place and rescales the accumulator by 2^(old max -
 * new max) when it grew (FlashAttention's online softmax); GEMM #2 loads,
 * rescales and stores the accumulator once per block. Keys after a tile's
 * causal diagonal or outside a sliding window are never visited. A task is
 * one tile, or all the tiles of a head when it has few (kTilesPerGroup),
 * which then take each key block in turn while it is in cache.
 *
 * Files: attention_f32_isa.inc (the exponential, RoPE, k's packing) is
 * included once per ISA below, after the ISA's macros, and includes
 * attention_f32_tile.inc (a tile's steps) once per tile height, then
 * undefines those macros; this file has the ISA macros, the tasks and the
 * extern stages. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <immintrin.h>
#include <limits.h> /* INT_MAX */
#include <math.h>   /* INFINITY */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extern_stage.h"

/* Scores are in base 2; below this 2^x is 0 (AttentionKernel.cpp's
 * kExp2Floor). */
static const float kExp2Floor = -126.0f;

/* MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) flags. */
enum { kFlushDenormals = 0x8040 };

/* a . b over n floats: a k row with a content term's vector, per key (the
 * key terms, keyTermsTask, and blocks past the tables' saturation,
 * tileContent). */
static inline float rowDot(const float *a, const float *b, int n) {
  float dot = 0.0f;
  for (int d = 0; d < n; ++d)
    dot += a[d] * b[d];
  return dot;
}

typedef struct {
  const attune_hl_buffer_t *q, *k, *v, *out;
  attune_attention_dims_t dims;
  int causal, keyBlock;
  float scaleLog2e;
  /* Key padding: per batch b, Sk values from b * Sk, 0 where the key
   * attends and -inf where it is padded; NULL without key padding. */
  const float *keyBias;
  /* Score modifiers: the bias of query row i and key j of head h, in log2
   * units, at bias[h * biasStride + i - j + Sk - 1] (sumBiasTables,
   * reversed: rows along a vector read consecutive values), padded with
   * zeros for the rows of a last tile past Sq. Keys at distances j - (i + Sk
   * - Sq) outside [deltaLo, deltaHi] are all masked, so blocks of them are
   * skipped. NULL: none. */
  const float *bias;
  int64_t biasStride, deltaLo, deltaHi;
  /* RoPE: q rotated as the tiles read it, k as it is packed. */
  attune_rope_t rope;
  /* The key-side content terms with one row (Transformer-XL's u): score +=
   * scale log2(e) u_h . k_j, at keyTerms[(b * H + h) * Sk + j]; NULL: none. */
  float *keyTerms;
  /* Content terms computed by distance (tileContent): term t's table of
   * head h at content + t * contentT + h * contentH, a row of D floats per
   * distance, contentX apart: query row i and key j's at row i - j +
   * contentX0. Bit t of keySideTerms is set when the term reads k's rows,
   * else q's. From the distance contentSaturation on (i + Sk - Sq - j, either
   * sign), every table holds its edge row; -1: none. */
  const float *content;
  int64_t contentX, contentH, contentT;
  int contentTerms, contentX0, contentSaturation;
  /* Shaw's value term: R [2 valueK + 1][Dv], row d at valueTable + d *
   * valueStride (tileValueMass, tileEnd); NULL: none. */
  const float *valueTable;
  int64_t valueStride;
  int valueK;
  unsigned keySideTerms;
  /* k packed once per call for GEMM #1 (packKeysTask), or NULL: GEMM #1
   * reads k's rows in place. */
  float *packedK;
  /* v packed once per call for GEMM #2 (packValuesTask), or NULL: GEMM #2
   * reads v's rows in place. */
  float *packedV;
  const struct attune_flash_isa *isa;
} attune_flash_call_t;

/* AVX-512: 32 registers; GEMM #1 and #2 tiles of up to 3 x 8
 * accumulators, with the 3 row vectors and the broadcast: 28. */
#define ISA _avx512
#define TGT __attribute__((target("avx512f,avx512dq,fma")))
#define VF __m512
#define W 16
#define NK 8
#define NC 8
#define VSET1 _mm512_set1_ps
#define VZERO _mm512_setzero_ps
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VMAX _mm512_max_ps
#define VFMA _mm512_fmadd_ps
#define VLOAD _mm512_load_ps
#define VLOADU _mm512_loadu_ps
#define VSTORE _mm512_store_ps
#define VSTOREU _mm512_storeu_ps
#define VCASTPS _mm512_castsi512_ps
#define VCASTSI _mm512_castps_si512
#define VADDI _mm512_add_epi32
#define VSLLI _mm512_slli_epi32
/* e where x > lo (false for NaN), else 0. */
#define VKEEPGT(x, lo, e) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((x), (lo), _CMP_GT_OQ), (e))
/* x with lanes l < thr set to -inf. */
#define VMASKLT(x, thr)                                                                       \
  _mm512_mask_blend_ps(                                                                       \
      _mm512_cmplt_epi32_mask(                                                                \
          _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),             \
          _mm512_set1_epi32(thr)),                                                            \
      (x), _mm512_set1_ps(-INFINITY))
/* x where a == b, else y. */
#define VSELECTEQ(a, b, x, y)                                                                 \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ), (y), (x))
/* Whether some lane of a differs from b's. */
#define VANYNE(a, b) (_mm512_cmp_ps_mask((a), (b), _CMP_NEQ_UQ) != 0)
/* x[0..W) transposed as a W x W matrix. */
#define VTRANSPOSE(x) transpose16x16((__m512i *)(x))
/* x's first NK lanes to p. */
#define VSTORENK(p, x) _mm256_storeu_ps((p), _mm512_castps512_ps256(x))
/* W/2 floats from p, each in two neighbouring lanes. */
#define VDUPPAIRS(p)                                                                          \
  _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),     \
                        _mm512_castps256_ps512(_mm256_loadu_ps(p)))
/* x with neighbouring lanes swapped. */
#define VSWAPPAIRS(x) _mm512_permute_ps((x), 0xB1)
/* a b - c in even lanes, a b + c in odd ones. */
#define VFMADDSUB _mm512_fmaddsub_ps
/* Integer lanes; lane l is l * k; lane l of the result is p[idx[l]]. */
#define VIF __m512i
#define VLANES(k)                                                                             \
  _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),   \
                     _mm512_set1_epi32(k))
#define VGATHER(p, idx) _mm512_i32gather_ps((idx), (p), 4)
#define VSET1I _mm512_set1_epi32
#define VLANEIDS _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
/* x in lanes l >= thr (<= thr), else 0. */
#define VKEEPGE(x, thr) _mm512_maskz_mov_ps(_mm512_cmpge_epi32_mask(VLANEIDS, VSET1I(thr)), (x))
#define VKEEPLE(x, thr) _mm512_maskz_mov_ps(_mm512_cmple_epi32_mask(VLANEIDS, VSET1I(thr)), (x))
/* VGATHER in lanes lo <= l < hi, else 0 (the other lanes read nothing). */
#define VGATHERIN(p, idx, lo, hi)                                                             \
  _mm512_mask_i32gather_ps(_mm512_setzero_ps(),                                               \
                           _mm512_cmpge_epi32_mask(VLANEIDS, VSET1I(lo)) &                    \
                               _mm512_cmplt_epi32_mask(VLANEIDS, VSET1I(hi)),                 \
                           (idx), (p), 4)
#define RV_MAX 3
#include "attention_f32_isa.inc"

/* AVX2: 16 registers; tiles of up to 3 x 4 accumulators, with their
 * operands 16 (24 query rows, keys and value columns 4 at a time). Against
 * 2 x 6 (16 rows, 6 keys and columns, the last value group overlapping the
 * one before unless 6 divides Dv), alternated on an AMD EPYC Zen 3:
 * attention_kernel_benchmark's causal rows at S=512 and 2048 1.03-1.16
 * times as fast (D=32 and 64, one thread, medians of 5 rounds; probably
 * because smaller key groups leave fewer masked scores on the diagonal),
 * its non-causal rows and those at S=128 within 3%; attention_benchmark's
 * libraries (S=512 and 2048, D=64 and 128, causal or not, 1 and 2 threads)
 * 1.03-1.06 times as fast on average over two runs, rows from 0.92 to 1.20
 * on a noisy host. A microbenchmark of either tile with its operands in L1
 * reached 0.97 of the peak. */
#define ISA _avx2
#define TGT __attribute__((target("avx2,fma")))
#define VF __m256
#define W 8
#define NK 4
#define NC 4
#define VSET1 _mm256_set1_ps
#define VZERO _mm256_setzero_ps
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VMAX _mm256_max_ps
#define VFMA _mm256_fmadd_ps
#define VLOAD _mm256_load_ps
#define VLOADU _mm256_loadu_ps
#define VSTORE _mm256_store_ps
#define VSTOREU _mm256_storeu_ps
#define VCASTPS _mm256_castsi256_ps
#define VCASTSI _mm256_castps_si256
#define VADDI _mm256_add_epi32
#define VSLLI _mm256_slli_epi32
#define VKEEPGT(x, lo, e) _mm256_and_ps(_mm256_cmp_ps((x), (lo), _CMP_GT_OQ), (e))
#define VMASKLT(x, thr)                                                                       \
  _mm256_blendv_ps((x), _mm256_set1_ps(-INFINITY),                                            \
                   _mm256_castsi256_ps(_mm256_cmpgt_epi32(                                     \
                       _mm256_set1_epi32(thr), _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0))))
#define VSELECTEQ(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_EQ_OQ))
#define VANYNE(a, b) (_mm256_movemask_ps(_mm256_cmp_ps((a), (b), _CMP_NEQ_UQ)) != 0)
#define VTRANSPOSE(x) transpose8x8((__m256i *)(x))
/* The low four lanes, one 128-bit store: a masked store (vmaskmovps) took
 * 5% of the time of S=512 D=64 on an AMD EPYC Zen 3, in packKeysTask. */
#define VSTORENK(p, x) _mm_storeu_ps((p), _mm256_castps256_ps128(x))
#define VDUPPAIRS(p)                                                                          \
  _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)),                          \
                           _mm256_set_epi32(3, 3, 2, 2, 1, 1, 0, 0))
#define VSWAPPAIRS(x) _mm256_permute_ps((x), 0xB1)
#define VFMADDSUB _mm256_fmaddsub_ps
#define VIF __m256i
#define VLANES(k) _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(k))
#define VGATHER(p, idx) _mm256_i32gather_ps((p), (idx), 4)
#define VSET1I _mm256_set1_epi32
#define VLANEIDS _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0)
#define VKEEPGE(x, thr)                                                                       \
  _mm256_and_ps((x), _mm256_castsi256_ps(_mm256_cmpgt_epi32(VLANEIDS, VSET1I((thr) - 1))))
#define VKEEPLE(x, thr)                                                                       \
  _mm256_and_ps((x), _mm256_castsi256_ps(_mm256_cmpgt_epi32(VSET1I((thr) + 1), VLANEIDS)))
#define VGATHERIN(p, idx, lo, hi)                                                             \
  _mm256_mask_i32gather_ps(                                                                   \
      _mm256_setzero_ps(), (p), (idx),                                                        \
      _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(VLANEIDS, VSET1I((lo) - 1)),   \
                                           _mm256_cmpgt_epi32(VSET1I(hi), VLANEIDS))),        \
      4)
#define RV_MAX 3
#include "attention_f32_isa.inc"

/* The smallest value head dim the tiles take (GEMM #2's last group of NC
 * columns may overlap the one before, but not start before column 0):
 * AttentionKernel.cpp's kFlashMinValueDim. */
enum { kFlashMinValueDim = 8 };

/* f32, dense along dim 0, 4-d. */
static int isF32Tensor(const attune_hl_buffer_t *buf) {
  return buf->type.code == kHlTypeFloat && buf->type.bits == 32 && buf->type.lanes == 1 &&
         buf->dimensions == 4 && buf->dim[0].stride == 1;
}

/* The arguments of the extern stages after the buffers. */
typedef struct {
  float scale;
  int causal, hasKeyPadding, ropeDims, ropeInterleaved, ropeOffset, biasTables, keys, deltaLo,
      deltaHi, keyBlock, decodeRows, contentTerms, keySideTerms, contentSaturation, keyVectors,
      valueK;
} attune_flash_args_t;

/* The content tables' distances before the first and after the last that a
 * call's scores have: the rows of a last tile past Sq, the keys of a last
 * group past Sk and the products' rounding to NK read them. */
enum { kContentPad = 64 };

/* Distances of a content table (i - j in [1 - Sk, Sq - 1] at row i - j +
 * Sk - 1 + kContentPad). */
static int64_t contentRows(int Sq, int Sk) { return (int64_t)Sk + Sq - 1 + 2 * kContentPad; }

/* The key-side head vectors of a call (the extern's `keyVectors`, [D, H]). */
typedef struct {
  const attune_flash_call_t *call;
  const attune_hl_buffer_t *vectors;
} attune_key_terms_t;

/* Task (b, h): c->keyTerms of (b, h), u_h . k_j for every key j. */
static int keyTermsTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  const attune_key_terms_t *t = (const attune_key_terms_t *)closure;
  const attune_flash_call_t *c = t->call;
  const int b = index / c->dims.H, h = index % c->dims.H;
  const int hk = h / (c->dims.H / c->dims.Hkv), D = c->dims.D;
  const float *u = (const float *)t->vectors->host + (int64_t)h * t->vectors->dim[1].stride;
  float *to = c->keyTerms + (size_t)index * c->dims.Sk;
  for (int j = 0; j < c->dims.Sk; ++j)
    to[j] = rowDot((const float *)element(c->k, j, hk, b), u, D) * c->scaleLog2e;
  return kOk;
}


/* `decoded` (the Halide kernel's decode path, [Dv, Sq, H, B]) into out. */
static void copyDecoded(const attune_hl_buffer_t *decoded, const attune_hl_buffer_t *out) {
  const int Dv = out->dim[0].extent;
  for (int b = 0; b < out->dim[3].extent; ++b)
    for (int h = 0; h < out->dim[2].extent; ++h)
      for (int i = 0; i < out->dim[1].extent; ++i)
        memcpy(element(out, i, h, b), element(decoded, i, h, b), (size_t)Dv * sizeof(float));
}

/* A tile of RV row vectors (attention_f32_tile.inc): its three steps. */
typedef struct {
  void (*begin)(const attune_flash_call_t *c, int b, int h, int i0, float *qT, float *oT,
                float *ml, float *rotated);
  void (*block)(const attune_flash_call_t *c, int b, int h, int i0, int j0, int n,
                const float *qT, float *s, float *oT, float *ml, float *work);
  void (*end)(const attune_flash_call_t *c, int b, int h, int i0, float *oT, const float *ml);
} attune_flash_tile_t;

/* What an ISA's code is (attention_f32_isa.inc, attention_f32_tile.inc). */
typedef struct attune_flash_isa {
  int width;                    /* W, floats per vector */
  int keyGroup;                 /* NK */
  attune_flash_tile_t tiles[3]; /* by row vectors - 1 */
  int rowVectors;               /* the tallest tile's */
  int (*packKeysTask)(void *, int, uint8_t *);
  size_t (*packedKeyGroups)(const attune_flash_call_t *);
  /* From how many query rows GEMM #1 reads k packed without RoPE (which
   * packs a rotated copy anyway): the packing reads k once, the tiles once
   * per task. Measured (Intel Xeon, one thread, H=12, D=64): AVX2 packed
   * 99 -> 106 GFLOP/s at S=2048, 93 -> 95 at 512, equal at 256, 96 -> 92 at
   * 128; AVX-512 no faster at S=2048 and 8% slower at 128 (never). */
  int packKeysFrom;
  int (*packValuesTask)(void *, int, uint8_t *);
  size_t (*packedValueFloats)(const attune_flash_call_t *);
  /* From how many query rows GEMM #2 reads v packed (packValuesTask): a
   * tile's pass over a key block then reads its column group's values in a
   * line instead of NC floats from each of the block's rows. Measured (AVX2,
   * AMD EPYC Zen 3 with 512 KiB of L2, one thread, H=12, D=64, medians of 5
   * alternated runs): 0.73 -> 0.81 of the FMA peak at S=2048, where a
   * head's k and v (1 MiB) stream from L3 for every tile; equal at 512 and
   * 128 (0.72 -> 0.74, 0.72 -> 0.70 at D=128). AVX-512 was not measured
   * (NC = 8 floats are half a line; never). */
  int packValuesFrom;
} attune_flash_isa_t;

/* Up to this many tiles of a head share a task, which walks the keys once
 * for all of them, block by block; a head with more takes a task a tile, and
 * so does a call of one head (its tiles are all the parallel work there is).
 * With few query rows against many keys (chunked prefill, Sq = 17 ... 144
 * against a KV cache) each tile walked K and V from memory: Sq=64 against
 * 4096 keys (H=32, D=128, 48-row tiles) took as long as Sq=96. A task's
 * tiles keep their state (Q^T and O^T, 2 x 48 KiB at D=128) in L2 between
 * blocks, which with many tiles would push the keys and values out. */
enum { kTilesPerGroup = 3 };

/* The query rows of a call's tiles: per (b, h), tiles of the tallest height
 * (the ISA's rowVectors * width), the last no taller than its rows need. */
static int flashTileRows(const attune_flash_call_t *c) {
  return c->isa->rowVectors * c->isa->width;
}

/* Tiles of a head, and tiles a task takes. */
static void flashTiling(const attune_flash_call_t *c, int *tiles, int *perTask) {
  *tiles = (c->dims.Sq + flashTileRows(c) - 1) / flashTileRows(c);
  *perTask = *tiles <= kTilesPerGroup && c->dims.B * c->dims.H > 1 ? *tiles : 1;
}

static int flashTasks(const attune_flash_call_t *c) {
  int tiles, perTask;
  flashTiling(c, &tiles, &perTask);
  return c->dims.B * c->dims.H * ((tiles + perTask - 1) / perTask);
}

/* The keys the rows [i0, i0 + rows) see: [*begin, *end), begin a multiple
 * of NK (k's packed groups): none after the last row's diagonal (causal) or
 * window (deltaHi), none before the first row's window. */
static void flashKeyRange(const attune_flash_call_t *c, int i0, int rows, int *begin, int *end) {
  const int diag = c->dims.Sk - c->dims.Sq, lastRow = i0 + rows - 1;
  int64_t e = c->dims.Sk, b = 0;
  if (c->causal && lastRow + diag + 1 < e)
    e = lastRow + diag + 1;
  if (c->bias && lastRow + diag + c->deltaHi + 1 < e)
    e = lastRow + diag + c->deltaHi + 1;
  if (c->bias && i0 + diag + c->deltaLo > b)
    b = (i0 + diag + c->deltaLo) / c->isa->keyGroup * c->isa->keyGroup;
  *begin = (int)b;
  *end = (int)(e > b ? e : b);
}

/* Task `index`: (b, h, a group of tiles), a head's groups consecutive so
 * that its keys and values stay in L2 between them. The group's tiles take
 * each key block in turn while it is in cache. */
static int flashTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  const attune_flash_call_t *c = (const attune_flash_call_t *)closure;
  const attune_flash_isa_t *isa = c->isa;
  int tiles, perTask;
  flashTiling(c, &tiles, &perTask);
  const int groups = (tiles + perTask - 1) / perTask, QT = flashTileRows(c);
  const int b = index / groups / c->dims.H, h = index / groups % c->dims.H;
  const int first = index % groups * perTask;
  const int count = first + perTask <= tiles ? perTask : tiles - first;
  const int KB = (c->keyBlock + isa->keyGroup - 1) / isa->keyGroup * isa->keyGroup;
  /* Per tile Q^T, O^T, the rows' max and sum and the value term's mass;
   * the block's scores; RoPE's rotated rows; the content terms' products
   * (tileContent: up to KB + QT or 2 QT distances of QT floats, rounded up
   * to NK) and k transposed. */
  const size_t tileFloats =
      (size_t)QT * (c->dims.D + c->dims.Dv + 2 + (c->valueTable ? 2 * c->valueK + 1 : 0));
  const size_t rotatedFloats = c->rope.dims ? (size_t)isa->width * c->dims.D : 0;
  const size_t workFloats = c->contentTerms || c->keyTerms
                                ? (size_t)QT * ((KB > QT ? KB : QT) + QT + isa->keyGroup + c->dims.D)
                                : 0;
  float *scratch = aligned_alloc(64, sizeof(float) * (count * tileFloats + (size_t)QT * KB +
                                                      rotatedFloats + workFloats));
  if (!scratch)
    return kErrMemory;
  float *s = scratch + count * tileFloats, *rotated = s + (size_t)QT * KB;
  float *work = rotated + rotatedFloats;
  struct {
    const attune_flash_tile_t *step;
    int i0, begin, end;
    float *qT, *oT, *ml;
  } tile[kTilesPerGroup];
  /* Denormals flushed (FTZ) and read as zero (DAZ) while the tiles run:
   * when a row's max grows by 100-odd (ALiBi's far keys come first), the
   * rescale leaves its accumulators denormal, and every FMA on them then
   * took a microcode assist: causal ALiBi at S=2048 took 59.5 ms against
   * 41.4 for plain causal attention, 42.2 with the flags (Intel Xeon, one
   * thread, AVX-512; AVX2 88.9 -> 67.7). Values that small are nothing
   * beside a row's 1 at its max. The caller's flags are restored. */
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | kFlushDenormals);
  int begin = c->dims.Sk, end = 0;
  for (int t = 0; t < count; ++t) {
    const int i0 = (first + t) * QT, rows = c->dims.Sq - i0 < QT ? c->dims.Sq - i0 : QT;
    tile[t].step = &isa->tiles[(rows + isa->width - 1) / isa->width - 1];
    tile[t].i0 = i0;
    tile[t].qT = scratch + t * tileFloats;
    tile[t].oT = tile[t].qT + (size_t)QT * c->dims.D;
    tile[t].ml = tile[t].oT + (size_t)QT * c->dims.Dv;
    flashKeyRange(c, i0, rows, &tile[t].begin, &tile[t].end);
    begin = tile[t].begin < begin ? tile[t].begin : begin;
    end = tile[t].end > end ? tile[t].end : end;
    tile[t].step->begin(c, b, h, i0, tile[t].qT, tile[t].oT, tile[t].ml, rotated);
  }
  /* Blocks from the group's first key; a tile takes the part of each block
   * before its own end (a window's keys before its begin are masked by
   * their bias). */
  for (int j0 = begin; j0 < end; j0 += KB)
    for (int t = 0; t < count; ++t)
      if (j0 < tile[t].end && j0 + KB > tile[t].begin)
        tile[t].step->block(c, b, h, tile[t].i0, j0,
                            tile[t].end - j0 < KB ? tile[t].end - j0 : KB, tile[t].qT, s,
                            tile[t].oT, tile[t].ml, work);
  for (int t = 0; t < count; ++t)
    tile[t].step->end(c, b, h, tile[t].i0, tile[t].oT, tile[t].ml);
  _mm_setcsr(csr);
  free(scratch);
  return kOk;
}

/* Whether `buf` is f32 from 0 along each of its `dims` dims, dense along
 * the first, and at least `extents` long in each. */
static int isF32Table(const attune_hl_buffer_t *buf, int dims, const int64_t *extents) {
  if (buf->type.code != kHlTypeFloat || buf->type.bits != 32 || buf->dimensions != dims ||
      buf->dim[0].stride != 1)
    return 0;
  for (int d = 0; d < dims; ++d)
    if (buf->dim[d].min != 0 || buf->dim[d].extent < extents[d])
      return 0;
  return 1;
}

static int attentionF32(attune_hl_buffer_t *q, attune_hl_buffer_t *k, attune_hl_buffer_t *v,
                        attune_hl_buffer_t *keyPadding, attune_hl_buffer_t *rope,
                        attune_hl_buffer_t *bias, attune_hl_buffer_t *decoded,
                        attune_hl_buffer_t *content, attune_hl_buffer_t *keyVectors,
                        attune_hl_buffer_t *valueTable, const attune_flash_args_t *a,
                        attune_hl_buffer_t *out,
                        const attune_flash_isa_t *isa) {
  const int decoding = out->dim[1].extent <= a->decodeRows;
  if (!q->host || !k->host || !v->host || !keyPadding->host || !bias->host || !out->host ||
      (decoding && !decoded->host) || (a->contentTerms && !content->host) ||
      (a->keyVectors && !keyVectors->host) || (a->valueK >= 0 && !valueTable->host)) {
    /* Bounds query: queryAttentionRegions', the decode path's output where
     * out is, or nothing when the tiles compute it (when it has one), and
     * the content tables and key vectors whole. */
    queryAttentionRegions(q, bias, out, a->biasTables, a->keys);
    for (int d = 0; d < decoded->dimensions && d < 4 && a->decodeRows > 0; ++d) {
      decoded->dim[d].min = out->dim[d].min;
      decoded->dim[d].extent = decoding ? out->dim[d].extent : 0;
    }
    const int64_t extents[4] = {q->dim[0].extent, contentRows(out->dim[1].extent, a->keys),
                                out->dim[2].extent, a->contentTerms};
    for (int d = 0; d < 4 && a->contentTerms && content->dimensions == 4; ++d) {
      content->dim[d].min = 0;
      content->dim[d].extent = (int32_t)extents[d];
    }
    for (int d = 0; d < 2 && a->keyVectors && keyVectors->dimensions == 2; ++d) {
      keyVectors->dim[d].min = 0;
      keyVectors->dim[d].extent = (int32_t)extents[2 * d];
    }
    if (a->valueK >= 0 && valueTable->dimensions == 2) {
      valueTable->dim[0].min = valueTable->dim[1].min = 0;
      valueTable->dim[0].extent = v->dim[0].extent;
      valueTable->dim[1].extent = 2 * a->valueK + 1;
    }
    return kOk;
  }
  if (!isF32Tensor(q) || !isF32Tensor(k) || !isF32Tensor(v) || !isF32Tensor(out))
    return kErrShape;
  attune_flash_call_t call;
  memset(&call, 0, sizeof call);
  call.contentSaturation = -1;
  call.q = q;
  call.k = k;
  call.v = v;
  call.out = out;
  if (!attentionDims(q, k, v, out, &call.dims) || call.dims.Dv < kFlashMinValueDim ||
      a->keyBlock < 1)
    return kErrShape;
  if (call.dims.Sq == 0 || call.dims.H == 0 || call.dims.B == 0)
    return kOk;
  if (decoding) {
    if (!isF32Tensor(decoded) || decoded->dim[0].extent != call.dims.Dv)
      return kErrShape;
    copyDecoded(decoded, out);
    return kOk;
  }
  if (a->hasKeyPadding &&
      (keyPadding->dimensions != 2 || keyPadding->dim[0].extent != call.dims.Sk ||
       keyPadding->dim[1].extent != call.dims.B))
    return kErrShape;
  if (a->biasTables &&
      !isBiasTable(bias, a->biasTables, call.dims.Sk + call.dims.Sq - 1, call.dims.H))
    return kErrShape;
  if (a->contentTerms) {
    const int64_t extents[4] = {call.dims.D, contentRows(call.dims.Sq, call.dims.Sk), call.dims.H,
                                a->contentTerms};
    if (!isF32Table(content, 4, extents))
      return kErrShape;
    call.content = (const float *)content->host;
    call.contentX = content->dim[1].stride;
    call.contentH = content->dim[2].stride;
    call.contentT = content->dim[3].stride;
    call.contentTerms = a->contentTerms;
    call.contentX0 = call.dims.Sk - 1 + kContentPad;
    call.keySideTerms = (unsigned)a->keySideTerms;
    call.contentSaturation = a->contentSaturation;
  }
  if (a->keyVectors) {
    const int64_t extents[2] = {call.dims.D, call.dims.H};
    if (!isF32Table(keyVectors, 2, extents))
      return kErrShape;
  }
  if (a->valueK >= 0) {
    const int64_t extents[2] = {call.dims.Dv, 2 * (int64_t)a->valueK + 1};
    if (!isF32Table(valueTable, 2, extents))
      return kErrShape;
    call.valueTable = (const float *)valueTable->host;
    call.valueStride = valueTable->dim[1].stride;
    call.valueK = a->valueK;
  }
  call.isa = isa;
  call.causal = a->causal;
  call.keyBlock = a->keyBlock;
  call.scaleLog2e = a->scale * 1.4426950408889634f;
  if (a->ropeDims) {
    call.rope.dims = a->ropeDims;
    call.rope.interleaved = a->ropeInterleaved;
    call.rope.offset = a->ropeOffset;
    int status = ropeTables(&call.rope, rope, call.dims.D, call.dims.Sq, call.dims.Sk);
    if (status)
      return status;
  }
  float *keyBias = NULL, *biasSum = NULL, *packBlock = NULL;
  int status = kOk;
  if (a->hasKeyPadding && call.dims.Sk > 0) {
    keyBias = malloc((size_t)call.dims.B * call.dims.Sk * sizeof(float));
    if (!keyBias) {
      status = kErrMemory;
      goto done;
    }
    for (int b = 0; b < call.dims.B; ++b)
      for (int j = 0; j < call.dims.Sk; ++j)
        keyBias[(size_t)b * call.dims.Sk + j] = keyAttends(keyPadding, j, b) ? 0.0f : -INFINITY;
    call.keyBias = keyBias;
  }
  if (a->biasTables) {
    const int distances = call.dims.Sk + call.dims.Sq - 1;
    /* 64 zeros past the distances: the rows of a last tile past Sq. */
    call.biasStride = distances + 64;
    biasSum = sumBiasTables(bias, a->biasTables, distances, call.dims.H, (int)call.biasStride, 1);
    if (!biasSum) {
      status = kErrMemory;
      goto done;
    }
    call.bias = biasSum;
    call.deltaLo = a->deltaLo;
    call.deltaHi = a->deltaHi;
  }
  if (call.dims.Sk == 0) { /* no key: every row is 0 */
    for (int b = 0; b < call.dims.B; ++b)
      for (int h = 0; h < call.dims.H; ++h)
        for (int i = 0; i < call.dims.Sq; ++i)
          memset(element(out, i, h, b), 0, (size_t)call.dims.Dv * sizeof(float));
    goto done;
  }
  {
    /* k and v packed in one block: floats of each. */
    const size_t heads = (size_t)call.dims.B * call.dims.Hkv;
    const size_t keyFloats = call.dims.Sq >= isa->packKeysFrom || call.rope.dims
                                 ? isa->packedKeyGroups(&call) * heads * call.dims.D *
                                       isa->keyGroup
                                 : 0;
    const size_t valueFloats =
        call.dims.Sq >= isa->packValuesFrom ? isa->packedValueFloats(&call) * heads : 0;
    float *packed =
        keyFloats + valueFloats ? (float *)takePackBlock((keyFloats + valueFloats) * sizeof(float))
                                : NULL;
    if (keyFloats + valueFloats && !packed) {
      status = kErrMemory;
      goto done;
    }
    packBlock = packed;
    call.packedK = keyFloats ? packed : NULL;
    call.packedV = valueFloats ? packed + keyFloats : NULL;
    if (call.packedK)
      status = runTasks(isa->packKeysTask, (int)heads, &call);
    if (status == kOk && call.packedV)
      status = runTasks(isa->packValuesTask, (int)heads, &call);
  }
  if (status == kOk && a->keyVectors) {
    attune_key_terms_t terms = {&call, keyVectors};
    call.keyTerms = malloc(sizeof(float) * call.dims.B * call.dims.H * (size_t)call.dims.Sk);
    status = call.keyTerms ? runTasks(keyTermsTask, call.dims.B * call.dims.H, &terms)
                           : kErrMemory;
  }
  if (status == kOk)
    status = runTasks(flashTask, flashTasks(&call), &call);
done:
  free(call.keyTerms);
  if (packBlock)
    givePackBlock((uint8_t *)packBlock);
  free(call.rope.cos);
  free(keyBias);
  free(biasSum);
  return status;
}

/* The extern stages, one per ISA. q[D, Sq, H, B], k[D, Sk, Hkv, B], v[Dv,
 * Sk, Hkv, B], out[Dv, Sq, H, B] and keyPadding[Sk, B] (read when
 * hasKeyPadding): Halide's dimension order, innermost first, f32 but the
 * padding, mins 0 (out's rows, heads and batch whole). `rope` is RoPE's
 * embedded table (see ropeTables), read when ropeDims > 0 (rotary dims;
 * interleaved pairs or split halves; position offset). With biasTables > 0,
 * `bias` is the score modifiers' biases [Sk + Sq - 1, H, biasTables] (see
 * isBiasTable; `keys` is Sk, for the bounds query) and every key at a
 * distance outside [deltaLo, deltaHi] is masked. `decoded` is the Halide
 * kernel's decode path, asked for and copied when Sq <= decodeRows. With
 * contentTerms > 0, `content` is the content terms' tables [D, Sk + Sq - 1
 * + 2 kContentPad, H, contentTerms] (see attune_flash_call_t.content;
 * keySideTerms, contentSaturation); with hasKeyVectors, `keyVectors` [D, H]
 * is the key-side head vectors summed (see attune_flash_call_t.keyTerms);
 * with valueK >= 0, `valueTable` [Dv, 2 valueK + 1] is Shaw's value table
 * (see attune_flash_call_t.valueTable).
 * Returns 0, or a negative code the pipeline reports as the stage's error. */
#define ATTUNE_FLASH_ENTRY(name, isa)                                                         \
  int name(attune_hl_buffer_t *q, attune_hl_buffer_t *k, attune_hl_buffer_t *v,               \
           attune_hl_buffer_t *keyPadding, attune_hl_buffer_t *rope, attune_hl_buffer_t *bias, \
           attune_hl_buffer_t *decoded, attune_hl_buffer_t *content,                          \
           attune_hl_buffer_t *keyVectors, attune_hl_buffer_t *valueTable, float scale,       \
           int causal, int hasKeyPadding,                                                     \
           int ropeDims, int ropeInterleaved, int ropeOffset, int biasTables, int keys,       \
           int deltaLo, int deltaHi, int keyBlock, int decodeRows, int contentTerms,          \
           int keySideTerms, int contentSaturation, int hasKeyVectors, int valueK,            \
           attune_hl_buffer_t *out) {                                                         \
    const attune_flash_args_t a = {scale,        causal,       hasKeyPadding, ropeDims,       \
                                   ropeInterleaved, ropeOffset, biasTables,   keys,           \
                                   deltaLo,      deltaHi,      keyBlock,      decodeRows,     \
                                   contentTerms, keySideTerms, contentSaturation,             \
                                   hasKeyVectors, valueK};                                    \
    return attentionF32(q, k, v, keyPadding, rope, bias, decoded, content, keyVectors,        \
                        valueTable, &a, out, &isa);                                           \
  }
#define ATTUNE_FLASH_TILE(suffix) {tileBegin##suffix, tileBlock##suffix, tileEnd##suffix}
static const attune_flash_isa_t kFlashAvx512 = {kFlashWidth_avx512,
                                                kFlashKeyGroup_avx512,
                                                {ATTUNE_FLASH_TILE(_avx512_r1),
                                                 ATTUNE_FLASH_TILE(_avx512_r2),
                                                 ATTUNE_FLASH_TILE(_avx512_r3)},
                                                kFlashRowVectors_avx512,
                                                packKeysTask_avx512,
                                                packedKeyGroups_avx512,
                                                INT_MAX,
                                                packValuesTask_avx512,
                                                packedValueFloats_avx512,
                                                INT_MAX};
static const attune_flash_isa_t kFlashAvx2 = {kFlashWidth_avx2,
                                              kFlashKeyGroup_avx2,
                                              {ATTUNE_FLASH_TILE(_avx2_r1),
                                               ATTUNE_FLASH_TILE(_avx2_r2),
                                               ATTUNE_FLASH_TILE(_avx2_r3)},
                                              kFlashRowVectors_avx2,
                                              packKeysTask_avx2,
                                              packedKeyGroups_avx2,
                                              256,
                                              packValuesTask_avx2,
                                              packedValueFloats_avx2,
                                              256};
#undef ATTUNE_FLASH_TILE
ATTUNE_FLASH_ENTRY(attune_attention_f32_avx512, kFlashAvx512)
ATTUNE_FLASH_ENTRY(attune_attention_f32_avx2, kFlashAvx2)
#undef ATTUNE_FLASH_ENTRY
