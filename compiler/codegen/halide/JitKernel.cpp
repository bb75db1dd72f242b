//===- JitKernel.cpp - a kernel compiled in process -----------------------===//

#include "compiler/codegen/halide/JitKernel.h"

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

JitKernel::JitKernel(const KernelSpec &spec, const Halide::Target &target)
    : target(target), built(detail::buildKernel(spec, target)) {
  built.output.compile_jit(target);
}

void JitKernel::run(const std::vector<Halide::Buffer<>> &inputs,
                    Halide::Buffer<> out, bool singleThread) {
  for (size_t i = 0; i < inputs.size() && i < built.inputs.size(); ++i)
    built.inputs[i].set(inputs[i]);
  built.output.jit_handlers().custom_do_par_for =
      singleThread ? serialParFor : nullptr;
  built.output.realize(out, target);
}

void JitKernel::dump(const std::string &base) {
  std::vector<Halide::Argument> args(built.inputs.begin(), built.inputs.end());
  built.output.compile_to_assembly(base + ".s", args, target);
  built.output.compile_to_lowered_stmt(base + ".stmt", args, Halide::Text, target);
}

} // namespace attune::codegen
