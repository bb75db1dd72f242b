//===- Status.cpp - the runtime's per-thread status message ---------------===//

#include "runtime/src/Status.h"

#include <cstdarg>
#include <cstdio>

namespace attune::runtime {
namespace {
/// A fixed buffer rather than a std::string: recording a failure must not
/// itself allocate, or an out-of-memory error could not be reported.
constexpr size_t kMessageCapacity = 2048;
thread_local char tlsMessage[kMessageCapacity] = "";
} // namespace

attune_status_t fail(attune_status_t status, const char *format, ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(tlsMessage, kMessageCapacity, format, args);
  va_end(args);
  return status;
}

const char *statusMessage() noexcept { return tlsMessage; }

} // namespace attune::runtime
