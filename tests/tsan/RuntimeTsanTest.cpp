//===- RuntimeTsanTest.cpp - the runtime under ThreadSanitizer ------------===//
//
// Runs the C runtime from many threads at once in a binary where the
// runtime's sources are compiled with -fsanitize=thread (CMakeLists.txt), so
// that a data race in the runtime's own code fails the ctest `runtime_tsan`
// (TSAN_OPTIONS=halt_on_error=1:exitcode=66). The models are
// examples/attention/attention_full.mlir compiled unfused (three kernels and
// a workspace that grows with the sequence) and fused.
//
// It uses the runtime only as attune/runtime.h allows: a handle is used by
// one thread at a time (each thread opens its own), separate handles of one
// library run concurrently, attune_model_set_num_threads on one handle runs
// while others of the same library run, and attune_model_isa, attune_cpu_isa
// and attune_host_isa are thread-safe, so a monitor thread calls them on
// handles that are running. Every output is compared bitwise with a run on a
// lone handle before any thread starts.
//
// Not instrumented, so not checked: the model libraries' code (Halide
// kernels, Halide's runtime and thread pool, the generated host code) and
// GoogleTest. ThreadSanitizer still sees their pthread calls, so the pool's
// threads and locks order the runtime's accesses correctly.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8;
constexpr int64_t kHeads = 12, kHeadDim = 64;
/// Sequence lengths the runs cycle through; each thread starts at another,
/// so handles grow their workspaces at different times.
constexpr int64_t kSeqs[] = {8, 24, 40};

const char *const kUnfused = ATTUNE_TSAN_UNFUSED_PATH;
const char *const kFused = ATTUNE_TSAN_FUSED_PATH;

/// q, k, v [1, 12, seq, 64] with fixed contents, and the output's buffer.
struct Problem {
  int64_t seq;
  std::vector<float> q, k, v, out;
  attune_tensor_t inputs[3];
  attune_tensor_t outputs[1];

  explicit Problem(int64_t seq) : seq(seq) {
    size_t n = static_cast<size_t>(kHeads * seq * kHeadDim);
    q.resize(n);
    k.resize(n);
    v.resize(n);
    out.assign(n, 0.0f);
    // Small values from a fixed LCG, so the softmax is not saturated.
    uint32_t state = static_cast<uint32_t>(seq) * 2654435761u;
    auto next = [&state] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / float(1u << 24) - 0.5f;
    };
    for (size_t i = 0; i < n; ++i) {
      q[i] = next();
      k[i] = next();
      v[i] = next();
    }
    std::vector<float> *data[] = {&q, &k, &v};
    for (int i = 0; i < 3; ++i)
      inputs[i] = tensor(data[i]->data());
    outputs[0] = tensor(out.data());
  }
  Problem(const Problem &) = delete;
  Problem &operator=(const Problem &) = delete;

  attune_tensor_t tensor(float *data) const {
    attune_tensor_t t{};
    t.data = data;
    t.dtype = ATTUNE_DTYPE_F32;
    t.rank = 4;
    t.shape[0] = 1;
    t.shape[1] = kHeads;
    t.shape[2] = seq;
    t.shape[3] = kHeadDim;
    return t;
  }

  attune_status_t run(attune_model_t *model) {
    std::fill(out.begin(), out.end(), 0.0f);
    return attune_model_run(model, inputs, 3, outputs, 1);
  }
};

/// The output of each library at each sequence length, from a lone handle.
const std::vector<float> &reference(const char *path, int64_t seq) {
  static std::map<std::pair<std::string, int64_t>, std::vector<float>> cache;
  auto key = std::make_pair(std::string(path), seq);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open(path, &model), ATTUNE_OK)
      << attune_status_message();
  Problem problem(seq);
  EXPECT_EQ(problem.run(model), ATTUNE_OK) << attune_status_message();
  attune_model_close(model);
  return cache[key] = problem.out;
}

/// Computes every reference before threads start: the cache is not shared.
void computeReferences() {
  for (int64_t seq : kSeqs) {
    reference(kUnfused, seq);
    reference(kFused, seq);
  }
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// One run on `model` at `seq`, checked against the reference of `path`.
void runAndCheck(attune_model_t *model, const char *path, int64_t seq,
                 int thread) {
  Problem problem(seq);
  ASSERT_EQ(problem.run(model), ATTUNE_OK)
      << "thread " << thread << ": " << attune_status_message();
  EXPECT_TRUE(sameBits(problem.out, reference(path, seq)))
      << "thread " << thread << ", seq " << seq << ", " << path;
}

/// The queries a thread may make on its own handle between runs; each reads
/// the descriptor and, for the shape queries, binds the symbols.
void queryOwnHandle(attune_model_t *model, int64_t seq, int thread) {
  Problem problem(seq);
  size_t bytes = 0;
  EXPECT_EQ(attune_model_workspace_size(model, problem.inputs, 3, &bytes),
            ATTUNE_OK)
      << attune_status_message();
  attune_tensor_t shape{};
  EXPECT_EQ(attune_model_output_shape(model, problem.inputs, 3, 0, &shape),
            ATTUNE_OK)
      << attune_status_message();
  EXPECT_EQ(shape.shape[2], seq);
  attune_tensor_info_t info{};
  EXPECT_EQ(attune_model_input_info(model, 0, &info), ATTUNE_OK);
  EXPECT_STREQ(info.name, "q");

  // A failed run, whose message is this thread's: each thread passes
  // another wrong head count, and another thread's failure at the same time
  // must not show through.
  problem.inputs[1].shape[1] = kHeads + 1 + thread;
  EXPECT_EQ(attune_model_run(model, problem.inputs, 3, problem.outputs, 1),
            ATTUNE_INVALID_ARGUMENT);
  std::string expected = "got " + std::to_string(kHeads + 1 + thread);
  EXPECT_NE(std::string(attune_status_message()).find(expected),
            std::string::npos)
      << "thread " << thread << ": " << attune_status_message();
}

/// 8 threads, each with its own handle of one library, 100 runs each at
/// cycling sequence lengths, with queries and a failing call between runs.
TEST(RuntimeTsan, HandlesOfOneLibraryRunConcurrently) {
  computeReferences();
  constexpr int kRuns = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      attune_model_t *model = nullptr;
      ASSERT_EQ(attune_model_open(kUnfused, &model), ATTUNE_OK)
          << attune_status_message();
      for (int r = 0; r < kRuns; ++r) {
        int64_t seq = kSeqs[(t + r) % std::size(kSeqs)];
        runAndCheck(model, kUnfused, seq, t);
        if (r % 4 == 0)
          queryOwnHandle(model, seq, t);
      }
      attune_model_close(model);
    });
  for (std::thread &thread : threads)
    thread.join();
}

/// 8 threads opening and closing handles of two libraries, one run per
/// handle: the libraries are loaded and unloaded as their last handle
/// closes, and the runtime's table of loaded libraries gains and drops
/// entries under contention. Opens of a missing file fail with this
/// thread's path in this thread's message.
TEST(RuntimeTsan, OpenAndCloseConcurrently) {
  computeReferences();
  constexpr int kOpens = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < kOpens; ++i) {
        const char *path = (t + i) % 2 ? kFused : kUnfused;
        attune_model_t *model = nullptr;
        ASSERT_EQ(attune_model_open(path, &model), ATTUNE_OK)
            << attune_status_message();
        EXPECT_STREQ(attune_model_name(model), "attention_full");
        runAndCheck(model, path, kSeqs[(t + i) % std::size(kSeqs)], t);
        attune_model_close(model);

        std::string missing = "/nonexistent/runtime_tsan_" +
                              std::to_string(t) + "_" + std::to_string(i) +
                              ".so";
        attune_model_t *none = nullptr;
        EXPECT_EQ(attune_model_open(missing.c_str(), &none), ATTUNE_NOT_FOUND);
        EXPECT_NE(std::string(attune_status_message()).find(missing),
                  std::string::npos)
            << attune_status_message();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
}

/// 6 threads running their own handles while a 7th sets the library's
/// thread count (which stops and restarts its pool, and waits for runs in
/// progress) and queries workspaces on its own handle, and an 8th asks every
/// running handle its ISA. Outputs do not depend on the thread count.
TEST(RuntimeTsan, SetNumThreadsWhileOtherHandlesRun) {
  computeReferences();
  constexpr int kRunners = kThreads - 2, kRuns = 60;
  std::vector<attune_model_t *> models(kRunners + 1, nullptr);
  for (attune_model_t *&model : models)
    ASSERT_EQ(attune_model_open(kUnfused, &model), ATTUNE_OK)
        << attune_status_message();

  std::atomic<int> running{kRunners};
  std::vector<std::thread> threads;
  for (int t = 0; t < kRunners; ++t)
    threads.emplace_back([t, &models, &running] {
      for (int r = 0; r < kRuns; ++r)
        runAndCheck(models[t], kUnfused, kSeqs[(t + r) % std::size(kSeqs)], t);
      running.fetch_sub(1);
    });
  // The setter: its own handle, used by this thread alone.
  threads.emplace_back([&models, &running] {
    attune_model_t *own = models[kRunners];
    const int32_t counts[] = {1, 2, 3, 0};
    // At least a few restarts of the pool, however soon the runners finish.
    for (int i = 0; i < 8 || running.load() > 0; ++i) {
      EXPECT_EQ(attune_model_set_num_threads(own, counts[i % 4]), ATTUNE_OK)
          << attune_status_message();
      int64_t seq = kSeqs[i % std::size(kSeqs)];
      Problem problem(seq);
      size_t bytes = 0;
      EXPECT_EQ(attune_model_workspace_size(own, problem.inputs, 3, &bytes),
                ATTUNE_OK)
          << attune_status_message();
      if (i % 3 == 0)
        runAndCheck(own, kUnfused, seq, kRunners);
    }
    EXPECT_EQ(attune_model_set_num_threads(own, 0), ATTUNE_OK);
  });
  // The monitor: only the functions runtime.h calls thread-safe.
  threads.emplace_back([&models, &running] {
    while (running.load() > 0) {
      for (attune_model_t *model : models) {
        attune_isa_t isa;
        EXPECT_EQ(attune_model_isa(model, &isa), ATTUNE_OK);
        EXPECT_LE(isa, attune_host_isa());
      }
      attune_isa_t cpu;
      EXPECT_EQ(attune_cpu_isa(&cpu), ATTUNE_OK);
      std::this_thread::yield();
    }
  });
  for (std::thread &thread : threads)
    thread.join();
  for (attune_model_t *model : models)
    attune_model_close(model);
}

} // namespace
