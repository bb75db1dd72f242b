//===- GraphGen.h - random attention graphs for attune-fuzz-graphs -*- C++ -*-===//
//
// Generates small, valid tfm programs around attention written out the way
// exporters write it (the spellings tfm-fuse-attention claims to recognise,
// tests/lit/passes/fuse-attention.mlir) and near misses that must not fuse
// into a different computation. A program is MLIR text plus what the fuzzer
// needs to run it: the values of its dynamic dimensions and, per softmax
// site, whether the fusion is expected to fuse it.
//
// Inputs are found by the `tfm.name` of their argument; its prefix says what
// values the fuzzer feeds it (inputRole), so that a shrunk or saved program
// is run with the same kind of data as the original.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHGEN_H
#define ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHGEN_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attune::fuzzgraphs {

/// What the fusion should do with one softmax site.
enum class Expect {
  Fuse,    ///< a spelling the matcher documents: must become tfm.attention
  NotFuse, ///< a near miss whose fused form would compute something else
  Either,  ///< fusing is allowed if it keeps the meaning (the numbers decide)
};

struct Program {
  /// The MLIR module, without the header comments.
  std::string mlir;
  /// Dynamic dimension values by their tfm.dim_names name.
  std::map<std::string, int64_t> dims;
  /// One entry per softmax site, in IR order.
  std::vector<Expect> sites;
  /// A short description of the spellings used, for the log and the header.
  std::string description;
  /// The seed of the inputs it was checked with (0: not yet chosen), saved
  /// so that a replay feeds the same values.
  uint64_t inputSeed = 0;
};

/// The program of `index` in the run of `seed`: the same pair always gives
/// the same program.
Program generateProgram(uint64_t seed, uint64_t index);

/// Comment lines that make a saved program replayable (`// fuzz-dims: ...`,
/// `// fuzz-expect: ...`) followed by `note` lines, each as `// note`.
std::string programHeader(const Program &program, const std::string &note);

/// Reads back the dims and expectations of programHeader from `text`; the
/// MLIR is `text` itself (comments are ignored by the parser).
Program parseProgramFile(const std::string &text);

/// How the fuzzer fills an input, from the prefix of its name.
enum class InputRole {
  Data,     ///< activations: uniform in [-a, a], a per input (some extreme)
  Keep,     ///< a condition, nonzero = attend; some rows fully masked
  KeepSomeKey, ///< as Keep, but every row attends to at least one key
  Drop,     ///< a condition, nonzero = masked; some rows fully masked
  Additive, ///< an additive mask: 0 or a masking value (-inf or -1e9)
  Bias,     ///< an additive score bias: small finite values
};
InputRole inputRole(const std::string &name);

} // namespace attune::fuzzgraphs

#endif // ATTUNE_COMPILER_TOOLS_ATTUNE_FUZZ_GRAPHS_GRAPHGEN_H
