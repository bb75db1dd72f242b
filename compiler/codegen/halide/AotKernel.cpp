//===- AotKernel.cpp - a kernel compiled ahead of time, run in process ----===//

#include "compiler/codegen/halide/AotKernel.h"
#include "compiler/codegen/halide/Process.h"
#include "compiler/codegen/halide/ModelSupport.h"

#include <dlfcn.h>
#include <mutex>
#include <stdexcept>

namespace attune::codegen {

namespace {

/// The support code every model library links (ModelSupport.h), compiled
/// once per process into a directory that lives as long: the same object
/// serves every kernel, and compiling it (the attention extern stages for
/// every ISA and tile height) takes longer than many kernels do.
const std::string &supportObject() {
  static ScratchDir dir;
  static std::string object, error;
  static std::once_flag once;
  std::call_once(once, [] {
    if (dir.path.empty()) {
      error = "cannot create a scratch directory for the model support code";
      return;
    }
    object = dir.path + "/model_support.o";
    error = compileModelSupport(dir.path, object);
  });
  if (!error.empty())
    throw std::runtime_error(error);
  return object;
}

} // namespace

AotKernel::AotKernel(const KernelSpec &spec, const Halide::Target &target)
    : name(spec.symbolName()) {
  detail::BuiltKernel built = detail::buildKernel(spec, target);
  std::vector<Halide::Argument> args(built.inputs.begin(), built.inputs.end());

  ScratchDir scratch;
  if (scratch.path.empty())
    throw std::runtime_error("cannot create a scratch directory for " + name);
  const std::string object = scratch.path + "/" + name + ".o";
  const std::string library = scratch.path + "/" + name + ".so";
  // With the runtime (no NoRuntime feature): the shared object is a small
  // library of its own, with its own thread pool.
  Halide::Pipeline(built.output).compile_to_object(object, args, name, target);
  // With the support code every model library links (the scratch cache, the
  // AMX attention), so that a kernel is timed as it runs there. -Bsymbolic: the object's calls into its runtime
  // stay inside it, even if the process has another halide_* (libHalide's,
  // another kernel's).
  const std::string &support = supportObject();
  if (std::string error = runShellCommand(
          "cc -shared -Wl,-Bsymbolic -o " + shellQuote(library) + " " +
              shellQuote(object) + " " + shellQuote(support) + " -lpthread -ldl -lm",
          "linking kernel " + name);
      !error.empty())
    throw std::runtime_error(error);
  // The file can go once it is mapped.
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error("cannot load kernel " + name + ": " + dlerror());
  // Halide's ahead-of-time objects define `<name>_argv(void **args)`: one
  // pointer per argument, halide_buffer_t * for buffers.
  entry = reinterpret_cast<int (*)(void **)>(dlsym(handle, (name + "_argv").c_str()));
  setNumThreads =
      reinterpret_cast<int (*)(int)>(dlsym(handle, "halide_set_num_threads"));
  if (!entry || !setNumThreads) {
    dlclose(handle);
    throw std::runtime_error("kernel " + name + " has no " +
                             (entry ? "halide_set_num_threads" : name + "_argv"));
  }
}

AotKernel::~AotKernel() {
  if (!handle)
    return;
  // The runtime's thread pool must be gone before its code is unmapped.
  if (auto shutdown = reinterpret_cast<void (*)()>(
          dlsym(handle, "halide_shutdown_thread_pool")))
    shutdown();
  dlclose(handle);
}

void AotKernel::run(const std::vector<Halide::Buffer<>> &inputs,
                    Halide::Buffer<> out, bool singleThread) {
  // Halide reads 0 as its default: HL_NUM_THREADS, else one per core.
  const int wanted = singleThread ? 1 : 0;
  if (wanted != threads) {
    setNumThreads(wanted);
    threads = wanted;
  }
  std::vector<void *> args;
  for (const Halide::Buffer<> &input : inputs)
    args.push_back(const_cast<halide_buffer_t *>(input.raw_buffer()));
  args.push_back(out.raw_buffer());
  if (int status = entry(args.data()))
    throw std::runtime_error("kernel " + name + " returned error " +
                             std::to_string(status));
}

} // namespace attune::codegen
