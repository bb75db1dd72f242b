//===- KernelCache.cpp - on-disk cache of compiled kernel objects ---------===//

#include "compiler/pipeline/KernelCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstdlib>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attune::pipeline {

std::string defaultKernelCacheDir() {
  if (const char *env = std::getenv("ATTUNE_KERNEL_CACHE"); env && *env)
    return env;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    path = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "attune");
  return std::string(path);
}

namespace {

/// "path size mtime-ns" for one file, or just the path if it cannot be read.
void describeFile(llvm::StringRef path, llvm::raw_ostream &os) {
  struct stat st;
  os << path;
  if (::stat(path.str().c_str(), &st) == 0)
    os << ' ' << static_cast<uint64_t>(st.st_size) << ' '
       << static_cast<uint64_t>(st.st_mtim.tv_sec) << '.'
       << static_cast<uint64_t>(st.st_mtim.tv_nsec);
  os << '\n';
}

int collectObject(struct dl_phdr_info *info, size_t, void *data) {
  auto *names = static_cast<std::vector<std::string> *>(data);
  llvm::StringRef name = info->dlpi_name ? info->dlpi_name : "";
  llvm::StringRef base = llvm::sys::path::filename(name);
  // libHalide and a shared AttuneHalideCodegen generate the kernels; other
  // libraries (the runtime, libMLIR) do not change them and stay out, so
  // rebuilding those keeps the cache.
  if (base.contains("Halide"))
    names->push_back(name.str());
  return 0;
}

std::string computeBuildId() {
  std::string description;
  llvm::raw_string_ostream os(description);
  // /proc/self/exe resolves to the binary itself; stat follows the link.
  describeFile("/proc/self/exe", os);
  std::vector<std::string> objects;
  dl_iterate_phdr(collectObject, &objects);
  // Load order can differ between runs; the id must not.
  std::sort(objects.begin(), objects.end());
  for (const std::string &object : objects)
    describeFile(object, os);
  return llvm::utohexstr(llvm::xxh3_64bits(description), /*LowerCase=*/true);
}

} // namespace

const std::string &compilerBuildId() {
  static const std::string id = computeBuildId();
  return id;
}

std::string kernelCacheKey(llvm::StringRef name, llvm::StringRef schedule,
                           llvm::ArrayRef<std::string> featureSets,
                           llvm::StringRef buildId) {
  std::string material;
  llvm::raw_string_ostream os(material);
  os << name << '\n' << schedule << '\n';
  for (const std::string &features : featureSets)
    os << features << '\n';
  os << buildId;
  // Long symbol names stay readable but bounded; the hash keeps them unique.
  std::string key = name.take_front(120).str();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '-')
      c = '_';
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(llvm::xxh3_64bits(material)));
  return key + "-" + hex;
}

std::string KernelCache::pathFor(llvm::StringRef key) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".o");
  return std::string(path);
}

std::optional<std::string> KernelCache::lookup(llvm::StringRef key) const {
  if (!enabled())
    return std::nullopt;
  std::string path = pathFor(key);
  uint64_t size = 0;
  // An empty file is never a valid object (a crashed writer before the
  // rename cannot leave one, but a user's `touch` can).
  if (llvm::sys::fs::file_size(path, size) || size == 0)
    return std::nullopt;
  return path;
}

std::string KernelCache::store(llvm::StringRef key,
                               llvm::StringRef objectPath) const {
  if (!enabled())
    return "";
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return "cannot create kernel cache '" + dir + "': " + ec.message();
  std::string finalPath = pathFor(key);
  llvm::SmallString<256> model(finalPath);
  model += ".tmp-%%%%%%%%";
  int fd = -1;
  llvm::SmallString<256> tmpPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, tmpPath))
    return "cannot write to kernel cache '" + dir + "': " + ec.message();
  ::close(fd);
  if (std::error_code ec = llvm::sys::fs::copy_file(objectPath, tmpPath)) {
    llvm::sys::fs::remove(tmpPath);
    return ("cannot copy '" + objectPath + "' to the kernel cache: " +
            ec.message())
        .str();
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpPath, finalPath)) {
    llvm::sys::fs::remove(tmpPath);
    return "cannot rename into the kernel cache: " + ec.message();
  }
  return "";
}

} // namespace attune::pipeline
