//===- Replay.cpp - run a fuzz target without libFuzzer -------------------===//
//
// The corpus loop and the JSON text mutations shared by the replay mains
// (see Replay.h).
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/Replay.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

namespace attune::fuzz {

void mutateJsonText(std::string &h, Random &rng,
                    const std::vector<std::string> &others) {
  static const char kPunctuation[] = "[]{}\",:\\-0123456789eE. u";
  static const char *const kNumbers[] = {"0",
                                         "-1",
                                         "18446744073709551615",
                                         "18446744073709551616",
                                         "9223372036854775807",
                                         "4294967296",
                                         "1e308",
                                         "1.5",
                                         "-0",
                                         "100000001"};
  size_t at = rng.below(h.size() + 1);
  switch (rng.below(9)) {
  case 0: // flip a bit
    if (!h.empty())
      h[rng.below(h.size())] ^= static_cast<char>(1u << rng.below(8));
    break;
  case 1: // set a byte to JSON punctuation
    if (!h.empty())
      h[rng.below(h.size())] =
          kPunctuation[rng.below(sizeof(kPunctuation) - 1)];
    break;
  case 2: // insert punctuation
    h.insert(at, 1, kPunctuation[rng.below(sizeof(kPunctuation) - 1)]);
    break;
  case 3: // delete a run
    h.erase(at, 1 + rng.below(8));
    break;
  case 4: // truncate
    h.resize(at);
    break;
  case 5: { // repeat a chunk right after itself: duplicate keys, entries
    size_t length =
        rng.below(std::min<size_t>(h.size() - std::min(at, h.size()), 256) + 1);
    h.insert(at + length, h.substr(at, length));
    break;
  }
  case 6: { // nest: wrap a chunk in many brackets
    size_t depth = rng.oneIn(2) ? 120 + rng.below(20) : rng.below(4096);
    char open = rng.oneIn(2) ? '[' : '{';
    h.insert(at, std::string(depth, open));
    break;
  }
  case 7: { // replace the first number after `at` with an extreme one
    size_t begin = h.find_first_of("0123456789", at);
    if (begin == std::string::npos)
      break;
    size_t end = h.find_first_not_of("0123456789", begin);
    if (end == std::string::npos)
      end = h.size();
    h.replace(begin, end - begin, kNumbers[rng.below(std::size(kNumbers))]);
    break;
  }
  case 8: { // splice in a chunk of another seed's text
    const std::string &other = others[rng.below(others.size())];
    if (other.empty())
      break;
    size_t from = rng.below(other.size());
    size_t length = 1 + rng.below(std::min<size_t>(other.size() - from, 128));
    h.replace(at, rng.below(64), other.substr(from, length));
    break;
  }
  }
}

namespace {

bool readFile(const std::string &path, std::string &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::fprintf(stderr, "cannot read '%s': %s\n", path.c_str(),
                 buffer.getError().message().c_str());
    return false;
  }
  out = (*buffer)->getBuffer().str();
  return true;
}

/// Runs one input from a heap copy of exactly its size, so that a read one
/// byte past the end is a heap overflow the address sanitizer reports.
/// Returns whether the target accepted it.
bool run(const std::string &input, const ReplayTarget &target) {
  std::vector<uint8_t> copy(input.begin(), input.end());
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
  return target.accepted(input);
}

} // namespace

int replayMain(int argc, char **argv, const ReplayTarget &target) {
  uint64_t mutations = 20000, seed = 1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--mutations=")) {
      if (arg.getAsInteger(10, mutations))
        return std::fprintf(stderr, "bad --mutations\n"), 2;
    } else if (arg.consume_front("--seed=")) {
      if (arg.getAsInteger(10, seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else {
      paths.push_back(arg.str());
    }
  }
  if (paths.empty())
    return std::fprintf(stderr,
                        "usage: %s [--mutations=N] [--seed=S] "
                        "PATH...\n",
                        argv[0]),
           2;

  // Folders are read in sorted order: the mutants depend on the seeds'
  // order, and directory order is the file system's whim.
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    if (!llvm::sys::fs::is_directory(path)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> inFolder;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        inFolder.push_back(it->path());
    if (ec)
      return std::fprintf(stderr, "cannot list '%s': %s\n", path.c_str(),
                          ec.message().c_str()),
             1;
    std::sort(inFolder.begin(), inFolder.end());
    files.insert(files.end(), inFolder.begin(), inFolder.end());
  }

  auto start = std::chrono::steady_clock::now();
  uint64_t accepted = 0;
  std::vector<std::string> seeds;
  for (const std::string &path : files) {
    std::string bytes;
    if (!readFile(path, bytes))
      return 1;
    accepted += run(bytes, target);
    seeds.push_back(std::move(bytes));
  }
  if (seeds.empty())
    return std::fprintf(stderr, "no seed files\n"), 1;

  target.prepare(seeds);
  Random rng(seed);
  for (uint64_t i = 0; i < mutations; ++i)
    accepted += run(target.mutate(rng), target);

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "%s fuzz replay: %zu seeds and %llu mutants (seed %llu), %llu "
      "of them %s, in %.2f s: no failure\n",
      target.name, seeds.size(), static_cast<unsigned long long>(mutations),
      static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(accepted), target.acceptedWhat, seconds);
  return 0;
}

} // namespace attune::fuzz
