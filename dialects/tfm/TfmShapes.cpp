//===- TfmShapes.cpp - shape arithmetic shared by tfm ops -----------------===//
#include "dialects/tfm/TfmShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace attune::tfm {

bool dimsAgree(int64_t lhs, int64_t rhs) {
  return mlir::ShapedType::isDynamic(lhs) || mlir::ShapedType::isDynamic(rhs) ||
         lhs == rhs;
}

int64_t mergeDims(int64_t lhs, int64_t rhs) {
  assert(dimsAgree(lhs, rhs) && "merging disagreeing dimensions");
  return mlir::ShapedType::isDynamic(lhs) ? rhs : lhs;
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk from the right; a missing leading dimension behaves as a 1.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    if (l == 1)
      out = r;
    else if (r == 1)
      out = l;
    else if (dimsAgree(l, r))
      out = mergeDims(l, r);
    else
      return failure();
  }
  return result;
}

bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && !dimsAgree(from[i], to[offset + i]))
      return false;
  return true;
}

std::optional<int64_t> staticElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (mlir::ShapedType::isDynamic(dim) || llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  }
  return count;
}

std::string formatDim(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? std::string("?")
                                          : std::to_string(dim);
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) { os << formatDim(dim); });
  os << ']';
  return text;
}

} // namespace attune::tfm
