//===- GraphShrinkTest.cpp - attune-fuzz-graphs' reductions ---------------===//
//
// The shrinker's two reductions on small programs: dropOp replaces an op by
// an operand of its type; cutToInput makes a value an input, which is how a
// reshape or a transpose (whose result has no operand's type) goes.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/attune-fuzz-graphs/GraphCheck.h"

#include <gtest/gtest.h>

namespace attune::fuzzgraphs {
namespace {

// Heads split by reshape + transpose from a [B, S, H*D] input with a dynamic
// sequence, then a softmax over the keys of q·qᵀ.
const char *kSplitHeads = R"(
module {
  func.func @f(%x: tensor<2x?x8xf32> {tfm.name = "x", tfm.dim_names = ["", "seq", ""]},
               %keep: tensor<2x?xi1> {tfm.name = "keep", tfm.dim_names = ["", "seq"]})
      -> (tensor<2x2x?x?xf32> {tfm.name = "out0"}) {
    %r = tfm.reshape %x : tensor<2x?x8xf32> -> tensor<2x?x2x4xf32>
    %t = tfm.transpose %r {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x2x4xf32> -> tensor<2x2x?x4xf32>
    %s = tfm.matmul %t, %t {transpose_b = true} : tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32> -> tensor<2x2x?x?xf32>
    %p = tfm.softmax %s {axis = 3 : i64} : tensor<2x2x?x?xf32> -> tensor<2x2x?x?xf32>
    return %p : tensor<2x2x?x?xf32>
  }
}
)";

TEST(GraphShrink, DropOpCannotRemoveAReshape) {
  // Nothing has the reshape's result type: the old shrinker stopped here.
  EXPECT_FALSE(dropOp(kSplitHeads, 0));
  EXPECT_FALSE(dropOp(kSplitHeads, 1));
  // The softmax keeps its operand's type, so it can go.
  std::optional<std::string> noSoftmax = dropOp(kSplitHeads, 3);
  ASSERT_TRUE(noSoftmax);
  EXPECT_EQ(noSoftmax->find("tfm.softmax"), std::string::npos);
}

TEST(GraphShrink, CutTransposeMakesAnInputWithTheSequenceName) {
  std::map<std::string, int64_t> dims = {{"seq", 5}};
  std::optional<std::string> cut = cutToInput(kSplitHeads, /*transpose*/ 1, dims);
  ASSERT_TRUE(cut);
  // The transpose, and the reshape only it used, are gone; x is no longer
  // read, so it goes; the new input is named after x (same fill role), its
  // dynamic dimension after the program's one dimension of size 5.
  EXPECT_EQ(cut->find("tfm.reshape"), std::string::npos) << *cut;
  EXPECT_EQ(cut->find("tfm.transpose"), std::string::npos) << *cut;
  EXPECT_EQ(cut->find("tfm.name = \"x\""), std::string::npos) << *cut;
  EXPECT_NE(cut->find("tensor<2x2x?x4xf32> {tfm.dim_names = [\"\", \"\", \"seq\", \"\"], "
                      "tfm.name = \"x_cut0\"}"),
            std::string::npos)
      << *cut;
  EXPECT_EQ(dims.size(), 1u);
  EXPECT_EQ(countOps(*cut), 2) << *cut;
}

TEST(GraphShrink, CutDimensionOfAmbiguousSizeGetsItsOwnName) {
  // Two program dimensions of size 4: the cut's dynamic one is named anew,
  // with the size the evaluator found.
  std::map<std::string, int64_t> dims = {{"seq", 4}, {"other", 4}};
  std::optional<std::string> cut = cutToInput(kSplitHeads, /*reshape*/ 0, dims);
  ASSERT_TRUE(cut);
  EXPECT_NE(cut->find("\"x_cut0_d1\""), std::string::npos) << *cut;
  ASSERT_TRUE(dims.count("x_cut0_d1"));
  EXPECT_EQ(dims["x_cut0_d1"], 4);
}

TEST(GraphShrink, CutRefusesWhatHasNoUpstream) {
  std::map<std::string, int64_t> dims = {{"seq", 5}};
  // The return is not an op of the body; an index past the ops is refused.
  EXPECT_FALSE(cutToInput(kSplitHeads, 4, dims));
  EXPECT_FALSE(cutToInput(kSplitHeads, -1, dims));
  EXPECT_FALSE(cutToInput("not mlir", 0, dims));
}

TEST(GraphShrink, ShrinkGoesPastReshapesAndTransposes) {
  // A "failure" that persists while the program still has a matmul: the
  // smallest such program keeps only the matmul (the softmax dropped, the
  // transpose cut to an input, the reshape with it).
  Program program;
  program.mlir = kSplitHeads;
  program.dims = {{"seq", 5}};
  program.sites = {Expect::Fuse};
  int attempts = 0;
  Program smallest = shrinkFailure(
      program,
      [](const Program &p) { return p.mlir.find("tfm.matmul") != std::string::npos; },
      /*maxAttempts=*/40, attempts);
  EXPECT_EQ(countOps(smallest.mlir), 1) << smallest.mlir;
  EXPECT_NE(smallest.mlir.find("tfm.matmul"), std::string::npos);
  EXPECT_TRUE(smallest.sites.empty());
  EXPECT_LE(attempts, 40);
}

} // namespace
} // namespace attune::fuzzgraphs
