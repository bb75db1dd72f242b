//===- SafeTensorsReplay.cpp - the safetensors target without libFuzzer --===//
//
// Replay.h's driver with mutants of safetensors files: each seed is split
// where its header length says, the header text gets Replay's JSON
// mutations and the data section its own (cut, grown, a bit flipped), and
// the two are joined with a fresh length, so most mutants reach the JSON
// parser and the checks after it instead of all failing at the length
// check. One mutant in eight gets a length near the edges instead, and one
// in sixteen raw damage anywhere, the length bytes included.
//
// Usage: safetensors_fuzz_replay [--mutations=N] [--seed=S] PATH...
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"
#include "tests/fuzz/Replay.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using attune::fuzz::Random;

namespace {

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

/// A mutant of `seed`; `headers` are every seed's header, for splices.
std::string mutate(const Parts &seed, Random &rng,
                   const std::vector<std::string> &headers) {
  Parts parts = seed;
  for (size_t i = 0, n = 1 + rng.below(4); i < n; ++i) {
    if (rng.oneIn(5))
      mutateData(parts.data, rng);
    else
      attune::fuzz::mutateJsonText(parts.header, rng, headers);
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

} // namespace

int main(int argc, char **argv) {
  std::vector<Parts> seeds;
  std::vector<std::string> headers;
  attune::fuzz::ReplayTarget target;
  target.name = "safetensors";
  target.acceptedWhat = "valid files";
  target.prepare = [&](const std::vector<std::string> &files) {
    for (const std::string &file : files) {
      seeds.push_back(split(file));
      headers.push_back(seeds.back().header);
    }
  };
  target.mutate = [&](Random &rng) {
    return mutate(seeds[rng.below(seeds.size())], rng, headers);
  };
  target.accepted = [](const std::string &input) {
    llvm::Expected<attune::SafeTensorsView> view =
        attune::SafeTensorsView::parse(input.data(), input.size());
    if (view)
      return true;
    llvm::consumeError(view.takeError());
    return false;
  };
  return attune::fuzz::replayMain(argc, argv, target);
}
