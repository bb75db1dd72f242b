//===- IndexKernelTest.cpp - integer, compare, cast, log, min/max kernels -===//
//
// The kernels index computations are written with (T5's relative position
// buckets, clipped distances): integer Binary and Unary kinds, minimum and
// maximum, Compare, Cast, log and Where on integers. Each is JIT-compiled
// for the host through detail::buildKernel, as the AOT path builds it, and
// compared with the reference evaluator on the matching one-op tfm function
// (tests/unit/kernels/Oracle.h), exactly: integers, selections, comparisons
// and conversions have one right answer, and log is libm's in f64 on both
// sides. Inputs mix random values with the edges that matter: INT_MIN and
// INT_MAX (wrapping), NaN, +-inf and -0.0 (compare, minimum, maximum,
// saturating casts), halfway cases (rounding). A few cases are also written
// out by hand, so that the kernels and the oracle cannot share a mistake.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/targets/cpu/CpuTarget.h"
#include "tests/unit/kernels/Oracle.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace attune::codegen;
using attune::mlirTypeName;
using attune::reference::Tensor;
using attune::testing::oracle;
using attune::testing::toTensor;
using Halide::Buffer;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

std::mt19937 &rng() {
  static std::mt19937 gen(2718);
  return gen;
}

/// Builds `spec` for this process's ISA level (ATTUNE_CPU caps it) and runs
/// it on `inputs`.
struct Kernel {
  explicit Kernel(const KernelSpec &spec)
      : built(detail::buildKernel(spec, attune::targets::cpu::jitTarget())) {}
  Halide::Buffer<> run(const std::vector<Halide::Buffer<>> &inputs,
                       const std::vector<int> &outShape) {
    EXPECT_EQ(inputs.size(), built.inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      built.inputs[i].set(inputs[i]);
    return built.jit().realize(outShape, attune::targets::cpu::jitTarget());
  }
  detail::BuiltKernel built;
};

/// A view of `storage` with explicit extents and strides (innermost first).
template <typename T>
Buffer<T> view(Buffer<T> &storage, const std::vector<int> &shape,
               const std::vector<int> &strides) {
  std::vector<halide_dimension_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims.push_back(halide_dimension_t(0, shape[i], strides[i]));
  return Buffer<T>(storage.data(), static_cast<int>(dims.size()), dims.data());
}

/// `value` stored in T: floats round to nearest, i64 saturates (2^63 is
/// INT64_MAX, as the evaluator holds it), i1 is != 0.
template <typename T>
T store(double value) {
  if constexpr (std::is_same_v<T, int64_t>)
    return value >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(value);
  else if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else
    return T(value);
}

/// A dense rank-1 buffer of `type` holding `values` (see store).
Halide::Buffer<> rank1(ScalarType type, const std::vector<double> &values) {
  const int n = static_cast<int>(values.size());
  auto fill = [&](auto buffer) -> Halide::Buffer<> {
    using T = typename decltype(buffer)::ElemType;
    for (int i = 0; i < n; ++i)
      buffer(i) = store<T>(values[i]);
    return buffer;
  };
  switch (type) {
  case ScalarType::F32:
    return fill(Buffer<float>(n));
  case ScalarType::F16:
    return fill(Buffer<Halide::float16_t>(n));
  case ScalarType::BF16:
    return fill(Buffer<Halide::bfloat16_t>(n));
  case ScalarType::I32:
    return fill(Buffer<int32_t>(n));
  case ScalarType::I64:
    return fill(Buffer<int64_t>(n));
  case ScalarType::Bool:
    return fill(Buffer<bool>(n));
  default:
    throw std::runtime_error("rank1: unsupported type");
  }
}

/// Element `i` of a dense rank-1 buffer, as a double.
double element(const Halide::Buffer<> &b, int i) {
  Halide::Type t = b.type();
  if (t == Halide::Float(32))
    return b.as<float>()(i);
  if (t == Halide::Float(16))
    return static_cast<double>(b.as<Halide::float16_t>()(i));
  if (t == Halide::BFloat(16))
    return static_cast<double>(b.as<Halide::bfloat16_t>()(i));
  if (t == Halide::Int(32))
    return b.as<int32_t>()(i);
  if (t == Halide::Int(64))
    return static_cast<double>(b.as<int64_t>()(i));
  if (t == Halide::Bool())
    return b.as<bool>()(i);
  throw std::runtime_error("element: unsupported type");
}

/// A rank-1 buffer as the oracle's tensor.
Tensor asTensor(const Halide::Buffer<> &b, ScalarType type) {
  Tensor t;
  t.dtype = type;
  t.shape = {b.dim(0).extent()};
  for (int i = 0; i < b.dim(0).extent(); ++i)
    t.data.push_back(element(b, i));
  return t;
}

/// got == want, NaN matching NaN (and -0.0 matching 0.0).
::testing::AssertionResult same(double got, double want) {
  if (got == want || (std::isnan(got) && std::isnan(want)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

/// Every element of the dense `out` equals the oracle's (flat, row-major).
template <typename T>
void expectSame(const Buffer<T> &out, const Tensor &want, const std::string &what) {
  ASSERT_EQ(static_cast<size_t>(out.number_of_elements()), want.data.size()) << what;
  for (size_t i = 0; i < want.data.size(); ++i)
    ASSERT_TRUE(same(static_cast<double>(out.data()[i]), want.data[i]))
        << what << " at flat index " << i;
}

const char *typeName(ScalarType type) { return mlirTypeName(type); }

//===----------------------------------------------------------------------===//
// Integer Binary: add, sub, mul, minimum, maximum wrap or select exactly
//===----------------------------------------------------------------------===//

const char *binaryOp(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Add:
    return "tfm.add";
  case BinaryKind::Sub:
    return "tfm.sub";
  case BinaryKind::Mul:
    return "tfm.mul";
  case BinaryKind::Div:
    return "tfm.div";
  case BinaryKind::Minimum:
    return "tfm.minimum";
  case BinaryKind::Maximum:
    return "tfm.maximum";
  }
  return "?";
}

/// Random T: the whole range for i32; +-2^40 for i64, where the oracle's
/// doubles hold every product exactly.
template <typename T>
T randomInteger() {
  int64_t bound = sizeof(T) == 4 ? INT32_MAX : (int64_t(1) << 40);
  return static_cast<T>(std::uniform_int_distribution<int64_t>(-bound, bound)(rng()));
}

template <typename T>
void checkIntegerBinary(ScalarType type) {
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  // Pairs where i32/i64 arithmetic wraps: MAX + 1, MIN - 1, MAX * 2,
  // MIN * -1, MIN + MIN; and ones where it does not.
  const std::vector<std::pair<T, T>> edges = {
      {hi, 1}, {lo, 1}, {hi, 2}, {lo, -1}, {lo, lo}, {hi, hi}, {0, lo}, {-7, 3}, {65536, 65536}};
  for (BinaryKind kind : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul,
                          BinaryKind::Minimum, BinaryKind::Maximum}) {
    KernelSpec spec;
    spec.kind = KernelKind::Binary;
    spec.binary = kind;
    spec.elementType = type;
    spec.rank = 2;
    Kernel kernel(spec);
    const std::string op = std::string(binaryOp(kind)) + " %a0, %a1 : {T0}, {T1} -> {R}";
    for (int d0 : {1, 7, 129}) {
      const int d1 = 3;
      SCOPED_TRACE(std::string(typeName(type)) + " " + binaryOp(kind) + " d0=" +
                   std::to_string(d0));
      // Same shapes, dense: the edge pairs first.
      Buffer<T> a(d0, d1), b(d0, d1);
      a.for_each_value([](T &v) { v = randomInteger<T>(); });
      b.for_each_value([](T &v) { v = randomInteger<T>(); });
      for (size_t e = 0; e < edges.size() && e < size_t(d0 * d1); ++e) {
        a.data()[e] = edges[e].first;
        b.data()[e] = edges[e].second;
      }
      Buffer<T> out = kernel.run({a, b}, {d0, d1}).template as<T>();
      Tensor want = oracle().eval(op, {toTensor(a, type), toTensor(b, type)}, {d1, d0}, type);
      expectSame(out, want, "dense");
      // A row [d0] broadcast over d1 (stride 0), on the left.
      Buffer<T> row(d0);
      row.for_each_value([](T &v) { v = randomInteger<T>(); });
      row(0) = hi;
      Buffer<T> wide = view(row, {d0, d1}, {1, 0});
      out = kernel.run({wide, b}, {d0, d1}).template as<T>();
      want = oracle().eval(op, {toTensor(row, type), toTensor(b, type)}, {d1, d0}, type);
      expectSame(out, want, "broadcast");
    }
  }
}

TEST(IntegerBinaryKernel, WrapsAtI32AndI64) {
  checkIntegerBinary<int32_t>(ScalarType::I32);
  checkIntegerBinary<int64_t>(ScalarType::I64);
}

/// The wrap by hand, so the oracle and the kernels cannot share it.
TEST(IntegerBinaryKernel, WrapsByHand) {
  KernelSpec spec;
  spec.kind = KernelKind::Binary;
  spec.elementType = ScalarType::I32;
  spec.rank = 1;
  Buffer<int32_t> a(3), b(3);
  a(0) = INT32_MAX, b(0) = 1;
  a(1) = INT32_MIN, b(1) = -1;
  a(2) = 65536, b(2) = 65536;
  spec.binary = BinaryKind::Add;
  Buffer<int32_t> sum = Kernel(spec).run({a, b}, {3}).as<int32_t>();
  EXPECT_EQ(sum(0), INT32_MIN);
  EXPECT_EQ(sum(1), INT32_MAX);
  spec.binary = BinaryKind::Mul;
  Buffer<int32_t> product = Kernel(spec).run({a, b}, {3}).as<int32_t>();
  EXPECT_EQ(product(0), INT32_MAX);
  EXPECT_EQ(product(1), INT32_MIN); // -INT_MIN wraps
  EXPECT_EQ(product(2), 0);         // 2^32
}

//===----------------------------------------------------------------------===//
// Float minimum and maximum: NaN if either is NaN
//===----------------------------------------------------------------------===//

/// The values every float test crosses with each other.
const std::vector<double> kFloatEdges = {kNaN, kInf, -kInf, 0.0, -0.0, 1.5, -2.0, 3.25,
                                         1e-40, -65504, 65504, 2.0};

template <typename T>
void checkFloatMinMax(ScalarType type) {
  const int n = static_cast<int>(kFloatEdges.size());
  for (BinaryKind kind : {BinaryKind::Minimum, BinaryKind::Maximum}) {
    KernelSpec spec;
    spec.kind = KernelKind::Binary;
    spec.binary = kind;
    spec.elementType = type;
    spec.rank = 2;
    Kernel kernel(spec);
    // Every pair: a column [n, 1] against a row [n], both broadcast.
    Buffer<T> column(n), row(n);
    for (int i = 0; i < n; ++i)
      column(i) = row(i) = store<T>(kFloatEdges[i]);
    Buffer<T> lhs = view(column, {n, n}, {0, 1}), rhs = view(row, {n, n}, {1, 0});
    Buffer<T> out = kernel.run({lhs, rhs}, {n, n}).template as<T>();
    Tensor col = toTensor(column, type);
    col.shape = {n, 1};
    Tensor want = oracle().eval(std::string(binaryOp(kind)) + " %a0, %a1 : {T0}, {T1} -> {R}",
                                {col, toTensor(row, type)}, {n, n}, type);
    expectSame(out, want, std::string(typeName(type)) + " " + binaryOp(kind));
  }
}

TEST(MinMaxKernel, FloatsPropagateNaN) {
  checkFloatMinMax<float>(ScalarType::F32);
  checkFloatMinMax<Halide::float16_t>(ScalarType::F16);
  checkFloatMinMax<Halide::bfloat16_t>(ScalarType::BF16);
}

//===----------------------------------------------------------------------===//
// Compare: every predicate, every element type
//===----------------------------------------------------------------------===//

const std::pair<ComparePredicate, const char *> kPredicates[] = {
    {ComparePredicate::Lt, "lt"}, {ComparePredicate::Le, "le"}, {ComparePredicate::Gt, "gt"},
    {ComparePredicate::Ge, "ge"}, {ComparePredicate::Eq, "eq"}, {ComparePredicate::Ne, "ne"}};

template <typename T>
void checkCompare(ScalarType type, const std::vector<double> &values) {
  const int n = static_cast<int>(values.size());
  for (auto [predicate, name] : kPredicates) {
    KernelSpec spec;
    spec.kind = KernelKind::Compare;
    spec.predicate = predicate;
    spec.elementType = type;
    spec.rank = 2;
    Kernel kernel(spec);
    const std::string op = std::string("tfm.compare %a0, %a1 {predicate = #tfm.compare<") +
                           name + ">} : {T0}, {T1} -> {R}";
    SCOPED_TRACE(std::string(typeName(type)) + " " + name);
    // Every pair of values: a column against a row, both broadcast.
    Buffer<T> column(n), row(n);
    for (int i = 0; i < n; ++i)
      column(i) = row(i) = store<T>(values[i]);
    Buffer<T> lhs = view(column, {n, n}, {0, 1}), rhs = view(row, {n, n}, {1, 0});
    Buffer<bool> out = kernel.run({lhs, rhs}, {n, n}).template as<bool>();
    Tensor col = toTensor(column, type);
    col.shape = {n, 1};
    Tensor want = oracle().eval(op, {col, toTensor(row, type)}, {n, n}, ScalarType::Bool);
    expectSame(out, want, "pairs");
    // Dense operands (the vector-load specialisation), drawn from the same
    // values so that equal pairs occur.
    const int d0 = 37, d1 = 5;
    Buffer<T> a(d0, d1), b(d0, d1);
    std::uniform_int_distribution<int> pick(0, n - 1);
    a.for_each_value([&](T &v) { v = store<T>(values[pick(rng())]); });
    b.for_each_value([&](T &v) { v = store<T>(values[pick(rng())]); });
    out = kernel.run({a, b}, {d0, d1}).template as<bool>();
    want = oracle().eval(op, {toTensor(a, type), toTensor(b, type)}, {d1, d0}, ScalarType::Bool);
    expectSame(out, want, "dense");
  }
}

TEST(CompareKernel, EveryPredicateAndType) {
  checkCompare<float>(ScalarType::F32, kFloatEdges);
  checkCompare<Halide::float16_t>(ScalarType::F16, kFloatEdges);
  checkCompare<Halide::bfloat16_t>(ScalarType::BF16, kFloatEdges);
  checkCompare<int32_t>(ScalarType::I32, {0, 1, -1, 7, INT32_MAX, INT32_MIN, -7});
  checkCompare<int64_t>(ScalarType::I64,
                        {0, 1, -1, 0x1p40, -0x1p40, 0x1p63 /* INT64_MAX */, -0x1p63});
}

/// NaN by hand: false for every predicate but ne, against NaN too; -0.0
/// equals 0.0.
TEST(CompareKernel, NaNAndSignedZeroByHand) {
  Buffer<float> a(4), b(4);
  a(0) = NAN, b(0) = 1.f;
  a(1) = NAN, b(1) = NAN;
  a(2) = -0.f, b(2) = 0.f;
  a(3) = -INFINITY, b(3) = -FLT_MAX;
  const bool expected[6][4] = {
      {false, false, false, true},  // lt
      {false, false, true, true},   // le
      {false, false, false, false}, // gt
      {false, false, true, false},  // ge
      {false, false, true, false},  // eq
      {true, true, false, true}};   // ne
  for (int p = 0; p < 6; ++p) {
    KernelSpec spec;
    spec.kind = KernelKind::Compare;
    spec.predicate = kPredicates[p].first;
    spec.rank = 1;
    Buffer<bool> out = Kernel(spec).run({a, b}, {4}).as<bool>();
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out(i), expected[p][i]) << kPredicates[p].second << " at " << i;
  }
}

//===----------------------------------------------------------------------===//
// Cast: every pair of types
//===----------------------------------------------------------------------===//

/// Edges, then random values, of a source type.
std::vector<double> castInputs(ScalarType from) {
  std::vector<double> values;
  if (from == ScalarType::Bool) {
    values = {0, 1, 1, 0, 1};
  } else if (from == ScalarType::I32 || from == ScalarType::I64) {
    // 65504 is f16's largest, 65520 halfway past it; 2^24 + 2^16 + 1 rounds
    // wrongly through f32 to bf16.
    values = {0, 1, -1, 7, -7, 65504, 65519, 65520, -65520, 16777217, 16842753, -16842753,
              INT32_MAX, INT32_MIN};
    if (from == ScalarType::I64)
      values.insert(values.end(), {0x1p31, 0x1p32 + 5, 0x1p40 + 1, 0x1p53 - 1, -0x1p53,
                                   0x1p63 /* INT64_MAX */, -0x1p63});
    int64_t bound = from == ScalarType::I32 ? INT32_MAX : (int64_t(1) << 50);
    std::uniform_int_distribution<int64_t> dist(-bound, bound);
    for (int i = 0; i < 100; ++i)
      values.push_back(static_cast<double>(dist(rng())));
  } else {
    // Saturation limits of i32 and i64 and around them, f16's limits,
    // bf16 ties, a subnormal, NaN and infinities.
    values = {0.0,         -0.0,       0.5,        -0.5,          2.7,          -2.7,
              1 + 0x1p-8,  1 + 3 * 0x1p-8, 1.0 / 3, 65504,        65519,        65520,
              -65520,      0x1p31,     -0x1p31,    2147483520.0,  -2147483904.0, 0x1p40,
              -0x1p40,     0x1p63,     -0x1p63,    9.2233715e18,  1e30,         -1e30,
              3e38,        1e-40,      kInf,       -kInf,         kNaN,         -kNaN};
    std::uniform_real_distribution<double> mantissa(-1, 1);
    std::uniform_int_distribution<int> exponent(-20, 70);
    for (int i = 0; i < 100; ++i)
      values.push_back(std::ldexp(mantissa(rng()), exponent(rng())));
  }
  return values;
}

TEST(CastKernel, EveryPairOfTypesMatchesTheOracle) {
  const ScalarType types[] = {ScalarType::F32, ScalarType::F16, ScalarType::BF16,
                              ScalarType::Bool, ScalarType::I32, ScalarType::I64};
  for (ScalarType from : types) {
    Halide::Buffer<> x = rank1(from, castInputs(from));
    const int n = x.dim(0).extent();
    Tensor in = asTensor(x, from);
    for (ScalarType to : types) {
      SCOPED_TRACE(std::string(typeName(from)) + " to " + typeName(to));
      KernelSpec spec;
      spec.kind = KernelKind::Cast;
      spec.sourceType = from;
      spec.elementType = to;
      Halide::Buffer<> out = Kernel(spec).run({x}, {n});
      Tensor want = oracle().eval("tfm.cast %a0 : {T0} -> {R}", {in}, {n}, to);
      for (int i = 0; i < n; ++i)
        ASSERT_TRUE(same(element(out, i), want.data[i]))
            << "at " << i << " (input " << in.data[i] << ")";
    }
  }
}

/// The edges the op's description names, by hand.
TEST(CastKernel, EdgeValuesByHand) {
  auto cast = [](ScalarType from, ScalarType to, const std::vector<double> &values) {
    KernelSpec spec;
    spec.kind = KernelKind::Cast;
    spec.sourceType = from;
    spec.elementType = to;
    Halide::Buffer<> out =
        Kernel(spec).run({rank1(from, values)}, {static_cast<int>(values.size())});
    std::vector<double> got;
    for (size_t i = 0; i < values.size(); ++i)
      got.push_back(element(out, static_cast<int>(i)));
    return got;
  };
  // Toward zero, saturating (inf too), NaN to 0.
  EXPECT_EQ(cast(ScalarType::F32, ScalarType::I32,
                 {kInf, -kInf, kNaN, 0x1p40, -0x1p40, -2.7, 2.7, 0x1p31, -0x1p31, 2147483520.0}),
            (std::vector<double>{INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, -2, 2, INT32_MAX,
                                 INT32_MIN, 2147483520.0}));
  std::vector<double> wide = cast(ScalarType::F32, ScalarType::I64, {kInf, -kInf, kNaN, 0x1p62});
  EXPECT_EQ(wide, (std::vector<double>{double(INT64_MAX), double(INT64_MIN), 0, 0x1p62}));
  EXPECT_EQ(cast(ScalarType::F16, ScalarType::I32, {kInf, -kInf, 65504, -2.75}),
            (std::vector<double>{INT32_MAX, INT32_MIN, 65504, -2}));
  EXPECT_EQ(cast(ScalarType::BF16, ScalarType::I32, {0x1p31, -0x1p31, 0x1p30}),
            (std::vector<double>{INT32_MAX, INT32_MIN, 0x1p30}));
  // To nearest even, once: 2^53 - 1 and 2^24 + 1 to f32; 2^24 + 2^16 + 1
  // to bf16 is 2^24 + 2^17, not the 2^24 that rounding through f32 gives.
  EXPECT_EQ(cast(ScalarType::I64, ScalarType::F32, {0x1p53 - 1, 16777217, 0x1p63}),
            (std::vector<double>{0x1p53, 16777216, 0x1p63}));
  EXPECT_EQ(cast(ScalarType::I32, ScalarType::BF16, {16842753, -16842753}),
            (std::vector<double>{16908288, -16908288}));
  EXPECT_EQ(cast(ScalarType::I32, ScalarType::F16, {65519, 65520, -65520}),
            (std::vector<double>{65504, kInf, -kInf}));
  // i1 round trip, and != 0 (NaN is true, -0.0 false).
  EXPECT_EQ(cast(ScalarType::Bool, ScalarType::I64, {0, 1, 1, 0}),
            (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(cast(ScalarType::I64, ScalarType::Bool, {0, 1, -5, 0x1p40}),
            (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(cast(ScalarType::F32, ScalarType::Bool, {0.0, -0.0, kNaN, 1e-40, -kInf}),
            (std::vector<double>{0, 0, 1, 1, 1}));
  // Narrowing integers wrap.
  EXPECT_EQ(cast(ScalarType::I64, ScalarType::I32, {0x1p32 + 5, 0x1p31, -0x1p31 - 1}),
            (std::vector<double>{5, INT32_MIN, INT32_MAX}));
}

//===----------------------------------------------------------------------===//
// Unary on integers (neg, abs, sign), log, and sign and ceil on floats
//===----------------------------------------------------------------------===//

template <typename T>
void checkIntegerUnary(ScalarType type) {
  const int n = 133;
  Buffer<T> x(n);
  x.for_each_value([](T &v) { v = randomInteger<T>(); });
  x(0) = std::numeric_limits<T>::min();
  x(1) = std::numeric_limits<T>::max();
  x(2) = 0;
  x(3) = -1;
  for (auto [kind, op] : {std::pair{UnaryKind::Neg, "tfm.neg %a0 : {T0} -> {R}"},
                          std::pair{UnaryKind::Abs, "tfm.abs %a0 : {T0} -> {R}"},
                          std::pair{UnaryKind::Sign, "tfm.sign %a0 : {T0} -> {R}"}}) {
    KernelSpec spec;
    spec.kind = KernelKind::Unary;
    spec.unary = kind;
    spec.elementType = type;
    Buffer<T> out = Kernel(spec).run({x}, {n}).template as<T>();
    expectSame(out, oracle().eval(op, {toTensor(x, type)}, {n}, type),
               std::string(typeName(type)) + " " + op);
    if (kind == UnaryKind::Sign) {
      EXPECT_EQ(out(0), -1);
      EXPECT_EQ(out(1), 1);
      EXPECT_EQ(out(2), 0);
      continue;
    }
    // -MIN and |MIN| wrap to MIN.
    EXPECT_EQ(out(0), std::numeric_limits<T>::min()) << op;
  }
}

TEST(UnaryKernel, IntegerNegAbsWrapSignExact) {
  checkIntegerUnary<int32_t>(ScalarType::I32);
  checkIntegerUnary<int64_t>(ScalarType::I64);
}

/// log is libm's in f64 rounded to f32 in the kernel and in the oracle:
/// equal, at zeros, negatives, NaN and infinities too. (Halide's own f32
/// log is up to 2 ulps off and gives ~89 at NaN and infinity.)
TEST(UnaryKernel, LogExactlyAsTheOracle) {
  KernelSpec spec;
  spec.kind = KernelKind::Unary;
  spec.unary = UnaryKind::Log;
  Kernel kernel(spec);
  const int n = 4099;
  Buffer<float> x(n);
  std::uniform_real_distribution<double> mantissa(0, 1);
  std::uniform_int_distribution<int> exponent(-30, 30);
  x.for_each_value([&](float &v) {
    v = static_cast<float>(std::ldexp(mantissa(rng()), exponent(rng())));
  });
  const float specials[] = {0.f, -0.f, -1.f, INFINITY, -INFINITY, NAN, 1.f, 2.f, 1e-40f, FLT_MAX};
  for (size_t i = 0; i < std::size(specials); ++i)
    x(i) = specials[i];
  Buffer<float> out = kernel.run({x}, {n}).as<float>();
  expectSame(out, oracle().eval("tfm.log %a0 : {T0} -> {R}", {toTensor(x)}, {n}, ScalarType::F32),
             "log");
  EXPECT_EQ(out(0), -INFINITY);
  EXPECT_TRUE(std::isnan(out(2)));
  EXPECT_EQ(out(3), INFINITY);
  EXPECT_TRUE(std::isnan(out(5)));
  EXPECT_EQ(out(6), 0.f);
  EXPECT_EQ(out(7), static_cast<float>(M_LN2));
}

/// sign and ceil are exact in every float type, and keep zeros (with their
/// sign), infinities and NaN as the oracle does: DeBERTa's log buckets read
/// them (ceil of a log ratio, the sign of a distance).
TEST(UnaryKernel, SignAndCeilExactlyAsTheOracle) {
  std::vector<double> values = {0.0, -0.0, kNaN, kInf, -kInf, 1.0, -1.0, 0.5, -0.5,
                                2.5, -2.5, 1e-40, -1e-40, 65504.0, 0x1p30 + 128};
  std::uniform_real_distribution<double> dist(-300, 300);
  for (int i = 0; i < 200; ++i)
    values.push_back(dist(rng()));
  for (ScalarType type : {ScalarType::F32, ScalarType::F16, ScalarType::BF16})
    for (auto [kind, op] : {std::pair{UnaryKind::Sign, "tfm.sign %a0 : {T0} -> {R}"},
                            std::pair{UnaryKind::Ceil, "tfm.ceil %a0 : {T0} -> {R}"}}) {
      KernelSpec spec;
      spec.kind = KernelKind::Unary;
      spec.unary = kind;
      spec.elementType = type;
      Halide::Buffer<> x = rank1(type, values);
      const int n = static_cast<int>(values.size());
      Halide::Buffer<> out = Kernel(spec).run({x}, {n});
      Tensor want = oracle().eval(op, {asTensor(x, type)}, {n}, type);
      for (int i = 0; i < n; ++i)
        ASSERT_TRUE(same(element(out, i), want.data[i]))
            << typeName(type) << " " << op << " at " << i << " of " << element(x, i);
      if (kind == UnaryKind::Ceil) {
        EXPECT_EQ(element(out, 7), 1.0);   // ceil(0.5)
        EXPECT_EQ(element(out, 8), -0.0);  // ceil(-0.5)
        EXPECT_EQ(element(out, 10), -2.0); // ceil(-2.5)
      } else {
        EXPECT_EQ(element(out, 9), 1.0);
        EXPECT_EQ(element(out, 10), -1.0);
        EXPECT_TRUE(std::signbit(element(out, 1))); // sign(-0) = -0
      }
    }
}

/// f16 and bf16 round the f32 log once more: within half an ulp of the
/// type (2^-11, 2^-8 relative) of the oracle's f64 value.
TEST(UnaryKernel, LogHalfPrecision) {
  for (auto [type, relTol] : {std::pair{ScalarType::F16, 0x1p-11}, std::pair{ScalarType::BF16, 0x1p-8}}) {
    KernelSpec spec;
    spec.kind = KernelKind::Unary;
    spec.unary = UnaryKind::Log;
    spec.elementType = type;
    std::vector<double> values = {0.0, -1.0, kInf, kNaN, 1.0};
    std::uniform_real_distribution<double> dist(1e-3, 1e3);
    for (int i = 0; i < 200; ++i)
      values.push_back(dist(rng()));
    Halide::Buffer<> x = rank1(type, values);
    const int n = static_cast<int>(values.size());
    Halide::Buffer<> out = Kernel(spec).run({x}, {n});
    Tensor want = oracle().eval("tfm.log %a0 : {T0} -> {R}", {asTensor(x, type)}, {n}, type);
    for (int i = 0; i < n; ++i) {
      double got = element(out, i), w = want.data[i];
      if (!std::isfinite(w)) {
        EXPECT_TRUE(same(got, w)) << typeName(type) << " at " << i;
      } else {
        EXPECT_LE(std::fabs(got - w), relTol * std::fabs(w) + 1e-7)
            << typeName(type) << " at " << i << ": got " << got << ", want " << w;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Where on integers
//===----------------------------------------------------------------------===//

template <typename T>
void checkIntegerWhere(ScalarType type) {
  KernelSpec spec;
  spec.kind = KernelKind::Where;
  spec.elementType = type;
  spec.rank = 2;
  Kernel kernel(spec);
  for (int d0 : {1, 7, 129}) {
    const int d1 = 4;
    // A column condition [d1, 1] and a scalar on_false, both broadcast.
    Buffer<bool> condColumn(d1);
    condColumn.for_each_value([](bool &v) { v = std::bernoulli_distribution(0.5)(rng()); });
    Buffer<T> onTrue(d0, d1), scalar(1);
    onTrue.for_each_value([](T &v) { v = randomInteger<T>(); });
    scalar(0) = std::numeric_limits<T>::min();
    Buffer<bool> cond = view(condColumn, {d0, d1}, {0, 1});
    Buffer<T> onFalse = view(scalar, {d0, d1}, {0, 0});
    Buffer<T> out = kernel.run({cond, onTrue, onFalse}, {d0, d1}).template as<T>();
    Tensor c = toTensor(condColumn, ScalarType::Bool);
    c.shape = {d1, 1};
    Tensor s = toTensor(scalar, type);
    s.shape = {};
    Tensor want = oracle().eval("tfm.where %a0, %a1, %a2 : {T0}, {T1}, {T2} -> {R}",
                                {c, toTensor(onTrue, type), s}, {d1, d0}, type);
    expectSame(out, want, std::string(typeName(type)) + " d0=" + std::to_string(d0));
  }
}

TEST(WhereKernel, IntegerValues) {
  checkIntegerWhere<int32_t>(ScalarType::I32);
  checkIntegerWhere<int64_t>(ScalarType::I64);
}

} // namespace
