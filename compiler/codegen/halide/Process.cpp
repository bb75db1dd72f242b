//===- Process.cpp - scratch directories and shell commands ---------------===//

#include "compiler/codegen/halide/Process.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace attune::codegen {

ScratchDir::ScratchDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "attune-kernel-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()))
    path = buffer.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path.empty())
    std::filesystem::remove_all(path, ignored);
}

std::string shellQuote(const std::string &s) {
  std::string quoted = "'";
  for (char c : s) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string runShellCommand(const std::string &command, const std::string &what) {
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return "cannot start " + what + " (" + command + ")";
  std::string output;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe))
    output.append(buffer, n);
  if (pclose(pipe) != 0)
    return what + " failed (" + command + "): " + output;
  return "";
}

} // namespace attune::codegen
