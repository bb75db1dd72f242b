//===- SafeTensorsTestSupport.h - safetensors test files --------*- C++ -*-===//
//
// Hand-made safetensors bytes and temporary files and folders, shared by the
// reader's tests and the weight binding's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_REFERENCE_SAFETENSORSTESTSUPPORT_H
#define ATTUNE_TESTS_UNIT_REFERENCE_SAFETENSORSTESTSUPPORT_H

#include "compiler/frontends/SafeTensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace attune::testing {

inline std::vector<uint8_t> floatBytes(std::vector<float> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// A file with the given header text and `dataSize` zero bytes after it.
inline std::string fileWithHeader(llvm::StringRef json, size_t dataSize) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += json.str();
  out.append(dataSize, '\0');
  return out;
}

/// The error text of parsing `bytes` (empty and a test failure on success).
inline std::string parseError(const std::string &bytes) {
  auto view = SafeTensorsView::parse(bytes.data(), bytes.size());
  if (view) {
    ADD_FAILURE() << "expected a parse error";
    return "";
  }
  return llvm::toString(view.takeError());
}

/// Writes `contents` to `path`, failing the test if it cannot.
inline void writeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path.str() << ": " << ec.message();
  os << contents;
}

/// Writes `contents` to a fresh temporary file and returns its path.
inline std::string temporaryFile(const std::string &contents) {
  llvm::SmallString<128> path;
  int fd;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("reference_test",
                                                  "safetensors", fd, path));
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << contents;
  return std::string(path);
}

/// A fresh folder, removed with everything in it when the test ends.
class TemporaryDirectory {
public:
  TemporaryDirectory() {
    EXPECT_FALSE(
        llvm::sys::fs::createUniqueDirectory("attune-weights-test", path_));
  }
  ~TemporaryDirectory() { llvm::sys::fs::remove_directories(path_); }
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;

  std::string path() const { return std::string(path_); }
  /// The path of `name` inside the folder.
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> p(path_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  /// Writes `contents` to `name` inside the folder and returns its path.
  std::string write(llvm::StringRef name, llvm::StringRef contents) const {
    std::string p = file(name);
    writeFile(p, contents);
    return p;
  }

private:
  llvm::SmallString<128> path_;
};

} // namespace attune::testing

#endif // ATTUNE_TESTS_UNIT_REFERENCE_SAFETENSORSTESTSUPPORT_H
