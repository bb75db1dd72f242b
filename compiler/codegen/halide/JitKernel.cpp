//===- JitKernel.cpp - a kernel compiled in process -----------------------===//

#include "compiler/codegen/halide/JitKernel.h"
#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/support/Threads.h"

#include <algorithm>
#include <atomic>
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

} // namespace
} // namespace attune::codegen

/// The parallel loop of the extern stages in runtime/model (extern_stage.h's
/// runTasks) in a process that JIT-compiles kernels, where the Halide
/// runtime's pool is not a symbol they can call: task(0 .. count-1) on the
/// caller and gExternThreads - 1 threads started for the loop (a few
/// microseconds each, nothing beside the kernels it runs). Without it a
/// JIT benchmark's two-thread rows ran the extern stages on one thread.
/// Returns 0 or a failed task's code.
extern "C" int attune_jit_par_for(int (*task)(void *, int, uint8_t *), int count,
                                  uint8_t *closure) {
  const int threads = std::min(attune::codegen::gExternThreads.load(), count);
  std::atomic<int> next{0}, failed{0};
  auto work = [&] {
    for (int i; (i = next.fetch_add(1)) < count;)
      if (int status = task(nullptr, i, closure))
        failed.store(status);
  };
  attune::runOnThreads(static_cast<unsigned>(std::max(threads, 0)), work);
  return failed.load();
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
