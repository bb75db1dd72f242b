//===- Replay.h - run a fuzz target without libFuzzer -----------*- C++ -*-===//
//
// libFuzzer needs clang, and the project builds with g++; a replay driver
// runs the same LLVMFuzzerTestOneInput under any compiler, so every target
// is built and exercised by every `ctest`. It runs each seed of a corpus,
// then a fixed number of mutants of the seeds drawn from a seeded generator,
// so that a failure reproduces exactly. The loop, the generator and the
// mutations of JSON text live here; each target's replay main says how its
// inputs are mutated (SafeTensorsReplay.cpp, HfConfigReplay.cpp).
//
// Usage of every replay main: NAME [--mutations=N] [--seed=S] PATH...
// where each PATH is a seed file or a folder of them (a libFuzzer crash
// artifact given as a PATH is replayed as it is).
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_FUZZ_REPLAY_H
#define ATTUNE_TESTS_FUZZ_REPLAY_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace attune::fuzz {

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

/// One change to JSON text: a bit flip, a byte set to or inserted as JSON
/// punctuation, a run deleted, a cut, a chunk repeated right after itself
/// (duplicate keys), a chunk wrapped in many brackets (deep nesting), the
/// first number after a point replaced by an extreme one, or a chunk of one
/// of `others` spliced in.
void mutateJsonText(std::string &text, Random &rng,
                    const std::vector<std::string> &others);

/// What a replay main tells the driver about its target.
struct ReplayTarget {
  /// For messages: "safetensors", "hf_config".
  const char *name;
  /// Called once with every seed, in the order they were read, before any
  /// mutant is drawn.
  std::function<void(const std::vector<std::string> &seeds)> prepare;
  /// A mutant; picks its seed with `rng` too.
  std::function<std::string(Random &rng)> mutate;
  /// Whether the target accepted `input`, the input just run (a file that
  /// parsed, a config that imported). Counted, to show the mutants reach
  /// past the first checks.
  std::function<bool(const std::string &input)> accepted;
  /// What an accepted input is called in the summary: "valid files".
  const char *acceptedWhat;
};

/// Parses the command line, runs the seeds and the mutants through
/// LLVMFuzzerTestOneInput and prints a one-line summary. Returns main's
/// exit code; a failing input aborts inside the target instead.
int replayMain(int argc, char **argv, const ReplayTarget &target);

} // namespace attune::fuzz

#endif // ATTUNE_TESTS_FUZZ_REPLAY_H
