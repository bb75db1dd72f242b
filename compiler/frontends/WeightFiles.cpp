//===- WeightFiles.cpp - the safetensors files of a checkpoint ------------===//
//
// Everything is checked when the checkpoint is opened, not when a tensor is
// looked up: a broken shard or index is then one error naming the file,
// whichever tensors the model happens to use, and every later lookup is a
// hash probe.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/WeightFiles.h"
#include "compiler/frontends/BoundedJson.h"
#include "compiler/frontends/Support.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <map>
#include <utility>

using namespace attune;

namespace {

/// The names Hugging Face gives a checkpoint's files in a model folder.
constexpr llvm::StringLiteral kSingleFileName = "model.safetensors";
constexpr llvm::StringLiteral kIndexFileName = "model.safetensors.index.json";

/// An index lists every tensor once: a few hundred kilobytes for the largest
/// models. The safetensors header's bound is as good as any.
constexpr uint64_t kMaxIndexBytes = 100000000;

/// A valid index nests two deep ({"weight_map": {...}}), and its metadata
/// little more.
constexpr unsigned kMaxIndexDepth = 128;

std::string quoted(llvm::StringRef s) { return ("'" + s + "'").str(); }

} // namespace

llvm::Expected<WeightFiles::File>
WeightFiles::openFile(llvm::StringRef path, llvm::StringRef description) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot open " + description + ": " +
                     buffer.getError().message());
  llvm::Expected<SafeTensorsView> view = SafeTensorsView::parse(
      (*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  if (!view)
    return makeError(description + ": " + llvm::toString(view.takeError()));
  return File{path.str(), std::move(*buffer), std::move(*view)};
}

llvm::Expected<WeightFiles> WeightFiles::open(llvm::StringRef path) {
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> single(path), index(path);
    llvm::sys::path::append(single, kSingleFileName);
    llvm::sys::path::append(index, kIndexFileName);
    if (llvm::sys::fs::is_regular_file(single))
      return openSingle(single);
    if (llvm::sys::fs::is_regular_file(index))
      return openIndex(index);
    return makeError("weights folder '" + path + "' holds neither '" +
                     kSingleFileName + "' nor '" + kIndexFileName + "'");
  }
  if (llvm::sys::path::extension(path) == ".json")
    return openIndex(path);
  return openSingle(path);
}

llvm::Expected<WeightFiles> WeightFiles::openSingle(llvm::StringRef path) {
  WeightFiles files;
  files.description_ = "weights file " + quoted(path);
  llvm::Expected<File> file = openFile(path, files.description_);
  if (!file)
    return file.takeError();
  files.files_.push_back(std::move(*file));
  return std::move(files);
}

llvm::Expected<WeightFiles> WeightFiles::openIndex(llvm::StringRef path) {
  WeightFiles files;
  files.description_ = "weights index " + quoted(path);
  const std::string &index = files.description_;
  auto fail = [&](const llvm::Twine &what) {
    return makeError(index + ": " + what);
  };

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot open " + index + ": " +
                     buffer.getError().message());
  llvm::StringRef text = (*buffer)->getBuffer();
  if (text.size() > kMaxIndexBytes)
    return fail(llvm::formatv("{0} bytes exceed the limit of {1}", text.size(),
                              kMaxIndexBytes));
  std::optional<JsonDuplicateKey> duplicate;
  llvm::Expected<llvm::json::Value> json =
      parseBoundedJson(text, kMaxIndexDepth, duplicate);
  if (!json)
    return makeError(index + " " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("expected a JSON object");
  if (duplicate) {
    if (duplicate->path.size() == 1 && duplicate->path[0] == "weight_map")
      return fail("tensor '" + duplicate->key +
                  "' appears twice in 'weight_map'");
    return fail("key '" + duplicate->key + "' appears twice in " +
                (duplicate->path.empty()
                     ? std::string("the top-level object")
                     : quoted(llvm::join(duplicate->path, "."))));
  }
  const llvm::json::Value *mapValue = root->get("weight_map");
  if (!mapValue)
    return fail("missing 'weight_map' (expected {\"weight_map\": {\"tensor "
                "name\": \"shard file\", ...}})");
  const llvm::json::Object *weightMap = mapValue->getAsObject();
  if (!weightMap)
    return fail("expected 'weight_map' to be a JSON object");

  // JSON objects have no order: sort, so that the shards open, and the
  // first of several errors is reported, the same way every time.
  std::map<std::string, std::string> shardOfName;
  for (const auto &[name, value] : *weightMap) {
    std::optional<llvm::StringRef> shard = value.getAsString();
    if (!shard)
      return fail("expected 'weight_map' entry '" + name.str() +
                  "' to be a shard file name (a string)");
    if (shard->empty() || llvm::sys::path::is_absolute(*shard))
      return fail("'weight_map' entry '" + name.str() + "' names shard '" +
                  *shard + "', expected a path relative to the index");
    shardOfName.emplace(name.str(), shard->str());
  }
  std::map<std::string, size_t> shardIndex; // shard name -> files_ position
  for (const auto &[name, shard] : shardOfName)
    shardIndex.emplace(shard, 0);

  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  std::vector<std::string> shardNames;
  for (auto &[shard, position] : shardIndex) {
    llvm::SmallString<256> shardPath(folder);
    llvm::sys::path::append(shardPath, shard);
    llvm::Expected<File> file =
        openFile(shardPath, "weights file " + quoted(shardPath) + " (shard '" +
                                shard + "' of " + index + ")");
    if (!file)
      return file.takeError();
    position = files.files_.size();
    files.files_.push_back(std::move(*file));
    shardNames.push_back(shard);
  }

  // Every tensor of every shard, so that one in two shards is found even
  // when the index maps it to only one of them.
  for (auto [i, file] : llvm::enumerate(files.files_)) {
    for (const SafeTensorEntry &entry : file.view.entries()) {
      auto [it, inserted] = files.shardOf_.try_emplace(entry.name, i);
      if (!inserted)
        return fail("tensor '" + entry.name + "' is in two shards, '" +
                    shardNames[it->second] + "' and '" + shardNames[i] + "'");
    }
  }
  for (const auto &[name, shard] : shardOfName) {
    auto it = files.shardOf_.find(name);
    if (it == files.shardOf_.end())
      return fail("maps tensor '" + name + "' to shard '" + shard +
                  "', which has no tensor '" + name + "'");
    if (shardNames[it->second] != shard)
      return fail("maps tensor '" + name + "' to shard '" + shard +
                  "', but it is in shard '" + shardNames[it->second] + "'");
  }
  return std::move(files);
}

std::optional<WeightFileTensor>
WeightFiles::lookupPacked(llvm::StringRef name) const {
  for (const File &file : files_)
    if (const SafeTensorEntry *entry = file.view.lookupPanels(name))
      return WeightFileTensor{entry, file.view.dataStart() + entry->offset,
                              file.path};
  return std::nullopt;
}

std::optional<WeightFileTensor>
WeightFiles::lookupMergedPart(llvm::StringRef key, int64_t &offset, int64_t &total) const {
  for (const File &file : files_)
    if (const SafeTensorEntry *entry = file.view.lookupMergedPart(key, offset, total))
      return WeightFileTensor{entry, file.view.dataStart() + entry->offset, file.path};
  return std::nullopt;
}

std::optional<WeightFileTensor>
WeightFiles::lookup(llvm::StringRef name) const {
  const File *file = nullptr;
  if (files_.size() == 1 && shardOf_.empty()) {
    file = &files_[0];
  } else {
    auto it = shardOf_.find(name);
    if (it == shardOf_.end())
      return std::nullopt;
    file = &files_[it->second];
  }
  const SafeTensorEntry *entry = file->view.lookup(name);
  if (!entry)
    return std::nullopt;
  return WeightFileTensor{entry, file->view.dataStart() + entry->offset,
                          file->path};
}
