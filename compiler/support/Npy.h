//===- Npy.h - NumPy .npy files: read and write -----------------*- C++ -*-===//
//
// Reads and writes the NumPy array file format (format versions 1.0, 2.0 and
// 3.0, https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)
// so that tools exchange tensors with Python without a converter:
//
//   "\x93NUMPY" <major> <minor> <header length: LE u16 (1.0) or u32 (2.0, 3.0)>
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 7), }<spaces>\n
//   <data: dense, C order>
//
// Only what a tensor of attune's can be is read: little-endian numbers and
// bools in C order. Every other file is refused with a message naming the
// file and what is wrong with it, never read in part: all lengths are checked
// against the file's size before any data is trusted.
//
// Plain C++ with no LLVM, MLIR or Halide and no exceptions (every function
// returns an error message, empty on success), so tools and tests can link it
// alone. The data is copied as bytes, so the host must be little-endian.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_SUPPORT_NPY_H
#define ATTUNE_COMPILER_SUPPORT_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attune::npy {

/// Element types a .npy file can hold that this library reads and writes.
/// More than attune's tensors have (U8, F64): a file of those still parses,
/// so a tool can say "expected f32, the file holds f64" instead of calling
/// NumPy's default dtype unsupported. There is no bf16: NumPy has no descr
/// for it.
enum class ElementType { F32, F16, F64, I32, I64, I8, U8, Bool };

/// The descr NumPy writes for `type` ("<f4", "|b1", ...).
const char *descr(ElementType type);

/// attune's name for `type` ("f32", "bool", ...; "u8" and "f64" for the two
/// types attune's tensors lack).
const char *elementTypeName(ElementType type);

/// Bytes of one element.
size_t elementSize(ElementType type);

/// What a .npy header says, with the layout of the file it came from.
struct Header {
  int majorVersion = 1;
  ElementType type = ElementType::F32;
  /// Empty for a 0-d array (one element).
  std::vector<int64_t> shape;
  /// Bytes before the data: the magic, version, length and the header.
  uint64_t dataOffset = 0;
  /// Element count times element size; checked not to overflow.
  uint64_t dataBytes = 0;
};

/// "(2, 7)", "(5,)" or "()": the shape as NumPy prints it, for messages.
std::string shapeString(const std::vector<int64_t> &shape);

/// Parses the header at the start of a .npy file of `fileSize` bytes;
/// `prefix` holds the file's first bytes (at least the whole header, or the
/// whole file if shorter) and `name` names the file in messages. Checks that
/// the data after the header is exactly as long as the shape says.
[[nodiscard]] std::string parseHeader(std::string_view prefix,
                                      uint64_t fileSize, std::string_view name,
                                      Header &out);

/// Reads and checks the header of the file at `path` (see parseHeader).
[[nodiscard]] std::string readHeader(const std::string &path, Header &out);

/// Reads the data of the file at `path`, whose header `readHeader` returned,
/// into `dest` (header.dataBytes bytes). A bool element other than 0 or 1 is
/// an error: attune's bools are one byte holding 0 or 1.
[[nodiscard]] std::string readData(const std::string &path,
                                   const Header &header, void *dest);

/// The bytes of a .npy header for an array of `type` and `shape` in C order,
/// through the newline that ends it: format 1.0, or 2.0 when the header is
/// too long for 1.0's 16-bit length. Padded with spaces so that the data
/// starts at a multiple of 64 bytes, as NumPy does. Fails on a negative
/// dimension.
[[nodiscard]] std::string formatHeader(ElementType type,
                                       const std::vector<int64_t> &shape,
                                       std::string &out);

/// Writes `data` (dense, C order, the size `shape` gives) as a .npy file at
/// `path`, replacing any file there.
[[nodiscard]] std::string writeFile(const std::string &path, ElementType type,
                                    const std::vector<int64_t> &shape,
                                    const void *data);

} // namespace attune::npy

#endif // ATTUNE_COMPILER_SUPPORT_NPY_H
