//===- ScratchCache.cpp - the scratch cache every Halide library links ----===//

#include "compiler/codegen/halide/ScratchCache.h"
#include "compiler/codegen/halide/Process.h"

#include <fstream>

namespace attune::codegen {

#include "ScratchCacheSource.inc"

const char *scratchCacheSource() { return kScratchCacheSource; }

std::string compileScratchCache(const std::string &directory,
                                const std::string &object) {
  const std::string source = directory + "/scratch_cache.c";
  {
    std::ofstream out(source, std::ios::binary);
    out << kScratchCacheSource;
    if (!out.flush())
      return "cannot write " + source;
  }
  return runShellCommand("cc -c -O2 -fPIC -std=c11 " + shellQuote(source) +
                             " -o " + shellQuote(object),
                         "compiling the scratch cache");
}

} // namespace attune::codegen
