//===- WarpOps.cuh - the warp-level operations of attune's CUDA kernels -*- CUDA -*-===//
//
// The few things attune's hand-structured CUDA kernels (FlashAttention.cuh)
// do that plain C++ cannot express: the thread and block indices, barriers,
// a lane shuffle, bf16 and f16 packing, the tensor-core product
// mma.sync.m16n8k16 (bf16 or f16 in, f32 accumulate; PTX ISA "Matrix
// Fragments for mma.m16n8k16"),
// its operand loads from shared memory (ldmatrix) and the asynchronous
// copy from global to shared memory (cp.async, sm_80). Compiled by nvcc
// they are the PTX instructions. Compiled
// by a host C++ compiler they are calls into attune::gpu::emu, which a test
// implements by running each thread of a block as a host thread and each
// collective from the PTX ISA's definition
// (tests/unit/cuda/WarpEmulator.cpp). That lets the kernels' indexing,
// online softmax and masking be tested on machines without a GPU; only the
// hardware's own rounding and speed need one.
//
// Everything here is header-only and self-contained: attune-compile pastes
// this file and FlashAttention.cuh into the source it hands nvcc.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_GPU_WARPOPS_CUH
#define ATTUNE_GPU_WARPOPS_CUH

#if defined(__CUDACC__)
#define ATTUNE_GPU_INLINE __device__ __forceinline__
// Before a loop over a register array: fully unrolled, its indices are
// constants and the array stays in registers (not local memory).
#define ATTUNE_UNROLL _Pragma("unroll")
#else
#define ATTUNE_UNROLL
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#define ATTUNE_GPU_INLINE inline
#endif

namespace attune::gpu {

#if defined(__CUDACC__)
using u32 = unsigned int;
using u16 = unsigned short;
using i64 = long long;
#else
using u32 = std::uint32_t;
using u16 = std::uint16_t;
using i64 = std::int64_t;
#endif

/// A bf16 value as its bits (the upper half of an f32's).
struct bf16 {
  u16 bits;
};

/// An IEEE binary16 value as its bits.
struct f16 {
  u16 bits;
};

/// Whether T is f16, or bf16: the tensor-core products' operand types.
template <class T> constexpr bool kIsF16 = false;
template <> constexpr bool kIsF16<f16> = true;
template <class T> constexpr bool kIsBf16 = false;
template <> constexpr bool kIsBf16<bf16> = true;

#if !defined(__CUDACC__)
/// Implemented by the host emulator; see the top of this file.
namespace emu {
int threadIndex();
int blockIndex(int axis);
unsigned char *sharedMemory();
void syncThreads();
int syncThreadsCount(bool predicate);
float shuffleXor(float value, int laneMask);
void mma(float c[4], const u32 a[4], const u32 b[2], bool f16);
void loadMatrices(u32 *r, int count, const u16 *row, bool transpose);
} // namespace emu
#endif

ATTUNE_GPU_INLINE int threadIndex() {
#if defined(__CUDACC__)
  return threadIdx.x;
#else
  return emu::threadIndex();
#endif
}

/// blockIdx.x, .y or .z for axis 0, 1, 2.
ATTUNE_GPU_INLINE int blockIndex(int axis) {
#if defined(__CUDACC__)
  return axis == 0 ? blockIdx.x : axis == 1 ? blockIdx.y : blockIdx.z;
#else
  return emu::blockIndex(axis);
#endif
}

ATTUNE_GPU_INLINE void syncThreads() {
#if defined(__CUDACC__)
  __syncthreads();
#else
  emu::syncThreads();
#endif
}

/// A barrier that also tells every thread for how many threads of the
/// block `predicate` held (__syncthreads_count).
ATTUNE_GPU_INLINE int syncThreadsCount(bool predicate) {
#if defined(__CUDACC__)
  return __syncthreads_count(predicate);
#else
  return emu::syncThreadsCount(predicate);
#endif
}

/// The value lane (this lane ^ laneMask) of the warp holds; every lane of
/// the warp must call it.
ATTUNE_GPU_INLINE float shuffleXor(float value, int laneMask) {
#if defined(__CUDACC__)
  return __shfl_xor_sync(0xffffffffu, value, laneMask);
#else
  return emu::shuffleXor(value, laneMask);
#endif
}

/// c += a * b for one warp, a and b of P (bf16 or f16): a 16x16 tile (4
/// registers a lane, "row"), b 16x8 ("col"), c 16x8 f32, in the PTX ISA's
/// fragment layouts, which the two types share. With g = lane / 4 and t =
/// lane % 4: a[0] holds A[g][2t, 2t+1], a[1] A[g+8][2t, 2t+1], a[2]
/// A[g][2t+8, 2t+9], a[3] A[g+8][2t+8, 2t+9]; b[0] B[2t, 2t+1][g], b[1]
/// B[2t+8, 2t+9][g]; c C[g][2t, 2t+1] then C[g+8][2t, 2t+1]. The lower
/// element of a pair is in the lower 16 bits.
template <class P> ATTUNE_GPU_INLINE void mma(float c[4], const u32 a[4], const u32 b[2]) {
#if defined(__CUDACC__)
  if constexpr (kIsF16<P>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  emu::mma(c, a, b, kIsF16<P>);
#endif
}

/// Nothing on a GPU, whose 16-byte accesses (cp.async, vector loads,
/// ldmatrix) fault at an address off a 16-byte boundary; the host build
/// throws there instead, so that an emulated test fails as the GPU would.
ATTUNE_GPU_INLINE void expectAligned16(const void *address) {
#if !defined(__CUDACC__)
  if (reinterpret_cast<std::uintptr_t>(address) % 16 != 0)
    throw std::logic_error("a 16-byte access off a 16-byte boundary");
#else
  (void)address;
#endif
}

/// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 for one warp: lanes
/// 8m .. 8m + 7 give the addresses of rows 0 .. 7 of the 8x8 16-bit matrix m
/// (16-byte aligned); r[m] receives matrix m's elements (row lane / 4,
/// columns 2 (lane % 4) and the next), or with Transpose elements
/// (2 (lane % 4), lane / 4) and (2 (lane % 4) + 1, lane / 4): an mma
/// fragment either way, the lower element in the lower half.
template <bool Transpose> ATTUNE_GPU_INLINE void loadMatrixX4(u32 r[4], const u16 *row) {
#if defined(__CUDACC__)
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (Transpose)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
#else
  expectAligned16(row);
  emu::loadMatrices(r, 4, row, Transpose);
#endif
}

/// Starts copying 16 bytes from global `from` to shared `to` (both 16-byte
/// aligned), or zeros to `to` when !valid (cp.async.cg with a source size of
/// 0 reads nothing). The bytes are there after copyAsyncWait of the group
/// copyAsyncCommit closes. The host build copies at once.
ATTUNE_GPU_INLINE void copyAsync16(void *to, const void *from, bool valid) {
#if defined(__CUDACC__)
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(address), "l"(from), "r"(valid ? 16 : 0));
#else
  expectAligned16(to);
  if (valid)
    expectAligned16(from);
  if (valid)
    std::memcpy(to, from, 16);
  else
    std::memset(to, 0, 16);
#endif
}

/// Closes the group of the copies this thread started since the last one.
ATTUNE_GPU_INLINE void copyAsyncCommit() {
#if defined(__CUDACC__)
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most `Pending` of this thread's groups are in flight
/// (the rest have landed); a barrier makes them visible to other threads.
template <int Pending> ATTUNE_GPU_INLINE void copyAsyncWait() {
#if defined(__CUDACC__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

/// c0 += a.b for b's first two registers, c1 += a.b for its last two: the
/// two products one ldmatrix.x4 of B operands serves (loadMatrixX4).
template <class P>
ATTUNE_GPU_INLINE void mmaPair(float c0[4], float c1[4], const u32 a[4], const u32 b[4]) {
  mma<P>(c0, a, b);
  mma<P>(c1, a, b + 2);
}

/// 2^x, approximately (ex2.approx: 2 ulp); 2^-inf = 0.
ATTUNE_GPU_INLINE float exp2Approx(float x) {
#if defined(__CUDACC__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

ATTUNE_GPU_INLINE float floatBits(u32 bits) {
#if defined(__CUDACC__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

ATTUNE_GPU_INLINE u32 bitsOf(float f) {
#if defined(__CUDACC__)
  return __float_as_uint(f);
#else
  u32 bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

/// f32 to bf16 bits, rounding to nearest even (NaN stays NaN).
ATTUNE_GPU_INLINE u32 toBf16Bits(float f) {
  u32 bits = bitsOf(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (bits >> 16) | 0x40u;
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

#if !defined(__CUDACC__)
/// f32 to f16 bits, rounding to nearest even: from 65520 (65504 and half
/// its ulp) to inf, below 2^-14 to the subnormals (NaN stays NaN). The
/// host's; the device converts by cvt.rn.f16.f32.
inline u32 toF16BitsOnHost(float f) {
  const u32 all = bitsOf(f), sign = (all >> 16) & 0x8000u;
  u32 x = all & 0x7fffffffu;
  if (x >= (127u + 16u) << 23) // 2^16 and above: inf; NaN
    return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (x < 113u << 23) {
    // Below 2^-14: adding 2^-1 leaves the value's multiple of 2^-24 (an
    // f16 subnormal's unit) in the low mantissa bits, rounded to nearest
    // even by the addition.
    const u32 magic = 126u << 23;
    return sign | (bitsOf(floatBits(x) + floatBits(magic)) - magic);
  }
  // Normal: rebias the exponent, round the 13 bits dropped to nearest even.
  x += (u32(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u);
  return sign | (x >> 13);
}
#endif

/// {lo, hi} rounded to P (bf16 or f16) in one register, lo in the lower
/// half.
template <class P> ATTUNE_GPU_INLINE u32 packPair(float lo, float hi) {
#if defined(__CUDACC__)
  u32 packed;
  if constexpr (kIsF16<P>)
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
#else
  if constexpr (kIsF16<P>)
    return toF16BitsOnHost(lo) | (toF16BitsOnHost(hi) << 16);
  else
    return toBf16Bits(lo) | (toBf16Bits(hi) << 16);
#endif
}

ATTUNE_GPU_INLINE float toFloat(float x) { return x; }
ATTUNE_GPU_INLINE float toFloat(bf16 x) { return floatBits(u32(x.bits) << 16); }
ATTUNE_GPU_INLINE float toFloat(f16 x) {
#if defined(__CUDACC__)
  float y;
  asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"(x.bits));
  return y;
#else
  const u32 sign = u32(x.bits & 0x8000u) << 16, exponent = (x.bits >> 10) & 0x1fu,
            mantissa = x.bits & 0x3ffu;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24
    return floatBits(sign | bitsOf(float(mantissa) * 5.9604644775390625e-8f));
  if (exponent == 31)
    return floatBits(sign | 0x7f800000u | mantissa << 13);
  return floatBits(sign | (exponent + 112u) << 23 | mantissa << 13);
#endif
}

ATTUNE_GPU_INLINE void store(float *to, float x) { *to = x; }
ATTUNE_GPU_INLINE void store(bf16 *to, float x) { to->bits = u16(toBf16Bits(x)); }
ATTUNE_GPU_INLINE void store(f16 *to, float x) {
#if defined(__CUDACC__)
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(to->bits) : "f"(x));
#else
  to->bits = u16(toF16BitsOnHost(x));
#endif
}

} // namespace attune::gpu

#endif // ATTUNE_GPU_WARPOPS_CUH
