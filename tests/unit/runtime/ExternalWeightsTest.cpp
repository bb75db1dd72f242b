//===- ExternalWeightsTest.cpp - weights kept in a file beside a library --===//
//
// The test model built with EXTERNAL_WEIGHTS (test_model.c) records that its
// 8 bytes of weights, "weights!", are in test_model_weights.safetensors, and
// its run() fails unless handed exactly those bytes. These tests put that
// file (or a wrong one) where the runtime looks for it: beside a copy of the
// library, at ATTUNE_WEIGHTS_PATH, or at a path given to the API.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "tests/support/ScopedEnv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using attune::testing::ScopedEnv;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char *kWeightsName = "test_model_weights.safetensors";
constexpr const char *kWeights = "weights!";

std::string message() { return attune_status_message(); }

/// Owns a handle for the duration of a test.
struct ModelHandle {
  attune_model_t *model = nullptr;
  ModelHandle() = default;
  ModelHandle(const ModelHandle &) = delete;
  ModelHandle &operator=(const ModelHandle &) = delete;
  ~ModelHandle() { attune_model_close(model); }
};

/// One run of the test model on small inputs (see RuntimeTest.cpp's Problem):
/// y[b, s, d] = mask ? scale[d] * ids : 0.
attune_status_t runOnce(attune_model_t *model, std::vector<float> &y) {
  std::vector<int32_t> ids = {1, 2, 3};
  std::vector<uint8_t> mask = {1, 1, 0};
  std::vector<float> scale = {0.5f, -1.0f, 2.0f, 3.0f};
  y.assign(12, -1.0f);
  attune_tensor_t inputs[3] = {{ids.data(), ATTUNE_DTYPE_I32, 2, {1, 3}},
                               {mask.data(), ATTUNE_DTYPE_BOOL, 2, {1, 3}},
                               {scale.data(), ATTUNE_DTYPE_F32, 1, {4}}};
  attune_tensor_t outputs[1] = {{y.data(), ATTUNE_DTYPE_F32, 3, {1, 3, 4}}};
  return attune_model_run(model, inputs, 3, outputs, 1);
}

/// Whether this process maps `path` (as /proc/self/maps names it).
bool isMapped(const std::string &path) {
  std::ifstream maps("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(maps)), {});
  return text.find(fs::canonical(path).string()) != std::string::npos;
}

class ExternalWeightsTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/attune_weights_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  std::string file(const std::string &name) const { return dir + "/" + name; }
  void write(const std::string &path, const std::string &contents) {
    std::ofstream(path, std::ios::binary) << contents;
  }
  /// A copy of the external test library in the test's directory, so that
  /// "beside the library" is a place the test controls.
  std::string copyLibrary() {
    std::string copy = file("libexternal.so");
    fs::copy_file(ATTUNE_TEST_MODEL_EXTERNAL_PATH, copy,
                  fs::copy_options::overwrite_existing);
    return copy;
  }

  std::string dir;
  // Every test starts from the default search and the default check.
  ScopedEnv noPath{"ATTUNE_WEIGHTS_PATH", nullptr};
  ScopedEnv noVerify{"ATTUNE_WEIGHTS_VERIFY", nullptr};
};

/// The default: the file the library names, in the library's directory,
/// mapped for as long as the handle is open and handed to run().
TEST_F(ExternalWeightsTest, FoundBesideTheLibrary) {
  std::string library = copyLibrary();
  std::string weights = file(kWeightsName);
  write(weights, kWeights);
  {
    ModelHandle handle;
    ASSERT_EQ(attune_model_open(library.c_str(), &handle.model), ATTUNE_OK)
        << message();
    const void *data = nullptr;
    size_t size = 0;
    ASSERT_EQ(attune_model_weights(handle.model, &data, &size), ATTUNE_OK);
    ASSERT_EQ(size, 8u);
    EXPECT_EQ(std::string(static_cast<const char *>(data), size), kWeights);
    EXPECT_TRUE(isMapped(weights));
    std::vector<float> y;
    EXPECT_EQ(runOnce(handle.model, y), ATTUNE_OK) << message();
    EXPECT_EQ(y[0], 0.5f);  // scale[0] * ids[0]
    EXPECT_EQ(y[11], 0.0f); // masked
  }
  EXPECT_FALSE(isMapped(weights)) << "attune_model_close unmaps the file";
}

TEST_F(ExternalWeightsTest, NegativeMissingFileIsNotFound) {
  std::string library = copyLibrary();
  attune_model_t *model = reinterpret_cast<attune_model_t *>(0x1);
  EXPECT_EQ(attune_model_open(library.c_str(), &model), ATTUNE_NOT_FOUND);
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(message(), HasSubstr("cannot open the weights of '" + library +
                                   "': '" + file(kWeightsName) +
                                   "' does not exist (looked for beside the "
                                   "library; ATTUNE_WEIGHTS_PATH"));
}

TEST_F(ExternalWeightsTest, NegativeWrongSize) {
  std::string library = copyLibrary();
  write(file(kWeightsName), "weights");
  ModelHandle handle;
  EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(),
              HasSubstr("weights file '" + file(kWeightsName) + "' of '" +
                        library + "' has 7 bytes, expected 8"));
}

/// The same size and other bytes: only the hash tells them apart. With the
/// check turned off the model opens, and run() is handed the wrong bytes,
/// which is what the check exists to prevent.
TEST_F(ExternalWeightsTest, NegativeHashMismatch) {
  std::string library = copyLibrary();
  write(file(kWeightsName), "weightz!");
  {
    ModelHandle handle;
    EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
              ATTUNE_INVALID_LIBRARY);
    EXPECT_THAT(message(),
                HasSubstr("weights file '" + file(kWeightsName) +
                          "' does not match '" + library + "': its XXH64 is "));
    EXPECT_THAT(message(), HasSubstr("the library expects 793cdbc9355d3a76"));
  }
  ScopedEnv noCheck("ATTUNE_WEIGHTS_VERIFY", "0");
  ModelHandle handle;
  ASSERT_EQ(attune_model_open(library.c_str(), &handle.model), ATTUNE_OK)
      << message();
  std::vector<float> y;
  EXPECT_EQ(runOnce(handle.model, y), ATTUNE_INTERNAL);
  EXPECT_THAT(message(), HasSubstr("not given the model's weights"));
}

TEST_F(ExternalWeightsTest, NegativeBadVerifySetting) {
  std::string library = copyLibrary();
  write(file(kWeightsName), kWeights);
  ScopedEnv bad("ATTUNE_WEIGHTS_VERIFY", "yes");
  ModelHandle handle;
  EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("ATTUNE_WEIGHTS_VERIFY is 'yes'"));
}

/// A directory, a device and a FIFO where the file should be; the FIFO must
/// not block the open waiting for a writer.
TEST_F(ExternalWeightsTest, NegativeNotARegularFile) {
  std::string library = copyLibrary();
  std::string fifo = file(kWeightsName);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ModelHandle handle;
  EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("'" + fifo + "' is not a regular file"));

  EXPECT_EQ(attune_model_open_with_weights(library.c_str(), "/dev/null",
                                           &handle.model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("'/dev/null' is not a regular file"));

  // A directory given as the weights path is searched for the file; a
  // directory with that name inside it is still not a file.
  std::remove(fifo.c_str());
  fs::create_directory(fifo);
  EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("'" + fifo + "' is not a regular file"));
}

/// ATTUNE_WEIGHTS_PATH names the file (under any name) or its directory,
/// and wins over the library's directory.
TEST_F(ExternalWeightsTest, EnvironmentNamesFileOrDirectory) {
  std::string renamed = file("elsewhere.bin");
  write(renamed, kWeights);
  {
    ScopedEnv path("ATTUNE_WEIGHTS_PATH", renamed.c_str());
    ModelHandle handle;
    ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_EXTERNAL_PATH, &handle.model),
              ATTUNE_OK)
        << message();
    std::vector<float> y;
    EXPECT_EQ(runOnce(handle.model, y), ATTUNE_OK) << message();
  }
  write(file(kWeightsName), kWeights);
  {
    ScopedEnv path("ATTUNE_WEIGHTS_PATH", dir.c_str());
    ModelHandle handle;
    EXPECT_EQ(attune_model_open(ATTUNE_TEST_MODEL_EXTERNAL_PATH, &handle.model),
              ATTUNE_OK)
        << message();
  }
  {
    // Set but wrong: an error naming it, not a quiet fall-back.
    std::string missing = file("missing");
    ScopedEnv path("ATTUNE_WEIGHTS_PATH", missing.c_str());
    std::string library = copyLibrary(); // with the right file beside it
    ModelHandle handle;
    EXPECT_EQ(attune_model_open(library.c_str(), &handle.model),
              ATTUNE_NOT_FOUND);
    EXPECT_THAT(message(), HasSubstr("'" + missing +
                                     "' does not exist (from "
                                     "ATTUNE_WEIGHTS_PATH)"));
  }
}

/// A path given to the API wins over ATTUNE_WEIGHTS_PATH; a library that
/// embeds its weights takes none.
TEST_F(ExternalWeightsTest, ExplicitPath) {
  std::string weights = file("explicit.safetensors");
  write(weights, kWeights);
  std::string missing = file("missing");
  ScopedEnv path("ATTUNE_WEIGHTS_PATH", missing.c_str());
  {
    ModelHandle handle;
    ASSERT_EQ(attune_model_open_with_weights(ATTUNE_TEST_MODEL_EXTERNAL_PATH,
                                             weights.c_str(), &handle.model),
              ATTUNE_OK)
        << message();
    std::vector<float> y;
    EXPECT_EQ(runOnce(handle.model, y), ATTUNE_OK) << message();
  }
  ModelHandle handle;
  EXPECT_EQ(attune_model_open_with_weights(ATTUNE_TEST_MODEL_PATH,
                                           weights.c_str(), &handle.model),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("embeds its weights, so it takes no "
                                   "weights file (got '" +
                                   weights + "')"));
  EXPECT_EQ(
      attune_model_open_with_weights(ATTUNE_TEST_MODEL_PATH, "", &handle.model),
      ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("weights_path is empty"));
  // NULL is plain attune_model_open, and ATTUNE_WEIGHTS_PATH does not
  // concern a model with embedded weights.
  ASSERT_EQ(attune_model_open_with_weights(ATTUNE_TEST_MODEL_PATH, nullptr,
                                           &handle.model),
            ATTUNE_OK)
      << message();
}

/// A statically linked model has no directory of its own: it takes its
/// weights from the API or ATTUNE_WEIGHTS_PATH, and says so without them.
/// The descriptor comes from the shared library here, as a program's
/// <name>_attune_model_abi() would give it.
TEST_F(ExternalWeightsTest, StaticModel) {
  void *library =
      dlopen(ATTUNE_TEST_MODEL_EXTERNAL_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto describe = reinterpret_cast<attune_model_abi_fn>(
      dlsym(library, ATTUNE_MODEL_ABI_SYMBOL));
  ASSERT_NE(describe, nullptr);
  std::string weights = file(kWeightsName);
  write(weights, kWeights);
  {
    ModelHandle handle;
    EXPECT_EQ(attune_model_open_static(describe(), &handle.model),
              ATTUNE_NOT_FOUND);
    EXPECT_EQ(handle.model, nullptr);
    EXPECT_THAT(message(),
                HasSubstr("the statically linked model 'scale_ids' keeps its "
                          "weights in a file '" +
                          std::string(kWeightsName) + "'"));
    EXPECT_THAT(message(), HasSubstr("attune_model_open_static_with_weights"));
  }
  {
    ModelHandle handle;
    ASSERT_EQ(attune_model_open_static_with_weights(describe(), weights.c_str(),
                                                    &handle.model),
              ATTUNE_OK)
        << message();
    std::vector<float> y;
    EXPECT_EQ(runOnce(handle.model, y), ATTUNE_OK) << message();
  }
  {
    ScopedEnv path("ATTUNE_WEIGHTS_PATH", dir.c_str());
    ModelHandle handle;
    EXPECT_EQ(attune_model_open_static(describe(), &handle.model), ATTUNE_OK)
        << message();
  }
  {
    ModelHandle handle;
    EXPECT_EQ(attune_model_open_static_with_weights(nullptr, weights.c_str(),
                                                    &handle.model),
              ATTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(message(), HasSubstr("attune_model_open_static_with_weights: "
                                     "abi is NULL"));
  }
  dlclose(library);
}

} // namespace
