//===- RunArgsReplay.cpp - the attune-run target without libFuzzer -------===//
//
// Replay.h's driver with mutants of attune-run command lines and their
// files (RunArgsFuzzer.cpp's format). Each seed is split into its argument
// lines and files, one to four edits are made, and it is joined again:
//  - an argument: a --dim or --input line added, removed or repeated; a
//    name replaced by another of the model's inputs or dimensions, an
//    unknown or empty one; a --dim value replaced by an edge number (0,
//    -1, 2^31, 2^62, 2^63, not a number); '@' added or removed; a path
//    replaced (another file's, a .npy or not, empty); the spelling changed
//    (`--dim=v`, `-dim v`); Replay's text mutations on the whole text;
//  - a .npy file: its header's descr (every NumPy dtype attune-run meets,
//    big-endian, unknown), fortran_order, shape (edge dimensions, rank 0 to
//    9, not a tuple) or format version replaced, its header length field
//    set at the edges, Replay's text mutations on the header dict, its data
//    cut or grown, a bit flipped;
//  - a file copied from another seed, or removed.
//
// Usage: run_args_fuzz_replay [--mutations=N] [--seed=S] PATH...
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/Replay.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using attune::fuzz::Random;

namespace attune::fuzz {
extern bool lastRunArgsFilled; // RunArgsFuzzer.cpp
} // namespace attune::fuzz

namespace {

const std::string kSeparator = "\n@@file@@\n";

struct Parts {
  std::vector<std::string> args;
  std::vector<std::string> files;
};

Parts split(const std::string &input) {
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(input).split(parts, kSeparator);
  Parts p;
  llvm::SmallVector<llvm::StringRef> lines;
  parts[0].split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    p.args.push_back(line.str());
  for (size_t i = 1; i < parts.size(); ++i)
    p.files.push_back(parts[i].str());
  return p;
}

std::string join(const Parts &p) {
  std::string out;
  for (const std::string &arg : p.args)
    out += arg + "\n";
  for (const std::string &file : p.files)
    out += kSeparator + file;
  return out;
}

const char *const kNames[] = {"ids", "mask", "x",  "h",    "w",   "pos",
                              "q",   "batch", "seq", "kv", "",    "nope",
                              "ids=", "=", "@"};
const char *const kDimNames[] = {"batch", "seq", "kv", "", "ids", "x"};
const char *const kValues[] = {"0",
                               "1",
                               "2",
                               "3",
                               "7",
                               "-1",
                               "2147483648",
                               "4611686018427387904",
                               "9223372036854775807",
                               "9223372036854775808",
                               "18446744073709551616",
                               "1e3",
                               "0x10",
                               "",
                               " 3",
                               "+3"};
const char *const kPaths[] = {"a.npy", "b.npy", "c.bin", "d", "", "@",
                              "../../etc/passwd", "/dev/zero", "e.npy"};
const char *const kDescrs[] = {"<f4", "<f2", "<f8", "<i4", "<i8", "|i1",
                               "|u1", "|b1", ">f4", ">i8", "<c8", "<U3",
                               "O",   "<f4 ", "", "<i2", "=f4", "|f4"};
const char *const kShapes[] = {"()",
                               "(0,)",
                               "(1,)",
                               "(3,)",
                               "(2, 3)",
                               "(1, 7)",
                               "(2, 7, 4)",
                               "(1, 0)",
                               "(-1, 3)",
                               "(2, 4611686018427387904)",
                               "(9223372036854775807, 2)",
                               "(4294967296, 4294967296)",
                               "(1, 1, 1, 1, 1, 1, 1, 1, 1)",
                               "(2,3)",
                               "[2, 3]",
                               "(2, 3",
                               "(,)",
                               "(1e3,)"};

std::string pick(const char *const *list, size_t n, Random &rng) {
  return list[rng.below(n)];
}
#define PICK(list) pick(list, std::size(list), rng)

/// Replaces the value of `key` in a .npy header dict ('descr': '<f4', ...):
/// the text between the key's colon and the next ", '" or " }".
void setHeaderValue(std::string &file, const std::string &key,
                    const std::string &value) {
  size_t at = file.find("'" + key + "':");
  if (at == std::string::npos)
    return;
  size_t begin = at + key.size() + 3;
  size_t end = file.find(", '", begin);
  size_t close = file.find(", }", begin);
  if (close != std::string::npos && (end == std::string::npos || close < end))
    end = close;
  if (end == std::string::npos)
    return;
  file.replace(begin, end - begin, " " + value);
}

void mutateNpy(std::string &f, Random &rng,
               const std::vector<std::string> &others) {
  switch (rng.below(8)) {
  case 0:
    setHeaderValue(f, "descr", "'" + PICK(kDescrs) + "'");
    break;
  case 1:
    setHeaderValue(f, "shape", PICK(kShapes));
    break;
  case 2:
    setHeaderValue(f, "fortran_order", rng.oneIn(2) ? "True" : "1");
    break;
  case 3: // format version
    if (f.size() > 7)
      f[6] = static_cast<char>(rng.below(5));
    break;
  case 4: // header length at the edges
    if (f.size() > 10) {
      const uint32_t kLengths[] = {0, 1, 0xffff, 0x10000, 0xffffffff, 118, 54};
      uint32_t n = kLengths[rng.below(std::size(kLengths))];
      for (int i = 0; i < (f[6] == 1 ? 2 : 4) && 8 + i < (int)f.size(); ++i)
        f[8 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
    break;
  case 5: { // text mutation inside the header dict
    size_t end = f.find('\n');
    if (end == std::string::npos || end < 10)
      break;
    std::string header = f.substr(10, end - 10);
    attune::fuzz::mutateJsonText(header, rng, others);
    f.replace(10, end - 10, header);
    break;
  }
  case 6: // data cut or grown
    if (rng.oneIn(2))
      f.resize(rng.below(f.size() + 1));
    else
      f.append(1 + rng.below(16), static_cast<char>(rng.next()));
    break;
  case 7:
    if (!f.empty())
      f[rng.below(f.size())] ^= static_cast<char>(1u << rng.below(8));
    break;
  }
}

void mutateArgs(std::vector<std::string> &args, Random &rng,
                const std::vector<std::string> &others) {
  switch (rng.below(8)) {
  case 0: // a new --dim
    args.push_back(rng.oneIn(2) ? "--dim" : "-dim");
    args.push_back(PICK(kDimNames) + "=" + PICK(kValues));
    break;
  case 1: { // a new --input
    std::string value = PICK(kNames) + "=" + (rng.oneIn(3) ? "" : "@") +
                        PICK(kPaths);
    if (rng.oneIn(2)) {
      args.push_back("--input=" + value);
    } else {
      args.push_back("--input");
      args.push_back(value);
    }
    break;
  }
  case 2: // remove or repeat a line
    if (!args.empty()) {
      size_t i = rng.below(args.size());
      if (rng.oneIn(2))
        args.erase(args.begin() + i);
      else
        args.insert(args.begin() + i, args[i]);
    }
    break;
  case 3: { // a name=value's name
    if (args.empty())
      break;
    std::string &a = args[rng.below(args.size())];
    size_t eq = a.rfind('=');
    size_t start = a.find('=') == eq ? 0 : a.find('=') + 1;
    if (eq != std::string::npos && start <= eq)
      a.replace(start, eq - start, PICK(kNames));
    break;
  }
  case 4: { // a value: a number, or a path with or without '@'
    if (args.empty())
      break;
    std::string &a = args[rng.below(args.size())];
    size_t eq = a.rfind('=');
    if (eq == std::string::npos)
      break;
    std::string value = a.substr(eq + 1);
    if (!value.empty() && value[0] == '@')
      value = rng.oneIn(3) ? value.substr(1) : "@" + PICK(kPaths);
    else if (llvm::StringRef(value).find_first_not_of("0123456789") ==
             llvm::StringRef::npos)
      value = PICK(kValues);
    else
      value = (rng.oneIn(2) ? "@" : "") + PICK(kPaths);
    a.replace(eq + 1, std::string::npos, value);
    break;
  }
  case 5:
    args.push_back(rng.oneIn(2) ? "--random-inputs" : "--random-inputs=false");
    break;
  case 6: { // `--opt value` <-> `--opt=value`
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if ((args[i] == "--dim" || args[i] == "--input") && rng.oneIn(2)) {
        args[i] += "=" + args[i + 1];
        args.erase(args.begin() + i + 1);
        break;
      }
    break;
  }
  case 7: { // text damage anywhere in the command line
    std::string text;
    for (const std::string &a : args)
      text += a + "\n";
    attune::fuzz::mutateJsonText(text, rng, others);
    Parts p = split(text);
    args = p.args;
    break;
  }
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Parts> seeds;
  std::vector<std::string> texts;
  attune::fuzz::ReplayTarget target;
  target.name = "run_args";
  target.acceptedWhat = "command lines with every input filled";
  target.prepare = [&](const std::vector<std::string> &files) {
    texts = files;
    for (const std::string &file : files)
      seeds.push_back(split(file));
  };
  target.mutate = [&](Random &rng) {
    Parts p = seeds[rng.below(seeds.size())];
    for (size_t i = 0, n = 1 + rng.below(4); i < n; ++i) {
      size_t what = rng.below(10);
      if (what < 5 || (p.files.empty() && what < 9)) {
        mutateArgs(p.args, rng, texts);
      } else if (what < 9) {
        mutateNpy(p.files[rng.below(p.files.size())], rng, texts);
      } else {
        const Parts &other = seeds[rng.below(seeds.size())];
        if (!other.files.empty() && p.files.size() < 4)
          p.files.push_back(other.files[rng.below(other.files.size())]);
        else if (!p.files.empty())
          p.files.erase(p.files.begin() + rng.below(p.files.size()));
      }
    }
    return join(p);
  };
  target.accepted = [](const std::string &) {
    return attune::fuzz::lastRunArgsFilled;
  };
  return attune::fuzz::replayMain(argc, argv, target);
}
