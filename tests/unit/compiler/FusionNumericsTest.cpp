//===- FusionNumericsTest.cpp - fusion checked by the evaluator -----------===//
//
// FileCheck sees what tfm-fuse-attention writes, not whether it computes the
// same thing. This test runs every function of the pass's lit files through
// the reference evaluator before and after the pass, on the same random
// inputs, and compares:
//
//   tests/lit/passes/fuse-attention.mlir       before vs -tfm-fuse-attention
//   tests/lit/passes/decompose-attention.mlir  before vs -tfm-decompose-attention
//   tests/lit/passes/roundtrip.mlir            before vs decompose then fuse
//   tests/lit/passes/raise-deberta.mlir        before vs raise then fuse
//
// so a bug that decomposition and fusion share (which a round trip hides)
// still shows against the original form. Every `?` has one size (so
// self-attention lengths agree): 7, or a static size of the signature when
// 7 does not fit it. Float inputs N(0, 1); masks and key-padding tensors
// random 0/1 (70% ones, index 0 of the last dimension always one), so rows
// whose keys are all masked occur: both forms must give tfm.attention's 0
// there. Tolerance: the evaluator rounds each f32 result to float, so the
// two forms round at different points: |after - before| <= 1e-6 (|before|
// + 1).
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Evaluator.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using attune::reference::Tensor;

namespace {


/// The chunks of a -split-input-file lit file.
std::vector<std::string> splitInputFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << "cannot read " << path;
  std::vector<std::string> chunks;
  if (!buffer)
    return chunks;
  llvm::StringRef text = (*buffer)->getBuffer();
  while (true) {
    size_t cut = text.find("// -----");
    chunks.push_back(text.substr(0, cut).str());
    if (cut == llvm::StringRef::npos)
      break;
    text = text.substr(cut + 8);
  }
  return chunks;
}

attune::ScalarType scalarOf(Type type) {
  if (type.isF16())
    return attune::ScalarType::F16;
  if (type.isBF16())
    return attune::ScalarType::BF16;
  if (type.isInteger(1))
    return attune::ScalarType::Bool;
  if (type.isInteger(8))
    return attune::ScalarType::I8;
  if (type.isInteger(32))
    return attune::ScalarType::I32;
  if (type.isInteger(64))
    return attune::ScalarType::I64;
  return attune::ScalarType::F32;
}

/// Random inputs for `fn`'s arguments, every `?` of size `dynamicSize`:
/// floats N(0, 1), integer and bool tensors 0/1.
std::vector<Tensor> makeInputs(func::FuncOp fn, int64_t dynamicSize, std::mt19937 &rng) {
  std::vector<Tensor> inputs;
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin(0.7);
  for (Type type : fn.getArgumentTypes()) {
    auto ranked = cast<RankedTensorType>(type);
    Tensor t;
    t.dtype = scalarOf(ranked.getElementType());
    for (int64_t d : ranked.getShape())
      t.shape.push_back(ShapedType::isDynamic(d) ? dynamicSize : d);
    int64_t n = t.numElements(), last = t.shape.empty() ? 1 : t.shape.back();
    t.data.resize(n);
    bool isFloat = isa<FloatType>(ranked.getElementType());
    for (int64_t e = 0; e < n; ++e)
      t.data[e] = isFloat ? normal(rng) : (e % last == 0 || coin(rng)) ? 1.0 : 0.0;
    (void)last;
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// Weights by name: N(0, 0.5) from a seed of the name, the same before and
/// after the pass.
llvm::Expected<Tensor> weightFor(llvm::StringRef name, RankedTensorType type) {
  Tensor t;
  t.dtype = scalarOf(type.getElementType());
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  std::mt19937 rng(std::hash<std::string>()(name.str()));
  std::normal_distribution<double> normal(0.0, 0.5);
  t.data.resize(t.numElements());
  for (double &v : t.data)
    v = normal(rng);
  return t;
}

struct Checked {
  int functions = 0;
};

/// Evaluates every function of `chunk` before and after `addPasses`.
void checkChunk(const std::string &file, size_t index, const std::string &chunk,
                const std::function<void(PassManager &)> &addPasses, Checked &checked) {
  MLIRContext context;
  context.loadDialect<attune::tfm::TfmDialect, func::FuncDialect, arith::ArithDialect>();
  // Chunks that are meant not to verify (-verify-diagnostics cases) are
  // not this test's concern.
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> before = parseSourceString<ModuleOp>(chunk, &context);
  if (!before)
    return;
  OwningOpRef<ModuleOp> after = cast<ModuleOp>((*before)->clone());
  PassManager pm(&context);
  addPasses(pm);
  if (failed(pm.run(*after)))
    return; // a chunk whose pass run is an expected error
  for (auto fn : before->getOps<func::FuncOp>()) {
    std::string where = file + " #" + std::to_string(index) + " @" + fn.getName().str();
    auto fused = after->lookupSymbol<func::FuncOp>(fn.getName());
    ASSERT_TRUE(fused) << where;
    // Every `?` one size: 7, else a static size of the signature (a static
    // mask of 128 keys against a dynamic key length), the first for which
    // the original function evaluates.
    std::vector<int64_t> sizes = {7};
    for (Type type : fn.getArgumentTypes())
      for (int64_t d : cast<RankedTensorType>(type).getShape())
        if (!ShapedType::isDynamic(d) && d > 1 && llvm::find(sizes, d) == sizes.end())
          sizes.push_back(d);
    std::vector<Tensor> inputs;
    llvm::Expected<std::vector<Tensor>> want = std::vector<Tensor>();
    std::string errors;
    for (int64_t size : sizes) {
      std::mt19937 rng(1234 + index);
      inputs = makeInputs(fn, size, rng);
      want = attune::reference::evaluate(fn, inputs, weightFor);
      if (want)
        break;
      errors += "\n  ? = " + std::to_string(size) + ": " + llvm::toString(want.takeError());
    }
    ASSERT_TRUE(bool(want)) << where << ": no size of its dynamic dims evaluates:" << errors;
    auto got = attune::reference::evaluate(fused, inputs, weightFor);
    ASSERT_TRUE(bool(got)) << where << " after the pass: "
                           << llvm::toString(got.takeError());
    ASSERT_EQ(want->size(), got->size()) << where;
    for (size_t r = 0; r < want->size(); ++r) {
      ASSERT_EQ((*want)[r].shape, (*got)[r].shape) << where << " result " << r;
      for (size_t e = 0; e < (*want)[r].data.size(); ++e) {
        double a = (*want)[r].data[e], b = (*got)[r].data[e];
        ASSERT_LE(std::fabs(a - b), 1e-6 * (std::fabs(a) + 1))
            << where << " result " << r << " element " << e << ": " << a
            << " before, " << b << " after";
      }
    }
    ++checked.functions;
  }
}

Checked checkFile(const std::string &name,
                  const std::function<void(PassManager &)> &addPasses) {
  Checked checked;
  std::string path = std::string(ATTUNE_SOURCE_DIR) + "/tests/lit/passes/" + name;
  std::vector<std::string> chunks = splitInputFile(path);
  for (size_t i = 0; i < chunks.size(); ++i)
    checkChunk(name, i, chunks[i], addPasses, checked);
  return checked;
}

TEST(FusionNumerics, FuseAttentionKeepsWhatEveryFunctionComputes) {
  Checked checked = checkFile("fuse-attention.mlir", [](PassManager &pm) {
    pm.addPass(attune::createFuseAttention());
  });
  // Every function of the file that verifies: a parse failure that dropped
  // most of them would show here.
  EXPECT_GE(checked.functions, 25);
}

TEST(FusionNumerics, DecomposeAttentionKeepsWhatEveryFunctionComputes) {
  Checked checked = checkFile("decompose-attention.mlir", [](PassManager &pm) {
    pm.addPass(attune::createDecomposeAttention());
  });
  EXPECT_GE(checked.functions, 5);
}

TEST(FusionNumerics, RoundTripKeepsWhatEveryFunctionComputes) {
  Checked checked = checkFile("roundtrip.mlir", [](PassManager &pm) {
    pm.addPass(attune::createDecomposeAttention());
    pm.addPass(attune::createFuseAttention());
  });
  EXPECT_GE(checked.functions, 7);
}

TEST(FusionNumerics, RaiseThenFuseKeepsWhatDebertaComputes) {
  // Hugging Face's DeBERTa as exported (log-bucketed positions, gathers on
  // heads merged into the batch) against the one fused tfm.attention it
  // becomes, and the near misses the passes leave as written.
  Checked checked = checkFile("raise-deberta.mlir", [](PassManager &pm) {
    pm.addPass(attune::createRaiseEncodings());
    pm.addPass(attune::createFuseAttention());
  });
  EXPECT_GE(checked.functions, 15);
}

} // namespace
