//===- Process.h - scratch directories and shell commands ------*- C++ -*-===//
//
// What the ahead-of-time paths of the code generator need from the system:
// a scratch directory that cleans up after itself, and a command run through
// /bin/sh with its output captured.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_PROCESS_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_PROCESS_H

#include <string>

namespace attune::codegen {

/// A fresh directory under the system's temporary directory, removed with
/// everything in it when this goes out of scope. `path` is empty when it
/// could not be created.
class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  std::string path;
};

/// `s` quoted for /bin/sh.
std::string shellQuote(const std::string &s);

/// Runs `command` through /bin/sh with stderr joined to stdout. Returns ""
/// on exit status 0, else a message that names `what`, the command and its
/// output.
std::string runShellCommand(const std::string &command, const std::string &what);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_PROCESS_H
