//===- PipelineTest.cpp - graph pipeline, phase dumps, kernel cache -------===//
//
// What the lit tests cannot reach cheaply: the exact phase file names for
// both pipeline variants, and the kernel cache key's sensitivity to each of
// its parts (a key that ignored the feature sets or the compiler build would
// link stale kernels silently).
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/KernelCache.h"
#include "compiler/pipeline/PhaseDump.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace attune::pipeline;

namespace {

/// A temporary directory removed at the end of the test.
struct TempDir {
  llvm::SmallString<256> path;
  TempDir() {
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("attune-pipeline", path);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

constexpr const char *kDecomposedAttention = R"mlir(
func.func @attention(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>,
                     %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x8xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x8x8xf32>, tensor<f32> -> tensor<1x2x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}
)mlir";

class PipelineTest : public testing::Test {
protected:
  PipelineTest() {
    mlir::DialectRegistry registry;
    registry.insert<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                    mlir::arith::ArithDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Runs the graph pipeline over kDecomposedAttention, dumping into `dir`.
  mlir::OwningOpRef<mlir::ModuleOp> runPipeline(const CompileOptions &options,
                                                const TempDir &dir) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kDecomposedAttention,
                                                          &context);
    EXPECT_TRUE(module);
    PhaseDumper dumper(std::string(dir.path));
    dumper.dump("input", module->getOperation());
    mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
    pm.addInstrumentation(createPhaseDumpInstrumentation(dumper));
    buildGraphPipeline(pm, options);
    EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
    EXPECT_EQ(dumper.error(), "");
    return module;
  }

  mlir::MLIRContext context;
};

unsigned countAttention(mlir::ModuleOp module) {
  unsigned n = 0;
  module.walk([&](attune::tfm::AttentionOp) { ++n; });
  return n;
}

TEST(PhaseDumperTest, FileNamesSortInPhaseOrder) {
  EXPECT_EQ(PhaseDumper::fileName(0, "input", ".mlir"), "00-input.mlir");
  EXPECT_EQ(PhaseDumper::fileName(7, "llvm", ".ll"), "07-llvm.ll");
  EXPECT_EQ(PhaseDumper::fileName(42, "memory-plan", ".txt"), "42-memory-plan.txt");
  // Two digits sort every real compile (about ten phases); past 99 the
  // number just grows rather than wrapping or colliding.
  EXPECT_LT(PhaseDumper::fileName(9, "a", ""), PhaseDumper::fileName(10, "a", ""));
  EXPECT_EQ(PhaseDumper::fileName(100, "cse", ".mlir"), "100-cse.mlir");
}

TEST(PhaseDumperTest, ReportsUnwritableDirectory) {
  TempDir dir;
  // A regular file where the directory should be.
  std::string blocker = dir.file("not-a-dir");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(blocker, ec);
    ASSERT_FALSE(ec);
  }
  PhaseDumper dumper(blocker + "/phases");
  EXPECT_EQ(dumper.dump("input", ".mlir", "x"), "");
  EXPECT_NE(dumper.error(), "");
}

TEST_F(PipelineTest, FusedPipelineDumpsEveryPass) {
  TempDir dir;
  CompileOptions options;
  options.fusionReportPath = dir.file("report.json");
  auto module = runPipeline(options, dir);
  EXPECT_EQ(countAttention(*module), 1u);
  std::vector<std::string> expected = {
      "00-input.mlir", "01-canonicalize.mlir", "02-cse.mlir",
      "03-tfm-raise-encodings.mlir", "04-tfm-fuse-attention.mlir",
      "05-tfm-propagate-layouts.mlir", "06-tfm-fuse-residual-norm.mlir",
      "07-tfm-pack-weights.mlir", "08-cse.mlir", "report.json"};
  EXPECT_EQ(dir.list(), expected);
  // Each dump is the whole module after its pass: the input still has the
  // softmax, the dump after fusion has tfm.attention instead.
  EXPECT_NE(readFile(dir.file("00-input.mlir")).find("tfm.softmax"), std::string::npos);
  std::string fused = readFile(dir.file("04-tfm-fuse-attention.mlir"));
  EXPECT_NE(fused.find("tfm.attention"), std::string::npos) << fused;
  EXPECT_NE(readFile(dir.file("report.json")).find("\"fused\""), std::string::npos);
}

TEST_F(PipelineTest, UnfusedPipelineDecomposes) {
  TempDir dir;
  CompileOptions options;
  options.fuseAttention = false;
  auto module = runPipeline(options, dir);
  EXPECT_EQ(countAttention(*module), 0u);
  std::vector<std::string> expected = {"00-input.mlir", "01-canonicalize.mlir",
                                       "02-cse.mlir",
                                       "03-tfm-decompose-attention.mlir",
                                       "04-tfm-fuse-residual-norm.mlir",
                                       "05-tfm-pack-weights.mlir",
                                       "06-cse.mlir"};
  EXPECT_EQ(dir.list(), expected);
}

TEST(FusionReportTest, DisabledReportSaysSo) {
  TempDir dir;
  std::string path = dir.file("fusion.json");
  EXPECT_EQ(writeFusionDisabledReport(path), "");
  std::string text = readFile(path);
  EXPECT_NE(text.find("\"fusion\": \"disabled\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"sites\": []"), std::string::npos) << text;
  EXPECT_NE(writeFusionDisabledReport(dir.file("missing/dir/fusion.json")), "");
}

TEST(KernelCacheTest, KeyChangesWithEveryPart) {
  std::vector<std::string> features = {"avx512_sapphirerapids", "avx2-fma-f16c"};
  std::string key = kernelCacheKey("attune_softmax_f32", "", features, "build1");
  EXPECT_EQ(key, kernelCacheKey("attune_softmax_f32", "", features, "build1"));
  EXPECT_EQ(key.rfind("attune_softmax_f32-", 0), 0u) << key;
  EXPECT_NE(key, kernelCacheKey("attune_softmax_f16", "", features, "build1"));
  EXPECT_NE(key, kernelCacheKey("attune_softmax_f32", "", features, "build2"));
  EXPECT_NE(key, kernelCacheKey("attune_softmax_f32", "", {"avx2-fma-f16c"}, "build1"));
  // Order matters: the first feature set is the preferred one.
  EXPECT_NE(key, kernelCacheKey("attune_softmax_f32", "",
                                {"avx2-fma-f16c", "avx512_sapphirerapids"}, "build1"));
  // Tuned schedule parameters change the code under the same symbol name.
  EXPECT_NE(key, kernelCacheKey("attune_softmax_f32", "avx2{rows=4;}", features,
                                "build1"));
  EXPECT_NE(kernelCacheKey("attune_softmax_f32", "avx2{rows=4;}", features, "b"),
            kernelCacheKey("attune_softmax_f32", "avx2{rows=6;}", features, "b"));
  // Splitting differently must not collide ("a-b" + "c" vs "a" + "b-c").
  EXPECT_NE(kernelCacheKey("k", "", {"a-b", "c"}, "x"),
            kernelCacheKey("k", "", {"a", "b-c"}, "x"));
}

TEST(KernelCacheTest, KeyIsAFileName) {
  std::string key = kernelCacheKey("weird/name with spaces", "", {}, "id");
  EXPECT_EQ(key.find('/'), std::string::npos) << key;
  EXPECT_EQ(key.find(' '), std::string::npos) << key;
  std::string longName(500, 'k');
  EXPECT_LT(kernelCacheKey(longName, "", {}, "id").size(), 200u);
}

TEST(KernelCacheTest, BuildIdIsStableWithinAProcess) {
  EXPECT_FALSE(compilerBuildId().empty());
  EXPECT_EQ(compilerBuildId(), compilerBuildId());
}

TEST(KernelCacheTest, StoreThenLookup) {
  TempDir dir;
  KernelCache cache(dir.file("cache"));
  EXPECT_FALSE(cache.lookup("k-1").has_value());
  std::string object = dir.file("k.o");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object, ec);
    ASSERT_FALSE(ec);
    os << "object bytes";
  }
  EXPECT_EQ(cache.store("k-1", object), "");
  auto hit = cache.lookup("k-1");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(readFile(*hit), "object bytes");
  // No temporary file is left next to the entry.
  std::error_code ec;
  unsigned entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir.file("cache"), ec), end;
       it != end && !ec; it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(KernelCacheTest, DisabledCacheNeverHits) {
  TempDir dir;
  KernelCache cache("");
  EXPECT_FALSE(cache.enabled());
  std::string object = dir.file("k.o");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object, ec);
    os << "x";
  }
  EXPECT_EQ(cache.store("k", object), "");
  EXPECT_FALSE(cache.lookup("k").has_value());
}

TEST(KernelCacheTest, DefaultDirectoryFollowsEnvironment) {
  // Restores both variables whatever happens below.
  struct SavedEnv {
    const char *name;
    std::optional<std::string> value;
    explicit SavedEnv(const char *name) : name(name) {
      if (const char *v = getenv(name))
        value = v;
    }
    ~SavedEnv() {
      if (value)
        setenv(name, value->c_str(), 1);
      else
        unsetenv(name);
    }
  } savedCache("ATTUNE_KERNEL_CACHE"), savedXdg("XDG_CACHE_HOME");
  setenv("ATTUNE_KERNEL_CACHE", "/tmp/attune-cache-test", 1);
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(defaultKernelCacheDir(), "/tmp/attune-cache-test");
  unsetenv("ATTUNE_KERNEL_CACHE");
  EXPECT_EQ(defaultKernelCacheDir(), "/tmp/xdg/attune");
}

} // namespace
