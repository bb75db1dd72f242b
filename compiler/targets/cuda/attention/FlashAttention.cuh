//===- FlashAttention.cuh - tfm.attention fused on tensor cores -*- CUDA -*-===//
//
// One kernel computes tfm.attention (dialects/tfm/TfmOps.td) for a model:
// attune-compile writes a configuration struct for each attention op of the
// model (its head size, which masks and terms it has, its storage types) and
// instantiates `flashAttention<Config>` with it (AttentionGen.h), so the
// modifiers are compiled into the kernel instead of tested per score.
//
// The algorithm is FlashAttention-2's forward pass (Dao, 2023) on sm_80's
// mma.sync: a block of 4 warps owns 64 query rows of one (batch, head),
// 16 a warp (kAttentionWarpTiles), and walks the key blocks (64 keys) the
// rows can see. Per key block:
//   1. the block's threads load K (rotated, when RoPE) and V into shared
//      memory in the product type: rows already of it that are 16-byte
//      aligned with
//      asynchronous 16-byte copies (cp.async), V's while S is computed and
//      the next block's K's while O += P.V is; otherwise element by element;
//   2. each warp computes its 16 rows' scores S = Q.K^T, Q (loaded into
//      shared memory once) and K's fragments loaded by ldmatrix (V's by
//      ldmatrix.trans in step 4);
//   3. the score is scaled (softcapped), the additive mask and the
//      modifiers' bias (a table by bucket of the distance, T5's, staged in
//      shared memory per block; or ALiBi's slope times the distance) are
//      added, and what the mask, causality, key padding or the key range
//      rule out is set to -inf (a warp's block that none of these can
//      touch only scales);
//   4. online softmax: the running row maximum m and sum l are updated and
//      the output accumulator rescaled, then P = exp2(S - m) (in the log2
//      domain) is rounded to the product type as the A operand of O += P.V.
// Finally O / l is written (0 for a row that saw no key), as the op defines.
// When a few query rows meet many keys (decoding), the keys are split
// between blocks, each writing its unnormalised O, m and l, and
// attentionCombine merges them (FlashDecoding, Dao et al., 2023).
//
// Products are 16-bit (Config::Product: bf16 or f16) with f32 accumulation
// and f32 softmax statistics: what tfm.attention means by `product_type =
// bf16` on f32 q, k and v, and by bf16 or f16 operands (which multiply in
// their own type).
//
// Rows and keys past the sequence ends are computed on zeros and never
// stored. Key blocks the rows cannot see (after the causal diagonal,
// outside the modifiers' visible distances, or key padding only: a shorter
// sequence of a batch) are skipped.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_GPU_FLASHATTENTION_CUH
#define ATTUNE_GPU_FLASHATTENTION_CUH

#include "WarpOps.cuh"

namespace attune::gpu {

/// The run-time arguments of an attention kernel, passed by value. Strides
/// are in elements; the head dimension is contiguous.
struct AttentionParams {
  const void *query, *key, *value;
  void *result;
  /// [B, Hq|Hkv, S, D] addressed as b * stride[0] + h * stride[1] +
  /// s * stride[2] + d (bhsd and bshd differ only in strides).
  i64 queryStride[3], keyStride[3], valueStride[3], resultStride[3];
  int batch, heads, kvHeads, querySeq, keySeq;
  /// Multiplies q.k.
  float scale;
  /// c > 0: the scaled product becomes c * tanh(p / c) (Config::kSoftcap).
  float softcap;
  /// Additive mask of the input type (tfm.attention's mask has q's),
  /// element (b, h, i, j) at b * maskStride[0] + ... + j * maskStride[3]; a
  /// zero stride broadcasts (Config::kMask).
  const void *mask;
  i64 maskStride[4];
  /// [B, Sk] integers of keyPaddingBytes (1: bool or i8, 4: i32, 8: i64,
  /// as Hugging Face's attention_mask), nonzero: attend
  /// (Config::kKeyPadding). The stride is in elements.
  const void *keyPadding;
  i64 keyPaddingStride;
  int keyPaddingBytes;
  /// A score modifier's bias table (Config::kBias), elements of the input
  /// type: bias_h(delta) for delta = j - (i + Sk - Sq) is
  /// biasTable[h * biasHeadStride + row * biasRowStride], row =
  /// biasRows[clamp(delta - biasRowLow, 0, biasRowCount - 1)]. T5's
  /// [num_buckets, H] (head stride 1, row stride H) through the bucket of
  /// each distance, saturating past max_distance; or one row per distance
  /// (biasRows[x] = x). -inf masks.
  const void *biasTable;
  i64 biasHeadStride, biasRowStride;
  const int *biasRows;
  int biasRowLow, biasRowCount;
  /// Distances outside [deltaLow, deltaHigh] are masked for every head
  /// (the modifiers' visible range; causal sets deltaHigh <= 0): key blocks
  /// wholly outside are skipped.
  int deltaLow, deltaHigh;
  /// RoPE (Config::kRotaryDims > 0): the angle of pair p at position n is
  /// n * ropeTheta[p]; q rows sit at i + (Sk - Sq) + ropeOffset, keys at
  /// j + ropeOffset.
  const float *ropeTheta;
  int ropeOffset;
  /// A bias linear in the distance (Config::kLinearBias: ALiBi): head h
  /// adds biasSlopes[h] * delta, or biasSlopes[h] * |delta| when
  /// biasAbsolute, computed per score instead of read from a table.
  const float *biasSlopes;
  int biasAbsolute;
  /// Split over keys (FlashDecoding, for few query rows against many
  /// keys; 0 or 1: no split): with keySplits > 1 the grid's x is query tiles x keySplits,
  /// split s covers keys [s * splitKeys, (s + 1) * splitKeys) (splitKeys a
  /// multiple of kAttentionBlockKeys) and writes its unnormalised output
  /// and row statistics to partialResult [keySplits, B, Hq, Sq, Dv] and
  /// partialStats [keySplits, B, Hq, Sq, 2] (maximum in the log2 domain,
  /// sum); attentionCombine then writes the result.
  int keySplits, splitKeys;
  float *partialResult, *partialStats;
  /// 0 or 1: a block's rows are queries of one head (grid y: heads). g =
  /// heads / kvHeads > 1 (GQA with few queries: decoding): a key/value
  /// head's g query heads share its blocks (grid y: kvHeads), virtual row v
  /// being query v / g of head y * g + v % g, so that K and V are read once
  /// for the group. Not with a bias table (Config::kBias), which is staged
  /// for one head.
  int packedGroup;
};

/// A block's 64 query rows and 64 keys, and its 4 warps of
/// kAttentionWarpTiles tiles of 16 rows each. With 2 (FlashAttention-2's
/// 128 rows a block), a K or V fragment a warp loads serves two products,
/// but the kernel needs 255 registers and spills: on an H200 that was 7%
/// faster at S = 16384 (bench128: 253 TFLOP/s against 237), 14% slower at
/// S = 1024, 14% slower causal at 4096 and half as fast decoding (2.2
/// TB/s against 4.1, 2 blocks an SM instead of 3).
constexpr int kAttentionWarpTiles = 1;
constexpr int kAttentionThreads = 128;
constexpr int kAttentionBlockRows = kAttentionThreads / 32 * 16 * kAttentionWarpTiles;
constexpr int kAttentionBlockKeys = 64;

/// The blocks an SM must hold at once (__launch_bounds__'s second
/// argument) when the tuning database has no `blocks_per_sm` for the
/// architecture (AttentionKernelSpec::blocksPerSm; compiler/tuning/
/// default.json's sm_90 entries hold the measurements below): ptxas keeps
/// a kernel under the registers that leaves (65536 /
/// (128 x blocks): 168 a thread for 3), spilling a few words where it must.
/// Left to itself it used 170 for D = 128, which fits 2 blocks: on an H200
/// bench128 ran at 192 TFLOP/s (S = 4096) that way and at 223 held to 3.
/// For D <= 64 it reaches 4 blocks (128 registers) by itself, and bench64
/// was slower held to 3 (189 against 210): 0 leaves ptxas its choice (so
/// does an explicit 1, which ptxas nevertheless compiles differently: 152
/// registers, not 128).
constexpr int attentionBlocksPerSm(int headDim, int valueDim) {
  return headDim <= 64 && valueDim <= 64 ? 0 : 3;
}

/// Shared memory a configuration needs, in bytes: Q, K and V as 16-bit rows
/// padded by 8 elements (so that the 8 rows an ldmatrix phase reads fall in
/// distinct banks), the tile's bias row and its key mask.
constexpr int attentionSharedBytes(int headDim, int valueDim) {
  return (kAttentionBlockRows + kAttentionBlockKeys) * (headDim + 8) * 2 +
         kAttentionBlockKeys * (valueDim + 8) * 2 +
         (kAttentionBlockRows + kAttentionBlockKeys) * 4 + kAttentionBlockKeys * 4;
}

/// What an attention op compiles into its kernel (see flashAttention).
/// ProductT is the tensor cores' operand type: bf16 or f16.
template <int HeadDim, int ValueDim, bool Causal, bool Mask, bool KeyPadding, bool Bias,
          bool Softcap, int RotaryDims, bool RopeInterleaved, class InT, class OutT,
          bool LinearBias = false, class ProductT = bf16>
struct AttentionConfig {
  static constexpr int kHeadDim = HeadDim, kValueDim = ValueDim;
  static constexpr bool kCausal = Causal, kMask = Mask, kKeyPadding = KeyPadding, kBias = Bias,
                        kSoftcap = Softcap, kLinearBias = LinearBias;
  static constexpr int kRotaryDims = RotaryDims;
  static constexpr bool kRopeInterleaved = RopeInterleaved;
  using In = InT;
  using Out = OutT;
  using Product = ProductT;
};

/// The products' type the compiler pairs with a storage type when the op
/// has no `product_type` of its own (AttentionKernelSpec::products): f16
/// operands multiply in f16, bf16 ones in bf16. (f32 ones, and f16 ones with
/// `product_type = bf16`, multiply in bf16.)
template <class Storage> struct ProductsFor {
  using type = bf16;
};
template <> struct ProductsFor<f16> {
  using type = f16;
};

namespace detail {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kNegInf = -__builtin_huge_valf();


/// Whether key j of batch b attends (AttentionParams::keyPadding).
ATTUNE_GPU_INLINE bool keyAttends(const AttentionParams &p, int b, int j) {
  const i64 at = b * p.keyPaddingStride + j;
  switch (p.keyPaddingBytes) {
  case 8:
    return static_cast<const i64 *>(p.keyPadding)[at] != 0;
  case 4:
    return static_cast<const u32 *>(p.keyPadding)[at] != 0;
  default:
    return static_cast<const unsigned char *>(p.keyPadding)[at] != 0;
  }
}

/// Loads `count` rows of `cols` (even) elements, row r from rowAt(r,
/// position) (null: a row of zeros) rotated by RoPE at `position` when
/// `Config::kRotaryDims` and `rotate`, into shared memory in
/// Config::Product, row r at to[r * ld].
template <class Config, class T, class RowAt>
ATTUNE_GPU_INLINE void loadRows(u16 *to, int ld, int count, int cols, const AttentionParams &p,
                                bool rotate, RowAt rowAt) {
  const int pairs = count * cols / 2;
  for (int e = threadIndex(); e < pairs; e += kAttentionThreads) {
    int r = e / (cols / 2), c = 2 * (e % (cols / 2));
    float x0 = 0.0f, x1 = 0.0f;
    int position = 0;
    if (const T *row = rowAt(r, position)) {
      x0 = toFloat(row[c]);
      x1 = toFloat(row[c + 1]);
      if (Config::kRotaryDims > 0 && rotate && c < Config::kRotaryDims) {
        constexpr int half = Config::kRotaryDims / 2;
        float n = float(position + p.ropeOffset);
        if (Config::kRopeInterleaved) {
          // the pair (c, c + 1) is rotated by theta[c / 2]
          float s, co;
          sincosf(n * p.ropeTheta[c / 2], &s, &co);
          float y0 = x0 * co - x1 * s, y1 = x1 * co + x0 * s;
          x0 = y0;
          x1 = y1;
        } else {
          // element c pairs with c + half (or c - half)
          bool low = c < half;
          int i0 = low ? c : c - half;
          const T *other = row + (low ? c + half : c - half);
          float o0 = toFloat(other[0]), o1 = toFloat(other[1]);
          float s0, c0, s1, c1;
          sincosf(n * p.ropeTheta[i0], &s0, &c0);
          sincosf(n * p.ropeTheta[i0 + 1], &s1, &c1);
          x0 = low ? x0 * c0 - o0 * s0 : x0 * c0 + o0 * s0;
          x1 = low ? x1 * c1 - o1 * s1 : x1 * c1 + o1 * s1;
        }
      }
    }
    *reinterpret_cast<u32 *>(to + r * ld + c) = packPair<typename Config::Product>(x0, x1);
  }
}

/// loadRows of `validRows` rows from `base`, row r at base + r * rowStride
/// and position position0 + r; zeros after.
template <class Config, class T>
ATTUNE_GPU_INLINE void loadTile(u16 *to, int ld, const T *base, i64 rowStride, int cols,
                                int validRows, int position0, const AttentionParams &p,
                                bool rotate) {
  loadRows<Config, T>(to, ld, kAttentionBlockKeys, cols, p, rotate, [&](int r, int &position) {
    position = position0 + r;
    return r < validRows ? base + r * rowStride : static_cast<const T *>(nullptr);
  });
}

/// Whether rows of T at `base` with these strides start on 16-byte
/// boundaries: the base and every stride a multiple of 16 bytes.
template <class T> ATTUNE_GPU_INLINE bool rowsAligned(const void *base, const i64 stride[3]) {
  constexpr i64 size = sizeof(T);
  return reinterpret_cast<unsigned long long>(base) % 16 == 0 && stride[0] * size % 16 == 0 &&
         stride[1] * size % 16 == 0 && stride[2] * size % 16 == 0;
}

/// Whether such rows can be copied as they are (copyRows): of the product
/// type P, aligned.
template <class T, class P>
ATTUNE_GPU_INLINE bool copiesRows(const void *base, const i64 stride[3]) {
  return sizeof(T) == 2 && kIsF16<T> == kIsF16<P> && rowsAligned<T>(base, stride);
}

/// Whether they can be converted 4 elements at a time (convertRows): f32,
/// aligned.
template <class T> ATTUNE_GPU_INLINE bool convertsRows(const void *base, const i64 stride[3]) {
  return sizeof(T) == 4 && rowsAligned<T>(base, stride);
}

/// Starts copying 64 rows of Cols 16-bit elements, row r from base + r *
/// rowStride (16-byte aligned: copiesRows) to to[r * ld], zeros for rows
/// from validRows on; copyAsyncCommit closes the group.
template <int Cols>
ATTUNE_GPU_INLINE void copyRows(u16 *to, int ld, const u16 *base, i64 rowStride, int validRows) {
  constexpr int chunks = Cols / 8; // 16 bytes each
  if constexpr (kAttentionThreads % chunks == 0) {
    // A thread's chunks are one column, rowStep rows apart: the addresses
    // advance by one add each (a chunk's offsets computed apart would hold
    // registers for the whole kernel).
    constexpr int rowStep = kAttentionThreads / chunks;
    const int r0 = threadIndex() / chunks, col = threadIndex() % chunks * 8;
    const u16 *from = base + r0 * rowStride + col;
    u16 *into = to + r0 * ld + col;
    for (int r = r0; r < kAttentionBlockKeys; r += rowStep) {
      copyAsync16(into, r < validRows ? from : base, r < validRows);
      from += rowStep * rowStride;
      into += rowStep * ld;
    }
  } else {
    for (int c = threadIndex(); c < kAttentionBlockKeys * chunks; c += kAttentionThreads) {
      const int r = c / chunks, col = c % chunks * 8;
      const bool valid = r < validRows;
      copyAsync16(to + r * ld + col, valid ? base + r * rowStride + col : base, valid);
    }
  }
}

/// 16 bytes of f32 and the 8 bytes of 16-bit values they round to.
struct alignas(16) Float4 {
  float x[4];
};
struct alignas(8) Half4 {
  u32 pairs[2];
};

/// Loads 64 rows of Cols f32 elements, row r from base + r * rowStride
/// (16-byte aligned: convertsRows), rounded to P into to[r * ld], zeros for
/// rows from validRows on: one 16-byte load and one 8-byte store for 4
/// elements.
template <int Cols, class P>
ATTUNE_GPU_INLINE void convertRows(u16 *to, int ld, const float *base, i64 rowStride,
                                   int validRows) {
  constexpr int chunks = Cols / 4;
  for (int c = threadIndex(); c < kAttentionBlockKeys * chunks; c += kAttentionThreads) {
    const int r = c / chunks, col = c % chunks * 4;
    Half4 packed = {{0u, 0u}};
    if (r < validRows) {
      expectAligned16(base + r * rowStride + col);
      const Float4 x = *reinterpret_cast<const Float4 *>(base + r * rowStride + col);
      packed.pairs[0] = packPair<P>(x.x[0], x.x[1]);
      packed.pairs[1] = packPair<P>(x.x[2], x.x[3]);
    }
    *reinterpret_cast<Half4 *>(to + r * ld + col) = packed;
  }
}

/// Loads 64 rows into shared memory in the product type P the fastest way
/// their type and alignment allow: copied (rows of P: asynchronously, see
/// copyRows), converted 4 at a time (f32), or element by element (loadTile;
/// which also rotates for RoPE: `rotate`, never with the first two).
enum class RowLoad { Copy, Convert, Elements };

template <class T, class P>
ATTUNE_GPU_INLINE RowLoad rowLoadFor(const void *base, const i64 stride[3], bool rotate) {
  if (rotate)
    return RowLoad::Elements;
  if (copiesRows<T, P>(base, stride))
    return RowLoad::Copy;
  return convertsRows<T>(base, stride) ? RowLoad::Convert : RowLoad::Elements;
}

template <class Config, int Cols, class T>
ATTUNE_GPU_INLINE void loadBlock(RowLoad how, u16 *to, int ld, const T *base, i64 rowStride,
                                 int validRows, int position0, const AttentionParams &p,
                                 bool rotate) {
  if (how == RowLoad::Copy)
    copyRows<Cols>(to, ld, reinterpret_cast<const u16 *>(base), rowStride, validRows);
  else if (how == RowLoad::Convert)
    convertRows<Cols, typename Config::Product>(to, ld, reinterpret_cast<const float *>(base),
                                                rowStride, validRows);
  else
    loadTile<Config>(to, ld, base, rowStride, Cols, validRows, position0, p, rotate);
}

/// c[m][n] += a[m] . B_n for the warp's row tiles m that `computes(m)` and
/// the N column tiles n of B, whose fragments one ldmatrix.x4 (transposed
/// or not) loads two at a time: tiles 2i and 2i + 1 from row + i *
/// pairStep, all of P. S = Q.K^T and O += P.V are both this.
template <bool Transpose, class P, int M, int N, class Computes>
ATTUNE_GPU_INLINE void tileProducts(float (&c)[M][N][4], const u32 (&a)[M][4], const u16 *row,
                                    int pairStep, Computes computes) {
  ATTUNE_UNROLL
  for (int n = 0; n < N; n += 2) {
    u32 b[4];
    loadMatrixX4<Transpose>(b, row + n / 2 * pairStep);
    ATTUNE_UNROLL
    for (int m = 0; m < M; ++m)
      if (computes(m))
        mmaPair<P>(c[m][n], c[m][n + 1], a[m], b);
  }
}

/// The sum of `x` over the 4 lanes of a quad (lanes 4g .. 4g + 3, which
/// hold one row's values in an mma fragment); every lane of the warp must
/// call it.
ATTUNE_GPU_INLINE float quadSum(float x) {
  x += shuffleXor(x, 1);
  return x + shuffleXor(x, 2);
}

/// A compile-time flag for a generic lambda's argument.
template <bool Value> struct Flag {
  static constexpr bool value = Value;
};

} // namespace detail

/// The kernel body for one block (grid: ceil(Sq / BM) * keySplits x heads x
/// batch, or ceil(Sq * group / BM) * keySplits x kvHeads x batch with a
/// packed group; kAttentionThreads threads, attentionSharedBytes of dynamic
/// shared memory; runtime/cuda/FusedAttention.h's attentionLaunch).
///
/// Config: kHeadDim, kValueDim (multiples of 16, at most 128); kCausal;
/// kMask, kKeyPadding, kBias, kSoftcap, kLinearBias (which AttentionParams
/// fields are read); kRotaryDims (0: no RoPE) and kRopeInterleaved; In, Out (float,
/// bf16 or f16) the storage types; Product (bf16 or f16) the products'.
template <class Config> ATTUNE_GPU_INLINE void flashAttention(const AttentionParams &p) {
  using In = typename Config::In;
  using Out = typename Config::Out;
  using Product = typename Config::Product;
  constexpr int D = Config::kHeadDim, Dv = Config::kValueDim;
  constexpr int BM = kAttentionBlockRows, BN = kAttentionBlockKeys;
  constexpr int M = kAttentionWarpTiles; // 16-row tiles per warp
  constexpr int ldK = D + 8, ldV = Dv + 8;
  static_assert(D % 16 == 0 && Dv % 16 == 0 && D <= 128 && Dv <= 128,
                "head sizes are multiples of 16, at most 128");
  static_assert(Config::kRotaryDims % 4 == 0 && Config::kRotaryDims <= D,
                "rotary dimensions are a multiple of 4, at most the head size");
  static_assert(kIsBf16<Product> || kIsF16<Product>, "products are bf16 or f16");

  const int tid = threadIndex(), warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  // The block's rows are virtual rows q0 .. q0 + BM - 1 of `rows`: queries
  // of head y, or with a packed group (AttentionParams::packedGroup) query
  // v / pack of head kvh * pack + v % pack.
  const int pack = p.packedGroup > 1 ? p.packedGroup : 1;
  const int rows = p.querySeq * pack;
  const int queryTiles = (rows + BM - 1) / BM;
  const int q0 = blockIndex(0) % queryTiles * BM, split = blockIndex(0) / queryTiles;
  const int y = blockIndex(1), b = blockIndex(2);
  const int kvh = pack > 1 ? y : y / (p.heads / p.kvHeads);
  auto queryOf = [&](int v) { return v / pack; };
  auto headOf = [&](int v) { return pack > 1 ? kvh * pack + v % pack : y; };
  const int shift = p.keySeq - p.querySeq; // query row i sits at key position i + shift

  unsigned char *smem = nullptr;
#if defined(__CUDACC__)
  extern __shared__ __align__(16) unsigned char attuneSharedMemory[];
  smem = attuneSharedMemory;
#else
  smem = emu::sharedMemory();
#endif
  u16 *qTile = reinterpret_cast<u16 *>(smem);         // [BM][ldK]
  u16 *kTile = qTile + BM * ldK;                      // [BN][ldK]
  u16 *vTile = kTile + BN * ldK;                      // [BN][ldV]
  float *biasRow = reinterpret_cast<float *>(vTile + BN * ldV); // [BM + BN]
  float *keyMask = biasRow + BM + BN;                 // [BN]: 0 or -inf

  // The key range the block's rows can see: deltas in [deltaLow, deltaHigh].
  int deltaHigh = Config::kCausal && p.deltaHigh > 0 ? 0 : p.deltaHigh;
  long long firstKey = (long long)queryOf(q0) + shift + p.deltaLow;
  long long endKey = (long long)queryOf(q0 + BM - 1) + shift + (long long)deltaHigh + 1;
  int keyBegin = firstKey < 0 ? 0 : int(firstKey / BN) * BN;
  int keyEnd = endKey > p.keySeq ? p.keySeq : endKey < 0 ? 0 : int(endKey);
  if (p.keySplits > 1) {
    long long splitBegin = (long long)split * p.splitKeys, splitEnd = splitBegin + p.splitKeys;
    keyBegin = splitBegin > keyBegin ? int(splitBegin) : keyBegin;
    keyEnd = splitEnd < keyEnd ? int(splitEnd) : keyEnd;
  }

  // Q, once, into shared memory, where each key block's S = Q.K^T reads
  // its fragments (ldmatrix) rather than holding D / 4 registers a tile
  // for them (the first key block's barrier makes it visible).
  // One head's rows (not packed, not rotated) 64 at a time as K's are, or
  // element by element.
  const In *q = static_cast<const In *>(p.query) + b * p.queryStride[0];
  const detail::RowLoad loadQ =
      detail::rowLoadFor<In, Product>(p.query, p.queryStride, Config::kRotaryDims > 0);
  if (pack == 1 && loadQ != detail::RowLoad::Elements) {
    for (int r0 = 0; r0 < BM; r0 += BN)
      detail::loadBlock<Config, D>(loadQ, qTile + r0 * ldK, ldK,
                                   q + y * p.queryStride[1] + (q0 + r0) * p.queryStride[2],
                                   p.queryStride[2], rows - q0 - r0, 0, p, false);
    copyAsyncCommit(); // a copy is waited for with the first key block's K
  } else {
    detail::loadRows<Config, In>(qTile, ldK, BM, D, p, true, [&](int r, int &position) {
      const int v = q0 + r, i = queryOf(v);
      position = i + shift;
      return v < rows ? q + headOf(v) * p.queryStride[1] + i * p.queryStride[2]
                      : static_cast<const In *>(nullptr);
    });
  }

  // The warp's rows: M tiles of 16, warpRow .. warpRow + 16 M - 1. A tile
  // whose rows all lie past Sq (in the last query block; a decoding block
  // has a row or a few) computes nothing; a warp without such a tile only
  // loads.
  const int warpRow = q0 + warp * 16 * M;
  auto tileComputes = [&](int m) { return warpRow + 16 * m < rows; };
  const bool warpComputes = tileComputes(0);
  // The queries of the warp's first and last rows (rows past Sq included:
  // they are computed, never stored).
  const int warpFirstQuery = queryOf(warpRow), warpLastQuery = queryOf(warpRow + 16 * M - 1);

  float acc[M][Dv / 8][4];
  // Per tile, rows g and g + 8 of its 16: the running maximum (log2
  // domain), this lane's part of the sum, their query and head.
  float rowMax[M][2], rowSum[M][2];
  int rowOf[M][2], headOfRow[M][2];
  ATTUNE_UNROLL
  for (int m = 0; m < M; ++m) {
    ATTUNE_UNROLL
    for (int nd = 0; nd < Dv / 8; ++nd)
      ATTUNE_UNROLL
      for (int e = 0; e < 4; ++e)
        acc[m][nd][e] = 0.0f;
    ATTUNE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int v = warpRow + 16 * m + g + 8 * r;
      rowMax[m][r] = detail::kNegInf;
      rowSum[m][r] = 0.0f;
      rowOf[m][r] = queryOf(v);
      headOfRow[m][r] = headOf(v);
    }
  }

  const In *kBase = static_cast<const In *>(p.key) + b * p.keyStride[0] + kvh * p.keyStride[1];
  const In *vBase =
      static_cast<const In *>(p.value) + b * p.valueStride[0] + kvh * p.valueStride[1];
  // K and V blocks are copied as they are (asynchronously) where they can
  // be: rows of the product type, 16-byte aligned, K not rotated
  // (detail::rowLoadFor).
  const detail::RowLoad loadK =
      detail::rowLoadFor<In, Product>(p.key, p.keyStride, Config::kRotaryDims > 0);
  const detail::RowLoad loadV = detail::rowLoadFor<In, Product>(p.value, p.valueStride, false);
  const bool copyK = loadK == detail::RowLoad::Copy;
  // Each starts one group of asynchronous copies (empty when converted).
  auto loadKeys = [&](int k0) {
    detail::loadBlock<Config, D>(loadK, kTile, ldK, kBase + k0 * p.keyStride[2], p.keyStride[2],
                                 p.keySeq - k0, k0, p, true);
    copyAsyncCommit();
  };
  auto loadValues = [&](int k0) {
    detail::loadBlock<Config, Dv>(loadV, vTile, ldV, vBase + k0 * p.valueStride[2],
                                  p.valueStride[2], p.keySeq - k0, k0, p, false);
    copyAsyncCommit();
  };
  // Writes the key mask of block k0 and returns how many of its keys exist
  // and are not padding (one a thread: BN <= the block's threads). Every
  // thread calls it.
  static_assert(BN <= kAttentionThreads, "a thread masks one key of a block");
  auto attendedKeys = [&](int k0) {
    bool attend = false;
    if (tid < BN) {
      const int j = k0 + tid;
      attend = j < p.keySeq && (!Config::kKeyPadding || detail::keyAttends(p, b, j));
      keyMask[tid] = attend ? 0.0f : detail::kNegInf;
    }
    if constexpr (Config::kKeyPadding)
      return syncThreadsCount(attend);
    else
      return k0 + BN <= p.keySeq ? BN : p.keySeq - k0;
  };
  // The first block from k0 with a key some row attends to, `full` when
  // every key of it is one (no key mask to add). A block of padding only
  // (the end of a shorter sequence in a batch of several lengths) adds
  // nothing to any row: it is skipped before its K and V are read.
  auto nextBlock = [&](int k0, bool &full) {
    for (; k0 < keyEnd; k0 += BN)
      if (const int attended = attendedKeys(k0); attended > 0) {
        full = attended == BN;
        break;
      }
    return k0;
  };

  const float scaleLog2 = p.scale * detail::kLog2e;
  // ldmatrix: lane l gives row l % 8 of matrix l / 8.
  const int matrix = lane / 8, matrixRow = lane % 8;

  // The pipeline: K of a block is copied while the previous block's P.V is
  // computed, its V while its S is (where they are copied, not converted).
  bool full = false;
  int k0 = nextBlock(keyBegin, full);
  if (k0 < keyEnd)
    loadKeys(k0);
  while (k0 < keyEnd) {
    loadValues(k0);
    // The bias table's values for the block's distances. A block whose
    // every distance lies past the table's rows on one side (T5's beyond
    // max_distance: most blocks of a long sequence) reads one edge row: one
    // value for the block (flatBias), added without a per-score lookup
    // (step 3) or, with no other modifier, with the scale (step 4).
    bool flatBias = false;
    float blockBias = 0.0f;
    if constexpr (Config::kBias) {
      // One head's: a bias table is never packed (y is the head).
      const In *table = static_cast<const In *>(p.biasTable) + y * p.biasHeadStride;
      const long long lowest = (long long)k0 - q0 - shift - (BM - 1); // biasRow[0]'s delta
      const long long highest = lowest + BM + BN - 2;
      const int edge = highest <= p.biasRowLow                             ? 0
                       : lowest >= (long long)p.biasRowLow + p.biasRowCount - 1 ? p.biasRowCount - 1
                                                                          : -1;
      if (edge >= 0) {
        flatBias = true;
        blockBias = toFloat(table[p.biasRows[edge] * p.biasRowStride]);
      } else {
        // biasRow[x] = bias_h(delta) for delta = lowest + x
        for (int x = tid; x < BM + BN - 1; x += kAttentionThreads) {
          long long at = lowest + x - p.biasRowLow;
          at = at < 0 ? 0 : at >= p.biasRowCount ? p.biasRowCount - 1 : at;
          biasRow[x] = toFloat(table[p.biasRows[at] * p.biasRowStride]);
        }
      }
    }
    copyAsyncWait<1>(); // this block's K has landed; its V may not have
    syncThreads();

    // Whether the warp's rows see a key of the block: a warp above the
    // causal diagonal (or outside a window) skips it.
    const bool warpSees = warpComputes &&
                          (long long)warpLastQuery + shift + deltaHigh >= k0 &&
                          (long long)warpFirstQuery + shift + p.deltaLow <= k0 + BN - 1;
    float s[M][BN / 8][4];
    if (warpSees) {
      // 2. S = Q.K^T for the warp's rows and the block's 64 keys: one
      // ldmatrix gives a tile's Q fragment, one the fragments of key tiles
      // nt and nt + 1, used by each of the warp's row tiles. The products
      // of different key tiles are independent: one does not wait for the
      // last.
      ATTUNE_UNROLL
      for (int m = 0; m < M; ++m)
        ATTUNE_UNROLL
        for (int nt = 0; nt < BN / 8; ++nt)
          ATTUNE_UNROLL
          for (int e = 0; e < 4; ++e)
            s[m][nt][e] = 0.0f;
      const u16 *keyRow = kTile + ((matrix >> 1) * 8 + matrixRow) * ldK + (matrix & 1) * 8;
      const u16 *queryRow = qTile + (warpRow - q0 + (matrix & 1) * 8 + matrixRow) * ldK +
                            (matrix >> 1) * 8;
      ATTUNE_UNROLL
      for (int kk = 0; kk < D / 16; ++kk) {
        u32 qFrag[M][4];
        ATTUNE_UNROLL
        for (int m = 0; m < M; ++m)
          if (tileComputes(m))
            loadMatrixX4<false>(qFrag[m], queryRow + 16 * m * ldK + kk * 16);
        detail::tileProducts<false, Product>(s, qFrag, keyRow + kk * 16, 16 * ldK,
                                             tileComputes);
      }

      // 3. The score as the op defines it, in the log2 domain: times
      // `toLog2` in step 4. A block whose keys all exist, are not padding
      // (full) and lie within the visible distances of every row of the warp
      // needs no per-score test; without modifiers (and a positive scale,
      // which keeps the maximum where it is) it needs nothing here: the
      // scale is applied with the maximum's subtraction in one multiply-add.
      // So does a bias table alone whose block reads one value (flatBias),
      // added in the same multiply-add (biasLog2).
      const bool inside = full && (long long)k0 - warpLastQuery - shift >= p.deltaLow &&
                          (long long)k0 + BN - 1 - warpFirstQuery - shift <= deltaHigh;
      constexpr bool kModifiers =
          Config::kSoftcap || Config::kMask || Config::kBias || Config::kLinearBias;
      constexpr bool kBiasAlone =
          Config::kBias && !Config::kSoftcap && !Config::kMask && !Config::kLinearBias;
      const bool scaleInExp =
          (!kModifiers || (kBiasAlone && flatBias)) && inside && p.scale > 0.0f;
      const float toLog2 = scaleInExp ? scaleLog2 : 1.0f;
      const float biasLog2 = kBiasAlone && scaleInExp ? blockBias * detail::kLog2e : 0.0f;
      auto scores = [&](auto edge) {
        ATTUNE_UNROLL
        for (int m = 0; m < M; ++m) {
          ATTUNE_UNROLL
          for (int nt = 0; nt < BN / 8; ++nt) {
            ATTUNE_UNROLL
            for (int e = 0; e < 4; ++e) {
              int r = e / 2, x = nt * 8 + 2 * t + (e % 2);
              int i = rowOf[m][r], j = k0 + x;
              int delta = j - i - shift;
              float v;
              if constexpr (!kModifiers) {
                v = s[m][nt][e] * scaleLog2;
              } else {
                v = s[m][nt][e] * p.scale;
                if (Config::kSoftcap)
                  v = p.softcap * tanhf(v / p.softcap);
                if (Config::kMask && i < p.querySeq && j < p.keySeq)
                  v += toFloat(static_cast<const In *>(
                      p.mask)[b * p.maskStride[0] + headOfRow[m][r] * p.maskStride[1] +
                              i * p.maskStride[2] + j * p.maskStride[3]]);
                if (Config::kBias)
                  v += flatBias ? blockBias : biasRow[x - (i - q0) + (BM - 1)];
                if (Config::kLinearBias)
                  v += p.biasSlopes[headOfRow[m][r]] *
                       float(p.biasAbsolute && delta < 0 ? -delta : delta);
                v *= detail::kLog2e;
              }
              if constexpr (decltype(edge)::value) {
                v += keyMask[x];
                if (delta < p.deltaLow || delta > deltaHigh)
                  v = detail::kNegInf;
              }
              s[m][nt][e] = v;
            }
          }
        }
      };
      if (!inside)
        scores(detail::Flag<true>{});
      else if (!scaleInExp)
        scores(detail::Flag<false>{});

      // 4. Online softmax: P = exp2(S toLog2 (+ biasLog2) - m), in place.
      ATTUNE_UNROLL
      for (int m = 0; m < M; ++m) {
        ATTUNE_UNROLL
        for (int r = 0; r < 2; ++r) {
          float blockMax = detail::kNegInf;
          ATTUNE_UNROLL
          for (int nt = 0; nt < BN / 8; ++nt)
            blockMax = fmaxf(blockMax, fmaxf(s[m][nt][2 * r], s[m][nt][2 * r + 1]));
          blockMax = fmaxf(blockMax, shuffleXor(blockMax, 1));
          blockMax = fmaxf(blockMax, shuffleXor(blockMax, 2));
          float newMax =
              fmaxf(rowMax[m][r], kBiasAlone ? blockMax * toLog2 + biasLog2 : blockMax * toLog2);
          // A row that has seen only -inf subtracts 0, so that exp2(-inf -
          // m) is 0 and never NaN.
          float base = newMax == detail::kNegInf ? 0.0f : newMax;
          float rescale = exp2Approx(rowMax[m][r] - base);
          const float offset = kBiasAlone ? biasLog2 - base : -base;
          rowMax[m][r] = newMax;
          rowSum[m][r] *= rescale;
          ATTUNE_UNROLL
          for (int nd = 0; nd < Dv / 8; ++nd) {
            acc[m][nd][2 * r] *= rescale;
            acc[m][nd][2 * r + 1] *= rescale;
          }
          ATTUNE_UNROLL
          for (int nt = 0; nt < BN / 8; ++nt) {
            ATTUNE_UNROLL
            for (int e = 2 * r; e < 2 * r + 2; ++e) {
              s[m][nt][e] = exp2Approx(fmaf(s[m][nt][e], toLog2, offset));
              rowSum[m][r] += s[m][nt][e];
            }
          }
        }
      }
    }
    copyAsyncWait<0>(); // V has landed
    syncThreads();      // and every warp is done with K, the key mask and the bias row

    // The next block's K: copied while P.V is computed, or (converted,
    // rotated) after it, when P no longer holds registers.
    bool nextFull = false;
    const int next = nextBlock(k0 + BN, nextFull);
    if (copyK && next < keyEnd)
      loadKeys(next);

    if (warpSees) {
      // O += P.V: P rounded to the product type as the A operand; one ldmatrix.trans
      // gives the fragments of value columns nd and nd + 1.
      const u16 *valueRow = vTile + ((matrix & 1) * 8 + matrixRow) * ldV + (matrix >> 1) * 8;
      ATTUNE_UNROLL
      for (int kk = 0; kk < BN / 16; ++kk) {
        u32 pFrag[M][4];
        ATTUNE_UNROLL
        for (int m = 0; m < M; ++m) {
          pFrag[m][0] = packPair<Product>(s[m][2 * kk][0], s[m][2 * kk][1]);
          pFrag[m][1] = packPair<Product>(s[m][2 * kk][2], s[m][2 * kk][3]);
          pFrag[m][2] = packPair<Product>(s[m][2 * kk + 1][0], s[m][2 * kk + 1][1]);
          pFrag[m][3] = packPair<Product>(s[m][2 * kk + 1][2], s[m][2 * kk + 1][3]);
        }
        detail::tileProducts<true, Product>(acc, pFrag, valueRow + kk * 16 * ldV, 16,
                                            tileComputes);
      }
    }
    syncThreads(); // every warp is done with V
    if (!copyK && next < keyEnd)
      loadKeys(next);
    k0 = next;
    full = nextFull;
  }
  copyAsyncWait<0>(); // Q's copies, when the rows saw no key block

  if (p.keySplits > 1) {
    // This split's part: O unnormalised, the row maximum and sum.
    ATTUNE_UNROLL
    for (int m = 0; m < M; ++m) {
      ATTUNE_UNROLL
      for (int r = 0; r < 2; ++r) {
        const float sum = detail::quadSum(rowSum[m][r]);
        int i = rowOf[m][r];
        if (i >= p.querySeq)
          continue;
        i64 row = ((i64(split) * p.batch + b) * p.heads + headOfRow[m][r]) * p.querySeq + i;
        ATTUNE_UNROLL
        for (int nd = 0; nd < Dv / 8; ++nd) {
          p.partialResult[row * Dv + nd * 8 + 2 * t] = acc[m][nd][2 * r];
          p.partialResult[row * Dv + nd * 8 + 2 * t + 1] = acc[m][nd][2 * r + 1];
        }
        if (t == 0) {
          p.partialStats[2 * row] = rowMax[m][r];
          p.partialStats[2 * row + 1] = sum;
        }
      }
    }
    return;
  }

  // O / l, 0 where the row saw no key.
  Out *o = static_cast<Out *>(p.result) + b * p.resultStride[0];
  ATTUNE_UNROLL
  for (int m = 0; m < M; ++m) {
    ATTUNE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const float sum = detail::quadSum(rowSum[m][r]);
      float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
      int i = rowOf[m][r];
      if (i >= p.querySeq)
        continue;
      Out *row = o + headOfRow[m][r] * p.resultStride[1] + i * p.resultStride[2];
      ATTUNE_UNROLL
      for (int nd = 0; nd < Dv / 8; ++nd) {
        store(row + nd * 8 + 2 * t, acc[m][nd][2 * r] * inverse);
        store(row + nd * 8 + 2 * t + 1, acc[m][nd][2 * r + 1] * inverse);
      }
    }
  }
}

/// Combines the key splits of flashAttention (p.keySplits > 1) into the
/// result: with M the largest split maximum, O = sum_s 2^(m_s - M) O_s /
/// sum_s 2^(m_s - M) l_s, 0 for a row no split saw a key of. Grid:
/// ceil(Sq * Dv / kAttentionThreads) x heads x batch, kAttentionThreads
/// threads, no shared memory.
template <class Config> ATTUNE_GPU_INLINE void attentionCombine(const AttentionParams &p) {
  using Out = typename Config::Out;
  constexpr int Dv = Config::kValueDim;
  const int h = blockIndex(1), b = blockIndex(2);
  const i64 index = i64(blockIndex(0)) * kAttentionThreads + threadIndex();
  if (index >= i64(p.querySeq) * Dv)
    return;
  const int i = int(index / Dv), d = int(index % Dv);
  const i64 splitRows = i64(p.batch) * p.heads * p.querySeq;
  const i64 row = (i64(b) * p.heads + h) * p.querySeq + i;
  float maximum = detail::kNegInf;
  for (int s = 0; s < p.keySplits; ++s)
    maximum = fmaxf(maximum, p.partialStats[2 * (s * splitRows + row)]);
  float sum = 0.0f, out = 0.0f;
  if (maximum != detail::kNegInf) {
    for (int s = 0; s < p.keySplits; ++s) {
      float weight = exp2Approx(p.partialStats[2 * (s * splitRows + row)] - maximum);
      sum += weight * p.partialStats[2 * (s * splitRows + row) + 1];
      out += weight * p.partialResult[(s * splitRows + row) * Dv + d];
    }
  }
  Out *o = static_cast<Out *>(p.result) + b * p.resultStride[0] + h * p.resultStride[1] +
           i * p.resultStride[2];
  store(o + d, sum > 0.0f ? out / sum : 0.0f);
}

} // namespace attune::gpu

#endif // ATTUNE_GPU_FLASHATTENTION_CUH
