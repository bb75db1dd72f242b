//===- SafeTensors.cpp - safetensors reader and writer --------------------===//
//
// The reader trusts nothing in the file: every length, offset and shape is
// checked before it is used, with overflow-safe arithmetic, so that a
// truncated or hostile file gives an error naming the tensor and the problem
// instead of an out-of-bounds read.
//
// It accepts what the reference implementation (huggingface/safetensors,
// `Metadata::validate` and `read_metadata`) accepts and rejects the rest:
// a header of at most 100,000,000 bytes that is a JSON object, tensors whose
// data_offsets, sorted, tile the data section from 0 to its last byte with
// no gap, overlap or trailing bytes, and byte counts that match dtype and
// shape. Stricter than the reference in two ways that only a broken writer
// trips: a key may not appear twice in an object (serde keeps the last one),
// and nesting is bounded before parsing (serde_json's own limit is 128).
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"
#include "compiler/support/MergedWeights.h"
#include "compiler/support/PanelLayout.h"
#include "compiler/frontends/BoundedJson.h"
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
#include <tuple>

using namespace attune;

namespace {

/// The data section and every tensor in it start on this boundary, so a
/// kernel can read an embedded blob in place with aligned vector loads.
constexpr uint64_t kAlignment = 64;

/// Names of the U8 tensors that fill alignment gaps (see writeSafeTensors).
constexpr llvm::StringLiteral kPaddingPrefix = "__attune_padding_";

/// The reference implementation's MAX_HEADER_SIZE: a real checkpoint's
/// header is a few hundred kilobytes, so a larger length is corruption or an
/// attack, rejected before any of it is read.
constexpr uint64_t kMaxHeaderBytes = 100000000;

/// A valid header nests three deep (header, tensor, shape); serde_json, which
/// the reference reads headers with, stops at 128, so nothing it reads is
/// refused here.
constexpr unsigned kMaxHeaderDepth = 128;

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

/// Reads one entry of the header. `dataSize` bounds the offsets. A padding
/// entry may also be U8, which attune has no use for as a tensor: its
/// `dtype` is then left at F32, and the caller drops the entry once the
/// offsets are checked.
llvm::Expected<SafeTensorEntry> parseEntry(llvm::StringRef name,
                                           const llvm::json::Value &value,
                                           uint64_t dataSize, bool isPadding) {
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
  uint64_t elementBytes = dtype ? scalarTypeBytes(*dtype) : 0;
  if (!dtype && isPadding && *dtypeName == "U8") {
    entry.dtype = ScalarType::F32;
    elementBytes = 1;
  } else if (!dtype) {
    if (isKnownUnsupportedDType(*dtypeName))
      return fail("unsupported dtype '" + *dtypeName +
                  "' (expected F32, F16, BF16, I32, I64, I8 or BOOL)");
    return fail("unknown dtype '" + *dtypeName + "'");
  } else {
    entry.dtype = *dtype;
  }

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
  if (overflow || __builtin_mul_overflow(count, elementBytes, &bytes))
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
  // The bound comes first, as in the reference, so that a huge length is
  // called what it is even when the file is as large as it claims.
  if (headerSize > kMaxHeaderBytes)
    return makeError(llvm::formatv("safetensors: header length {0} exceeds "
                                   "the limit of {1} bytes",
                                   headerSize, kMaxHeaderBytes));
  if (headerSize > size - 8)
    return makeError(llvm::formatv("safetensors: header length {0} runs past "
                                   "the end of the file ({1} bytes)",
                                   headerSize, size));

  llvm::StringRef headerText(reinterpret_cast<const char *>(bytes + 8),
                             headerSize);
  std::optional<JsonDuplicateKey> duplicate;
  llvm::Expected<llvm::json::Value> header =
      parseBoundedJson(headerText, kMaxHeaderDepth, duplicate);
  if (!header)
    return makeError("safetensors: header " +
                     llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  if (!object)
    return makeError("safetensors: expected the header to be a JSON object");
  if (duplicate) {
    if (duplicate->path.empty())
      return makeError("safetensors: " +
                       (duplicate->key == "__metadata__"
                            ? std::string("'__metadata__'")
                            : "tensor '" + duplicate->key + "'") +
                       " appears twice in the header");
    std::string where = duplicate->path[0] == "__metadata__"
                            ? std::string("'__metadata__'")
                            : "tensor '" + duplicate->path[0] + "'";
    for (size_t i = 1; i < duplicate->path.size(); ++i)
      where += ", in '" + duplicate->path[i] + "'";
    return makeError("safetensors: " + where + ": key '" + duplicate->key +
                     "' appears twice");
  }

  SafeTensorsView view;
  view.dataOffset_ = 8 + headerSize;
  view.dataStart_ = bytes + view.dataOffset_;
  uint64_t dataSize = size - view.dataOffset_;

  // Padding entries take part in the offset checks below, since they are
  // what makes writeSafeTensors' aligned output tile the data section; they
  // are dropped after.
  std::vector<SafeTensorEntry> all;
  std::vector<bool> isPadding;
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__") {
      if (!value.getAsObject())
        return makeError(
            "safetensors: expected '__metadata__' to be a JSON object");
      continue;
    }
    bool padding = llvm::StringRef(key).starts_with(kPaddingPrefix);
    llvm::Expected<SafeTensorEntry> entry =
        parseEntry(key, value, dataSize, padding);
    if (!entry)
      return entry.takeError();
    all.push_back(std::move(*entry));
    isPadding.push_back(padding);
  }

  // JSON objects have no order; sort by data_offsets, as the reference does,
  // with the name last so that the order (and so every message below and
  // everything derived from a view) is deterministic.
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::tie(all[a].offset, all[a].size, all[a].name) <
           std::tie(all[b].offset, all[b].size, all[b].name);
  });

  // The tensors must tile the data section: each one begins where the one
  // before it ends, the first at 0, and the last ends at the end of the file.
  // This is the reference's rule; a gap would be bytes no tensor owns, and an
  // overlap (an empty tensor inside another's range included) would alias.
  auto range = [](const SafeTensorEntry &e) {
    return llvm::formatv("[{0}, {1}]", e.offset, e.offset + e.size).str();
  };
  uint64_t cursor = 0;
  for (auto [i, index] : llvm::enumerate(order)) {
    const SafeTensorEntry &cur = all[index];
    if (cur.offset > cursor) {
      if (i == 0)
        return makeError(llvm::formatv(
            "safetensors: tensor '{0}': data_offsets {1} leave the first {2} "
            "bytes of the data section to no tensor (tensors must tile it "
            "from offset 0)",
            cur.name, range(cur), cur.offset));
      const SafeTensorEntry &prev = all[order[i - 1]];
      return makeError(llvm::formatv(
          "safetensors: tensor '{0}': data_offsets {1} leave a gap of {2} "
          "bytes after tensor '{3}' (data_offsets {4}); tensors must tile "
          "the data section without gaps",
          cur.name, range(cur), cur.offset - cursor, prev.name, range(prev)));
    }
    if (cur.offset < cursor) {
      // Everything before `cur` tiles [0, cursor) in sorted order, so the
      // tensor before it is non-empty (an empty one would start at cursor,
      // after cur) and holds cur's first byte: it is the one overlapped,
      // wherever the two sit in the header. Checking every pair this way is
      // what catches an overlap hidden behind an empty tensor between them.
      const SafeTensorEntry &prev = all[order[i - 1]];
      return makeError(llvm::formatv(
          "safetensors: tensor '{0}' overlaps tensor '{1}': data_offsets {2} "
          "start inside {3}",
          cur.name, prev.name, range(cur), range(prev)));
    }
    cursor = cur.offset + cur.size;
  }
  if (cursor != dataSize) {
    // cursor < dataSize: every end was checked against dataSize.
    if (order.empty())
      return makeError(llvm::formatv("safetensors: the header lists no "
                                     "tensors, but the data section has {0} "
                                     "bytes",
                                     dataSize));
    const SafeTensorEntry &last = all[order.back()];
    return makeError(llvm::formatv(
        "safetensors: {0} trailing bytes after the last tensor '{1}' "
        "(data_offsets {2}; the data section is {3} bytes)",
        dataSize - cursor, last.name, range(last), dataSize));
  }

  for (size_t index : order)
    if (!isPadding[index])
      view.entries_.push_back(std::move(all[index]));
  for (auto [i, entry] : llvm::enumerate(view.entries_))
    view.index_[entry.name] = i;
  return view;
}

const SafeTensorEntry *SafeTensorsView::lookup(llvm::StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const SafeTensorEntry *SafeTensorsView::lookupMergedPart(llvm::StringRef name,
                                                         int64_t &offset,
                                                         int64_t &total) const {
  for (const SafeTensorEntry &entry : entries_) {
    if (entry.name.find(kWeightPartSeparator) == std::string::npos)
      continue;
    std::string plain = llvm::StringRef(entry.name).rsplit(kPanelsKeyMarker).first.str();
    std::optional<std::vector<WeightPart>> parts = parseMergedBlobKey(plain);
    if (!parts)
      continue;
    int64_t columns = 0, found = -1;
    for (const WeightPart &part : *parts) {
      if (found < 0 && part.key == name)
        found = columns;
      columns += part.extent;
    }
    if (found >= 0) {
      offset = found;
      total = columns;
      return &entry;
    }
  }
  return nullptr;
}

const SafeTensorEntry *SafeTensorsView::lookupPanels(llvm::StringRef name) const {
  std::string prefix = name.str() + kPanelsKeyMarker;
  for (const SafeTensorEntry &entry : entries_)
    if (llvm::StringRef(entry.name).starts_with(prefix))
      return &entry;
  return nullptr;
}

std::string
attune::writeSafeTensors(const std::vector<SafeTensorData> &tensors) {
  // Offsets are relative to the data section, which itself starts aligned,
  // so aligning them aligns every tensor within the whole buffer.
  std::vector<uint64_t> offsets;
  // The reference implementation (and so PyTorch and numpy users) rejects
  // any gap between tensors, and so does SafeTensorsView::parse, so each
  // alignment gap is covered by a U8 padding tensor: the file tiles its data
  // section like any other, and parse hides the padding again once the
  // offsets are checked. U8 is allowed for those entries only.
  std::vector<std::pair<uint64_t, uint64_t>> padding; // [begin, end)
  uint64_t cursor = 0;
  for (const SafeTensorData &t : tensors) {
    uint64_t aligned = llvm::alignTo(cursor, kAlignment);
    if (aligned != cursor)
      padding.emplace_back(cursor, aligned);
    offsets.push_back(aligned);
    cursor = aligned + t.data().size();
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
        assert(count * scalarTypeBytes(t.dtype) == t.data().size() &&
               "tensor bytes do not match its dtype and shape");
        assert(!llvm::StringRef(t.name).starts_with(kPaddingPrefix) &&
               "tensor name uses the reserved padding prefix");
#endif
        entry(t.name, safeTensorsDTypeName(t.dtype), t.shape, offsets[i],
              offsets[i] + t.data().size());
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
  for (size_t i = 0; i < tensors.size(); ++i) {
    llvm::ArrayRef<uint8_t> data = tensors[i].data();
    if (!data.empty())
      std::memcpy(&out[8 + headerSize + offsets[i]], data.data(), data.size());
  }
  return out;
}
