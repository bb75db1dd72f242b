//===- ParForTest.cpp - the model libraries' thread pool ------------------===//
//
// runtime/model/par_for.c, linked into this test as into a model library,
// against a stand-in for the three Halide runtime functions it uses: the
// test sets the thread count Halide would report, and counts the loops the
// pool hands back to Halide's own pool. Built twice: here, and under
// ThreadSanitizer (tests/tsan), which checks the mailbox protocol.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <dirent.h>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using Task = int (*)(void *, int, uint8_t *);
using ParFor = int (*)(void *, Task, int, int, uint8_t *);

ParFor installed = nullptr;
std::atomic<int> halideThreads{2};
std::atomic<int> handedToHalide{0};

} // namespace

// What par_for.c needs from the Halide runtime.
extern "C" {
ParFor halide_set_custom_do_par_for(ParFor f) {
  ParFor old = installed;
  installed = f;
  return old;
}
int halide_default_do_par_for(void *user_context, Task f, int min, int size,
                              uint8_t *closure) {
  ++handedToHalide;
  for (int i = 0; i < size; ++i)
    if (int rc = f(user_context, min + i, closure))
      return rc;
  return 0;
}
int halide_get_num_threads(void) { return halideThreads.load(); }
}

namespace {

/// Threads of this process (one entry per thread in /proc/self/task).
int threadCount() {
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return -1;
  int n = 0;
  while (dirent *e = readdir(dir))
    if (e->d_name[0] != '.')
      ++n;
  closedir(dir);
  return n;
}

/// A loop's tasks count their runs and remember which threads ran them.
struct Loop {
  explicit Loop(int size) : runs(size) {}
  std::vector<std::atomic<int>> runs;
  std::mutex lock;
  std::set<std::thread::id> threads;
  std::chrono::microseconds work{0};
  int failAt = -1;

  static int task(void *, int index, uint8_t *closure) {
    Loop &loop = *reinterpret_cast<Loop *>(closure);
    if (loop.work.count() > 0) {
      auto end = std::chrono::steady_clock::now() + loop.work;
      while (std::chrono::steady_clock::now() < end) {
      }
    }
    ++loop.runs[index - kMin];
    {
      std::lock_guard<std::mutex> guard(loop.lock);
      loop.threads.insert(std::this_thread::get_id());
    }
    return index - kMin == loop.failAt ? -7 : 0;
  }

  int run() {
    for (auto &r : runs)
      r = 0;
    threads.clear();
    return installed(nullptr, task, kMin, static_cast<int>(runs.size()),
                     reinterpret_cast<uint8_t *>(this));
  }

  bool everyTaskOnce() const {
    for (const auto &r : runs)
      if (r.load() != 1)
        return false;
    return true;
  }

  static constexpr int kMin = 5; // loops need not start at 0
};

class ParForTest : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(installed, nullptr) << "par_for.c did not install its do_par_for";
    halideThreads = 2;
  }
};

TEST_F(ParForTest, EveryTaskRunsOnceOnAnyThreadCount) {
  for (int threads : {1, 2, 4})
    for (int size : {1, 2, 3, 7, 64, 1000}) {
      halideThreads = threads;
      Loop loop(size);
      // Enough calls for the pool to try both ways of running the loop.
      for (int call = 0; call < 80; ++call) {
        ASSERT_EQ(loop.run(), 0);
        ASSERT_TRUE(loop.everyTaskOnce())
            << "threads " << threads << ", size " << size << ", call " << call;
      }
    }
}

TEST_F(ParForTest, LongLoopsUseTheWorkers) {
  // Task 0 waits for task 1 to start, so a call finishes in time only if a
  // worker runs task 1 while the caller runs task 0 (a loaded machine may
  // be slow to give the worker a CPU; seconds, not microseconds). Then 2 ms
  // of work each keeps the loop far above what the pool tries alone.
  struct Rendezvous {
    std::atomic<bool> secondStarted{false};
    std::atomic<int> timedOut{0};
    std::thread::id second; // the thread that ran task 1
    static int task(void *, int index, uint8_t *closure) {
      Rendezvous &r = *reinterpret_cast<Rendezvous *>(closure);
      if (index == 1) {
        r.second = std::this_thread::get_id();
        r.secondStarted = true;
      }
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (index == 0 && !r.secondStarted)
        if (std::chrono::steady_clock::now() > deadline) {
          ++r.timedOut;
          break;
        }
      auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (std::chrono::steady_clock::now() < end) {
      }
      return 0;
    }
  };
  for (int call = 0; call < 5; ++call) {
    Rendezvous r;
    ASSERT_EQ(installed(nullptr, Rendezvous::task, 0, 2, reinterpret_cast<uint8_t *>(&r)), 0);
    EXPECT_EQ(r.timedOut.load(), 0) << "call " << call << ": task 1 never ran beside task 0";
    // (A worker that took its own task first may take task 0 as well.)
    EXPECT_NE(r.second, std::this_thread::get_id()) << "call " << call;
  }
}

TEST_F(ParForTest, TinyLoopsRunOnTheCaller) {
  // Four empty tasks: handing them to another thread costs more than
  // running them, and the pool measures that.
  Loop loop(4);
  int alone = 0;
  for (int call = 0; call < 200; ++call) {
    ASSERT_EQ(loop.run(), 0);
    ASSERT_TRUE(loop.everyTaskOnce());
    if (call >= 100)
      alone += loop.threads.size() == 1 && *loop.threads.begin() == std::this_thread::get_id();
  }
  EXPECT_GE(alone, 75) << "of the last 100 calls, those that ran alone";
}

TEST_F(ParForTest, AFailingTaskFailsTheLoop) {
  for (int threads : {1, 2}) {
    halideThreads = threads;
    for (int work : {0, 200}) {
      Loop loop(16);
      loop.failAt = 3;
      loop.work = std::chrono::microseconds(work);
      for (int call = 0; call < 20; ++call) {
        ASSERT_EQ(loop.run(), -7) << "threads " << threads << ", work " << work;
        EXPECT_EQ(loop.runs[3].load(), 1);
        for (const auto &r : loop.runs)
          EXPECT_LE(r.load(), 1);
      }
    }
  }
}

TEST_F(ParForTest, ANestedLoopGoesToHalide) {
  struct Outer {
    std::atomic<int> innerFailures{0};
    static int task(void *, int, uint8_t *closure) {
      Outer &outer = *reinterpret_cast<Outer *>(closure);
      Loop local(8);
      if (installed(nullptr, Loop::task, Loop::kMin, 8, reinterpret_cast<uint8_t *>(&local)) != 0 ||
          !local.everyTaskOnce())
        ++outer.innerFailures;
      return 0;
    }
  } outer;
  int before = handedToHalide.load();
  ASSERT_EQ(installed(nullptr, Outer::task, 0, 4, reinterpret_cast<uint8_t *>(&outer)), 0);
  EXPECT_EQ(outer.innerFailures.load(), 0);
  EXPECT_EQ(handedToHalide.load() - before, 4) << "each nested loop, to Halide's pool";
}

TEST_F(ParForTest, ConcurrentCallersEachGetTheirLoopDone) {
  std::atomic<int> wrong{0};
  auto caller = [&] {
    for (int call = 0; call < 300; ++call) {
      Loop loop(16);
      loop.work = std::chrono::microseconds(call % 3 == 0 ? 20 : 0);
      if (loop.run() != 0 || !loop.everyTaskOnce())
        ++wrong;
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(ParForTest, WorkersFollowTheThreadCount) {
  // The pool resizes on the first loop after the count changes, as after
  // attune_model_set_num_threads.
  Loop loop(8);
  halideThreads = 1;
  ASSERT_EQ(loop.run(), 0);
  int base = threadCount();
  for (int threads : {3, 1, 2, 4, 1}) {
    halideThreads = threads;
    ASSERT_EQ(loop.run(), 0);
    EXPECT_TRUE(loop.everyTaskOnce());
    EXPECT_EQ(threadCount(), base + threads - 1) << threads << " threads";
  }
}

} // namespace
