//===- SafeTensors.cpp - safetensors reader and writer --------------------===//
//
// The reader trusts nothing in the file: every length, offset and shape is
// checked before it is used, with overflow-safe arithmetic, so that a
// truncated or hostile file gives an error naming the tensor and the problem
// instead of an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Support.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

using namespace attune;

namespace {

/// The data section and every tensor in it start on this boundary, so a
/// kernel can read an embedded blob in place with aligned vector loads.
constexpr uint64_t kAlignment = 64;

/// Names of the U8 tensors that fill alignment gaps (see writeSafeTensors).
constexpr llvm::StringLiteral kPaddingPrefix = "__attune_padding_";

std::optional<ScalarType> parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScalarType>>(name)
      .Case("F32", ScalarType::F32)
      .Case("F16", ScalarType::F16)
      .Case("BF16", ScalarType::BF16)
      .Case("I32", ScalarType::I32)
      .Case("I64", ScalarType::I64)
      .Case("I8", ScalarType::I8)
      .Case("BOOL", ScalarType::Bool)
      .Default(std::nullopt);
}

/// Types that are valid safetensors dtypes but that attune has no use for;
/// named separately so the error says "unsupported", not "unknown".
bool isKnownUnsupportedDType(llvm::StringRef name) {
  return llvm::is_contained({"F64", "U8", "I16", "U16", "U32", "U64", "F8_E4M3",
                             "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2",
                             "C64"},
                            name);
}

/// Reads one entry of the header. `dataSize` bounds the offsets.
llvm::Expected<SafeTensorEntry> parseEntry(llvm::StringRef name,
                                           const llvm::json::Value &value,
                                           uint64_t dataSize) {
  auto fail = [&](const llvm::Twine &what) {
    return makeError("safetensors: tensor '" + name + "': " + what);
  };
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("expected a JSON object, got another kind of value");

  SafeTensorEntry entry;
  entry.name = name.str();

  // dtype
  const llvm::json::Value *dtypeValue = object->get("dtype");
  if (!dtypeValue)
    return fail("missing 'dtype'");
  std::optional<llvm::StringRef> dtypeName = dtypeValue->getAsString();
  if (!dtypeName)
    return fail("expected 'dtype' to be a string");
  std::optional<ScalarType> dtype = parseDType(*dtypeName);
  if (!dtype) {
    if (isKnownUnsupportedDType(*dtypeName))
      return fail("unsupported dtype '" + *dtypeName +
                  "' (expected F32, F16, BF16, I32, I64, I8 or BOOL)");
    return fail("unknown dtype '" + *dtypeName + "'");
  }
  entry.dtype = *dtype;

  // shape, with an overflow-checked element count
  const llvm::json::Value *shapeValue = object->get("shape");
  if (!shapeValue)
    return fail("missing 'shape'");
  const llvm::json::Array *shapeArray = shapeValue->getAsArray();
  if (!shapeArray)
    return fail("expected 'shape' to be an array");
  uint64_t count = 1;
  bool overflow = false;
  for (auto [i, dimValue] : llvm::enumerate(*shapeArray)) {
    std::optional<int64_t> dim = dimValue.getAsInteger();
    if (!dim || *dim < 0)
      return fail(llvm::formatv("expected 'shape' entry {0} to be a "
                                "non-negative integer",
                                i));
    entry.shape.push_back(*dim);
    uint64_t next;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(*dim), &next))
      overflow = true;
    count = next;
  }
  uint64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(count, scalarTypeBytes(*dtype), &bytes))
    return fail("shape " + shapeString(entry.shape) +
                " overflows a 64-bit byte count");

  // data_offsets
  const llvm::json::Value *offsetsValue = object->get("data_offsets");
  if (!offsetsValue)
    return fail("missing 'data_offsets'");
  const llvm::json::Array *offsets = offsetsValue->getAsArray();
  if (!offsets || offsets->size() != 2)
    return fail("expected 'data_offsets' to be an array of two integers");
  std::optional<uint64_t> begin = (*offsets)[0].getAsUINT64();
  std::optional<uint64_t> end = (*offsets)[1].getAsUINT64();
  if (!begin || !end)
    return fail("expected 'data_offsets' to be non-negative integers");
  if (*begin > *end)
    return fail(llvm::formatv("data_offsets [{0}, {1}] end before they begin",
                              *begin, *end));
  if (*end > dataSize)
    return fail(llvm::formatv("data_offsets [{0}, {1}] run past the end of "
                              "the data section ({2} bytes)",
                              *begin, *end, dataSize));
  if (*end - *begin != bytes)
    return fail(llvm::formatv("data_offsets [{0}, {1}] hold {2} bytes, but "
                              "dtype {3} and shape {4} need {5}",
                              *begin, *end, *end - *begin, *dtypeName,
                              shapeString(entry.shape), bytes));
  entry.offset = *begin;
  entry.size = bytes;
  return entry;
}

} // namespace

llvm::StringRef attune::safeTensorsDTypeName(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return "F32";
  case ScalarType::F16:
    return "F16";
  case ScalarType::BF16:
    return "BF16";
  case ScalarType::I32:
    return "I32";
  case ScalarType::I64:
    return "I64";
  case ScalarType::I8:
    return "I8";
  case ScalarType::Bool:
    return "BOOL";
  }
  return "?";
}

llvm::Expected<SafeTensorsView> SafeTensorsView::parse(const void *data,
                                                       size_t size) {
  if (!data && size)
    return makeError("safetensors: null buffer");
  if (size < 8)
    return makeError(llvm::formatv("safetensors: file is {0} bytes, too short "
                                   "for the 8-byte header length",
                                   size));
  const auto *bytes = static_cast<const uint8_t *>(data);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > size - 8)
    return makeError(llvm::formatv("safetensors: header length {0} runs past "
                                   "the end of the file ({1} bytes)",
                                   headerSize, size));

  llvm::StringRef headerText(reinterpret_cast<const char *>(bytes + 8),
                             headerSize);
  llvm::Expected<llvm::json::Value> header = llvm::json::parse(headerText);
  if (!header)
    return makeError("safetensors: header is not valid JSON: " +
                     llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  if (!object)
    return makeError("safetensors: expected the header to be a JSON object");

  SafeTensorsView view;
  view.dataOffset_ = 8 + headerSize;
  view.dataStart_ = bytes + view.dataOffset_;
  uint64_t dataSize = size - view.dataOffset_;

  for (const auto &[key, value] : *object) {
    if (key == "__metadata__") {
      if (!value.getAsObject())
        return makeError(
            "safetensors: expected '__metadata__' to be a JSON object");
      continue;
    }
    if (llvm::StringRef(key).starts_with(kPaddingPrefix))
      continue; // alignment filler written by writeSafeTensors
    llvm::Expected<SafeTensorEntry> entry = parseEntry(key, value, dataSize);
    if (!entry)
      return entry.takeError();
    view.entries_.push_back(std::move(*entry));
  }

  // JSON objects have no order; present entries in file order so that
  // everything derived from a view is deterministic.
  llvm::sort(view.entries_,
             [](const SafeTensorEntry &a, const SafeTensorEntry &b) {
               return std::tie(a.offset, a.size, a.name) <
                      std::tie(b.offset, b.size, b.name);
             });
  // Overlapping tensors would alias; the format forbids it, and a writer
  // that produced it is broken, so say so rather than read shared bytes.
  for (size_t i = 1; i < view.entries_.size(); ++i) {
    const SafeTensorEntry &prev = view.entries_[i - 1];
    const SafeTensorEntry &cur = view.entries_[i];
    if (cur.size != 0 && prev.offset + prev.size > cur.offset)
      return makeError("safetensors: tensor '" + cur.name +
                       "' overlaps tensor '" + prev.name + "'");
  }
  for (auto [i, entry] : llvm::enumerate(view.entries_))
    view.index_[entry.name] = i;
  return view;
}

const SafeTensorEntry *SafeTensorsView::lookup(llvm::StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::string
attune::writeSafeTensors(const std::vector<SafeTensorData> &tensors) {
  // Offsets are relative to the data section, which itself starts aligned,
  // so aligning them aligns every tensor within the whole buffer.
  std::vector<uint64_t> offsets;
  // The reference implementation (and so PyTorch and numpy users) rejects
  // any gap between tensors, so each alignment gap is covered by a U8
  // padding tensor that SafeTensorsView::parse hides again.
  std::vector<std::pair<uint64_t, uint64_t>> padding; // [begin, end)
  uint64_t cursor = 0;
  for (const SafeTensorData &t : tensors) {
    uint64_t aligned = llvm::alignTo(cursor, kAlignment);
    if (aligned != cursor)
      padding.emplace_back(cursor, aligned);
    offsets.push_back(aligned);
    cursor = aligned + t.bytes.size();
  }
  uint64_t dataSize = cursor;

  std::string header;
  {
    llvm::raw_string_ostream os(header);
    llvm::json::OStream json(os);
    auto entry = [&](llvm::StringRef name, llvm::StringRef dtype,
                     llvm::ArrayRef<int64_t> shape, uint64_t begin,
                     uint64_t end) {
      json.attributeObject(name, [&] {
        json.attribute("dtype", dtype);
        json.attributeArray("shape", [&] {
          for (int64_t d : shape)
            json.value(d);
        });
        json.attributeArray("data_offsets", [&] {
          json.value(static_cast<int64_t>(begin));
          json.value(static_cast<int64_t>(end));
        });
      });
    };
    json.object([&] {
      for (size_t i = 0; i < tensors.size(); ++i) {
        const SafeTensorData &t = tensors[i];
#ifndef NDEBUG
        uint64_t count = 1;
        for (int64_t d : t.shape)
          count *= static_cast<uint64_t>(d);
        assert(count * scalarTypeBytes(t.dtype) == t.bytes.size() &&
               "tensor bytes do not match its dtype and shape");
        assert(!llvm::StringRef(t.name).starts_with(kPaddingPrefix) &&
               "tensor name uses the reserved padding prefix");
#endif
        entry(t.name, safeTensorsDTypeName(t.dtype), t.shape, offsets[i],
              offsets[i] + t.bytes.size());
      }
      for (auto [i, gap] : llvm::enumerate(padding)) {
        int64_t length = static_cast<int64_t>(gap.second - gap.first);
        entry((kPaddingPrefix + llvm::Twine(i)).str(), "U8", {length},
              gap.first, gap.second);
      }
    });
  }
  // Pad with spaces (JSON whitespace) so that 8 + header is a multiple of
  // the alignment.
  uint64_t headerSize = llvm::alignTo(8 + header.size(), kAlignment) - 8;
  header.resize(headerSize, ' ');

  std::string out;
  out.reserve(8 + headerSize + dataSize);
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((headerSize >> (8 * i)) & 0xff));
  out += header;
  out.resize(8 + headerSize + dataSize, '\0');
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!tensors[i].bytes.empty())
      std::memcpy(&out[8 + headerSize + offsets[i]], tensors[i].bytes.data(),
                  tensors[i].bytes.size());
  return out;
}
