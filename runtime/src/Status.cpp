//===- Status.cpp - the runtime's per-thread status message ---------------===//

#include "runtime/src/Status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

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

attune_status_t kernelFailure(const attune_model_abi_t &abi, int32_t code) noexcept {
  // The kernel's own message, so the caller learns which buffer or bound
  // was wrong, not just a code; a trailing newline (some error handlers'
  // habit) would break the one-line status message.
  const char *text = abi.last_error();
  if (!text)
    text = "";
  size_t length = std::strlen(text);
  while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r'))
    --length;
  if (code == kExtentsTooLarge && length == 0)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': kernel error %d: the input shapes are too large for the "
                "library's 32-bit kernel extents (every shape symbol and buffer size must be "
                "at most 2^31-1 elements)",
                abi.name, code);
  return fail(ATTUNE_INTERNAL, "model '%s': kernel error %d%s%.*s", abi.name, code,
              length ? ": " : "", static_cast<int>(length), text);
}

} // namespace attune::runtime
