//===- ReplayMain.cpp - run a fuzz target without libFuzzer --------------===//
//
// libFuzzer needs clang, and the project builds with g++; this main runs the
// same LLVMFuzzerTestOneInput under any compiler, so the target is built and
// exercised by every `ctest`. It runs each seed of a corpus, then a fixed
// number of mutants of the seeds, drawn from a seeded generator so that a
// failure reproduces exactly: bit flips, bytes set to JSON's punctuation,
// truncations, splices between seeds, chunks of header repeated (duplicate
// keys) or nested (deep headers), numbers replaced by extreme ones, and the
// header length set to values near the edges. Most mutants keep the header
// length consistent with the mutated header, so they reach the JSON parser
// and the checks after it instead of all failing at the length check.
//
// Usage: safetensors_fuzz_replay [--mutations=N] [--seed=S] PATH...
// where each PATH is a seed file or a folder of them (a libFuzzer crash
// artifact given as a PATH is replayed as it is).
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

/// splitmix64: fully specified, so a seed means the same mutants everywhere.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); 0 when n is 0.
  size_t below(size_t n) { return n ? next() % n : 0; }
  bool oneIn(unsigned n) { return below(n) == 0; }

private:
  uint64_t state;
};

/// A seed split where its header length says: the mutators work on the
/// header text and the data separately and join them with a fresh length.
struct Parts {
  std::string header, data;
};

Parts split(const std::string &file) {
  Parts parts;
  if (file.size() < 8) {
    parts.data = file;
    return parts;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>(file[i]);
  n = std::min<uint64_t>(n, file.size() - 8);
  parts.header = file.substr(8, n);
  parts.data = file.substr(8 + n);
  return parts;
}

std::string join(const Parts &parts, uint64_t length) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return out + parts.header + parts.data;
}

/// One change to the header text.
void mutateHeader(std::string &h, Random &rng,
                  const std::vector<Parts> &seeds) {
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
  case 8: { // splice in a chunk of another seed's header
    const std::string &other = seeds[rng.below(seeds.size())].header;
    if (other.empty())
      break;
    size_t from = rng.below(other.size());
    size_t length = 1 + rng.below(std::min<size_t>(other.size() - from, 128));
    h.replace(at, rng.below(64), other.substr(from, length));
    break;
  }
  }
}

/// One change to the data section: its size is what the offsets are
/// checked against.
void mutateData(std::string &d, Random &rng) {
  switch (rng.below(3)) {
  case 0:
    d.resize(rng.below(d.size() + 1));
    break;
  case 1:
    d.append(1 + rng.below(64), static_cast<char>(rng.next()));
    break;
  case 2:
    if (!d.empty())
      d[rng.below(d.size())] ^= static_cast<char>(1u << rng.below(8));
    break;
  }
}

/// A mutant of `seed`.
std::string mutate(const Parts &seed, Random &rng,
                   const std::vector<Parts> &seeds) {
  Parts parts = seed;
  for (size_t i = 0, n = 1 + rng.below(4); i < n; ++i) {
    if (rng.oneIn(5))
      mutateData(parts.data, rng);
    else
      mutateHeader(parts.header, rng, seeds);
  }
  uint64_t length = parts.header.size();
  if (rng.oneIn(8)) {
    const uint64_t kLengths[] = {0,
                                 1,
                                 length - 1,
                                 length + 1,
                                 length + parts.data.size(),
                                 length + parts.data.size() + 1,
                                 100000000,
                                 100000001,
                                 1ULL << 63,
                                 ~0ULL};
    length = kLengths[rng.below(std::size(kLengths))];
  }
  std::string file = join(parts, length);
  if (rng.oneIn(16)) // raw damage, anywhere, the length bytes included
    file[rng.below(file.size())] ^= static_cast<char>(1u << rng.below(8));
  return file;
}

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

/// Inputs that parsed, to show the mutants reach past the first checks.
uint64_t parsedInputs = 0;

/// Runs one input from a heap copy of exactly its size, so that a read one
/// byte past the end is a heap overflow the address sanitizer reports.
void run(const std::string &input) {
  std::vector<uint8_t> copy(input.begin(), input.end());
  const uint8_t *data = copy.empty() ? nullptr : copy.data();
  LLVMFuzzerTestOneInput(data, copy.size());
  llvm::Expected<attune::SafeTensorsView> view =
      attune::SafeTensorsView::parse(data, copy.size());
  if (view)
    ++parsedInputs;
  else
    llvm::consumeError(view.takeError());
}

} // namespace

int main(int argc, char **argv) {
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
  std::vector<Parts> seeds;
  for (const std::string &path : files) {
    std::string bytes;
    if (!readFile(path, bytes))
      return 1;
    run(bytes);
    seeds.push_back(split(bytes));
  }
  if (seeds.empty())
    return std::fprintf(stderr, "no seed files\n"), 1;

  Random rng(seed);
  for (uint64_t i = 0; i < mutations; ++i)
    run(mutate(seeds[rng.below(seeds.size())], rng, seeds));

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("safetensors fuzz replay: %zu seeds and %llu mutants (seed "
              "%llu), %llu of them valid files, in %.2f s: no failure\n",
              seeds.size(), static_cast<unsigned long long>(mutations),
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(parsedInputs), seconds);
  return 0;
}
