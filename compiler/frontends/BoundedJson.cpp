//===- BoundedJson.cpp - JSON from files attune does not control ----------===//
//
// One pass over the bytes finds the nesting depth and the keys of every
// object before llvm::json::parse sees them. The scan does not validate: it
// only has to be right when the text is valid JSON, which the parse that
// follows decides, and to stay in bounds when it is not.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/BoundedJson.h"
#include "compiler/frontends/Support.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace attune;

namespace {

/// An array or object the scan is inside of.
struct Frame {
  bool isObject = false;
  /// True after '{' or ',' in an object: the next string is a key.
  bool expectKey = false;
  /// The object's keys so far, decoded, and the latest of them (the key of
  /// the value being scanned, so the path to a nested duplicate).
  llvm::StringSet<> keys;
  std::string lastKey;
};

/// The text of a JSON string literal (quotes included). Keys without escapes
/// are the bytes between the quotes; the others are decoded by the JSON
/// parser, which does not recurse for a string. An undecodable literal makes
/// the whole text invalid, so what it is compared as does not matter.
std::string decodeKey(llvm::StringRef literal) {
  llvm::StringRef inner = literal.drop_front().drop_back();
  if (!inner.contains('\\'))
    return inner.str();
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(literal);
  if (!value) {
    llvm::consumeError(value.takeError());
    return inner.str();
  }
  if (std::optional<llvm::StringRef> s = value->getAsString())
    return s->str();
  return inner.str();
}

} // namespace

llvm::Expected<llvm::json::Value>
attune::parseBoundedJson(llvm::StringRef text, unsigned maxDepth,
                         std::optional<JsonDuplicateKey> &duplicate) {
  duplicate.reset();
  std::vector<Frame> stack;
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    switch (c) {
    case '{':
    case '[':
      if (stack.size() >= maxDepth)
        return makeError(llvm::formatv("nests deeper than {0} arrays and "
                                       "objects (at byte {1})",
                                       maxDepth, i));
      stack.emplace_back();
      stack.back().isObject = c == '{';
      stack.back().expectKey = c == '{';
      ++i;
      break;
    case '}':
    case ']':
      // A mismatched bracket is the parser's to report.
      if (!stack.empty())
        stack.pop_back();
      ++i;
      break;
    case ',':
      if (!stack.empty() && stack.back().isObject)
        stack.back().expectKey = true;
      ++i;
      break;
    case '"': {
      // Skip the string: a quote after a backslash does not end it. An
      // unterminated string runs to the end, and the parser reports it.
      size_t begin = i++;
      while (i < n && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (i >= n) {
        i = n;
        break;
      }
      ++i;
      if (stack.empty() || !stack.back().isObject || !stack.back().expectKey)
        break;
      Frame &frame = stack.back();
      frame.expectKey = false;
      frame.lastKey = decodeKey(text.slice(begin, i));
      if (!duplicate && !frame.keys.insert(frame.lastKey).second) {
        JsonDuplicateKey found;
        for (size_t d = 0; d + 1 < stack.size(); ++d)
          if (stack[d].isObject)
            found.path.push_back(stack[d].lastKey);
        found.key = frame.lastKey;
        duplicate = std::move(found);
      }
      break;
    }
    default:
      ++i;
      break;
    }
  }

  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    duplicate.reset();
    return makeError("is not valid JSON: " + llvm::toString(value.takeError()));
  }
  return value;
}
