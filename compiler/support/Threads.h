//===- Threads.h - one piece of work on several threads ---------*- C++ -*-===//
//
// The idiom the compiler's parallel loops share: the caller and `threads`
// - 1 helpers started for the loop each run `work`, which takes items from
// a counter of its own until none are left; the call returns once all
// have finished. Header-only and dependency-free, like the rest of
// compiler/support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_THREADS_H
#define ATTUNE_COMPILER_SUPPORT_THREADS_H

#include <thread>
#include <vector>

namespace attune {

/// Runs `work` on the calling thread and on `threads` - 1 more (none when
/// `threads` <= 1), and joins them.
template <typename Work> void runOnThreads(unsigned threads, const Work &work) {
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t)
    helpers.emplace_back(work);
  work();
  for (std::thread &helper : helpers)
    helper.join();
}

} // namespace attune

#endif // ATTUNE_COMPILER_SUPPORT_THREADS_H
