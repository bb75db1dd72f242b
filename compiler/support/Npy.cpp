//===- Npy.cpp - NumPy .npy files: read and write -------------------------===//
//
// The header is a Python dict literal. NumPy reads it with a restricted
// eval; this reads the one shape NumPy (and every other writer) produces -
// string keys, a string, True/False, a tuple of integers - with a small
// recursive-descent parser, so a malformed header gets a message saying
// which part is wrong rather than "cannot parse".
//
//===----------------------------------------------------------------------===//

#include "compiler/support/Npy.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>

// The data is copied byte for byte between files and tensors, and every
// descr this library accepts or writes is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "Npy.cpp assumes a little-endian host");

namespace attune::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// Real headers are a few hundred bytes (rank 8 needs under 200); the cap
/// keeps a corrupt 32-bit length field of a large file from making
/// readHeader allocate gigabytes.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;

/// Every descr this library reads, as NumPy writes it.
struct DescrEntry {
  const char *descr;
  ElementType type;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", ElementType::F32}, {"<f2", ElementType::F16},
    {"<f8", ElementType::F64}, {"<i4", ElementType::I32},
    {"<i8", ElementType::I64}, {"|i1", ElementType::I8},
    {"|u1", ElementType::U8},  {"|b1", ElementType::Bool},
};

std::string quoted(std::string_view name) {
  return "'" + std::string(name) + "'";
}

/// The descr's element type, or an error naming it and what is accepted.
std::string lookupDescr(const std::string &descrText, ElementType &out) {
  // One-byte types have no byte order; NumPy writes '|', but '<', '>' and
  // '=' mean the same bytes.
  for (const DescrEntry &entry : kDescrs) {
    std::string_view known = entry.descr;
    if (descrText == known ||
        (known[0] == '|' && descrText.size() == 3 &&
         std::string_view("<>=").find(descrText[0]) != std::string_view::npos &&
         descrText.compare(1, 2, known.substr(1)) == 0)) {
      out = entry.type;
      return "";
    }
  }
  std::string supported;
  for (const DescrEntry &entry : kDescrs)
    supported += std::string(supported.empty() ? "" : " ") + entry.descr;
  std::string why;
  if (!descrText.empty() && descrText[0] == '>')
    why = " (big-endian data is not supported: save arr.astype('<" +
          descrText.substr(1) + "'))";
  return "unsupported dtype descr '" + descrText + "'" + why +
         "; supported: " + supported;
}

/// Reads the dict literal of a header. Each parse step returns an error
/// message, empty on success; `pos` is where the error was found.
class DictParser {
public:
  explicit DictParser(std::string_view text) : text(text) {}

  std::string parse(std::string &descrText, bool &fortranOrder,
                    std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return expected("'{' starting the dict");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (peek() != '\'' && peek() != '"')
        return expected("a quoted key or '}'");
      if (std::string error = parseString(key); !error.empty())
        return error;
      skipSpace();
      if (!consume(':'))
        return expected("':' after key '" + key + "'");
      skipSpace();
      bool *seen;
      std::string error;
      if (key == "descr") {
        seen = &haveDescr;
        error = parseDescr(descrText);
      } else if (key == "fortran_order") {
        seen = &haveOrder;
        error = parseBool(key, fortranOrder);
      } else if (key == "shape") {
        seen = &haveShape;
        error = parseShape(shape);
      } else {
        return "unknown key '" + key +
               "' (expected 'descr', 'fortran_order' and 'shape')";
      }
      if (!error.empty())
        return error;
      if (*seen)
        return "key '" + key + "' appears twice";
      *seen = true;
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return expected("',' or '}' after the value of '" + key + "'");
    }
    // NumPy pads the dict with spaces and ends it with '\n'.
    skipSpace();
    if (pos != text.size())
      return expected("only spaces and a newline after the dict");
    if (!haveDescr)
      return "missing key 'descr'";
    if (!haveOrder)
      return "missing key 'fortran_order'";
    if (!haveShape)
      return "missing key 'shape'";
    return "";
  }

private:
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }

  bool consume(char c) {
    if (pos >= text.size() || text[pos] != c)
      return false;
    ++pos;
    return true;
  }

  void skipSpace() {
    while (pos < text.size() && std::string_view(" \t\r\n").find(text[pos]) !=
                                    std::string_view::npos)
      ++pos;
  }

  /// "expected X at offset N, found 'c'".
  std::string expected(const std::string &what) const {
    std::string found = "the end";
    if (pos < text.size()) {
      unsigned char c = static_cast<unsigned char>(text[pos]);
      found = std::isprint(c) ? "'" + std::string(1, text[pos]) + "'"
                              : "byte " + std::to_string(c);
    }
    return "expected " + what + " at offset " + std::to_string(pos) +
           ", found " + found;
  }

  /// A Python string literal in single or double quotes. No header NumPy
  /// writes has escapes, so a backslash is refused rather than interpreted.
  std::string parseString(std::string &out) {
    char quote = peek();
    size_t start = ++pos;
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\\')
        return expected("a string without escapes");
      ++pos;
    }
    if (pos >= text.size())
      return "unterminated string starting at offset " +
             std::to_string(start - 1);
    out = std::string(text.substr(start, pos - start));
    ++pos;
    return "";
  }

  std::string parseDescr(std::string &out) {
    if (peek() == '[')
      return "'descr' is a list (a structured dtype), which is not supported";
    if (peek() != '\'' && peek() != '"')
      return expected("a quoted string as the value of 'descr'");
    return parseString(out);
  }

  std::string parseBool(const std::string &key, bool &out) {
    if (text.substr(pos, 4) == "True") {
      pos += 4;
      out = true;
    } else if (text.substr(pos, 5) == "False") {
      pos += 5;
      out = false;
    } else {
      return expected("True or False as the value of '" + key + "'");
    }
    return "";
  }

  /// A tuple of non-negative integers: "()", "(5,)", "(2, 7)" or "(2, 7,)".
  /// Python 2's NumPy wrote long integers with an 'L' suffix; it is skipped.
  std::string parseShape(std::vector<int64_t> &out) {
    out.clear();
    if (peek() == '[')
      return "'shape' is a list; it must be a tuple";
    if (!consume('('))
      return expected("a tuple as the value of 'shape'");
    skipSpace();
    if (consume(')'))
      return "";
    while (true) {
      size_t start = pos;
      if (peek() == '-')
        return "'shape' has a negative dimension at offset " +
               std::to_string(pos);
      uint64_t value = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        value = value * 10 + (text[pos] - '0');
        if (value > static_cast<uint64_t>(INT64_MAX))
          return "dimension " + std::to_string(out.size()) +
                 " of 'shape' does not fit in 64 bits";
        ++pos;
      }
      if (pos == start)
        return expected("an integer in 'shape'");
      consume('L');
      out.push_back(static_cast<int64_t>(value));
      skipSpace();
      if (consume(',')) {
        skipSpace();
        if (consume(')'))
          return "";
        continue;
      }
      if (consume(')')) {
        // Python reads "(5)" as the integer 5, not a tuple; so does NumPy.
        if (out.size() == 1)
          return "'shape' is (" + std::to_string(out[0]) +
                 "), an integer, not a tuple: a 1-d shape is written (" +
                 std::to_string(out[0]) + ",)";
        return "";
      }
      return expected("',' or ')' in 'shape'");
    }
  }

  std::string_view text;
  size_t pos = 0;
};

/// The fixed part before the dict: magic, version and header length. Sets
/// the version and the offset of the data (the dict's end).
std::string parsePreamble(std::string_view prefix, uint64_t fileSize,
                          std::string_view name, int &majorVersion,
                          uint64_t &dataOffset) {
  if (fileSize < kMagicSize || prefix.size() < kMagicSize ||
      prefix.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize))
    return quoted(name) + ": not a .npy file: it does not start with the "
                          "magic string \\x93NUMPY";
  if (prefix.size() < kMagicSize + 2)
    return quoted(name) + ": truncated header: the file has " +
           std::to_string(fileSize) + " bytes, the magic and version need 8";
  auto byte = [&](size_t i) {
    return static_cast<uint64_t>(static_cast<unsigned char>(prefix[i]));
  };
  int major = static_cast<int>(byte(6)), minor = static_cast<int>(byte(7));
  if (major < 1 || major > 3 || minor != 0)
    return quoted(name) + ": unsupported .npy format version " +
           std::to_string(major) + "." + std::to_string(minor) +
           " (1.0, 2.0 and 3.0 are read)";
  // 1.0 has a 16-bit header length; 2.0 and 3.0 a 32-bit one.
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t preamble = kMagicSize + 2 + lengthBytes;
  if (prefix.size() < preamble)
    return quoted(name) + ": truncated header: the file has " +
           std::to_string(fileSize) + " bytes, a format " +
           std::to_string(major) + ".0 header's length field ends at byte " +
           std::to_string(preamble);
  uint64_t headerBytes = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerBytes |= byte(8 + i) << (8 * i);
  if (headerBytes > kMaxHeaderBytes)
    return quoted(name) + ": header length " + std::to_string(headerBytes) +
           " is over the " + std::to_string(kMaxHeaderBytes) +
           " bytes this reader accepts";
  majorVersion = major;
  dataOffset = preamble + headerBytes;
  if (fileSize < dataOffset)
    return quoted(name) + ": truncated header: the header needs " +
           std::to_string(dataOffset) + " bytes, the file has " +
           std::to_string(fileSize);
  return "";
}

/// Element count times `size`, or false when it overflows 64 bits. A zero
/// dimension makes the product zero whatever the others are, as in NumPy.
bool byteCount(const std::vector<int64_t> &shape, uint64_t size,
               uint64_t &out) {
  for (int64_t d : shape)
    if (d == 0) {
      out = 0;
      return true;
    }
  out = size;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(out, static_cast<uint64_t>(d), &out))
      return false;
  return true;
}

/// Closes a FILE on every return path.
struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

std::string systemError(const std::string &what, const std::string &path) {
  return "cannot " + what + " " + quoted(path) + ": " + std::strerror(errno);
}

} // namespace

const char *descr(ElementType type) {
  for (const DescrEntry &entry : kDescrs)
    if (entry.type == type)
      return entry.descr;
  return "?";
}

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::F64:
    return "f64";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::I8:
    return "i8";
  case ElementType::U8:
    return "u8";
  case ElementType::Bool:
    return "bool";
  }
  return "unknown";
}

size_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
    return 2;
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::Bool:
    return 1;
  }
  return 0;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string parseHeader(std::string_view prefix, uint64_t fileSize,
                        std::string_view name, Header &out) {
  int major = 0;
  uint64_t dataOffset = 0;
  if (std::string error =
          parsePreamble(prefix, fileSize, name, major, dataOffset);
      !error.empty())
    return error;
  if (prefix.size() < dataOffset)
    return quoted(name) + ": truncated header: the header needs " +
           std::to_string(dataOffset) + " bytes, only " +
           std::to_string(prefix.size()) + " were read";
  size_t dictStart = major == 1 ? 10 : 12;
  std::string_view dict = prefix.substr(dictStart, dataOffset - dictStart);

  std::string descrText;
  bool fortranOrder = false;
  Header header;
  if (std::string error =
          DictParser(dict).parse(descrText, fortranOrder, header.shape);
      !error.empty()) {
    // The header is short text; quoting (the start of) it shows the
    // offsets the message counts in.
    std::string shown(dict.substr(0, 120));
    for (char &c : shown)
      if (!std::isprint(static_cast<unsigned char>(c)))
        c = '?';
    return quoted(name) + ": header is not a valid dict: " + error + " in \"" +
           shown + (dict.size() > 120 ? "..." : "") + "\"";
  }
  if (std::string error = lookupDescr(descrText, header.type); !error.empty())
    return quoted(name) + ": " + error;
  if (fortranOrder)
    return quoted(name) + ": Fortran-order arrays are not supported (save "
                          "np.ascontiguousarray(arr) for C order)";
  uint64_t dataBytes = 0, expectedSize = 0;
  if (!byteCount(header.shape, elementSize(header.type), dataBytes) ||
      __builtin_add_overflow(dataOffset, dataBytes, &expectedSize))
    return quoted(name) + ": shape " + shapeString(header.shape) + " of " +
           descrText + " has more bytes than fit in 64 bits";
  std::string layout = " (a " + std::to_string(dataOffset) +
                       "-byte header and " + std::to_string(dataBytes) +
                       " bytes of " + descrText + " data of shape " +
                       shapeString(header.shape) + ")";
  if (fileSize < expectedSize)
    return quoted(name) + " is truncated: it has " + std::to_string(fileSize) +
           " bytes, expected " + std::to_string(expectedSize) + layout;
  if (fileSize > expectedSize)
    return quoted(name) + " has " + std::to_string(fileSize - expectedSize) +
           " bytes after its data: it has " + std::to_string(fileSize) +
           " bytes, expected " + std::to_string(expectedSize) + layout;
  header.majorVersion = major;
  header.dataOffset = dataOffset;
  header.dataBytes = dataBytes;
  out = std::move(header);
  return "";
}

std::string readHeader(const std::string &path, Header &out) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return systemError("open", path);
  struct stat info;
  if (fstat(fileno(file.get()), &info) != 0)
    return systemError("stat", path);
  if (!S_ISREG(info.st_mode))
    return quoted(path) + " is not a regular file";
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);

  // The preamble first, for the header's length; then the whole header.
  std::string prefix(std::min<uint64_t>(fileSize, 12), '\0');
  if (std::fread(prefix.data(), 1, prefix.size(), file.get()) != prefix.size())
    return systemError("read", path);
  int major = 0;
  uint64_t dataOffset = 0;
  if (std::string error =
          parsePreamble(prefix, fileSize, path, major, dataOffset);
      !error.empty())
    return error;
  // A header length of 0 or 1 in a 1.0 file puts the data before the end of
  // the bytes already read: nothing more to read then (prefix.size() - have
  // would wrap, and fread would write past the string).
  size_t have = std::min<uint64_t>(prefix.size(), dataOffset);
  prefix.resize(dataOffset);
  if (std::fread(prefix.data() + have, 1, prefix.size() - have, file.get()) !=
      prefix.size() - have)
    return systemError("read", path);
  return parseHeader(prefix, fileSize, path, out);
}

std::string readData(const std::string &path, const Header &header,
                     void *dest) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return systemError("open", path);
  if (fseeko(file.get(), static_cast<off_t>(header.dataOffset), SEEK_SET) != 0)
    return systemError("seek in", path);
  size_t got = std::fread(dest, 1, header.dataBytes, file.get());
  if (got != header.dataBytes)
    return quoted(path) + ": read " + std::to_string(got) + " of " +
           std::to_string(header.dataBytes) +
           " data bytes (did the file change after its header was read?)";
  if (header.type == ElementType::Bool) {
    const unsigned char *bytes = static_cast<const unsigned char *>(dest);
    for (uint64_t i = 0; i < header.dataBytes; ++i)
      if (bytes[i] > 1)
        return quoted(path) + ": bool element " + std::to_string(i) + " is " +
               std::to_string(bytes[i]) + ", expected 0 or 1";
  }
  return "";
}

std::string formatHeader(ElementType type, const std::vector<int64_t> &shape,
                         std::string &out) {
  for (int64_t d : shape)
    if (d < 0)
      return "cannot write shape " + shapeString(shape) +
             ": a dimension is negative";
  std::string dict =
      std::string("{'descr': '") + descr(type) +
      "', 'fortran_order': False, 'shape': " + shapeString(shape) + ", }";
  // 1.0 when the header's length fits its 16-bit field, else 2.0; 3.0 only
  // differs in allowing UTF-8, which an ASCII header never needs.
  int major = 1;
  size_t preamble = kMagicSize + 4;
  size_t unpadded = preamble + dict.size() + 1;
  size_t padding = (64 - unpadded % 64) % 64;
  if (dict.size() + padding + 1 > 0xffff) {
    major = 2;
    preamble = kMagicSize + 6;
    unpadded = preamble + dict.size() + 1;
    padding = (64 - unpadded % 64) % 64;
  }
  uint64_t headerBytes = dict.size() + padding + 1;
  out.assign(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - kMagicSize - 2; ++i)
    out += static_cast<char>((headerBytes >> (8 * i)) & 0xff);
  out += dict;
  out.append(padding, ' ');
  out += '\n';
  return "";
}

std::string writeFile(const std::string &path, ElementType type,
                      const std::vector<int64_t> &shape, const void *data) {
  std::string header;
  if (std::string error = formatHeader(type, shape, header); !error.empty())
    return quoted(path) + ": " + error;
  uint64_t dataBytes = 0;
  if (!byteCount(shape, elementSize(type), dataBytes))
    return quoted(path) + ": shape " + shapeString(shape) +
           " has more bytes than fit in 64 bits";
  FilePtr file(std::fopen(path.c_str(), "wb"));
  if (!file)
    return systemError("create", path);
  bool ok = std::fwrite(header.data(), 1, header.size(), file.get()) ==
                header.size() &&
            std::fwrite(data, 1, dataBytes, file.get()) == dataBytes;
  // fclose flushes, so it reports a full disk too.
  ok = std::fclose(file.release()) == 0 && ok;
  if (!ok) {
    std::string error = systemError("write", path);
    std::remove(path.c_str());
    return error;
  }
  return "";
}

} // namespace attune::npy
