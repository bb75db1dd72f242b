//===- Status.h - the runtime's per-thread status message -------*- C++ -*-===//
//
// Every C entry point that fails records a message for the calling thread and
// returns a status; attune_status_message() reads the message back.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_SRC_STATUS_H
#define ATTUNE_RUNTIME_SRC_STATUS_H

#include "attune/runtime.h"

namespace attune::runtime {

/// Records printf(`format`, ...) as this thread's message and returns
/// `status`. Never allocates, so an out-of-memory error can be reported.
__attribute__((format(printf, 2, 3))) attune_status_t
fail(attune_status_t status, const char *format, ...) noexcept;

/// This thread's last message ("" if none).
const char *statusMessage() noexcept;

/// Halide's error code for "extents multiply to more than 2^31-1", which a
/// generated run() returns, with no message of its own, when the shape
/// symbols would overflow a buffer's int32 fields (and workspace_size()
/// answers 0 for them).
constexpr int32_t kExtentsTooLarge = -6;

/// The status for a library's run() returning `code` (nonzero), with the
/// kernel's own message from abi.last_error().
attune_status_t kernelFailure(const attune_model_abi_t &abi, int32_t code) noexcept;

} // namespace attune::runtime

#endif // ATTUNE_RUNTIME_SRC_STATUS_H
