//===- NpyTest.cpp - the .npy reader and writer ---------------------------===//
//
// attune-run reads model inputs from .npy files and writes outputs to them,
// so a file misread would silently feed a model the wrong numbers. Every
// dtype must survive a round trip, headers must be byte-for-byte what NumPy
// writes, and each kind of malformed file must be refused with a message
// naming the file and the fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/support/Npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace attune::npy;
using ::testing::HasSubstr;

namespace {

/// A .npy file by hand: magic, version, little-endian header length, the
/// dict as given (no padding: readers must not need it) and the data.
std::string npyBytes(const std::string &dict, const std::string &data = "",
                     int major = 1) {
  std::string bytes("\x93NUMPY", 6);
  bytes += static_cast<char>(major);
  bytes += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return bytes + dict + data;
}

/// The error parseHeader gives for a whole file held in `bytes`.
std::string parseError(const std::string &bytes) {
  Header header;
  return parseHeader(bytes, bytes.size(), "x.npy", header);
}

/// A file of this process: ctest runs each test case as its own process,
/// two at a time, and cases that wrote the same name raced (one read the
/// file while the other removed it).
std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/npy_test_" + std::to_string(getpid()) + "_" +
         name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

const std::string kF32Dict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";

//===----------------------------------------------------------------------===//
// Writing and reading back
//===----------------------------------------------------------------------===//

/// Writes `count` elements of `type` with distinct bytes under `shape`,
/// reads them back and compares header and data.
void roundTrip(ElementType type, const std::vector<int64_t> &shape,
               size_t count) {
  SCOPED_TRACE(elementTypeName(type));
  std::vector<unsigned char> data(count * elementSize(type));
  for (size_t i = 0; i < data.size(); ++i)
    // Bools must stay 0 or 1; other types get every byte value.
    data[i] = type == ElementType::Bool ? i % 3 == 0 : (i * 37 + 11) & 0xff;
  std::string path = tempPath(std::string(elementTypeName(type)) + ".npy");
  ASSERT_EQ(writeFile(path, type, shape, data.data()), "");

  Header header;
  ASSERT_EQ(readHeader(path, header), "");
  EXPECT_EQ(header.majorVersion, 1);
  EXPECT_EQ(header.type, type);
  EXPECT_EQ(header.shape, shape);
  EXPECT_EQ(header.dataOffset % 64, 0u) << "NumPy aligns data to 64 bytes";
  EXPECT_EQ(header.dataBytes, data.size());
  std::vector<unsigned char> back(data.size() + 1, 0xee);
  ASSERT_EQ(readData(path, header, back.data()), "");
  back.pop_back();
  EXPECT_EQ(back, data);
  std::remove(path.c_str());
}

TEST(NpyTest, RoundTripEveryElementType) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::F64, ElementType::I32,
        ElementType::I64, ElementType::I8, ElementType::U8, ElementType::Bool})
    roundTrip(type, {2, 3, 4}, 24);
}

TEST(NpyTest, RoundTripZeroDOneDAndEmpty) {
  roundTrip(ElementType::F32, {}, 1);
  roundTrip(ElementType::I64, {5}, 5);
  roundTrip(ElementType::I32, {0, 3}, 0);
}

/// The bytes NumPy 1.x and 2.x write for np.zeros((2, 7), np.float32):
/// attune-run's outputs must load with np.load and look like NumPy's own.
TEST(NpyTest, HeaderIsNumPys) {
  std::string header;
  ASSERT_EQ(formatHeader(ElementType::F32, {2, 7}, header), "");
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 7), }";
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                         std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  EXPECT_EQ(header, expected);

  ASSERT_EQ(formatHeader(ElementType::Bool, {5}, header), "");
  EXPECT_NE(header.find("{'descr': '|b1', 'fortran_order': False, "
                        "'shape': (5,), }"),
            std::string::npos);
  ASSERT_EQ(formatHeader(ElementType::I64, {}, header), "");
  EXPECT_NE(header.find("'shape': (), }"), std::string::npos);
}

TEST(NpyTest, LongHeaderIsWrittenAsVersion2) {
  // 30000 dimensions of 1: "1, " each, over 1.0's 65535-byte limit.
  std::vector<int64_t> shape(30000, 1);
  std::string header;
  ASSERT_EQ(formatHeader(ElementType::F32, shape, header), "");
  EXPECT_EQ(header[6], 2);
  EXPECT_EQ(header.size() % 64, 0u);
  Header parsed;
  std::string file = header + std::string(4, '\0');
  ASSERT_EQ(parseHeader(file, file.size(), "long.npy", parsed), "");
  EXPECT_EQ(parsed.majorVersion, 2);
  EXPECT_EQ(parsed.shape, shape);
  EXPECT_EQ(parsed.dataOffset, header.size());
}

TEST(NpyTest, NegativeDimensionIsNotWritten) {
  std::string header;
  EXPECT_THAT(formatHeader(ElementType::F32, {2, -1}, header),
              HasSubstr("negative"));
}

//===----------------------------------------------------------------------===//
// Headers other writers produce
//===----------------------------------------------------------------------===//

TEST(NpyTest, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    Header header;
    std::string file = npyBytes(kF32Dict, std::string(24, '\0'), major);
    ASSERT_EQ(parseHeader(file, file.size(), "x.npy", header), "");
    EXPECT_EQ(header.majorVersion, major);
    EXPECT_EQ(header.dataOffset, 12 + kF32Dict.size());
    EXPECT_EQ(header.shape, (std::vector<int64_t>{2, 3}));
  }
}

/// Python's literal syntax allows other spellings than NumPy's: double
/// quotes, keys in any order, no trailing comma, Python 2's long suffix,
/// 1-byte descrs with a byte order, no padding or newline.
TEST(NpyTest, ReadsOtherSpellingsOfTheDict) {
  Header header;
  std::string file =
      npyBytes("{\"shape\":(3L,) ,\"fortran_order\":False,\"descr\":\"<i1\"}",
               std::string(3, '\0'));
  ASSERT_EQ(parseHeader(file, file.size(), "x.npy", header), "");
  EXPECT_EQ(header.type, ElementType::I8);
  EXPECT_EQ(header.shape, std::vector<int64_t>{3});

  file = npyBytes("{'descr': '|u1', 'fortran_order': False, "
                  "'shape': (2, 1,), }   \n",
                  std::string(2, '\0'));
  ASSERT_EQ(parseHeader(file, file.size(), "x.npy", header), "");
  EXPECT_EQ(header.type, ElementType::U8);
  EXPECT_EQ(header.shape, (std::vector<int64_t>{2, 1}));
}

TEST(NpyTest, ZeroSizedShapeWithHugeDimension) {
  // NumPy allows it; the element count is 0, not an overflow.
  Header header;
  std::string file = npyBytes("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (0, 9223372036854775807), }");
  ASSERT_EQ(parseHeader(file, file.size(), "x.npy", header), "");
  EXPECT_EQ(header.dataBytes, 0u);
}

//===----------------------------------------------------------------------===//
// Malformed files
//===----------------------------------------------------------------------===//

TEST(NpyTest, NegativeBadMagic) {
  EXPECT_EQ(parseError("PK\x03\x04 not numpy at all"),
            "'x.npy': not a .npy file: it does not start with the magic "
            "string \\x93NUMPY");
  EXPECT_THAT(parseError(""), HasSubstr("not a .npy file"));
}

TEST(NpyTest, NegativeUnsupportedVersion) {
  EXPECT_EQ(parseError(npyBytes(kF32Dict, std::string(24, '\0'), 4)),
            "'x.npy': unsupported .npy format version 4.0 (1.0, 2.0 and "
            "3.0 are read)");
}

TEST(NpyTest, NegativeTruncatedHeader) {
  std::string file = npyBytes(kF32Dict);
  EXPECT_THAT(parseError(file.substr(0, 7)),
              HasSubstr("'x.npy': truncated header: the file has 7 bytes"));
  EXPECT_THAT(parseError(file.substr(0, 9)), HasSubstr("truncated header"));
  EXPECT_EQ(parseError(file.substr(0, 40)),
            "'x.npy': truncated header: the header needs " +
                std::to_string(10 + kF32Dict.size()) +
                " bytes, the file has 40");
}

TEST(NpyTest, NegativeTruncatedData) {
  std::string file = npyBytes(kF32Dict, std::string(20, '\0'));
  size_t offset = 10 + kF32Dict.size();
  EXPECT_EQ(parseError(file),
            "'x.npy' is truncated: it has " + std::to_string(offset + 20) +
                " bytes, expected " + std::to_string(offset + 24) + " (a " +
                std::to_string(offset) +
                "-byte header and 24 bytes of <f4 data of shape (2, 3))");
}

TEST(NpyTest, NegativeTrailingData) {
  EXPECT_THAT(parseError(npyBytes(kF32Dict, std::string(28, '\0'))),
              HasSubstr("'x.npy' has 4 bytes after its data"));
}

TEST(NpyTest, NegativeFortranOrder) {
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'fortran_order': True, "
                                  "'shape': (2, 3), }",
                                  std::string(24, '\0'))),
              HasSubstr("'x.npy': Fortran-order arrays are not supported"));
}

TEST(NpyTest, NegativeUnsupportedDescr) {
  auto withDescr = [](const std::string &descrText) {
    return parseError(npyBytes("{'descr': '" + descrText +
                               "', 'fortran_order': False, 'shape': (2,), }"));
  };
  EXPECT_EQ(withDescr("<c8"),
            "'x.npy': unsupported dtype descr '<c8'; supported: <f4 <f2 <f8 "
            "<i4 <i8 |i1 |u1 |b1");
  EXPECT_THAT(withDescr(">f4"),
              HasSubstr("unsupported dtype descr '>f4' (big-endian data is "
                        "not supported: save arr.astype('<f4'))"));
  EXPECT_THAT(withDescr("<U5"), HasSubstr("unsupported dtype descr '<U5'"));
  EXPECT_THAT(parseError(npyBytes("{'descr': [('a', '<f4')], "
                                  "'fortran_order': False, 'shape': (2,), }")),
              HasSubstr("'descr' is a list (a structured dtype)"));
}

TEST(NpyTest, NegativeHeaderNotADict) {
  EXPECT_EQ(parseError(npyBytes("[1, 2, 3]\n")),
            "'x.npy': header is not a valid dict: expected '{' starting the "
            "dict at offset 0, found '[' in \"[1, 2, 3]?\"");
  EXPECT_THAT(parseError(npyBytes("{'descr' '<f4'}")),
              HasSubstr("expected ':' after key 'descr' at offset 9"));
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False}")),
              HasSubstr("missing key 'shape'"));
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'fortran_order': 0, "
                                  "'shape': (2,)}")),
              HasSubstr("expected True or False as the value of "
                        "'fortran_order'"));
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (2,), 'extra': 1}")),
              HasSubstr("unknown key 'extra'"));
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'descr': '<f4', "
                                  "'fortran_order': False, 'shape': (2,)}")),
              HasSubstr("key 'descr' appears twice"));
  EXPECT_THAT(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (2,)} junk")),
              HasSubstr("expected only spaces and a newline after the dict"));
  // NUL padding is not Python whitespace.
  EXPECT_THAT(parseError(npyBytes(std::string("{'descr': '<f4', "
                                              "'fortran_order': False, "
                                              "'shape': (0,)}\0\0",
                                              57))),
              HasSubstr("after the dict at offset 55, found byte 0"));
  EXPECT_THAT(parseError(npyBytes(std::string("{'descr': '\0i1', "
                                              "'fortran_order': False, "
                                              "'shape': (0,)}",
                                              55))),
              HasSubstr("unsupported dtype descr"));
  EXPECT_THAT(parseError(npyBytes("{'descr: '<f4'")),
              HasSubstr("expected ':' after key 'descr: '"));
  EXPECT_THAT(parseError(npyBytes("{'descr")),
              HasSubstr("unterminated string starting at offset 1"));
}

TEST(NpyTest, NegativeBadShape) {
  auto withShape = [](const std::string &shape) {
    return parseError(npyBytes(
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "}"));
  };
  EXPECT_THAT(withShape("(5)"),
              HasSubstr("'shape' is (5), an integer, not a tuple: a 1-d "
                        "shape is written (5,)"));
  EXPECT_THAT(withShape("[2, 3]"), HasSubstr("'shape' is a list"));
  EXPECT_THAT(withShape("(2, -3)"), HasSubstr("'shape' has a negative"));
  EXPECT_THAT(withShape("(2, x)"), HasSubstr("expected an integer in 'shape'"));
  EXPECT_THAT(withShape("(2 3)"), HasSubstr("expected ',' or ')' in 'shape'"));
}

TEST(NpyTest, NegativeShapeOverflow) {
  auto withShape = [](const std::string &shape) {
    return parseError(npyBytes(
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "}"));
  };
  // Fits int64 per dimension, not as a byte count.
  EXPECT_EQ(withShape("(4294967296, 4294967296)"),
            "'x.npy': shape (4294967296, 4294967296) of <f4 has more bytes "
            "than fit in 64 bits");
  EXPECT_EQ(withShape("(4611686018427387904,)"),
            "'x.npy': shape (4611686018427387904,) of <f4 has more bytes "
            "than fit in 64 bits");
  EXPECT_THAT(withShape("(99999999999999999999,)"),
              HasSubstr("dimension 0 of 'shape' does not fit in 64 bits"));
}

TEST(NpyTest, NegativeHugeHeaderLength) {
  std::string file("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  EXPECT_THAT(parseError(file),
              HasSubstr("header length 2147483647 is over the 1048576 bytes"));
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

TEST(NpyTest, NegativeFiles) {
  Header header;
  std::string missing = tempPath("missing.npy");
  EXPECT_EQ(readHeader(missing, header),
            "cannot open '" + missing + "': No such file or directory");
  EXPECT_EQ(readHeader(::testing::TempDir(), header),
            "'" + ::testing::TempDir() + "' is not a regular file");

  // The reader checks the file's real size, not only what the header says.
  std::string truncated = tempPath("truncated.npy");
  writeBytes(truncated, npyBytes(kF32Dict, std::string(23, '\0')));
  EXPECT_THAT(readHeader(truncated, header),
              HasSubstr("'" + truncated + "' is truncated"));
  writeBytes(truncated, npyBytes(kF32Dict).substr(0, 30));
  EXPECT_THAT(readHeader(truncated, header),
              HasSubstr("'" + truncated + "': truncated header"));
  std::remove(truncated.c_str());
}

TEST(NpyTest, NegativeBoolOtherThanZeroOrOne) {
  std::string path = tempPath("bool.npy");
  writeBytes(path, npyBytes("{'descr': '|b1', 'fortran_order': False, "
                            "'shape': (3,), }",
                            std::string("\x01\x00\x02", 3)));
  Header header;
  ASSERT_EQ(readHeader(path, header), "");
  char data[3];
  EXPECT_EQ(readData(path, header, data),
            "'" + path + "': bool element 2 is 2, expected 0 or 1");
  std::remove(path.c_str());
}

} // namespace
