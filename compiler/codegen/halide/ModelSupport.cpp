//===- ModelSupport.cpp - the C code every Halide library links -----------===//

#include "compiler/codegen/halide/ModelSupport.h"
#include "compiler/codegen/halide/Process.h"

#include <fstream>

namespace attune::codegen {

#include "ModelSupportSources.inc"

namespace {

std::string writeSource(const std::string &path, const char *text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out.flush() ? "" : "cannot write " + path;
}

} // namespace

std::string compileModelSupport(const std::string &directory, const std::string &object,
                                bool cuda) {
  // One translation unit including the files: one object to link. Each file
  // keeps its helpers static.
  const std::pair<std::string, const char *> files[] = {
      {"cuda_support.c", kCudaSupportSource},
      {"scratch_cache.c", kScratchCacheSource},
      {"par_for.c", kParForSource},
      {"extern_stage.h", kExternStageSource},
      {"amx_kernels.c", kAmxKernelsSource},
      {"attention_f32_isa.inc", kAttentionF32IsaSource},
      {"attention_f32_tile.inc", kAttentionF32TileSource},
      {"attention_f32.c", kAttentionF32Source},
      {"linear_f32.c", kLinearF32Source},
      {"model_support.c", "#define _GNU_SOURCE\n"
                          "#include \"scratch_cache.c\"\n"
                          "#include \"par_for.c\"\n"
                          "#include \"amx_kernels.c\"\n"
                          "#include \"attention_f32.c\"\n"
                          "#include \"linear_f32.c\"\n"}};
  const char *withCuda = "#include \"model_support.c\"\n"
                         "#include \"cuda_support.c\"\n";
  for (const auto &[name, text] : files)
    if (std::string error = writeSource(directory + "/" + name, text); !error.empty())
      return error;
  if (cuda)
    if (std::string error = writeSource(directory + "/model_support_cuda.c", withCuda);
        !error.empty())
      return error;
  std::string main = cuda ? "/model_support_cuda.c" : "/model_support.c";
  return runShellCommand("cc -c -O2 -fPIC -std=c11 " +
                             shellQuote(directory + main) + " -o " +
                             shellQuote(object),
                         "compiling the model support code (runtime/model)");
}

} // namespace attune::codegen
