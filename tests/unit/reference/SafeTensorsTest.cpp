//===- SafeTensorsTest.cpp - safetensors I/O and weight materialisation ---===//
//
// Round trips, the 64-byte alignment the runtime relies on to read weights in
// place, one case per kind of corruption (each must be an error naming the
// problem, never a crash), and the determinism of generated weights.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "compiler/reference/Evaluator.h"
#include "compiler/support/MergedWeights.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "tests/unit/reference/SafeTensorsTestSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>

using namespace attune;
using namespace attune::testing;

namespace {

std::vector<SafeTensorData> sampleTensors() {
  std::vector<SafeTensorData> tensors;
  tensors.push_back(
      {"b.weight", ScalarType::F32, {2, 3}, floatBytes({1, 2, 3, 4, 5, 6})});
  std::vector<uint8_t> ids(3 * 8);
  for (int64_t i = 0; i < 3; ++i) {
    int64_t v = 1000 * i - 1;
    std::memcpy(&ids[i * 8], &v, 8);
  }
  tensors.push_back({"a.ids", ScalarType::I64, {3}, ids});
  tensors.push_back({"scalar", ScalarType::F32, {}, floatBytes({-0.5f})});
  tensors.push_back({"flags", ScalarType::Bool, {5}, {1, 0, 0, 1, 1}});
  return tensors;
}

TEST(SafeTensorsTest, RoundTrip) {
  std::vector<SafeTensorData> tensors = sampleTensors();
  std::string file = writeSafeTensors(tensors);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  ASSERT_EQ(view->entries().size(), tensors.size());
  // Entries come back in file order, which is the order written.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafeTensorEntry &e = view->entries()[i];
    EXPECT_EQ(e.name, tensors[i].name);
    EXPECT_EQ(e.dtype, tensors[i].dtype);
    EXPECT_EQ(e.shape, tensors[i].shape);
    ASSERT_EQ(e.size, tensors[i].bytes.size());
    EXPECT_EQ(0, std::memcmp(view->dataStart() + e.offset,
                             tensors[i].bytes.data(), e.size));
    EXPECT_EQ(view->lookup(tensors[i].name), &e);
  }
  EXPECT_EQ(view->lookup("nope"), nullptr);
}

/// lookup() is indexed by name; a copied view must answer from its own
/// entries, not point into the view it was copied from.
TEST(SafeTensorsTest, LookupOnACopiedView) {
  std::vector<SafeTensorData> tensors = sampleTensors();
  std::string file = writeSafeTensors(tensors);
  std::optional<SafeTensorsView> copy;
  {
    auto view = SafeTensorsView::parse(file.data(), file.size());
    ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
    copy = *view;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafeTensorEntry *e = copy->lookup(tensors[i].name);
    ASSERT_NE(e, nullptr) << tensors[i].name;
    EXPECT_EQ(e, &copy->entries()[i]);
    EXPECT_EQ(e->name, tensors[i].name);
  }
  EXPECT_EQ(copy->lookup(""), nullptr);
}

TEST(SafeTensorsTest, DataIsAlignedTo64Bytes) {
  std::string file = writeSafeTensors(sampleTensors());
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  EXPECT_EQ(view->dataOffset() % 64, 0u);
  for (const SafeTensorEntry &e : view->entries())
    EXPECT_EQ((view->dataOffset() + e.offset) % 64, 0u) << e.name;
  // The header is padded with spaces, which JSON allows.
  uint64_t headerSize;
  std::memcpy(&headerSize, file.data(), 8);
  EXPECT_EQ(file[8 + headerSize - 1], ' ');
}

/// The reference implementation (Python's `safetensors`) rejects a gap
/// between tensors, so the writer fills alignment gaps with padding entries:
/// the raw header must tile the data section exactly.
TEST(SafeTensorsTest, WrittenDataSectionHasNoGaps) {
  std::string file = writeSafeTensors(sampleTensors());
  uint64_t headerSize;
  std::memcpy(&headerSize, file.data(), 8);
  auto header = llvm::json::parse(llvm::StringRef(file).substr(8, headerSize));
  ASSERT_TRUE(static_cast<bool>(header)) << llvm::toString(header.takeError());
  std::vector<std::pair<int64_t, int64_t>> ranges;
  size_t paddingEntries = 0;
  for (const auto &[key, value] : *header->getAsObject()) {
    const llvm::json::Array *offsets =
        value.getAsObject()->getArray("data_offsets");
    ASSERT_TRUE(offsets);
    ranges.emplace_back(*(*offsets)[0].getAsInteger(),
                        *(*offsets)[1].getAsInteger());
    if (llvm::StringRef(key).starts_with("__attune_padding_")) {
      ++paddingEntries;
      EXPECT_EQ(*value.getAsObject()->getString("dtype"), "U8");
    }
  }
  llvm::sort(ranges);
  int64_t cursor = 0;
  for (auto [begin, end] : ranges) {
    EXPECT_EQ(begin, cursor);
    cursor = end;
  }
  EXPECT_EQ(static_cast<uint64_t>(cursor), file.size() - 8 - headerSize);
  // b.weight (24 bytes), a.ids (24), scalar (4): three gaps before flags.
  EXPECT_EQ(paddingEntries, 3u);
}

TEST(SafeTensorsTest, DTypeNames) {
  EXPECT_EQ(safeTensorsDTypeName(ScalarType::F32), "F32");
  EXPECT_EQ(safeTensorsDTypeName(ScalarType::BF16), "BF16");
  EXPECT_EQ(safeTensorsDTypeName(ScalarType::Bool), "BOOL");
  EXPECT_EQ(safeTensorsDTypeName(ScalarType::I64), "I64");
}

TEST(SafeTensorsTest, ReadsAFileFromAnotherWriter) {
  // Unaligned, contiguous and with metadata, as the Python library writes.
  std::string file = fileWithHeader(
      R"({"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      8);
  float values[2] = {1.5f, -2.0f};
  std::memcpy(&file[file.size() - 8], values, 8);
  auto lookup = reference::weightsFromSafeTensors(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(lookup)) << llvm::toString(lookup.takeError());
  mlir::MLIRContext context;
  auto type =
      mlir::RankedTensorType::get({2}, mlir::Float32Type::get(&context));
  auto t = (*lookup)("x", type);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->data, (std::vector<double>{1.5, -2.0}));

  // Asking for another shape or dtype, or another name, is an error.
  auto wrongShape = (*lookup)(
      "x", mlir::RankedTensorType::get({1, 2}, type.getElementType()));
  ASSERT_FALSE(static_cast<bool>(wrongShape));
  EXPECT_NE(llvm::toString(wrongShape.takeError()).find("shape [2]"),
            std::string::npos);
  auto wrongType = (*lookup)(
      "x", mlir::RankedTensorType::get({2}, mlir::Float16Type::get(&context)));
  ASSERT_FALSE(static_cast<bool>(wrongType));
  EXPECT_NE(llvm::toString(wrongType.takeError()).find("dtype F32"),
            std::string::npos);
  auto missing = (*lookup)("y", type);
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("'y'"), std::string::npos);
}

TEST(SafeTensorsTest, TruncatedFile) {
  std::string file = writeSafeTensors(sampleTensors());
  EXPECT_NE(parseError(file.substr(0, 5)).find("too short"), std::string::npos);
  // Cut inside the data: the last tensor's offsets now run past the end.
  std::string err = parseError(file.substr(0, file.size() - 2));
  EXPECT_NE(err.find("'flags'"), std::string::npos) << err;
  EXPECT_NE(err.find("run past the end"), std::string::npos) << err;
}

TEST(SafeTensorsTest, HeaderLengthPastEnd) {
  std::string file = fileWithHeader("{}", 0);
  file[0] = 100; // claims 100 bytes of JSON; there are 2
  std::string err = parseError(file);
  EXPECT_NE(err.find("header length 100 runs past the end of the file"),
            std::string::npos)
      << err;
  // A length near 2^64 must not wrap around in the bounds check; it is
  // first of all over the limit on header size.
  std::memset(&file[0], 0xff, 8);
  EXPECT_NE(parseError(file).find("header length 18446744073709551615 "
                                  "exceeds the limit"),
            std::string::npos);
}

TEST(SafeTensorsTest, BadJson) {
  std::string err = parseError(fileWithHeader(R"({"x": {"dtype": )", 0));
  EXPECT_NE(err.find("not valid JSON"), std::string::npos) << err;
  err = parseError(fileWithHeader("[1, 2]", 0));
  EXPECT_NE(err.find("expected the header to be a JSON object"),
            std::string::npos)
      << err;
  err = parseError(fileWithHeader(R"({"x": 3})", 0));
  EXPECT_NE(err.find("tensor 'x': expected a JSON object"), std::string::npos)
      << err;
}

TEST(SafeTensorsTest, MissingFields) {
  std::string err = parseError(
      fileWithHeader(R"({"x":{"shape":[1],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(err.find("tensor 'x': missing 'dtype'"), std::string::npos) << err;
  err = parseError(
      fileWithHeader(R"({"x":{"dtype":"F32","data_offsets":[0,4]}})", 4));
  EXPECT_NE(err.find("tensor 'x': missing 'shape'"), std::string::npos) << err;
  err = parseError(fileWithHeader(R"({"x":{"dtype":"F32","shape":[1]}})", 4));
  EXPECT_NE(err.find("tensor 'x': missing 'data_offsets'"), std::string::npos)
      << err;
  err = parseError(fileWithHeader(
      R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(err.find("non-negative integer"), std::string::npos) << err;
}

TEST(SafeTensorsTest, OffsetsOutOfRange) {
  std::string err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 16));
  EXPECT_NE(err.find("tensor 'w': data_offsets [8, 24] run past the end of "
                     "the data section (16 bytes)"),
            std::string::npos)
      << err;
  err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 16));
  EXPECT_NE(err.find("end before they begin"), std::string::npos) << err;
  err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      16));
  EXPECT_NE(err.find("'b' overlaps tensor 'a'"), std::string::npos) << err;
}

TEST(SafeTensorsTest, WrongDTypeString) {
  std::string err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(err.find("tensor 'w': unknown dtype 'F99'"), std::string::npos)
      << err;
  err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", 8));
  EXPECT_NE(err.find("tensor 'w': unsupported dtype 'F64'"), std::string::npos)
      << err;
}

TEST(SafeTensorsTest, ShapeSizeMismatch) {
  std::string err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 32));
  EXPECT_NE(err.find("tensor 'w': data_offsets [0, 20] hold 20 bytes, but "
                     "dtype F32 and shape [2, 3] need 24"),
            std::string::npos)
      << err;
  // A shape whose byte count overflows 64 bits.
  err = parseError(fileWithHeader(
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})",
      4));
  EXPECT_NE(err.find("overflows"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// The format's rules, one case each, as the reference implementation
// (huggingface/safetensors) enforces them
//===----------------------------------------------------------------------===//

/// llvm::json::parse recurses once per level: a header of a million '[' must
/// be refused by the scan before it, not overflow the stack inside it.
TEST(SafeTensorsFormatTest, DeepNestingIsAnErrorNotACrash) {
  std::string err = parseError(fileWithHeader(std::string(1000000, '['), 0));
  EXPECT_NE(err.find("safetensors: header nests deeper than 128 arrays and "
                     "objects (at byte 128)"),
            std::string::npos)
      << err;
  err = parseError(fileWithHeader(std::string(129, '{'), 0));
  EXPECT_NE(err.find("nests deeper than 128"), std::string::npos) << err;
  // 128 levels is within the bound: the parser sees it, and says what is
  // wrong with it instead.
  err = parseError(
      fileWithHeader(std::string(128, '[') + std::string(128, ']'), 0));
  EXPECT_NE(err.find("expected the header to be a JSON object"),
            std::string::npos)
      << err;
}

/// Brackets inside strings do not nest, an escaped quote does not end the
/// string, and an escaped backslash before a quote does.
TEST(SafeTensorsFormatTest, BracketsInStringsAreNotNesting) {
  std::string brackets(300, '[');
  std::string json = R"({"__metadata__":{"a":")" + brackets + R"(","b":"\")" +
                     brackets + R"(","c":"\\"},)" +
                     R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  std::string file = fileWithHeader(json, 4);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  EXPECT_NE(view->lookup("x"), nullptr);
}

/// The reference's MAX_HEADER_SIZE, checked before anything is read, and
/// before the check against the file size, so a huge length says so.
TEST(SafeTensorsFormatTest, HeaderLengthOverTheLimit) {
  std::string file = fileWithHeader("{}", 0);
  uint64_t length = 100000001;
  std::memcpy(&file[0], &length, 8);
  std::string err = parseError(file);
  EXPECT_NE(err.find("safetensors: header length 100000001 exceeds the limit "
                     "of 100000000 bytes"),
            std::string::npos)
      << err;
  // The limit itself is allowed: this one only runs past the end.
  length = 100000000;
  std::memcpy(&file[0], &length, 8);
  err = parseError(file);
  EXPECT_NE(err.find("header length 100000000 runs past the end of the file"),
            std::string::npos)
      << err;
}

/// llvm::json::parse keeps one of two equal keys; the reader must refuse
/// instead of binding whichever copy survived.
TEST(SafeTensorsFormatTest, DuplicateTensorName) {
  const char *entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  std::string err =
      parseError(fileWithHeader(std::string(R"({"x":)") + entry + R"(,"y":)" +
                                    entry + R"(,"x":)" + entry + "}",
                                4));
  EXPECT_NE(err.find("safetensors: tensor 'x' appears twice in the header"),
            std::string::npos)
      << err;
  // The same name spelt with an escape is the same name.
  err = parseError(fileWithHeader(
      std::string(R"({"x.w":)") + entry + R"(,"\u0078.w":)" + entry + "}", 4));
  EXPECT_NE(err.find("tensor 'x.w' appears twice"), std::string::npos) << err;
  // A field twice inside one entry, and a metadata key twice.
  err = parseError(fileWithHeader(
      R"({"x":{"dtype":"F32","shape":[1],"dtype":"I32","data_offsets":[0,4]}})",
      4));
  EXPECT_NE(err.find("safetensors: tensor 'x': key 'dtype' appears twice"),
            std::string::npos)
      << err;
  err = parseError(
      fileWithHeader(R"({"__metadata__":{"format":"pt","format":"np"}})", 0));
  EXPECT_NE(err.find("safetensors: '__metadata__': key 'format' appears twice"),
            std::string::npos)
      << err;
  // Equal keys in different objects are not duplicates.
  std::string file =
      fileWithHeader(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                     R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     8);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  EXPECT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
}

TEST(SafeTensorsFormatTest, GapBetweenTensors) {
  std::string err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
      12));
  EXPECT_NE(err.find("safetensors: tensor 'b': data_offsets [8, 12] leave a "
                     "gap of 4 bytes after tensor 'a' (data_offsets [0, 4])"),
            std::string::npos)
      << err;
  // A gap before the first tensor.
  err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  EXPECT_NE(err.find("tensor 'a': data_offsets [4, 8] leave the first 4 "
                     "bytes of the data section to no tensor"),
            std::string::npos)
      << err;
}

/// The tensors overlap although the header lists them apart, and, as the
/// old pairwise check missed, with an empty tensor sorted between them.
TEST(SafeTensorsFormatTest, OverlapWithANonNeighbour) {
  std::string err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
      R"("c":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      24));
  EXPECT_NE(err.find("safetensors: tensor 'c' overlaps tensor 'a': "
                     "data_offsets [4, 12] start inside [0, 8]"),
            std::string::npos)
      << err;
  err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},)"
      R"("e":{"dtype":"F32","shape":[0],"data_offsets":[16,16]},)"
      R"("c":{"dtype":"F32","shape":[1],"data_offsets":[20,24]}})",
      32));
  EXPECT_NE(err.find("overlaps tensor 'a'"), std::string::npos) << err;
}

/// An empty tensor takes no bytes, but it still has a place: inside another
/// tensor's range it is an overlap; at a boundary it is fine.
TEST(SafeTensorsFormatTest, EmptyTensorInsideAnothersRange) {
  std::string err = parseError(fileWithHeader(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}})",
      8));
  EXPECT_NE(err.find("safetensors: tensor 'e' overlaps tensor 'a': "
                     "data_offsets [4, 4] start inside [0, 8]"),
            std::string::npos)
      << err;
  std::string file = fileWithHeader(
      R"({"e0":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("e1":{"dtype":"I64","shape":[3,0],"data_offsets":[8,8]}})",
      8);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  EXPECT_EQ(view->lookup("e1")->size, 0u);
  EXPECT_EQ(view->lookup("e1")->shape, (std::vector<int64_t>{3, 0}));
}

TEST(SafeTensorsFormatTest, TrailingBytes) {
  std::string file = writeSafeTensors(sampleTensors()) + "x";
  std::string err = parseError(file);
  EXPECT_NE(err.find("safetensors: 1 trailing bytes after the last tensor "
                     "'flags'"),
            std::string::npos)
      << err;
  err = parseError(fileWithHeader("{}", 4));
  EXPECT_NE(err.find("the header lists no tensors, but the data section has "
                     "4 bytes"),
            std::string::npos)
      << err;
  // No tensors and no data is a valid, empty file.
  file = fileWithHeader(R"({"__metadata__":{}})", 0);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  EXPECT_TRUE(view->entries().empty());
}

/// Every dtype attune reads, through the writer and back, and as another
/// writer lays them out: packed, so most start at an odd address.
TEST(SafeTensorsFormatTest, EachDType) {
  std::vector<SafeTensorData> tensors = {
      {"f32", ScalarType::F32, {2}, floatBytes({1.5f, -2})},
      {"f16", ScalarType::F16, {2}, {0x00, 0x3c, 0x00, 0xc0}},
      {"bf16", ScalarType::BF16, {1}, {0x80, 0x3f}},
      {"i64",
       ScalarType::I64,
       {1},
       {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
      {"i32", ScalarType::I32, {1}, {7, 0, 0, 0}},
      {"i8", ScalarType::I8, {3}, {0x80, 0x7f, 0x00}},
      {"bool", ScalarType::Bool, {2}, {1, 0}},
  };
  std::string written = writeSafeTensors(tensors);
  std::string packedHeader = "{";
  std::string packedData;
  for (const SafeTensorData &t : tensors) {
    if (packedHeader.size() > 1)
      packedHeader += ",";
    packedHeader += llvm::formatv(
        R"("{0}":{"dtype":"{1}","shape":[{2}],"data_offsets":[{3},{4}]})",
        t.name, safeTensorsDTypeName(t.dtype), t.shape[0], packedData.size(),
        packedData.size() + t.bytes.size());
    packedData.append(t.bytes.begin(), t.bytes.end());
  }
  std::string packed = fileWithHeader(packedHeader + "}", 0) + packedData;
  for (const std::string *file : {&written, &packed}) {
    auto view = SafeTensorsView::parse(file->data(), file->size());
    ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
    ASSERT_EQ(view->entries().size(), tensors.size());
    for (const SafeTensorData &t : tensors) {
      const SafeTensorEntry *e = view->lookup(t.name);
      ASSERT_NE(e, nullptr) << t.name;
      EXPECT_EQ(e->dtype, t.dtype) << t.name;
      EXPECT_EQ(e->shape, t.shape) << t.name;
      ASSERT_EQ(e->size, t.bytes.size()) << t.name;
      EXPECT_EQ(0, std::memcmp(view->dataStart() + e->offset, t.bytes.data(),
                               e->size))
          << t.name;
    }
  }
}

/// U8 fills the writer's alignment gaps, so a padding entry may be U8; a
/// tensor may not, since no attune type holds it.
TEST(SafeTensorsFormatTest, U8OnlyForPadding) {
  std::string file = fileWithHeader(
      R"({"__attune_padding_0":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
      R"("x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      8);
  auto view = SafeTensorsView::parse(file.data(), file.size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  ASSERT_EQ(view->entries().size(), 1u);
  EXPECT_EQ(view->entries()[0].name, "x");
  std::string err = parseError(fileWithHeader(
      R"({"u":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(err.find("safetensors: tensor 'u': unsupported dtype 'U8'"),
            std::string::npos)
      << err;
  // Padding is checked like any entry: it must still tile.
  err = parseError(fileWithHeader(
      R"({"__attune_padding_0":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
      R"("x":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
      6));
  EXPECT_NE(err.find("tensor 'x' overlaps tensor '__attune_padding_0'"),
            std::string::npos)
      << err;
}

//===----------------------------------------------------------------------===//
// materializeWeights
//===----------------------------------------------------------------------===//

class MaterializeTest : public ::testing::Test {
protected:
  MaterializeTest() { context.loadDialect<tfm::TfmDialect>(); }

  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef source) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source.str();
    return module;
  }

  /// Float values of tensor `name` in blob `blob`.
  static std::vector<float> values(const std::string &blob,
                                   llvm::StringRef name) {
    auto view = SafeTensorsView::parse(blob.data(), blob.size());
    if (!view) {
      ADD_FAILURE() << llvm::toString(view.takeError());
      return {};
    }
    const SafeTensorEntry *e = view->lookup(name);
    if (!e || e->dtype != ScalarType::F32) {
      ADD_FAILURE() << "no f32 tensor " << name.str();
      return {};
    }
    std::vector<float> out(e->size / 4);
    std::memcpy(out.data(), view->dataStart() + e->offset, e->size);
    return out;
  }

  mlir::MLIRContext context;
  static constexpr const char *kModel = R"mlir(
    module {
      func.func @f() -> (tensor<1000xf32>, tensor<1000xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf16>) {
        %a = tfm.weight "a" {std = 0.5 : f64} : tensor<1000xf32>
        %b = tfm.weight "b" {std = 0.5 : f64} : tensor<1000xf32>
        %g = tfm.weight "g" {init = #tfm.init<ones>} : tensor<4xf32>
        %z = tfm.weight "z" {init = #tfm.init<zeros>} : tensor<4xf32>
        %h = tfm.weight "h" : tensor<8xf16>
        %a2 = tfm.weight "a" {std = 0.5 : f64} : tensor<1000xf32>
        return %a2, %b, %g, %z, %h : tensor<1000xf32>, tensor<1000xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf16>
      }
    })mlir";
};

/// No tfm.weight, no blob: the library then embeds nothing and
/// attune_model_weights() can give NULL/0 as runtime.h promises.
TEST_F(MaterializeTest, NoWeightsGivesAnEmptyBlob) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    })mlir");
  ASSERT_TRUE(module);
  auto blob = materializeWeights(*module, "", 42);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  EXPECT_TRUE(blob->empty()) << blob->size() << " bytes";
}

TEST_F(MaterializeTest, GeneratedWeightsAreDeterministic) {
  auto module = parse(kModel);
  ASSERT_TRUE(module);
  auto first = materializeWeights(*module, "", 42);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  auto second = materializeWeights(*module, "", 42);
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(*first, *second);
  auto other = materializeWeights(*module, "", 43);
  ASSERT_TRUE(static_cast<bool>(other)) << llvm::toString(other.takeError());
  EXPECT_NE(values(*first, "a"), values(*other, "a"));

  // Deduplicated by name, in order of first appearance.
  auto view = SafeTensorsView::parse(first->data(), first->size());
  ASSERT_TRUE(static_cast<bool>(view));
  std::vector<std::string> names;
  for (const SafeTensorEntry &e : view->entries())
    names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "g", "z", "h"}));
  EXPECT_EQ(view->lookup("h")->dtype, ScalarType::F16);
  EXPECT_EQ(view->lookup("h")->size, 16u);
}

TEST_F(MaterializeTest, NormalInitHasRequestedStatistics) {
  auto module = parse(kModel);
  ASSERT_TRUE(module);
  auto blob = materializeWeights(*module, "", 0);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  std::vector<float> a = values(*blob, "a"), b = values(*blob, "b");
  ASSERT_EQ(a.size(), 1000u);
  double mean = 0, sq = 0;
  for (float x : a)
    mean += x;
  mean /= a.size();
  for (float x : a)
    sq += (x - mean) * (x - mean);
  double stddev = std::sqrt(sq / a.size());
  EXPECT_NEAR(stddev, 0.5, 0.05);
  // The mean of 1000 draws has standard error 0.5 / sqrt(1000) ~ 0.016.
  EXPECT_NEAR(mean, 0.0, 0.08);
  // Different names draw different streams.
  EXPECT_NE(a, b);
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i)
    equal += a[i] == b[i];
  EXPECT_LT(equal, 5u);
  EXPECT_EQ(values(*blob, "g"), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(values(*blob, "z"), (std::vector<float>{0, 0, 0, 0}));
}

/// The path every numerics test of the compiler takes: generate weights,
/// then evaluate the model on them through weightsFromSafeTensors.
TEST_F(MaterializeTest, EvaluatorReadsMaterializedWeights) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
      %w = tfm.weight "w" : tensor<3x2xf32>
      %b = tfm.weight "b" {init = #tfm.init<ones>} : tensor<2xf32>
      %y = tfm.linear %x, %w, %b : tensor<1x3xf32>, tensor<3x2xf32>, tensor<2xf32> -> tensor<1x2xf32>
      return %y : tensor<1x2xf32>
    })mlir");
  ASSERT_TRUE(module);
  auto blob = materializeWeights(*module, "", 7);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  auto lookup = reference::weightsFromSafeTensors(blob->data(), blob->size());
  ASSERT_TRUE(static_cast<bool>(lookup)) << llvm::toString(lookup.takeError());
  reference::Tensor x;
  x.shape = {1, 3};
  x.data = {1, -2, 0.5};
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("f");
  auto out = reference::evaluate(fn, {x}, *lookup);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  std::vector<float> w = values(*blob, "w");
  ASSERT_EQ(w.size(), 6u);
  for (int n = 0; n < 2; ++n)
    EXPECT_NEAR((*out)[0].data[n],
                1.0 + 1.0 * w[n] - 2.0 * w[2 + n] + 0.5 * w[4 + n],
                1e-12 + 1.2e-7); // the f32 result is rounded to float
}

TEST_F(MaterializeTest, SameNameWithTwoTypesIsAnError) {
  auto module = parse(R"mlir(
    func.func @f() -> (tensor<4xf32>, tensor<5xf32>) {
      %a = tfm.weight "w" : tensor<4xf32>
      %b = tfm.weight "w" : tensor<5xf32>
      return %a, %b : tensor<4xf32>, tensor<5xf32>
    })mlir");
  ASSERT_TRUE(module);
  auto blob = materializeWeights(*module, "", 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  std::string err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("weight 'w' is declared with two types: tensor<4xf32> "
                     "and tensor<5xf32>"),
            std::string::npos)
      << err;
}

TEST_F(MaterializeTest, WeightsFromAFile) {
  auto module = parse(R"mlir(
    func.func @f() -> (tensor<2xf32>, tensor<3xf32>) {
      %a = tfm.weight "a" : tensor<2xf32>
      %b = tfm.weight "b" : tensor<3xf32>
      return %a, %b : tensor<2xf32>, tensor<3xf32>
    })mlir");
  ASSERT_TRUE(module);
  std::string path = temporaryFile(
      writeSafeTensors({{"extra", ScalarType::F32, {1}, floatBytes({9})},
                        {"b", ScalarType::F32, {3}, floatBytes({4, 5, 6})},
                        {"a", ScalarType::F32, {2}, floatBytes({1, 2})}}));
  auto blob = materializeWeights(*module, path, 0);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  EXPECT_EQ(values(*blob, "a"), (std::vector<float>{1, 2}));
  EXPECT_EQ(values(*blob, "b"), (std::vector<float>{4, 5, 6}));
  auto view = SafeTensorsView::parse(blob->data(), blob->size());
  ASSERT_TRUE(static_cast<bool>(view));
  EXPECT_EQ(view->entries().size(), 2u); // only what the IR uses
  llvm::sys::fs::remove(path);
}

TEST_F(MaterializeTest, MissingOrMismatchedWeightInAFile) {
  auto module = parse(R"mlir(
    func.func @f() -> tensor<2xf32> {
      %a = tfm.weight "h0.attn.c_attn.weight" : tensor<2xf32>
      return %a : tensor<2xf32>
    })mlir");
  ASSERT_TRUE(module);

  std::string path = temporaryFile(
      writeSafeTensors({{"other", ScalarType::F32, {2}, floatBytes({1, 2})}}));
  auto blob = materializeWeights(*module, path, 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  std::string err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("has no tensor 'h0.attn.c_attn.weight'"),
            std::string::npos)
      << err;
  llvm::sys::fs::remove(path);

  path = temporaryFile(writeSafeTensors({{"h0.attn.c_attn.weight",
                                          ScalarType::F32,
                                          {3},
                                          floatBytes({1, 2, 3})}}));
  blob = materializeWeights(*module, path, 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("tensor 'h0.attn.c_attn.weight' has shape [3], but the "
                     "IR declares [2]"),
            std::string::npos)
      << err;
  llvm::sys::fs::remove(path);

  path = temporaryFile(writeSafeTensors(
      {{"h0.attn.c_attn.weight", ScalarType::I32, {2}, floatBytes({1, 2})}}));
  blob = materializeWeights(*module, path, 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("has dtype I32, but the IR declares tensor<2xf32>"),
            std::string::npos)
      << err;
  llvm::sys::fs::remove(path);

  blob = materializeWeights(*module, "/nonexistent/weights.safetensors", 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  err = llvm::toString(blob.takeError());
  EXPECT_NE(
      err.find("cannot open weights file '/nonexistent/weights.safetensors'"),
      std::string::npos)
      << err;
}

//===----------------------------------------------------------------------===//
// Merged weights (tfm-merge-projections)
//===----------------------------------------------------------------------===//

TEST(MergedWeightsTest, BlobKeyRoundTrip) {
  std::vector<WeightPart> parts = {{"q.weight^T", 384}, {"k.weight^T", 128}};
  const std::string key = mergedBlobKey(parts);
  EXPECT_EQ(key, "q.weight^T#384|k.weight^T#128");
  std::optional<std::vector<WeightPart>> parsed = parseMergedBlobKey(key);
  ASSERT_TRUE(parsed.has_value());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].key, "q.weight^T");
  EXPECT_EQ((*parsed)[1].extent, 128);
  // Not merged keys: one part, a missing or bad extent, an empty name.
  for (const char *bad : {"q.weight", "q#3", "q#3|k", "q#3|k#", "q#3|k#x",
                          "q#3|k#0", "q#3|#2", "q#3|k#99999999999999999999"})
    EXPECT_FALSE(parseMergedBlobKey(bad).has_value()) << bad;
}

/// A merged tfm.weight in a model as given binds each part as the weight of
/// its name would (from a file, transposed as the op says) and stores the
/// concatenation; a part the file lacks is named in the error.
TEST_F(MaterializeTest, MergedWeightBindsEachPart) {
  auto module = parse(R"mlir(
    func.func @f() -> tensor<2x5xf32> {
      %w = tfm.weight "q|k" {part_sizes = array<i64: 3, 2>, transpose} : tensor<2x5xf32>
      return %w : tensor<2x5xf32>
    })mlir");
  ASSERT_TRUE(module);
  // The file holds nn.Linear's [out, in]: q is [3, 2], k is [2, 2].
  std::string path = temporaryFile(
      writeSafeTensors({{"q", ScalarType::F32, {3, 2}, floatBytes({1, 2, 3, 4, 5, 6})},
                        {"k", ScalarType::F32, {2, 2}, floatBytes({7, 8, 9, 10})}}));
  auto blob = materializeWeights(*module, path, 0);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  // [in, out]: row 0 is q^T's row 0 then k^T's row 0.
  EXPECT_EQ(values(*blob, "q^T#3|k^T#2"),
            (std::vector<float>{1, 3, 5, 7, 9, 2, 4, 6, 8, 10}));
  llvm::sys::fs::remove(path);

  path = temporaryFile(
      writeSafeTensors({{"q", ScalarType::F32, {3, 2}, floatBytes({1, 2, 3, 4, 5, 6})}}));
  blob = materializeWeights(*module, path, 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  std::string err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("has no tensor 'k' (the IR declares tensor<2x2xf32>)"),
            std::string::npos)
      << err;
  llvm::sys::fs::remove(path);

  // Without a file each part is initialised as a weight of its name: the
  // merged matrix holds the separate weights' values.
  auto separate = parse(R"mlir(
    func.func @f() -> (tensor<2x3xf32>, tensor<2x2xf32>) {
      %q = tfm.weight "q" {transpose} : tensor<2x3xf32>
      %k = tfm.weight "k" {transpose} : tensor<2x2xf32>
      return %q, %k : tensor<2x3xf32>, tensor<2x2xf32>
    })mlir");
  ASSERT_TRUE(separate);
  auto merged = materializeWeights(*module, "", 5);
  auto parts = materializeWeights(*separate, "", 5);
  ASSERT_TRUE(merged && parts);
  std::vector<float> m = values(*merged, "q^T#3|k^T#2"), q = values(*parts, "q^T"),
                     k = values(*parts, "k^T");
  ASSERT_EQ(m.size(), 10u);
  for (int row = 0; row < 2; ++row) {
    for (int col = 0; col < 3; ++col)
      EXPECT_EQ(m[row * 5 + col], q[row * 3 + col]);
    for (int col = 0; col < 2; ++col)
      EXPECT_EQ(m[row * 5 + 3 + col], k[row * 2 + col]);
  }
}

/// After the pass: packWeightBlob builds the merged (and packed) entry from
/// the parts bound before it, drops the parts nothing reads any more, and
/// the reference evaluator, running the model as written, finds each part
/// inside the merged entry; so does the compiler given that blob as the
/// model's weights file.
TEST_F(MaterializeTest, PackWeightBlobMergesAndTheEvaluatorFindsParts) {
  auto written = parse(R"mlir(
    func.func @f() -> (tensor<4x3xf32>, tensor<4x2xf32>, tensor<3xf32>, tensor<2xf32>) {
      %q = tfm.weight "q" : tensor<4x3xf32>
      %k = tfm.weight "k" : tensor<4x2xf32>
      %bq = tfm.weight "bq" : tensor<3xf32>
      %bk = tfm.weight "bk" : tensor<2xf32>
      return %q, %k, %bq, %bk : tensor<4x3xf32>, tensor<4x2xf32>, tensor<3xf32>, tensor<2xf32>
    })mlir");
  ASSERT_TRUE(written);
  auto blob = materializeWeights(*written, "", 11);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  for (bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "packed" : "plain");
    auto compiled = parse(std::string(R"mlir(
      func.func @g(%x: tensor<1x4xf32>) -> tensor<1x5xf32> {
        %w = tfm.weight "q|k" {part_sizes = array<i64: 3, 2>} : tensor<4x5xf32)mlir") +
                          (packed ? ", #tfm.panels<4>" : "") + R"mlir(>
        %b = tfm.weight "bq|bk" {part_sizes = array<i64: 3, 2>} : tensor<5xf32>
        %y = tfm.linear %x, %w, %b : tensor<1x4xf32>, tensor<4x5xf32)mlir" +
                          (packed ? ", #tfm.panels<4>" : "") + R"mlir(>, tensor<5xf32> -> tensor<1x5xf32>
        return %y : tensor<1x5xf32>
      })mlir");
    ASSERT_TRUE(compiled);
    auto derived = packWeightBlob(*compiled, *blob);
    ASSERT_TRUE(static_cast<bool>(derived)) << llvm::toString(derived.takeError());
    auto view = SafeTensorsView::parse(derived->data(), derived->size());
    ASSERT_TRUE(static_cast<bool>(view));
    std::vector<std::string> names;
    for (const SafeTensorEntry &e : view->entries())
      if (e.name.rfind("__attune_padding", 0) != 0)
        names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{
                         "bq#3|bk#2", packed ? "q#3|k#2@panels<4>" : "q#3|k#2"}));

    auto lookup = reference::weightsFromSafeTensors(derived->data(), derived->size());
    ASSERT_TRUE(static_cast<bool>(lookup)) << llvm::toString(lookup.takeError());
    for (auto [name, shape] : {std::pair<const char *, std::vector<int64_t>>{"q", {4, 3}},
                               {"k", {4, 2}}, {"bq", {3}}, {"bk", {2}}}) {
      auto type = mlir::RankedTensorType::get(shape, mlir::Float32Type::get(&context));
      auto part = (*lookup)(name, type);
      ASSERT_TRUE(static_cast<bool>(part)) << name << ": " << llvm::toString(part.takeError());
      std::vector<float> want = values(*blob, name);
      ASSERT_EQ(part->data.size(), want.size()) << name;
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(part->data[i], want[i]) << name << "[" << i << "]";
    }
    auto missing = (*lookup)("v", mlir::RankedTensorType::get({4, 2}, mlir::Float32Type::get(&context)));
    ASSERT_FALSE(static_cast<bool>(missing));
    EXPECT_EQ(llvm::toString(missing.takeError()), "no tensor 'v' in the weights");

    // The library's weights given back to the compiler (a file written
    // with --weights-storage=external): the model as written binds each
    // parameter from inside the merged entries, to the same values.
    std::string path = temporaryFile(*derived);
    auto again = materializeWeights(*written, path, 0);
    ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
    for (const char *name : {"q", "k", "bq", "bk"})
      EXPECT_EQ(values(*again, name), values(*blob, name)) << name;
    llvm::sys::fs::remove(path);
  }
}

} // namespace
