//===- HostPlan.h - the host code generator's intermediate plan -*- C++ -*-===//
//
// The data the steps of lowerModelToHost hand to each other: shape symbols
// and size expressions (ShapeSymbols.cpp), kernel calls over buffer views
// (KernelMapping.cpp), the memory plan (MemoryPlan.cpp), all consumed by the
// LLVM-dialect emitter (LLVMEmitter.cpp). Internal to compiler/codegen/host.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HOST_HOSTPLAN_H
#define ATTUNE_COMPILER_CODEGEN_HOST_HOSTPLAN_H

#include "compiler/support/IsaDispatch.h"
#include "compiler/support/KernelCatalog.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attune::codegen::host {

/// Largest extent, stride or element count a halide_buffer_t can hold
/// (its dimension fields are int32).
constexpr int64_t kMaxBufferElements = 0x7fffffff;

/// `factor * s[a] * s[b] * ...`: every size the host code needs (a dimension,
/// a flattened extent, a stride, a byte count) is a product of static sizes
/// and shape symbols, so this is the only expression form there is.
struct Monomial {
  int64_t factor = 1;
  /// Symbol indices, sorted, with repetition (s0 * s0 is {0, 0}).
  llvm::SmallVector<unsigned, 4> symbols;
  /// Set when the static factor overflowed int64 while multiplying.
  bool overflow = false;

  static Monomial constant(int64_t value) {
    Monomial m;
    m.factor = value;
    return m;
  }
  static Monomial symbol(unsigned index) {
    Monomial m;
    m.symbols.push_back(index);
    return m;
  }
  bool isConstant() const { return symbols.empty(); }
  Monomial operator*(const Monomial &other) const;
  bool operator==(const Monomial &other) const {
    return factor == other.factor && symbols == other.symbols &&
           overflow == other.overflow;
  }
  bool operator!=(const Monomial &other) const { return !(*this == other); }
  /// "12*batch*seq", "64", "seq".
  std::string str(llvm::ArrayRef<std::string> names) const;
};

/// Product of a list of dimensions.
Monomial product(llvm::ArrayRef<Monomial> dims);

struct ShapeSymbol {
  std::string name;
  /// Upper bound the runtime enforces, or -1.
  int64_t max = -1;
};

/// A symbol that is the sum of others and a constant (runtime.h's
/// attune_abi_symbol_sum_t): the joined dim of a concat of dynamic operands.
struct SymbolSum {
  unsigned symbol = 0;
  std::vector<unsigned> terms;
  int64_t constant = 0;
};

/// Step 1's answer: every dimension of every tensor in the function as a
/// constant or a single symbol, and the symbols themselves: first those the
/// function's arguments give, in order of appearance, then the sums of
/// symbols that dynamic concats join (`sums`, in the order the runtime
/// evaluates them; a sum may also check a symbol an argument gives).
struct ShapeInfo {
  std::vector<ShapeSymbol> symbols;
  std::vector<SymbolSum> sums;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<Monomial, 4>> dims;

  llvm::ArrayRef<Monomial> dimsOf(mlir::Value value) const {
    auto it = dims.find(value);
    assert(it != dims.end() && "value without shape information");
    return it->second;
  }
  std::vector<std::string> symbolNames() const;
  /// The descriptor's encoding of a value's dims: >= 0 static, -1 - i for
  /// symbol i.
  std::vector<int64_t> abiDims(mlir::Value value) const;
};

/// The names the library's descriptor gives input `i` and output `j`: their
/// `tfm.name`, else "input<i>" / "output<j>".
std::string inputName(mlir::func::FuncOp func, unsigned i);
std::string outputName(mlir::func::FuncOp func, unsigned j);

/// Runs step 1 over `func`; emits an error on the offending op on failure.
mlir::LogicalResult analyzeShapes(mlir::func::FuncOp func, ShapeInfo &info);

//===----------------------------------------------------------------------===//
// Kernel calls
//===----------------------------------------------------------------------===//

/// Where a tensor's bytes live at run time.
struct Storage {
  enum Kind { Input, Output, Weight, Constant, Workspace };
  Kind kind = Workspace;
  /// Input/output position, or the workspace buffer's index in the plan.
  unsigned index = 0;
  /// Byte offset inside attune_weights_data (Weight).
  uint64_t weightOffset = 0;
  /// Name of the LLVM global holding the data (Constant).
  std::string global;
};

/// One halide_buffer_t argument: a tensor's storage seen through extents
/// and strides (in elements), innermost dimension first as Halide orders
/// them, starting `offset` elements past the storage's first (a slice's
/// start, a concat operand's place in the result); every dimension still
/// has min 0. `tensor` is the storage root (reshapes resolved), or null with
/// `outputIndex` set for a result copied into the caller's output.
struct BufferView {
  mlir::Value tensor;
  int outputIndex = -1;
  ScalarType type = ScalarType::F32;
  llvm::SmallVector<Monomial, 4> extents;
  llvm::SmallVector<Monomial, 4> strides;
  Monomial offset = Monomial::constant(0);
};

struct KernelCall {
  /// The op the call implements (the func.return for output copies); its
  /// location goes on the emitted call.
  mlir::Operation *op = nullptr;
  KernelSpec spec;
  /// kernelSignature(spec) order: inputs, then the output.
  llvm::SmallVector<BufferView, 6> args;
};

/// A tensor the function embeds: an arith.constant's bytes.
struct ConstantData {
  std::string global;
  std::string bytes;
};

/// Step 2's answer.
struct KernelProgram {
  std::vector<KernelCall> calls;
  /// Storage of every tensor a call reads or writes, by storage root.
  llvm::DenseMap<mlir::Value, Storage> storage;
  /// Workspace tensors in order of definition (Storage::index into this).
  std::vector<mlir::Value> intermediates;
  std::vector<ConstantData> constants;
  /// index_bound per function argument (0 when not used as ids).
  std::vector<int64_t> indexBounds;
  bool usesWeights = false;
};

struct KernelMappingOptions {
  llvm::StringRef weightsBlob;
};

/// Runs step 2 (and binds results to the caller's output buffers).
mlir::LogicalResult mapKernels(mlir::func::FuncOp func, const ShapeInfo &shapes,
                               const KernelMappingOptions &options,
                               KernelProgram &program);

//===----------------------------------------------------------------------===//
// Memory plan
//===----------------------------------------------------------------------===//

struct PlannedBuffer {
  mlir::Value value;
  unsigned slot = 0;
  Monomial bytes;
  unsigned firstCall = 0, lastCall = 0;
  /// The buffer (index into MemoryPlan::buffers) whose bytes the writing
  /// call overwrites in place, or ~0u.
  unsigned inPlaceOf = ~0u;
};

/// Step 3's answer. Slot sizes are the run-time maximum of their buffers'
/// sizes; slot offsets are 64-aligned prefix sums of those.
struct MemoryPlan {
  std::vector<PlannedBuffer> buffers; // parallel to program.intermediates
  /// Buffers (indices into `buffers`) of each slot.
  std::vector<llvm::SmallVector<unsigned, 4>> slots;

  /// The sizes whose maximum is slot `s`'s size, with the ones that are
  /// statically smaller dropped (same symbols, smaller factor: symbols are
  /// never negative).
  std::vector<Monomial> slotSizeTerms(unsigned s) const;

  /// The workspace in bytes for these symbol values, as the library's
  /// workspace_size computes it (64-aligned slots).
  int64_t workspaceBytes(llvm::ArrayRef<int64_t> symbols) const;
  /// The most bytes of intermediates alive at once over the calls: the
  /// lower bound of any plan (a buffer overwritten in place counted once).
  int64_t largestLiveBytes(llvm::ArrayRef<int64_t> symbols) const;
};

/// `m` at these symbol values.
int64_t evaluate(const Monomial &m, llvm::ArrayRef<int64_t> symbols);

MemoryPlan planMemory(const KernelProgram &program, const ShapeInfo &shapes);

/// The plan as text, deterministic, e.g.
///   symbols: batch seq<=32
///   slot 0: bytes = 256*batch*seq, buffers %2 %6 %10
///   slot 1: bytes = max(64*batch*seq, 4*seq), buffers %3 %7
///   buffer %2 (tfm.embedding): slot 0, bytes 64*batch*seq, live calls 0..1
///   weight %0: offset 512
///   constant %5: __attune_constant_0
///   alias %8 (tfm.reshape) of %7
///   output 0: %13 (tfm.add)
/// Every tensor the function defines appears once: in a workspace buffer,
/// as a weight or constant, as a reshape alias of its source, or written
/// straight into the caller's output. "live calls a..b" counts kernel calls
/// in program order.
std::string formatMemoryPlan(mlir::func::FuncOp func, const KernelProgram &program,
                             const MemoryPlan &plan, const ShapeInfo &shapes);

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

struct EmitOptions {
  std::string modelName;
  std::string sourceIR;
  /// Size of the weights blob; 0 when the model has none.
  uint64_t weightsSize = 0;
  /// Base name of the external weights file, or "" when the weights (if
  /// any) are embedded as attune_weights_data; its XXH64 (seed 0).
  std::string externalWeightsFile;
  uint64_t externalWeightsHash = 0;
  /// See HostLoweringOptions::isaDispatch.
  IsaDispatchTable isaDispatch;
  /// See HostLoweringOptions::cuda and matmulProducts.
  bool cuda = false;
  ScalarType matmulProducts = ScalarType::F32;
};

/// Step 4: adds the host functions, the kernel declarations and the
/// descriptor to `module`; `kernels` receives each distinct kernel in order
/// of first use.
mlir::LogicalResult emitHostCode(mlir::ModuleOp module, mlir::func::FuncOp func,
                                 const ShapeInfo &shapes,
                                 const KernelProgram &program,
                                 const MemoryPlan &plan,
                                 const EmitOptions &options,
                                 std::vector<KernelSpec> &kernels);

} // namespace attune::codegen::host

#endif // ATTUNE_COMPILER_CODEGEN_HOST_HOSTPLAN_H
