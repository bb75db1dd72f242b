//===- ElementSemantics.cpp - tfm's integer and conversion rules ----------===//

#include "compiler/reference/ElementSemantics.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstdint>

namespace attune::reference::detail {

bool isIntegerType(ScalarType type) {
  return type == ScalarType::I32 || type == ScalarType::I64 || type == ScalarType::I8;
}

int64_t asInt64(double x) {
  if (std::isnan(x))
    return 0;
  if (x >= 0x1p63)
    return INT64_MAX;
  if (x <= -0x1p63)
    return INT64_MIN;
  return static_cast<int64_t>(x);
}

double wrapTo(int64_t x, ScalarType type) {
  if (type == ScalarType::I32)
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
  if (type == ScalarType::I8)
    return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(x)));
  return static_cast<double>(x);
}

bool compareElements(double x, double y, tfm::ComparePredicateKind predicate) {
  // C++'s relations on doubles are tfm.compare's.
  switch (predicate) {
  case tfm::ComparePredicateKind::lt:
    return x < y;
  case tfm::ComparePredicateKind::le:
    return x <= y;
  case tfm::ComparePredicateKind::gt:
    return x > y;
  case tfm::ComparePredicateKind::ge:
    return x >= y;
  case tfm::ComparePredicateKind::eq:
    return x == y;
  case tfm::ComparePredicateKind::ne:
    return x != y;
  }
  return false;
}

namespace {

/// `x` rounded to nearest even in f16 or bf16, infinite past the largest
/// finite value.
double roundToHalf(double x, ScalarType type) {
  llvm::APFloat value(x);
  bool lostInfo;
  value.convert(type == ScalarType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
                llvm::APFloat::rmNearestTiesToEven, &lostInfo);
  return value.convertToDouble();
}

} // namespace

double castElement(double x, ScalarType from, ScalarType to) {
  if (to == ScalarType::Bool)
    return x != 0 ? 1.0 : 0.0; // NaN is nonzero
  bool fromFloat = !isIntegerType(from) && from != ScalarType::Bool;
  if (isIntegerType(to) && fromFloat) {
    // Toward zero, saturating at the type's range; NaN is 0.
    double lo = to == ScalarType::I32 ? -0x1p31 : to == ScalarType::I8 ? -0x1p7 : -0x1p63;
    double hi = to == ScalarType::I32  ? double(INT32_MAX)
                : to == ScalarType::I8 ? double(INT8_MAX)
                                       : double(INT64_MAX); // 2^63, as held
    double t = std::trunc(x);
    return std::isnan(x) || t == 0 ? 0.0 // -0.0 too
           : t <= lo               ? lo
           : t >= -lo              ? hi
                                   : t;
  }
  if (isIntegerType(to))
    return wrapTo(asInt64(x), to); // i1 and integers: exact, or wrapped narrower
  if (to == ScalarType::F16 || to == ScalarType::BF16)
    return roundToHalf(x, to);
  return x;
}

} // namespace attune::reference::detail
