//===- HostCodegen.cpp - kernel graph to LLVM-dialect host code -----------===//
//
// lowerModelToHost runs four steps, each in its own file:
//   1. ShapeSymbols.cpp  dynamic dimensions -> named shape symbols;
//   2. KernelMapping.cpp tfm ops -> kernel calls over buffer views;
//   3. MemoryPlan.cpp    intermediate tensors -> workspace slots;
//   4. LLVMEmitter.cpp   the calls, the plan and the descriptor -> LLVM
//                        dialect, after which the tfm function is erased.
// Before step 1, ops whose results are unused are erased; beyond that,
// nothing is changed in the module until steps 1-3 have succeeded.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/host/HostCodegen.h"
#include "attune/runtime.h"
#include "compiler/codegen/host/HostPlan.h"
#include "compiler/frontends/ScalarTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace attune::codegen {

func::FuncOp findModelFunction(ModuleOp module, StringRef entry) {
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isDeclaration())
      module.emitError("no model function named '") << entry << "'";
    return func && !func.isDeclaration() ? func : func::FuncOp();
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      candidates.push_back(func);
  if (candidates.size() != 1) {
    module.emitError("expected exactly one public model function, got ")
        << candidates.size() << "; name the one to compile";
    return func::FuncOp();
  }
  return candidates.front();
}

namespace host {
static std::string nameOr(DictionaryAttr attrs, std::string fallback) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("tfm.name"))
      return name.getValue().str();
  return fallback;
}
std::string inputName(func::FuncOp func, unsigned i) {
  return nameOr(func.getArgAttrDict(i), "input" + std::to_string(i));
}
std::string outputName(func::FuncOp func, unsigned j) {
  return nameOr(func.getResultAttrDict(j), "output" + std::to_string(j));
}
} // namespace host

LogicalResult checkModelSignature(func::FuncOp func) {
  bool ok = true;
  // Results are located at the func.return operand that produces them.
  Operation *terminator =
      func.getBody().empty() ? nullptr : func.getBody().front().getTerminator();
  auto locate = [&](bool isInput, unsigned index) -> Location {
    if (isInput && !func.getBody().empty())
      return func.getArgument(index).getLoc();
    if (!isInput && terminator && index < terminator->getNumOperands())
      if (Operation *def = terminator->getOperand(index).getDefiningOp())
        return def->getLoc();
    return func.getLoc();
  };
  auto checkList = [&](bool isInput, TypeRange types) {
    const char *kind = isInput ? "input" : "output";
    llvm::StringMap<unsigned> seen;
    for (auto [i, type] : llvm::enumerate(types)) {
      std::string name = isInput ? host::inputName(func, i) : host::outputName(func, i);
      Location loc = locate(isInput, i);
      auto [it, fresh] = seen.try_emplace(name, i);
      if (!fresh) {
        emitError(loc) << kind << "s " << it->second << " and " << i
                       << " are both named '" << name
                       << "': the library's API finds tensors by name";
        ok = false;
      }
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!ranked) {
        emitError(loc) << kind << " '" << name << "' has type " << type
                       << ", expected a ranked tensor";
        ok = false;
        continue;
      }
      if (ranked.getRank() > ATTUNE_MAX_RANK) {
        emitError(loc) << kind << " '" << name << "' has rank " << ranked.getRank()
                       << " (" << type << "); the library's API describes at most "
                       << ATTUNE_MAX_RANK << " dimensions (ATTUNE_MAX_RANK)";
        ok = false;
      }
      if (!scalarTypeOf(ranked.getElementType())) {
        emitError(loc) << kind << " '" << name << "' has element type "
                       << ranked.getElementType()
                       << ", which the library's API has no dtype for (f32, f16, "
                          "bf16, i1, i8, i32, i64)";
        ok = false;
      }
      int64_t elements = 1;
      bool overflow = false;
      for (int64_t dim : ranked.getShape())
        if (!ShapedType::isDynamic(dim))
          overflow |= llvm::MulOverflow(elements, dim, elements);
      if (overflow || elements > host::kMaxBufferElements) {
        emitError(loc) << kind << " '" << name << "' of type " << type
                       << " has more than " << host::kMaxBufferElements
                       << " elements in its static dimensions; kernels address at "
                          "most 2^31 - 1 (int32 strides)";
        ok = false;
      }
    }
  };
  checkList(/*isInput=*/true, func.getArgumentTypes());
  checkList(/*isInput=*/false, func.getResultTypes());
  return success(ok);
}

namespace {
/// Drops ops whose results nothing uses. tfm ops are pure, so this changes
/// nothing observable, and a dead op would otherwise cost a kernel call and
/// a workspace buffer.
void eraseDeadOps(func::FuncOp func) {
  for (Block &block : func.getBody())
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
}
} // namespace

LogicalResult lowerModelToHost(ModuleOp module, const HostLoweringOptions &options,
                               HostLoweringResult &result) {
  module.getContext()->getOrLoadDialect<LLVM::LLVMDialect>();
  func::FuncOp func = findModelFunction(module, options.entry);
  if (!func || failed(checkModelSignature(func)))
    return failure();

  eraseDeadOps(func);
  host::ShapeInfo shapes;
  if (failed(host::analyzeShapes(func, shapes)))
    return failure();
  host::KernelProgram program;
  host::KernelMappingOptions mapping;
  mapping.weightsBlob = options.weightsBlob;
  if (failed(host::mapKernels(func, shapes, mapping, program)))
    return failure();
  host::MemoryPlan plan = host::planMemory(program, shapes);
  result.memoryPlan = host::formatMemoryPlan(func, program, plan, shapes);

  host::EmitOptions emit;
  emit.modelName = options.modelName.empty() ? func.getName().str() : options.modelName;
  emit.sourceIR = options.sourceIR;
  emit.weightsSize = options.weightsBlob.size();
  if (!options.weightsBlob.empty() && !options.externalWeightsFile.empty()) {
    emit.externalWeightsFile = options.externalWeightsFile;
    // XXH64 as xxHash defines it, which the runtime computes again over the
    // mapped file (runtime/src/ExternalWeights.cpp).
    emit.externalWeightsHash = llvm::xxHash64(options.weightsBlob);
  }
  emit.isaDispatch = options.isaDispatch;
  emit.cuda = options.cuda;
  emit.matmulProducts = options.matmulProducts;
  result.kernels.clear();
  if (failed(host::emitHostCode(module, func, shapes, program, plan, emit,
                                result.kernels)))
    return failure();
  // The model's code is LLVM now; the module's other functions (a file may
  // hold several models, --entry picks one) were not compiled, and their
  // tfm ops cannot be translated to LLVM IR.
  for (func::FuncOp other : llvm::to_vector(module.getOps<func::FuncOp>()))
    other.erase();
  result.modelName = emit.modelName;
  return success();
}

} // namespace attune::codegen
