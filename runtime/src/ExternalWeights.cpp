//===- ExternalWeights.cpp - a weights file, mapped and checked ----------===//
//
// The file is opened once (O_NONBLOCK, so that a FIFO given by mistake fails
// the regular-file check instead of blocking the open), checked with fstat on
// that descriptor rather than by a second lookup of the path, and mapped
// whole. Nothing in it is parsed: the host code addresses each weight at an
// offset fixed at compile time, so what matters is that the file is the one
// it was compiled with, which the size (always) and the hash (unless
// ATTUNE_WEIGHTS_VERIFY=0) establish.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/ExternalWeights.h"
#include "runtime/src/Status.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

namespace attune::runtime {

//===----------------------------------------------------------------------===//
// XXH64
//===----------------------------------------------------------------------===//
//
// XXH64 rather than a byte-at-a-time hash such as FNV-1a: its four
// independent 64-bit lanes run at memory speed (about 10 GB/s on one core
// here), where FNV-1a's chain of multiplies manages about 1 GB/s, and a
// weights file is hundreds of megabytes to gigabytes. It is a checksum
// against the wrong or a damaged file, not a defence against a forged one.

namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/// Little-endian loads; memcpy because the bytes may sit at any alignment.
inline uint64_t read64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    v = __builtin_bswap64(v);
  return v;
}
inline uint32_t read32(const unsigned char *p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    v = __builtin_bswap32(v);
  return v;
}

inline uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * kPrime2;
  return rotl(acc, 31) * kPrime1;
}

inline uint64_t mergeRound(uint64_t acc, uint64_t lane) {
  acc ^= round(0, lane);
  return acc * kPrime1 + kPrime4;
}

} // namespace

uint64_t xxh64(const void *data, size_t size, uint64_t seed) noexcept {
  const auto *p = static_cast<const unsigned char *>(data);
  const unsigned char *end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed,
             v4 = seed - kPrime1;
    for (const unsigned char *limit = end - 32; p <= limit; p += 32) {
      v1 = round(v1, read64(p));
      v2 = round(v2, read64(p + 8));
      v3 = round(v3, read64(p + 16));
      v4 = round(v4, read64(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = seed + kPrime5;
  }
  h += static_cast<uint64_t>(size);
  for (; end - p >= 8; p += 8) {
    h ^= round(0, read64(p));
    h = rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (end - p >= 4) {
    h ^= static_cast<uint64_t>(read32(p)) * kPrime1;
    h = rotl(h, 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) {
    h ^= static_cast<uint64_t>(*p) * kPrime5;
    h = rotl(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

//===----------------------------------------------------------------------===//
// The mapping
//===----------------------------------------------------------------------===//

WeightsMapping::~WeightsMapping() { reset(nullptr, 0); }

void WeightsMapping::reset(void *data, size_t size) {
  if (data_)
    munmap(data_, size_);
  data_ = data;
  size_ = size;
}

namespace {

/// Closes a file descriptor when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0)
      close(fd);
  }
};

/// Whether the hash is checked: ATTUNE_WEIGHTS_VERIFY unset, empty or "1"
/// says yes, "0" no; anything else is refused, as a mistyped ATTUNE_CPU is,
/// rather than read as either.
attune_status_t verifyWanted(bool &verify) {
  const char *value = std::getenv("ATTUNE_WEIGHTS_VERIFY");
  verify = true;
  if (!value || !*value || std::strcmp(value, "1") == 0)
    return ATTUNE_OK;
  if (std::strcmp(value, "0") == 0) {
    verify = false;
    return ATTUNE_OK;
  }
  return fail(ATTUNE_INVALID_ARGUMENT,
              "ATTUNE_WEIGHTS_VERIFY is '%s', expected 0 (check only the "
              "weights file's size) or 1 (also its hash, the default)",
              value);
}

} // namespace

attune_status_t mapExternalWeights(const attune_model_abi_t &abi,
                                   const char *weightsPath,
                                   const char *libraryPath,
                                   const std::string &origin,
                                   WeightsMapping &out) {
  out.reset(nullptr, 0);
  const char *fileName = abi.weights_file;
  const char *model = origin.c_str();
  bool verify;
  if (attune_status_t status = verifyWanted(verify))
    return status;

  // Where to look, and how that place was chosen, for the messages.
  std::string path;
  const char *source;
  bool mayBeDirectory = true;
  const char *fromEnvironment = std::getenv("ATTUNE_WEIGHTS_PATH");
  if (weightsPath) {
    if (!*weightsPath)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "cannot open the weights of %s: weights_path is empty",
                  model);
    path = weightsPath;
    source = "the weights path given";
  } else if (fromEnvironment && *fromEnvironment) {
    path = fromEnvironment;
    source = "from ATTUNE_WEIGHTS_PATH";
  } else if (libraryPath) {
    const char *slash = std::strrchr(libraryPath, '/');
    path = slash ? std::string(libraryPath, slash + 1) + fileName
                 : std::string(fileName);
    source = "looked for beside the library; ATTUNE_WEIGHTS_PATH or "
             "attune_model_open_with_weights can name another place";
    mayBeDirectory = false;
  } else {
    return fail(ATTUNE_NOT_FOUND,
                "%s keeps its weights in a file '%s' (compiled with "
                "--weights-storage=external), and a static model has no "
                "directory to look for it in: pass its path to "
                "attune_model_open_static_with_weights or set "
                "ATTUNE_WEIGHTS_PATH",
                model, fileName);
  }
  struct stat info;
  if (mayBeDirectory && stat(path.c_str(), &info) == 0 &&
      S_ISDIR(info.st_mode)) {
    if (path.back() != '/')
      path += '/';
    path += fileName;
  }

  FileDescriptor file;
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      return fail(ATTUNE_NOT_FOUND,
                  "cannot open the weights of %s: '%s' does not exist (%s)",
                  model, path.c_str(), source);
    return fail(ATTUNE_INVALID_LIBRARY,
                "cannot open the weights of %s: '%s': %s (%s)", model,
                path.c_str(), std::strerror(error), source);
  }
  if (fstat(file.fd, &info) != 0)
    return fail(ATTUNE_INVALID_LIBRARY,
                "cannot open the weights of %s: '%s': %s", model, path.c_str(),
                std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return fail(ATTUNE_INVALID_LIBRARY,
                "cannot open the weights of %s: '%s' is not a regular file",
                model, path.c_str());
  // validateDescriptor made weights_size positive.
  if (static_cast<uint64_t>(info.st_size) !=
      static_cast<uint64_t>(abi.weights_size))
    return fail(ATTUNE_INVALID_LIBRARY,
                "weights file '%s' of %s has %" PRId64
                " bytes, expected %" PRId64
                ": it is not the file the library was compiled with",
                path.c_str(), model, static_cast<int64_t>(info.st_size),
                abi.weights_size);
  if (static_cast<uint64_t>(abi.weights_size) > SIZE_MAX)
    return fail(ATTUNE_OUT_OF_MEMORY,
                "weights file '%s' of %s is too large to map", path.c_str(),
                model);
  size_t size = static_cast<size_t>(abi.weights_size);

  // The hash reads every page at once, so fault them in up front (one
  // kernel call instead of a fault per page); without it, leave the kernels'
  // first run to fault in what it reads.
  void *data = mmap(nullptr, size, PROT_READ,
                    MAP_PRIVATE | (verify ? MAP_POPULATE : 0), file.fd, 0);
  if (data == MAP_FAILED) {
    int error = errno;
    return fail(error == ENOMEM ? ATTUNE_OUT_OF_MEMORY : ATTUNE_INVALID_LIBRARY,
                "cannot map the weights file '%s' of %s: %s", path.c_str(),
                model, std::strerror(error));
  }
  out.reset(data, size);
  if (verify) {
    uint64_t hash = xxh64(data, size);
    if (hash != abi.weights_hash) {
      out.reset(nullptr, 0);
      return fail(ATTUNE_INVALID_LIBRARY,
                  "weights file '%s' does not match %s: its XXH64 is "
                  "%016" PRIx64 ", the library expects %016" PRIx64
                  " (a file from another compile, or a damaged one)",
                  path.c_str(), model, hash, abi.weights_hash);
    }
  }
  return ATTUNE_OK;
}

} // namespace attune::runtime
