//===- Oracle.h - kernels checked against the reference evaluator -*- C++ -*-===//
//
// Test support shared by the kernel tests: views Halide buffers as reference
// tensors and evaluates a one-op tfm function with the reference evaluator,
// the independent oracle every kernel is compared with.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_UNIT_KERNELS_ORACLE_H
#define ATTUNE_TESTS_UNIT_KERNELS_ORACLE_H

#include "compiler/support/KernelCatalog.h"
#include "compiler/frontends/ScalarTypes.h"
#include "compiler/reference/Evaluator.h"
#include "dialects/tfm/TfmDialect.h"

#include "Halide.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace attune::testing {

using Halide::Buffer;
using reference::Tensor;
using attune::mlirTypeName;

/// The logical contents of a (possibly strided) Halide buffer as a row-major
/// reference tensor: Halide's dimension 0 is the tensor's last.
template <typename T>
Tensor toTensor(const Buffer<T> &buffer, ScalarType dtype = ScalarType::F32) {
  Tensor t;
  t.dtype = dtype;
  const int rank = buffer.dimensions();
  for (int i = rank - 1; i >= 0; --i)
    t.shape.push_back(buffer.dim(i).extent());
  t.data.resize(static_cast<size_t>(t.numElements()));
  std::vector<int> pos(rank, 0);
  for (double &value : t.data) {
    value = static_cast<double>(buffer(pos.data()));
    for (int d = 0; d < rank && ++pos[d] == buffer.dim(d).extent(); ++d)
      pos[d] = 0;
  }
  return t;
}

/// "tensor<2x3xf32>" for a row-major shape.
inline std::string tensorType(const std::vector<int64_t> &shape, const std::string &elem) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elem + ">";
}

/// Builds `func.func @f(args) -> result { %r = <op> ; return %r }` and runs
/// it through the reference evaluator. `op` is the op's text after "%r = ",
/// using %a0, %a1, ... and the placeholders {T0}, {T1}, ..., {R} for the
/// argument and result types.
class Oracle {
public:
  Oracle() { context.loadDialect<attune::tfm::TfmDialect, mlir::func::FuncDialect>(); }

  Tensor eval(std::string op, const std::vector<Tensor> &inputs,
              const std::vector<int64_t> &resultShape, ScalarType resultType) {
    std::string resultTy = tensorType(resultShape, mlirTypeName(resultType));
    std::string signature;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string ty = tensorType(inputs[i].shape, mlirTypeName(inputs[i].dtype));
      signature += (i ? ", %a" : "%a") + std::to_string(i) + ": " + ty;
      replaceAll(op, "{T" + std::to_string(i) + "}", ty);
    }
    replaceAll(op, "{R}", resultTy);
    std::string source = "func.func @f(" + signature + ") -> " + resultTy +
                         " {\n  %r = " + op + "\n  return %r : " + resultTy + "\n}\n";
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!module)
      throw std::runtime_error("oracle: cannot parse\n" + source);
    auto fn = module->lookupSymbol<mlir::func::FuncOp>("f");
    attune::reference::WeightLookup noWeights =
        [](llvm::StringRef name, mlir::RankedTensorType) -> llvm::Expected<Tensor> {
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no weight " + name.str());
    };
    llvm::Expected<std::vector<Tensor>> results =
        attune::reference::evaluate(fn, inputs, noWeights);
    if (!results)
      throw std::runtime_error("oracle: " + llvm::toString(results.takeError()) +
                               "\n" + source);
    if (results->size() != 1)
      throw std::runtime_error("oracle: expected one result");
    return (*results)[0];
  }

private:
  static void replaceAll(std::string &s, const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  }
  mlir::MLIRContext context;
};

inline Oracle &oracle() {
  static Oracle instance;
  return instance;
}

/// Row-major shape of a dense output buffer.
template <typename T>
std::vector<int64_t> shapeOf(const Buffer<T> &buffer) {
  std::vector<int64_t> shape;
  for (int i = buffer.dimensions() - 1; i >= 0; --i)
    shape.push_back(buffer.dim(i).extent());
  return shape;
}

} // namespace attune::testing

#endif // ATTUNE_TESTS_UNIT_KERNELS_ORACLE_H
