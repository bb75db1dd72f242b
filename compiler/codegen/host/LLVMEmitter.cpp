//===- LLVMEmitter.cpp - host code and descriptor in the LLVM dialect -----===//
//
// Step 4 of host code generation: the kernel program and memory plan become
//
//   llvm.func internal @attune_workspace_size(ptr symbols) -> i64
//   llvm.func internal @attune_run(ptr inputs, ptr outputs, ptr symbols,
//                                  ptr workspace, ptr weights) -> i32
//   llvm.func internal @attune_set_num_threads(i32)
//   llvm.func internal @attune_halide_error(ptr user_context, ptr msg)
//   llvm.func internal @attune_last_error() -> ptr
//   llvm.func internal @attune_isa_forbidden(i32 level, i32 count, ptr) -> i1
//   llvm.func internal @attune_can_use_target_features(i32 count, ptr) -> i32
//   llvm.func internal @attune_set_isa_cap(i32) -> i32
//   llvm.func internal @attune_dispatched_isa() -> i32
//   llvm.func internal @attune_init()        (a global constructor)
//   llvm.func @attune_model_abi() -> ptr     (the one exported symbol)
//
// plus external declarations of the kernels and the Halide runtime functions
// they use, the embedded constants, a thread-local buffer for the last kernel
// error, the ISA cap state, and the attune_model_abi_t descriptor as a
// constant global. attune_run is straight-line: clear the error buffer, check
// the symbols, compute the slot offsets, then per kernel fill halide_buffer_t
// structs on the stack, call, and return the kernel's code if it is not 0.
//
// Halide's default error handler prints and aborts the process; a library
// must never take its host down on bad input, so attune_init installs
// attune_halide_error instead, which keeps the message for the runtime.
//
// Every kernel is a Halide multitarget wrapper: on its first call it asks
// halide_can_use_target_features about each variant and keeps the chosen one
// in a static for the life of the loaded library. attune_init makes that
// question go to attune_can_use_target_features, which refuses the variants
// above the cap the runtime set (ATTUNE_CPU) and records the level it
// accepted, so the runtime can tell what really ran.
//
// attune_init runs once, when the library is loaded (llvm.global_ctors),
// before any thread can call into it: installing process-wide hooks in
// attune_model_abi() would rewrite them while other handles run.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "compiler/codegen/host/HostPlan.h"
#include "compiler/codegen/host/StructLayout.h"
#include "compiler/modifiers/ScoreModifier.h"
#include "compiler/frontends/ScalarTypes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace attune::codegen::host {

namespace {

/// Halide's error code for "extents multiply to more than 2^31-1", returned
/// when the shape symbols would overflow a buffer's int32 fields.
constexpr int32_t kExtentsTooLarge = -6;

/// Bytes of the per-thread buffer that keeps the last kernel error message,
/// NUL included; longer messages are truncated. Halide's own messages are
/// well under this.
constexpr int64_t kErrorBufferSize = 1024;

/// halide_buffer_flag_device_dirty.
constexpr int64_t kDeviceDirty = 2;

/// attune_isa_t levels the cap can take, lowest first.
constexpr int32_t kNumIsaLevels = ATTUNE_ISA_AVX512_SPR + 1;

/// halide_type_t {code, bits, lanes} of a kernel scalar type, matching the
/// Halide types the kernels were generated with (Bool is UInt(1)).
struct HalideType {
  uint8_t code, bits;
};
HalideType halideType(ScalarType type) {
  enum { Int = 0, UInt = 1, Float = 2, BFloat = 4 };
  switch (type) {
  case ScalarType::F32:
    return {Float, 32};
  case ScalarType::F16:
    return {Float, 16};
  case ScalarType::BF16:
    return {BFloat, 16};
  case ScalarType::I32:
    return {Int, 32};
  case ScalarType::I64:
    return {Int, 64};
  case ScalarType::I8:
    return {Int, 8};
  case ScalarType::Bool:
    return {UInt, 1};
  }
  llvm_unreachable("unknown scalar type");
}

class Emitter {
public:
  Emitter(ModuleOp module, func::FuncOp func, const ShapeInfo &shapes,
          const KernelProgram &program, const MemoryPlan &plan,
          const EmitOptions &options)
      : module(module), func(func), shapes(shapes), program(program),
        plan(plan), options(options), ctx(module.getContext()),
        builder(ctx), loc(func.getLoc()),
        ptrType(LLVM::LLVMPointerType::get(ctx)), i8(builder.getI8Type()),
        i16(builder.getI16Type()), i32(builder.getI32Type()),
        i64(builder.getI64Type()), dimLayout(halideDimensionLayout(ctx)),
        bufLayout(halideBufferLayout(ctx)), tensorLayout(abiTensorLayout(ctx)),
        abiLayout(modelAbiLayout(ctx)), sumLayout(abiSymbolSumLayout(ctx)),
        deviceLayout(abiDeviceLayout(ctx)), matmulLayout(abiMatmulLayout(ctx)),
        attentionLayout(abiAttentionLayout(ctx)) {}

  LogicalResult run(std::vector<KernelSpec> &kernels);

private:
  /// A call the runtime runs with cuBLASLt in a CUDA library: no kernel.
  bool isDeviceMatmul(const KernelSpec &spec) const {
    return options.cuda &&
           (spec.kind == KernelKind::Linear || spec.kind == KernelKind::Matmul);
  }
  /// The attune_abi_matmul_t global for a device matmul's spec; fails (at
  /// the call's op) for what cuBLASLt is not asked to do.
  FailureOr<LLVM::GlobalOp> matmulOp(const KernelCall &call);
  /// An attention the runtime launches in a CUDA library: its kernel object
  /// holds a fatbin (`<symbol>_image`), not a function.
  bool isDeviceAttention(const KernelSpec &spec) const {
    return options.cuda && spec.kind == KernelKind::Attention;
  }
  /// The attune_abi_attention_t global of a device attention call; fails
  /// (at the call's op) for modifiers the kernel does not evaluate.
  FailureOr<LLVM::GlobalOp> attentionOp(const KernelCall &call);

  // Module-level pieces.
  LogicalResult declareKernels(std::vector<KernelSpec> &kernels);
  void emitConstants();
  LLVM::LLVMFuncOp emitWorkspaceSize();
  LLVM::LLVMFuncOp emitRun();
  LLVM::LLVMFuncOp emitSetNumThreads();
  /// The thread-local error buffer, the handler that fills it and the
  /// getter that returns it; sets errorHandler and lastError.
  void emitErrorHandling();
  /// The cap state, the dispatch check and the descriptor's set_isa_cap
  /// and dispatched_isa; sets canUse, setIsaCap and dispatchedIsa.
  LogicalResult emitIsaDispatch();
  /// attune_init, registered as a global constructor.
  void emitInitializer();
  void emitDescriptor(LLVM::LLVMFuncOp workspaceSize, LLVM::LLVMFuncOp run,
                      LLVM::LLVMFuncOp setNumThreads);
  /// `name` declared as an external function of `type` (or the existing
  /// declaration).
  LLVM::LLVMFuncOp declareExternal(StringRef name,
                                   LLVM::LLVMFunctionType type) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    OpBuilder::InsertionGuard guard(builder);
    builder.restoreInsertionPoint(moduleEnd());
    return LLVM::LLVMFuncOp::create(builder, loc, name, type);
  }
  /// A mutable internal i32 global starting at `value`.
  LLVM::GlobalOp mutableI32(StringRef name, int32_t value) {
    OpBuilder::InsertionGuard guard(builder);
    builder.restoreInsertionPoint(moduleEnd());
    return LLVM::GlobalOp::create(
        builder, loc, i32, /*isConstant=*/false, LLVM::Linkage::Internal,
        uniqueName(name), builder.getI32IntegerAttr(value), /*alignment=*/4);
  }
  /// Address of this thread's error buffer, at the current point.
  Value errorBuffer() {
    Value global = LLVM::AddressOfOp::create(builder, loc, errorBufferGlobal);
    return LLVM::ThreadlocalAddressOp::create(builder, loc, ptrType, global);
  }

  // Function-body helpers (use the current insertion point).
  Value constI(Type type, int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, type,
                                    builder.getIntegerAttr(type, value));
  }
  Value nullPtr() { return LLVM::ZeroOp::create(builder, loc, ptrType); }
  /// Loads symbols[0..n) at the current point.
  void loadSymbols(Value symbolsArg);
  Value monomial(const Monomial &m);
  /// The int32 a halide_dimension_t field holds; sizesOverflow() has
  /// checked that it fits.
  Value monomial32(const Monomial &m) {
    std::string key = m.str({});
    auto it = monomials32.find(key);
    if (it != monomials32.end())
      return it->second;
    Value value = m.isConstant()
                      ? constI(i32, m.factor)
                      : LLVM::TruncOp::create(builder, loc, i32, monomial(m)).getResult();
    monomials32[key] = value;
    return value;
  }
  /// An i1 that is true when some symbol or tensor size does not fit the
  /// int32 fields of halide_buffer_t.
  Value sizesOverflow();
  /// Offsets of each slot and the total workspace bytes.
  std::pair<SmallVector<Value>, Value> slotOffsets();
  Value byteOffset(Value base, Value offset) {
    return LLVM::GEPOp::create(builder, loc, ptrType, i8, base,
                               ArrayRef<LLVM::GEPArg>{offset});
  }

  // Globals.
  LLVM::GlobalOp stringGlobal(StringRef text);
  LLVM::GlobalOp i64ArrayGlobal(StringRef name, ArrayRef<int64_t> values);
  /// A private constant global with an initializer region built by `body`.
  LLVM::GlobalOp initializedGlobal(StringRef name, Type type,
                                   llvm::function_ref<Value()> body);
  /// The array of attune_abi_tensor_t for `tensors` (null when empty).
  LLVM::GlobalOp tensorArray(StringRef name,
                             ArrayRef<std::tuple<std::string, ScalarType,
                                                 std::vector<int64_t>, int64_t>>
                                 tensors);
  std::string uniqueName(StringRef base) {
    std::string name = base.str();
    for (unsigned i = 0; module.lookupSymbol(name); ++i)
      name = (base + "_" + Twine(i)).str();
    return name;
  }
  OpBuilder::InsertPoint moduleEnd() {
    return OpBuilder::InsertPoint(module.getBody(), module.getBody()->end());
  }

  ModuleOp module;
  func::FuncOp func;
  const ShapeInfo &shapes;
  const KernelProgram &program;
  const MemoryPlan &plan;
  const EmitOptions &options;
  MLIRContext *ctx;
  OpBuilder builder;
  Location loc;
  Type ptrType, i8, i16, i32, i64;
  CStructLayout dimLayout, bufLayout, tensorLayout, abiLayout, sumLayout;
  CStructLayout deviceLayout, matmulLayout, attentionLayout;

  llvm::StringMap<LLVM::LLVMFuncOp> kernelDecls;
  LLVM::LLVMFuncOp setThreadsDecl, setErrorHandlerDecl;
  LLVM::GlobalOp errorBufferGlobal;
  LLVM::LLVMFuncOp errorHandler, lastError;
  LLVM::LLVMFuncOp canUse, setIsaCap, dispatchedIsa;
  llvm::StringMap<LLVM::GlobalOp> strings;
  LLVM::GlobalOp weightsGlobal;
  // CUDA libraries: the embedded tensors as one blob the runtime copies to
  // the start of the device workspace, each at its offset in it; the
  // attune_abi_matmul_t of each product the runtime runs.
  LLVM::GlobalOp constantsGlobal;
  llvm::StringMap<int64_t> constantOffsets;
  int64_t constantsBytes = 0;
  std::map<std::string, LLVM::GlobalOp> matmulOps;
  // attune_abi_attention_t of each device attention kernel, by symbol.
  std::map<std::string, LLVM::GlobalOp> attentionOps;
  SmallVector<Value> symbolValues;
  std::map<std::string, Value> monomials, monomials32; // per function body
};

FailureOr<LLVM::GlobalOp> Emitter::matmulOp(const KernelCall &call) {
  const KernelSpec &spec = call.spec;
  if (spec.weightPanel > 0 || spec.weightType != ScalarType::F32)
    return call.op->emitOpError("a linear over packed or bf16 weights has no CUDA form");
  int32_t activation = ATTUNE_ABI_ACTIVATION_NONE;
  if (spec.activation) {
    switch (*spec.activation) {
    case UnaryKind::Relu:
      activation = ATTUNE_ABI_ACTIVATION_RELU;
      break;
    case UnaryKind::GeluTanh:
      activation = ATTUNE_ABI_ACTIVATION_GELU_TANH;
      break;
    default:
      return call.op->emitOpError(
          "cuBLASLt has no epilogue for this activation (it has ReLU and tanh GELU): "
          "compile for CUDA without --fuse-epilogues");
    }
  }
  bool linear = spec.kind == KernelKind::Linear;
  int32_t fields[] = {linear ? ATTUNE_ABI_MATMUL_LINEAR : ATTUNE_ABI_MATMUL_BATCHED,
                      spec.transposeA,
                      spec.transposeB,
                      linear && spec.hasBias,
                      activation,
                      options.matmulProducts == ScalarType::BF16  ? ATTUNE_ABI_PRODUCTS_BF16
                      : options.matmulProducts == ScalarType::F16 ? ATTUNE_ABI_PRODUCTS_F16
                                                                  : ATTUNE_ABI_PRODUCTS_F32};
  std::string key;
  for (int32_t field : fields)
    key += std::to_string(field) + ",";
  auto [it, inserted] = matmulOps.try_emplace(key);
  if (inserted)
    it->second = initializedGlobal("__attune_matmul", matmulLayout.type(), [&]() -> Value {
      Value op = LLVM::ZeroOp::create(builder, loc, matmulLayout.type());
      for (auto [field, value] : llvm::enumerate(fields))
        op = matmulLayout.insert(builder, loc, op, static_cast<AbiMatmulField>(field),
                                 constI(i32, value));
      return op;
    });
  return it->second;
}

FailureOr<LLVM::GlobalOp> Emitter::attentionOp(const KernelCall &call) {
  const KernelSpec &spec = call.spec;
  std::string symbol = spec.symbolName();
  // The modifiers' slopes are per head: q's view is [D, S, H, B],
  // innermost first.
  const Monomial &headsDim = call.args[0].extents[2];
  modifiers::DeviceBias deviceBias;
  const modifiers::LinearBias &bias = deviceBias.linear;
  if (!spec.modifiers.empty()) {
    if (!headsDim.isConstant())
      return call.op->emitOpError("has score modifiers and a dynamic head count, which the GPU "
                                  "attention kernel does not take");
    std::vector<std::pair<const modifiers::ScoreModifier *, modifiers::ModifierParams>> given;
    for (const ModifierSpec &modifier : spec.modifiers)
      given.push_back({modifiers::lookupModifier(modifier.name), modifier.params});
    if (std::string reason = modifiers::deviceBiasOf(given, headsDim.factor, deviceBias);
        !reason.empty())
      return call.op->emitOpError("cannot run on the GPU attention kernel: ") << reason;
  }
  auto [it, inserted] = attentionOps.try_emplace(
      symbol + (spec.modifiers.empty() ? "" : "/h" + std::to_string(headsDim.factor)));
  if (!inserted)
    return it->second;
  builder.restoreInsertionPoint(moduleEnd());
  // The fatbin, defined by the kernel's object (CudaBackend).
  auto image = module.lookupSymbol<LLVM::GlobalOp>(symbol + "_image");
  if (!image) {
    image = LLVM::GlobalOp::create(builder, loc, i8, /*isConstant=*/true,
                                   LLVM::Linkage::External, symbol + "_image", Attribute(),
                                   /*alignment=*/64);
    image.setVisibility_(LLVM::Visibility::Hidden);
    image.setDsoLocal(true);
  }
  // A bias table's row per distance (the runtime reads the table itself,
  // an operand after the key padding).
  LLVM::GlobalOp rows;
  if (deviceBias.table) {
    const std::vector<int32_t> &values = deviceBias.table->rows;
    std::string bytes(reinterpret_cast<const char *>(values.data()),
                      values.size() * sizeof(int32_t));
    rows = LLVM::GlobalOp::create(builder, loc, LLVM::LLVMArrayType::get(i8, bytes.size()),
                                  /*isConstant=*/true, LLVM::Linkage::Private,
                                  uniqueName(symbol + "_bias_rows"),
                                  builder.getStringAttr(bytes), /*alignment=*/16);
  }
  // The modifiers' bias slopes, one per head (zeros for a window alone).
  LLVM::GlobalOp slopes;
  if (!spec.modifiers.empty() && !deviceBias.table) {
    std::string bytes;
    for (int64_t h = 0; h < headsDim.factor; ++h) {
      float value = bias.slopes.empty() ? 0.0f : static_cast<float>(bias.slopes[h]);
      bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
    }
    slopes = LLVM::GlobalOp::create(builder, loc, LLVM::LLVMArrayType::get(i8, bytes.size()),
                                    /*isConstant=*/true, LLVM::Linkage::Private,
                                    uniqueName(symbol + "_bias_slopes"),
                                    builder.getStringAttr(bytes), /*alignment=*/16);
  }
  // RoPE's angle per pair and position, from the one definition of theta.
  LLVM::GlobalOp theta;
  int64_t rotaryDims = 0;
  if (spec.rope.enabled) {
    rotaryDims = spec.rope.rotaryDims > 0 ? spec.rope.rotaryDims : spec.headDim;
    std::string bytes;
    for (int64_t i = 0; i < rotaryDims / 2; ++i) {
      float value = static_cast<float>(ropeInverseFrequency(spec.rope, i));
      bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
    }
    theta = LLVM::GlobalOp::create(builder, loc, LLVM::LLVMArrayType::get(i8, bytes.size()),
                                   /*isConstant=*/true, LLVM::Linkage::Private,
                                   uniqueName(symbol + "_rope_theta"),
                                   builder.getStringAttr(bytes), /*alignment=*/16);
  }
  LLVM::GlobalOp kernel = stringGlobal(symbol);
  LLVM::GlobalOp combine = stringGlobal(symbol + "_combine");
  it->second = initializedGlobal("__attune_attention", attentionLayout.type(), [&]() -> Value {
    Value op = LLVM::ZeroOp::create(builder, loc, attentionLayout.type());
    auto set = [&](AbiAttentionField field, Value value) {
      op = attentionLayout.insert(builder, loc, op, field, value);
    };
    auto address = [&](LLVM::GlobalOp global) {
      return LLVM::AddressOfOp::create(builder, loc, global).getResult();
    };
    set(kAttentionImage, address(image));
    set(kAttentionKernel, address(kernel));
    set(kAttentionCombine, address(combine));
    set(kAttentionHeadDim, constI(i32, spec.headDim));
    set(kAttentionValueDim, constI(i32, spec.valueHeadDim()));
    set(kAttentionCausal, constI(i32, spec.causal));
    set(kAttentionHasMask, constI(i32, spec.hasMask));
    set(kAttentionHasKeyPadding, constI(i32, spec.hasKeyPadding));
    set(kAttentionRotaryDims, constI(i32, rotaryDims));
    if (theta)
      set(kAttentionRopeTheta, address(theta));
    set(kAttentionRopeOffset, constI(i64, spec.rope.positionOffset));
    auto f64 = Float64Type::get(ctx);
    set(kAttentionScale, LLVM::ConstantOp::create(builder, loc, f64,
                                                  builder.getF64FloatAttr(spec.scale)));
    set(kAttentionSoftcap, LLVM::ConstantOp::create(builder, loc, f64,
                                                    builder.getF64FloatAttr(spec.softcap)));
    if (slopes)
      set(kAttentionBiasSlopes, address(slopes));
    set(kAttentionBiasAbsolute, constI(i32, bias.absolute));
    auto clamp32 = [](int64_t x) {
      return std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max());
    };
    set(kAttentionDeltaLow, constI(i32, clamp32(bias.low)));
    set(kAttentionDeltaHigh, constI(i32, clamp32(bias.high)));
    if (rows) {
      set(kAttentionHasBiasTable, constI(i32, 1));
      set(kAttentionBiasRowLow, constI(i32, clamp32(deviceBias.table->low)));
      set(kAttentionBiasRowCount, constI(i32, deviceBias.table->rows.size()));
      set(kAttentionBiasRows, address(rows));
    }
    return op;
  });
  return it->second;
}

LogicalResult Emitter::declareKernels(std::vector<KernelSpec> &kernels) {
  builder.restoreInsertionPoint(moduleEnd());
  for (const KernelCall &call : program.calls) {
    if (isDeviceMatmul(call.spec)) {
      if (failed(matmulOp(call)))
        return failure();
      continue;
    }
    if (isDeviceAttention(call.spec)) {
      if (!llvm::any_of(kernels, [&](const KernelSpec &kernel) {
            return kernel.symbolName() == call.spec.symbolName();
          }))
        kernels.push_back(call.spec);
      if (failed(attentionOp(call)))
        return failure();
      continue;
    }
    std::string name = call.spec.symbolName();
    if (kernelDecls.count(name)) {
      // One kernel serves every call of its name: its tiles must suit the
      // call with the most keys and queries (0: unbounded).
      auto widen = [](int64_t &kept, int64_t other) {
        kept = kept > 0 && other > 0 ? std::max(kept, other) : 0;
      };
      for (KernelSpec &kernel : kernels)
        if (kernel.symbolName() == name) {
          widen(kernel.keyBound, call.spec.keyBound);
          widen(kernel.queryBound, call.spec.queryBound);
        }
      continue;
    }
    SmallVector<Type> args(call.args.size(), ptrType);
    auto type = LLVM::LLVMFunctionType::get(i32, args);
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name)) {
      if (existing.getFunctionType() != type)
        return existing.emitOpError("expected kernel '")
               << name << "' of type " << type << ", got "
               << existing.getFunctionType();
      kernelDecls[name] = existing;
    } else if (module.lookupSymbol(name)) {
      return module.emitOpError("symbol '")
             << name << "' is taken by something other than the kernel";
    } else {
      kernelDecls[name] = LLVM::LLVMFuncOp::create(builder, loc, name, type);
    }
    kernels.push_back(call.spec);
  }
  if (!(setThreadsDecl = module.lookupSymbol<LLVM::LLVMFuncOp>("halide_set_num_threads")))
    setThreadsDecl = LLVM::LLVMFuncOp::create(
        builder, loc, "halide_set_num_threads",
        LLVM::LLVMFunctionType::get(i32, {i32}));
  // halide_error_handler_t halide_set_error_handler(halide_error_handler_t);
  if (!(setErrorHandlerDecl =
            module.lookupSymbol<LLVM::LLVMFuncOp>("halide_set_error_handler")))
    setErrorHandlerDecl = LLVM::LLVMFuncOp::create(
        builder, loc, "halide_set_error_handler",
        LLVM::LLVMFunctionType::get(ptrType, {ptrType}));
  return success();
}

void Emitter::emitConstants() {
  builder.restoreInsertionPoint(moduleEnd());
  if (options.cuda && !program.constants.empty()) {
    // One blob, each tensor 64-byte aligned in it as in the workspace.
    std::string blob;
    for (const ConstantData &constant : program.constants) {
      blob.resize((blob.size() + 63) / 64 * 64, '\0');
      constantOffsets[constant.global] = static_cast<int64_t>(blob.size());
      blob += constant.bytes;
    }
    blob.resize((blob.size() + 63) / 64 * 64, '\0');
    constantsBytes = static_cast<int64_t>(blob.size());
    constantsGlobal = LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(i8, blob.size()), /*isConstant=*/true,
        LLVM::Linkage::Private, uniqueName("__attune_constants"), builder.getStringAttr(blob),
        /*alignment=*/64);
  } else if (!options.cuda) {
    for (const ConstantData &constant : program.constants) {
      auto type = LLVM::LLVMArrayType::get(i8, constant.bytes.size());
      LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
                             constant.global, builder.getStringAttr(constant.bytes),
                             /*alignment=*/64);
    }
  }
  // Embedded weights are a symbol the descriptor points at; external ones
  // are a file the descriptor names. Either way the kernels read them
  // through run()'s `weights` argument.
  bool embedded = options.externalWeightsFile.empty();
  if (embedded && (program.usesWeights || options.weightsSize)) {
    weightsGlobal = module.lookupSymbol<LLVM::GlobalOp>("attune_weights_data");
    if (!weightsGlobal) {
      // Defined by the driver in the same library (hidden), in a large
      // section: only the descriptor's initializer names it, with a 64-bit
      // relocation, which reaches it however far from the code it lies.
      weightsGlobal = LLVM::GlobalOp::create(
          builder, loc, i8, /*isConstant=*/true, LLVM::Linkage::External,
          "attune_weights_data", Attribute(), /*alignment=*/64);
      weightsGlobal.setVisibility_(LLVM::Visibility::Hidden);
      weightsGlobal.setDsoLocal(true);
    }
  }
}

void Emitter::loadSymbols(Value symbolsArg) {
  symbolValues.clear();
  monomials.clear();
  monomials32.clear();
  for (unsigned s = 0; s < shapes.symbols.size(); ++s) {
    Value address = LLVM::GEPOp::create(builder, loc, ptrType, i64, symbolsArg,
                                        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(s)});
    symbolValues.push_back(LLVM::LoadOp::create(builder, loc, i64, address));
  }
}

Value Emitter::monomial(const Monomial &m) {
  std::string key = m.str({});
  auto it = monomials.find(key);
  if (it != monomials.end())
    return it->second;
  Value value;
  if (m.factor != 1 || m.symbols.empty())
    value = constI(i64, m.factor);
  for (unsigned s : m.symbols)
    value = value ? LLVM::MulOp::create(builder, loc, value, symbolValues[s])
                        .getResult()
                  : symbolValues[s];
  monomials[key] = value;
  return value;
}

Value Emitter::sizesOverflow() {
  Value limit = constI(i64, kMaxBufferElements);
  Value bad = constI(builder.getI1Type(), 0);
  auto orGreater = [&](Value v) {
    Value over = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ugt, v, limit);
    bad = LLVM::OrOp::create(builder, loc, bad, over);
  };
  // Symbols in [0, 2^31) (unsigned compare catches negatives) ...
  for (Value s : symbolValues)
    orGreater(s);
  // ... and every size a buffer view uses, multiplied up one symbol at a
  // time so a product is checked before it could overflow int64.
  std::set<std::string> seen;
  auto check = [&](const Monomial &m) {
    if (m.isConstant() || !seen.insert(m.str({})).second)
      return;
    Value running = constI(i64, m.factor);
    for (unsigned s : m.symbols) {
      running = LLVM::MulOp::create(builder, loc, running, symbolValues[s]);
      orGreater(running);
    }
  };
  for (const KernelCall &call : program.calls)
    for (const BufferView &view : call.args)
      for (const Monomial &m : llvm::concat<const Monomial>(view.extents, view.strides))
        check(m);
  for (const PlannedBuffer &buffer : plan.buffers)
    check(product(shapes.dimsOf(buffer.value)));
  return bad;
}

std::pair<SmallVector<Value>, Value> Emitter::slotOffsets() {
  SmallVector<Value> offsets;
  // A CUDA library's workspace starts with its constants.
  Value total = constI(i64, constantsBytes);
  Value mask = constI(i64, ~int64_t(63));
  Value sixtyThree = constI(i64, 63);
  for (unsigned s = 0; s < plan.slots.size(); ++s) {
    offsets.push_back(total);
    Value size;
    for (const Monomial &term : plan.slotSizeTerms(s)) {
      Value bytes = monomial(term);
      if (!size) {
        size = bytes;
        continue;
      }
      Value greater = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ugt, bytes, size);
      size = LLVM::SelectOp::create(builder, loc, greater, bytes, size);
    }
    Value rounded = LLVM::AndOp::create(
        builder, loc, LLVM::AddOp::create(builder, loc, size, sixtyThree), mask);
    total = LLVM::AddOp::create(builder, loc, total, rounded);
  }
  return {offsets, total};
}

LLVM::LLVMFuncOp Emitter::emitWorkspaceSize() {
  builder.restoreInsertionPoint(moduleEnd());
  auto fn = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_workspace_size"),
      LLVM::LLVMFunctionType::get(i64, {ptrType}), LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  loadSymbols(entry->getArgument(0));
  // Symbols that attune_run would reject need no workspace; answering 0
  // keeps the size from wrapping around.
  Value bad = sizesOverflow();
  Value total = slotOffsets().second;
  Value result = LLVM::SelectOp::create(builder, loc, bad, constI(i64, 0), total);
  LLVM::ReturnOp::create(builder, loc, result);
  return fn;
}

LLVM::LLVMFuncOp Emitter::emitRun() {
  builder.restoreInsertionPoint(moduleEnd());
  auto fn = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_run"),
      LLVM::LLVMFunctionType::get(
          i32, {ptrType, ptrType, ptrType, ptrType, ptrType, ptrType}),
      LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(builder);
  Value inputs = entry->getArgument(0), outputs = entry->getArgument(1),
        workspace = entry->getArgument(3), weights = entry->getArgument(4),
        device = entry->getArgument(5);
  Block *fail = builder.createBlock(&fn.getBody(), fn.getBody().end(), {i32}, {loc});
  LLVM::ReturnOp::create(builder, loc, fail->getArgument(0));

  builder.setInsertionPointToStart(entry);
  // A message from an earlier run must not be taken for this run's.
  LLVM::StoreOp::create(builder, loc, constI(i8, 0), errorBuffer());
  // Stack space for the widest call: one halide_buffer_t and its dimension
  // array per argument, rewritten for every call (kernels keep no pointer).
  size_t maxArgs = 1, maxDims = 1;
  for (const KernelCall &call : program.calls) {
    maxArgs = std::max(maxArgs, call.args.size());
    for (const BufferView &view : call.args)
      maxDims = std::max(maxDims, view.extents.size());
  }
  Value one = constI(i32, 1);
  auto bufArrayType = LLVM::LLVMArrayType::get(bufLayout.type(), maxArgs);
  auto dimArrayType = LLVM::LLVMArrayType::get(dimLayout.type(), maxArgs * maxDims);
  Value bufs = LLVM::AllocaOp::create(builder, loc, ptrType, bufArrayType, one, 8);
  Value dimsArray = LLVM::AllocaOp::create(builder, loc, ptrType, dimArrayType, one, 8);
  // A device matmul takes its buffers as an array of pointers.
  auto argArrayType = LLVM::LLVMArrayType::get(ptrType, maxArgs);
  Value argArray;
  if (options.cuda)
    argArray = LLVM::AllocaOp::create(builder, loc, ptrType, argArrayType, one, 8);

  loadSymbols(entry->getArgument(2));
  Value bad = sizesOverflow();
  Block *body = builder.createBlock(&fn.getBody(), std::next(fn.getBody().begin()));
  builder.setInsertionPointToEnd(entry);
  LLVM::CondBrOp::create(builder, loc, bad, fail,
                         ValueRange{constI(i32, kExtentsTooLarge)}, body,
                         ValueRange{});
  builder.setInsertionPointToStart(body);

  // CUDA: the Halide kernels take the run's context and stream from the
  // support code (cuda_support.c), and every buffer is a device address.
  Value deviceInterface, matmulFn, matmulUser, markFn, attentionFn;
  auto markType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType, ptrType});
  // Tells the runtime which call comes next (attune_abi_device_t::mark).
  auto mark = [&](Location at, Value name) {
    LLVM::CallOp::create(builder, at, markType, ValueRange{markFn, matmulUser, name});
  };
  if (options.cuda) {
    auto enter = declareExternal(
        "attune_cuda_enter",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType, ptrType}));
    auto interface = declareExternal("halide_cuda_device_interface",
                                     LLVM::LLVMFunctionType::get(ptrType, {}));
    Value context = deviceLayout.load(builder, loc, device, kDeviceContext);
    Value stream = deviceLayout.load(builder, loc, device, kDeviceStream);
    LLVM::CallOp::create(builder, loc, enter, ValueRange{context, stream});
    deviceInterface = LLVM::CallOp::create(builder, loc, interface, ValueRange{}).getResult();
    matmulFn = deviceLayout.load(builder, loc, device, kDeviceMatmul);
    matmulUser = deviceLayout.load(builder, loc, device, kDeviceUser);
    markFn = deviceLayout.load(builder, loc, device, kDeviceMark);
    attentionFn = deviceLayout.load(builder, loc, device, kDeviceAttention);
  }

  // Where every tensor lives.
  SmallVector<Value> slotBase = slotOffsets().first;
  auto loadPointer = [&](Value array, unsigned index) {
    Value address = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, array,
                                        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
    return LLVM::LoadOp::create(builder, loc, ptrType, address).getResult();
  };
  llvm::DenseMap<Value, Value> hostOf;
  std::map<unsigned, Value> outputPtr;
  auto outputPointer = [&](unsigned j) {
    auto [it, inserted] = outputPtr.try_emplace(j, Value());
    if (inserted)
      it->second = loadPointer(outputs, j);
    return it->second;
  };
  auto basePointer = [&](const BufferView &view) -> Value {
    if (!view.tensor)
      return outputPointer(view.outputIndex);
    auto it = hostOf.find(view.tensor);
    if (it != hostOf.end())
      return it->second;
    const Storage &storage = program.storage.lookup(view.tensor);
    Value ptr;
    switch (storage.kind) {
    case Storage::Input:
      ptr = loadPointer(inputs, storage.index);
      break;
    case Storage::Output:
      ptr = outputPointer(storage.index);
      break;
    case Storage::Weight:
      ptr = byteOffset(weights, constI(i64, storage.weightOffset));
      break;
    case Storage::Constant:
      ptr = options.cuda
                ? byteOffset(workspace, constI(i64, constantOffsets.lookup(storage.global)))
                : LLVM::AddressOfOp::create(builder, loc, ptrType, storage.global).getResult();
      break;
    case Storage::Workspace:
      ptr = byteOffset(workspace, slotBase[plan.buffers[storage.index].slot]);
      break;
    }
    hostOf[view.tensor] = ptr;
    return ptr;
  };
  // The base is cached per tensor; the offset belongs to the view, so two
  // views of one tensor (a concat's operands in its result) share the base.
  auto hostPointer = [&](const BufferView &view) -> Value {
    Value base = basePointer(view);
    if (view.offset.isConstant() && view.offset.factor == 0)
      return base;
    Monomial bytes =
        view.offset * Monomial::constant(scalarTypeBytes(view.type));
    return byteOffset(base, monomial(bytes));
  };

  Value zero64 = constI(i64, 0), zero32 = constI(i32, 0);
  Value null = nullPtr();
  for (const KernelCall &call : program.calls) {
    Location callLoc = call.op->getLoc();
    SmallVector<Value> args;
    for (auto [a, view] : llvm::enumerate(call.args)) {
      Value buf = LLVM::GEPOp::create(builder, callLoc, ptrType, bufArrayType, bufs,
                                      ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(a)});
      Value dim0 = LLVM::GEPOp::create(
          builder, callLoc, ptrType, dimArrayType, dimsArray,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(a * maxDims)});
      HalideType type = halideType(view.type);
      if (options.cuda) {
        // The device address is the buffer's device handle (as
        // halide_cuda_wrap_device_ptr stores it), its contents current there.
        Value address = LLVM::PtrToIntOp::create(builder, callLoc, i64, hostPointer(view));
        bufLayout.store(builder, callLoc, buf, kBufDevice, address);
        bufLayout.store(builder, callLoc, buf, kBufDeviceInterface, deviceInterface);
        bufLayout.store(builder, callLoc, buf, kBufHost, null);
        bufLayout.store(builder, callLoc, buf, kBufFlags, constI(i64, kDeviceDirty));
      } else {
        bufLayout.store(builder, callLoc, buf, kBufDevice, zero64);
        bufLayout.store(builder, callLoc, buf, kBufDeviceInterface, null);
        bufLayout.store(builder, callLoc, buf, kBufHost, hostPointer(view));
        bufLayout.store(builder, callLoc, buf, kBufFlags, zero64);
      }
      bufLayout.store(builder, callLoc, buf, kBufTypeCode, constI(i8, type.code));
      bufLayout.store(builder, callLoc, buf, kBufTypeBits, constI(i8, type.bits));
      bufLayout.store(builder, callLoc, buf, kBufTypeLanes, constI(i16, 1));
      bufLayout.store(builder, callLoc, buf, kBufDimensions,
                      constI(i32, view.extents.size()));
      bufLayout.store(builder, callLoc, buf, kBufDim, dim0);
      bufLayout.store(builder, callLoc, buf, kBufPadding, null);
      for (size_t d = 0; d < view.extents.size(); ++d) {
        Value dim = LLVM::GEPOp::create(builder, callLoc, ptrType, dimLayout.type(),
                                        dim0, ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(d)});
        dimLayout.store(builder, callLoc, dim, kDimMin, zero32);
        dimLayout.store(builder, callLoc, dim, kDimExtent, monomial32(view.extents[d]));
        dimLayout.store(builder, callLoc, dim, kDimStride, monomial32(view.strides[d]));
        dimLayout.store(builder, callLoc, dim, kDimFlags, zero32);
      }
      args.push_back(buf);
    }
    if (options.cuda) {
      std::string name = !isDeviceMatmul(call.spec)               ? call.spec.symbolName()
                         : call.spec.kind == KernelKind::Linear ? "cublasLt linear"
                                                                : "cublasLt batched matmul";
      mark(callLoc, LLVM::AddressOfOp::create(builder, callLoc, stringGlobal(name)));
    }
    Value rc;
    if (isDeviceMatmul(call.spec) || isDeviceAttention(call.spec)) {
      // The runtime's entry: (user, op, buffers, count).
      for (auto [a, buf] : llvm::enumerate(args)) {
        Value slot = LLVM::GEPOp::create(builder, callLoc, ptrType, argArrayType, argArray,
                                         ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(a)});
        LLVM::StoreOp::create(builder, callLoc, buf, slot);
      }
      bool attention = isDeviceAttention(call.spec);
      Value op = LLVM::AddressOfOp::create(
          builder, callLoc, attention ? *attentionOp(call) : *matmulOp(call));
      auto entryType =
          LLVM::LLVMFunctionType::get(i32, {ptrType, ptrType, ptrType, i32});
      SmallVector<Value> operands = {attention ? attentionFn : matmulFn, matmulUser, op,
                                     argArray, constI(i32, args.size())};
      rc = LLVM::CallOp::create(builder, callLoc, entryType, operands).getResult();
      // The runtime keeps the call's own message and status.
      Value failed = LLVM::ICmpOp::create(builder, callLoc, LLVM::ICmpPredicate::ne, rc, zero32);
      rc = LLVM::SelectOp::create(builder, callLoc, failed,
                                  constI(i32, ATTUNE_ABI_DEVICE_CALL_FAILED), zero32);
    } else {
      rc = LLVM::CallOp::create(builder, callLoc, kernelDecls[call.spec.symbolName()], args)
               .getResult();
    }
    Block *next = builder.createBlock(&fn.getBody(), std::prev(fn.getBody().end()));
    builder.setInsertionPointAfterValue(rc);
    Value failed = LLVM::ICmpOp::create(builder, callLoc, LLVM::ICmpPredicate::ne, rc, zero32);
    LLVM::CondBrOp::create(builder, callLoc, failed, fail, ValueRange{rc}, next,
                           ValueRange{});
    builder.setInsertionPointToStart(next);
  }
  if (options.cuda)
    mark(loc, null);
  LLVM::ReturnOp::create(builder, loc, zero32);
  return fn;
}

LLVM::LLVMFuncOp Emitter::emitSetNumThreads() {
  builder.restoreInsertionPoint(moduleEnd());
  auto fn = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_set_num_threads"),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {i32}),
      LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  // The library's own pool (runtime/model/par_for.c) reads the count from
  // halide_get_num_threads and resizes at its next loop. Halide's pool,
  // which still takes the loops par_for.c hands it (nested or concurrent
  // ones), only ever grows: workers, once started, take any task until the
  // pool shuts down, and halide_set_num_threads only bounds how many more
  // are started. Stopping it makes it start again at the new count. The
  // runtime calls this only while no run of this library is in progress.
  auto shutdown = declareExternal(
      "halide_shutdown_thread_pool",
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {}));
  LLVM::CallOp::create(builder, loc, shutdown, ValueRange{});
  // 0 asks Halide for its default (all cores), as the runtime API promises.
  LLVM::CallOp::create(builder, loc, setThreadsDecl, ValueRange{entry->getArgument(0)});
  LLVM::ReturnOp::create(builder, loc, ValueRange{});
  return fn;
}

void Emitter::emitErrorHandling() {
  builder.restoreInsertionPoint(moduleEnd());
  // Thread-local, so concurrent runs on separate handles (allowed by the
  // runtime API) each read their own kernel's message.
  auto bufferType = LLVM::LLVMArrayType::get(i8, kErrorBufferSize);
  errorBufferGlobal = LLVM::GlobalOp::create(
      builder, loc, bufferType, /*isConstant=*/false, LLVM::Linkage::Internal,
      uniqueName("__attune_last_error"), Attribute(), /*alignment=*/1,
      /*addrSpace=*/0, /*dsoLocal=*/true, /*thread_local_=*/true);
  // A zero initializer (not a 1 KiB string attribute) keeps --emit=host-mlir
  // readable; the buffer lands in .tbss.
  builder.setInsertionPointToStart(
      builder.createBlock(&errorBufferGlobal.getInitializerRegion()));
  LLVM::ReturnOp::create(builder, loc, LLVM::ZeroOp::create(builder, loc, bufferType));
  builder.restoreInsertionPoint(moduleEnd());

  // void attune_halide_error(void *user_context, const char *msg): copies up
  // to kErrorBufferSize - 1 bytes of msg and a NUL. A plain loop rather
  // than strncpy keeps the library's imports to the Halide runtime.
  errorHandler = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_halide_error"),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType, ptrType}),
      LLVM::Linkage::Internal);
  {
    Region &body = errorHandler.getBody();
    Block *entry = errorHandler.addEntryBlock(builder);
    Value msg = entry->getArgument(1);
    Block *loop = builder.createBlock(&body, body.end(), {i64}, {loc});
    Block *copy = builder.createBlock(&body, body.end());
    Block *done = builder.createBlock(&body, body.end(), {i64}, {loc});

    builder.setInsertionPointToStart(entry);
    Value buffer = errorBuffer();
    Value zero = constI(i64, 0);
    Value isNull = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq, msg,
                                        nullPtr());
    LLVM::CondBrOp::create(builder, loc, isNull, done, ValueRange{zero}, loop,
                           ValueRange{zero});

    // loop(i): stop at the buffer's last byte or msg's NUL.
    builder.setInsertionPointToStart(loop);
    Value i = loop->getArgument(0);
    Value full = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::uge, i,
                                      constI(i64, kErrorBufferSize - 1));
    Block *read = builder.createBlock(&body, Region::iterator(copy));
    builder.setInsertionPointToEnd(loop);
    LLVM::CondBrOp::create(builder, loc, full, done, ValueRange{i}, read, ValueRange{});
    builder.setInsertionPointToStart(read);
    Value c = LLVM::LoadOp::create(builder, loc, i8, byteOffset(msg, i));
    Value end = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq, c,
                                     constI(i8, 0));
    LLVM::CondBrOp::create(builder, loc, end, done, ValueRange{i}, copy, ValueRange{});

    builder.setInsertionPointToStart(copy);
    LLVM::StoreOp::create(builder, loc, c, byteOffset(buffer, i));
    Value next = LLVM::AddOp::create(builder, loc, i, constI(i64, 1));
    LLVM::BrOp::create(builder, loc, ValueRange{next}, loop);

    builder.setInsertionPointToStart(done);
    LLVM::StoreOp::create(builder, loc, constI(i8, 0),
                          byteOffset(buffer, done->getArgument(0)));
    LLVM::ReturnOp::create(builder, loc, ValueRange{});
  }

  // const char *attune_last_error(void): this thread's buffer.
  builder.restoreInsertionPoint(moduleEnd());
  lastError = LLVM::LLVMFuncOp::create(builder, loc, uniqueName("attune_last_error"),
                                       LLVM::LLVMFunctionType::get(ptrType, {}),
                                       LLVM::Linkage::Internal);
  builder.setInsertionPointToStart(lastError.addEntryBlock(builder));
  LLVM::ReturnOp::create(builder, loc, errorBuffer());
}

LogicalResult Emitter::emitIsaDispatch() {
  const IsaDispatchTable &table = options.isaDispatch;
  const int64_t words = static_cast<int64_t>(table.wordsPerLevel);
  if (words > 0 &&
      (table.forbidden.size() != static_cast<size_t>(kNumIsaLevels * words) ||
       table.effectiveLevel.size() != static_cast<size_t>(kNumIsaLevels)))
    return module.emitOpError("expected an ISA dispatch table of ")
           << kNumIsaLevels << " levels, got " << table.effectiveLevel.size()
           << " levels and " << table.forbidden.size() << " feature words";
  std::vector<int64_t> effective;
  for (int32_t level = 0; level < kNumIsaLevels; ++level)
    effective.push_back(words > 0 ? table.effectiveLevel[level] : level);

  // No cap until the runtime sets one: the CPU alone decides, as in a
  // library that never heard of ATTUNE_CPU.
  LLVM::GlobalOp capGlobal = mutableI32("__attune_isa_cap", kNumIsaLevels - 1);
  LLVM::GlobalOp dispatchedGlobal = mutableI32("__attune_dispatched_isa", -1);
  LLVM::GlobalOp effectiveGlobal =
      i64ArrayGlobal("__attune_isa_effective", effective);
  LLVM::GlobalOp forbiddenGlobal;
  if (words > 0) {
    std::vector<int64_t> bits(table.forbidden.begin(), table.forbidden.end());
    forbiddenGlobal = i64ArrayGlobal("__attune_isa_forbidden", bits);
  }
  auto atomicLoad = [&](LLVM::GlobalOp global) -> Value {
    return LLVM::LoadOp::create(
        builder, loc, i32, LLVM::AddressOfOp::create(builder, loc, global),
        /*alignment=*/4, /*isVolatile=*/false,
        /*isNonTemporal=*/false, /*isInvariant=*/false,
        /*isInvariantGroup=*/false, LLVM::AtomicOrdering::monotonic);
  };
  auto atomicMax = [&](LLVM::GlobalOp global, Value value) {
    LLVM::AtomicRMWOp::create(builder, loc, LLVM::AtomicBinOp::max,
                              LLVM::AddressOfOp::create(builder, loc, global),
                              value, LLVM::AtomicOrdering::monotonic);
  };

  // i1 attune_isa_forbidden(i32 level, i32 count, const uint64_t *features):
  // whether the first min(count, words) feature words meet the bits that
  // only variants above `level` have.
  builder.restoreInsertionPoint(moduleEnd());
  auto forbidden = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_isa_forbidden"),
      LLVM::LLVMFunctionType::get(builder.getI1Type(), {i32, i32, ptrType}),
      LLVM::Linkage::Internal);
  {
    Region &body = forbidden.getBody();
    Block *entry = forbidden.addEntryBlock(builder);
    Value level = entry->getArgument(0), count = entry->getArgument(1),
          features = entry->getArgument(2);
    Block *loop =
        builder.createBlock(&body, body.end(), {i64, i64}, {loc, loc});
    Block *step = builder.createBlock(&body, body.end());
    Block *done = builder.createBlock(&body, body.end(), {i64}, {loc});

    builder.setInsertionPointToStart(entry);
    Value count64 = LLVM::SExtOp::create(builder, loc, i64, count);
    Value fewer = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt,
                                       count64, constI(i64, words));
    Value limit = LLVM::SelectOp::create(builder, loc, fewer, count64,
                                         constI(i64, words));
    Value base = LLVM::MulOp::create(
        builder, loc, LLVM::SExtOp::create(builder, loc, i64, level),
        constI(i64, words));
    LLVM::BrOp::create(builder, loc, ValueRange{constI(i64, 0), constI(i64, 0)},
                       loop);

    builder.setInsertionPointToStart(loop);
    Value w = loop->getArgument(0), seen = loop->getArgument(1);
    Value more =
        LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt, w, limit);
    LLVM::CondBrOp::create(builder, loc, more, step, ValueRange{}, done,
                           ValueRange{seen});

    builder.setInsertionPointToStart(step);
    Value word = LLVM::LoadOp::create(
        builder, loc, i64,
        LLVM::GEPOp::create(builder, loc, ptrType, i64, features,
                            ArrayRef<LLVM::GEPArg>{w}));
    Value index = LLVM::AddOp::create(builder, loc, base, w);
    Value mask =
        forbiddenGlobal
            ? LLVM::LoadOp::create(
                  builder, loc, i64,
                  LLVM::GEPOp::create(
                      builder, loc, ptrType, i64,
                      LLVM::AddressOfOp::create(builder, loc, forbiddenGlobal),
                      ArrayRef<LLVM::GEPArg>{index}))
                  .getResult()
            : constI(i64, 0);
    Value hit = LLVM::OrOp::create(
        builder, loc, seen, LLVM::AndOp::create(builder, loc, word, mask));
    Value next = LLVM::AddOp::create(builder, loc, w, constI(i64, 1));
    LLVM::BrOp::create(builder, loc, ValueRange{next, hit}, loop);

    builder.setInsertionPointToStart(done);
    LLVM::ReturnOp::create(
        builder, loc,
        LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ne,
                             done->getArgument(0), constI(i64, 0))
            .getResult());
  }

  // int attune_can_use_target_features(int count, const uint64_t *features):
  // refuses a variant above the cap, else asks Halide whether the CPU runs
  // it, and records the level of what it accepted. A call at all means a
  // kernel is choosing, and it gets the baseline if nothing is accepted
  // (the wrapper never asks about the baseline), hence the max with 0.
  builder.restoreInsertionPoint(moduleEnd());
  auto canUseType = LLVM::LLVMFunctionType::get(i32, {i32, ptrType});
  auto defaultCanUse =
      declareExternal("halide_default_can_use_target_features", canUseType);
  canUse = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_can_use_target_features"), canUseType,
      LLVM::Linkage::Internal);
  {
    Region &body = canUse.getBody();
    Block *entry = canUse.addEntryBlock(builder);
    Value count = entry->getArgument(0), features = entry->getArgument(1);
    Block *refuse = builder.createBlock(&body, body.end());
    Block *check = builder.createBlock(&body, body.end());
    Block *record = builder.createBlock(&body, body.end());

    builder.setInsertionPointToStart(entry);
    atomicMax(dispatchedGlobal, constI(i32, ATTUNE_ISA_BASELINE));
    Value cap = atomicLoad(capGlobal);
    Value aboveCap = LLVM::CallOp::create(builder, loc, forbidden,
                                          ValueRange{cap, count, features})
                         .getResult();
    LLVM::CondBrOp::create(builder, loc, aboveCap, refuse, check);

    builder.setInsertionPointToStart(refuse);
    LLVM::ReturnOp::create(builder, loc, constI(i32, 0));

    builder.setInsertionPointToStart(check);
    Value rc = LLVM::CallOp::create(builder, loc, defaultCanUse,
                                    ValueRange{count, features})
                   .getResult();
    Value usable = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ne,
                                        rc, constI(i32, 0));
    LLVM::CondBrOp::create(builder, loc, usable, record, refuse);

    // The forbidden sets shrink as the level grows, so the variant's level
    // is the number of levels below which it is forbidden.
    builder.setInsertionPointToStart(record);
    Value level = constI(i32, 0);
    for (int32_t l = 0; l + 1 < kNumIsaLevels; ++l) {
      Value above =
          LLVM::CallOp::create(builder, loc, forbidden,
                               ValueRange{constI(i32, l), count, features})
              .getResult();
      level = LLVM::AddOp::create(
          builder, loc, level, LLVM::ZExtOp::create(builder, loc, i32, above));
    }
    atomicMax(dispatchedGlobal, level);
    LLVM::ReturnOp::create(builder, loc, rc);
  }

  // int32_t attune_set_isa_cap(int32_t isa): see attune_model_abi_t.
  builder.restoreInsertionPoint(moduleEnd());
  setIsaCap = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_set_isa_cap"),
      LLVM::LLVMFunctionType::get(i32, {i32}), LLVM::Linkage::Internal);
  {
    Region &body = setIsaCap.getBody();
    Block *entry = setIsaCap.addEntryBlock(builder);
    Block *refuse = builder.createBlock(&body, body.end());
    Block *apply = builder.createBlock(&body, body.end());

    builder.setInsertionPointToStart(entry);
    Value isa = entry->getArgument(0);
    Value low = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt,
                                     isa, constI(i32, 0));
    isa = LLVM::SelectOp::create(builder, loc, low, constI(i32, 0), isa);
    Value high = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::sgt,
                                      isa, constI(i32, kNumIsaLevels - 1));
    isa = LLVM::SelectOp::create(builder, loc, high,
                                 constI(i32, kNumIsaLevels - 1), isa);
    Value chosen = atomicLoad(dispatchedGlobal);
    Value tooLate = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::sgt,
                                         chosen, isa);
    LLVM::CondBrOp::create(builder, loc, tooLate, refuse, apply);

    builder.setInsertionPointToStart(refuse);
    LLVM::ReturnOp::create(builder, loc, constI(i32, -1));

    builder.setInsertionPointToStart(apply);
    LLVM::StoreOp::create(builder, loc, isa,
                          LLVM::AddressOfOp::create(builder, loc, capGlobal),
                          /*alignment=*/4, /*isVolatile=*/false,
                          /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                          LLVM::AtomicOrdering::monotonic);
    Value slot = LLVM::GEPOp::create(
        builder, loc, ptrType, i64,
        LLVM::AddressOfOp::create(builder, loc, effectiveGlobal),
        ArrayRef<LLVM::GEPArg>{
            LLVM::SExtOp::create(builder, loc, i64, isa).getResult()});
    Value level = LLVM::LoadOp::create(builder, loc, i64, slot);
    LLVM::ReturnOp::create(
        builder, loc,
        LLVM::TruncOp::create(builder, loc, i32, level).getResult());
  }

  // int32_t attune_dispatched_isa(void).
  builder.restoreInsertionPoint(moduleEnd());
  dispatchedIsa = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_dispatched_isa"),
      LLVM::LLVMFunctionType::get(i32, {}), LLVM::Linkage::Internal);
  builder.setInsertionPointToStart(dispatchedIsa.addEntryBlock(builder));
  LLVM::ReturnOp::create(builder, loc, atomicLoad(dispatchedGlobal));
  return success();
}

void Emitter::emitInitializer() {
  builder.restoreInsertionPoint(moduleEnd());
  auto setCanUse =
      declareExternal("halide_set_custom_can_use_target_features",
                      LLVM::LLVMFunctionType::get(ptrType, {ptrType}));
  auto init = LLVM::LLVMFuncOp::create(
      builder, loc, uniqueName("attune_init"),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {}),
      LLVM::Linkage::Internal);
  builder.setInsertionPointToStart(init.addEntryBlock(builder));
  LLVM::CallOp::create(
      builder, loc, setErrorHandlerDecl,
      ValueRange{LLVM::AddressOfOp::create(builder, loc, errorHandler)});
  LLVM::CallOp::create(
      builder, loc, setCanUse,
      ValueRange{LLVM::AddressOfOp::create(builder, loc, canUse)});
  LLVM::ReturnOp::create(builder, loc, ValueRange{});

  builder.restoreInsertionPoint(moduleEnd());
  LLVM::GlobalCtorsOp::create(
      builder, loc, builder.getArrayAttr({FlatSymbolRefAttr::get(init)}),
      builder.getArrayAttr({builder.getI32IntegerAttr(65535)}),
      builder.getArrayAttr({LLVM::ZeroAttr::get(ctx)}));
}

LLVM::GlobalOp Emitter::stringGlobal(StringRef text) {
  auto it = strings.find(text);
  if (it != strings.end())
    return it->second;
  OpBuilder::InsertionGuard guard(builder);
  builder.restoreInsertionPoint(moduleEnd());
  std::string data = text.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(i8, data.size());
  auto global = LLVM::GlobalOp::create(
      builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
      uniqueName("__attune_str_" + std::to_string(strings.size())),
      builder.getStringAttr(data));
  strings[text] = global;
  return global;
}

LLVM::GlobalOp Emitter::i64ArrayGlobal(StringRef name, ArrayRef<int64_t> values) {
  OpBuilder::InsertionGuard guard(builder);
  builder.restoreInsertionPoint(moduleEnd());
  auto type = LLVM::LLVMArrayType::get(i64, values.size());
  auto tensorType = RankedTensorType::get({static_cast<int64_t>(values.size())}, i64);
  return LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Private, uniqueName(name),
                                DenseElementsAttr::get(tensorType, values),
                                /*alignment=*/8);
}

LLVM::GlobalOp Emitter::initializedGlobal(StringRef name, Type type,
                                          llvm::function_ref<Value()> body) {
  OpBuilder::InsertionGuard guard(builder);
  builder.restoreInsertionPoint(moduleEnd());
  auto global = LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Private, uniqueName(name),
                                       Attribute(), /*alignment=*/8);
  Block *block = builder.createBlock(&global.getInitializerRegion());
  builder.setInsertionPointToStart(block);
  LLVM::ReturnOp::create(builder, loc, body());
  return global;
}

LLVM::GlobalOp Emitter::tensorArray(
    StringRef name,
    ArrayRef<std::tuple<std::string, ScalarType, std::vector<int64_t>, int64_t>>
        tensors) {
  if (tensors.empty())
    return LLVM::GlobalOp();
  // Globals the initializer refers to are created first, outside it.
  SmallVector<LLVM::GlobalOp> names, dims;
  for (auto [i, tensor] : llvm::enumerate(tensors)) {
    names.push_back(stringGlobal(std::get<0>(tensor)));
    const std::vector<int64_t> &d = std::get<2>(tensor);
    dims.push_back(d.empty() ? LLVM::GlobalOp()
                             : i64ArrayGlobal((name + "_dims_" + Twine(i)).str(), d));
  }
  auto type = LLVM::LLVMArrayType::get(tensorLayout.type(), tensors.size());
  return initializedGlobal(name, type, [&]() -> Value {
    Value array = LLVM::ZeroOp::create(builder, loc, type);
    for (auto [i, tensor] : llvm::enumerate(tensors)) {
      Value t = LLVM::ZeroOp::create(builder, loc, tensorLayout.type());
      t = tensorLayout.insert(builder, loc, t, kTensorName,
                              LLVM::AddressOfOp::create(builder, loc, names[i]));
      t = tensorLayout.insert(builder, loc, t, kTensorDType,
                              constI(i32, static_cast<int32_t>(std::get<1>(tensor))));
      t = tensorLayout.insert(builder, loc, t, kTensorRank,
                              constI(i32, std::get<2>(tensor).size()));
      t = tensorLayout.insert(builder, loc, t, kTensorDims,
                              dims[i] ? LLVM::AddressOfOp::create(builder, loc, dims[i])
                                            .getResult()
                                      : nullPtr());
      t = tensorLayout.insert(builder, loc, t, kTensorIndexBound,
                              constI(i64, std::get<3>(tensor)));
      array = LLVM::InsertValueOp::create(builder, loc, array, t,
                                          ArrayRef<int64_t>{static_cast<int64_t>(i)});
    }
    return array;
  });
}

void Emitter::emitDescriptor(LLVM::LLVMFuncOp workspaceSize, LLVM::LLVMFuncOp run,
                             LLVM::LLVMFuncOp setNumThreads) {
  using TensorDesc = std::tuple<std::string, ScalarType, std::vector<int64_t>, int64_t>;
  std::vector<TensorDesc> inputs, outputs;
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = cast<RankedTensorType>(arg.getType());
    inputs.emplace_back(inputName(func, i),
                        *scalarTypeOf(type.getElementType()), shapes.abiDims(arg),
                        program.indexBounds[i]);
  }
  for (auto [j, result] : llvm::enumerate(body.getTerminator()->getOperands())) {
    auto type = cast<RankedTensorType>(result.getType());
    outputs.emplace_back(outputName(func, j),
                         *scalarTypeOf(type.getElementType()), shapes.abiDims(result),
                         0);
  }
  std::vector<int64_t> maxima;
  SmallVector<LLVM::GlobalOp> symbolNames;
  for (const ShapeSymbol &symbol : shapes.symbols) {
    maxima.push_back(symbol.max);
    symbolNames.push_back(stringGlobal(symbol.name));
  }
  LLVM::GlobalOp nameGlobal = stringGlobal(options.modelName);
  LLVM::GlobalOp sourceGlobal = stringGlobal(options.sourceIR);
  LLVM::GlobalOp weightsFileGlobal;
  if (!options.externalWeightsFile.empty())
    weightsFileGlobal = stringGlobal(options.externalWeightsFile);
  LLVM::GlobalOp maxGlobal, namesGlobal;
  if (!maxima.empty()) {
    maxGlobal = i64ArrayGlobal("__attune_symbol_max", maxima);
    auto type = LLVM::LLVMArrayType::get(ptrType, symbolNames.size());
    namesGlobal = initializedGlobal("__attune_symbol_names", type, [&]() -> Value {
      Value array = LLVM::ZeroOp::create(builder, loc, type);
      for (auto [i, global] : llvm::enumerate(symbolNames))
        array = LLVM::InsertValueOp::create(
            builder, loc, array, LLVM::AddressOfOp::create(builder, loc, global),
            ArrayRef<int64_t>{static_cast<int64_t>(i)});
      return array;
    });
  }

  // Symbols that are sums of others: {symbol, num_terms, terms, constant}.
  LLVM::GlobalOp sumsGlobal;
  if (!shapes.sums.empty()) {
    SmallVector<LLVM::GlobalOp> terms;
    for (const SymbolSum &sum : shapes.sums) {
      OpBuilder::InsertionGuard guard(builder);
      builder.restoreInsertionPoint(moduleEnd());
      SmallVector<int32_t> values(sum.terms.begin(), sum.terms.end());
      auto type = LLVM::LLVMArrayType::get(i32, values.size());
      auto tensorType = RankedTensorType::get({static_cast<int64_t>(values.size())}, i32);
      terms.push_back(LLVM::GlobalOp::create(
          builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
          uniqueName("__attune_symbol_sum_terms"),
          DenseElementsAttr::get(tensorType, ArrayRef<int32_t>(values)), /*alignment=*/4));
    }
    auto type = LLVM::LLVMArrayType::get(sumLayout.type(), shapes.sums.size());
    sumsGlobal = initializedGlobal("__attune_symbol_sums", type, [&]() -> Value {
      Value array = LLVM::ZeroOp::create(builder, loc, type);
      for (auto [i, sum] : llvm::enumerate(shapes.sums)) {
        Value t = LLVM::ZeroOp::create(builder, loc, sumLayout.type());
        t = sumLayout.insert(builder, loc, t, kSumSymbol, constI(i32, sum.symbol));
        t = sumLayout.insert(builder, loc, t, kSumNumTerms, constI(i32, sum.terms.size()));
        t = sumLayout.insert(builder, loc, t, kSumTerms,
                             LLVM::AddressOfOp::create(builder, loc, terms[i]));
        t = sumLayout.insert(builder, loc, t, kSumConstant, constI(i64, sum.constant));
        array = LLVM::InsertValueOp::create(builder, loc, array, t,
                                            ArrayRef<int64_t>{static_cast<int64_t>(i)});
      }
      return array;
    });
  }

  LLVM::LLVMFuncOp releaseDevice;
  if (options.cuda)
    releaseDevice = declareExternal(
        "attune_cuda_release",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType}));
  LLVM::GlobalOp inputsGlobal = tensorArray("__attune_inputs", inputs);
  LLVM::GlobalOp outputsGlobal = tensorArray("__attune_outputs", outputs);

  auto descriptor = initializedGlobal("__attune_model_abi_desc", abiLayout.type(), [&]() -> Value {
    auto addressOr = [&](LLVM::GlobalOp global) -> Value {
      return global ? LLVM::AddressOfOp::create(builder, loc, global).getResult()
                    : nullPtr();
    };
    Value d = LLVM::ZeroOp::create(builder, loc, abiLayout.type());
    d = abiLayout.insert(builder, loc, d, kAbiVersion,
                           constI(i32, ATTUNE_MODEL_ABI_VERSION));
    d = abiLayout.insert(builder, loc, d, kAbiName, addressOr(nameGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiNumInputs, constI(i32, inputs.size()));
    d = abiLayout.insert(builder, loc, d, kAbiInputs, addressOr(inputsGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiNumOutputs, constI(i32, outputs.size()));
    d = abiLayout.insert(builder, loc, d, kAbiOutputs, addressOr(outputsGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiNumSymbols, constI(i32, maxima.size()));
    d = abiLayout.insert(builder, loc, d, kAbiSymbolNames, addressOr(namesGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiSymbolMax, addressOr(maxGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiWorkspaceSize,
                         LLVM::AddressOfOp::create(builder, loc, workspaceSize));
    d = abiLayout.insert(builder, loc, d, kAbiRun, LLVM::AddressOfOp::create(builder, loc, run));
    d = abiLayout.insert(builder, loc, d, kAbiSetNumThreads,
                         LLVM::AddressOfOp::create(builder, loc, setNumThreads));
    d = abiLayout.insert(builder, loc, d, kAbiSourceIR, addressOr(sourceGlobal));
    bool external = !options.externalWeightsFile.empty();
    d = abiLayout.insert(builder, loc, d, kAbiWeights, addressOr(weightsGlobal));
    d = abiLayout.insert(
        builder, loc, d, kAbiWeightsSize,
        constI(i64, weightsGlobal || external ? options.weightsSize : 0));
    d = abiLayout.insert(builder, loc, d, kAbiWeightsStorage,
                         constI(i32, external ? ATTUNE_WEIGHTS_EXTERNAL
                                              : ATTUNE_WEIGHTS_EMBEDDED));
    d = abiLayout.insert(builder, loc, d, kAbiWeightsFile,
                         addressOr(weightsFileGlobal));
    d = abiLayout.insert(
        builder, loc, d, kAbiWeightsHash,
        constI(i64, static_cast<int64_t>(options.externalWeightsHash)));
    d = abiLayout.insert(builder, loc, d, kAbiLastError,
                         LLVM::AddressOfOp::create(builder, loc, lastError));
    d = abiLayout.insert(builder, loc, d, kAbiSetIsaCap,
                         LLVM::AddressOfOp::create(builder, loc, setIsaCap));
    d = abiLayout.insert(
        builder, loc, d, kAbiDispatchedIsa,
        LLVM::AddressOfOp::create(builder, loc, dispatchedIsa));
    d = abiLayout.insert(builder, loc, d, kAbiNumSymbolSums,
                         constI(i32, shapes.sums.size()));
    d = abiLayout.insert(builder, loc, d, kAbiSymbolSums, addressOr(sumsGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiDevice,
                         constI(i32, options.cuda ? ATTUNE_ABI_DEVICE_CUDA
                                                  : ATTUNE_ABI_DEVICE_CPU));
    d = abiLayout.insert(builder, loc, d, kAbiConstants, addressOr(constantsGlobal));
    d = abiLayout.insert(builder, loc, d, kAbiConstantsSize, constI(i64, constantsBytes));
    d = abiLayout.insert(builder, loc, d, kAbiReleaseDevice,
                         releaseDevice ? LLVM::AddressOfOp::create(builder, loc, releaseDevice)
                                             .getResult()
                                       : nullPtr());
    return d;
  });

  builder.restoreInsertionPoint(moduleEnd());
  auto getter = LLVM::LLVMFuncOp::create(builder, loc, "attune_model_abi",
                                         LLVM::LLVMFunctionType::get(ptrType, {}));
  Block *entry = getter.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  LLVM::ReturnOp::create(builder, loc,
                         LLVM::AddressOfOp::create(builder, loc, descriptor).getResult());
}

LogicalResult Emitter::run(std::vector<KernelSpec> &kernels) {
  if (module.lookupSymbol("attune_model_abi"))
    return module.emitOpError("already defines 'attune_model_abi'; one model "
                              "per module");
  if (failed(declareKernels(kernels)))
    return failure();
  emitConstants();
  emitErrorHandling();
  if (failed(emitIsaDispatch()))
    return failure();
  emitInitializer();
  LLVM::LLVMFuncOp workspaceSize = emitWorkspaceSize();
  LLVM::LLVMFuncOp runFn = emitRun();
  LLVM::LLVMFuncOp setNumThreads = emitSetNumThreads();
  emitDescriptor(workspaceSize, runFn, setNumThreads);
  return success();
}

} // namespace

LogicalResult emitHostCode(ModuleOp module, func::FuncOp func, const ShapeInfo &shapes,
                           const KernelProgram &program, const MemoryPlan &plan,
                           const EmitOptions &options, std::vector<KernelSpec> &kernels) {
  return Emitter(module, func, shapes, program, plan, options).run(kernels);
}

} // namespace attune::codegen::host
