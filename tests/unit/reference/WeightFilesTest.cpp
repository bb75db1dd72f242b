//===- WeightFilesTest.cpp - single-file and sharded checkpoints ----------===//
//
// Opening a checkpoint the ways Hugging Face lays one out (one file, an
// index and its shards, the folder holding either), and one case per way an
// index and its shards can disagree: each must be an error naming the index
// and the shard or tensor at fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/WeightFiles.h"
#include "compiler/frontends/Weights.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "tests/unit/reference/SafeTensorsTestSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace attune;
using namespace attune::testing;

namespace {

constexpr const char *kShard1 = "model-00001-of-00002.safetensors";
constexpr const char *kShard2 = "model-00002-of-00002.safetensors";

/// A two-shard checkpoint: a and b in the first shard, c in the second.
class ShardsTest : public ::testing::Test {
protected:
  ShardsTest() {
    dir.write(kShard1,
              writeSafeTensors({{"a", ScalarType::F32, {2}, floatBytes({1, 2})},
                                {"b", ScalarType::F32, {1}, floatBytes({3})}}));
    dir.write(
        kShard2,
        writeSafeTensors({{"c", ScalarType::F32, {3}, floatBytes({4, 5, 6})}}));
  }

  /// Writes model.safetensors.index.json with this weight_map and returns
  /// its path.
  std::string writeIndex(const llvm::Twine &weightMap) {
    return dir.write(
        "model.safetensors.index.json",
        (R"({"metadata": {"total_size": 24}, "weight_map": )" + weightMap + "}")
            .str());
  }

  std::string defaultIndex() {
    return writeIndex(llvm::formatv(R"({{"a": "{0}", "b": "{0}", "c": "{1}"})",
                                    kShard1, kShard2)
                          .str());
  }

  /// The error text of opening `path` (empty and a test failure on success).
  static std::string openError(llvm::StringRef path) {
    auto files = WeightFiles::open(path);
    if (files) {
      ADD_FAILURE() << "expected an error opening " << path.str();
      return "";
    }
    return llvm::toString(files.takeError());
  }

  /// The float values of `name` in `files`.
  static std::vector<float> values(const WeightFiles &files,
                                   llvm::StringRef name) {
    std::optional<WeightFileTensor> t = files.lookup(name);
    if (!t) {
      ADD_FAILURE() << "no tensor " << name.str();
      return {};
    }
    std::vector<float> out(t->entry->size / 4);
    std::memcpy(out.data(), t->data, t->entry->size);
    return out;
  }

  TemporaryDirectory dir;
};

TEST_F(ShardsTest, IndexAndItsFolder) {
  std::string index = defaultIndex();
  for (const std::string &path : {index, dir.path()}) {
    auto files = WeightFiles::open(path);
    ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
    EXPECT_EQ(files->numFiles(), 2u);
    EXPECT_EQ(files->description(), "weights index '" + index + "'");
    EXPECT_EQ(values(*files, "a"), (std::vector<float>{1, 2}));
    EXPECT_EQ(values(*files, "b"), (std::vector<float>{3}));
    EXPECT_EQ(values(*files, "c"), (std::vector<float>{4, 5, 6}));
    EXPECT_EQ(files->lookup("c")->file, dir.file(kShard2));
    EXPECT_FALSE(files->lookup("d"));
  }
}

/// The path the compiler takes: materializeWeights binds across shards.
TEST_F(ShardsTest, MaterializeFromShards) {
  mlir::MLIRContext context;
  context.loadDialect<tfm::TfmDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f() -> (tensor<2xf32>, tensor<3xf32>) {
      %a = tfm.weight "a" : tensor<2xf32>
      %c = tfm.weight "c" : tensor<3xf32>
      return %a, %c : tensor<2xf32>, tensor<3xf32>
    })mlir",
                                                        &context);
  ASSERT_TRUE(module);
  std::string index = defaultIndex();
  auto blob = materializeWeights(*module, dir.path(), 0);
  ASSERT_TRUE(static_cast<bool>(blob)) << llvm::toString(blob.takeError());
  auto view = SafeTensorsView::parse(blob->data(), blob->size());
  ASSERT_TRUE(static_cast<bool>(view)) << llvm::toString(view.takeError());
  ASSERT_EQ(view->entries().size(), 2u);
  const SafeTensorEntry *c = view->lookup("c");
  ASSERT_NE(c, nullptr);
  std::vector<float> got(3);
  std::memcpy(got.data(), view->dataStart() + c->offset, 12);
  EXPECT_EQ(got, (std::vector<float>{4, 5, 6}));

  // A name no shard holds is an error naming the index.
  module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f() -> tensor<2xf32> {
      %d = tfm.weight "d" : tensor<2xf32>
      return %d : tensor<2xf32>
    })mlir",
                                                   &context);
  ASSERT_TRUE(module);
  blob = materializeWeights(*module, index, 0);
  ASSERT_FALSE(static_cast<bool>(blob));
  std::string err = llvm::toString(blob.takeError());
  EXPECT_NE(err.find("weights index '" + index + "' has no tensor 'd'"),
            std::string::npos)
      << err;
}

/// transformers' from_pretrained looks for the single file first; so do we.
TEST_F(ShardsTest, SingleFileWinsInAFolder) {
  defaultIndex();
  std::string single = dir.write(
      "model.safetensors",
      writeSafeTensors({{"a", ScalarType::F32, {2}, floatBytes({7, 8})}}));
  auto files = WeightFiles::open(dir.path());
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_EQ(files->description(), "weights file '" + single + "'");
  EXPECT_EQ(values(*files, "a"), (std::vector<float>{7, 8}));
  EXPECT_FALSE(files->lookup("c"));
}

TEST_F(ShardsTest, FolderWithNeither) {
  std::string err = openError(dir.path());
  EXPECT_NE(err.find("weights folder '" + dir.path() +
                     "' holds neither 'model.safetensors' nor "
                     "'model.safetensors.index.json'"),
            std::string::npos)
      << err;
}

TEST_F(ShardsTest, MissingShard) {
  std::string index = writeIndex(
      R"({"a": "model-00001-of-00002.safetensors", "z": "gone.safetensors"})");
  std::string err = openError(index);
  EXPECT_NE(err.find("cannot open weights file '" +
                     dir.file("gone.safetensors") +
                     "' (shard 'gone.safetensors' of weights index '" + index +
                     "'): "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("o such file or directory"), std::string::npos) << err;
}

/// A corrupt shard is reported with the parser's message, and which shard of
/// which index it is.
TEST_F(ShardsTest, CorruptShard) {
  std::string index = defaultIndex();
  std::string bytes =
      writeSafeTensors({{"c", ScalarType::F32, {3}, floatBytes({4, 5, 6})}});
  dir.write(kShard2, bytes.substr(0, bytes.size() - 1));
  std::string err = openError(index);
  EXPECT_NE(err.find("weights file '" + dir.file(kShard2) + "' (shard '" +
                     kShard2 + "' of weights index '" + index +
                     "'): safetensors: tensor 'c': data_offsets"),
            std::string::npos)
      << err;
}

TEST_F(ShardsTest, IndexMapsATensorToAShardThatLacksIt) {
  std::string index = writeIndex(
      llvm::formatv(R"({{"a": "{0}", "b": "{0}", "c": "{0}", "x": "{1}"})",
                    kShard1, kShard2));
  std::string err = openError(index);
  // c is found, in the other shard; x is nowhere. Names sort: c comes first.
  EXPECT_NE(err.find("weights index '" + index +
                     "': maps tensor 'c' to shard '" + kShard1 +
                     "', but it is in shard '" + kShard2 + "'"),
            std::string::npos)
      << err;
  index = writeIndex(
      llvm::formatv(R"({{"a": "{0}", "x": "{1}"})", kShard1, kShard2));
  err = openError(index);
  EXPECT_NE(err.find("maps tensor 'x' to shard '" + std::string(kShard2) +
                     "', which has no tensor 'x'"),
            std::string::npos)
      << err;
}

TEST_F(ShardsTest, TensorInTwoShards) {
  dir.write(kShard2, writeSafeTensors(
                         {{"c", ScalarType::F32, {1}, floatBytes({4})},
                          {"a", ScalarType::F32, {2}, floatBytes({0, 0})}}));
  std::string index = defaultIndex();
  std::string err = openError(index);
  EXPECT_NE(err.find("weights index '" + index +
                     "': tensor 'a' is in two "
                     "shards, '" +
                     kShard1 + "' and '" + kShard2 + "'"),
            std::string::npos)
      << err;
}

TEST_F(ShardsTest, BrokenIndex) {
  std::string index =
      dir.write("model.safetensors.index.json", "{\"weight_map");
  std::string err = openError(index);
  EXPECT_NE(err.find("weights index '" + index + "' is not valid JSON"),
            std::string::npos)
      << err;

  dir.write("model.safetensors.index.json", std::string(100000, '['));
  err = openError(index);
  EXPECT_NE(err.find("weights index '" + index + "' nests deeper than 128"),
            std::string::npos)
      << err;

  dir.write("model.safetensors.index.json", "[]");
  err = openError(index);
  EXPECT_NE(err.find("weights index '" + index + "': expected a JSON object"),
            std::string::npos)
      << err;

  dir.write("model.safetensors.index.json", R"({"metadata": {}})");
  err = openError(index);
  EXPECT_NE(err.find("weights index '" + index + "': missing 'weight_map'"),
            std::string::npos)
      << err;

  writeIndex("[]");
  err = openError(index);
  EXPECT_NE(err.find("expected 'weight_map' to be a JSON object"),
            std::string::npos)
      << err;

  writeIndex(R"({"a": 1})");
  err = openError(index);
  EXPECT_NE(err.find("expected 'weight_map' entry 'a' to be a shard file name"),
            std::string::npos)
      << err;

  writeIndex(R"({"a": "/etc/model.safetensors"})");
  err = openError(index);
  EXPECT_NE(err.find("'weight_map' entry 'a' names shard "
                     "'/etc/model.safetensors', expected a path relative to "
                     "the index"),
            std::string::npos)
      << err;

  writeIndex(llvm::formatv(R"({{"a": "{0}", "a": "{1}"})", kShard1, kShard2));
  err = openError(index);
  EXPECT_NE(err.find("weights index '" + index +
                     "': tensor 'a' appears twice in 'weight_map'"),
            std::string::npos)
      << err;

  err = openError(dir.file("nothing.index.json"));
  EXPECT_NE(err.find("cannot open weights index '" +
                     dir.file("nothing.index.json") + "'"),
            std::string::npos)
      << err;
}

/// The single-file path keeps its old message for a missing file, which the
/// driver's lit tests check.
TEST(WeightFilesTest, MissingSingleFile) {
  auto files = WeightFiles::open("/nonexistent/weights.safetensors");
  ASSERT_FALSE(static_cast<bool>(files));
  std::string err = llvm::toString(files.takeError());
  EXPECT_NE(
      err.find("cannot open weights file '/nonexistent/weights.safetensors'"),
      std::string::npos)
      << err;
}

} // namespace
