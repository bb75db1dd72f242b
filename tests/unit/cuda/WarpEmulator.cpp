//===- WarpEmulator.cpp - run attune's CUDA kernels on host threads ---------===//

#include "tests/unit/cuda/WarpEmulator.h"

#include "compiler/targets/cuda/attention/WarpOps.cuh"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace attune::gpu::emu {
namespace {

/// Thrown in the threads of a block one of whose threads threw, at their
/// next barrier (or while waiting at one), so that every thread unwinds and
/// launch rethrows the first exception instead of the others waiting for
/// ever.
struct Abandoned {};

/// A reusable barrier for `count` threads, given up when `failed` is set
/// (abandon() wakes those waiting).
class Barrier {
public:
  Barrier(int count, const std::atomic<bool> &failed) : count_(count), failed_(failed) {}
  void arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (failed_)
      throw Abandoned{};
    unsigned long generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return generation_ != generation || failed_; });
    if (generation_ == generation)
      throw Abandoned{};
  }
  /// Wakes the waiting threads after `failed` was set.
  void abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_.notify_all();
  }

private:
  std::mutex mutex_;
  std::condition_variable released_;
  int count_, waiting_ = 0;
  unsigned long generation_ = 0;
  const std::atomic<bool> &failed_;
};

/// What the lanes of one warp exchange in a collective.
struct Warp {
  explicit Warp(const std::atomic<bool> &failed) : barrier(32, failed) {}
  Barrier barrier;
  u32 a[32][4];
  u32 b[32][2];
  float value[32];
  const u16 *row[32]; // loadMatrices
};

struct Block {
  int index[3];
  std::vector<unsigned char> shared;
  std::unique_ptr<Barrier> barrier;
  std::atomic<int> count{0}; // syncThreadsCount's

  std::vector<std::unique_ptr<Warp>> warps;

  /// Set when a thread threw; `error` is the first thread's exception.
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::exception_ptr error;

  /// Records the current exception (the first one wins) and gives up the
  /// block's barriers, so that its other threads unwind too.
  void fail() {
    {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!error)
        error = std::current_exception();
    }
    failed = true;
    barrier->abandon();
    for (auto &warp : warps)
      warp->barrier.abandon();
  }
};

std::atomic<long long> warpProducts{0};

/// Bytes checked past each block's shared memory: as many as it has (4 KiB
/// at least), so that an index into the wrong tile lands in the guard.
size_t sharedGuard(int sharedBytes) { return std::max<size_t>(4096, size_t(sharedBytes)); }

thread_local Block *currentBlock = nullptr;
thread_local int currentThread = -1;

Block &block() {
  if (!currentBlock)
    throw std::logic_error("attune::gpu::emu called outside emu::launch");
  return *currentBlock;
}

Warp &warp() { return *block().warps[currentThread / 32]; }

/// Element `half` (0: the lower 16 bits) of a register of two 16-bit
/// values, f16 or bf16.
float halfValue(u32 reg, int half, bool f16) {
  const u16 bits = u16(half ? reg >> 16 : reg & 0xffffu);
  return f16 ? toFloat(gpu::f16{bits}) : toFloat(gpu::bf16{bits});
}

} // namespace

int threadIndex() { return currentThread; }
int blockIndex(int axis) { return block().index[axis]; }
unsigned char *sharedMemory() { return block().shared.data(); }
void syncThreads() { block().barrier->arrive(); }

int syncThreadsCount(bool predicate) {
  Block &b = block();
  if (predicate)
    ++b.count;
  b.barrier->arrive(); // every predicate is in
  int count = b.count;
  b.barrier->arrive(); // every thread has read it
  if (currentThread == 0)
    b.count = 0;
  b.barrier->arrive(); // reset before the next call
  return count;
}

float shuffleXor(float value, int laneMask) {
  Warp &w = warp();
  int lane = currentThread % 32;
  w.value[lane] = value;
  w.barrier.arrive();
  float other = w.value[lane ^ laneMask];
  w.barrier.arrive();
  return other;
}

void mma(float c[4], const u32 a[4], const u32 b[2], bool f16) {
  Warp &w = warp();
  int lane = currentThread % 32;
  std::memcpy(w.a[lane], a, sizeof w.a[lane]);
  std::memcpy(w.b[lane], b, sizeof w.b[lane]);
  w.barrier.arrive();
  // A[row][k] lives in lane (row % 8) * 4 + (k % 8) / 2, register
  // (row >= 8) + 2 * (k >= 8), half k % 2; B[k][n] in lane n * 4 +
  // (k % 8) / 2, register k >= 8, half k % 2 (WarpOps.cuh's mma). A
  // product of two f16 or bf16 values is exact in f32.
  auto A = [&](int row, int k) {
    return halfValue(w.a[(row % 8) * 4 + (k % 8) / 2][(row >= 8) + 2 * (k >= 8)], k % 2, f16);
  };
  auto B = [&](int k, int n) { return halfValue(w.b[n * 4 + (k % 8) / 2][k >= 8], k % 2, f16); };
  int g = lane / 4, t = lane % 4;
  if (lane == 0)
    ++warpProducts;
  for (int e = 0; e < 4; ++e) {
    int row = g + 8 * (e / 2), col = 2 * t + e % 2;
    float sum = c[e];
    for (int k = 0; k < 16; ++k)
      sum += A(row, k) * B(k, col);
    c[e] = sum;
  }
  w.barrier.arrive();
}

void loadMatrices(u32 *r, int count, const u16 *row, bool transpose) {
  Warp &w = warp();
  int lane = currentThread % 32;
  w.row[lane] = row;
  w.barrier.arrive();
  // Matrix m's row i is at the address lane 8m + i gave (WarpOps.cuh's
  // loadMatrixX4).
  int g = lane / 4, t = lane % 4;
  for (int m = 0; m < count; ++m) {
    const u16 *const *rows = w.row + 8 * m;
    u32 lo = transpose ? rows[2 * t][g] : rows[g][2 * t];
    u32 hi = transpose ? rows[2 * t + 1][g] : rows[g][2 * t + 1];
    r[m] = lo | hi << 16;
  }
  w.barrier.arrive();
}

long long products() { return warpProducts; }

void launch(const LaunchShape &shape, const std::function<void()> &body) {
  if (shape.threads <= 0 || shape.threads % 32 != 0)
    throw std::invalid_argument("emu::launch: threads must be a positive multiple of 32");
  for (int z = 0; z < shape.grid[2]; ++z) {
    for (int y = 0; y < shape.grid[1]; ++y) {
      for (int x = 0; x < shape.grid[0]; ++x) {
        Block state;
        state.index[0] = x;
        state.index[1] = y;
        state.index[2] = z;
        // Past the block's shared memory: a guard that a kernel writing
        // beyond what it asked for overwrites.
        state.shared.assign(size_t(shape.sharedBytes) + sharedGuard(shape.sharedBytes), 0xcd);
        state.barrier = std::make_unique<Barrier>(shape.threads, state.failed);
        for (int i = 0; i < shape.threads / 32; ++i)
          state.warps.push_back(std::make_unique<Warp>(state.failed));
        std::vector<std::thread> threads;
        for (int tid = 0; tid < shape.threads; ++tid) {
          threads.emplace_back([&state, &body, tid] {
            currentBlock = &state;
            currentThread = tid;
            try {
              body();
            } catch (const Abandoned &) {
              // another thread of the block threw first
            } catch (...) {
              state.fail();
            }
            currentBlock = nullptr;
          });
        }
        for (std::thread &thread : threads)
          thread.join();
        if (state.error)
          std::rethrow_exception(state.error);
        for (size_t i = shape.sharedBytes; i < state.shared.size(); ++i)
          if (state.shared[i] != 0xcd)
            throw std::logic_error("emu::launch: the kernel wrote past its " +
                                   std::to_string(shape.sharedBytes) +
                                   " bytes of shared memory, at byte " + std::to_string(i));
      }
    }
  }
}

} // namespace attune::gpu::emu
