//===- RunArgsFuzzer.cpp - fuzz target for attune-run's inputs -----------===//
//
// One input is an attune-run command line and the files it names:
//
//   --dim\nseq=7\n--input=ids=@a.npy\n--random-inputs\n
//   @@file@@\na.npy\n<bytes of a.npy>
//   @@file@@\nb.bin\n<bytes of b.bin> ...
//
// The text before the first "\n@@file@@\n" is the command line, one
// argument a line; each later part is one file (up to four): its name, a
// newline and its bytes. The
// options that RunInputs.h handles are picked out as LLVM's command line
// parser hands them to attune-run (--dim and --input as `--opt value` or
// `--opt=value`, with one dash or two, and --random-inputs); everything else
// (the library path, --bench, ...) is LLVM's parser's business and ignored.
//
// The target then runs attune-run's input path (RunInputs.h) against a
// fixed model signature, since no library is opened: parse the values,
// check their names, read the .npy headers and bind the dimensions they
// fix, resolve the shapes and fill every input. A path an --input gives is
// replaced, after parsing and before anything is read, by one of the
// scratch files written from the input: the file of that name, else one
// picked by a hash of the path (or a missing one when there are none), with
// the path's .npy suffix kept. No file outside the scratch folder is ever
// opened. Any step may fail, with a message; a crash, an abort or a
// sanitizer report is a bug, and so is an input filled with anything but
// its file's bytes (checked against the file: the .npy data after its
// header, rounded to bf16 for a bf16 input, or the raw file as it is).
//
// attune-run sizes buffers only after the runtime has checked the shapes
// against the library's limits; this target has no library, so it stops
// (as accepted) before filling inputs of more than 4 MiB in all.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer's main under
// clang, and with RunArgsReplay.cpp's under any compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/attune-run/RunInputs.h"
#include "tests/fuzz/FuzzSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace attune::fuzz {
/// Whether every input of the last command line was filled; the replay
/// driver counts them.
bool lastRunArgsFilled = false;
} // namespace attune::fuzz

namespace {

using namespace attune::run;

[[noreturn]] void broken(const std::string &what) {
  attune::fuzz::fail("run_args", what);
}

constexpr llvm::StringLiteral kFileSeparator("\n@@file@@\n");
constexpr size_t kMaxFiles = 4;
constexpr uint64_t kMaxInputBytes = 4 << 20;

/// The model every command line is checked against: each dtype, named
/// dynamic dimensions shared between inputs, an unnamed one, and static
/// ones. Kept in step with the seeds' names (make_run_args_corpus.py).
std::vector<attune_tensor_info_t> signature() {
  auto info = [](const char *name, attune_dtype_t dtype,
                 std::vector<int64_t> dims, std::vector<const char *> names,
                 int64_t indexBound = 0) {
    attune_tensor_info_t t{};
    t.name = name;
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      t.dims[d] = dims[d];
      t.dim_names[d] = names[d];
    }
    t.index_bound = indexBound;
    return t;
  };
  return {
      info("ids", ATTUNE_DTYPE_I64, {-1, -1}, {"batch", "seq"}, 1000),
      info("mask", ATTUNE_DTYPE_BOOL, {-1, -1}, {"batch", "seq"}),
      info("x", ATTUNE_DTYPE_F32, {-1, -1, 4}, {"batch", "seq", nullptr}),
      info("h", ATTUNE_DTYPE_F16, {-1, 3}, {nullptr, nullptr}),
      info("w", ATTUNE_DTYPE_BF16, {2, -1}, {nullptr, "kv"}),
      info("pos", ATTUNE_DTYPE_I32, {-1}, {"seq"}, 64),
      info("q", ATTUNE_DTYPE_I8, {}, {}),
  };
}

/// The scratch folder the input's files are written to, made once and
/// removed at exit.
class Scratch {
public:
  Scratch()
      : root(attune::fuzz::makeScratchFolder("run_args",
                                             "attune-run-args-fuzz")) {}
  ~Scratch() { (void)llvm::sys::fs::remove_directories(root); }
  const std::string root;
};

const std::string &scratch() {
  static const Scratch folder;
  return folder.root;
}

/// FNV-1a: a path picks the same file on every machine.
uint64_t hashOf(llvm::StringRef s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

struct Parsed {
  std::vector<std::string> dimSpecs, inputSpecs;
  bool randomInputs = false;
};

/// --dim and --input values and --random-inputs, as LLVM's parser hands
/// them over (see the file comment).
Parsed parseCommandLine(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> args;
  text.split(args, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  Parsed p;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (!arg.consume_front("--"))
      if (!arg.consume_front("-"))
        continue;
    auto [name, value] = arg.split('=');
    bool inline_ = arg.contains('=');
    std::vector<std::string> *list = name == "dim"     ? &p.dimSpecs
                                     : name == "input" ? &p.inputSpecs
                                                       : nullptr;
    if (list) {
      if (inline_)
        list->push_back(value.str());
      else if (i + 1 < args.size())
        list->push_back(args[++i].str());
      continue;
    }
    if (name == "random-inputs")
      p.randomInputs = !inline_ || value == "true" || value == "1" ||
                       value == "TRUE" || value == "True";
  }
  return p;
}

std::string readAll(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    broken("cannot read back '" + path + "'");
  return (*buffer)->getBuffer().str();
}

/// What a filled input promises: it holds its file's bytes.
void checkFilled(const attune_tensor_info_t &info, const attune_tensor_t &t,
                 const InputSource &source) {
  std::string file = readAll(source.path);
  size_t bytes = 0;
  if (!byteSize(t, "input", bytes).empty())
    broken("a filled input's size does not fit");
  if (!source.isNpy) {
    if (file.size() != bytes ||
        (bytes && std::memcmp(file.data(), t.data, bytes) != 0))
      broken(std::string("input '") + info.name +
             "' does not hold its raw file's bytes");
    return;
  }
  const attune::npy::Header &h = source.header;
  if (h.dataOffset + h.dataBytes != file.size())
    broken(std::string("input '") + info.name +
           "': the header's data does not end the file");
  const char *data = file.data() + h.dataOffset;
  if (info.dtype != ATTUNE_DTYPE_BF16) {
    if (h.dataBytes != bytes ||
        (bytes && std::memcmp(data, t.data, bytes) != 0))
      broken(std::string("input '") + info.name +
             "' does not hold its .npy file's data");
    return;
  }
  if (h.dataBytes != 2 * bytes)
    broken(std::string("bf16 input '") + info.name +
           "' read from a file of another size");
  for (int64_t i = 0, n = numElements(t); i < n; ++i) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    if (static_cast<const uint16_t *>(t.data)[i] != floatToBf16(f))
      broken(std::string("bf16 input '") + info.name +
             "' is not its file's values rounded");
  }
}

/// An error must say something; ATTUNE_FUZZ_PRINT_ERRORS=1 prints it, to
/// see why a seed stops where it does.
void requireMessage(const std::string &error, const char *step) {
  if (error.find_first_not_of(" \n") == std::string::npos)
    broken(std::string(step) + " failed without a message");
  static const bool print = std::getenv("ATTUNE_FUZZ_PRINT_ERRORS") != nullptr;
  if (print)
    std::fprintf(stderr, "run_args: %s: %s\n", step, error.c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  attune::fuzz::lastRunArgsFilled = false;
  static const std::vector<attune_tensor_info_t> infos = signature();
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  llvm::SmallVector<llvm::StringRef> parts;
  input.split(parts, kFileSeparator);
  Parsed parsed = parseCommandLine(parts[0]);
  // Each file is written twice, as fK and fK.npy, so that a path keeps the
  // suffix the raw-file error's hint looks at.
  size_t numFiles = std::min(parts.size() - 1, kMaxFiles);
  std::vector<llvm::StringRef> names;
  for (size_t k = 0; k < numFiles; ++k) {
    auto [name, bytes] = parts[k + 1].split('\n');
    names.push_back(name);
    for (const char *suffix : {"", ".npy"}) {
      llvm::SmallString<128> path(scratch());
      llvm::sys::path::append(path, "f" + std::to_string(k) + suffix);
      attune::fuzz::writeFile("run_args", path, bytes);
    }
  }

  InputArguments arguments;
  if (std::string error = parseInputArguments(parsed.dimSpecs,
                                              parsed.inputSpecs, arguments);
      !error.empty())
    return requireMessage(error, "parsing --dim and --input"), 0;
  for (auto &entry : arguments.sources) {
    InputSource &source = entry.second;
    llvm::SmallString<128> path(scratch());
    auto named = llvm::find(names, source.path);
    size_t k = named != names.end() ? named - names.begin()
                                    : hashOf(source.path) % std::max<size_t>(numFiles, 1);
    std::string name = numFiles ? "f" + std::to_string(k) : "missing";
    if (llvm::StringRef(source.path).ends_with(".npy"))
      name += ".npy";
    llvm::sys::path::append(path, name);
    source.path = std::string(path);
  }

  std::vector<std::string> unknown =
      unknownNameErrors(parsed.dimSpecs, parsed.inputSpecs, infos);
  for (const std::string &error : unknown)
    requireMessage(error, "checking names");
  if (!unknown.empty())
    return 0;
  if (std::string error = bindNpyInputs(infos, arguments); !error.empty())
    return requireMessage(error, "reading .npy headers"), 0;

  std::vector<attune_tensor_t> inputs(infos.size());
  resolveShapes(infos, arguments.dims, inputs);
  uint64_t total = 0;
  for (const attune_tensor_t &t : inputs) {
    size_t bytes = 0;
    if (std::string error = byteSize(t, "input", bytes); !error.empty())
      return requireMessage(error, "sizing an input"), 0;
    total += bytes;
    if (total > kMaxInputBytes)
      return 0; // The runtime's shape check comes first in attune-run.
  }

  std::vector<Buffer> storage(infos.size());
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < infos.size(); ++i) {
    auto source = arguments.sources.find(infos[i].name);
    const InputSource *from =
        source == arguments.sources.end() ? nullptr : &source->second;
    if (std::string error = fillInput(infos[i], inputs[i], storage[i], from,
                                      parsed.randomInputs, rng);
        !error.empty())
      return requireMessage(error, "filling an input"), 0;
    if (from)
      checkFilled(infos[i], inputs[i], *from);
  }
  attune::fuzz::lastRunArgsFilled = true;
  return 0;
}
