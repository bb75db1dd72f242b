//===- SafeTensorsFuzzer.cpp - fuzz target for the safetensors reader ----===//
//
// One input is one file. A parse may fail (that is most inputs), but it must
// fail with a message and never read outside the buffer; a parse that
// succeeds must describe the buffer truthfully. The second half is checked
// here, not left to a sanitizer, so that the replay driver catches a broken
// invariant in a plain build too: every entry lies inside the data section,
// the entries tile it in order, lookup finds each one, and writing the
// tensors back out gives a file that parses to the same tensors.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer's main under
// clang, and with SafeTensorsReplay.cpp's under any compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace attune;

namespace {

[[noreturn]] void broken(const char *what, const std::string &name) {
  std::fprintf(stderr, "safetensors fuzz: invariant broken: %s (tensor '%s')\n",
               what, name.c_str());
  std::abort();
}

/// Checks what a successful parse promises, reading every byte it hands out.
void checkView(const SafeTensorsView &view, const uint8_t *data, size_t size) {
  if (view.dataOffset() < 8 || view.dataOffset() > size ||
      view.dataStart() != data + view.dataOffset())
    broken("data section outside the buffer", "");
  uint64_t dataSize = size - view.dataOffset();
  uint64_t cursor = 0;
  uint8_t sum = 0;
  for (const SafeTensorEntry &e : view.entries()) {
    if (e.offset > dataSize || e.size > dataSize - e.offset)
      broken("entry outside the data section", e.name);
    // Padding is hidden, so entries may skip ahead, but never back.
    if (e.offset < cursor)
      broken("entries overlap or are out of order", e.name);
    cursor = e.offset + e.size;
    uint64_t count = 1;
    for (int64_t d : e.shape) {
      if (d < 0)
        broken("negative dim", e.name);
      count *= static_cast<uint64_t>(d);
    }
    if (count * scalarTypeBytes(e.dtype) != e.size)
      broken("size differs from dtype and shape", e.name);
    if (view.lookup(e.name) != &e)
      broken("lookup does not find the entry", e.name);
    // The loads a sanitizer checks: every byte the view says is the tensor.
    for (uint64_t i = 0; i < e.size; ++i)
      sum ^= view.dataStart()[e.offset + i];
  }
  volatile uint8_t sink = sum;
  (void)sink;
}

/// A parsed file written back by attune's writer must parse again to the
/// same tensors: the writer's output (64-byte alignment, U8 padding) has to
/// follow the rules the reader enforces.
void checkRoundTrip(const SafeTensorsView &view) {
  std::vector<SafeTensorData> tensors;
  for (const SafeTensorEntry &e : view.entries()) {
    const uint8_t *p = view.dataStart() + e.offset;
    tensors.push_back(
        {e.name, e.dtype, e.shape, std::vector<uint8_t>(p, p + e.size)});
  }
  std::string file = writeSafeTensors(tensors);
  llvm::Expected<SafeTensorsView> again =
      SafeTensorsView::parse(file.data(), file.size());
  if (!again) {
    std::string message = llvm::toString(again.takeError());
    broken(("the writer's output does not parse: " + message).c_str(), "");
  }
  if (again->entries().size() != tensors.size())
    broken("the round trip changed the number of tensors", "");
  for (const SafeTensorData &t : tensors) {
    const SafeTensorEntry *e = again->lookup(t.name);
    if (!e || e->dtype != t.dtype || e->shape != t.shape ||
        e->size != t.bytes.size() ||
        (e->size &&
         std::memcmp(again->dataStart() + e->offset, t.bytes.data(), e->size)))
      broken("the round trip changed a tensor", t.name);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<SafeTensorsView> view = SafeTensorsView::parse(data, size);
  if (!view) {
    if (llvm::toString(view.takeError()).empty())
      broken("an error without a message", "");
    return 0;
  }
  checkView(*view, data, size);
  // Writing copies every tensor; a fuzzer's inputs are small, but a seed
  // from a real checkpoint need not be.
  if (size <= (1u << 20))
    checkRoundTrip(*view);
  return 0;
}
