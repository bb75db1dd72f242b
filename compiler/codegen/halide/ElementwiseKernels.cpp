//===- ElementwiseKernels.cpp - binary, compare, cast, where, unary, ... --===//
//
// Pointwise kernels. Binary, Compare and Where read strided inputs (stride 0
// where the host broadcasts), so their inputs carry no stride constraint,
// and each has a specialisation for the common case of inputs dense in
// dimension 0, where Halide can emit vector loads instead of gathers.
// CausalMask accepts any strides too, but the host always passes its input
// dense, so that case is specialised as well. Unary and Cast read a dense
// vector. Float arithmetic is done in f32 whatever the element type; integer
// arithmetic in the element type, wrapping. Arange reads nothing: its values
// are its indices. buildKernel has checked each spec's element types against
// its kind (validateKernelSpec) before a builder here runs.
//
// NaN and infinity. Halide compiles float code with LLVM's fast-math flags
// (no NaNs, no infinities), under which a float compare or select with a NaN
// or infinite operand has no defined result, and strict_float does not mend
// it (in Halide 21 its le and ge are true for NaN). What tfm defines for
// them (minimum and maximum of a NaN, compare, cast to an integer or i1) is
// therefore computed on the bits, in integer arithmetic: a float's bits say
// whether it is NaN, and map to an integer of the same order (below).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/BuilderSupport.h"

#include <cmath>
#include <cstring>

using namespace Halide;
using Halide::Internal::const_false;
using Halide::Internal::make_const;
using Halide::Internal::make_zero;

namespace attune::codegen::detail {

namespace {

/// Pure variables i0 (innermost) .. i(rank-1).
std::vector<Var> indexVars(int rank) {
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("i" + std::to_string(i));
  return vars;
}

std::vector<Expr> asArgs(const std::vector<Var> &vars) {
  return std::vector<Expr>(vars.begin(), vars.end());
}

/// Estimates for a rank-r elementwise kernel: a [1, 12, 128, 128]-like
/// attention-score shape, innermost first.
std::vector<int> elementwiseEstimates(int rank) {
  static const int sizes[] = {128, 128, 12, 1, 1, 1, 1, 1};
  return std::vector<int>(sizes, sizes + rank);
}

/// A float type's encoding: its bits as a signed integer of its width; all
/// but the sign bit; infinity's bits, above which the magnitude is a NaN;
/// and a quiet NaN.
struct FloatEncoding {
  Type bitsType;
  int64_t magnitudeMask, infinity, quietNaN;
};

FloatEncoding encodingOf(const Type &type) {
  if (type == Float(32))
    return {Int(32), 0x7fffffff, 0x7f800000, 0x7fc00000};
  if (type == Float(16))
    return {Int(16), 0x7fff, 0x7c00, 0x7e00};
  if (type.is_bfloat() && type.bits() == 16)
    return {Int(16), 0x7fff, 0x7f80, 0x7fc0};
  failSpec("no float encoding for a Halide type of " + std::to_string(type.bits()) + " bits");
}

Expr floatBits(const Expr &x) { return reinterpret(encodingOf(x.type()).bitsType, x); }

/// True where `x` is a NaN, from its bits.
Expr isNaNBits(const Expr &x) {
  FloatEncoding e = encodingOf(x.type());
  return (floatBits(x) & make_const(e.bitsType, e.magnitudeMask)) >
         make_const(e.bitsType, e.infinity);
}

/// An integer whose order is the order of the float `x` (NaN aside): the
/// magnitude's bits, negated for a negative x. Both zeros map to 0, so they
/// compare equal, as floats do.
Expr orderKey(const Expr &x) {
  FloatEncoding e = encodingOf(x.type());
  Expr bits = floatBits(x);
  Expr magnitude = bits & make_const(e.bitsType, e.magnitudeMask);
  return select(bits < make_zero(e.bitsType), -magnitude, magnitude);
}

/// The quiet NaN of `type`, built from its bits.
Expr quietNaN(const Type &type) {
  FloatEncoding e = encodingOf(type);
  return reinterpret(type, make_const(e.bitsType, e.quietNaN));
}

/// Two's complement arithmetic on `a` and `b` of one signed integer type:
/// done unsigned, where Halide defines overflow to wrap (signed overflow of
/// 32 bits and more it leaves undefined).
Expr wrapping(const Expr &a, const Expr &b, BinaryKind kind) {
  Type u = a.type().with_code(halide_type_uint);
  Expr ua = cast(u, a), ub = cast(u, b);
  Expr value = kind == BinaryKind::Add   ? ua + ub
               : kind == BinaryKind::Sub ? ua - ub
                                         : ua * ub;
  return cast(a.type(), value);
}

/// neg, abs or sign (validateKernelSpec allows no other on integers) of the
/// signed integer `n` in its own type: 0 - n unsigned wraps, and Halide's
/// abs returns the unsigned magnitude, which the cast wraps back (|INT_MIN|
/// is INT_MIN, as in PyTorch).
Expr integerUnary(const Expr &n, UnaryKind kind) {
  Type u = n.type().with_code(halide_type_uint);
  if (kind == UnaryKind::Sign)
    return select(n > 0, make_const(n.type(), 1),
                  select(n < 0, make_const(n.type(), -1), make_zero(n.type())));
  return kind == UnaryKind::Neg ? cast(n.type(), make_zero(u) - cast(u, n))
                                : cast(n.type(), abs(n));
}

/// `value` (a signed integer) rounded once, to nearest even, to a float of
/// `significandBits` bits (11 for f16, 8 for bf16), returned as the f32 that
/// holds it exactly. Going through f32 instead would round twice above 2^24
/// (2^24 + 2^16 + 1 becomes 2^24 + 2^16, a bf16 tie, then 2^24, where the
/// nearest bf16 is 2^24 + 2^17).
Expr roundIntegerToSignificand(const Expr &value, int significandBits) {
  Type u64 = UInt(64);
  Expr wide = cast(Int(64), value);
  Expr negative = wide < 0;
  // |value| as unsigned: exact for INT64_MIN too.
  Expr magnitude = select(negative, make_zero(u64) - cast(u64, wide), cast(u64, wide));
  Expr width = 64 - cast(Int(32), count_leading_zeros(magnitude));
  Expr shift = max(width - significandBits, 0);
  Expr kept = magnitude >> cast(u64, shift);
  Expr dropped = magnitude - (kept << cast(u64, shift));
  Expr half = make_const(u64, 1) << cast(u64, max(shift - 1, 0));
  Expr roundUp = shift > 0 && (dropped > half || (dropped == half && (kept & 1) == 1));
  kept = kept + select(roundUp, make_const(u64, 1), make_zero(u64));
  // kept <= 2^significandBits and 2^shift <= 2^56: both exact in f32, and
  // so is their product.
  Expr scale = reinterpret(Float(32), (shift + 127) << 23);
  Expr result = cast<float>(kept) * scale;
  return select(negative, -result, result);
}

/// Float `x` to the signed integer type `to`: toward zero, saturating at
/// to's range (infinities included), NaN to 0. Classified on x's bits; only
/// a value known to fit is converted, so the conversion is always defined.
Expr floatToInteger(const Expr &x, const Type &to) {
  FloatEncoding e = encodingOf(x.type());
  // 2^(bits-1) in x's type: a power of two, so exact in f32 and bf16; f16
  // has no such finite value and gets infinity, which only infinity reaches.
  double limit = std::ldexp(1.0, to.bits() - 1);
  int64_t limitBits;
  if (x.type() == Float(32)) {
    float f = static_cast<float>(limit);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    limitBits = bits;
  } else if (x.type() == Float(16)) {
    limitBits = float16_t(limit).to_bits();
  } else {
    limitBits = bfloat16_t(limit).to_bits();
  }
  Expr key = orderKey(x);
  Expr nan = isNaNBits(x);
  Expr tooHigh = key >= make_const(e.bitsType, limitBits);
  Expr tooLow = key <= make_const(e.bitsType, -limitBits);
  Expr inRange = reinterpret(x.type(), select(nan || tooHigh || tooLow,
                                              make_zero(e.bitsType), floatBits(x)));
  Expr truncated = cast(to, cast<float>(inRange));
  return select(nan, make_zero(to),
                select(tooHigh, to.max(), select(tooLow, to.min(), truncated)));
}

/// The output and schedule of an element-wise kernel of two operands
/// (Binary, Compare): `value` at `vars`, broadcast operands read through
/// their strides.
BuiltKernel finishTwoOperandKernel(ImageParam lhs, ImageParam rhs,
                                   const std::vector<Var> &vars, const Expr &value,
                                   const Target &target) {
  const int rank = static_cast<int>(vars.size());
  Func out("out");
  out(vars) = value;

  // SCHEDULE
  std::vector<int> estimates = elementwiseEstimates(rank);
  setInputEstimates(lhs, estimates);
  setInputEstimates(rhs, estimates);
  constrainOutput(out, estimates);
  scheduleElementwise(out, vars, target);
  // Same-shape operands, or a row broadcast over outer dimensions: both
  // dense innermost, so the loads are vector loads. Specialised after the
  // schedule, whose directives the specialisation inherits.
  out.specialize(lhs.dim(0).stride() == 1 && rhs.dim(0).stride() == 1);
  return {{lhs, rhs}, out};
}

} // namespace

BuiltKernel buildBinaryKernel(const KernelSpec &spec, const Target &target) {
  const int rank = spec.rank;
  ImageParam lhs = makeInput(spec.elementType, rank, "lhs", /*denseInner=*/false);
  ImageParam rhs = makeInput(spec.elementType, rank, "rhs", /*denseInner=*/false);
  std::vector<Var> vars = indexVars(rank);
  std::vector<Expr> at = asArgs(vars);

  // ALGORITHM
  Expr value;
  if (spec.binary == BinaryKind::Minimum || spec.binary == BinaryKind::Maximum) {
    // The operand itself, chosen in the element type: floats by their
    // order keys, NaN if either is NaN (see the file comment).
    Expr a = lhs(at), b = rhs(at);
    bool minimum = spec.binary == BinaryKind::Minimum;
    if (isFloatType(spec.elementType)) {
      Expr ka = orderKey(a), kb = orderKey(b);
      Expr pickA = minimum ? ka <= kb : ka >= kb;
      Expr bits = select(isNaNBits(a) || isNaNBits(b), floatBits(quietNaN(a.type())),
                         select(pickA, floatBits(a), floatBits(b)));
      value = reinterpret(a.type(), bits);
    } else {
      value = minimum ? min(a, b) : max(a, b);
    }
  } else if (!isFloatType(spec.elementType)) {
    value = wrapping(lhs(at), rhs(at), spec.binary);
  } else {
    Expr a = cast<float>(lhs(at)), b = cast<float>(rhs(at));
    switch (spec.binary) {
    case BinaryKind::Add:
      value = a + b;
      break;
    case BinaryKind::Sub:
      value = a - b;
      break;
    case BinaryKind::Mul:
      value = a * b;
      break;
    case BinaryKind::Div:
      value = a / b;
      break;
    default:
      failSpec("binary: unknown binary kind " +
               std::to_string(static_cast<int>(spec.binary)));
    }
  }
  return finishTwoOperandKernel(lhs, rhs, vars, castToElement(spec, value), target);
}

BuiltKernel buildWhereKernel(const KernelSpec &spec, const Target &target) {
  const int rank = spec.rank;
  ImageParam cond = makeInput(spec.condType, rank, "cond", /*denseInner=*/false);
  ImageParam onTrue = makeInput(spec.elementType, rank, "onTrue", false);
  ImageParam onFalse = makeInput(spec.elementType, rank, "onFalse", false);
  std::vector<Var> vars = indexVars(rank);
  std::vector<Expr> at = asArgs(vars);

  // ALGORITHM
  // Nonzero is true for every condition type; comparing in the condition's
  // own type keeps -0.0 false and NaN true, as `!= 0` does in C.
  Expr c = cond(at);
  Expr isTrue = c.type().is_bool() ? c : (c != Halide::Internal::make_zero(c.type()));
  Func out("out");
  out(vars) = select(isTrue, onTrue(at), onFalse(at));

  // SCHEDULE
  std::vector<int> estimates = elementwiseEstimates(rank);
  setInputEstimates(cond, estimates);
  setInputEstimates(onTrue, estimates);
  setInputEstimates(onFalse, estimates);
  constrainOutput(out, estimates);
  scheduleElementwise(out, vars, target);
  // Every operand dense innermost: vector loads (see buildBinaryKernel).
  out.specialize(cond.dim(0).stride() == 1 && onTrue.dim(0).stride() == 1 &&
                 onFalse.dim(0).stride() == 1);
  return {{cond, onTrue, onFalse}, out};
}

BuiltKernel buildUnaryKernel(const KernelSpec &spec, const Target &target) {
  ImageParam x = makeInput(spec.elementType, 1, "x", /*denseInner=*/true);
  Var i("i");

  // ALGORITHM
  Expr v = cast<float>(x(i));
  Expr value;
  if (!isFloatType(spec.elementType))
    value = integerUnary(x(i), spec.unary);
  else switch (spec.unary) {
  case UnaryKind::Relu:
  case UnaryKind::GeluErf:
  case UnaryKind::GeluTanh:
  case UnaryKind::Silu:
    value = activationExpr(spec.unary, v);
    break;
  case UnaryKind::Neg:
    value = -v;
    break;
  case UnaryKind::Abs:
    value = abs(v);
    break;
  // Halide's exact sin and cos (libm's), not fast_sin/fast_cos: their
  // arguments are RoPE angles, position times frequency, which reach the
  // thousands where a polynomial without full range reduction drifts.
  case UnaryKind::Cos:
    value = cos(v);
    break;
  case UnaryKind::Sin:
    value = sin(v);
    break;
  case UnaryKind::Tanh:
    value = tanhExpr(v);
    break;
  // libm's log in f64, rounded once to f32 (what the evaluator computes),
  // with -inf at 0, NaN below, inf at inf and NaN at NaN. Halide's f32 log is a polynomial up to 2 ulps off (so an index
  // computed from it, as T5's buckets are, moves at a boundary) and
  // returns ~89 for NaN and infinity. Scalar calls: slower, but log
  // computes indices here, not activations.
  case UnaryKind::Log:
    value = cast<float>(log(cast<double>(v)));
    break;
  // Zeros (either sign) and NaN are their own sign.
  case UnaryKind::Sign:
    value = select(v > 0.0f, 1.0f, select(v < 0.0f, -1.0f, v));
    break;
  // Exact in the element type: a value too large to have a fraction is an
  // integer already.
  case UnaryKind::Ceil:
    value = ceil(v);
    break;
  default:
    failSpec("unary: unknown unary kind " +
             std::to_string(static_cast<int>(spec.unary)));
  }
  Func out("out");
  out(i) = castToElement(spec, value);

  // SCHEDULE
  setInputEstimates(x, {1 << 20});
  constrainOutput(out, {1 << 20});
  scheduleElementwise(out, {i}, target);
  return {{x}, out};
}

BuiltKernel buildCausalMaskKernel(const KernelSpec &spec, const Target &target) {
  requireFloatElement(spec, "causal_mask");
  ImageParam x = makeInput(spec.elementType, 3, "x", /*denseInner=*/false);
  Var j("j"), i("i"), b("b");

  // ALGORITHM
  // Sk and Sq come from the input, whose shape the output has.
  Expr sk = x.dim(0).extent();
  Expr sq = x.dim(1).extent();
  Func out("out");
  Expr fill = cast(toHalideType(spec.elementType),
                   Expr(static_cast<float>(spec.value)));
  out(j, i, b) = select(j > i + (sk - sq), fill, x(j, i, b));

  // SCHEDULE
  setInputEstimates(x, {128, 128, 12});
  constrainOutput(out, {128, 128, 12});
  scheduleElementwise(out, {j, i, b}, target);
  // The host passes the scores dense (KernelMapping flattens the leading
  // dimensions of a dense tensor), so that is the case to vectorise; other
  // strides still work, through gathers.
  out.specialize(x.dim(0).stride() == 1);
  return {{x}, out};
}

BuiltKernel buildArangeKernel(const KernelSpec &spec, const Target &target) {
  Var n("n");

  // ALGORITHM
  // In 64 bits, then one rounding to the element type: exact for integers
  // and for floats up to their significand (2^24 for f32).
  Func out("out");
  out(n) = cast(toHalideType(spec.elementType),
                Expr(static_cast<int64_t>(spec.start)) + cast<int64_t>(n));

  // SCHEDULE
  constrainOutput(out, {4096});
  scheduleElementwise(out, {n}, target);
  return {{}, out};
}


BuiltKernel buildCompareKernel(const KernelSpec &spec, const Target &target) {
  const int rank = spec.rank;
  ImageParam lhs = makeInput(spec.elementType, rank, "lhs", /*denseInner=*/false);
  ImageParam rhs = makeInput(spec.elementType, rank, "rhs", /*denseInner=*/false);
  std::vector<Var> vars = indexVars(rank);
  std::vector<Expr> at = asArgs(vars);

  // ALGORITHM
  // Integers compare as they are; floats by their order keys, false with a
  // NaN operand, except ne, which is true (see the file comment).
  Expr a = lhs(at), b = rhs(at);
  Expr nan = const_false();
  if (isFloatType(spec.elementType)) {
    nan = isNaNBits(a) || isNaNBits(b);
    a = orderKey(a);
    b = orderKey(b);
  }
  Expr value;
  switch (spec.predicate) {
  case ComparePredicate::Lt:
    value = !nan && a < b;
    break;
  case ComparePredicate::Le:
    value = !nan && a <= b;
    break;
  case ComparePredicate::Gt:
    value = !nan && a > b;
    break;
  case ComparePredicate::Ge:
    value = !nan && a >= b;
    break;
  case ComparePredicate::Eq:
    value = !nan && a == b;
    break;
  case ComparePredicate::Ne:
    value = nan || a != b;
    break;
  }
  return finishTwoOperandKernel(lhs, rhs, vars, value, target);
}

BuiltKernel buildCastKernel(const KernelSpec &spec, const Target &target) {
  ImageParam x = makeInput(spec.sourceType, 1, "x", /*denseInner=*/true);
  Var i("i");

  // ALGORITHM
  const Type to = toHalideType(spec.elementType);
  const bool fromFloat = isFloatType(spec.sourceType), toFloat = isFloatType(spec.elementType);
  Expr v = x(i);
  Expr value;
  if (spec.sourceType == spec.elementType) {
    value = v;
  } else if (to.is_bool()) {
    // != 0: NaN is true and -0.0 false, read off the bits.
    if (fromFloat) {
      FloatEncoding e = encodingOf(v.type());
      value = (floatBits(v) & make_const(e.bitsType, e.magnitudeMask)) != make_zero(e.bitsType);
    } else {
      value = v != make_zero(v.type());
    }
  } else if (v.type().is_bool()) {
    // 0 or 1, exact in every type.
    value = toFloat ? cast(to, cast<float>(v)) : cast(to, v);
  } else if (fromFloat && toFloat) {
    // Through f32, which holds f16 and bf16 exactly, so one rounding. A
    // NaN is put back from the bits: the conversion of one is undefined
    // under fast math, and bf16's emulated rounding can carry a NaN whose
    // payload is in the low bits to infinity.
    Expr converted = cast(to, cast<float>(v));
    value = reinterpret(to, select(isNaNBits(v), floatBits(quietNaN(to)), floatBits(converted)));
  } else if (fromFloat) {
    value = floatToInteger(v, to);
  } else if (to == Float(32)) {
    value = cast(to, v); // one rounding, to nearest even
  } else if (toFloat) {
    value = cast(to, roundIntegerToSignificand(v, to == Float(16) ? 11 : 8));
  } else {
    value = cast(to, v); // sign-extends, or wraps to a narrower integer
  }
  Func out("out");
  out(i) = value;

  // SCHEDULE
  setInputEstimates(x, {1 << 20});
  constrainOutput(out, {1 << 20});
  scheduleElementwise(out, {i}, target);
  return {{x}, out};
}

} // namespace attune::codegen::detail
