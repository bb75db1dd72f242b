//===- BoundedJson.h - JSON from files attune does not control --*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level and keeps one of two
// equal keys without a word. Both are wrong for a downloaded weights file: a
// header of a million '[' overflows the stack, and a tensor named twice is a
// broken checkpoint that must not bind whichever copy the parser kept. This
// parses with both guarded, for the safetensors header and the index of a
// sharded checkpoint alike.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_BOUNDEDJSON_H
#define ATTUNE_COMPILER_FRONTENDS_BOUNDEDJSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace attune {

/// A key that appears twice in one JSON object.
struct JsonDuplicateKey {
  /// The keys that lead from the root to the object holding the duplicate;
  /// empty when it is the root object. Arrays on the way add nothing.
  std::vector<std::string> path;
  std::string key;
};

/// Parses `text` after a scan, without recursion, has checked that no value
/// nests more than `maxDepth` arrays and objects deep. The error messages
/// read as a predicate of the text ("is not valid JSON: ...", "nests deeper
/// than ..."), for the caller to put its subject in front. A valid text with
/// a repeated key parses, and `duplicate` says which one came first in the
/// text; it is the caller's to report, in its own terms.
llvm::Expected<llvm::json::Value>
parseBoundedJson(llvm::StringRef text, unsigned maxDepth,
                 std::optional<JsonDuplicateKey> &duplicate);

} // namespace attune

#endif // ATTUNE_COMPILER_FRONTENDS_BOUNDEDJSON_H
