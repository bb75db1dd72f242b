//===- TuningDatabaseTest.cpp - the tuning database -----------------------===//
//
// The database decides which schedule every kernel gets, so a file that is
// misread must fail loudly, naming the file and the fault, and a key that
// folded in a value (the attention scale) or dropped a structural field (the
// causal flag) would hand one kernel another's schedule.
//
//===----------------------------------------------------------------------===//

#include "compiler/tuning/TuningDatabase.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace attune::tuning;
using attune::codegen::KernelKind;
using attune::codegen::KernelSpec;
using attune::codegen::ScalarType;

namespace {

KernelSpec attention(int64_t headDim, bool causal, double scale = 0.125) {
  KernelSpec spec;
  spec.kind = KernelKind::Attention;
  spec.elementType = ScalarType::F32;
  spec.headDim = headDim;
  spec.causal = causal;
  spec.scale = scale;
  return spec;
}

KernelSpec linear(bool bias) {
  KernelSpec spec;
  spec.kind = KernelKind::Linear;
  spec.hasBias = bias;
  return spec;
}

const char *kGood = R"({"format": "attune-tuning", "version": 1, "entries": [
  {"isa": "avx2", "kernel": "attention_f32_d64_causal",
   "params": {"query_tile": 48, "key_block": 64},
   "measured": {"gflops": 70.5}},
  {"isa": "avx512", "kernel": "attention_f32_d64_causal",
   "params": {"query_tile": 96}},
  {"isa": "avx2", "kernel": "linear_f32_bias", "params": {"rows": 4}}
]})";

/// The message of a failed parse, or "" when it succeeded.
std::string parseError(llvm::StringRef text) {
  auto db = TuningDatabase::parse(text, "db.json");
  if (db)
    return "";
  return llvm::toString(db.takeError());
}

/// A file in a fresh temporary directory, removed at the end of the test.
struct TempFile {
  llvm::SmallString<256> dir, path;
  explicit TempFile(llvm::StringRef name) {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("attune-tuning", dir));
    path = dir;
    llvm::sys::path::append(path, name);
  }
  ~TempFile() { llvm::sys::fs::remove_directories(dir); }
  void write(llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << text;
  }
};

TEST(TuningKey, SpellsStructureNotValues) {
  EXPECT_EQ(tuningKey(attention(64, true)), "attention_f32_d64_causal");
  EXPECT_EQ(tuningKey(attention(128, false)), "attention_f32_d128");
  // The scale only enters the arithmetic: one entry serves every model.
  EXPECT_EQ(tuningKey(attention(64, false, 0.125)),
            tuningKey(attention(64, false, 0.088)));
  KernelSpec masked = attention(64, false);
  masked.hasMask = true;
  masked.hasKeyPadding = true;
  EXPECT_EQ(tuningKey(masked), "attention_f32_d64_mask_kpm_i1");
  EXPECT_EQ(tuningKey(linear(true)), "linear_f32_bias");
  EXPECT_EQ(tuningKey(linear(false)), "linear_f32_nobias");
  KernelSpec matmul;
  matmul.kind = KernelKind::Matmul;
  matmul.transposeB = true;
  EXPECT_EQ(tuningKey(matmul), "matmul_f32_na_tb");
  KernelSpec norm;
  norm.kind = KernelKind::LayerNorm;
  norm.epsilon = 1e-5;
  KernelSpec norm2 = norm;
  norm2.epsilon = 1e-6;
  EXPECT_EQ(tuningKey(norm), "layer_norm_f32");
  EXPECT_EQ(tuningKey(norm), tuningKey(norm2));
  norm2.elementType = ScalarType::F16;
  EXPECT_EQ(tuningKey(norm2), "layer_norm_f16");
}

/// The index kernels: integer element types, compare's predicate (the loop
/// it runs) and cast's source type spell distinct keys.
TEST(TuningKey, IndexKernels) {
  KernelSpec spec;
  spec.kind = KernelKind::Binary;
  spec.binary = attune::codegen::BinaryKind::Minimum;
  spec.elementType = ScalarType::I64;
  spec.rank = 2;
  EXPECT_EQ(tuningKey(spec), "binary_i64_minimum_r2");
  spec.kind = KernelKind::Compare;
  spec.predicate = attune::codegen::ComparePredicate::Ge;
  EXPECT_EQ(tuningKey(spec), "compare_i64_ge_r2");
  spec = KernelSpec();
  spec.kind = KernelKind::Cast;
  spec.sourceType = ScalarType::Bool;
  spec.elementType = ScalarType::I64;
  EXPECT_EQ(tuningKey(spec), "cast_i64_from_i1");
  spec = KernelSpec();
  spec.kind = KernelKind::Unary;
  spec.unary = attune::codegen::UnaryKind::Log;
  EXPECT_EQ(tuningKey(spec), "unary_f32_log");
}

TEST(TuningDatabase, LookupAndApply) {
  auto db = TuningDatabase::parse(kGood, "db.json");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  EXPECT_EQ(db->isas(), (std::vector<std::string>{"avx2", "avx512"}));

  const TuningEntry *entry = db->lookup("avx2", attention(64, true, 0.3));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->params.at("query_tile"), 48);
  EXPECT_EQ(entry->params.at("key_block"), 64);
  EXPECT_EQ(db->lookup("avx2", attention(64, false)), nullptr);
  EXPECT_EQ(db->lookup("baseline", attention(64, true)), nullptr);

  KernelSpec spec = attention(64, true);
  // avx512_zen4 and avx512_spr have no entries of their own and borrow
  // avx512's; only kernels with bf16 products are built for avx512_zen4.
  EXPECT_EQ(db->levels(),
            (std::vector<std::string>{"avx2", "avx512", "avx512_zen4", "avx512_spr"}));
  EXPECT_EQ(db->apply(spec),
            (std::vector<std::string>{"avx2", "avx512", "avx512_spr"}));
  ASSERT_EQ(spec.schedules.size(), 3u);
  EXPECT_EQ(spec.schedules["avx512_spr"], spec.schedules["avx512"]);
  EXPECT_EQ(spec.schedules["avx2"],
            (attune::codegen::ScheduleParams{{"key_block", 64}, {"query_tile", 48}}));
  EXPECT_EQ(spec.schedules["avx512"],
            (attune::codegen::ScheduleParams{{"query_tile", 96}}));

  // Only avx2 has a linear entry: avx512 keeps what the spec had (formula).
  KernelSpec bias = linear(true);
  EXPECT_EQ(db->apply(bias), (std::vector<std::string>{"avx2"}));
  EXPECT_EQ(bias.schedules.count("avx512"), 0u);
  KernelSpec noBias = linear(false);
  EXPECT_TRUE(db->apply(noBias).empty());
  EXPECT_TRUE(noBias.schedules.empty());

  EXPECT_EQ(describeTuning(attention(64, true), &*db),
            "attention_f32_d64_causal: avx2 {key_block=64, query_tile=48}, "
            "avx512 {query_tile=96}, avx512_spr {query_tile=96} from avx512");
  EXPECT_EQ(describeTuning(linear(false), &*db),
            "linear_f32_nobias: avx2 formula, avx512 formula, avx512_spr formula");
  EXPECT_EQ(describeTuning(linear(false), nullptr), "linear_f32_nobias: formula");

  // bf16 weights: its own key, which the f32 linear entries do not serve,
  // and the avx512_zen4 level.
  KernelSpec bf16 = linear(true);
  bf16.weightPanel = 96;
  bf16.weightType = attune::ScalarType::BF16;
  EXPECT_TRUE(db->apply(bf16).empty());
  EXPECT_EQ(describeTuning(bf16, &*db),
            "linear_f32_bias_wbf16: avx2 formula, avx512 formula, avx512_zen4 "
            "formula, avx512_spr formula");
}

TEST(TuningDatabase, GpuLevelsAreTheTargetsToAsk) {
  // A GPU architecture's entries apply where the target asks for its
  // levels (the CUDA target: its fatbin's architectures), never at the CPU
  // levels; a CPU entry never at a GPU level.
  auto db = TuningDatabase::parse(
      R"({"format": "attune-tuning", "version": 1, "entries": [
          {"isa": "sm_90", "kernel": "attention_f32_d64_causal", "params": {"blocks_per_sm": 3}},
          {"isa": "avx2", "kernel": "attention_f32_d64_causal", "params": {"key_block": 64}}]})",
      "db.json");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  EXPECT_EQ(db->isas(), (std::vector<std::string>{"avx2", "sm_90"}));
  EXPECT_EQ(db->levels(), (std::vector<std::string>{"avx2"}));
  KernelSpec cpu = attention(64, true);
  EXPECT_EQ(db->apply(cpu), (std::vector<std::string>{"avx2"}));
  EXPECT_EQ(cpu.schedules.count("sm_90"), 0u);
  KernelSpec gpu = attention(64, true);
  const std::vector<std::string> levels = {"sm_80", "sm_90"};
  EXPECT_EQ(db->apply(gpu, levels), (std::vector<std::string>{"sm_90"}));
  ASSERT_EQ(gpu.schedules.size(), 1u);
  EXPECT_EQ(gpu.schedules["sm_90"], (attune::codegen::ScheduleParams{{"blocks_per_sm", 3}}));
  EXPECT_EQ(describeTuning(attention(64, true), &*db, levels),
            "attention_f32_d64_causal: sm_80 formula, sm_90 {blocks_per_sm=3}");
  EXPECT_TRUE(isGpuLevel("sm_80") && isGpuLevel("sm_100"));
  for (const char *name : {"sm_", "sm_x", "sm_-90", "sm_9", "gpu", "avx2", "SM_90"})
    EXPECT_FALSE(isGpuLevel(name)) << name;
}

TEST(TuningDatabase, SaveIsDeterministicAndRoundTrips) {
  auto db = TuningDatabase::parse(kGood, "db.json");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  // Insertion order differs; the text must not.
  TuningDatabase other;
  for (auto it = db->entries().rbegin(); it != db->entries().rend(); ++it)
    other.insert(it->second);
  EXPECT_EQ(db->toJSON(), other.toJSON());

  TempFile file("db.json");
  ASSERT_FALSE(bool(db->save(file.path.str())));
  auto loaded = TuningDatabase::load(file.path.str());
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->toJSON(), db->toJSON());
  const TuningEntry *entry = loaded->lookupKey("avx2", "attention_f32_d64_causal");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->measured.getNumber("gflops"), 70.5);
}

TEST(TuningDatabase, OwnEntryBeatsBorrowed) {
  TuningDatabase db;
  db.insert({"avx512", "linear_f32_bias", {{"rows", 4}}, {}});
  db.insert({"avx512_spr", "linear_f32_bias", {{"rows", 8}}, {}});
  KernelSpec spec = linear(true);
  db.apply(spec);
  EXPECT_EQ(spec.schedules["avx512"].at("rows"), 4);
  EXPECT_EQ(spec.schedules["avx512_spr"].at("rows"), 8);
  // Nothing borrows upwards or from another width.
  TuningDatabase avx2Only;
  avx2Only.insert({"avx2", "linear_f32_bias", {{"rows", 4}}, {}});
  EXPECT_EQ(avx2Only.resolve("avx512", "linear_f32_bias"), nullptr);
  EXPECT_EQ(avx2Only.resolve("avx512_spr", "linear_f32_bias"), nullptr);
  EXPECT_EQ(avx2Only.resolve("baseline", "linear_f32_bias"), nullptr);
}

TEST(TuningDatabase, MaskedAttentionFallsBackToUnmasked) {
  TuningDatabase db;
  db.insert({"avx512", "attention_f32_d32", {{"query_tile", 32}}, {}});
  KernelSpec padded = attention(32, false);
  padded.hasKeyPadding = true;
  padded.keyPaddingType = ScalarType::I64;
  EXPECT_EQ(tuningKeys(padded), (std::vector<std::string>{
                                    "attention_f32_d32_kpm_i64", "attention_f32_d32"}));
  EXPECT_EQ(describeTuning(padded, &db),
            "attention_f32_d32_kpm_i64: avx512 {query_tile=32} from "
            "attention_f32_d32, avx512_spr {query_tile=32} from avx512 "
            "attention_f32_d32");
  KernelSpec applied = padded;
  EXPECT_EQ(db.apply(applied), (std::vector<std::string>{"avx512", "avx512_spr"}));
  EXPECT_EQ(applied.schedules["avx512"].at("query_tile"), 32);

  // An entry tuned with the mask wins over the unmasked one.
  db.insert({"avx512", "attention_f32_d32_kpm_i64", {{"query_tile", 64}}, {}});
  applied = padded;
  db.apply(applied);
  EXPECT_EQ(applied.schedules["avx512"].at("query_tile"), 64);

  // Causal is structure, not a mask: no fallback from causal to non-causal.
  KernelSpec causal = attention(32, true);
  causal.hasMask = true;
  EXPECT_EQ(tuningKeys(causal), (std::vector<std::string>{
                                    "attention_f32_d32_causal_mask",
                                    "attention_f32_d32_causal"}));
  EXPECT_EQ(db.find("avx512", causal), nullptr);
}

TEST(TuningDatabase, InsertReplaces) {
  TuningDatabase db;
  db.insert({"avx2", "linear_f32_bias", {{"rows", 4}}, {}});
  db.insert({"avx2", "linear_f32_bias", {{"rows", 6}}, {}});
  EXPECT_EQ(db.entries().size(), 1u);
  EXPECT_EQ(db.lookupKey("avx2", "linear_f32_bias")->params.at("rows"), 6);
}

TEST(TuningDatabaseErrors, MissingFile) {
  TempFile file("absent.json");
  auto db = TuningDatabase::load(file.path.str());
  ASSERT_FALSE(bool(db));
  std::string message = llvm::toString(db.takeError());
  EXPECT_NE(message.find(file.path.str().str()), std::string::npos) << message;
  EXPECT_NE(message.find("cannot read the tuning database"), std::string::npos)
      << message;
}

TEST(TuningDatabaseErrors, Directory) {
  TempFile file("dir");
  ASSERT_FALSE(llvm::sys::fs::create_directory(file.path));
  auto db = TuningDatabase::load(file.path.str());
  ASSERT_FALSE(bool(db));
  EXPECT_NE(llvm::toString(db.takeError()).find("cannot read"), std::string::npos);
}

TEST(TuningDatabaseErrors, BadJson) {
  std::string message = parseError("{\"format\": ");
  EXPECT_NE(message.find("'db.json': not valid JSON"), std::string::npos) << message;
  EXPECT_NE(parseError("[1, 2]").find("expected a JSON object"), std::string::npos);
}

TEST(TuningDatabaseErrors, WrongFormatOrVersion) {
  EXPECT_NE(parseError(R"({"format": "other", "version": 1, "entries": []})")
                .find("not a tuning database"),
            std::string::npos);
  std::string message =
      parseError(R"({"format": "attune-tuning", "version": 2, "entries": []})");
  EXPECT_NE(message.find("unsupported version 2 (this compiler reads version 1)"),
            std::string::npos)
      << message;
  EXPECT_NE(parseError(R"({"format": "attune-tuning", "entries": []})")
                .find("no integer 'version'"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"format": "attune-tuning", "version": 1})")
                .find("no array 'entries'"),
            std::string::npos);
  EXPECT_EQ(parseError(R"({"format": "attune-tuning", "version": 1, "entries": []})"),
            "");
}

TEST(TuningDatabaseErrors, UnknownIsa) {
  std::string message = parseError(
      R"({"format": "attune-tuning", "version": 1, "entries": [
          {"isa": "avx3", "kernel": "linear_f32_bias", "params": {}}]})");
  EXPECT_NE(message.find("'db.json': entries[0] has unknown isa 'avx3'"),
            std::string::npos)
      << message;
  message = parseError(
      R"({"format": "attune-tuning", "version": 1, "entries": [
          {"isa": "sm_ninety", "kernel": "attention_bf16_d128", "params": {}}]})");
  EXPECT_NE(message.find("entries[0] has unknown isa 'sm_ninety' (expected baseline, avx2, "
                         "avx512, avx512_zen4, avx512_spr or a GPU's sm_<NN>)"),
            std::string::npos)
      << message;
}

TEST(TuningDatabaseErrors, NonIntegerParams) {
  for (const char *value : {"4.5", "\"4\"", "true", "null", "[4]"}) {
    std::string message = parseError(
        std::string(R"({"format": "attune-tuning", "version": 1, "entries": [
            {"isa": "avx2", "kernel": "linear_f32_bias", "params": {"rows": )") +
        value + "}}]}");
    EXPECT_NE(message.find("entries[0] ('linear_f32_bias') param 'rows' is"),
              std::string::npos)
        << value << ": " << message;
    EXPECT_NE(message.find("expected an integer"), std::string::npos) << message;
  }
}

TEST(TuningDatabaseErrors, MalformedEntries) {
  auto withEntry = [](llvm::StringRef entry) {
    return parseError((R"({"format": "attune-tuning", "version": 1, "entries": [)" +
                       entry + "]}")
                          .str());
  };
  EXPECT_NE(withEntry("3").find("entries[0] is not an object"), std::string::npos);
  EXPECT_NE(withEntry(R"({"kernel": "k", "params": {}})").find("no string 'isa'"),
            std::string::npos);
  EXPECT_NE(withEntry(R"({"isa": "avx2", "params": {}})").find("no string 'kernel'"),
            std::string::npos);
  EXPECT_NE(withEntry(R"({"isa": "avx2", "kernel": "k"})").find("no object 'params'"),
            std::string::npos);
  EXPECT_NE(withEntry(R"({"isa": "avx2", "kernel": "k", "params": {}, "param": {}})")
                .find("unknown field 'param'"),
            std::string::npos);
  EXPECT_NE(withEntry(R"({"isa": "avx2", "kernel": "k", "params": {}, "measured": 3})")
                .find("'measured' is not an object"),
            std::string::npos);
  std::string message = withEntry(R"({"isa": "avx2", "kernel": "k", "params": {}},
                                     {"isa": "avx2", "kernel": "k", "params": {}})");
  EXPECT_NE(message.find("entries[1] repeats isa 'avx2' kernel 'k'"),
            std::string::npos)
      << message;
}

} // namespace
