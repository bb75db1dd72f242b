//===- JitKernel.cpp - a kernel compiled in process -----------------------===//

#include "compiler/codegen/halide/JitKernel.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/support/Threads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

// runtime/model/amx_kernels.c and attention_f32.c, linked into this library.
extern "C" int attune_attention_bf16_amx(halide_buffer_t *q, halide_buffer_t *k, halide_buffer_t *v,
                                         halide_buffer_t *rope, halide_buffer_t *bias, float scale,
                                         int causal, int ropeDims, int ropeInterleaved,
                                         int ropeOffset, int biasTables, int keys, int deltaLo,
                                         int deltaHi, halide_buffer_t *out);
extern "C" int attune_attention_bf16_amx_padded(halide_buffer_t *q, halide_buffer_t *k,
                                                halide_buffer_t *v, halide_buffer_t *keyPadding,
                                                halide_buffer_t *rope, halide_buffer_t *bias,
                                                float scale, int causal, int ropeDims,
                                                int ropeInterleaved, int ropeOffset, int biasTables,
                                                int keys, int deltaLo, int deltaHi,
                                                halide_buffer_t *out);
extern "C" int attune_linear_bf16_amx(halide_buffer_t *x, halide_buffer_t *w,
                                      halide_buffer_t *out);
#define ATTUNE_FLASH_ENTRY(name)                                                                   \
  extern "C" int name(halide_buffer_t *q, halide_buffer_t *k, halide_buffer_t *v,                 \
                      halide_buffer_t *keyPadding, halide_buffer_t *rope, halide_buffer_t *bias,   \
                      halide_buffer_t *decoded, halide_buffer_t *content,                          \
                      halide_buffer_t *keyVectors, halide_buffer_t *valueTable, float scale,       \
                      int causal, int hasKeyPadding, int ropeDims, int ropeInterleaved,            \
                      int ropeOffset, int biasTables, int keys, int deltaLo, int deltaHi,          \
                      int keyBlock, int decodeRows, int contentTerms, int keySideTerms,            \
                      int contentSaturation, int hasKeyVectors, int valueK, halide_buffer_t *out);
ATTUNE_FLASH_ENTRY(attune_attention_f32_avx512)
ATTUNE_FLASH_ENTRY(attune_attention_f32_avx2)
#undef ATTUNE_FLASH_ENTRY
extern "C" int attune_linear_bf16_amx_bias(halide_buffer_t *x, halide_buffer_t *w,
                                           halide_buffer_t *bias, halide_buffer_t *out);
extern "C" int attune_linear_f32_avx512(halide_buffer_t *x, halide_buffer_t *w,
                                        halide_buffer_t *out);
extern "C" int attune_linear_f32_avx512_bias(halide_buffer_t *x, halide_buffer_t *w,
                                             halide_buffer_t *bias, halide_buffer_t *out);
extern "C" int attune_linear_f32_avx2(halide_buffer_t *x, halide_buffer_t *w,
                                      halide_buffer_t *out);
extern "C" int attune_linear_f32_avx2_bias(halide_buffer_t *x, halide_buffer_t *w,
                                           halide_buffer_t *bias, halide_buffer_t *out);

namespace attune::codegen {
namespace {

/// Threads the extern stages' tasks run on (attune_jit_par_for): those of
/// the last JitKernel::run, 1 when it ran single-threaded.
std::atomic<int> gExternThreads{1};

using ExternTask = int (*)(void *, int, uint8_t *);

/// Runs task(nullptr, i, closure) for each index i < `count` taken from
/// `next`, on however many threads call it; a failed task's code goes to
/// `failed` and the other tasks still run.
void takeTasks(ExternTask task, int count, uint8_t *closure,
               std::atomic<int> &next, std::atomic<int> &failed) {
  for (int i; (i = next.fetch_add(1)) < count;)
    if (int code = task(nullptr, i, closure))
      failed.store(code);
}

/// The workers attune_jit_par_for runs extern stages' tasks on, kept for
/// the process as the model libraries' pool is (runtime/model/par_for.c):
/// starting a thread per loop, as it first did, cost about as much as the
/// loop at the sizes of all-MiniLM-L6-v2's linears (128 x 384 x 384 took
/// 0.69 ms on two threads against 0.55 on one; AMD EPYC Zen 3), so the
/// kernel benchmarks' two-thread rows measured thread starts.
///
/// One loop at a time: the caller publishes it under the mutex with a new
/// generation, the first `helpers` workers each take tasks from its counter
/// until none are left, and the caller, having done the same, waits until
/// all of them are done. A worker spins for kSpin after a loop before it
/// sleeps, so that back-to-back loops (a benchmark's runs) do not wait for
/// a woken thread. Workers are started as loops first need them and live
/// until the process exits (the pool is never destroyed: no exit-time
/// join of a blocked worker).
class ExternPool {
public:
  /// Runs task(0 .. count - 1) on the caller and `threads` - 1 workers;
  /// false, running nothing, when another loop holds the pool (a second
  /// caller, or a loop started from one of its tasks).
  bool run(int threads, ExternTask task, int count, uint8_t *closure,
           int &status) {
    if (busy.exchange(true, std::memory_order_acquire))
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      while (static_cast<int>(workers.size()) < threads - 1) {
        const int index = static_cast<int>(workers.size());
        workers.emplace_back([this, index] { workerMain(index); });
      }
      loop = {task, count, closure};
      next.store(0);
      failed.store(0);
      finished = 0;
      helpers = threads - 1;
      generation.fetch_add(1, std::memory_order_release);
    }
    wake.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return finished == helpers; });
    status = failed.load();
    busy.store(false, std::memory_order_release);
    return true;
  }

private:
  struct Loop {
    ExternTask task = nullptr;
    int count = 0;
    uint8_t *closure = nullptr;
  };
  static constexpr std::chrono::microseconds kSpin{200};

  void drain() { takeTasks(loop.task, loop.count, loop.closure, next, failed); }

  void workerMain(int index) {
    uint64_t seen = 0;
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (generation.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return generation.load() != seen; });
      seen = generation.load();
      if (index >= helpers)
        continue; // not needed for this loop
      lock.unlock();
      drain();
      lock.lock();
      if (++finished == helpers)
        done.notify_one();
    }
  }

  std::atomic<bool> busy{false};
  std::mutex mutex;
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  std::atomic<uint64_t> generation{0};
  // The current loop: written under `mutex` before its generation, read by
  // its helpers after they have seen that generation.
  Loop loop;
  std::atomic<int> next{0}, failed{0};
  int finished = 0, helpers = 0; // guarded by `mutex`
};

} // namespace

int detail::runExternTasks(int threads, ExternTask task, int count,
                           uint8_t *closure) {
  threads = std::max(1, std::min(threads, count));
  static ExternPool *pool = new ExternPool; // never destroyed, see ExternPool
  int status = 0;
  if (threads > 1 && pool->run(threads, task, count, closure, status))
    return status;
  // On the caller alone, or (the pool busy) with threads started for it.
  std::atomic<int> next{0}, failed{0};
  runOnThreads(static_cast<unsigned>(threads),
               [&] { takeTasks(task, count, closure, next, failed); });
  return failed.load();
}

} // namespace attune::codegen

/// The parallel loop of the extern stages in runtime/model (extern_stage.h's
/// runTasks) in a process that JIT-compiles kernels, where the Halide
/// runtime's pool is not a symbol they can call: task(0 .. count-1) on the
/// caller and gExternThreads - 1 workers of ExternPool. Without it a JIT
/// benchmark's two-thread rows ran the extern stages on one thread.
/// Returns 0 or a failed task's code.
extern "C" int attune_jit_par_for(int (*task)(void *, int, uint8_t *),
                                  int count, uint8_t *closure) {
  return attune::codegen::detail::runExternTasks(
      attune::codegen::gExternThreads.load(), task, count, closure);
}

namespace attune::codegen {
namespace {

int serialParFor(Halide::JITUserContext *context,
                 int (*task)(Halide::JITUserContext *, int, uint8_t *), int min,
                 int extent, uint8_t *closure) {
  for (int i = min; i < min + extent; ++i)
    if (int status = task(context, i, closure))
      return status;
  return 0;
}

} // namespace

namespace detail {

Halide::Pipeline &BuiltKernel::jit() {
  if (!jitPipeline) {
    jitPipeline = Halide::Pipeline(output);
    // int f(args...): buffers are halide_buffer_t pointers.
    const Halide::Type buffer = Halide::type_of<halide_buffer_t *>();
    auto jitExtern = [](auto *function, std::vector<Halide::Type> args) {
      return Halide::JITExtern(Halide::ExternCFunction(
          reinterpret_cast<void *>(function),
          Halide::ExternSignature(Halide::Int(32), false, args)));
    };
    const Halide::Type f32 = Halide::Float(32), i32 = Halide::Int(32);
    const std::vector<Halide::Type> flashArgs = {
        buffer, buffer, buffer, buffer, buffer, buffer, buffer, buffer, buffer, buffer, f32, i32, i32,
        i32,    i32,    i32,    i32,    i32,    i32,    i32,    i32,    i32,    i32,    i32, i32, buffer};
    jitPipeline->set_jit_externs(
        {{kAmxAttentionSymbol,
          jitExtern(&attune_attention_bf16_amx, {buffer, buffer, buffer, buffer, buffer, f32, i32,
                                                 i32, i32, i32, i32, i32, i32, i32, buffer})},
         {kAmxPaddedAttentionSymbol, jitExtern(&attune_attention_bf16_amx_padded,
                                               {buffer, buffer, buffer, buffer, buffer, buffer, f32,
                                                i32, i32, i32, i32, i32, i32, i32, i32, buffer})},
         {kFlashAttentionAvx512Symbol, jitExtern(&attune_attention_f32_avx512, flashArgs)},
         {kFlashAttentionAvx2Symbol, jitExtern(&attune_attention_f32_avx2, flashArgs)},
         {kAmxLinearSymbol, jitExtern(&attune_linear_bf16_amx, {buffer, buffer, buffer})},
         {kAmxLinearBiasSymbol,
          jitExtern(&attune_linear_bf16_amx_bias, {buffer, buffer, buffer, buffer})},
         {kLinearF32Avx512Symbol, jitExtern(&attune_linear_f32_avx512, {buffer, buffer, buffer})},
         {kLinearF32Avx512BiasSymbol,
          jitExtern(&attune_linear_f32_avx512_bias, {buffer, buffer, buffer, buffer})},
         {kLinearF32Avx2Symbol, jitExtern(&attune_linear_f32_avx2, {buffer, buffer, buffer})},
         {kLinearF32Avx2BiasSymbol,
          jitExtern(&attune_linear_f32_avx2_bias, {buffer, buffer, buffer, buffer})}});
  }
  return *jitPipeline;
}

} // namespace detail

JitKernel::JitKernel(const KernelSpec &spec, const Halide::Target &target)
    : target(target), built(detail::buildKernel(spec, target)) {
  built.jit().compile_jit(target);
}

void JitKernel::run(const std::vector<Halide::Buffer<>> &inputs,
                    Halide::Buffer<> out, bool singleThread) {
  for (size_t i = 0; i < inputs.size() && i < built.inputs.size(); ++i)
    built.inputs[i].set(inputs[i]);
  built.jit().jit_handlers().custom_do_par_for = singleThread ? serialParFor : nullptr;
  gExternThreads.store(singleThread ? 1 : Halide::Internal::JITSharedRuntime::get_num_threads());
  built.jit().realize(out, target);
}

void JitKernel::dump(const std::string &base) {
  std::vector<Halide::Argument> args(built.inputs.begin(), built.inputs.end());
  built.output.compile_to_assembly(base + ".s", args, target);
  built.output.compile_to_lowered_stmt(base + ".stmt", args, Halide::Text, target);
}

} // namespace attune::codegen
