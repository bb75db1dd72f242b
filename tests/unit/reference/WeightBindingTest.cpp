//===- WeightBindingTest.cpp - binding real checkpoints to tfm.weight -----===//
//
// The rules materializeWeights applies between a checkpoint as PyTorch
// writes it and the IR: F16 and BF16 widen exactly to f32 (checked on every
// one of the 65,536 bit patterns against APFloat, and on named patterns:
// subnormals, infinities, NaN payloads), `transpose` reads nn.Linear's
// [out, in] as [in, out], and a tensor at an odd byte of the file reads the
// same as an aligned one.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "tests/unit/reference/SafeTensorsTestSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace attune;
using namespace attune::testing;

namespace {

class WeightBindingTest : public ::testing::Test {
protected:
  WeightBindingTest() { context.loadDialect<tfm::TfmDialect>(); }

  /// A module returning one weight declared as `decl` (e.g. `"w" :
  /// tensor<4xf32>`) of type `type`.
  mlir::OwningOpRef<mlir::ModuleOp> weightModule(llvm::StringRef decl,
                                                 llvm::StringRef type) {
    std::string source = llvm::formatv(R"mlir(
      func.func @f() -> {1} {
        %w = tfm.weight {0}
        return %w : {1}
      })mlir",
                                       decl, type)
                             .str();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source;
    return module;
  }

  /// Binds `module` to the safetensors bytes `file` and returns the bytes
  /// of tensor `name` in the blob (empty and a test failure on an error).
  std::vector<uint8_t> bind(mlir::ModuleOp module, const std::string &file,
                            llvm::StringRef name) {
    TemporaryDirectory dir;
    auto blob = materializeWeights(module, dir.write("w.safetensors", file), 0);
    if (!blob) {
      ADD_FAILURE() << llvm::toString(blob.takeError());
      return {};
    }
    auto view = SafeTensorsView::parse(blob->data(), blob->size());
    if (!view) {
      ADD_FAILURE() << llvm::toString(view.takeError());
      return {};
    }
    const SafeTensorEntry *e = view->lookup(name);
    if (!e) {
      ADD_FAILURE() << "no tensor " << name.str() << " in the blob";
      return {};
    }
    const uint8_t *p = view->dataStart() + e->offset;
    return std::vector<uint8_t>(p, p + e->size);
  }

  /// The error of binding `module` to `file` (empty and a test failure on
  /// success).
  std::string bindError(mlir::ModuleOp module, const std::string &file) {
    TemporaryDirectory dir;
    auto blob = materializeWeights(module, dir.write("w.safetensors", file), 0);
    if (blob) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(blob.takeError());
  }

  template <typename T>
  static std::vector<T> as(const std::vector<uint8_t> &bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  static std::vector<uint8_t> u16Bytes(const std::vector<uint16_t> &values) {
    std::vector<uint8_t> out(values.size() * 2);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }

  mlir::MLIRContext context;
};

/// The bits of a 16-bit float of `semantics` converted to f32 by APFloat,
/// which knows nothing of attune's conversion.
uint32_t apFloatWiden(const llvm::fltSemantics &semantics, uint16_t bits) {
  llvm::APFloat x(semantics, llvm::APInt(16, bits));
  bool losesInfo;
  x.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  EXPECT_FALSE(losesInfo);
  return static_cast<uint32_t>(x.bitcastToAPInt().getZExtValue());
}

/// And back: a widened value narrows to the bits it came from.
uint16_t apFloatNarrow(const llvm::fltSemantics &semantics, uint32_t bits) {
  llvm::APFloat x(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits));
  bool losesInfo;
  x.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue());
}

/// Every F16 bit pattern, widened by the binder, against APFloat and back.
TEST_F(WeightBindingTest, F16WidensExactlyToF32) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<uint16_t>(i);
  auto module = weightModule(R"("w" : tensor<65536xf32>)", "tensor<65536xf32>");
  ASSERT_TRUE(module);
  std::vector<uint32_t> got = as<uint32_t>(bind(
      *module,
      writeSafeTensors({{"w", ScalarType::F16, {65536}, u16Bytes(all)}}), "w"));
  ASSERT_EQ(got.size(), all.size());
  for (uint32_t h = 0; h < 65536; ++h) {
    bool isNaN = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (isNaN) {
      // APFloat quiets a signalling NaN; the binder keeps every payload bit.
      uint32_t expected =
          ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
      EXPECT_EQ(got[h], expected) << std::hex << "half 0x" << h;
      continue;
    }
    ASSERT_EQ(got[h], apFloatWiden(llvm::APFloat::IEEEhalf(), h))
        << std::hex << "half 0x" << h;
    ASSERT_EQ(apFloatNarrow(llvm::APFloat::IEEEhalf(), got[h]), h)
        << std::hex << "half 0x" << h;
  }
  // Named patterns, so a failure says which kind of number broke.
  struct Case {
    uint16_t half;
    uint32_t single;
    const char *what;
  };
  for (Case c :
       {Case{0x0000, 0x00000000, "+0"}, Case{0x8000, 0x80000000, "-0"},
        Case{0x0001, 0x33800000, "smallest subnormal, 2^-24"},
        Case{0x8001, 0xb3800000, "-2^-24"},
        Case{0x0200, 0x38000000, "subnormal 2^-15"},
        Case{0x03ff, 0x387fc000, "largest subnormal"},
        Case{0x0400, 0x38800000, "smallest normal, 2^-14"},
        Case{0x3c00, 0x3f800000, "1"}, Case{0xc000, 0xc0000000, "-2"},
        Case{0x3555, 0x3eaaa000, "0.333251953125"},
        Case{0x7bff, 0x477fe000, "65504, the largest half"},
        Case{0x7c00, 0x7f800000, "+inf"}, Case{0xfc00, 0xff800000, "-inf"},
        Case{0x7e00, 0x7fc00000, "quiet NaN"},
        Case{0xfe01, 0xffc02000, "negative quiet NaN with payload"},
        Case{0x7d00, 0x7fa00000, "signalling NaN"}})
    EXPECT_EQ(got[c.half], c.single) << c.what;
}

TEST_F(WeightBindingTest, BF16WidensExactlyToF32) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<uint16_t>(i);
  auto module = weightModule(R"("w" : tensor<65536xf32>)", "tensor<65536xf32>");
  ASSERT_TRUE(module);
  std::vector<uint32_t> got = as<uint32_t>(
      bind(*module,
           writeSafeTensors({{"w", ScalarType::BF16, {65536}, u16Bytes(all)}}),
           "w"));
  ASSERT_EQ(got.size(), all.size());
  for (uint32_t b = 0; b < 65536; ++b) {
    ASSERT_EQ(got[b], b << 16) << std::hex << "bf16 0x" << b;
    bool isNaN = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    if (!isNaN) {
      ASSERT_EQ(got[b], apFloatWiden(llvm::APFloat::BFloat(), b))
          << std::hex << "bf16 0x" << b;
      ASSERT_EQ(apFloatNarrow(llvm::APFloat::BFloat(), got[b]), b);
    }
  }
  EXPECT_EQ(got[0x0001], 0x00010000u) << "bf16 subnormal";
  EXPECT_EQ(got[0x3f80], 0x3f800000u) << "1";
  EXPECT_EQ(got[0xff80], 0xff800000u) << "-inf";
  EXPECT_EQ(got[0x7fc1], 0x7fc10000u) << "NaN with payload";
}

/// Widening is the one conversion: to f32, from F16 or BF16. Everything else
/// names the tensor and both dtypes.
TEST_F(WeightBindingTest, OtherDTypeMismatchesAreErrors) {
  struct Case {
    ScalarType file;
    const char *irType;
    const char *expected;
  };
  for (Case c :
       {Case{ScalarType::F16, "tensor<2xbf16>",
             "tensor 'w' has dtype F16, but the IR declares tensor<2xbf16>"},
        Case{ScalarType::BF16, "tensor<2xf16>",
             "tensor 'w' has dtype BF16, but the IR declares tensor<2xf16>"},
        Case{ScalarType::F32, "tensor<2xf16>",
             "tensor 'w' has dtype F32, but the IR declares tensor<2xf16>"},
        Case{ScalarType::I32, "tensor<2xf32>",
             "tensor 'w' has dtype I32, but the IR declares tensor<2xf32>"},
        Case{ScalarType::F16, "tensor<2xi32>",
             "tensor 'w' has dtype F16, but the IR declares tensor<2xi32>"}}) {
    auto module =
        weightModule((llvm::Twine("\"w\" : ") + c.irType).str(), c.irType);
    ASSERT_TRUE(module);
    size_t width = scalarTypeBytes(c.file);
    std::string err = bindError(
        *module, writeSafeTensors(
                     {{"w", c.file, {2}, std::vector<uint8_t>(2 * width, 0)}}));
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_NE(err.find("w.safetensors"), std::string::npos) << err;
  }
}

/// nn.Linear stores [out, in]; the weight sees [in, out].
TEST_F(WeightBindingTest, TransposeReadsTheFileTransposed) {
  auto module =
      weightModule(R"("w" {transpose} : tensor<3x2xf32>)", "tensor<3x2xf32>");
  ASSERT_TRUE(module);
  std::vector<float> got = as<float>(bind(
      *module,
      writeSafeTensors(
          {{"w", ScalarType::F32, {2, 3}, floatBytes({0, 1, 2, 3, 4, 5})}}),
      "w"));
  EXPECT_EQ(got, (std::vector<float>{0, 3, 1, 4, 2, 5}));

  // Larger than a tile on both sides, not square, and with 8-byte elements.
  constexpr int64_t kRows = 70, kCols = 45;
  std::vector<uint8_t> ids(kRows * kCols * 8);
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    int64_t v = i * 1000003;
    std::memcpy(&ids[i * 8], &v, 8);
  }
  module = weightModule(R"("ids" {transpose} : tensor<45x70xi64>)",
                        "tensor<45x70xi64>");
  ASSERT_TRUE(module);
  std::vector<int64_t> gotIds = as<int64_t>(
      bind(*module,
           writeSafeTensors({{"ids", ScalarType::I64, {kRows, kCols}, ids}}),
           "ids"));
  ASSERT_EQ(gotIds.size(), static_cast<size_t>(kRows * kCols));
  for (int64_t j = 0; j < kCols; ++j)
    for (int64_t i = 0; i < kRows; ++i)
      ASSERT_EQ(gotIds[j * kRows + i], (i * kCols + j) * 1000003)
          << "[" << j << ", " << i << "]";
}

/// A BF16 checkpoint of a linear layer: widened and transposed in one read.
TEST_F(WeightBindingTest, TransposeAndWiden) {
  auto module =
      weightModule(R"("w" {transpose} : tensor<3x2xf32>)", "tensor<3x2xf32>");
  ASSERT_TRUE(module);
  // 1, 2, 3, -1, -2, -3 in bfloat16.
  std::vector<uint16_t> bf16 = {0x3f80, 0x4000, 0x4040, 0xbf80, 0xc000, 0xc040};
  std::vector<float> got = as<float>(
      bind(*module,
           writeSafeTensors({{"w", ScalarType::BF16, {2, 3}, u16Bytes(bf16)}}),
           "w"));
  EXPECT_EQ(got, (std::vector<float>{1, -1, 2, -2, 3, -3}));
}

TEST_F(WeightBindingTest, TransposeShapeError) {
  auto module =
      weightModule(R"("w" {transpose} : tensor<3x2xf32>)", "tensor<3x2xf32>");
  ASSERT_TRUE(module);
  // The file holds the IR's shape, not its transpose.
  std::string err = bindError(
      *module,
      writeSafeTensors(
          {{"w", ScalarType::F32, {3, 2}, floatBytes({0, 1, 2, 3, 4, 5})}}));
  EXPECT_NE(err.find("tensor 'w' has shape [3, 2], but the IR declares "
                     "[3, 2] with 'transpose', so the file must hold [2, 3]"),
            std::string::npos)
      << err;
}

/// Without a file, `transpose` changes nothing: the weight is generated in
/// the IR's shape from the same stream as without the attribute.
TEST_F(WeightBindingTest, TransposeWithoutAFile) {
  auto plain = weightModule(R"("w" : tensor<3x2xf32>)", "tensor<3x2xf32>");
  auto transposed =
      weightModule(R"("w" {transpose} : tensor<3x2xf32>)", "tensor<3x2xf32>");
  ASSERT_TRUE(plain && transposed);
  auto a = materializeWeights(*plain, "", 5);
  auto b = materializeWeights(*transposed, "", 5);
  ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(*a, *b);
}

/// One blob entry serves every tfm.weight of a name, so they must agree.
/// A tied embedding and LM head: one file tensor bound as it is and with
/// `transpose` gives two blob entries, `w` and `w^T`.
TEST_F(WeightBindingTest, SameNameWithAndWithoutTranspose) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f() -> (tensor<2x3xf32>, tensor<3x2xf32>) {
      %a = tfm.weight "w" : tensor<2x3xf32>
      %b = tfm.weight "w" {transpose} : tensor<3x2xf32>
      return %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
    })mlir",
                                                        &context);
  ASSERT_TRUE(module);
  std::string file = writeSafeTensors(
      {{"w", ScalarType::F32, {2, 3}, floatBytes({0, 1, 2, 3, 4, 5})}});
  EXPECT_EQ(as<float>(bind(*module, file, "w")),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(as<float>(bind(*module, file, "w^T")),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

/// Other writers pack tensors at any byte. Put an F32, an F16 and an I64
/// tensor at odd addresses of the mapped file (the header is 8 + an even
/// length, and a one-byte tensor comes first), and read them plain, widened
/// and transposed.
TEST_F(WeightBindingTest, UnalignedTensorsReadCorrectly) {
  std::string header =
      R"({"flag":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]},)"
      R"("f32":{"dtype":"F32","shape":[3],"data_offsets":[1,13]},)"
      R"("f16":{"dtype":"F16","shape":[2,2],"data_offsets":[13,21]},)"
      R"("i64":{"dtype":"I64","shape":[1],"data_offsets":[21,29]}})";
  if (header.size() % 2)
    header += " ";
  std::string file = fileWithHeader(header, 0);
  file.push_back(1);
  std::vector<uint8_t> f32 = floatBytes({1.25f, -3.5f, 1e-40f});
  file.append(f32.begin(), f32.end());
  std::vector<uint8_t> f16 = u16Bytes({0x3c00, 0x4000, 0x4200, 0x0001});
  file.append(f16.begin(), f16.end());
  int64_t big = -1234567890123;
  file.append(reinterpret_cast<const char *>(&big), 8);
  ASSERT_EQ((8 + header.size() + 1) % 2, 1u);

  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f() -> (tensor<3xf32>, tensor<2x2xf32>, tensor<1xi64>) {
      %a = tfm.weight "f32" : tensor<3xf32>
      %b = tfm.weight "f16" {transpose} : tensor<2x2xf32>
      %c = tfm.weight "i64" : tensor<1xi64>
      return %a, %b, %c : tensor<3xf32>, tensor<2x2xf32>, tensor<1xi64>
    })mlir",
                                                        &context);
  ASSERT_TRUE(module);
  EXPECT_EQ(as<float>(bind(*module, file, "f32")),
            (std::vector<float>{1.25f, -3.5f, 1e-40f}));
  EXPECT_EQ(as<float>(bind(*module, file, "f16")),
            (std::vector<float>{1, 3, 2, 0x1p-24f}));
  EXPECT_EQ(as<int64_t>(bind(*module, file, "i64")),
            (std::vector<int64_t>{big}));
}

} // namespace
