//===- ExternTasksTest.cpp - the JIT process's loop for extern stages -----===//
//
// detail::runExternTasks, what runtime/model's extern stages (the f32 linear
// and attention) run their tasks on in a process that JIT-compiles kernels:
// every task exactly once per loop, on the threads asked for, a failed
// task's code returned, and loops from two callers at once both complete
// (the second on threads of its own while the first holds the pool).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/JitKernel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using attune::codegen::detail::runExternTasks;

/// What a loop's tasks saw: how often each index ran, and on which threads.
struct Tally {
  explicit Tally(int count) : runs(count) {}
  std::vector<std::atomic<int>> runs;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  /// Set by a task that should wait for a second thread to join in.
  std::atomic<int> waitFor{0};
};

int countTask(void *, int index, uint8_t *closure) {
  auto *tally = reinterpret_cast<Tally *>(closure);
  tally->runs[index].fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(tally->mutex);
    tally->threads.insert(std::this_thread::get_id());
  }
  // Task 0 of a loop that wants it holds on until another thread has run
  // a task, so that the loop is seen to use more than one thread.
  if (index == 0 && tally->waitFor.load())
    for (int spins = 0; spins < 2000000; ++spins) {
      std::lock_guard<std::mutex> lock(tally->mutex);
      if (tally->threads.size() > 1)
        break;
    }
  return 0;
}

int failOnSeven(void *, int index, uint8_t *) { return index == 7 ? -42 : 0; }

TEST(ExternTasks, EveryTaskOnceAcrossManyLoops) {
  for (int threads : {1, 2, 3})
    for (int count : {0, 1, 2, 5, 64}) {
      for (int loop = 0; loop < 50; ++loop) {
        Tally tally(count);
        ASSERT_EQ(runExternTasks(threads, countTask, count,
                                 reinterpret_cast<uint8_t *>(&tally)),
                  0);
        for (int i = 0; i < count; ++i)
          ASSERT_EQ(tally.runs[i].load(), 1)
              << "task " << i << " of " << count << ", " << threads
              << " threads, loop " << loop;
        ASSERT_LE(static_cast<int>(tally.threads.size()), std::max(1, threads));
      }
    }
}

TEST(ExternTasks, UsesTheThreadsAskedFor) {
  Tally tally(16);
  tally.waitFor.store(1);
  ASSERT_EQ(
      runExternTasks(2, countTask, 16, reinterpret_cast<uint8_t *>(&tally)), 0);
  EXPECT_EQ(tally.threads.size(), 2u);
  Tally one(16);
  ASSERT_EQ(runExternTasks(1, countTask, 16, reinterpret_cast<uint8_t *>(&one)),
            0);
  EXPECT_EQ(one.threads.size(), 1u);
  EXPECT_EQ(*one.threads.begin(), std::this_thread::get_id());
}

TEST(ExternTasks, ReturnsAFailedTasksCode) {
  for (int threads : {1, 2})
    EXPECT_EQ(runExternTasks(threads, failOnSeven, 20, nullptr), -42)
        << threads << " threads";
  // The pool still runs loops after a failure.
  Tally tally(20);
  EXPECT_EQ(
      runExternTasks(2, countTask, 20, reinterpret_cast<uint8_t *>(&tally)), 0);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(tally.runs[i].load(), 1) << "task " << i;
}

TEST(ExternTasks, TwoCallersAtOnce) {
  std::atomic<int> wrong{0};
  auto caller = [&] {
    for (int loop = 0; loop < 200; ++loop) {
      Tally tally(33);
      if (runExternTasks(2, countTask, 33,
                         reinterpret_cast<uint8_t *>(&tally)) != 0)
        wrong.fetch_add(1);
      for (int i = 0; i < 33; ++i)
        if (tally.runs[i].load() != 1)
          wrong.fetch_add(1);
    }
  };
  std::thread other(caller);
  caller();
  other.join();
  EXPECT_EQ(wrong.load(), 0);
}

} // namespace
