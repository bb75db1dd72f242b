//===- RuntimeTest.cpp - tests of the attune C runtime --------------------===//
//
// Drives the public C API against hand-written model libraries (test_model.c,
// broken_model.c): the model computes
//   y[b, s, d] = mask[b, s] ? scale[d] * ids[b, s] : 0
// for ids i32 [batch, seq] in [0, 10), mask bool [batch, seq], scale f32 [4],
// seq <= 64. Every misuse must return the right status and a message naming
// the problem, never crash.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "tests/support/ScopedEnv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

using ::testing::HasSubstr;

/// Owns a handle for the duration of a test.
struct ModelHandle {
  attune_model_t *model = nullptr;
  ModelHandle() = default;
  ModelHandle(const ModelHandle &) = delete;
  ModelHandle &operator=(const ModelHandle &) = delete;
  ~ModelHandle() { attune_model_close(model); }
};

std::string message() { return attune_status_message(); }

using attune::testing::ScopedEnv;

/// Inputs and outputs of one run of the test model, with the buffers behind
/// them; the tests corrupt one field at a time.
struct Problem {
  int64_t batch, seq;
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;
  std::vector<float> scale{0.5f, -1.0f, 2.0f, 3.0f};
  std::vector<float> y;
  attune_tensor_t inputs[3];
  attune_tensor_t outputs[1];

  Problem(int64_t batch, int64_t seq, int seed = 0)
      : batch(batch), seq(seq), ids(batch * seq), mask(batch * seq),
        y(batch * seq * 4, -123.0f) {
    for (int64_t t = 0; t < batch * seq; ++t) {
      ids[t] = static_cast<int32_t>((t * 7 + seed) % 10);
      mask[t] = (t + seed) % 3 != 0;
    }
    inputs[0] = {ids.data(), ATTUNE_DTYPE_I32, 2, {batch, seq}};
    inputs[1] = {mask.data(), ATTUNE_DTYPE_BOOL, 2, {batch, seq}};
    inputs[2] = {scale.data(), ATTUNE_DTYPE_F32, 1, {4}};
    outputs[0] = {y.data(), ATTUNE_DTYPE_F32, 3, {batch, seq, 4}};
  }

  attune_status_t run(attune_model_t *model) {
    return attune_model_run(model, inputs, 3, outputs, 1);
  }

  /// Number of elements of y that differ from the model's definition.
  int64_t mismatches() const {
    int64_t bad = 0;
    for (int64_t t = 0; t < batch * seq; ++t)
      for (int d = 0; d < 4; ++d) {
        float expected = mask[t] ? scale[d] * static_cast<float>(ids[t]) : 0.0f;
        bad += y[t * 4 + d] != expected;
      }
    return bad;
  }
};

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &handle.model),
              ATTUNE_OK)
        << message();
    ASSERT_NE(handle.model, nullptr);
  }
  attune_model_t *model() { return handle.model; }

  /// Runs `problem` and expects INVALID_ARGUMENT with every part of `parts`
  /// in the message.
  void expectInvalid(Problem &problem, std::vector<std::string> parts) {
    EXPECT_EQ(problem.run(model()), ATTUNE_INVALID_ARGUMENT);
    for (const std::string &part : parts)
      EXPECT_THAT(message(), HasSubstr(part));
  }

  ModelHandle handle;
};

/// A file in the test's temporary directory, removed afterwards.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &name, const std::string &contents) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir ? dir : "/tmp") + "/attune_runtime_test_" +
           std::to_string(getpid()) + "_" + name;
    std::ofstream(path, std::ios::binary) << contents;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::string readFile(const char *path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

//===----------------------------------------------------------------------===//
// Open, close, inspect
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, OpensAndDescribesTheModel) {
  EXPECT_STREQ(attune_model_name(model()), "scale_ids");
  EXPECT_EQ(attune_model_num_inputs(model()), 3);
  EXPECT_EQ(attune_model_num_outputs(model()), 1);
}

TEST(RuntimeOpenTest, CloseOfNullIsIgnored) { attune_model_close(nullptr); }

TEST(RuntimeOpenTest, SameLibraryOpensTwice) {
  ModelHandle a, b;
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &a.model), ATTUNE_OK);
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &b.model), ATTUNE_OK);
  EXPECT_NE(a.model, b.model);
  attune_model_close(a.model);
  a.model = nullptr;
  // Closing one handle must leave the shared library loaded for the other.
  Problem problem(2, 3);
  ASSERT_EQ(problem.run(b.model), ATTUNE_OK) << message();
  EXPECT_EQ(problem.mismatches(), 0);
}

TEST_F(RuntimeTest, InputInfo) {
  attune_tensor_info_t info;
  ASSERT_EQ(attune_model_input_info(model(), 0, &info), ATTUNE_OK);
  EXPECT_STREQ(info.name, "ids");
  EXPECT_EQ(info.dtype, ATTUNE_DTYPE_I32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_EQ(info.dims[1], -1);
  EXPECT_STREQ(info.dim_names[0], "batch");
  EXPECT_STREQ(info.dim_names[1], "seq");
  EXPECT_EQ(info.index_bound, 10);
  for (int d = 2; d < ATTUNE_MAX_RANK; ++d) {
    EXPECT_EQ(info.dims[d], 0);
    EXPECT_EQ(info.dim_names[d], nullptr);
  }

  ASSERT_EQ(attune_model_input_info(model(), 1, &info), ATTUNE_OK);
  EXPECT_STREQ(info.name, "mask");
  EXPECT_EQ(info.dtype, ATTUNE_DTYPE_BOOL);

  ASSERT_EQ(attune_model_input_info(model(), 2, &info), ATTUNE_OK);
  EXPECT_STREQ(info.name, "scale");
  EXPECT_EQ(info.dtype, ATTUNE_DTYPE_F32);
  EXPECT_EQ(info.index_bound, 0);
  ASSERT_EQ(info.rank, 1);
  EXPECT_EQ(info.dims[0], 4);
  EXPECT_EQ(info.dim_names[0], nullptr);
}

TEST_F(RuntimeTest, OutputInfo) {
  attune_tensor_info_t info;
  ASSERT_EQ(attune_model_output_info(model(), 0, &info), ATTUNE_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.dtype, ATTUNE_DTYPE_F32);
  ASSERT_EQ(info.rank, 3);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_EQ(info.dims[1], -1);
  EXPECT_EQ(info.dims[2], 4);
  EXPECT_STREQ(info.dim_names[0], "batch");
  EXPECT_STREQ(info.dim_names[1], "seq");
  EXPECT_EQ(info.dim_names[2], nullptr);
}

TEST_F(RuntimeTest, InfoIndexOutOfRange) {
  attune_tensor_info_t info;
  EXPECT_EQ(attune_model_input_info(model(), 3, &info),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected an input index in [0, 3), got 3"));
  EXPECT_EQ(attune_model_input_info(model(), -1, &info),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("got -1"));
  EXPECT_EQ(attune_model_output_info(model(), 1, &info),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(),
              HasSubstr("expected an output index in [0, 1), got 1"));
  EXPECT_EQ(attune_model_input_info(model(), 0, nullptr),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("out_info is NULL"));
}

TEST_F(RuntimeTest, SourceIrAndWeights) {
  EXPECT_STREQ(attune_model_source_ir(model()), "tfm.func @scale_ids(...)");
  const void *data = nullptr;
  size_t size = 0;
  ASSERT_EQ(attune_model_weights(model(), &data, &size), ATTUNE_OK);
  ASSERT_EQ(size, 8u);
  EXPECT_EQ(std::string(static_cast<const char *>(data), size), "weights!");
  EXPECT_EQ(attune_model_weights(model(), nullptr, &size),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("must not be NULL"));
}

//===----------------------------------------------------------------------===//
// Output shapes
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, OutputShapeFromInputShapes) {
  Problem problem(3, 17);
  attune_tensor_t shape;
  ASSERT_EQ(attune_model_output_shape(model(), problem.inputs, 3, 0, &shape),
            ATTUNE_OK)
      << message();
  EXPECT_EQ(shape.data, nullptr);
  EXPECT_EQ(shape.dtype, ATTUNE_DTYPE_F32);
  ASSERT_EQ(shape.rank, 3);
  EXPECT_EQ(shape.shape[0], 3);
  EXPECT_EQ(shape.shape[1], 17);
  EXPECT_EQ(shape.shape[2], 4);
}

TEST_F(RuntimeTest, OutputShapeNeedsNoData) {
  Problem problem(2, 5);
  for (attune_tensor_t &input : problem.inputs)
    input.data = nullptr;
  attune_tensor_t shape;
  ASSERT_EQ(attune_model_output_shape(model(), problem.inputs, 3, 0, &shape),
            ATTUNE_OK)
      << message();
  EXPECT_EQ(shape.shape[1], 5);
}

TEST_F(RuntimeTest, OutputShapeChecksInputs) {
  Problem problem(2, 5);
  problem.inputs[1].shape[1] = 6;
  attune_tensor_t shape;
  EXPECT_EQ(attune_model_output_shape(model(), problem.inputs, 3, 0, &shape),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(),
              HasSubstr("input 'mask' dimension 1 (seq) is 6, but input "
                        "'ids' dimension 1 gives seq = 5"));
  Problem ok(2, 5);
  EXPECT_EQ(attune_model_output_shape(model(), ok.inputs, 3, 1, &shape),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(),
              HasSubstr("expected an output index in [0, 1), got 1"));
  EXPECT_EQ(attune_model_output_shape(model(), ok.inputs, 2, 0, &shape),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 3 inputs, got 2"));
  EXPECT_EQ(attune_model_output_shape(model(), ok.inputs, 3, 0, nullptr),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("out_shape is NULL"));
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, RunComputesTheModel) {
  Problem problem(2, 3);
  ASSERT_EQ(problem.run(model()), ATTUNE_OK) << message();
  EXPECT_EQ(problem.mismatches(), 0);
  // Spot-check one element by hand: t = 4 -> id (4 * 7) % 10 = 8, mask on.
  EXPECT_EQ(problem.y[4 * 4 + 2], 2.0f * 8);
}

TEST_F(RuntimeTest, WorkspaceSizeFromInputShapes) {
  // The stand-in library's plan: a float per token and a 64-byte guard.
  Problem problem(3, 17);
  for (attune_tensor_t &input : problem.inputs)
    input.data = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(attune_model_workspace_size(model(), problem.inputs, 3, &bytes), ATTUNE_OK)
      << message();
  EXPECT_EQ(bytes, 3u * 17u * sizeof(float) + 64u);
  EXPECT_EQ(attune_model_workspace_size(model(), problem.inputs, 3, nullptr),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("out_bytes is NULL"));
  EXPECT_EQ(attune_model_workspace_size(model(), problem.inputs, 2, &bytes),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 3 inputs, got 2"));
  Problem negative(998, 1);
  EXPECT_EQ(attune_model_workspace_size(model(), negative.inputs, 3, &bytes),
            ATTUNE_INTERNAL);
  EXPECT_THAT(message(), HasSubstr("workspace_size returned -1"));
  EXPECT_EQ(attune_model_workspace_size(nullptr, problem.inputs, 3, &bytes),
            ATTUNE_INVALID_ARGUMENT);
}

TEST_F(RuntimeTest, RunReusesAndGrowsTheWorkspace) {
  // Small, large, small again, and the maximum seq: the workspace must grow
  // for the large ones and still serve the small ones.
  for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {8, 64}, {2, 3}, {33, 64}, {1, 1}}) {
    Problem problem(batch, seq, static_cast<int>(batch + seq));
    ASSERT_EQ(problem.run(model()), ATTUNE_OK) << message();
    EXPECT_EQ(problem.mismatches(), 0) << "batch " << batch << " seq " << seq;
  }
}

TEST_F(RuntimeTest, KernelErrorIsInternal) {
  Problem problem(1, 2);
  problem.scale[0] = std::nanf("");
  EXPECT_EQ(problem.run(model()), ATTUNE_INTERNAL);
  // The library's own message follows the code, its newline trimmed.
  EXPECT_EQ(message(), "model 'scale_ids': kernel error -3: Input scale[0] is NaN");
}

TEST_F(RuntimeTest, WorkspaceTooLargeIsOutOfMemory) {
  Problem problem(999, 1);
  EXPECT_EQ(problem.run(model()), ATTUNE_OUT_OF_MEMORY);
  EXPECT_THAT(
      message(),
      HasSubstr("cannot allocate a workspace of 4611686018427387904 bytes"));
  // The handle stays usable.
  Problem ok(2, 2);
  ASSERT_EQ(ok.run(model()), ATTUNE_OK) << message();
  EXPECT_EQ(ok.mismatches(), 0);
}

TEST_F(RuntimeTest, NegativeWorkspaceSizeIsInternal) {
  Problem problem(998, 1);
  EXPECT_EQ(problem.run(model()), ATTUNE_INTERNAL);
  EXPECT_THAT(message(), HasSubstr("workspace_size returned -1"));
}

TEST_F(RuntimeTest, ExtentsTooLargeSaysWhy) {
  // Generated libraries reject such symbols before any kernel runs, with
  // code -6 and no message; the runtime must still say what went wrong.
  Problem problem(997, 1);
  EXPECT_EQ(problem.run(model()), ATTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(message(),
            "model 'scale_ids': kernel error -6: the input shapes are too "
            "large for the library's 32-bit kernel extents (every shape "
            "symbol and buffer size must be at most 2^31-1 elements)");
  Problem ok(2, 2);
  ASSERT_EQ(ok.run(model()), ATTUNE_OK) << message();
}

TEST_F(RuntimeTest, SetNumThreadsForwardsToTheLibrary) {
  // The test model records the last value; dlopen shares the loaded library.
  void *library = dlopen(ATTUNE_TEST_MODEL_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << dlerror();
  auto numThreads = reinterpret_cast<int32_t (*)(void)>(
      dlsym(library, "attune_test_model_num_threads"));
  ASSERT_NE(numThreads, nullptr);
  EXPECT_EQ(attune_model_set_num_threads(model(), 3), ATTUNE_OK);
  EXPECT_EQ(numThreads(), 3);
  EXPECT_EQ(attune_model_set_num_threads(model(), 1024), ATTUNE_OK);
  EXPECT_EQ(numThreads(), 1024);
  EXPECT_EQ(attune_model_set_num_threads(model(), 0), ATTUNE_OK);
  EXPECT_EQ(numThreads(), 0);

  EXPECT_EQ(attune_model_set_num_threads(model(), -1), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 0..1024 threads, got -1"));
  EXPECT_EQ(attune_model_set_num_threads(model(), 1025),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 0..1024 threads, got 1025"));
  EXPECT_EQ(numThreads(), 0) << "a rejected value must not reach the library";
  dlclose(library);
}

//===----------------------------------------------------------------------===//
// Misuse of run: each returns INVALID_ARGUMENT naming the problem
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, OutputOverlappingAnInputIsRejected) {
  Problem problem(2, 3);
  // y's first bytes are ids' last ones.
  std::vector<float> shared(problem.y.size() + 1);
  problem.inputs[0].data = shared.data();
  std::copy(problem.ids.begin(), problem.ids.end(),
            reinterpret_cast<int32_t *>(shared.data()));
  problem.outputs[0].data = reinterpret_cast<char *>(shared.data()) +
                            problem.ids.size() * sizeof(int32_t) - 1;
  expectInvalid(problem, {"output 'y' overlaps input 'ids'"});
}

TEST_F(RuntimeTest, AdjacentBuffersAreNotAnOverlap) {
  Problem problem(2, 3);
  // ids, then y right after its last byte, in one allocation.
  std::vector<float> shared(problem.ids.size() + problem.y.size());
  std::copy(problem.ids.begin(), problem.ids.end(),
            reinterpret_cast<int32_t *>(shared.data()));
  problem.inputs[0].data = shared.data();
  problem.outputs[0].data = shared.data() + problem.ids.size();
  ASSERT_EQ(problem.run(model()), ATTUNE_OK) << message();
  std::copy(shared.begin() + problem.ids.size(), shared.end(),
            problem.y.begin());
  EXPECT_EQ(problem.mismatches(), 0);
}

TEST_F(RuntimeTest, WrongInputRank) {
  Problem problem(2, 3);
  problem.inputs[0].rank = 3;
  expectInvalid(problem, {"input 'ids': expected rank 2, got 3"});
  problem.inputs[0].rank = 99;
  expectInvalid(problem, {"input 'ids': expected rank 2, got 99"});
}

TEST_F(RuntimeTest, WrongStaticDim) {
  Problem problem(2, 3);
  problem.inputs[2].shape[0] = 5;
  expectInvalid(problem, {"input 'scale' dimension 0: expected 4, got 5"});
}

TEST_F(RuntimeTest, MismatchedSymbolAcrossInputs) {
  Problem problem(2, 3);
  problem.inputs[1].shape[1] = 7;
  expectInvalid(problem,
                {"input 'mask' dimension 1 (seq) is 7, but input 'ids' "
                 "dimension 1 gives seq = 3"});
  Problem other(2, 3);
  other.inputs[1].shape[0] = 4;
  expectInvalid(other,
                {"input 'mask' dimension 0 (batch) is 4, but input 'ids' "
                 "dimension 0 gives batch = 2"});
}

TEST_F(RuntimeTest, NonPositiveDynamicDim) {
  Problem problem(2, 3);
  problem.inputs[0].shape[1] = 0;
  expectInvalid(problem,
                {"input 'ids' dimension 1 (seq): expected at least 1, got 0"});
  problem.inputs[0].shape[1] = -4;
  expectInvalid(problem, {"got -4"});
}

TEST_F(RuntimeTest, SeqAboveSymbolMax) {
  Problem problem(1, 65);
  expectInvalid(
      problem,
      {"input 'ids' dimension 1: seq = 65 exceeds the model's maximum 64"});
}

TEST_F(RuntimeTest, WrongInputDtype) {
  Problem problem(2, 3);
  problem.inputs[2].dtype = ATTUNE_DTYPE_F16;
  expectInvalid(problem, {"input 'scale': expected dtype f32, got f16"});
  problem.inputs[2].dtype = static_cast<attune_dtype_t>(77);
  expectInvalid(problem,
                {"input 'scale': expected dtype f32, got unknown dtype 77"});
}

TEST_F(RuntimeTest, WrongOutputDtype) {
  Problem problem(2, 3);
  problem.outputs[0].dtype = ATTUNE_DTYPE_I32;
  expectInvalid(problem, {"output 'y': expected dtype f32, got i32"});
}

TEST_F(RuntimeTest, NullInputData) {
  Problem problem(2, 3);
  problem.inputs[1].data = nullptr;
  expectInvalid(problem, {"input 'mask': data is NULL"});
}

TEST_F(RuntimeTest, NullOutputData) {
  Problem problem(2, 3);
  problem.outputs[0].data = nullptr;
  expectInvalid(problem, {"output 'y': data is NULL"});
}

TEST_F(RuntimeTest, NullInputsArray) {
  Problem problem(2, 3);
  EXPECT_EQ(attune_model_run(model(), nullptr, 3, problem.outputs, 1),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("inputs is NULL, expected 3 inputs"));
}

TEST_F(RuntimeTest, NullOutputsArray) {
  Problem problem(2, 3);
  EXPECT_EQ(attune_model_run(model(), problem.inputs, 3, nullptr, 1),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("outputs is NULL, expected 1 outputs"));
}

TEST_F(RuntimeTest, WrongInputCount) {
  Problem problem(2, 3);
  EXPECT_EQ(attune_model_run(model(), problem.inputs, 2, problem.outputs, 1),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(),
              HasSubstr("model 'scale_ids': expected 3 inputs, got 2"));
  EXPECT_EQ(attune_model_run(model(), problem.inputs, -1, problem.outputs, 1),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 3 inputs, got -1"));
}

TEST_F(RuntimeTest, WrongOutputCount) {
  Problem problem(2, 3);
  EXPECT_EQ(attune_model_run(model(), problem.inputs, 3, problem.outputs, 0),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("expected 1 outputs, got 0"));
}

TEST_F(RuntimeTest, WrongOutputShape) {
  Problem problem(2, 3);
  problem.outputs[0].shape[1] = 4; // Big enough, but not exactly the shape.
  expectInvalid(problem,
                {"output 'y': expected shape [2, 3, 4], got [2, 4, 4]"});
  Problem rank(2, 3);
  rank.outputs[0].rank = 2;
  expectInvalid(rank, {"output 'y': expected rank 3, got 2"});
}

TEST_F(RuntimeTest, IdTooLarge) {
  Problem problem(2, 3);
  problem.ids[5] = 10;
  expectInvalid(problem, {"input 'ids' element 5 is 10, outside [0, 10)"});
  EXPECT_EQ(problem.y[0], -123.0f) << "the kernel must not have run";
}

TEST_F(RuntimeTest, IdNegative) {
  Problem problem(2, 3);
  problem.ids[2] = -1;
  expectInvalid(problem, {"input 'ids' element 2 is -1, outside [0, 10)"});
}

TEST_F(RuntimeTest, FailedRunLeavesHandleUsable) {
  Problem bad(2, 3);
  bad.ids[0] = 1000;
  EXPECT_EQ(bad.run(model()), ATTUNE_INVALID_ARGUMENT);
  Problem good(2, 3);
  ASSERT_EQ(good.run(model()), ATTUNE_OK) << message();
  EXPECT_EQ(good.mismatches(), 0);
}

//===----------------------------------------------------------------------===//
// Null handles: every function returns a status or a neutral value
//===----------------------------------------------------------------------===//

TEST(RuntimeNullModelTest, EveryFunctionRejectsNull) {
  Problem problem(1, 1);
  attune_tensor_info_t info;
  attune_tensor_t shape;
  const void *data = reinterpret_cast<const void *>(0x1);
  size_t size = 17;

  EXPECT_EQ(attune_model_name(nullptr), nullptr);
  EXPECT_THAT(message(), HasSubstr("attune_model_name: model is NULL"));
  EXPECT_EQ(attune_model_num_inputs(nullptr), -1);
  EXPECT_THAT(message(), HasSubstr("attune_model_num_inputs: model is NULL"));
  EXPECT_EQ(attune_model_num_outputs(nullptr), -1);
  EXPECT_THAT(message(), HasSubstr("attune_model_num_outputs: model is NULL"));
  EXPECT_EQ(attune_model_input_info(nullptr, 0, &info),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_input_info: model is NULL"));
  EXPECT_EQ(attune_model_output_info(nullptr, 0, &info),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_output_info: model is NULL"));
  EXPECT_EQ(attune_model_output_shape(nullptr, problem.inputs, 3, 0, &shape),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_output_shape: model is NULL"));
  EXPECT_EQ(attune_model_set_num_threads(nullptr, 1), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(),
              HasSubstr("attune_model_set_num_threads: model is NULL"));
  EXPECT_EQ(problem.run(nullptr), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_run: model is NULL"));
  EXPECT_EQ(attune_model_source_ir(nullptr), nullptr);
  EXPECT_THAT(message(), HasSubstr("attune_model_source_ir: model is NULL"));
  EXPECT_EQ(attune_model_weights(nullptr, &data, &size),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_weights: model is NULL"));
  attune_isa_t isa;
  EXPECT_EQ(attune_model_isa(nullptr, &isa), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("attune_model_isa: model is NULL"));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  attune_model_close(nullptr);
}

//===----------------------------------------------------------------------===//
// Opening files that are not (valid) models
//===----------------------------------------------------------------------===//

TEST(RuntimeOpenTest, NullArguments) {
  attune_model_t *model = reinterpret_cast<attune_model_t *>(0x1);
  EXPECT_EQ(attune_model_open(nullptr, &model), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("path is NULL"));
  EXPECT_EQ(model, nullptr);
  EXPECT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, nullptr),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("out_model is NULL"));
  EXPECT_EQ(attune_model_open("", &model), ATTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(message(), HasSubstr("path is empty"));
}

TEST(RuntimeOpenTest, MissingFile) {
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open("/nonexistent/dir/libmodel.so", &model),
            ATTUNE_NOT_FOUND);
  EXPECT_THAT(
      message(),
      HasSubstr("cannot open '/nonexistent/dir/libmodel.so': no such file"));
  EXPECT_EQ(model, nullptr);
  // A bare name is a file in the working directory, not a library-path search.
  EXPECT_EQ(attune_model_open("libc.so.6", &model), ATTUNE_NOT_FOUND);
  EXPECT_THAT(message(), HasSubstr("'libc.so.6'"));
}

TEST(RuntimeOpenTest, Directory) {
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open("/", &model), ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("cannot open '/': it is a directory"));
}

TEST(RuntimeOpenTest, TextFileIsNotALibrary) {
  TempFile text("model.txt", "this is not a shared object\n");
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open(text.path.c_str(), &model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("cannot load '" + text.path +
                                   "' as a shared library: not an ELF file"));
  EXPECT_EQ(model, nullptr);
}

/// dlopen alone would map the missing segments and die of SIGBUS.
TEST(RuntimeOpenTest, TruncatedLibrary) {
  std::string library = readFile(ATTUNE_TEST_MODEL_PATH);
  ASSERT_GT(library.size(), 4096u);
  for (size_t size : {size_t(3), size_t(40), size_t(600), library.size() / 2}) {
    TempFile truncated("truncated.so", library.substr(0, size));
    attune_model_t *model = nullptr;
    EXPECT_EQ(attune_model_open(truncated.path.c_str(), &model),
              ATTUNE_INVALID_LIBRARY)
        << size;
    EXPECT_THAT(message(), HasSubstr("cannot load '" + truncated.path +
                                     "' as a shared library: "));
    EXPECT_EQ(model, nullptr);
  }
}

TEST(RuntimeOpenTest, EmptyFile) {
  TempFile empty("empty.so", "");
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open(empty.path.c_str(), &model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(), HasSubstr("not an ELF file"));
}

TEST(RuntimeOpenTest, LibraryWithoutTheAbiSymbol) {
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open(ATTUNE_BROKEN_NO_SYMBOL_PATH, &model),
            ATTUNE_INVALID_LIBRARY);
  EXPECT_THAT(message(),
              HasSubstr(std::string("'") + ATTUNE_BROKEN_NO_SYMBOL_PATH +
                        "' is not an attune model library"));
  EXPECT_THAT(message(), HasSubstr("attune_model_abi"));
  EXPECT_EQ(model, nullptr);
}

struct BrokenCase {
  const char *name; ///< The test's suffix.
  const char *path;
  const char *problem;
};

void PrintTo(const BrokenCase &c, std::ostream *os) { *os << c.name; }

class RuntimeBrokenDescriptorTest
    : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(RuntimeBrokenDescriptorTest, IsRejectedByName) {
  attune_model_t *model = nullptr;
  EXPECT_EQ(attune_model_open(GetParam().path, &model), ATTUNE_INVALID_LIBRARY);
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(message(), HasSubstr(std::string("'") + GetParam().path +
                                   "' has an invalid model descriptor: "));
  EXPECT_THAT(message(), HasSubstr(GetParam().problem));
}

INSTANTIATE_TEST_SUITE_P(
    Variants, RuntimeBrokenDescriptorTest,
    ::testing::Values(
        BrokenCase{"Version", ATTUNE_BROKEN_VERSION_PATH,
                   "abi_version is 9, expected 8"},
        BrokenCase{"Device", ATTUNE_BROKEN_DEVICE_PATH,
                   "device is 5, expected 0 (cpu) or 1 (cuda)"},
        BrokenCase{"CudaNoRelease", ATTUNE_BROKEN_CUDA_NO_RELEASE_PATH,
                   "release_device is NULL in a CUDA library"},
        BrokenCase{"Constants", ATTUNE_BROKEN_CONSTANTS_PATH,
                   "constants_size is 64 with NULL constants"},
        BrokenCase{"Rank", ATTUNE_BROKEN_RANK_PATH,
                   "input 0 ('x') has rank 99, expected 0..8"},
        BrokenCase{"Dtype", ATTUNE_BROKEN_DTYPE_PATH,
                   "input 0 ('x') has unknown dtype 42"},
        BrokenCase{
            "SymbolIndex", ATTUNE_BROKEN_SYMBOL_INDEX_PATH,
            "input 0 ('x') dimension 0 refers to symbol 4, but the model has "
            "1 symbols"},
        BrokenCase{
            "IndexBound", ATTUNE_BROKEN_INDEX_BOUND_PATH,
            "input 0 ('x') has index_bound 100, but its dtype f32 is not i8, "
            "i32 or i64"},
        BrokenCase{"UnboundSymbol", ATTUNE_BROKEN_UNBOUND_SYMBOL_PATH,
                   "symbol 1 ('orphan') appears in no input's shape"},
        BrokenCase{"SymbolSum", ATTUNE_BROKEN_SYMBOL_SUM_PATH,
                   "symbol sum 0 ('total') adds symbol 2, which is neither an "
                   "input's nor defined by an earlier sum"},
        BrokenCase{"Count", ATTUNE_BROKEN_COUNT_PATH,
                   "num_inputs is 5000, expected 0..1024"},
        BrokenCase{"NullRun", ATTUNE_BROKEN_NULL_RUN_PATH, "run is NULL"},
        BrokenCase{"NullLastError", ATTUNE_BROKEN_NULL_LAST_ERROR_PATH,
                   "last_error is NULL"},
        BrokenCase{"NullSetIsaCap", ATTUNE_BROKEN_NULL_SET_ISA_CAP_PATH,
                   "set_isa_cap is NULL"},
        BrokenCase{"WeightsStorage", ATTUNE_BROKEN_WEIGHTS_STORAGE_PATH,
                   "weights_storage is 7, expected 0 (embedded) or 1 "
                   "(external)"},
        BrokenCase{"WeightsFile", ATTUNE_BROKEN_WEIGHTS_FILE_PATH,
                   "weights_file is '../elsewhere.safetensors', expected a "
                   "file name without '/' for external weights"},
        BrokenCase{"NullDescriptor", ATTUNE_BROKEN_NULL_DESCRIPTOR_PATH,
                   "attune_model_abi() returned NULL"}),
    [](const ::testing::TestParamInfo<BrokenCase> &info) {
      return std::string(info.param.name);
    });

//===----------------------------------------------------------------------===//
// Instruction-set cap (ATTUNE_CPU)
//===----------------------------------------------------------------------===//

// The test model has variants up to AVX2 (see test_model.c).

/// Forgets what the test model's kernels chose, as a fresh load would.
void resetTestModelDispatch() {
  void *library = dlopen(ATTUNE_TEST_MODEL_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto reset = reinterpret_cast<void (*)(void)>(
      dlsym(library, "attune_test_model_reset_dispatch"));
  ASSERT_NE(reset, nullptr);
  reset();
  dlclose(library);
}

TEST(RuntimeIsaTest, OpenAppliesTheCap) {
  attune_isa_t host = attune_host_isa();
  resetTestModelDispatch();
  ScopedEnv env("ATTUNE_CPU", "baseline");
  ModelHandle handle;
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &handle.model), ATTUNE_OK)
      << message();
  attune_isa_t isa;
  ASSERT_EQ(attune_model_isa(handle.model, &isa), ATTUNE_OK) << message();
  EXPECT_EQ(isa, ATTUNE_ISA_BASELINE);
  if (host < ATTUNE_ISA_AVX2)
    return;
  attune_model_close(handle.model);
  handle.model = nullptr;
  // Unset: the host's level, lowered to the library's best variant.
  ScopedEnv unset("ATTUNE_CPU", nullptr);
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &handle.model), ATTUNE_OK)
      << message();
  ASSERT_EQ(attune_model_isa(handle.model, &isa), ATTUNE_OK) << message();
  EXPECT_EQ(isa, ATTUNE_ISA_AVX2);
}

TEST(RuntimeIsaTest, BadAttuneCpuFailsTheOpen) {
  ScopedEnv env("ATTUNE_CPU", "bogus");
  ModelHandle handle;
  EXPECT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &handle.model),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(handle.model, nullptr);
  EXPECT_THAT(message(), HasSubstr("ATTUNE_CPU='bogus'"));
}

TEST(RuntimeIsaTest, LowerCapAfterARunAtAHigherOneIsRefused) {
  if (attune_host_isa() < ATTUNE_ISA_AVX2)
    GTEST_SKIP() << "needs a machine with AVX2";
  resetTestModelDispatch();
  ScopedEnv unset("ATTUNE_CPU", nullptr);
  ModelHandle first;
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &first.model), ATTUNE_OK)
      << message();
  Problem problem(1, 2);
  ASSERT_EQ(problem.run(first.model), ATTUNE_OK) << message();
  // Same library, still loaded: its kernels already chose AVX2, so a
  // baseline cap could not hold.
  ScopedEnv env("ATTUNE_CPU", "baseline");
  ModelHandle second;
  EXPECT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &second.model),
            ATTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(second.model, nullptr);
  EXPECT_THAT(message(), HasSubstr("already run its kernels at avx2"));
  // A cap the choice stays within is fine.
  ScopedEnv avx2("ATTUNE_CPU", "avx2");
  ASSERT_EQ(attune_model_open(ATTUNE_TEST_MODEL_PATH, &second.model), ATTUNE_OK)
      << message();
  attune_isa_t isa;
  ASSERT_EQ(attune_model_isa(second.model, &isa), ATTUNE_OK);
  EXPECT_EQ(isa, ATTUNE_ISA_AVX2);
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

TEST(RuntimeThreadTest, MessagesArePerThread) {
  attune_model_t *model = nullptr;
  ASSERT_EQ(attune_model_open("/nonexistent/a.so", &model), ATTUNE_NOT_FOUND);
  std::string other;
  std::thread([&] {
    EXPECT_STREQ(attune_status_message(), "")
        << "a fresh thread has no message";
    attune_model_t *m = nullptr;
    EXPECT_EQ(attune_model_open("/nonexistent/b.so", &m), ATTUNE_NOT_FOUND);
    other = attune_status_message();
  }).join();
  EXPECT_THAT(other, HasSubstr("/nonexistent/b.so"));
  EXPECT_THAT(message(), HasSubstr("/nonexistent/a.so"));
}

TEST(RuntimeThreadTest, SeparateHandlesRunConcurrently) {
  constexpr int kThreads = 4, kRuns = 100;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      ModelHandle handle;
      if (attune_model_open(ATTUNE_TEST_MODEL_PATH, &handle.model) !=
          ATTUNE_OK) {
        ++failures;
        return;
      }
      for (int r = 0; r < kRuns; ++r) {
        // Shapes differ per thread and per run, so workspaces grow and shrink
        // independently; every few runs also fail on purpose, which must not
        // disturb the other threads.
        int64_t batch = 1 + (r + t) % 5, seq = 1 + (r * 7 + t * 13) % 64;
        Problem problem(batch, seq, t * 1000 + r);
        if (r % 10 == 3) {
          problem.ids[0] = 99;
          if (problem.run(handle.model) != ATTUNE_INVALID_ARGUMENT ||
              std::string(attune_status_message()).find("is 99") ==
                  std::string::npos)
            ++failures;
          continue;
        }
        if (problem.run(handle.model) != ATTUNE_OK || problem.mismatches() != 0)
          ++failures;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
}

//===----------------------------------------------------------------------===//
// The shared library's exports
//===----------------------------------------------------------------------===//

TEST(RuntimeDtypeTest, SizesAndNames) {
  EXPECT_EQ(attune_dtype_size(ATTUNE_DTYPE_F32), 4u);
  EXPECT_EQ(attune_dtype_size(ATTUNE_DTYPE_BF16), 2u);
  EXPECT_EQ(attune_dtype_size(ATTUNE_DTYPE_I64), 8u);
  EXPECT_EQ(attune_dtype_size(ATTUNE_DTYPE_BOOL), 1u);
  EXPECT_STREQ(attune_dtype_name(ATTUNE_DTYPE_I32), "i32");
  EXPECT_STREQ(attune_dtype_name(ATTUNE_DTYPE_BOOL), "bool");
  // A C caller may pass any integer.
  attune_dtype_t bogus;
  int32_t raw = 77;
  std::memcpy(&bogus, &raw, sizeof(raw));
  EXPECT_EQ(attune_dtype_size(bogus), 0u);
  EXPECT_STREQ(attune_dtype_name(bogus), "unknown");
}

TEST(RuntimeLibraryTest, ExportsTheCApi) {
  void *library = dlopen(ATTUNE_RUNTIME_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  for (const char *name :
       {"attune_status_message", "attune_model_open", "attune_model_close",
        "attune_model_name", "attune_model_num_inputs",
        "attune_model_num_outputs", "attune_model_input_info",
        "attune_model_output_info", "attune_model_output_shape",
        "attune_model_set_num_threads", "attune_model_run",
        "attune_model_source_ir", "attune_model_weights", "attune_dtype_size",
        "attune_dtype_name"})
    EXPECT_NE(dlsym(library, name), nullptr) << name;
  dlclose(library);
}

} // namespace
