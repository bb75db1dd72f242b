/* Part of every model library attune-compile links and of every kernel
 * library attune-tune times, like attention_f32.c (see
 * compiler/codegen/halide/ModelSupport.h): the f32 linear over packed
 * weights for CPUs with AVX-512 or AVX2 + FMA, the extern stage the avx512,
 * avx512_zen4, avx512_spr and avx2 variants of a linear without an
 * activation call (MatmulKernels.cpp says which linears).
 *
 * What. out[n, m] = sum_k x[k, m] w[k, n] (+ bias[n]) over the region of
 * out Halide asks for (its columns from a multiple of 16), w stored in the
 * panels tfm-pack-weights writes (compiler/support/PanelLayout.h) with
 * kF32LinearPanel = 16 columns: [ceil(N/16), K, 16], zeros past N. All
 * arithmetic is f32, one FMA per product, summed over k in order.
 *
 * How. A register tile is a few output rows by a few vectors of columns:
 * each k step loads the tile's vectors of w's row k in place, each within
 * one panel (contiguous streams, 16 floats apart from one k to the next),
 * and broadcasts x's values, one per row. AVX-512: 8 rows by 48 columns
 * (three panels side by side), 24 FMAs a step. AVX2: 4 rows by 24 columns
 * (a panel and a half), 12 FMAs a step, the 12 accumulators, 3 w vectors
 * and the broadcast in its 16 registers. A task takes
 * kF32LinearTaskColumns columns for every row (or for a block of rows, when
 * a layer has fewer than kF32LinearMinTasks such ranges), a tile's rows at
 * a time, so that its panels stay in L2 while x's rows stream past. The
 * columns of a last, partial group of panels are read from a zero-padded
 * copy (AVX-512) or from the last panel again (AVX2; those columns are past
 * N and never stored).
 *
 * Why not the Halide GEMM, whose tiles these are (MatmulKernels.cpp). Over
 * 96-column panels its 8 x 3 tiles took 48-column slices copied per call
 * into contiguous panels; over 16-column panels it reads them in place, and
 * whole models ran as fast either way. This loop reached 0.79-0.93 of the
 * FMA peak at the shapes of BERT, GPT-2 and MiniLM layers on one thread,
 * against 0.70-0.79 for the Halide kernel, and whole models ran up to 13%
 * faster (Intel Xeon, avx512_spr; benchmarks/README.md). On AVX2 the same
 * 4 x 3 tile in C ran 5-15% faster than Halide's in alternated runs, and
 * all-MiniLM-L6-v2 5-6% faster (AMD EPYC Zen 3). Why the C compiler's loop
 * beats Halide's for the same tile was not looked into.
 * A first try with the rows along the vector (x transposed once per call,
 * 8 weight columns broadcast per k step, as attention_f32.c's products) was
 * 9% faster on all-MiniLM-L6-v2 at 128 tokens and 5% slower at 512, where
 * the transposed x of its 1536-wide layer no longer fit in L2. Blocking k
 * as GotoBLAS does (AVX2: 256 k steps a block, the sums through out between
 * blocks, so that a 24-column slab of w stays in L1 while x streams from
 * L2) was 7-13% slower at every shape of this file's benchmark, and 20-34%
 * with 64-step blocks (AMD EPYC Zen 3): each k step of a slab touches a
 * whole line of one panel and half a line of the next, so 256 steps fill
 * all 32 KiB of L1, and w streamed from L2 keeps up with the tile. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extern_stage.h"

#define F32_LINEAR_TGT __attribute__((target("avx512f,avx512dq,fma")))
#define F32_LINEAR_AVX2_TGT __attribute__((target("avx2,fma")))

enum {
  kF32LinearPanel = 16,        /* columns per stored panel (PanelLayout.h's kF32PanelWidth) */
  kF32LinearRows = 8,          /* rows per register tile (AVX-512) */
  kF32LinearTilePanels = 3,    /* panels (16-column vectors) per register tile (AVX-512) */
  kF32LinearAvx2Rows = 4,      /* rows per register tile (AVX2) */
  kF32LinearAvx2Vectors = 3,   /* 8-column vectors per register tile (AVX2) */
  kF32LinearTaskColumns = 96,  /* columns per task */
  kF32LinearMinTasks = 8       /* tasks a call is split into at least, where it can */
};

typedef struct {
  const attune_hl_buffer_t *x, *w, *bias, *out;
  int K;
  int m0, M; /* out's rows: [m0, m0 + M) */
  int n0, N; /* out's columns: [n0, n0 + N) */
  int rowBlocks, blockRows; /* tasks per column range, and their rows */
} attune_linear_f32_t;

/* Rows [m, m + R) (R <= 8) by the 48 columns from n of the region: panels
 * w0, w0 + K 16 and w0 + 2 K 16 (row k of a panel at + 16 k), x's rows at
 * xr[r] (element k at + k xs), out's at orow[r] (column n first). The
 * accumulators, plus bias[0, 48) (read after the k loop: 3 vectors held
 * through it would spill accumulators, at half the speed), go to the
 * columns the region has. */
F32_LINEAR_TGT static inline __attribute__((always_inline)) void
f32LinearTile(const int R, const attune_linear_f32_t *c, const float *const *xr,
              const float *w0, int n, const float *bias, float *const *orow) {
  const int K = c->K;
  const int64_t xs = c->x->dim[0].stride, panel = (int64_t)K * kF32LinearPanel;
  __m512 acc[kF32LinearRows][kF32LinearTilePanels];
  _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r)
      _Pragma("GCC unroll 3") for (int j = 0; j < kF32LinearTilePanels; ++j) acc[r][j] =
          _mm512_setzero_ps();
  _Pragma("GCC unroll 2") for (int k = 0; k < K; ++k) {
    const float *row = w0 + (int64_t)k * kF32LinearPanel;
    const __m512 b0 = _mm512_loadu_ps(row), b1 = _mm512_loadu_ps(row + panel),
                 b2 = _mm512_loadu_ps(row + 2 * panel);
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(xr[r][(int64_t)k * xs]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(a, b2, acc[r][2]);
    }
  }
  const attune_hl_dim_t *od = c->out->dim;
  const int columns = c->N - n;
  for (int j = 0; j < kF32LinearTilePanels && 16 * j < columns; ++j) {
    const int left = columns - 16 * j;
    const __mmask16 lanes = prefixMask(columns, 16 * j);
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {
      const __m512 v = _mm512_add_ps(acc[r][j], _mm512_loadu_ps(bias + 16 * j));
      if (od[0].stride == 1) {
        _mm512_mask_storeu_ps(orow[r] + 16 * j, lanes, v);
      } else {
        float values[16];
        _mm512_storeu_ps(values, v);
        for (int t = 0; t < 16 && t < left; ++t)
          orow[r][(int64_t)(16 * j + t) * od[0].stride] = values[t];
      }
    }
  }
}

/* Task `index`'s part of the region: columns [begin, end), a range of
 * kF32LinearTaskColumns, for rows [firstRow, lastRow), block `block` of the
 * range (every row unless there are few column ranges). */
static void taskRegion(const attune_linear_f32_t *c, int index, int *firstRow, int *lastRow,
                       int *begin, int *end) {
  const int range = index / c->rowBlocks, block = index % c->rowBlocks;
  *firstRow = block * c->blockRows;
  *lastRow = *firstRow + c->blockRows < c->M ? *firstRow + c->blockRows : c->M;
  *begin = range * kF32LinearTaskColumns;
  *end = *begin + kF32LinearTaskColumns < c->N ? *begin + kF32LinearTaskColumns : c->N;
}

/* The bias of the `count` columns from n of the region (0 past N, or
 * without one), once for all the rows of a tile. */
static void tileBias(const attune_linear_f32_t *c, int n, int count, float *bias) {
  for (int t = 0; t < count; ++t)
    bias[t] = c->bias && n + t < c->N
                  ? ((const float *)c->bias->host)[(int64_t)(c->n0 + n + t - c->bias->dim[0].min) *
                                                   c->bias->dim[0].stride]
                  : 0.0f;
}

/* Rows [m, m + R) of the region: x's rows at xr[r] (element k at + k xs)
 * and out's at orow[r], from the region's column n. */
static inline __attribute__((always_inline)) void
tileRows(const attune_linear_f32_t *c, int m, int R, int n, const float **xr, float **orow) {
  const attune_hl_dim_t *xd = c->x->dim, *od = c->out->dim;
  for (int r = 0; r < R; ++r) {
    xr[r] = (const float *)c->x->host + (int64_t)(c->m0 + m + r - xd[1].min) * xd[1].stride -
            (int64_t)xd[0].min * xd[0].stride;
    orow[r] = (float *)c->out->host + (int64_t)(c->m0 + m + r - od[1].min) * od[1].stride +
              (int64_t)(c->n0 + n - od[0].min) * od[0].stride;
  }
}

/* Task `index` on AVX-512 (taskRegion), 8 rows at a time. */
F32_LINEAR_TGT static int f32LinearTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  const attune_linear_f32_t *c = (const attune_linear_f32_t *)closure;
  const float *w = (const float *)c->w->host;
  const int64_t panelStride = c->w->dim[2].stride;
  const int panels = c->w->dim[2].extent;
  int firstRow, lastRow, begin, end;
  taskRegion(c, index, &firstRow, &lastRow, &begin, &end);
  /* The last tile's panels when fewer than three are stored from it: copied
   * after zeros, so that the tile reads three (their columns past N are
   * not stored). */
  float *tail = NULL;
  for (int n = begin; n < end; n += 16 * kF32LinearTilePanels) {
    const int p = (c->n0 + n) / kF32LinearPanel;
    const float *w0 = w + (int64_t)p * panelStride;
    if (p + kF32LinearTilePanels > panels) {
      if (!tail) {
        const size_t floats = (size_t)kF32LinearTilePanels * c->K * kF32LinearPanel;
        if (!(tail = aligned_alloc(64, (floats + 16) * sizeof(float)))) /* never 0 bytes */
          return kErrMemory;
        memset(tail, 0, floats * sizeof(float));
        for (int q = 0; p + q < panels; ++q)
          memcpy(tail + (size_t)q * c->K * kF32LinearPanel, w + (int64_t)(p + q) * panelStride,
                 sizeof(float) * c->K * kF32LinearPanel);
      }
      w0 = tail;
    }
    float bias[16 * kF32LinearTilePanels];
    tileBias(c, n, 16 * kF32LinearTilePanels, bias);
    for (int m = firstRow; m < lastRow; m += kF32LinearRows) {
      const int R = lastRow - m < kF32LinearRows ? lastRow - m : kF32LinearRows;
      const float *xr[kF32LinearRows];
      float *orow[kF32LinearRows];
      tileRows(c, m, R, n, xr, orow);
      if (R == kF32LinearRows)
        f32LinearTile(kF32LinearRows, c, xr, w0, n, bias, orow);
      else
        f32LinearTile(R, c, xr, w0, n, bias, orow);
    }
  }
  free(tail);
  return kOk;
}

/* The AVX2 tile, as f32LinearTile: rows [m, m + R) (R <= 4) by the 24
 * columns from n of the region, vector v's 8 columns at wv[v] (row k of its
 * panel at + 16 k), bias[0, 24) added after the k loop. */
F32_LINEAR_AVX2_TGT static inline __attribute__((always_inline)) void
f32LinearTileAvx2(const int R, const attune_linear_f32_t *c, const float *const *xr,
                  const float *const *wv, int n, const float *bias, float *const *orow) {
  const int K = c->K;
  const int64_t xs = c->x->dim[0].stride;
  const float *w0 = wv[0], *w1 = wv[1], *w2 = wv[2];
  __m256 acc[kF32LinearAvx2Rows][kF32LinearAvx2Vectors];
  /* Every row, so that GCC sees none read before it is set. */
  _Pragma("GCC unroll 4") for (int r = 0; r < kF32LinearAvx2Rows; ++r)
      _Pragma("GCC unroll 3") for (int v = 0; v < kF32LinearAvx2Vectors; ++v) acc[r][v] =
          _mm256_setzero_ps();
  _Pragma("GCC unroll 2") for (int k = 0; k < K; ++k) {
    const int64_t at = (int64_t)k * kF32LinearPanel;
    const __m256 b0 = _mm256_loadu_ps(w0 + at), b1 = _mm256_loadu_ps(w1 + at),
                 b2 = _mm256_loadu_ps(w2 + at);
    _Pragma("GCC unroll 4") for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(xr[r] + (int64_t)k * xs);
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
      acc[r][2] = _mm256_fmadd_ps(a, b2, acc[r][2]);
    }
  }
  /* Unrolled, so that acc is never indexed by a variable: GCC then kept a
   * copy of it in memory, stored every k step (0.30 of the peak). */
  const attune_hl_dim_t *od = c->out->dim;
  const int columns = c->N - n;
  _Pragma("GCC unroll 3") for (int v = 0; v < kF32LinearAvx2Vectors; ++v) {
    const int left = columns - 8 * v;
    if (left <= 0)
      break;
    /* Lanes l < left: all ones. */
    const __m256i lanes =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    _Pragma("GCC unroll 4") for (int r = 0; r < R; ++r) {
      const __m256 value = _mm256_add_ps(acc[r][v], _mm256_loadu_ps(bias + 8 * v));
      if (od[0].stride == 1 && left >= 8) {
        _mm256_storeu_ps(orow[r] + 8 * v, value);
      } else if (od[0].stride == 1) {
        _mm256_maskstore_ps(orow[r] + 8 * v, lanes, value);
      } else {
        float values[8];
        _mm256_storeu_ps(values, value);
        for (int t = 0; t < 8 && t < left; ++t)
          orow[r][(int64_t)(8 * v + t) * od[0].stride] = values[t];
      }
    }
  }
}

/* Task `index` on AVX2 (taskRegion), 4 rows at a time. A vector past the
 * stored panels reads the last one: its columns are past N, never stored. */
F32_LINEAR_AVX2_TGT static int f32LinearTaskAvx2(void *uc, int index, uint8_t *closure) {
  (void)uc;
  const attune_linear_f32_t *c = (const attune_linear_f32_t *)closure;
  const float *w = (const float *)c->w->host;
  const int64_t panelStride = c->w->dim[2].stride;
  const int panels = c->w->dim[2].extent;
  int firstRow, lastRow, begin, end;
  taskRegion(c, index, &firstRow, &lastRow, &begin, &end);
  for (int n = begin; n < end; n += 8 * kF32LinearAvx2Vectors) {
    const float *wv[kF32LinearAvx2Vectors];
    for (int v = 0; v < kF32LinearAvx2Vectors; ++v) {
      const int column = c->n0 + n + 8 * v, p = column / kF32LinearPanel;
      wv[v] = w + (int64_t)(p < panels ? p : panels - 1) * panelStride + column % kF32LinearPanel;
    }
    float bias[8 * kF32LinearAvx2Vectors];
    tileBias(c, n, 8 * kF32LinearAvx2Vectors, bias);
    for (int m = firstRow; m < lastRow; m += kF32LinearAvx2Rows) {
      const int R = lastRow - m < kF32LinearAvx2Rows ? lastRow - m : kF32LinearAvx2Rows;
      const float *xr[kF32LinearAvx2Rows];
      float *orow[kF32LinearAvx2Rows];
      tileRows(c, m, R, n, xr, orow);
      if (R == kF32LinearAvx2Rows)
        f32LinearTileAvx2(kF32LinearAvx2Rows, c, xr, wv, n, bias, orow);
      else
        f32LinearTileAvx2(R, c, xr, wv, n, bias, orow);
    }
  }
  return kOk;
}

/* Whether `buf` is a 2-d f32 buffer. */
static int isF32Matrix(const attune_hl_buffer_t *buf) {
  return buf->type.code == kHlTypeFloat && buf->type.bits == 32 && buf->type.lanes == 1 &&
         buf->dimensions == 2;
}

/* The linear on `task` (f32LinearTask or f32LinearTaskAvx2), whose register
 * tiles are `rows` tall. */
static int linearF32(attune_hl_buffer_t *x, attune_hl_buffer_t *w, attune_hl_buffer_t *bias,
                     attune_hl_buffer_t *out, int (*task)(void *, int, uint8_t *), int rows) {
  if (!x->host || !w->host || (bias && !bias->host) || !out->host)
    return kOk; /* bounds query: the inputs are the buffers' whole extents */
  const attune_hl_dim_t *wd = w->dim;
  if (!isF32Matrix(x) || !isF32Matrix(out) || w->type.code != kHlTypeFloat ||
      w->type.bits != 32 || w->dimensions != 3 || wd[0].extent != kF32LinearPanel ||
      wd[0].stride != 1 || wd[1].stride != kF32LinearPanel || wd[0].min || wd[1].min ||
      wd[2].min || wd[1].extent != x->dim[0].extent || out->dim[0].min % kF32LinearPanel ||
      out->dim[0].min < 0 ||
      (int64_t)wd[2].extent * kF32LinearPanel < (int64_t)out->dim[0].min + out->dim[0].extent ||
      x->dim[1].min > out->dim[1].min ||
      x->dim[1].min + x->dim[1].extent < out->dim[1].min + out->dim[1].extent ||
      (bias && (bias->type.code != kHlTypeFloat || bias->type.bits != 32 ||
                bias->dimensions != 1 || bias->dim[0].min > out->dim[0].min ||
                bias->dim[0].min + bias->dim[0].extent <
                    out->dim[0].min + out->dim[0].extent)))
    return kErrShape;
  attune_linear_f32_t call;
  memset(&call, 0, sizeof call);
  call.x = x;
  call.w = w;
  call.bias = bias;
  call.out = out;
  call.K = x->dim[0].extent;
  call.m0 = out->dim[1].min;
  call.M = out->dim[1].extent;
  call.n0 = out->dim[0].min;
  call.N = out->dim[0].extent;
  if (call.M == 0 || call.N == 0)
    return kOk;
  /* Few column ranges (narrow layers): each split into row blocks of a
   * multiple of the tile's rows, until there are kF32LinearMinTasks tasks for the
   * threads to share; a range's blocks are consecutive tasks. */
  const int ranges = (call.N + kF32LinearTaskColumns - 1) / kF32LinearTaskColumns;
  const int rowTiles = (call.M + rows - 1) / rows;
  int blocks = (kF32LinearMinTasks + ranges - 1) / ranges;
  blocks = blocks < rowTiles ? blocks : rowTiles;
  call.blockRows = (rowTiles + blocks - 1) / blocks * rows;
  call.rowBlocks = (call.M + call.blockRows - 1) / call.blockRows;
  return runTasks(task, ranges * call.rowBlocks, &call);
}

/* The extern stages: x[K, M] f32, w[16, K, panels] f32 (dense, from 0),
 * bias[N] f32, out[N, M] f32 (Halide's dimension order), out's columns
 * starting at a multiple of 16. Return 0, or a negative code the pipeline
 * reports as the stage's error. */
int attune_linear_f32_avx512(attune_hl_buffer_t *x, attune_hl_buffer_t *w,
                             attune_hl_buffer_t *out) {
  return linearF32(x, w, NULL, out, f32LinearTask, kF32LinearRows);
}

int attune_linear_f32_avx512_bias(attune_hl_buffer_t *x, attune_hl_buffer_t *w,
                                  attune_hl_buffer_t *bias, attune_hl_buffer_t *out) {
  return linearF32(x, w, bias, out, f32LinearTask, kF32LinearRows);
}

int attune_linear_f32_avx2(attune_hl_buffer_t *x, attune_hl_buffer_t *w, attune_hl_buffer_t *out) {
  return linearF32(x, w, NULL, out, f32LinearTaskAvx2, kF32LinearAvx2Rows);
}

int attune_linear_f32_avx2_bias(attune_hl_buffer_t *x, attune_hl_buffer_t *w,
                                attune_hl_buffer_t *bias, attune_hl_buffer_t *out) {
  return linearF32(x, w, bias, out, f32LinearTaskAvx2, kF32LinearAvx2Rows);
}
