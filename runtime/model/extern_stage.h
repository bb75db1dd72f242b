/* What the hand-written kernels in this folder (amx_kernels.c,
 * attention_f32.c) share as Halide extern stages: the buffer type Halide
 * passes them, row access, key padding, the task runner and the score
 * modifiers' bias tables. Included by each kernel file; all of it is static,
 * so one translation unit may include it more than once (model_support.c
 * includes every file of this folder). */

#ifndef ATTUNE_RUNTIME_MODEL_EXTERN_STAGE_H
#define ATTUNE_RUNTIME_MODEL_EXTERN_STAGE_H

#include <immintrin.h>
#include <math.h> /* cos, sin */
#include <stdint.h>
#include <stdlib.h>

/* halide_buffer_t and the types it holds, as HalideRuntime.h declares them
 * (a stable ABI): these files are compiled where Halide's headers may not
 * be. */
typedef struct {
  uint8_t code, bits;
  uint16_t lanes;
} attune_hl_type_t;
typedef struct {
  int32_t min, extent, stride;
  uint32_t flags;
} attune_hl_dim_t;
typedef struct {
  uint64_t device;
  const void *device_interface;
  uint8_t *host;
  uint64_t flags;
  attune_hl_type_t type;
  int32_t dimensions;
  attune_hl_dim_t *dim;
  void *padding;
} attune_hl_buffer_t;

/* halide_type_code_t's values. */
enum { kHlTypeFloat = 2, kHlTypeBfloat = 4 };

/* Error codes an extern stage returns (nonzero fails the pipeline). */
enum { kOk = 0, kErrNoAmx = -1, kErrShape = -2, kErrMemory = -3 };

/* The Halide runtime's thread pool, in a model library; absent (null) in a
 * process that JIT-compiles kernels. */
extern int halide_do_par_for(void *user_context,
                             int (*task)(void *user_context, int index, uint8_t *closure),
                             int min, int size, uint8_t *closure) __attribute__((weak));

/* The parallel loop a process that JIT-compiles kernels gives the extern
 * stages (compiler/codegen/halide/JitKernel.cpp: as many threads as the JIT
 * kernel runs on); absent (null) in a model library. */
extern int attune_jit_par_for(int (*task)(void *user_context, int index, uint8_t *closure),
                              int count, uint8_t *closure) __attribute__((weak));

/* Element (0, x1, x2, x3) of a 4-d buffer of 2- or 4-byte elements. */
/* Elements [j, j + 16) of a row's first n (keys of a block, columns of an
 * output): a lane mask. */
static inline __mmask16 prefixMask(int n, int j) {
  return n - j >= 16 ? 0xFFFF : n - j <= 0 ? 0 : (__mmask16)((1u << (n - j)) - 1);
}

static inline void *element(const attune_hl_buffer_t *buf, int x1, int x2, int x3) {
  const attune_hl_dim_t *d = buf->dim;
  return buf->host + (buf->type.bits / 8) * ((int64_t)(x1 - d[1].min) * d[1].stride +
                                             (int64_t)(x2 - d[2].min) * d[2].stride +
                                             (int64_t)(x3 - d[3].min) * d[3].stride);
}

/* The dims of an attention extern stage's tensors, in Halide's order: q
 * [D, Sq, H, B], k [D, Sk, Hkv, B], v [Dv, Sk, Hkv, B], out [Dv, Sq, H, B]. */
typedef struct {
  int D, Dv, Sq, Sk, H, Hkv, B;
} attune_attention_dims_t;

/* `dims` of q, k and v; 0 when out is not the whole [Dv, Sq, H, B] from 0
 * or H is not a multiple of Hkv > 0. */
static inline int attentionDims(const attune_hl_buffer_t *q, const attune_hl_buffer_t *k,
                                const attune_hl_buffer_t *v, const attune_hl_buffer_t *out,
                                attune_attention_dims_t *dims) {
  dims->D = q->dim[0].extent;
  dims->Dv = v->dim[0].extent;
  dims->Sq = q->dim[1].extent;
  dims->Sk = k->dim[1].extent;
  dims->H = q->dim[2].extent;
  dims->Hkv = k->dim[2].extent;
  dims->B = q->dim[3].extent;
  const attune_hl_dim_t *o = out->dim;
  return dims->Hkv > 0 && dims->H % dims->Hkv == 0 && o[0].extent == dims->Dv && o[1].min == 0 &&
         o[1].extent == dims->Sq && o[2].min == 0 && o[2].extent == dims->H && o[3].min == 0 &&
         o[3].extent == dims->B;
}

/* An attention extern stage's answer to Halide's bounds query, for what
 * every one of them reads: q at out's rows, heads and batch (k, v and key
 * padding whole: the buffers' own extents), and with `tables` bias tables
 * (isBiasTable) their distances for every query row and key of every head
 * (`keys` is Sk). */
static inline void queryAttentionRegions(attune_hl_buffer_t *q, attune_hl_buffer_t *bias,
                                         const attune_hl_buffer_t *out, int tables, int keys) {
  for (int d = 1; d < 4; ++d) {
    q->dim[d].min = out->dim[d].min;
    q->dim[d].extent = out->dim[d].extent;
  }
  if (tables && bias->dimensions == 3) {
    bias->dim[0].min = 0;
    bias->dim[0].extent = keys + out->dim[1].extent - 1;
    bias->dim[1].min = 0;
    bias->dim[1].extent = out->dim[2].extent;
    bias->dim[2].min = 0;
    bias->dim[2].extent = tables;
  }
}

/* Whether key j of batch b attends: its key padding element (any integer,
 * bool or float type, [Sk, B]) is nonzero. */
static inline int keyAttends(const attune_hl_buffer_t *kpad, int j, int b) {
  const int bytes = (kpad->type.bits + 7) / 8;
  const int64_t at = (int64_t)(j - kpad->dim[0].min) * kpad->dim[0].stride +
                     (int64_t)(b - kpad->dim[1].min) * kpad->dim[1].stride;
  const uint8_t *x = kpad->host + (size_t)bytes * at;
  int nonzero = 0;
  for (int e = 0; e < bytes; ++e)
    nonzero |= x[e];
  return nonzero != 0;
}

/* Runs task(0 .. count-1) on the library's thread pool, or the JIT
 * process's loop, or serially in a process with neither; 0 or a failure's
 * code. */
static inline int runTasks(int (*task)(void *, int, uint8_t *), int count, void *closure) {
  if (halide_do_par_for)
    return halide_do_par_for(NULL, task, 0, count, (uint8_t *)closure);
  if (attune_jit_par_for)
    return attune_jit_par_for(task, count, (uint8_t *)closure);
  for (int i = 0; i < count; ++i) {
    int status = task(NULL, i, (uint8_t *)closure);
    if (status)
      return status;
  }
  return 0;
}

/* The score modifiers' biases as the attention extern stages take them:
 * `bias` is f32 [distances, H, tables] from 0, dense along distances, table
 * t's bias of head h at distance index x = j - i + Sq - 1 (query row i, key
 * j; distances = Sk + Sq - 1), in natural-log units, -inf where it masks.
 * Returns whether `bias` has that shape for `tables` tables. */
static inline int isBiasTable(const attune_hl_buffer_t *bias, int tables, int distances, int H) {
  return bias->type.code == kHlTypeFloat && bias->type.bits == 32 && bias->dimensions == 3 &&
         bias->dim[0].stride == 1 && bias->dim[0].min == 0 && bias->dim[0].extent >= distances &&
         bias->dim[1].min == 0 && bias->dim[1].extent >= H && bias->dim[2].min == 0 &&
         bias->dim[2].extent >= tables;
}

/* The tables of `bias` summed in IEEE arithmetic (-inf stays -inf; summed
 * in Halide, LLVM folded a sliding window's -inf plus ALiBi's bias to the
 * bias alone, since Halide compiles float code assuming no infinities) and
 * taken to log2 units, into H rows of `rowFloats` floats: distance index x
 * at row[x], or at row[distances - 1 - x] when `reversed`; the rest of each
 * row 0. NULL when out of memory. */
static inline float *sumBiasTables(const attune_hl_buffer_t *bias, int tables, int distances,
                                   int H, int rowFloats, int reversed) {
  float *sum = calloc((size_t)H * rowFloats + 1, sizeof(float)); /* + 1: never 0 bytes */
  if (!sum)
    return NULL;
  const float *table = (const float *)bias->host;
  for (int h = 0; h < H; ++h)
    for (int x = 0; x < distances; ++x) {
      float total = 0;
      for (int t = 0; t < tables; ++t)
        total += table[x + (int64_t)h * bias->dim[1].stride + (int64_t)t * bias->dim[2].stride];
      sum[(size_t)h * rowFloats + (reversed ? distances - 1 - x : x)] =
          total * 1.4426950408889634f;
    }
  return sum;
}

/* RoPE as tfm.attention's `rope` asks (rotary dims, interleaved pairs or
 * split halves, a position offset): q row i is rotated at position i + (Sk -
 * Sq) + offset and k row j at j + offset. cos and sin hold cos and sin of
 * pos * theta_p for the call's positions [minPos, minPos + positions),
 * dims / 2 per position (ropeTables). dims 0: no RoPE. */
typedef struct {
  int dims, interleaved, offset, minPos, positions;
  float *cos, *sin;
} attune_rope_t;

/* RoPE's positions are split as kRopeStep a + r (RopeKernels.cpp's
 * kRopeStep): the call computes cos and sin of kRopeStep a theta with libm,
 * the library embeds those of r theta. */
enum { kRopeStep = 64 };

/* rope->cos and sin for a call with head dim D, Sq queries and Sk keys
 * (rope->dims, interleaved and offset set), from `table` (theta[R/2], then
 * cos and sin of r theta_p at r * R/2 + p for r < kRopeStep), in double as
 * RopeKernels.cpp does. The caller frees rope->cos (sin shares its block). */
static inline int ropeTables(attune_rope_t *rope, const attune_hl_buffer_t *table, int D, int Sq,
                             int Sk) {
  const int half = rope->dims / 2;
  if (rope->dims < 2 || rope->dims % 2 || rope->dims > D || !table->host ||
      table->type.bits != 64 || table->dimensions != 1 ||
      table->dim[0].extent < half * (1 + 2 * kRopeStep))
    return kErrShape;
  const double *theta = (const double *)table->host;
  const double *fineCos = theta + half, *fineSin = fineCos + (size_t)kRopeStep * half;
  const int diag = Sk - Sq;
  rope->minPos = rope->offset + (diag < 0 ? diag : 0);
  rope->positions = rope->offset + Sk - rope->minPos;
  size_t count = (size_t)rope->positions * half;
  rope->cos = malloc((count + 1) * 2 * sizeof(float)); /* + 1: never 0 bytes */
  if (!rope->cos)
    return kErrMemory;
  rope->sin = rope->cos + count;
  double *coarse = malloc((size_t)half * 2 * sizeof(double));
  if (!coarse) {
    free(rope->cos);
    rope->cos = NULL;
    return kErrMemory;
  }
  double *coarseCos = coarse, *coarseSin = coarse + half;
  /* floor division, as Halide's integer division */
  const int first = rope->minPos, end = rope->minPos + rope->positions;
  const int aFirst = first >= 0 ? first / kRopeStep : -((-first + kRopeStep - 1) / kRopeStep);
  for (int a = aFirst; a * kRopeStep < end; ++a) {
    for (int p = 0; p < half; ++p) {
      const double angle = (double)a * kRopeStep * theta[p];
      coarseCos[p] = cos(angle);
      coarseSin[p] = sin(angle);
    }
    for (int r = 0; r < kRopeStep; ++r) {
      const int pos = a * kRopeStep + r;
      if (pos < first || pos >= end)
        continue;
      float *c = rope->cos + (size_t)(pos - first) * half;
      float *sn = rope->sin + (size_t)(pos - first) * half;
      for (int p = 0; p < half; ++p) {
        const double cb = fineCos[(size_t)r * half + p], sb = fineSin[(size_t)r * half + p];
        c[p] = (float)(coarseCos[p] * cb - coarseSin[p] * sb);
        sn[p] = (float)(coarseSin[p] * cb + coarseCos[p] * sb);
      }
    }
  }
  free(coarse);
  return kOk;
}

/* Blocks for what an extern stage packs per call (amx_kernels.c's K and V,
 * attention_f32.c's K) outlive the call that made them, for the next call.
 * A fresh block is fresh pages, faulted in and zeroed by the kernel on
 * every call: at Sq=64 against Sk=4096 (H=32, D=128, a 64 MB copy) that
 * was most of the call (18,000 page faults a call), and the copy of a
 * 2048-token prefill with 32 heads (32 MB) faulted 8,000 pages a call. One
 * block is kept (one per file that includes this one), grown when a call
 * needs more (as an arena keeps its high water mark: at most the size of
 * the largest packing a call had); a call that finds it taken (concurrent
 * calls) allocates its own, and the block returned last is kept. Freed when
 * the library is unloaded. A block starts with a 64-byte header holding its
 * capacity. */
static uint8_t *keptPack; /* atomic */

static inline uint8_t *takePackBlock(size_t bytes) {
  uint8_t *block = __atomic_exchange_n(&keptPack, NULL, __ATOMIC_ACQUIRE);
  if (block && *(size_t *)block >= bytes)
    return block + 64;
  free(block);
  bytes = (bytes + 63) / 64 * 64;
  block = aligned_alloc(64, 64 + bytes);
  if (!block)
    return NULL;
  *(size_t *)block = bytes;
  return block + 64;
}

static inline void givePackBlock(uint8_t *data) {
  free(__atomic_exchange_n(&keptPack, data - 64, __ATOMIC_ACQ_REL));
}

__attribute__((destructor)) static inline void freePackBlock(void) {
  free(__atomic_exchange_n(&keptPack, NULL, __ATOMIC_ACQUIRE));
}

/* x[r] becomes column r of the 16x16 matrix of 32-bit elements whose rows
 * were x[0..15]: unpacks of 32- and 64-bit elements within 128-bit lanes,
 * then a 4x4 transpose of the lanes. */
__attribute__((target("avx512f"))) static inline void transpose16x16(__m512i x[16]) {
  __m512i t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]);
  }
  /* u[4i + k], lane L: column 4L + k of rows 4i .. 4i + 3. */
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    __m512i v0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
    __m512i v1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
    __m512i v2 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
    __m512i v3 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
    x[k] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    x[4 + k] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
    x[8 + k] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    x[12 + k] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
  }
}

/* The same for the 8x8 matrix of 32-bit elements in x[0..7]. */
__attribute__((target("avx2"))) static inline void transpose8x8(__m256i x[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps((__m256)x[2 * i], (__m256)x[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps((__m256)x[2 * i], (__m256)x[2 * i + 1]);
  }
  /* u[4i + k], 128-bit lane L: column 4L + k of rows 4i .. 4i + 3. */
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    x[k] = (__m256i)_mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
    x[4 + k] = (__m256i)_mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
  }
}

#endif /* ATTUNE_RUNTIME_MODEL_EXTERN_STAGE_H */
