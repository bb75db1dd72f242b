//===- ScopedEnv.h - an environment variable set for one scope -*- C++ -*-===//
//
// Tests that change ATTUNE_CPU (or any other variable) restore what was
// there, so that ctest's ATTUNE_CPU=avx2 run of a binary is not undone by
// one of its tests.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_SUPPORT_SCOPEDENV_H
#define ATTUNE_TESTS_SUPPORT_SCOPEDENV_H

#include <cstdlib>
#include <optional>
#include <string>

namespace attune::testing {

/// Sets `name` to `value` (nullptr: unsets it) until the end of the scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *current = std::getenv(name))
      old = current;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name;
  std::optional<std::string> old;
};

} // namespace attune::testing

#endif // ATTUNE_TESTS_SUPPORT_SCOPEDENV_H
