/* Part of every model library attune-compile links, and of every kernel
 * library attune-tune times (embedded in the compiler and compiled with the
 * system C compiler, as scratch_cache.c is; see
 * compiler/codegen/halide/ModelSupport.h): the kernels that run on Intel
 * AMX tiles, which the avx512_spr variants of bf16 kernels call as Halide
 * extern stages:
 *  - scaled dot-product attention on bf16 tensors or with bf16 products
 *    (compiler/codegen/halide/AttentionKernel.cpp says which attentions);
 *  - the linear over bf16 pair panels, --precision=bf16's linears
 *    (MatmulKernels.cpp), at the end of this file.
 *
 * Why not a Halide schedule. Halide 21 lowers to AMX only a lone matmul Func
 * stored in MemoryType::AMXTile, with the right operand in AMX's pair
 * layout: fused attention is two matmuls with an online softmax between
 * them on the same tiles, which its tile extraction does not match, and one
 * place for both kernels' tile handling (configuration, the permission
 * Linux asks for) reads better than two routes. These are the kernels
 * written against the tile instructions, as IREE and oneDNN write their
 * AMX micro-kernels.
 *
 * Attention.
 *
 * What. out[c, i, h, b] = sum_j softmax_j(scale * q[:, i, h, b] . k[:, j, hk, b])
 * v[c, j, hk, b], hk = h / (H / Hkv), causal rows seeing keys
 * j <= i + (Sk - Sq), and keys whose key padding is 0 masked (the
 * _padded entry); a row that sees no key is 0. q, k, v and out are bf16,
 * or f32 (an attention with bf16 products, as --precision=bf16 makes them:
 * q, k and v are rounded to bf16 as they are read, the output is f32);
 * products accumulate in f32 (AMX TDPBF16PS) and the softmax statistics are
 * f32; the probabilities are rounded to bf16 for the second product.
 * With RoPE (tfm.attention's `rope`), q and k are rotated in f32 as they
 * are read, then rounded to bf16 (see loadRowBf16).
 *
 * How. Keys and values of each (batch, kv head) are first packed into the
 * layout AMX's B operand reads ("VNNI": a 16-row tile whose row r holds the
 * pairs (x[2r][n], x[2r+1][n]) for 16 columns n), zero past Sk. Then each
 * task takes 32 query rows of one head (two 16-row tiles) and walks the
 * keys in blocks of up to 256: GEMM #1 puts the block's scores on four
 * 16x16 f32 accumulator tiles per 32 keys, stored to a scores buffer; AVX-512
 * takes the block's max, exponentials and sum per row and rescales the
 * output accumulator when the max grew (FlashAttention's online softmax);
 * GEMM #2 adds probabilities . values into the accumulator, 32 output
 * columns at a time. Tasks run on the library's thread pool when it has one
 * (halide_do_par_for, which par_for.c serves), serially otherwise. With
 * few query rows per kv head (decoding) tiles do not pay: those calls take
 * a streaming path in AVX-512 instead (decodeTask).
 *
 * Measured (Intel Xeon, Sapphire/Emerald Rapids, one core, S=2048, D=128,
 * H=4): benchmarks/README.md. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include <immintrin.h>
#include <math.h> /* INFINITY */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "extern_stage.h"

enum {
  kQueryRows = 32,  /* rows per task: two 16-row A tiles */
  kKeyBlock = 256,  /* keys per softmax block */
  kMaxHeadDim = 256, /* D and Dv: multiples of 32 up to this */
  /* Decoding (decodeTask): at most this many query rows per kv head, keys
   * in blocks of kDecodeBlock, a (batch, kv head)'s keys split until there
   * are kDecodeTasks tasks but no slice has fewer than kDecodeSplitKeys. */
  kDecodeRows = 16,
  kDecodeBlock = 256,
  kDecodeTasks = 32,
  kDecodeSplitKeys = 512,
  /* softmaxRow: how far (log2) scores may pass the running max before it
   * moves. */
  kLazyGrowth = 8
};

#define ATTUNE_AMX_TARGET \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))

typedef struct {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} attune_tile_config_t;

/* Linux hands a process AMX's 8 KiB of tile state only on request; a tile
 * instruction before it raises SIGILL. Asked once per process. */
static int requestAmx(void) {
  static volatile int state; /* 0 unknown, 1 granted, -1 refused */
  if (state == 0) {
    const long ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
    state = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 1 : -1;
  }
  return state == 1;
}

/* Not inlined, and the configuration's stores fenced off from the load:
 * inlined into the attention task, GCC 12 kept the rows but dropped the
 * colsb stores before ldtilecfg (it does not see the instruction read all
 * 64 bytes), and the zero widths made ldtilecfg fault. */
ATTUNE_AMX_TARGET __attribute__((noinline)) static void loadTileConfig(void) {
  attune_tile_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  __asm__ volatile("" : : "m"(cfg) : "memory");
  _tile_loadconfig(&cfg);
}

/* 2^x for x >= -125 after clamping (x <= 0, or up to kLazyGrowth in
 * softmaxRow's one-pass path): a degree-3 minimax polynomial
 * on the fraction (relative error 7.5e-5), scaled by the integer part.
 * Below -125 (-inf included) it gives ~2^-125, nothing beside the row max's
 * 2^0, and never a denormal: the polynomial is 0.99993 at 0, so a clamp at
 * -126 made denormals, which vscalefps and the multiplies and adds after it
 * take a microcode assist for. That clamp cost plain attention 5-12% (the
 * first block's rescale of each empty accumulator), and a sliding window
 * 1.9x and ALiBi 1.3x, whose masked and far keys all hit it (Intel Xeon,
 * S=2048, one thread; benchmarks/README.md). The
 * probabilities are rounded to bf16 (relative error up to 3.9e-3) before
 * the second product, so a closer polynomial (degree 5, 2e-7) bought no
 * accuracy and cost two FMAs of the softmax's ten operations a vector. */
ATTUNE_AMX_TARGET static inline __m512 exp2Ps(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-125.f));
  __m512 whole = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_sub_ps(x, whole);
  __m512 p = _mm512_set1_ps(7.8024290e-2f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.2606728e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9583361e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.9992520e-1f));
  return _mm512_scalef_ps(p, whole);
}

typedef struct {
  const attune_hl_buffer_t *q, *k, *v, *out;
  int D, Dv, Sq, Sk, H, Hkv, B, paddedKeys;
  int causal;
  const attune_hl_buffer_t *keyPadding; /* [Sk, B], nonzero attends; or NULL */
  __mmask16 *attend; /* with keyPadding: per batch, one mask per 16 padded keys */
  float scaleLog2e;
  uint16_t *packedK, *packedV; /* per (b, hk): paddedKeys x D, paddedKeys x Dv */
  /* RoPE (rope.dims > 0): q row i is rotated at position i + (Sk - Sq) +
   * rope.offset and k row j at j + rope.offset (see attune_rope_t). */
  attune_rope_t rope;
  /* Decoding: each (b, hk)'s keys in `splits` slices of splitKeys; with
   * more than one, per task and row its max, sum and Dv accumulators. */
  int splits, splitKeys;
  float *partial;
  /* Score modifiers (ALiBi, T5 buckets, a sliding window): bias[h][x], in
   * log2 units, is added to the score of query row i and key j at x = j -
   * i + Sq - 1 (distance j - (i + Sk - Sq) + Sk - 1); -inf masks the key.
   * Keys at distances outside [deltaLo, deltaHi] are all masked, so
   * blocks of them are skipped. NULL: none. */
  const float *bias;
  int64_t biasStride; /* between heads */
  int64_t deltaLo, deltaHi;
  int failed;
} attune_amx_call_t;

/* n (a multiple of 16) values of a row of `buf` as bf16: copied, or f32
 * rounded to nearest even. */
ATTUNE_AMX_TARGET static void loadBf16(const attune_hl_buffer_t *buf, const void *from, int n,
                                       uint16_t *to) {
  if (buf->type.bits == 16) {
    memcpy(to, from, (size_t)n * 2);
    return;
  }
  const float *x = (const float *)from;
  for (int i = 0; i < n; i += 16)
    _mm256_storeu_si256((__m256i *)(to + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
}

/* 16 bf16 values as f32 (exact: a bf16 is the top half of an f32). */
ATTUNE_AMX_TARGET static inline __m512 widenBf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* n (a multiple of 16) values of a row of `buf` as f32: bf16 widened, or
 * copied. */
ATTUNE_AMX_TARGET static void loadF32(const attune_hl_buffer_t *buf, const void *from, int n,
                                      float *to) {
  for (int i = 0; i < n; i += 16)
    _mm512_storeu_ps(to + i, buf->type.bits == 16
                                 ? widenBf16(_mm256_loadu_si256(
                                       (const __m256i *)((const uint16_t *)from + i)))
                                 : _mm512_loadu_ps((const float *)from + i));
}

/* Row `from` of q or k (n values, a multiple of 16) as f32, rotated at
 * position `pos` when the call has RoPE, as the reference rotates (element
 * d and its partner: x_d cos - x_partner sin for the first of a pair,
 * x_d cos + x_partner sin for the second). */
ATTUNE_AMX_TARGET static void loadRowF32(const attune_amx_call_t *call,
                                         const attune_hl_buffer_t *buf, const void *from, int n,
                                         int pos, float *to) {
  loadF32(buf, from, n, to);
  if (!call->rope.dims)
    return;
  float x[kMaxHeadDim] __attribute__((aligned(64)));
  memcpy(x, to, (size_t)n * 4);
  const int half = call->rope.dims / 2;
  const size_t row = (size_t)(pos - call->rope.minPos) * half;
  const float *cs = call->rope.cos + row, *sn = call->rope.sin + row;
  int p = 0;
  if (!call->rope.interleaved)
    for (; p + 16 <= half; p += 16) {
      /* Split halves (LLaMA): both halves of 16 pairs at once. */
      __m512 a = _mm512_load_ps(x + p), b = _mm512_loadu_ps(x + p + half);
      __m512 c = _mm512_loadu_ps(cs + p), s = _mm512_loadu_ps(sn + p);
      _mm512_storeu_ps(to + p, _mm512_sub_ps(_mm512_mul_ps(a, c), _mm512_mul_ps(b, s)));
      _mm512_storeu_ps(to + p + half, _mm512_add_ps(_mm512_mul_ps(b, c), _mm512_mul_ps(a, s)));
    }
  else {
    /* Interleaved pairs (GPT-J): 8 pairs at once, each pair's cos and sin
     * in both its lanes; fmaddsub subtracts in the first lane of a pair
     * and adds in the second. */
    const __m512i twice = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    for (; p + 8 <= half; p += 8) {
      __m512 a = _mm512_load_ps(x + 2 * p), partner = _mm512_permute_ps(a, 0xB1);
      __m512 c = _mm512_permutexvar_ps(twice, _mm512_castps256_ps512(_mm256_loadu_ps(cs + p)));
      __m512 s = _mm512_permutexvar_ps(twice, _mm512_castps256_ps512(_mm256_loadu_ps(sn + p)));
      _mm512_storeu_ps(to + 2 * p, _mm512_fmaddsub_ps(a, c, _mm512_mul_ps(partner, s)));
    }
  }
  for (; p < half; ++p) {
    const int first = call->rope.interleaved ? 2 * p : p;
    const int second = call->rope.interleaved ? 2 * p + 1 : p + half;
    to[first] = x[first] * cs[p] - x[second] * sn[p];
    to[second] = x[second] * cs[p] + x[first] * sn[p];
  }
}

/* Row `from` of q or k (n values) as bf16: rotated first in f32 when the
 * call has RoPE (loadRowF32), then rounded once. */
ATTUNE_AMX_TARGET static void loadRowBf16(const attune_amx_call_t *call,
                                          const attune_hl_buffer_t *buf, const void *from, int n,
                                          int pos, uint16_t *to) {
  if (call->rope.dims == 0) {
    loadBf16(buf, from, n, to);
    return;
  }
  float y[kMaxHeadDim] __attribute__((aligned(64)));
  loadRowF32(call, buf, from, n, pos, y);
  for (int i = 0; i < n; i += 16)
    _mm256_storeu_si256((__m256i *)(to + i), (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(y + i)));
}

/* Row `from` of q or k (rotated at `pos` with RoPE), or of v (isValue),
 * as the bf16 values the tiled kernel multiplies (loadRowBf16), widened to
 * f32. */
ATTUNE_AMX_TARGET static void loadRowBf16AsF32(const attune_amx_call_t *call,
                                               const attune_hl_buffer_t *buf, const void *from,
                                               int n, int isValue, int pos, float *to) {
  const int rotate = !isValue && call->rope.dims;
  if (rotate)
    loadRowF32(call, buf, from, n, pos, to);
  else
    loadF32(buf, from, n, to);
  if (!rotate && buf->type.bits == 16)
    return; /* bf16 already */
  for (int i = 0; i < n; i += 16)
    _mm512_storeu_ps(to + i, widenBf16((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(to + i))));
}

/* Row `from` of q or k as bf16 (see loadRowBf16): the row itself when it
 * is bf16 and not rotated, else converted into `to`. */
ATTUNE_AMX_TARGET static const uint16_t *rowAsBf16(const attune_amx_call_t *call,
                                                   const attune_hl_buffer_t *buf,
                                                   const void *from, int n, int pos,
                                                   uint16_t *to) {
  if (buf->type.bits == 16 && !call->rope.dims)
    return (const uint16_t *)from;
  loadRowBf16(call, buf, from, n, pos, to);
  return to;
}

/* Row `from` of v as bf16: itself, or rounded from f32 into `to`. */
ATTUNE_AMX_TARGET static const uint16_t *valueRowAsBf16(const attune_amx_call_t *call,
                                                        const void *from, int n, uint16_t *to) {
  if (call->v->type.bits == 16)
    return (const uint16_t *)from;
  loadBf16(call->v, from, n, to);
  return to;
}

/* K of (b, hk) as GEMM #1's B tiles: per 16 keys n0 and 32 head dims c, a
 * 16x64-byte tile whose row r holds the pair (k[c + 2r], k[c + 2r + 1]) of
 * each key n, i.e. the 16x16 transpose of the keys' 32-bit pairs. V as GEMM
 * #2's B tiles: per 32 keys j0 and 16 value dims c, row r holds
 * (v[j0 + 2r][c + n], v[j0 + 2r + 1][c + n]). Zero past Sk. */
ATTUNE_AMX_TARGET static int packTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  attune_amx_call_t *call = (attune_amx_call_t *)closure;
  const int b = index / call->Hkv, hk = index % call->Hkv;
  const int D = call->D, Dv = call->Dv, Sk = call->Sk, P = call->paddedKeys;
  uint32_t *kp = (uint32_t *)(call->packedK + (size_t)index * P * D);
  uint16_t converted[16][kMaxHeadDim] __attribute__((aligned(64)));
  static const uint16_t zeros[kMaxHeadDim] __attribute__((aligned(64)));
  for (int n0 = 0; n0 < P; n0 += 16) {
    /* The 16 keys' rows as bf16: in place when they are (no RoPE). */
    const uint16_t *rows[16];
    for (int n = 0; n < 16; ++n)
      rows[n] = n0 + n >= Sk ? zeros
                             : rowAsBf16(call, call->k, element(call->k, n0 + n, hk, b), D,
                                         n0 + n + call->rope.offset, converted[n]);
    for (int c = 0; c < D; c += 32) {
      __m512i x[16];
      for (int n = 0; n < 16; ++n)
        x[n] = _mm512_loadu_si512(rows[n] + c);
      transpose16x16(x);
      uint32_t *tile = kp + ((size_t)n0 * D + (size_t)c * 16) / 2;
      for (int r = 0; r < 16; ++r)
        _mm512_storeu_si512(tile + r * 16, x[r]);
    }
  }
  /* Key padding of batch b as one mask per 16 keys (bit set: attends),
   * once per batch for every task of its heads. */
  const attune_hl_buffer_t *kpad = call->keyPadding;
  if (kpad && hk == 0) {
    __mmask16 *attend = call->attend + (size_t)b * (P / 16);
    memset(attend, 0, (size_t)(P / 16) * sizeof *attend);
    for (int j = 0; j < Sk; ++j)
      if (keyAttends(kpad, j, b))
        attend[j / 16] |= (__mmask16)(1u << (j % 16));
  }
  uint16_t *vp = call->packedV + (size_t)index * P * Dv;
  /* Interleaves 16 values of row 2r (lanes 0-15) and row 2r + 1 (32-47). */
  __m512i interleave = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                        40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1,
                                        32, 0);
  for (int j0 = 0; j0 < P; j0 += 32)
    for (int r = 0; r < 16; ++r) {
      const int j = j0 + 2 * r;
      const uint16_t *even = j < Sk ? valueRowAsBf16(call, element(call->v, j, hk, b), Dv,
                                                     converted[0])
                                    : zeros;
      const uint16_t *odd = j + 1 < Sk ? valueRowAsBf16(call, element(call->v, j + 1, hk, b),
                                                        Dv, converted[1])
                                       : zeros;
      for (int c = 0; c < Dv; c += 16) {
        __m512i pairs = _mm512_permutex2var_epi16(
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(even + c))), interleave,
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(odd + c))));
        _mm512_storeu_si512(vp + (size_t)j0 * Dv + (size_t)c * 32 + r * 32, pairs);
      }
    }
  return 0;
}

typedef struct {
  float max, sum;
} attune_row_state_t;

/* A row's Dv accumulators times alpha (the online softmax's rescale when
 * the row's max grew); nothing when alpha is 1. */
ATTUNE_AMX_TARGET static inline void rescaleRow(float *acc, int Dv, float alpha) {
  if (alpha == 1.0f)
    return;
  const __m512 va = _mm512_set1_ps(alpha);
  for (int d = 0; d < Dv; d += 16)
    _mm512_storeu_ps(acc + d, _mm512_mul_ps(_mm512_loadu_ps(acc + d), va));
}

/* One block's softmax for one row: scores[0, n) are visible (n may be 0)
 * where `attend` (one mask per 16 keys of the block; NULL: all) has their
 * bit, the rest of the block's `length` keys give probability 0. Rescales
 * the row's accumulator when its max grows. */
ATTUNE_AMX_TARGET static void softmaxRow(const float *scores, int length, int n,
                                         const __mmask16 *attend, float c, uint16_t *probs,
                                         float *acc, int Dv, attune_row_state_t *state) {
  /* Every key of the block visible (no padding, not cut by the causal
   * diagonal): the common case, with no masks and four independent max
   * chains (one chain of 16 dependent vmaxps took a third of the kernel). */
  const int whole = !attend && n >= length;
  if (whole && state->max != -INFINITY) {
    /* One pass against the running max instead of two: exponentials of
     * scores up to kLazyGrowth above it are at most 2^kLazyGrowth, which
     * f32 sums and bf16 probabilities hold as well as 1, so the max need
     * not move until a score passes that; the block's max is taken along
     * the way, and only a block that does pass it is redone below. */
    const __m512 vc = _mm512_set1_ps(c), shift = _mm512_set1_ps(-state->max);
    __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
    __m512 g0 = _mm512_set1_ps(-INFINITY), g1 = g0;
    for (int j = 0; j < length; j += 32) {
      __m512 x0 = _mm512_fmadd_ps(_mm512_loadu_ps(scores + j), vc, shift);
      __m512 x1 = _mm512_fmadd_ps(_mm512_loadu_ps(scores + j + 16), vc, shift);
      g0 = _mm512_max_ps(g0, x0);
      g1 = _mm512_max_ps(g1, x1);
      __m512 p0 = exp2Ps(x0), p1 = exp2Ps(x1);
      sum0 = _mm512_add_ps(sum0, p0);
      sum1 = _mm512_add_ps(sum1, p1);
      _mm512_storeu_si512(probs + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
    if (_mm512_reduce_max_ps(_mm512_max_ps(g0, g1)) <= kLazyGrowth) {
      state->sum += _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
      return;
    }
  }
  __m512 m = _mm512_set1_ps(-INFINITY);
  int any = 0;
  if (whole) {
    __m512 m1 = m, m2 = m, m3 = m;
    for (int j = 0; j < length; j += 64) {
      m = _mm512_max_ps(m, _mm512_loadu_ps(scores + j));
      m1 = _mm512_max_ps(m1, _mm512_loadu_ps(scores + j + 16));
      if (j + 32 < length) {
        m2 = _mm512_max_ps(m2, _mm512_loadu_ps(scores + j + 32));
        m3 = _mm512_max_ps(m3, _mm512_loadu_ps(scores + j + 48));
      }
    }
    m = _mm512_max_ps(_mm512_max_ps(m, m1), _mm512_max_ps(m2, m3));
    any = length > 0;
  } else {
    for (int j = 0; j < n; j += 16) {
      __mmask16 valid = prefixMask(n, j) & (attend ? attend[j / 16] : 0xFFFF);
      any |= valid;
      m = _mm512_mask_max_ps(m, valid, m, _mm512_maskz_loadu_ps(valid, scores + j));
    }
  }
  if (!any) {
    memset(probs, 0, (size_t)length * 2);
    return;
  }
  float newMax = _mm512_reduce_max_ps(m) * c;
  if (newMax < state->max)
    newMax = state->max;
  /* 1 when the max holds (most blocks after the first: no rescale), 2^-125
   * rather than 0 for the first visible block, whose accumulator is 0. */
  float alpha = newMax == state->max
                    ? 1.0f
                    : _mm512_cvtss_f32(exp2Ps(_mm512_set1_ps(state->max - newMax)));
  state->max = newMax;
  __m512 vc = _mm512_set1_ps(c), shift = _mm512_set1_ps(-newMax), sum = _mm512_setzero_ps();
  if (whole) {
    __m512 sum1 = sum;
    for (int j = 0; j < length; j += 32) {
      __m512 p0 = exp2Ps(_mm512_fmadd_ps(_mm512_loadu_ps(scores + j), vc, shift));
      __m512 p1 = exp2Ps(_mm512_fmadd_ps(_mm512_loadu_ps(scores + j + 16), vc, shift));
      sum = _mm512_add_ps(sum, p0);
      sum1 = _mm512_add_ps(sum1, p1);
      _mm512_storeu_si512(probs + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
    sum = _mm512_add_ps(sum, sum1);
  } else {
    for (int j = 0; j < length; j += 32) {
      __mmask16 v0 = prefixMask(n, j) & (attend ? attend[j / 16] : 0xFFFF);
      __mmask16 v1 = prefixMask(n, j + 16) & (attend ? attend[j / 16 + 1] : 0xFFFF);
      __m512 p0 = _mm512_maskz_mov_ps(
          v0, exp2Ps(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(v0, scores + j), vc, shift)));
      __m512 p1 = _mm512_maskz_mov_ps(
          v1, exp2Ps(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(v1, scores + j + 16), vc, shift)));
      sum = _mm512_add_ps(sum, _mm512_add_ps(p0, p1));
      _mm512_storeu_si512(probs + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
  }
  state->sum = state->sum * alpha + _mm512_reduce_add_ps(sum);
  rescaleRow(acc, Dv, alpha);
}

/* softmaxRow with the score modifiers' bias (bias[0, n) for the block's
 * keys, in log2 units, possibly -inf): scores . c + bias, in two passes (the
 * scores buffer keeps the biased scores between them). A row the block
 * masks entirely gets probabilities 0 and keeps its state. */
ATTUNE_AMX_TARGET static void softmaxRowBiased(float *scores, int length, int n,
                                               const __mmask16 *attend, float c, const float *bias,
                                               uint16_t *probs, float *acc, int Dv,
                                               attune_row_state_t *state) {
  const __m512 vc = _mm512_set1_ps(c), negInf = _mm512_set1_ps(-INFINITY);
  __m512 m = negInf;
  for (int j = 0; j < length; j += 16) {
    __mmask16 valid = prefixMask(n, j) & (attend ? attend[j / 16] : 0xFFFF);
    __m512 x = _mm512_mask_fmadd_ps(_mm512_maskz_loadu_ps(valid, scores + j), valid, vc,
                                    _mm512_maskz_loadu_ps(valid, bias + j));
    x = _mm512_mask_blend_ps(valid, negInf, x);
    m = _mm512_max_ps(m, x);
    _mm512_storeu_ps(scores + j, x);
  }
  const float blockMax = _mm512_reduce_max_ps(m);
  if (blockMax == -INFINITY) {
    memset(probs, 0, (size_t)length * 2);
    return;
  }
  const float newMax = blockMax > state->max ? blockMax : state->max;
  const float alpha =
      newMax == state->max ? 1.0f : _mm512_cvtss_f32(exp2Ps(_mm512_set1_ps(state->max - newMax)));
  state->max = newMax;
  /* A masked key (-inf) weighs 2^-125 (exp2Ps's clamp), as a visible key
   * 125 below the max does: nothing beside the max's 1. */
  __m512 shift = _mm512_set1_ps(-newMax), sum = _mm512_setzero_ps();
  for (int j = 0; j < length; j += 32) {
    __m512 p0 = exp2Ps(_mm512_add_ps(_mm512_loadu_ps(scores + j), shift));
    __m512 p1 = exp2Ps(_mm512_add_ps(_mm512_loadu_ps(scores + j + 16), shift));
    sum = _mm512_add_ps(sum, _mm512_add_ps(p0, p1));
    _mm512_storeu_si512(probs + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
  }
  state->sum = state->sum * alpha + _mm512_reduce_add_ps(sum);
  rescaleRow(acc, Dv, alpha);
}

/* Output row (i, h, b): acc / sum, or 0 when the row saw no key. */
ATTUNE_AMX_TARGET static void storeOutputRow(const attune_amx_call_t *call, int i, int h, int b,
                                             const float *acc, float sum) {
  void *o = element(call->out, i, h, b);
  __m512 inv = _mm512_set1_ps(sum > 0 ? 1.0f / sum : 0.0f);
  for (int c = 0; c < call->Dv; c += 16) {
    __m512 y = _mm512_mul_ps(_mm512_loadu_ps(acc + c), inv);
    if (call->out->type.bits == 32)
      _mm512_storeu_ps((float *)o + c, y);
    else
      _mm256_storeu_si256((__m256i *)((uint16_t *)o + c), (__m256i)_mm512_cvtneps_pbh(y));
  }
}

/* Keys of the block from j0 that GEMM #1 computes: up to kKeyBlock, the
 * visible ones (to keyEnd) rounded up to 32, within the P padded keys. */
static inline int blockLength(int j0, int keyEnd, int P) {
  const int padded = P - j0 < kKeyBlock ? P - j0 : kKeyBlock;
  return keyEnd - j0 < padded ? ((keyEnd - j0 + 31) / 32) * 32 : padded;
}

/* GEMM #1 for 32 keys: scores[32][kKeyBlock]'s 32 columns from `scores` =
 * the 32 query rows . the packed keys from k0. */
ATTUNE_AMX_TARGET static inline void scorePiece(const uint16_t *qRows, const uint16_t *k0, int D,
                                                float *scores) {
  const uint16_t *k1 = k0 + 16 * D;
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  for (int c = 0; c < D; c += 32) {
    _tile_loadd(0, qRows + c, D * 2);
    _tile_loadd(2, k0 + c * 16, 64);
    _tile_dpbf16ps(4, 0, 2);
    _tile_loadd(3, k1 + c * 16, 64);
    _tile_dpbf16ps(5, 0, 3);
    _tile_loadd(1, qRows + 16 * D + c, D * 2);
    _tile_dpbf16ps(6, 1, 2);
    _tile_dpbf16ps(7, 1, 3);
  }
  _tile_stored(4, scores, kKeyBlock * 4);
  _tile_stored(5, scores + 16, kKeyBlock * 4);
  _tile_stored(6, scores + 16 * kKeyBlock, kKeyBlock * 4);
  _tile_stored(7, scores + 16 * kKeyBlock + 16, kKeyBlock * 4);
}

ATTUNE_AMX_TARGET static int attentionTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  attune_amx_call_t *call = (attune_amx_call_t *)closure;
  const int D = call->D, Dv = call->Dv, Sq = call->Sq, Sk = call->Sk, P = call->paddedKeys;
  const int blocksPerHead = (Sq + kQueryRows - 1) / kQueryRows;
  const int i0 = (index % blocksPerHead) * kQueryRows;
  const int h = (index / blocksPerHead) % call->H, b = index / blocksPerHead / call->H;
  const int hk = h / (call->H / call->Hkv);
  const int diag = Sk - Sq;
  /* The last key any row of this task sees, + 1, and the block of the
   * first (a sliding window's rows see none before i + diag + deltaLo). */
  const int lastRow = i0 + kQueryRows - 1 < Sq - 1 ? i0 + kQueryRows - 1 : Sq - 1;
  int64_t end = Sk;
  if (call->causal && lastRow + diag + 1 < end)
    end = lastRow + diag + 1;
  if (call->bias && lastRow + diag + call->deltaHi + 1 < end)
    end = lastRow + diag + call->deltaHi + 1;
  const int keyEnd = (int)end;
  int keyBegin = 0;
  if (call->bias && i0 + diag + call->deltaLo > 0)
    keyBegin = (int)((i0 + diag + call->deltaLo) / kKeyBlock * kKeyBlock);

  /* Two scores buffers: GEMM #1 of the next block writes one while the
   * softmax reads the other (see below). */
  uint8_t *scratch = aligned_alloc(64, kQueryRows * kKeyBlock * (2 * 4 + 2) +
                                           kQueryRows * (D * 2 + Dv * 4));
  if (!scratch) {
    call->failed = kErrMemory;
    return kErrMemory;
  }
  float *scores[2] = {(float *)scratch,                             /* [32][256] */
                      (float *)scratch + kQueryRows * kKeyBlock};   /* [32][256] */
  uint16_t *probs = (uint16_t *)(scores[1] + kQueryRows * kKeyBlock); /* [32][256] */
  uint16_t *qRows = probs + kQueryRows * kKeyBlock;                   /* [32][D] */
  float *acc = (float *)(qRows + kQueryRows * D);                     /* [32][Dv] */
  attune_row_state_t state[kQueryRows];
  const __mmask16 *attend = call->attend ? call->attend + (size_t)b * (P / 16) : NULL;
  for (int r = 0; r < kQueryRows; ++r) {
    state[r].max = -INFINITY;
    state[r].sum = 0;
    if (i0 + r < Sq)
      loadRowBf16(call, call->q, element(call->q, i0 + r, h, b), D,
                  i0 + r + diag + call->rope.offset, qRows + r * D);
    else
      memset(qRows + r * D, 0, (size_t)D * 2);
  }
  memset(acc, 0, (size_t)kQueryRows * Dv * 4);

  loadTileConfig();
  const uint16_t *kp = call->packedK + (size_t)(b * call->Hkv + hk) * P * D;
  const uint16_t *vp = call->packedV + (size_t)(b * call->Hkv + hk) * P * Dv;
  /* Keys in blocks of kKeyBlock; GEMM #1 of block n + 1 is interleaved
   * with the softmax of block n, 32 keys of it before each 4 rows. The
   * tile products retire in order and a block's take ~1,000 cycles, so
   * issued all at once they fill the reorder buffer and the softmax behind
   * them waits; in pieces, each piece's 16 products run while a few rows'
   * exponentials do. */
  int length = keyBegin < keyEnd ? blockLength(keyBegin, keyEnd, P) : 0;
  for (int jj = 0; jj < length; jj += 32)
    scorePiece(qRows, kp + (size_t)(keyBegin + jj) * D, D, scores[0] + jj);
  for (int j0 = keyBegin, n = 0; j0 < keyEnd; j0 += kKeyBlock, ++n) {
    const int next = j0 + kKeyBlock;
    const int nextLength = next < keyEnd ? blockLength(next, keyEnd, P) : 0;
    float *blockScores = scores[n & 1];
    float *nextScores = scores[(n + 1) & 1];
    /* The block's key padding masks; none when every key of the block is
     * attended, so that its rows take softmaxRow's unmasked path. */
    const __mmask16 *blockAttend = NULL;
    for (int w = 0; attend && w < length / 16; ++w)
      if (attend[j0 / 16 + w] != 0xFFFF) {
        blockAttend = attend + j0 / 16;
        break;
      }
    enum { kPieces = kKeyBlock / 32, kRowsPerPiece = kQueryRows / kPieces };
    for (int piece = 0; piece < kPieces; ++piece) {
      const int jj = piece * 32;
      if (jj < nextLength)
        scorePiece(qRows, kp + (size_t)(next + jj) * D, D, nextScores + jj);
      for (int r = piece * kRowsPerPiece; r < (piece + 1) * kRowsPerPiece; ++r) {
        int visible = keyEnd - j0;
        if (call->causal)
          visible = i0 + r + diag + 1 - j0 < visible ? i0 + r + diag + 1 - j0 : visible;
        if (i0 + r >= Sq)
          visible = 0;
        if (call->bias && visible > 0)
          softmaxRowBiased(blockScores + r * kKeyBlock, length, visible, blockAttend,
                           call->scaleLog2e,
                           call->bias + h * call->biasStride + (j0 - (i0 + r) + Sq - 1),
                           probs + r * kKeyBlock, acc + r * Dv, Dv, &state[r]);
        else
          softmaxRow(blockScores + r * kKeyBlock, length, visible, blockAttend, call->scaleLog2e,
                     probs + r * kKeyBlock, acc + r * Dv, Dv, &state[r]);
      }
    }
    /* GEMM #2: acc[32][Dv] += probs[32][length] . v[length][Dv]. */
    for (int c = 0; c < Dv; c += 32) {
      _tile_loadd(4, acc + c, Dv * 4);
      _tile_loadd(5, acc + c + 16, Dv * 4);
      _tile_loadd(6, acc + 16 * Dv + c, Dv * 4);
      _tile_loadd(7, acc + 16 * Dv + c + 16, Dv * 4);
      for (int jj = 0; jj < length; jj += 32) {
        const uint16_t *vBlock = vp + (size_t)(j0 + jj) * Dv;
        _tile_loadd(0, probs + jj, kKeyBlock * 2);
        _tile_loadd(2, vBlock + c * 32, 64);
        _tile_dpbf16ps(4, 0, 2);
        _tile_loadd(3, vBlock + (c + 16) * 32, 64);
        _tile_dpbf16ps(5, 0, 3);
        _tile_loadd(1, probs + 16 * kKeyBlock + jj, kKeyBlock * 2);
        _tile_dpbf16ps(6, 1, 2);
        _tile_dpbf16ps(7, 1, 3);
      }
      _tile_stored(4, acc + c, Dv * 4);
      _tile_stored(5, acc + c + 16, Dv * 4);
      _tile_stored(6, acc + 16 * Dv + c, Dv * 4);
      _tile_stored(7, acc + 16 * Dv + c + 16, Dv * 4);
    }
    length = nextLength;
  }
  _tile_release();

  for (int r = 0; r < kQueryRows && i0 + r < Sq; ++r)
    storeOutputRow(call, i0 + r, h, b, acc + r * Dv, state[r].sum);
  free(scratch);
  return 0;
}

/*===----------------------------------------------------------------------===
 * Decoding: a few query rows against many keys, without AMX
 *===----------------------------------------------------------------------===
 *
 * With at most kDecodeRows query rows per kv head (Sq * H / Hkv: one new
 * token, or a few, against a KV cache) AMX's 32-row tiles would be mostly
 * empty, and packing K and V into tiles writes them and reads them again:
 * at Sq=1 against 4096 keys the tiled kernel took 3.7x the Halide kernel's
 * decode time (benchmarks/README.md). Here a task streams the keys and
 * values of one (batch, kv head), or of a slice of its keys when there are
 * few kv heads (FlashDecoding's split, combined by combineTask), once from
 * memory, and scores every query row of the kv head (all its q heads)
 * against a key while the key is in L1. q, k (rotated first with RoPE) and v
 * are the bf16 values the tiled kernel multiplies, widened to f32; products
 * and probabilities are f32 (the tiled kernel rounds probabilities to
 * bf16), so the two paths agree to within that rounding. The softmax is the
 * same online softmax, in blocks of kDecodeBlock keys. kDecodeRows = 16 is
 * where the two paths cross (Intel Xeon, Sk=4096, H=32, D=128, one thread:
 * at 16 rows 25 ms here against 36 ms tiled, at 32 rows 42 against 39). */

/* a . b over n (a multiple of 32) f32 values. */
ATTUNE_AMX_TARGET static inline float dotF32(const float *a, const float *b, int n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (int i = 0; i < n; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

/* Task (b, hk, slice): rows r = g Sq + i are query i of head hk G + g. */
ATTUNE_AMX_TARGET static int decodeTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  attune_amx_call_t *call = (attune_amx_call_t *)closure;
  const int D = call->D, Dv = call->Dv, Sq = call->Sq, Sk = call->Sk;
  const int G = call->H / call->Hkv, R = G * Sq, diag = Sk - Sq;
  const int slice = index % call->splits, group = index / call->splits;
  const int b = group / call->Hkv, hk = group % call->Hkv;
  int j0 = slice * call->splitKeys;
  const int j1 = j0 + call->splitKeys < Sk ? j0 + call->splitKeys : Sk;
  /* A sliding window: no row sees a key before diag + deltaLo. */
  if (call->bias && diag + call->deltaLo > j0)
    j0 = diag + call->deltaLo < j1 ? (int)(diag + call->deltaLo) : j1;
  float q[kDecodeRows][kMaxHeadDim] __attribute__((aligned(64)));
  float acc[kDecodeRows][kMaxHeadDim] __attribute__((aligned(64)));
  float p[kDecodeRows][kDecodeBlock] __attribute__((aligned(64)));
  float row[kMaxHeadDim] __attribute__((aligned(64)));
  attune_row_state_t state[kDecodeRows];
  int last[kDecodeRows]; /* the last key row r sees */
  const float *bias[kDecodeRows]; /* row r's bias at key 0, or NULL */
  const __m512 c = _mm512_set1_ps(call->scaleLog2e);
  for (int r = 0; r < R; ++r) {
    const int g = r / Sq, i = r % Sq;
    loadRowBf16AsF32(call, call->q, element(call->q, i, hk * G + g, b), D, 0,
                     i + diag + call->rope.offset, q[r]);
    for (int d = 0; d < D; d += 16) /* scores in log2 units */
      _mm512_storeu_ps(q[r] + d, _mm512_mul_ps(_mm512_loadu_ps(q[r] + d), c));
    memset(acc[r], 0, (size_t)Dv * 4);
    state[r].max = -INFINITY;
    state[r].sum = 0;
    last[r] = call->causal ? i + diag : Sk - 1;
    bias[r] = call->bias ? call->bias + (hk * G + g) * call->biasStride + (Sq - 1 - i) : NULL;
  }
  const attune_hl_buffer_t *kpad = call->keyPadding;
  for (int jb = j0; jb < j1; jb += kDecodeBlock) {
    const int n = j1 - jb < kDecodeBlock ? j1 - jb : kDecodeBlock;
    /* Scores, one key at a time for every row. */
    uint64_t attended[kDecodeBlock / 64] = {0}; /* bit jj: key jb + jj attends */
    for (int jj = 0; jj < n; ++jj) {
      const int j = jb + jj;
      if (kpad && !keyAttends(kpad, j, b)) {
        for (int r = 0; r < R; ++r)
          p[r][jj] = -INFINITY;
        continue;
      }
      attended[jj / 64] |= 1ull << jj % 64;
      loadRowBf16AsF32(call, call->k, element(call->k, j, hk, b), D, 0, j + call->rope.offset,
                       row);
      for (int r = 0; r < R; ++r)
        p[r][jj] = j > last[r] ? -INFINITY
                   : bias[r]   ? dotF32(q[r], row, D) + bias[r][j]
                               : dotF32(q[r], row, D);
    }
    /* Per row: the block's max, probabilities in place of the scores, the
     * running sum, and the accumulator rescaled when the max grew. */
    for (int r = 0; r < R; ++r) {
      float m = -INFINITY;
      for (int jj = 0; jj < n; ++jj)
        m = p[r][jj] > m ? p[r][jj] : m;
      if (m == -INFINITY) {
        memset(p[r], 0, sizeof p[r]);
        continue;
      }
      const float newMax = m > state[r].max ? m : state[r].max;
      const float alpha = exp2f(state[r].max - newMax); /* 0 for the first block */
      state[r].max = newMax;
      __m512 shift = _mm512_set1_ps(-newMax), sum = _mm512_setzero_ps();
      for (int jj = 0; jj < n; jj += 16) {
        __mmask16 lanes = prefixMask(n, jj);
        /* Keys masked (-inf) or 125 below the max weigh exactly 0, not
         * exp2Ps's 2^-125: their products with v would be denormals, which
         * cost the FMAs below a microcode assist each (ALiBi's far keys
         * made decoding 1.7x slower). */
        __m512 x = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, p[r] + jj), shift);
        __mmask16 seen = _mm512_mask_cmp_ps_mask(lanes, x, _mm512_set1_ps(-125.f), _CMP_GE_OQ);
        __m512 e = _mm512_maskz_mov_ps(seen, exp2Ps(x));
        sum = _mm512_add_ps(sum, e);
        _mm512_storeu_ps(p[r] + jj, e);
      }
      state[r].sum = state[r].sum * alpha + _mm512_reduce_add_ps(sum);
      rescaleRow(acc[r], Dv, alpha);
    }
    /* acc += p . v, one value row at a time for every row. */
    for (int jj = 0; jj < n; ++jj) {
      if (!(attended[jj / 64] >> jj % 64 & 1))
        continue;
      const void *from = element(call->v, jb + jj, hk, b);
      int loaded = 0;
      for (int r = 0; r < R; ++r) {
        if (p[r][jj] == 0.0f)
          continue;
        if (!loaded) {
          loadRowBf16AsF32(call, call->v, from, Dv, 1, 0, row);
          loaded = 1;
        }
        __m512 w = _mm512_set1_ps(p[r][jj]);
        for (int d = 0; d < Dv; d += 16)
          _mm512_storeu_ps(acc[r] + d, _mm512_fmadd_ps(w, _mm512_load_ps(row + d),
                                                       _mm512_loadu_ps(acc[r] + d)));
      }
    }
  }
  if (call->splits == 1) {
    for (int r = 0; r < R; ++r)
      storeOutputRow(call, r % Sq, hk * G + r / Sq, b, acc[r], state[r].sum);
    return 0;
  }
  /* A slice: its max, sum and accumulators for combineTask. */
  float *part = call->partial + (size_t)index * R * (2 + Dv);
  for (int r = 0; r < R; ++r, part += 2 + Dv) {
    part[0] = state[r].max;
    part[1] = state[r].sum;
    memcpy(part + 2, acc[r], (size_t)Dv * 4);
  }
  return 0;
}

/* (b, hk)'s slices combined: each row's accumulators and sums scaled by
 * 2^(slice max - overall max), summed, divided. */
ATTUNE_AMX_TARGET static int combineTask(void *uc, int group, uint8_t *closure) {
  (void)uc;
  attune_amx_call_t *call = (attune_amx_call_t *)closure;
  const int Dv = call->Dv, Sq = call->Sq, G = call->H / call->Hkv, R = G * Sq;
  const int b = group / call->Hkv, hk = group % call->Hkv;
  const size_t rowFloats = 2 + (size_t)Dv, sliceFloats = (size_t)R * rowFloats;
  const float *first = call->partial + (size_t)group * call->splits * sliceFloats;
  float acc[kMaxHeadDim] __attribute__((aligned(64)));
  for (int r = 0; r < R; ++r) {
    float m = -INFINITY, sum = 0;
    for (int s = 0; s < call->splits; ++s) {
      const float sliceMax = first[s * sliceFloats + r * rowFloats];
      m = sliceMax > m ? sliceMax : m;
    }
    memset(acc, 0, (size_t)Dv * 4);
    for (int s = 0; m != -INFINITY && s < call->splits; ++s) {
      const float *part = first + s * sliceFloats + r * rowFloats;
      if (part[1] == 0)
        continue;
      const float w = exp2f(part[0] - m);
      sum += part[1] * w;
      for (int d = 0; d < Dv; d += 16)
        _mm512_store_ps(acc + d, _mm512_fmadd_ps(_mm512_set1_ps(w), _mm512_loadu_ps(part + 2 + d),
                                                 _mm512_load_ps(acc + d)));
    }
    storeOutputRow(call, r % Sq, hk * G + r / Sq, b, acc, sum);
  }
  return 0;
}

/* bf16, or f32 (rounded to bf16 as it is read), dense along dim 0. */
static int isSupported(const attune_hl_buffer_t *buf) {
  const int bf16 = buf->type.code == kHlTypeBfloat && buf->type.bits == 16;
  const int f32 = buf->type.code == kHlTypeFloat && buf->type.bits == 32;
  return (bf16 || f32) && buf->type.lanes == 1 && buf->dimensions == 4 &&
         buf->dim[0].stride == 1;
}

/* The decode path (decodeTask): (b, hk)'s keys split into slices while
 * there are fewer than kDecodeTasks tasks and slices keep kDecodeSplitKeys
 * keys, then combined. */
static int attentionDecode(attune_amx_call_t *call) {
  const int groups = call->B * call->Hkv;
  int splits = (kDecodeTasks + groups - 1) / groups;
  const int maxSplits = (call->Sk + kDecodeSplitKeys - 1) / kDecodeSplitKeys;
  splits = splits < maxSplits ? splits : maxSplits;
  splits = splits > 1 ? splits : 1;
  call->splits = splits;
  call->splitKeys = (call->Sk + splits - 1) / splits;
  if (splits > 1) {
    const size_t rows = (size_t)(call->H / call->Hkv) * call->Sq;
    call->partial = malloc((size_t)groups * splits * rows * (2 + (size_t)call->Dv) * sizeof(float));
    if (!call->partial)
      return kErrMemory;
  }
  int status = runTasks(decodeTask, groups * splits, call);
  if (status == 0 && splits > 1)
    status = runTasks(combineTask, groups, call);
  free(call->partial);
  return status;
}

/* The arguments of the extern stages after the buffers. */
typedef struct {
  float scale;
  int causal, ropeDims, ropeInterleaved, ropeOffset;
  int biasTables, keys, deltaLo, deltaHi;
} attune_amx_args_t;

static int attentionAmx(attune_hl_buffer_t *q, attune_hl_buffer_t *k, attune_hl_buffer_t *v,
                        attune_hl_buffer_t *keyPadding, attune_hl_buffer_t *rope,
                        attune_hl_buffer_t *bias, const attune_amx_args_t *a,
                        attune_hl_buffer_t *out) {
  if (!q->host || !k->host || !v->host || (keyPadding && !keyPadding->host) ||
      (a->biasTables && !bias->host)) {
    queryAttentionRegions(q, bias, out, a->biasTables, a->keys); /* bounds query */
    return kOk;
  }
  const float scale = a->scale;
  const int causal = a->causal, ropeDims = a->ropeDims, ropeInterleaved = a->ropeInterleaved,
            ropeOffset = a->ropeOffset;
  if (!out->host)
    return kOk;
  if (!isSupported(q) || !isSupported(k) || !isSupported(v) || !isSupported(out))
    return kErrShape;
  if (keyPadding && (keyPadding->dimensions != 2 || keyPadding->dim[0].extent != k->dim[1].extent ||
                     keyPadding->dim[1].extent != q->dim[3].extent))
    return kErrShape;
  attune_amx_call_t call;
  memset(&call, 0, sizeof call);
  call.q = q;
  call.k = k;
  call.v = v;
  call.out = out;
  call.D = q->dim[0].extent;
  call.Dv = v->dim[0].extent;
  call.Sq = q->dim[1].extent;
  call.Sk = k->dim[1].extent;
  call.H = q->dim[2].extent;
  call.Hkv = k->dim[2].extent;
  call.B = q->dim[3].extent;
  if (call.D % 32 || call.Dv % 32 || call.D > kMaxHeadDim || call.Dv > kMaxHeadDim ||
      call.Hkv <= 0 || call.H % call.Hkv || out->dim[1].min != 0 ||
      out->dim[1].extent != call.Sq || out->dim[2].min != 0 || out->dim[2].extent != call.H ||
      out->dim[3].min != 0 || out->dim[3].extent != call.B)
    return kErrShape;
  if (call.Sq == 0 || call.H == 0 || call.B == 0)
    return kOk;
  if (a->biasTables) {
    /* f32, [Sk + Sq - 1, H, tables] from 0, dense along distances. */
    if (!isBiasTable(bias, a->biasTables, call.Sk + call.Sq - 1, call.H))
      return kErrShape;
  }
  const int decoding = (int64_t)(call.H / call.Hkv) * call.Sq <= kDecodeRows;
  if (!decoding && !requestAmx())
    return kErrNoAmx;
  call.causal = causal;
  call.keyPadding = keyPadding;
  call.rope.dims = ropeDims;
  call.rope.interleaved = ropeInterleaved;
  call.rope.offset = ropeOffset;
  if (ropeDims) {
    int status = ropeTables(&call.rope, rope, call.D, call.Sq, call.Sk);
    if (status)
      return status;
  }
  call.scaleLog2e = scale * 1.4426950408889634f;
  float *biasSum = NULL;
  if (a->biasTables) {
    const int distances = call.Sk + call.Sq - 1;
    biasSum = sumBiasTables(bias, a->biasTables, distances, call.H, distances, 0);
    if (!biasSum) {
      free(call.rope.cos);
      return kErrMemory;
    }
    call.bias = biasSum;
    call.biasStride = distances;
    call.deltaLo = a->deltaLo;
    call.deltaHi = a->deltaHi;
  }
  if (decoding) {
    int status = attentionDecode(&call);
    free(biasSum);
    free(call.rope.cos);
    return status;
  }
  call.paddedKeys = (call.Sk + 31) / 32 * 32;
  size_t groups = (size_t)call.B * call.Hkv;
  size_t packedBytes = groups * call.paddedKeys * (size_t)(call.D + call.Dv) * 2;
  size_t maskBytes = keyPadding ? (size_t)call.B * (call.paddedKeys / 16) * sizeof(__mmask16) : 0;
  size_t bytes = packedBytes + maskBytes;
  uint16_t *packed = bytes ? (uint16_t *)takePackBlock(bytes) : NULL;
  if (bytes && !packed) {
    free(biasSum);
    free(call.rope.cos);
    return kErrMemory;
  }
  call.packedK = packed;
  call.packedV = packed + groups * call.paddedKeys * (size_t)call.D;
  if (keyPadding)
    call.attend = (__mmask16 *)((uint8_t *)packed + packedBytes);
  int status = runTasks(packTask, (int)groups, &call);
  if (status == 0)
    status = runTasks(attentionTask, call.B * call.H * ((call.Sq + kQueryRows - 1) / kQueryRows),
                      &call);
  if (packed)
    givePackBlock((uint8_t *)packed);
  free(biasSum);
  free(call.rope.cos);
  return status ? status : call.failed;
}

/* The extern stages. q[D, Sq, H, B], k[D, Sk, Hkv, B], v[Dv, Sk, Hkv, B],
 * out[Dv, Sq, H, B] and keyPadding[Sk, B]: Halide's dimension order,
 * innermost first, mins 0 (out's rows, heads and batch whole). Return 0, or
 * a negative code the pipeline reports as the stage's error. `rope` is
 * RoPE's embedded table (see ropeTables), read when ropeDims > 0 (rotary
 * dims; interleaved pairs or split halves; position offset). With
 * biasTables > 0, `bias` is the score modifiers' biases [Sk + Sq - 1, H,
 * biasTables] (see sumBiasTables and attune_amx_call_t; `keys` is Sk, for the
 * bounds query) and every key at a distance outside [deltaLo, deltaHi] is
 * masked; else `bias` is unused. */
int attune_attention_bf16_amx(attune_hl_buffer_t *q, attune_hl_buffer_t *k, attune_hl_buffer_t *v,
                              attune_hl_buffer_t *rope, attune_hl_buffer_t *bias, float scale,
                              int causal, int ropeDims, int ropeInterleaved, int ropeOffset,
                              int biasTables, int keys, int deltaLo, int deltaHi,
                              attune_hl_buffer_t *out) {
  const attune_amx_args_t a = {scale,      causal, ropeDims, ropeInterleaved, ropeOffset,
                               biasTables, keys,   deltaLo,  deltaHi};
  return attentionAmx(q, k, v, NULL, rope, bias, &a, out);
}

int attune_attention_bf16_amx_padded(attune_hl_buffer_t *q, attune_hl_buffer_t *k,
                                     attune_hl_buffer_t *v, attune_hl_buffer_t *keyPadding,
                                     attune_hl_buffer_t *rope, attune_hl_buffer_t *bias,
                                     float scale, int causal, int ropeDims, int ropeInterleaved,
                                     int ropeOffset, int biasTables, int keys, int deltaLo,
                                     int deltaHi, attune_hl_buffer_t *out) {
  const attune_amx_args_t a = {scale,      causal, ropeDims, ropeInterleaved, ropeOffset,
                               biasTables, keys,   deltaLo,  deltaHi};
  return attentionAmx(q, k, v, keyPadding, rope, bias, &a, out);
}

/*===----------------------------------------------------------------------===
 * Linear with bf16 pair-panel weights (--precision=bf16) on AMX tiles
 *===----------------------------------------------------------------------===
 *
 * out[m, n] = sum_k bf16(x[m, k]) w[k, n] (+ bias[n]), f32 sums. w is the
 * pair-panel layout tfm-pack-weights{bf16} stores (compiler/support/
 * PanelLayout.h): panel t holds columns [tW, tW + W) as K/2 rows of W
 * pairs (w[2r][n], w[2r + 1][n]), which is AMX's B operand layout as it
 * is: a 16-column, 32-k tile is 16 of those rows at a stride of 4W bytes.
 * x is rounded to bf16 once, 32 rows per task, into a scratch copy padded
 * to whole tiles. The product then runs as tasks over (a group of 32-row
 * blocks, a range of 32-column blocks); per column block every row block of
 * the group is computed over all of K with four 16x16 accumulator tiles.
 *  - Weights that fit in L2 (up to kLinearL2Weights bytes): groups of one
 *    row block and all columns, so a task's x rows stay in L1 while it
 *    walks w, which stays in L2 for the next task.
 *  - Larger weights: up to kLinearRowBlocks row blocks per group, so a
 *    column block's weights (K x 32 bf16: 48 KiB at K = 768) are read from
 *    memory once and from L2 for the group's other row blocks. With one
 *    row block per task, 512 x 768 x 3072 (4.7 MB of weights) streamed w
 *    16 times: 3.58 -> 2.45 ms on one core. Column ranges split the work
 *    when there are few row groups, so every thread has tasks. */

enum {
  kLinearRowBlocks = 4,            /* 32-row blocks sharing a column block's weights */
  kLinearMinTasks = 8,             /* split columns until there are this many tasks */
  kLinearL2Weights = 2 * 1024 * 1024 /* weights this small stay in L2 (bytes) */
};

typedef struct {
  const attune_hl_buffer_t *x, *w, *bias, *out;
  int M, K, N, W;
  int Kp;             /* K padded to whole 32-k chunks */
  uint16_t *rows;     /* x as bf16: ceil(M / 32) * 32 rows of Kp */
  int rowBlocksPerGroup, rowGroups, colGroups, colBlocksPerGroup;
} attune_amx_linear_t;

/* Rows [32 block, 32 block + 32) of x as bf16 into `to` (32 rows of Kp),
 * zero past M and K. */
ATTUNE_AMX_TARGET static void linearRoundRows(const attune_amx_linear_t *call, int block,
                                              uint16_t *to) {
  const int K = call->K, Kp = call->Kp;
  const attune_hl_dim_t *xd = call->x->dim;
  const float *x = (const float *)call->x->host;
  for (int r = 0; r < kQueryRows; ++r) {
    const int m = block * kQueryRows + r;
    uint16_t *row = to + (size_t)r * Kp;
    int done = 0;
    if (m < call->M && xd[0].stride == 1) {
      loadBf16(call->x, x + (int64_t)(m - xd[1].min) * xd[1].stride, K / 16 * 16, row);
      done = K / 16 * 16;
    }
    for (int k = done; k < K; ++k) {
      float v = m < call->M ? x[(int64_t)(m - xd[1].min) * xd[1].stride +
                                (int64_t)(k - xd[0].min) * xd[0].stride]
                            : 0.0f;
      row[k] = (uint16_t)(_mm_cvtsi128_si32((__m128i)_mm_cvtneps_pbh(_mm_set1_ps(v))) & 0xFFFF);
    }
    memset(row + K, 0, (size_t)(Kp - K) * 2);
  }
}

/* Row block `index` into the shared copy (call->rows). */
static int linearRowsTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  attune_amx_linear_t *call = (attune_amx_linear_t *)closure;
  linearRoundRows(call, index, call->rows + (size_t)index * kQueryRows * call->Kp);
  return 0;
}

/* out[m, n0 .. n0 + 32) (+ bias) for the 32 rows from m0, from the four
 * accumulator tiles stored in c. */
ATTUNE_AMX_TARGET static void linearStore(const attune_amx_linear_t *call, int m0, int n0,
                                          float c[kQueryRows][32]) {
  const attune_hl_dim_t *od = call->out->dim;
  const int N = call->N, cols = N - n0 < 32 ? N - n0 : 32;
  const int dense = od[0].stride == 1 && (!call->bias || call->bias->dim[0].stride == 1);
  for (int r = 0; r < kQueryRows && m0 + r < call->M; ++r) {
    float *o = (float *)call->out->host + (int64_t)(m0 + r - od[1].min) * od[1].stride;
    if (dense) {
      for (int j = 0; j < cols; j += 16) {
        __mmask16 lanes = prefixMask(cols, j);
        __m512 v = _mm512_load_ps(&c[r][j]);
        if (call->bias)
          v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, (const float *)call->bias->host +
                                                                n0 + j - call->bias->dim[0].min));
        _mm512_mask_storeu_ps(o + n0 + j - od[0].min, lanes, v);
      }
      continue;
    }
    for (int j = 0; j < cols; ++j) {
      float v = c[r][j];
      if (call->bias) {
        const attune_hl_dim_t *bd = call->bias->dim;
        v += ((const float *)call->bias->host)[(int64_t)(n0 + j - bd[0].min) * bd[0].stride];
      }
      o[(int64_t)(n0 + j - od[0].min) * od[0].stride] = v;
    }
  }
}

ATTUNE_AMX_TARGET static int linearTileTask(void *uc, int index, uint8_t *closure) {
  (void)uc;
  attune_amx_linear_t *call = (attune_amx_linear_t *)closure;
  const int K = call->K, W = call->W, N = call->N, Kp = call->Kp;
  const int rowGroup = index / call->colGroups, colGroup = index % call->colGroups;
  const int firstBlock = rowGroup * call->rowBlocksPerGroup;
  const int rowBlocks = (call->M + kQueryRows - 1) / kQueryRows;
  const int lastBlock = firstBlock + call->rowBlocksPerGroup < rowBlocks
                            ? firstBlock + call->rowBlocksPerGroup
                            : rowBlocks;
  const int nBegin = colGroup * call->colBlocksPerGroup * 32;
  const int nEnd = nBegin + call->colBlocksPerGroup * 32 < N
                       ? nBegin + call->colBlocksPerGroup * 32
                       : N;
  /* The weights of the last, partial K chunk, zero past K (else the tile
   * would read the next panel's rows, or past the end). */
  const int K2 = (K + 1) / 2, fullChunks = K / 32;
  uint16_t lastTile[2][16 * 32] __attribute__((aligned(64)));
  float c[kQueryRows][32] __attribute__((aligned(64)));
  /* A task that is alone on its rows rounds them itself into a buffer of
   * its own, small enough for the allocator to reuse (see linearAmx);
   * otherwise they are in the shared copy. Before the tiles are configured,
   * so that a failure leaves no tile state behind. */
  const uint16_t *rowsBase;
  uint16_t *own = NULL;
  if (call->colGroups == 1) {
    own = aligned_alloc(64, (size_t)(lastBlock - firstBlock) * kQueryRows * Kp * 2);
    if (!own)
      return kErrMemory;
    for (int block = firstBlock; block < lastBlock; ++block)
      linearRoundRows(call, block, own + (size_t)(block - firstBlock) * kQueryRows * Kp);
    rowsBase = own;
  } else {
    rowsBase = call->rows + (size_t)firstBlock * kQueryRows * Kp;
  }
  loadTileConfig();
  const uint16_t *w = (const uint16_t *)call->w->host;
  const size_t panelElems = (size_t)K2 * 2 * W;
  for (int n0 = nBegin; n0 < nEnd; n0 += 32) {
    const int panel = n0 / W, col = n0 % W;
    const uint16_t *wp = w + panel * panelElems + (size_t)col * 2;
    if (fullChunks * 32 < Kp) {
      /* Rows fullChunks*16 .. K2-1 exist. */
      const uint16_t *b0 = wp + (size_t)fullChunks * 16 * 2 * W;
      memset(lastTile, 0, sizeof lastTile);
      for (int r = 0; fullChunks * 16 + r < K2; ++r)
        for (int t = 0; t < 2; ++t)
          memcpy(&lastTile[t][r * 32], b0 + (size_t)r * 2 * W + t * 32, 64);
    }
    for (int block = firstBlock; block < lastBlock; ++block) {
      const uint16_t *a = rowsBase + (size_t)(block - firstBlock) * kQueryRows * Kp;
      _tile_zero(4);
      _tile_zero(5);
      _tile_zero(6);
      _tile_zero(7);
      for (int kc = 0; kc < Kp / 32; ++kc) {
        const uint16_t *b0 = wp + (size_t)kc * 16 * 2 * W, *b1 = b0 + 32;
        int stride = W * 4;
        if (kc == fullChunks) {
          b0 = lastTile[0];
          b1 = lastTile[1];
          stride = 64;
        }
        _tile_loadd(0, a + kc * 32, Kp * 2);
        _tile_loadd(2, b0, stride);
        _tile_dpbf16ps(4, 0, 2);
        _tile_loadd(3, b1, stride);
        _tile_dpbf16ps(5, 0, 3);
        _tile_loadd(1, a + (size_t)16 * Kp + kc * 32, Kp * 2);
        _tile_dpbf16ps(6, 1, 2);
        _tile_dpbf16ps(7, 1, 3);
      }
      _tile_stored(4, &c[0][0], 32 * 4);
      _tile_stored(5, &c[0][16], 32 * 4);
      _tile_stored(6, &c[16][0], 32 * 4);
      _tile_stored(7, &c[16][16], 32 * 4);
      linearStore(call, block * kQueryRows, n0, c);
    }
  }
  _tile_release();
  free(own);
  return 0;
}

static int linearAmx(attune_hl_buffer_t *x, attune_hl_buffer_t *w, attune_hl_buffer_t *bias,
                     attune_hl_buffer_t *out) {
  if (!x->host || !w->host || (bias && !bias->host) || !out->host)
    return kOk; /* bounds query: the inputs are the buffers' whole extents */
  if (x->type.code != 2 || x->type.bits != 32 || x->dimensions != 2 || w->type.bits != 16 ||
      w->dimensions != 4 || w->dim[0].extent != 2 || w->dim[0].stride != 1 ||
      w->dim[1].stride != 2 || out->type.code != 2 || out->type.bits != 32 ||
      out->dimensions != 2)
    return kErrShape;
  attune_amx_linear_t call;
  memset(&call, 0, sizeof call);
  call.x = x;
  call.w = w;
  call.bias = bias;
  call.out = out;
  call.M = x->dim[1].extent;
  call.K = x->dim[0].extent;
  call.N = out->dim[0].extent;
  call.W = w->dim[1].extent;
  if (call.W % 32 || w->dim[2].extent != (call.K + 1) / 2 ||
      w->dim[2].stride != 2 * call.W || w->dim[3].stride != w->dim[2].extent * 2 * call.W ||
      (int64_t)w->dim[3].extent * call.W < call.N || out->dim[1].extent != call.M)
    return kErrShape;
  if (call.M == 0 || call.N == 0)
    return kOk;
  if (!requestAmx())
    return kErrNoAmx;
  const int rowBlocks = (call.M + kQueryRows - 1) / kQueryRows;
  const int colBlocks = (call.N + 31) / 32;
  call.Kp = (call.K + 31) / 32 * 32;
  const int fitsL2 = (int64_t)call.K * call.N * 2 <= kLinearL2Weights;
  call.rowBlocksPerGroup = fitsL2 ? 1 : kLinearRowBlocks;
  call.rowGroups = (rowBlocks + call.rowBlocksPerGroup - 1) / call.rowBlocksPerGroup;
  call.colGroups = fitsL2 ? 1 : (kLinearMinTasks + call.rowGroups - 1) / call.rowGroups;
  if (call.colGroups > colBlocks)
    call.colGroups = colBlocks;
  call.colBlocksPerGroup = (colBlocks + call.colGroups - 1) / call.colGroups;
  call.colGroups = (colBlocks + call.colBlocksPerGroup - 1) / call.colBlocksPerGroup;
  /* Rows shared by several tasks (column ranges) are rounded first, in a
   * pass of their own, into one copy; otherwise each task rounds its own
   * (one large buffer per call would be fresh pages, faulted in every call:
   * 4-8% of a 128-row linear). */
  int status = 0;
  if (call.colGroups > 1) {
    call.rows = aligned_alloc(64, (size_t)rowBlocks * kQueryRows * call.Kp * 2);
    if (!call.rows)
      return kErrMemory;
    status = runTasks(linearRowsTask, rowBlocks, &call);
  }
  if (!status)
    status = runTasks(linearTileTask, call.rowGroups * call.colGroups, &call);
  free(call.rows);
  return status;
}

/* The extern stages: x[K, M] f32, w[2, W, K/2, panels] bf16, bias[N] f32,
 * out[N, M] f32 (Halide's dimension order). */
int attune_linear_bf16_amx(attune_hl_buffer_t *x, attune_hl_buffer_t *w,
                           attune_hl_buffer_t *out) {
  return linearAmx(x, w, NULL, out);
}

int attune_linear_bf16_amx_bias(attune_hl_buffer_t *x, attune_hl_buffer_t *w,
                                attune_hl_buffer_t *bias, attune_hl_buffer_t *out) {
  return linearAmx(x, w, bias, out);
}
