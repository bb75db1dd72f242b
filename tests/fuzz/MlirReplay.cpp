//===- MlirReplay.cpp - the .mlir target without libFuzzer ----------------===//
//
// Replay.h's driver with mutants of tfm IR text. Byte damage almost never
// gets past the parser, and the passes only see IR that verifies, so most
// mutants are edited as IR tokens instead, one to three edits each:
//  - consistent edits, which keep the types of a graph agreeing and so
//    often still verify: every occurrence of one integer (a head count, a
//    width, a shape dimension) replaced by another or by an edge value (0,
//    1, 2^31, 2^62, ...), every occurrence of an element type replaced by
//    another, every `?` by a number or one number by `?`;
//  - local edits: one integer, one op name (another tfm op), one element
//    type, one SSA value (another of the file's), one keyword of an enum
//    attribute (layouts, activations, predicates, booleans) replaced, a line
//    deleted, repeated, swapped with the next or taken from another seed;
//  - one mutant in six gets Replay's text mutations (punctuation, cuts,
//    nesting, splices) instead.
//
// Usage: mlir_fuzz_replay [--mutations=N] [--seed=S] PATH...
// ATTUNE_FUZZ_SHOW_INPUT=1 prints the failing input with the failure.
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/Replay.h"

#include <cctype>
#include <cstring>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using attune::fuzz::Random;

namespace attune::fuzz {
extern bool lastMlirVerified; // MlirFuzzer.cpp
} // namespace attune::fuzz

namespace {

/// The tfm ops the seeds use, and upstream ops of the dialects registered.
const char *const kOps[] = {
    "tfm.reshape",     "tfm.transpose",    "tfm.attention",
    "tfm.matmul",      "tfm.weight",       "tfm.linear",
    "tfm.add",         "tfm.mul",          "tfm.compare",
    "tfm.softmax",     "tfm.cast",         "tfm.div",
    "tfm.where",       "tfm.arange",       "tfm.slice",
    "tfm.gather_elements", "tfm.layer_norm", "tfm.rope",
    "tfm.minimum",     "tfm.expand",       "tfm.neg",
    "tfm.concat",      "tfm.maximum",      "tfm.log",
    "tfm.embedding",   "tfm.sub",          "tfm.score_bias",
    "tfm.causal_mask", "tfm.abs",          "tfm.gelu",
    "tfm.repeat_interleave", "tfm.relu",   "tfm.cos",
    "tfm.sign",        "tfm.recursive_position", "tfm.ceil",
    "tfm.sin",         "tfm.multiplicative_position", "tfm.rms_norm",
    "tfm.learned_position", "tfm.score_values", "tfm.complex_linear",
    "tfm.complex_embedding", "tfm.silu",   "tfm.sinusoidal_position",
    "arith.constant",  "arith.addf",       "arith.mulf",
    "func.return",     "func.call"};

const char *const kElementTypes[] = {"f32", "f16", "bf16", "f64", "i64",
                                     "i32", "i8",  "i1",   "ui8", "index"};

/// Keywords of the tfm enums and the booleans, swapped within a group.
const std::vector<std::vector<const char *>> kKeywordGroups = {
    {"bshd", "bhsd"},
    {"none", "relu", "gelu", "gelu_tanh", "silu", "tanh"},
    {"lt", "le", "gt", "ge", "eq", "ne"},
    {"normal", "ones", "zeros"},
    {"interleaved", "concat"},
    {"true", "false"},
    {"causal", "bidirectional", "transpose_a", "transpose_b", "interleaved"}};

const char *const kNumbers[] = {"0",          "1",
                                "2",          "3",
                                "-1",         "-2",
                                "7",          "64",
                                "65536",      "2147483647",
                                "2147483648", "4294967296",
                                "4611686018427387904",
                                "9223372036854775807",
                                "9223372036854775808"};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}

/// The integer tokens of `text` (maximal digit runs not inside a word, so
/// `f32` and `%0` are skipped, and not after a '.', so floats stay whole):
/// offsets and lengths.
std::vector<std::pair<size_t, size_t>> integers(const std::string &text) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    char before = i ? text[i - 1] : ' ';
    bool inWord = std::isalpha(static_cast<unsigned char>(before)) ||
                  before == '_' || before == '%' || before == '.' ||
                  before == '#' || before == '@' || before == '^';
    if (!inWord)
      out.emplace_back(i, end - i);
    i = end;
  }
  return out;
}

/// Offsets of every whole-word occurrence of `word` in `text`.
std::vector<size_t> occurrences(const std::string &text,
                                const std::string &word) {
  std::vector<size_t> out;
  for (size_t at = text.find(word); at != std::string::npos;
       at = text.find(word, at + 1)) {
    bool startOk = at == 0 || !isWordChar(text[at - 1]);
    size_t end = at + word.size();
    // A type may be followed by 'x' (f32 in 2x4xf32 precedes '>', but a dim
    // precedes 'x'); words end at anything not part of an identifier.
    bool endOk = end == text.size() || !isWordChar(text[end]);
    if (startOk && endOk)
      out.push_back(at);
  }
  return out;
}

/// Replaces every whole-word `from` by `to`.
void replaceAll(std::string &text, const std::string &from,
                const std::string &to) {
  std::vector<size_t> at = occurrences(text, from);
  for (auto it = at.rbegin(); it != at.rend(); ++it)
    text.replace(*it, from.size(), to);
}

/// Integers inside shapes are delimited by 'x' ("2x4xf32"), which makes
/// them part of a word to occurrences(); this replaces every integer token
/// equal to `from`.
void replaceAllIntegers(std::string &text, const std::string &from,
                        const std::string &to) {
  std::vector<std::pair<size_t, size_t>> tokens = integers(text);
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it)
    if (text.compare(it->first, it->second, from) == 0)
      text.replace(it->first, it->second, to);
}

/// The SSA names of `text` ("%0", "%q", "%arg1").
std::vector<std::string> ssaNames(const std::string &text) {
  std::vector<std::string> out;
  for (size_t at = text.find('%'); at != std::string::npos;
       at = text.find('%', at + 1)) {
    size_t end = at + 1;
    while (end < text.size() && (isWordChar(text[end]) && text[end] != '-'))
      ++end;
    if (end > at + 1)
      out.push_back(text.substr(at, end - at));
  }
  return out;
}

/// The line boundaries of `text`: (offset, length with its newline).
std::vector<std::pair<size_t, size_t>> lines(const std::string &text) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out.emplace_back(at, end - at);
    at = end;
  }
  return out;
}

std::string pickNumber(Random &rng, const std::string &text) {
  if (rng.oneIn(3)) {
    // Another number of the same file: a width where a head count was.
    auto tokens = integers(text);
    if (!tokens.empty()) {
      auto [at, n] = tokens[rng.below(tokens.size())];
      return text.substr(at, n);
    }
  }
  return kNumbers[rng.below(std::size(kNumbers))];
}

/// One structured edit of `t`; `seeds` for lines from other files.
void mutateIr(std::string &t, Random &rng,
              const std::vector<std::string> &seeds) {
  switch (rng.below(11)) {
  case 0: { // every occurrence of one integer
    auto tokens = integers(t);
    if (tokens.empty())
      break;
    auto [at, n] = tokens[rng.below(tokens.size())];
    replaceAllIntegers(t, t.substr(at, n), pickNumber(rng, t));
    break;
  }
  case 1: { // one integer
    auto tokens = integers(t);
    if (tokens.empty())
      break;
    auto [at, n] = tokens[rng.below(tokens.size())];
    t.replace(at, n, pickNumber(rng, t));
    break;
  }
  case 2: { // every occurrence of an element type
    const char *from = kElementTypes[rng.below(std::size(kElementTypes))];
    const char *to = kElementTypes[rng.below(std::size(kElementTypes))];
    replaceAll(t, from, to);
    // Inside shapes the type follows an 'x': "2x4xf32".
    std::string xfrom = std::string("x") + from, xto = std::string("x") + to;
    for (size_t at = t.find(xfrom); at != std::string::npos;
         at = t.find(xfrom, at + xto.size()))
      t.replace(at, xfrom.size(), xto);
    break;
  }
  case 3: { // one element type
    const char *from = kElementTypes[rng.below(std::size(kElementTypes))];
    size_t at = t.find(from, rng.below(t.size() + 1));
    if (at != std::string::npos)
      t.replace(at, std::strlen(from),
                kElementTypes[rng.below(std::size(kElementTypes))]);
    break;
  }
  case 4: { // dynamic and static dimensions
    if (rng.oneIn(2)) {
      size_t at = t.find('?', rng.below(t.size() + 1));
      if (at == std::string::npos)
        at = t.find('?');
      if (at == std::string::npos)
        break;
      t.replace(at, 1, pickNumber(rng, t));
    } else {
      size_t at = t.find("x", rng.below(t.size() + 1));
      // A dimension: digits right before an 'x' inside a shape.
      if (at == std::string::npos || at == 0 ||
          !std::isdigit(static_cast<unsigned char>(t[at - 1])))
        break;
      size_t begin = at;
      while (begin > 0 && std::isdigit(static_cast<unsigned char>(t[begin - 1])))
        --begin;
      t.replace(begin, at - begin, "?");
    }
    break;
  }
  case 5: { // one op name for another
    size_t at = t.find("tfm.", rng.below(t.size() + 1));
    if (at == std::string::npos)
      at = t.find("tfm.");
    if (at == std::string::npos)
      break;
    size_t end = at + 4;
    while (end < t.size() && (std::isalnum(static_cast<unsigned char>(t[end])) ||
                              t[end] == '_'))
      ++end;
    t.replace(at, end - at, kOps[rng.below(std::size(kOps))]);
    break;
  }
  case 6: { // one SSA use for another value of the file
    std::vector<std::string> names = ssaNames(t);
    if (names.size() < 2)
      break;
    const std::string &from = names[rng.below(names.size())];
    const std::string &to = names[rng.below(names.size())];
    std::vector<size_t> at = occurrences(t, from);
    if (!at.empty())
      t.replace(at[rng.below(at.size())], from.size(), to);
    break;
  }
  case 7: { // an enum keyword or boolean for another of its group
    const auto &group = kKeywordGroups[rng.below(kKeywordGroups.size())];
    std::string from = group[rng.below(group.size())];
    std::vector<size_t> at = occurrences(t, from);
    if (!at.empty())
      t.replace(at[rng.below(at.size())], from.size(),
                group[rng.below(group.size())]);
    break;
  }
  case 8: { // delete a line
    auto ls = lines(t);
    if (ls.empty())
      break;
    auto [at, n] = ls[rng.below(ls.size())];
    t.erase(at, n);
    break;
  }
  case 9: { // repeat a line, or swap it with the next
    auto ls = lines(t);
    if (ls.size() < 2)
      break;
    size_t i = rng.below(ls.size() - 1);
    std::string line = t.substr(ls[i].first, ls[i].second);
    if (rng.oneIn(2)) {
      t.insert(ls[i].first, line);
    } else {
      std::string next = t.substr(ls[i + 1].first, ls[i + 1].second);
      t.replace(ls[i].first, ls[i].second + ls[i + 1].second, next + line);
    }
    break;
  }
  case 10: { // a line of another seed
    const std::string &other = seeds[rng.below(seeds.size())];
    auto theirs = lines(other), ours = lines(t);
    if (theirs.empty())
      break;
    auto [from, n] = theirs[rng.below(theirs.size())];
    size_t at = ours.empty() ? 0 : ours[rng.below(ours.size())].first;
    t.insert(at, other.substr(from, n));
    break;
  }
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> seeds;
  attune::fuzz::ReplayTarget target;
  target.name = "mlir";
  target.acceptedWhat = "verified and run through the pipeline";
  target.prepare = [&](const std::vector<std::string> &files) { seeds = files; };
  target.mutate = [&](Random &rng) {
    std::string t = seeds[rng.below(seeds.size())];
    if (rng.oneIn(6)) {
      for (size_t i = 0, n = 1 + rng.below(3); i < n; ++i)
        attune::fuzz::mutateJsonText(t, rng, seeds);
      return t;
    }
    for (size_t i = 0, n = 1 + rng.below(3); i < n; ++i)
      mutateIr(t, rng, seeds);
    return t;
  };
  target.accepted = [](const std::string &) {
    return attune::fuzz::lastMlirVerified;
  };
  return attune::fuzz::replayMain(argc, argv, target);
}
