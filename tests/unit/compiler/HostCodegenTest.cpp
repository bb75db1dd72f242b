//===- HostCodegenTest.cpp - host code generator ---------------------------===//
//
// Lowers small models with lowerModelToHost and checks what a lit test could
// not: the shape symbols and bounds the descriptor will carry, the memory
// plan's slot reuse, that the emitted LLVM dialect translates to verified
// LLVM IR, the C struct layouts against the real C declarations, and - by
// JIT-compiling the host code against stand-in kernels written here - that
// attune_run really passes the right buffers, strides and workspace to each
// kernel and the descriptor reads back as the runtime will read it.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/host/HostCodegen.h"
#include "compiler/codegen/host/HostPlan.h"
#include "compiler/codegen/host/StructLayout.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include "HalideRuntime.h"
#include "attune/runtime.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace attune;
using namespace attune::codegen;

namespace {

//===----------------------------------------------------------------------===//
// Fixture: parse, lower, translate
//===----------------------------------------------------------------------===//

class HostCodegenTest : public ::testing::Test {
protected:
  HostCodegenTest() {
    DialectRegistry registry;
    registry.insert<tfm::TfmDialect, func::FuncDialect, arith::ArithDialect,
                    LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(const std::string &source) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "cannot parse:\n" << source;
    return module;
  }

  /// The dispatch table lower() passes on (none by default).
  /// Lower for --target=cuda (HostLoweringOptions::cuda), with products
  /// rounded to bf16 or f16 (--precision=bf16 or f16).
  bool cuda = false;
  ScalarType matmulProducts = ScalarType::F32;
  IsaDispatchTable isaDispatch;

  /// Lowers `source`; on failure returns false with the diagnostics in
  /// `errors`. A non-empty `externalWeightsFile` keeps `blob` out of the
  /// library, in that file.
  bool lower(const std::string &source, OwningOpRef<ModuleOp> &module,
             HostLoweringResult &result, const std::string &blob = "",
             const std::string &externalWeightsFile = "") {
    module = parse(source);
    if (!module)
      return false;
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    HostLoweringOptions options;
    options.weightsBlob = blob;
    options.externalWeightsFile = externalWeightsFile;
    options.sourceIR = source;
    options.isaDispatch = isaDispatch;
    options.cuda = cuda;
    options.matmulProducts = matmulProducts;
    return succeeded(lowerModelToHost(*module, options, result));
  }

  /// Translates to LLVM IR and runs the IR verifier.
  std::unique_ptr<llvm::Module> translate(ModuleOp module, llvm::LLVMContext &llvmContext) {
    std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext);
    EXPECT_TRUE(llvmModule) << "translation to LLVM IR failed";
    if (!llvmModule)
      return nullptr;
    std::string problems;
    llvm::raw_string_ostream os(problems);
    EXPECT_FALSE(llvm::verifyModule(*llvmModule, &os)) << problems;
    return llvmModule;
  }

  MLIRContext context;
  std::string errors;
};

/// A safetensors blob with the given f32 tensors, values 0.01 * index.
std::string makeBlob(const std::vector<std::pair<std::string, std::vector<int64_t>>> &tensors) {
  std::vector<SafeTensorData> data;
  for (const auto &[name, shape] : tensors) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<float> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = 0.01f * static_cast<float>(i);
    SafeTensorData tensor{name, ScalarType::F32, shape, {}};
    tensor.bytes.resize(count * sizeof(float));
    std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
    data.push_back(std::move(tensor));
  }
  return writeSafeTensors(data);
}

int countKernels(const HostLoweringResult &result, KernelKind kind) {
  int n = 0;
  for (const KernelSpec &spec : result.kernels)
    n += spec.kind == kind;
  return n;
}

//===----------------------------------------------------------------------===//
// Struct layouts
//===----------------------------------------------------------------------===//

/// The packed LLVM structs must put every field where the C compiler that
/// built the kernels and the runtime put it.
TEST_F(HostCodegenTest, StructLayoutsMatchTheCDeclarations) {
  using namespace attune::codegen::host;
  CStructLayout buf = halideBufferLayout(&context);
  EXPECT_EQ(buf.size(), sizeof(halide_buffer_t));
  EXPECT_EQ(buf.offset(kBufDevice), offsetof(halide_buffer_t, device));
  EXPECT_EQ(buf.offset(kBufDeviceInterface), offsetof(halide_buffer_t, device_interface));
  EXPECT_EQ(buf.offset(kBufHost), offsetof(halide_buffer_t, host));
  EXPECT_EQ(buf.offset(kBufFlags), offsetof(halide_buffer_t, flags));
  EXPECT_EQ(buf.offset(kBufTypeCode), offsetof(halide_buffer_t, type));
  EXPECT_EQ(buf.offset(kBufTypeBits), offsetof(halide_buffer_t, type) + 1);
  EXPECT_EQ(buf.offset(kBufTypeLanes), offsetof(halide_buffer_t, type) + 2);
  EXPECT_EQ(buf.offset(kBufDimensions), offsetof(halide_buffer_t, dimensions));
  EXPECT_EQ(buf.offset(kBufDim), offsetof(halide_buffer_t, dim));
  EXPECT_EQ(buf.offset(kBufPadding), offsetof(halide_buffer_t, padding));

  CStructLayout dim = halideDimensionLayout(&context);
  EXPECT_EQ(dim.size(), sizeof(halide_dimension_t));
  EXPECT_EQ(dim.offset(kDimStride), offsetof(halide_dimension_t, stride));
  EXPECT_EQ(dim.offset(kDimFlags), offsetof(halide_dimension_t, flags));

  CStructLayout tensor = abiTensorLayout(&context);
  EXPECT_EQ(tensor.size(), sizeof(attune_abi_tensor_t));
  EXPECT_EQ(tensor.offset(kTensorName), offsetof(attune_abi_tensor_t, name));
  EXPECT_EQ(tensor.offset(kTensorDType), offsetof(attune_abi_tensor_t, dtype));
  EXPECT_EQ(tensor.offset(kTensorRank), offsetof(attune_abi_tensor_t, rank));
  EXPECT_EQ(tensor.offset(kTensorDims), offsetof(attune_abi_tensor_t, dims));
  EXPECT_EQ(tensor.offset(kTensorIndexBound), offsetof(attune_abi_tensor_t, index_bound));

  CStructLayout abi = modelAbiLayout(&context);
  EXPECT_EQ(abi.size(), sizeof(attune_model_abi_t));
  EXPECT_EQ(abi.offset(kAbiVersion), offsetof(attune_model_abi_t, abi_version));
  EXPECT_EQ(abi.offset(kAbiName), offsetof(attune_model_abi_t, name));
  EXPECT_EQ(abi.offset(kAbiNumInputs), offsetof(attune_model_abi_t, num_inputs));
  EXPECT_EQ(abi.offset(kAbiInputs), offsetof(attune_model_abi_t, inputs));
  EXPECT_EQ(abi.offset(kAbiNumOutputs), offsetof(attune_model_abi_t, num_outputs));
  EXPECT_EQ(abi.offset(kAbiOutputs), offsetof(attune_model_abi_t, outputs));
  EXPECT_EQ(abi.offset(kAbiNumSymbols), offsetof(attune_model_abi_t, num_symbols));
  EXPECT_EQ(abi.offset(kAbiSymbolNames), offsetof(attune_model_abi_t, symbol_names));
  EXPECT_EQ(abi.offset(kAbiSymbolMax), offsetof(attune_model_abi_t, symbol_max));
  EXPECT_EQ(abi.offset(kAbiWorkspaceSize), offsetof(attune_model_abi_t, workspace_size));
  EXPECT_EQ(abi.offset(kAbiRun), offsetof(attune_model_abi_t, run));
  EXPECT_EQ(abi.offset(kAbiSetNumThreads), offsetof(attune_model_abi_t, set_num_threads));
  EXPECT_EQ(abi.offset(kAbiSourceIR), offsetof(attune_model_abi_t, source_ir));
  EXPECT_EQ(abi.offset(kAbiWeights), offsetof(attune_model_abi_t, weights));
  EXPECT_EQ(abi.offset(kAbiWeightsSize), offsetof(attune_model_abi_t, weights_size));
  EXPECT_EQ(abi.offset(kAbiWeightsStorage),
            offsetof(attune_model_abi_t, weights_storage));
  EXPECT_EQ(abi.offset(kAbiWeightsFile), offsetof(attune_model_abi_t, weights_file));
  EXPECT_EQ(abi.offset(kAbiWeightsHash), offsetof(attune_model_abi_t, weights_hash));
  EXPECT_EQ(abi.offset(kAbiLastError), offsetof(attune_model_abi_t, last_error));
  EXPECT_EQ(abi.offset(kAbiSetIsaCap),
            offsetof(attune_model_abi_t, set_isa_cap));
  EXPECT_EQ(abi.offset(kAbiDispatchedIsa),
            offsetof(attune_model_abi_t, dispatched_isa));
  EXPECT_EQ(abi.offset(kAbiNumSymbolSums), offsetof(attune_model_abi_t, num_symbol_sums));
  EXPECT_EQ(abi.offset(kAbiSymbolSums), offsetof(attune_model_abi_t, symbol_sums));
  EXPECT_EQ(abi.offset(kAbiDevice), offsetof(attune_model_abi_t, device));
  EXPECT_EQ(abi.offset(kAbiConstants), offsetof(attune_model_abi_t, constants));
  EXPECT_EQ(abi.offset(kAbiConstantsSize), offsetof(attune_model_abi_t, constants_size));
  EXPECT_EQ(abi.offset(kAbiReleaseDevice), offsetof(attune_model_abi_t, release_device));

  CStructLayout device = abiDeviceLayout(&context);
  EXPECT_EQ(device.size(), sizeof(attune_abi_device_t));
  EXPECT_EQ(device.offset(kDeviceContext), offsetof(attune_abi_device_t, context));
  EXPECT_EQ(device.offset(kDeviceStream), offsetof(attune_abi_device_t, stream));
  EXPECT_EQ(device.offset(kDeviceMatmul), offsetof(attune_abi_device_t, matmul));
  EXPECT_EQ(device.offset(kDeviceUser), offsetof(attune_abi_device_t, user));
  EXPECT_EQ(device.offset(kDeviceMark), offsetof(attune_abi_device_t, mark));
  EXPECT_EQ(device.offset(kDeviceAttention), offsetof(attune_abi_device_t, attention));

  CStructLayout attention = abiAttentionLayout(&context);
  EXPECT_EQ(attention.size(), sizeof(attune_abi_attention_t));
  EXPECT_EQ(attention.offset(kAttentionImage), offsetof(attune_abi_attention_t, image));
  EXPECT_EQ(attention.offset(kAttentionKernel), offsetof(attune_abi_attention_t, kernel));
  EXPECT_EQ(attention.offset(kAttentionCombine), offsetof(attune_abi_attention_t, combine));
  EXPECT_EQ(attention.offset(kAttentionHeadDim), offsetof(attune_abi_attention_t, head_dim));
  EXPECT_EQ(attention.offset(kAttentionValueDim), offsetof(attune_abi_attention_t, value_dim));
  EXPECT_EQ(attention.offset(kAttentionCausal), offsetof(attune_abi_attention_t, causal));
  EXPECT_EQ(attention.offset(kAttentionHasMask), offsetof(attune_abi_attention_t, has_mask));
  EXPECT_EQ(attention.offset(kAttentionHasKeyPadding),
            offsetof(attune_abi_attention_t, has_key_padding));
  EXPECT_EQ(attention.offset(kAttentionRotaryDims), offsetof(attune_abi_attention_t, rotary_dims));
  EXPECT_EQ(attention.offset(kAttentionRopeTheta), offsetof(attune_abi_attention_t, rope_theta));
  EXPECT_EQ(attention.offset(kAttentionRopeOffset), offsetof(attune_abi_attention_t, rope_offset));
  EXPECT_EQ(attention.offset(kAttentionScale), offsetof(attune_abi_attention_t, scale));
  EXPECT_EQ(attention.offset(kAttentionSoftcap), offsetof(attune_abi_attention_t, softcap));
  EXPECT_EQ(attention.offset(kAttentionBiasSlopes), offsetof(attune_abi_attention_t, bias_slopes));
  EXPECT_EQ(attention.offset(kAttentionBiasAbsolute),
            offsetof(attune_abi_attention_t, bias_absolute));
  EXPECT_EQ(attention.offset(kAttentionDeltaLow), offsetof(attune_abi_attention_t, delta_low));
  EXPECT_EQ(attention.offset(kAttentionDeltaHigh), offsetof(attune_abi_attention_t, delta_high));
  EXPECT_EQ(attention.offset(kAttentionHasBiasTable),
            offsetof(attune_abi_attention_t, has_bias_table));
  EXPECT_EQ(attention.offset(kAttentionBiasRowLow), offsetof(attune_abi_attention_t, bias_row_low));
  EXPECT_EQ(attention.offset(kAttentionBiasRowCount),
            offsetof(attune_abi_attention_t, bias_row_count));
  EXPECT_EQ(attention.offset(kAttentionBiasRows), offsetof(attune_abi_attention_t, bias_rows));

  CStructLayout matmul = abiMatmulLayout(&context);
  EXPECT_EQ(matmul.size(), sizeof(attune_abi_matmul_t));
  EXPECT_EQ(matmul.offset(kMatmulKind), offsetof(attune_abi_matmul_t, kind));
  EXPECT_EQ(matmul.offset(kMatmulTransposeA), offsetof(attune_abi_matmul_t, transpose_a));
  EXPECT_EQ(matmul.offset(kMatmulTransposeB), offsetof(attune_abi_matmul_t, transpose_b));
  EXPECT_EQ(matmul.offset(kMatmulHasBias), offsetof(attune_abi_matmul_t, has_bias));
  EXPECT_EQ(matmul.offset(kMatmulActivation), offsetof(attune_abi_matmul_t, activation));
  EXPECT_EQ(matmul.offset(kMatmulProducts), offsetof(attune_abi_matmul_t, products));

  // And LLVM, translating the packed type, agrees on the size.
  llvm::LLVMContext llvmContext;
  llvm::Module llvmModule("layout", llvmContext);
  auto *type = llvm::StructType::get(
      llvmContext,
      {llvm::Type::getInt32Ty(llvmContext), llvm::ArrayType::get(llvm::Type::getInt8Ty(llvmContext), 4),
       llvm::PointerType::get(llvmContext, 0)},
      /*isPacked=*/true);
  EXPECT_EQ(llvmModule.getDataLayout().getTypeAllocSize(type), 16u);
}

//===----------------------------------------------------------------------===//
// An MLP with dynamic batch and sequence
//===----------------------------------------------------------------------===//

const char *kMlp = R"mlir(
func.func @mlp(%ids: tensor<?x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
    -> (tensor<?x?x16xf32> {tfm.name = "hidden"}) {
  %wte = tfm.weight "wte" : tensor<100x16xf32>
  %wpe = tfm.weight "wpe" : tensor<32x16xf32>
  %x = tfm.embedding %wte, %ids : tensor<100x16xf32>, tensor<?x?xi32> -> tensor<?x?x16xf32>
  %p = tfm.learned_position %x, %wpe : tensor<?x?x16xf32>, tensor<32x16xf32> -> tensor<?x?x16xf32>
  %g = tfm.weight "ln.g" : tensor<16xf32>
  %b = tfm.weight "ln.b" : tensor<16xf32>
  %n = tfm.layer_norm %p, %g, %b {epsilon = 1.0e-05 : f64}
      : tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x?x16xf32>
  %w1 = tfm.weight "fc1.w" : tensor<16x64xf32>
  %b1 = tfm.weight "fc1.b" : tensor<64xf32>
  %h = tfm.linear %n, %w1, %b1 : tensor<?x?x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %a = tfm.gelu %h : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %w2 = tfm.weight "fc2.w" : tensor<64x16xf32>
  %o = tfm.linear %a, %w2 : tensor<?x?x64xf32>, tensor<64x16xf32> -> tensor<?x?x16xf32>
  %r = tfm.add %o, %p : tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  return %r : tensor<?x?x16xf32>
}
)mlir";

std::string mlpBlob() {
  return makeBlob({{"wte", {100, 16}}, {"wpe", {32, 16}}, {"ln.g", {16}},
                   {"ln.b", {16}}, {"fc1.w", {16, 64}}, {"fc1.b", {64}},
                   {"fc2.w", {64, 16}}});
}

/// Symbols come from the argument's dim names, the position table bounds
/// seq, and the embedding's vocabulary bounds the ids.
TEST_F(HostCodegenTest, MlpSymbolsAndBounds) {
  OwningOpRef<ModuleOp> module = parse(kMlp);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  ASSERT_EQ(shapes.symbols.size(), 2u);
  EXPECT_EQ(shapes.symbols[0].name, "batch");
  EXPECT_EQ(shapes.symbols[0].max, -1);
  EXPECT_EQ(shapes.symbols[1].name, "seq");
  EXPECT_EQ(shapes.symbols[1].max, 32);
  EXPECT_EQ(shapes.abiDims(func.getArgument(0)), (std::vector<int64_t>{-1, -2}));

  std::string blob = mlpBlob();
  host::KernelProgram program;
  host::KernelMappingOptions options;
  options.weightsBlob = blob;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, options, program)));
  EXPECT_EQ(program.indexBounds, (std::vector<int64_t>{100}));
  // embedding, learned_position, layer_norm, linear, gelu, linear, add.
  ASSERT_EQ(program.calls.size(), 7u);
  // The layer norm sees [batch*seq, 16]: extents innermost first.
  const host::BufferView &x = program.calls[2].args[0];
  ASSERT_EQ(x.extents.size(), 2u);
  EXPECT_EQ(x.extents[0].str({"batch", "seq"}), "16");
  EXPECT_EQ(x.extents[1].str({"batch", "seq"}), "batch*seq");
  EXPECT_EQ(x.strides[1].str({"batch", "seq"}), "16");
}

TEST_F(HostCodegenTest, MlpLowersToVerifiedLLVMIR) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  ASSERT_TRUE(lower(kMlp, module, result, mlpBlob())) << errors;
  EXPECT_EQ(countKernels(result, KernelKind::Linear), 2); // with and without bias
  EXPECT_EQ(countKernels(result, KernelKind::Embedding), 1);
  EXPECT_EQ(result.kernels.size(), 7u);
  // No tfm op and no func.func is left.
  EXPECT_TRUE(module->getOps<func::FuncOp>().empty());
  // Only the descriptor getter has external linkage among definitions.
  for (auto fn : module->getOps<LLVM::LLVMFuncOp>()) {
    if (fn.isExternal())
      continue;
    EXPECT_EQ(fn.getLinkage() == LLVM::Linkage::External,
              fn.getName() == "attune_model_abi")
        << fn.getName().str();
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translate(*module, llvmContext);
  ASSERT_TRUE(llvmModule);
  EXPECT_TRUE(llvmModule->getFunction("attune_model_abi"));
  EXPECT_TRUE(llvmModule->getNamedGlobal("attune_weights_data"));
  // The plan names the symbols and every intermediate.
  EXPECT_NE(result.memoryPlan.find("symbols: batch seq<=32"), std::string::npos)
      << result.memoryPlan;
  EXPECT_NE(result.memoryPlan.find("output 0:"), std::string::npos) << result.memoryPlan;
}

/// With external weights the library carries no weights symbol: the
/// descriptor names the file and records the blob's size and XXH64, and the
/// kernels read weights through run()'s `weights` argument.
TEST_F(HostCodegenTest, MlpExternalWeightsNameTheFile) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  std::string blob = mlpBlob();
  ASSERT_TRUE(lower(kMlp, module, result, blob, "libmlp.safetensors")) << errors;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translate(*module, llvmContext);
  ASSERT_TRUE(llvmModule);
  EXPECT_FALSE(llvmModule->getNamedGlobal("attune_weights_data"));
  // The descriptor's weights fields, read from its initializer.
  llvm::GlobalVariable *descriptor =
      llvmModule->getNamedGlobal("__attune_model_abi_desc");
  ASSERT_TRUE(descriptor && descriptor->hasInitializer());
  auto *fields = llvm::dyn_cast<llvm::ConstantStruct>(descriptor->getInitializer());
  ASSERT_TRUE(fields);
  host::CStructLayout abi = host::modelAbiLayout(&context);
  auto field = [&](unsigned f) { return fields->getOperand(abi.memberIndex(f)); };
  auto integer = [&](unsigned f) {
    auto *c = llvm::dyn_cast<llvm::ConstantInt>(field(f));
    return c ? c->getZExtValue() : ~uint64_t(0);
  };
  EXPECT_TRUE(llvm::isa<llvm::ConstantPointerNull>(field(host::kAbiWeights)));
  EXPECT_EQ(integer(host::kAbiWeightsSize), blob.size());
  EXPECT_EQ(integer(host::kAbiWeightsStorage), uint64_t(ATTUNE_WEIGHTS_EXTERNAL));
  EXPECT_EQ(integer(host::kAbiWeightsHash), llvm::xxHash64(blob));
  auto *name = llvm::dyn_cast<llvm::GlobalVariable>(field(host::kAbiWeightsFile));
  ASSERT_TRUE(name && name->hasInitializer());
  auto *text = llvm::dyn_cast<llvm::ConstantDataSequential>(name->getInitializer());
  ASSERT_TRUE(text);
  EXPECT_EQ(text->getAsCString(), "libmlp.safetensors");
}

//===----------------------------------------------------------------------===//
// Memory plan
//===----------------------------------------------------------------------===//

/// A chain of four elementwise ops: each of the first three results
/// overwrites its input in place, in one slot; the last is written into the
/// caller's output.
TEST_F(HostCodegenTest, ChainOfFourRunsInPlace) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @chain(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %a = tfm.relu %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %b = tfm.gelu %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %c = tfm.silu %b : tensor<?x8xf32> -> tensor<?x8xf32>
  %d = tfm.relu %c : tensor<?x8xf32> -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  EXPECT_EQ(shapes.symbols.size(), 1u);
  EXPECT_EQ(shapes.symbols[0].name, "d0");
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  host::MemoryPlan plan = host::planMemory(program, shapes);
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ(plan.slots.size(), 1u);
  EXPECT_EQ(plan.buffers[0].inPlaceOf, ~0u);
  EXPECT_EQ(plan.buffers[1].inPlaceOf, 0u);
  EXPECT_EQ(plan.buffers[2].inPlaceOf, 1u);
  EXPECT_EQ(plan.buffers[0].bytes.str({"d0"}), "32*d0");
  // One buffer's bytes at a time: the plan meets the lower bound.
  EXPECT_EQ(plan.largestLiveBytes({5}), 160);
  EXPECT_EQ(plan.workspaceBytes({5}), 192);
  EXPECT_EQ(program.storage.lookup(func.getBody().front().getTerminator()->getOperand(0)).kind,
            host::Storage::Output);
}

/// A value read late keeps its slot: %a is read by the last op, so nothing
/// may reuse slot 0 until then, nor overwrite it in place (gelu reads it,
/// but not for the last time); silu overwrites gelu's result.
TEST_F(HostCodegenTest, LiveValueBlocksReuse) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @skip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tfm.relu %x : tensor<4xf32> -> tensor<4xf32>
  %b = tfm.gelu %a : tensor<4xf32> -> tensor<4xf32>
  %c = tfm.silu %b : tensor<4xf32> -> tensor<4xf32>
  %d = tfm.add %c, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %d : tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  host::MemoryPlan plan = host::planMemory(program, shapes);
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ(plan.slots.size(), 2u);
  EXPECT_EQ(plan.buffers[0].lastCall, 3u);
  EXPECT_EQ(plan.buffers[1].inPlaceOf, ~0u);
  EXPECT_EQ(plan.buffers[2].inPlaceOf, 1u);
  EXPECT_EQ(plan.buffers[2].slot, plan.buffers[1].slot);
}

/// A pre-norm transformer layer as the graph pipeline leaves it (attention
/// in the bshd layout, heads split and merged by reshapes): the workspace is
/// within 1.5x of the most bytes alive at once, the bound issue 8 sets, at
/// every size tried; the residual adds and the GELU run in place.
TEST_F(HostCodegenTest, TransformerLayerWorkspaceNearLargestLiveSet) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @layer(%x: tensor<?x?x32xf32> {tfm.dim_names = ["batch", "seq", "hidden"]}) -> tensor<?x?x32xf32> {
  %g = tfm.weight "g" : tensor<32xf32>
  %b = tfm.weight "b" : tensor<32xf32>
  %h = tfm.layer_norm %x, %g, %b : tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  %wq = tfm.weight "wq" : tensor<32x32xf32>
  %wk = tfm.weight "wk" : tensor<32x32xf32>
  %wv = tfm.weight "wv" : tensor<32x32xf32>
  %wo = tfm.weight "wo" : tensor<32x32xf32>
  %q = tfm.linear %h, %wq : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  %k = tfm.linear %h, %wk : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  %v = tfm.linear %h, %wv : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  %q4 = tfm.reshape %q : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %o = tfm.attention %q4, %k4, %v4 {scale = 0.35 : f64, causal = true, layout = #tfm.head_layout<bshd>}
      : tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32> -> tensor<?x?x4x8xf32>
  %m = tfm.reshape %o : tensor<?x?x4x8xf32> -> tensor<?x?x32xf32>
  %a = tfm.linear %m, %wo : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  %x1 = tfm.add %x, %a : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %h2 = tfm.layer_norm %x1, %g, %b : tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  %w1 = tfm.weight "w1" : tensor<32x128xf32>
  %w2 = tfm.weight "w2" : tensor<128x32xf32>
  %f = tfm.linear %h2, %w1 : tensor<?x?x32xf32>, tensor<32x128xf32> -> tensor<?x?x128xf32>
  %act = tfm.gelu %f : tensor<?x?x128xf32> -> tensor<?x?x128xf32>
  %p = tfm.linear %act, %w2 : tensor<?x?x128xf32>, tensor<128x32xf32> -> tensor<?x?x32xf32>
  %x2 = tfm.add %x1, %p : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %y = tfm.relu %x2 : tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes))) << errors;
  std::string blob = makeBlob({{"g", {32}}, {"b", {32}}, {"wq", {32, 32}}, {"wk", {32, 32}},
                               {"wv", {32, 32}}, {"wo", {32, 32}}, {"w1", {32, 128}},
                               {"w2", {128, 32}}});
  host::KernelProgram program;
  host::KernelMappingOptions options;
  options.weightsBlob = blob;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, options, program))) << errors;
  host::MemoryPlan plan = host::planMemory(program, shapes);
  std::string text = host::formatMemoryPlan(func, program, plan, shapes);
  // The GELU overwrites the first MLP linear's output; the second residual
  // add overwrites the second MLP linear's (x1 is read again by nothing).
  EXPECT_NE(text.find("(tfm.gelu): slot"), std::string::npos) << text;
  int inPlace = 0;
  for (const host::PlannedBuffer &buffer : plan.buffers)
    inPlace += buffer.inPlaceOf != ~0u;
  EXPECT_GE(inPlace, 2) << text;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 128}, {2, 37}, {4, 512}}) {
    int64_t workspace = plan.workspaceBytes({batch, seq});
    int64_t live = plan.largestLiveBytes({batch, seq});
    EXPECT_GT(live, 0);
    EXPECT_LE(workspace, live * 3 / 2)
        << "batch " << batch << " seq " << seq << ": " << workspace << " vs largest live "
        << live << "\n" << text;
  }
}

/// An op nobody reads costs neither a kernel call nor a buffer.
TEST_F(HostCodegenTest, DeadOpsAreNotComputed) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  ASSERT_TRUE(lower(R"mlir(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tfm.relu %x : tensor<4xf32> -> tensor<4xf32>
  %dead = tfm.silu %a : tensor<4xf32> -> tensor<4xf32>
  %b = tfm.gelu %a : tensor<4xf32> -> tensor<4xf32>
  return %b : tensor<4xf32>
}
)mlir",
                    module, result))
      << errors;
  EXPECT_EQ(result.kernels.size(), 2u);
  EXPECT_EQ(countKernels(result, KernelKind::Unary), 2);
  for (const KernelSpec &spec : result.kernels)
    EXPECT_NE(spec.unary, UnaryKind::Silu);
  EXPECT_EQ(result.memoryPlan.find("slot 1"), std::string::npos) << result.memoryPlan;
}

//===----------------------------------------------------------------------===//
// Slices and joins: copies through views that start inside a tensor
//===----------------------------------------------------------------------===//

/// A slice is a Copy whose input view starts `start` rows into the axis
/// and steps `step` rows; a concat is one Copy per operand into its rows of
/// the result, one buffer written by two calls (so live from the first),
/// or the caller's output; arange is a call with its output alone.
TEST_F(HostCodegenTest, SliceConcatArangeViews) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%x: tensor<4x?x6xf32>, %u: tensor<4x?x1xf32>)
    -> (tensor<4x?x10xf32>, tensor<8x?x6xf32>, tensor<?xi64>) {
  %a = tfm.slice %x {axis = 2 : i64, start = 1 : i64, end = 6 : i64, step = 2 : i64} : tensor<4x?x6xf32> -> tensor<4x?x3xf32>
  %n = tfm.neg %a : tensor<4x?x3xf32> -> tensor<4x?x3xf32>
  %c = tfm.concat %n, %x, %u {axis = 2 : i64} : tensor<4x?x3xf32>, tensor<4x?x6xf32>, tensor<4x?x1xf32> -> tensor<4x?x10xf32>
  %r = tfm.relu %c : tensor<4x?x10xf32> -> tensor<4x?x10xf32>
  %o = tfm.concat %x, %x {axis = 0 : i64} : tensor<4x?x6xf32>, tensor<4x?x6xf32> -> tensor<8x?x6xf32>
  %p = tfm.arange %r {axis = 1 : i64, start = -2 : i64} : tensor<4x?x10xf32> -> tensor<?xi64>
  return %r, %o, %p : tensor<4x?x10xf32>, tensor<8x?x6xf32>, tensor<?xi64>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  ASSERT_EQ(shapes.symbols.size(), 1u);
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  std::vector<std::string> names = shapes.symbolNames();
  auto str = [&](llvm::ArrayRef<host::Monomial> ms) {
    std::string text;
    for (const host::Monomial &m : ms)
      text += (text.empty() ? "" : ",") + m.str(names);
    return text;
  };
  // slice, neg, three concat copies, relu, two concat copies, arange.
  ASSERT_EQ(program.calls.size(), 9u);
  const host::KernelCall &slice = program.calls[0];
  EXPECT_EQ(slice.spec.kind, KernelKind::Copy);
  EXPECT_EQ(slice.args[0].offset.str(names), "1");
  // Columns 1, 3, 5 of rows of 6 are every other element from 1 on: the
  // dimensions collapse to one stride-2 walk.
  EXPECT_EQ(str(slice.args[0].strides), "2");
  EXPECT_EQ(str(slice.args[0].extents), "12*d0");
  EXPECT_EQ(slice.args[1].offset.str(names), "0");

  // Operands of %c at columns 0, 3 and 9 of its rows of 10. The third is
  // one column wide: its unit dimension 0 is kept, so that the output
  // still has stride 1 there.
  Value c = program.calls[2].args[1].tensor;
  ASSERT_TRUE(c);
  for (unsigned i = 2; i <= 4; ++i) {
    const host::BufferView &out = program.calls[i].args.back();
    EXPECT_EQ(out.tensor, c);
    EXPECT_EQ(out.strides.front().str(names), "1") << "call " << i;
  }
  EXPECT_EQ(program.calls[2].args[1].offset.str(names), "0");
  EXPECT_EQ(program.calls[3].args[1].offset.str(names), "3");
  EXPECT_EQ(program.calls[4].args[1].offset.str(names), "9");
  EXPECT_EQ(str(program.calls[3].args[1].extents), "6,4*d0");
  EXPECT_EQ(str(program.calls[3].args[1].strides), "1,10");
  EXPECT_EQ(str(program.calls[4].args[1].extents), "1,4*d0");
  EXPECT_EQ(str(program.calls[4].args[1].strides), "1,10");
  EXPECT_EQ(str(program.calls[4].args[0].strides), "1,1");

  // %o, the caller's output 1: the second x starts 4 * d0 * 6 elements in.
  const host::BufferView &second = program.calls[7].args[1];
  EXPECT_EQ(program.storage.lookup(second.tensor).kind, host::Storage::Output);
  EXPECT_EQ(program.storage.lookup(second.tensor).index, 1u);
  EXPECT_EQ(second.offset.str(names), "24*d0");
  EXPECT_EQ(program.calls[6].args[1].offset.str(names), "0");

  const host::KernelCall &arange = program.calls[8];
  EXPECT_EQ(arange.spec.kind, KernelKind::Arange);
  EXPECT_EQ(arange.spec.start, -2);
  EXPECT_EQ(arange.spec.elementType, ScalarType::I64);
  ASSERT_EQ(arange.args.size(), 1u);
  EXPECT_EQ(str(arange.args[0].extents), "d0");

  // %c is written by calls 2..4 and read by the relu (5): one buffer, live
  // from its first write, in a slot of its own while %n (read by call 2)
  // and %a are live.
  host::MemoryPlan plan = host::planMemory(program, shapes);
  ASSERT_EQ(plan.buffers.size(), 3u); // %a, %n, %c
  const host::PlannedBuffer &cBuffer = plan.buffers[2];
  EXPECT_EQ(cBuffer.value, c);
  EXPECT_EQ(cBuffer.firstCall, 2u);
  EXPECT_EQ(cBuffer.lastCall, 5u);
  EXPECT_EQ(cBuffer.bytes.str(names), "160*d0");
  EXPECT_NE(cBuffer.slot, plan.buffers[1].slot);

  // And the host code for it translates to verified LLVM IR.
  OwningOpRef<ModuleOp> lowered;
  HostLoweringResult result;
  ASSERT_TRUE(lower(R"mlir(
func.func @f(%x: tensor<4x?x6xf32>) -> (tensor<4x?x9xf32>, tensor<8x?x6xf32>) {
  %a = tfm.slice %x {axis = 2 : i64, start = 1 : i64, end = 6 : i64, step = 2 : i64} : tensor<4x?x6xf32> -> tensor<4x?x3xf32>
  %c = tfm.concat %a, %x {axis = 2 : i64} : tensor<4x?x3xf32>, tensor<4x?x6xf32> -> tensor<4x?x9xf32>
  %o = tfm.concat %x, %x {axis = 0 : i64} : tensor<4x?x6xf32>, tensor<4x?x6xf32> -> tensor<8x?x6xf32>
  return %c, %o : tensor<4x?x9xf32>, tensor<8x?x6xf32>
}
)mlir",
                    lowered, result))
      << errors;
  llvm::LLVMContext llvmContext;
  EXPECT_TRUE(translate(*lowered, llvmContext));
}

/// A joined dim that is `?` in the types but that shape analysis resolves
/// (here through the add) is static enough: the result's is their sum.
TEST_F(HostCodegenTest, ConcatOfResolvedDims) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%x: tensor<2x?xf32>, %y: tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<2x3xf32>) {
  %c = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x?xf32>, tensor<2x3xf32> -> tensor<2x?xf32>
  %s = tfm.add %x, %y : tensor<2x?xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %c, %s : tensor<2x?xf32>, tensor<2x3xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  EXPECT_TRUE(shapes.symbols.empty());
  Value c = func.getBody().front().getTerminator()->getOperand(0);
  EXPECT_EQ(shapes.abiDims(c), (std::vector<int64_t>{2, 6}));
}

/// expand is a copy that reads its input with stride 0 where it stretches:
/// DeBERTa's [1, S, S] positions to [4, S, S] read each row four times; the
/// result's `?`s are the input's.
TEST_F(HostCodegenTest, ExpandIsABroadcastCopy) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%p: tensor<1x?x?xi64>, %x: tensor<3x1xf32>) -> (tensor<4x?x?xi64>, tensor<2x3x5xf32>) {
  %e = tfm.expand %p : tensor<1x?x?xi64> -> tensor<4x?x?xi64>
  %f = tfm.expand %x : tensor<3x1xf32> -> tensor<2x3x5xf32>
  return %e, %f : tensor<4x?x?xi64>, tensor<2x3x5xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  ASSERT_EQ(shapes.symbols.size(), 2u);
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  std::vector<std::string> names = shapes.symbolNames();
  auto str = [&](llvm::ArrayRef<host::Monomial> ms) {
    std::string text;
    for (const host::Monomial &m : ms)
      text += (text.empty() ? "" : ",") + m.str(names);
    return text;
  };
  ASSERT_EQ(program.calls.size(), 2u);
  const host::KernelCall &e = program.calls[0];
  EXPECT_EQ(e.spec.kind, KernelKind::Copy);
  EXPECT_EQ(e.spec.elementType, ScalarType::I64);
  // [S, S] merged into one dim, the 4 copies read at stride 0.
  EXPECT_EQ(e.spec.rank, 2);
  EXPECT_EQ(str(e.args[0].extents), names[0] + "*" + names[1] + ",4");
  EXPECT_EQ(str(e.args[0].strides), "1,0");
  EXPECT_EQ(str(e.args[1].strides), "1," + names[0] + "*" + names[1]);
  const host::KernelCall &f = program.calls[1];
  EXPECT_EQ(f.spec.kind, KernelKind::Copy);
  // [2, 3, 5] from [3, 1]: each x[r] five times, all of it twice.
  EXPECT_EQ(str(f.args[0].extents), "5,3,2");
  EXPECT_EQ(str(f.args[0].strides), "0,1,0");
}

/// gather_elements views every operand as [before the axis, the axis,
/// after it]: axis 3 of [1, H, S, 2k] leaves an inner dim of 1, axis 1 an
/// outer dim of 1 (the batch); the result has the indices' shape, whose
/// dynamic dims the input's share off the axis, and the input's own axis
/// length stays free.
TEST_F(HostCodegenTest, GatherElementsViews) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%c2p: tensor<1x4x?x8xf32>, %index: tensor<1x4x?x?xi64>, %x: tensor<1x?x6xf32>,
             %i: tensor<1x3x6xi32>) -> (tensor<1x4x?x?xf32>, tensor<1x3x6xf32>) {
  %g = tfm.gather_elements %c2p, %index {axis = 3 : i64} : tensor<1x4x?x8xf32>, tensor<1x4x?x?xi64> -> tensor<1x4x?x?xf32>
  %h = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<1x?x6xf32>, tensor<1x3x6xi32> -> tensor<1x3x6xf32>
  return %g, %h : tensor<1x4x?x?xf32>, tensor<1x3x6xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  // S (shared by c2p and index), the gathered length of index, x's rows.
  ASSERT_EQ(shapes.symbols.size(), 3u);
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  std::vector<std::string> names = shapes.symbolNames();
  auto str = [&](llvm::ArrayRef<host::Monomial> ms) {
    std::string text;
    for (const host::Monomial &m : ms)
      text += (text.empty() ? "" : ",") + m.str(names);
    return text;
  };
  ASSERT_EQ(program.calls.size(), 2u);
  const host::KernelCall &g = program.calls[0];
  EXPECT_EQ(g.spec.kind, KernelKind::GatherElements);
  EXPECT_EQ(g.spec.elementType, ScalarType::F32);
  EXPECT_EQ(g.spec.indexType, ScalarType::I64);
  ASSERT_EQ(g.args.size(), 3u);
  EXPECT_EQ(str(g.args[0].extents), "1,8,4*" + names[0]);
  EXPECT_EQ(str(g.args[1].extents), "1," + names[1] + ",4*" + names[0]);
  EXPECT_EQ(str(g.args[2].extents), "1," + names[1] + ",4*" + names[0]);
  EXPECT_EQ(str(g.args[1].strides), "1,1," + names[1]);
  EXPECT_EQ(program.storage.lookup(g.args[2].tensor).kind, host::Storage::Output);

  const host::KernelCall &h = program.calls[1];
  EXPECT_EQ(h.spec.indexType, ScalarType::I32);
  EXPECT_EQ(str(h.args[0].extents), "6," + names[2] + ",1");
  EXPECT_EQ(str(h.args[1].extents), "6,3,1");
  EXPECT_EQ(str(h.args[2].extents), "6,3,1");

  // And it lowers to verified LLVM IR.
  OwningOpRef<ModuleOp> lowered;
  HostLoweringResult result;
  ASSERT_TRUE(lower(R"mlir(
func.func @f(%c2p: tensor<1x4x?x8xf32>, %index: tensor<1x4x?x?xi64>) -> tensor<1x4x?x?xf32> {
  %g = tfm.gather_elements %c2p, %index {axis = 3 : i64} : tensor<1x4x?x8xf32>, tensor<1x4x?x?xi64> -> tensor<1x4x?x?xf32>
  return %g : tensor<1x4x?x?xf32>
}
)mlir",
                    lowered, result))
      << errors;
  llvm::LLVMContext llvmContext;
  EXPECT_TRUE(translate(*lowered, llvmContext));
}

//===----------------------------------------------------------------------===//
// Index computations: integers, compare, cast, log, minimum
//===----------------------------------------------------------------------===//

/// T5-style bucket arithmetic: compare is a Compare call whose i1 output
/// is a one-byte-per-element buffer and whose operands broadcast by stride
/// 0; cast is a Cast with its source type; i64 sub/minimum are Binary and
/// i64 abs a Unary of the element type; log a float Unary; where takes an
/// i1 condition and i64 values. The shape rules tie the `?`s of every op to
/// the input's.
TEST_F(HostCodegenTest, IndexOpsMapToKernels) {
  const char *source = R"mlir(
func.func @f(%x: tensor<?x4xf32> {tfm.dim_names = ["s", ""]}) -> (tensor<?x?xi64>, tensor<?x?xf32>) {
  %p = tfm.arange %x {axis = 0 : i64} : tensor<?x4xf32> -> tensor<?xi64>
  %i = tfm.reshape %p : tensor<?xi64> -> tensor<?x1xi64>
  %j = tfm.reshape %p : tensor<?xi64> -> tensor<1x?xi64>
  %rp = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %n = tfm.abs %rp : tensor<?x?xi64> -> tensor<?x?xi64>
  %c8 = arith.constant dense<8> : tensor<i64>
  %small = tfm.compare %n, %c8 {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %nf = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  %lg = tfm.log %nf : tensor<?x?xf32> -> tensor<?x?xf32>
  %q = tfm.cast %lg : tensor<?x?xf32> -> tensor<?x?xi64>
  %big = tfm.minimum %q, %c8 : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %ids = tfm.where %small, %n, %big : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  return %ids, %lg : tensor<?x?xi64>, tensor<?x?xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  ASSERT_EQ(shapes.symbols.size(), 1u); // every ? is s
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  std::vector<std::string> names = shapes.symbolNames();
  auto str = [&](llvm::ArrayRef<host::Monomial> ms) {
    std::string text;
    for (const host::Monomial &m : ms)
      text += (text.empty() ? "" : ",") + m.str(names);
    return text;
  };
  // arange, sub, abs, compare, cast, log, cast, minimum, where.
  ASSERT_EQ(program.calls.size(), 9u);
  const KernelSpec &sub = program.calls[1].spec;
  EXPECT_EQ(sub.kind, KernelKind::Binary);
  EXPECT_EQ(sub.binary, BinaryKind::Sub);
  EXPECT_EQ(sub.elementType, ScalarType::I64);
  EXPECT_EQ(program.calls[2].spec.kind, KernelKind::Unary);
  EXPECT_EQ(program.calls[2].spec.unary, UnaryKind::Abs);
  EXPECT_EQ(program.calls[2].spec.elementType, ScalarType::I64);

  const host::KernelCall &compare = program.calls[3];
  EXPECT_EQ(compare.spec.kind, KernelKind::Compare);
  EXPECT_EQ(compare.spec.predicate, ComparePredicate::Lt);
  EXPECT_EQ(compare.spec.elementType, ScalarType::I64);
  ASSERT_EQ(compare.args.size(), 3u);
  EXPECT_EQ(compare.args[1].type, ScalarType::I64);
  EXPECT_EQ(str(compare.args[1].strides), "0"); // the scalar 8, everywhere
  EXPECT_EQ(compare.args[2].type, ScalarType::Bool);
  EXPECT_EQ(str(compare.args[2].extents), "s*s");

  const KernelSpec &toFloat = program.calls[4].spec, &toInt = program.calls[6].spec;
  EXPECT_EQ(toFloat.kind, KernelKind::Cast);
  EXPECT_EQ(toFloat.sourceType, ScalarType::I64);
  EXPECT_EQ(toFloat.elementType, ScalarType::F32);
  EXPECT_EQ(toInt.sourceType, ScalarType::F32);
  EXPECT_EQ(toInt.elementType, ScalarType::I64);
  EXPECT_EQ(program.calls[5].spec.unary, UnaryKind::Log);
  EXPECT_EQ(program.calls[7].spec.binary, BinaryKind::Minimum);
  EXPECT_EQ(program.calls[8].spec.kind, KernelKind::Where);
  EXPECT_EQ(program.calls[8].spec.condType, ScalarType::Bool);
  EXPECT_EQ(program.calls[8].spec.elementType, ScalarType::I64);

  // %small takes one byte an element.
  host::MemoryPlan plan = host::planMemory(program, shapes);
  Value small = compare.args[2].tensor;
  bool found = false;
  for (const host::PlannedBuffer &buffer : plan.buffers)
    if (buffer.value == small) {
      found = true;
      EXPECT_EQ(buffer.bytes.str(names), "s*s");
    }
  EXPECT_TRUE(found);

  OwningOpRef<ModuleOp> lowered;
  HostLoweringResult result;
  ASSERT_TRUE(lower(source, lowered, result)) << errors;
  llvm::LLVMContext llvmContext;
  EXPECT_TRUE(translate(*lowered, llvmContext));
}

//===----------------------------------------------------------------------===//
// An attention block
//===----------------------------------------------------------------------===//

const char *kAttention = R"mlir(
func.func @block(%x: tensor<1x?x32xf32> {tfm.name = "x", tfm.dim_names = ["b", "seq", "d"]},
                 %mask: tensor<?x?xf32> {tfm.name = "mask", tfm.dim_names = ["seq", "seq_k"]},
                 %kv: tensor<1x2x?x8xf32> {tfm.name = "kv", tfm.dim_names = ["b", "h", "seq_k", "d"]})
    -> (tensor<1x?x32xf32> {tfm.name = "y"}) {
  %wq = tfm.weight "wq" : tensor<32x32xf32>
  %q = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %q4 = tfm.reshape %q : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %qt = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %k = tfm.repeat_interleave %kv {axis = 1 : i64, repeats = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  %o = tfm.attention %qt, %k, %k mask(%mask : tensor<?x?xf32>) {scale = 0.35355339059327373 : f64, causal = true}
      : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x4x?x8xf32> -> tensor<1x?x4x8xf32>
  %m = tfm.reshape %ot : tensor<1x?x4x8xf32> -> tensor<1x?x32xf32>
  %wo = tfm.weight "wo" : tensor<32x32xf32>
  %y = tfm.linear %m, %wo : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %r = tfm.add %y, %x : tensor<1x?x32xf32>, tensor<1x?x32xf32> -> tensor<1x?x32xf32>
  return %r : tensor<1x?x32xf32>
}
)mlir";

TEST_F(HostCodegenTest, AttentionBlock) {
  OwningOpRef<ModuleOp> module = parse(kAttention);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes))) << errors;
  // Names on static dimensions are ignored; seq and seq_k stay apart.
  ASSERT_EQ(shapes.symbols.size(), 2u);
  EXPECT_EQ(shapes.symbols[0].name, "seq");
  EXPECT_EQ(shapes.symbols[1].name, "seq_k");

  std::string blob = makeBlob({{"wq", {32, 32}}, {"wo", {32, 32}}});
  host::KernelProgram program;
  host::KernelMappingOptions options;
  options.weightsBlob = blob;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, options, program)));
  std::vector<std::string> names = shapes.symbolNames();
  const host::KernelCall *attention = nullptr, *transpose = nullptr;
  for (const host::KernelCall &call : program.calls) {
    if (call.spec.kind == KernelKind::Attention)
      attention = &call;
    if (call.spec.kind == KernelKind::Copy && !transpose)
      transpose = &call;
  }
  ASSERT_TRUE(attention && transpose);
  EXPECT_EQ(attention->spec.headDim, 8);
  EXPECT_TRUE(attention->spec.causal && attention->spec.hasMask);
  // The [Sq, Sk] mask is seen as [B, H, Sq, Sk] with stride 0 for B and H.
  const host::BufferView &mask = attention->args[3];
  ASSERT_EQ(mask.extents.size(), 4u);
  EXPECT_EQ(mask.strides[0].str(names), "1");
  EXPECT_EQ(mask.strides[1].str(names), "seq_k");
  EXPECT_EQ(mask.strides[2].str(names), "0");
  EXPECT_EQ(mask.strides[3].str(names), "0");
  EXPECT_EQ(mask.extents[3].str(names), "1");
  EXPECT_EQ(mask.extents[2].str(names), "4");
  // [1, S, 4, 8] -> [1, 4, S, 8]: the input read with permuted strides,
  // the unit batch merged away.
  const host::BufferView &in = transpose->args[0];
  ASSERT_EQ(in.extents.size(), 3u);
  EXPECT_EQ(in.extents[1].str(names), "seq");
  EXPECT_EQ(in.strides[1].str(names), "32");
  EXPECT_EQ(in.strides[2].str(names), "8");
  EXPECT_EQ(transpose->spec.rank, 3);

  OwningOpRef<ModuleOp> lowered;
  HostLoweringResult result;
  ASSERT_TRUE(lower(kAttention, lowered, result, blob)) << errors;
  EXPECT_EQ(countKernels(result, KernelKind::Attention), 1);
  EXPECT_EQ(countKernels(result, KernelKind::RepeatInterleave), 1);
  llvm::LLVMContext llvmContext;
  EXPECT_TRUE(translate(*lowered, llvmContext));
}

/// Attention as exporters write it (GPT-2 style, scaled down): every op of
/// the decomposed form maps to its kernel, and the arguments match the
/// kernel catalogue's signatures (mapKernels checks each call against
/// kernelSignature()).
const char *kDecomposed = R"mlir(
func.func @gpt2_block(%ids: tensor<?x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
    -> (tensor<?x?x16xf32> {tfm.name = "hidden_states"}) {
  %wte = tfm.weight "wte" : tensor<50x16xf32>
  %wpe = tfm.weight "wpe" : tensor<24x16xf32>
  %tok = tfm.embedding %wte, %ids : tensor<50x16xf32>, tensor<?x?xi32> -> tensor<?x?x16xf32>
  %x = tfm.learned_position %tok, %wpe : tensor<?x?x16xf32>, tensor<24x16xf32> -> tensor<?x?x16xf32>
  %g = tfm.weight "ln.g" {init = #tfm.init<ones>} : tensor<16xf32>
  %h = tfm.rms_norm %x, %g : tensor<?x?x16xf32>, tensor<16xf32> -> tensor<?x?x16xf32>
  %wq = tfm.weight "wq" : tensor<16x16xf32>
  %q = tfm.linear %h, %wq : tensor<?x?x16xf32>, tensor<16x16xf32> -> tensor<?x?x16xf32>
  %q4 = tfm.reshape %q : tensor<?x?x16xf32> -> tensor<?x?x2x8xf32>
  %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x8xf32> -> tensor<?x2x?x8xf32>
  %scores = tfm.matmul %qh, %qh {transpose_b = true} : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x?xf32>
  %scale = arith.constant dense<0.35355339> : tensor<f32>
  %scaled = tfm.mul %scores, %scale : tensor<?x2x?x?xf32>, tensor<f32> -> tensor<?x2x?x?xf32>
  %masked = tfm.causal_mask %scaled : tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  %probs = tfm.softmax %masked {axis = -1 : i64} : tensor<?x2x?x?xf32> -> tensor<?x2x?x?xf32>
  %ctx = tfm.matmul %probs, %qh : tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x2x?x8xf32> -> tensor<?x?x2x8xf32>
  %ctx_m = tfm.reshape %ctx_t : tensor<?x?x2x8xf32> -> tensor<?x?x16xf32>
  %s = tfm.sinusoidal_position %ctx_m {form = #tfm.sinusoidal_form<concat>} : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %act = tfm.silu %s : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %d = tfm.sub %act, %x : tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %two = arith.constant dense<2.0> : tensor<1x1x16xf32>
  %e = tfm.div %d, %two : tensor<?x?x16xf32>, tensor<1x1x16xf32> -> tensor<?x?x16xf32>
  %pos = arith.constant dense<true> : tensor<16xi1>
  %w = tfm.where %pos, %e, %d : tensor<16xi1>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  return %w : tensor<?x?x16xf32>
}
)mlir";

TEST_F(HostCodegenTest, DecomposedAttentionMapsEveryOp) {
  OwningOpRef<ModuleOp> module = parse(kDecomposed);
  ASSERT_TRUE(module);
  llvm::Expected<std::string> blob = materializeWeights(*module, "", 7);
  ASSERT_TRUE(!!blob) << llvm::toString(blob.takeError());
  OwningOpRef<ModuleOp> lowered;
  HostLoweringResult result;
  ASSERT_TRUE(lower(kDecomposed, lowered, result, *blob)) << errors;
  for (KernelKind kind :
       {KernelKind::Embedding, KernelKind::LearnedPosition, KernelKind::RmsNorm,
        KernelKind::Linear, KernelKind::Copy, KernelKind::Matmul, KernelKind::Binary,
        KernelKind::CausalMask, KernelKind::Softmax, KernelKind::Sinusoidal,
        KernelKind::Unary, KernelKind::Where})
    EXPECT_GE(countKernels(result, kind), 1) << "kernel kind " << static_cast<int>(kind);
  // Both transposes move the middle two dimensions of a 4-d tensor: one
  // kernel. The two matmuls differ in transpose_b: two kernels.
  EXPECT_EQ(countKernels(result, KernelKind::Copy), 1);
  EXPECT_EQ(countKernels(result, KernelKind::Matmul), 2);
  llvm::LLVMContext llvmContext;
  EXPECT_TRUE(translate(*lowered, llvmContext));
  EXPECT_NE(result.memoryPlan.find("symbols: batch seq<=24"), std::string::npos)
      << result.memoryPlan;
}

/// Key padding and a GQA-free attention with every optional operand.
TEST_F(HostCodegenTest, AttentionWithKeyPadding) {
  const char *source = R"mlir(
func.func @attn(%q: tensor<?x4x?x8xf32> {tfm.dim_names = ["b", "h", "sq", "d"]},
                %k: tensor<?x4x?x8xf32> {tfm.dim_names = ["b", "h", "sk", "d"]},
                %pad: tensor<?x?xi32> {tfm.dim_names = ["b", "sk"]},
                %bias: tensor<4x1x?xf32> {tfm.dim_names = ["h", "one", "sk"]})
    -> tensor<?x4x?x8xf32> {
  %o = tfm.attention %q, %k, %k mask(%bias : tensor<4x1x?xf32>) key_padding_mask(%pad : tensor<?x?xi32>)
      {scale = 0.125 : f64}
      : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  ASSERT_EQ(shapes.symbolNames(), (std::vector<std::string>{"b", "sq", "sk"}));
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  ASSERT_EQ(program.calls.size(), 1u);
  const host::KernelCall &call = program.calls[0];
  EXPECT_TRUE(call.spec.hasMask && call.spec.hasKeyPadding);
  EXPECT_EQ(call.spec.keyPaddingType, ScalarType::I32);
  // mask [4, 1, Sk] seen as [B, H, Sq, Sk]: Sq and B broadcast.
  std::vector<std::string> names = shapes.symbolNames();
  const host::BufferView &mask = call.args[3];
  EXPECT_EQ(mask.extents[1].str(names), "sq");
  EXPECT_EQ(mask.strides[1].str(names), "0");
  EXPECT_EQ(mask.strides[2].str(names), "sk");
  EXPECT_EQ(mask.strides[3].str(names), "0");
  // The output is the caller's buffer: no workspace at all.
  EXPECT_TRUE(program.intermediates.empty());
}

TEST_F(HostCodegenTest, BroadcastOverDynamicDimsCollapses) {
  // %bias is broadcast over both dynamic dimensions (stride 0 on each), so
  // [b, s, 16] is walked as [b*s, 16] by every argument: stride 0 equals
  // 0 * s only when a zero factor drops the symbols.
  const char *source = R"mlir(
func.func @f(%x: tensor<?x?x16xf32> {tfm.dim_names = ["b", "s", "d"]},
             %bias: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %y = tfm.add %x, %bias : tensor<?x?x16xf32>, tensor<16xf32> -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  host::KernelProgram program;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, {}, program)));
  ASSERT_EQ(program.calls.size(), 1u);
  const host::KernelCall &call = program.calls[0];
  EXPECT_EQ(call.spec.kind, KernelKind::Binary);
  EXPECT_EQ(call.spec.rank, 2);
  std::vector<std::string> names = shapes.symbolNames();
  ASSERT_EQ(call.args.size(), 3u);
  const host::BufferView &bias = call.args[1];
  ASSERT_EQ(bias.extents.size(), 2u);
  EXPECT_EQ(bias.extents[0].str(names), "16");
  EXPECT_EQ(bias.extents[1].str(names), "b*s");
  EXPECT_EQ(bias.strides[0].str(names), "1");
  EXPECT_EQ(bias.strides[1].str(names), "0");
  EXPECT_EQ(call.args[0].strides[1].str(names), "16");
}

TEST(MonomialTest, ZeroFactorDropsSymbols) {
  host::Monomial zeroTimesSeq =
      host::Monomial::constant(0) * host::Monomial::symbol(1);
  EXPECT_TRUE(zeroTimesSeq.isConstant());
  EXPECT_EQ(zeroTimesSeq, host::Monomial::constant(0));
  EXPECT_EQ((host::Monomial::symbol(0) * host::Monomial::constant(0)).str({}),
            "0");
  EXPECT_EQ((host::Monomial::constant(3) * host::Monomial::symbol(1)).str({}),
            "3*s1");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(HostCodegenTest, NegativeSoftmaxOverFirstAxis) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = tfm.softmax %x {axis = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
)mlir",
                     module, result));
  EXPECT_NE(errors.find("softmax over axis 0 is not supported by code generation"),
            std::string::npos)
      << errors;
  // Nothing was emitted on failure.
  EXPECT_TRUE(module->getOps<LLVM::LLVMFuncOp>().empty());
}

TEST_F(HostCodegenTest, NegativeDynamicDimNotBoundToAnInput) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tfm.repeat_interleave %x {axis = 0 : i64, repeats = 2 : i64} : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
)mlir",
                     module, result));
  EXPECT_NE(errors.find("result dimension 0 is dynamic but not determined by any input"),
            std::string::npos)
      << errors;
}

TEST_F(HostCodegenTest, NegativeUnknownWeight) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = tfm.weight "missing" : tensor<8x8xf32>
  %y = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
)mlir",
                     module, result, makeBlob({{"present", {8, 8}}})));
  EXPECT_NE(errors.find("names weight 'missing', which the weights blob does not contain"),
            std::string::npos)
      << errors;
}

TEST_F(HostCodegenTest, NegativeWeightShapeMismatch) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = tfm.weight "w" : tensor<8x8xf32>
  %y = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
)mlir",
                     module, result, makeBlob({{"w", {8, 4}}})));
  EXPECT_NE(errors.find("expected weight 'w' of type"), std::string::npos) << errors;
}

TEST_F(HostCodegenTest, NegativeOpWithoutKernel) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
)mlir",
                     module, result));
  EXPECT_NE(errors.find("'arith.addf' op has no kernel in host code generation"),
            std::string::npos)
      << errors;
}

TEST_F(HostCodegenTest, NegativeNoModelFunction) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower("module {}", module, result));
  EXPECT_NE(errors.find("expected exactly one public model function, got 0"),
            std::string::npos)
      << errors;
}

/// Ids reshaped before the lookup still come from the input, so the
/// runtime range-checks them; the tightest table wins.
TEST_F(HostCodegenTest, IndexBoundThroughReshape) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%ids: tensor<?x4xi64>) -> (tensor<?x2x2x8xf32>, tensor<?x4x8xf32>) {
  %t = tfm.weight "t" : tensor<30x8xf32>
  %u = tfm.weight "u" : tensor<20x8xf32>
  %split = tfm.reshape %ids : tensor<?x4xi64> -> tensor<?x2x2xi64>
  %a = tfm.embedding %t, %split : tensor<30x8xf32>, tensor<?x2x2xi64> -> tensor<?x2x2x8xf32>
  %b = tfm.embedding %u, %ids : tensor<20x8xf32>, tensor<?x4xi64> -> tensor<?x4x8xf32>
  return %a, %b : tensor<?x2x2x8xf32>, tensor<?x4x8xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  host::ShapeInfo shapes;
  ASSERT_TRUE(succeeded(host::analyzeShapes(func, shapes)));
  std::string blob = makeBlob({{"t", {30, 8}}, {"u", {20, 8}}});
  host::KernelProgram program;
  host::KernelMappingOptions options;
  options.weightsBlob = blob;
  ASSERT_TRUE(succeeded(host::mapKernels(func, shapes, options, program)));
  EXPECT_EQ(program.indexBounds, (std::vector<int64_t>{20}));
  EXPECT_EQ(program.calls[0].spec.indexType, ScalarType::I64);
}

TEST_F(HostCodegenTest, NegativeStaticExtentOverflow) {
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  EXPECT_FALSE(lower(R"mlir(
func.func @f(%x: tensor<65536x65536xf32>) -> tensor<65536x65536xf32> {
  %y = tfm.relu %x : tensor<65536x65536xf32> -> tensor<65536x65536xf32>
  return %y : tensor<65536x65536xf32>
}
)mlir",
                     module, result));
  EXPECT_NE(errors.find("input 'input0' of type 'tensor<65536x65536xf32>' has more than "
                        "2147483647 elements in its static dimensions"),
            std::string::npos)
      << errors;
}

//===----------------------------------------------------------------------===//
// Running the host code against stand-in kernels
//===----------------------------------------------------------------------===//

/// Reads element `i` (innermost-first coordinates) of a strided f32 buffer.
float *at(halide_buffer_t *b, const int64_t *coord) {
  int64_t offset = 0;
  for (int d = 0; d < b->dimensions; ++d)
    offset += coord[d] * b->dim[d].stride;
  return reinterpret_cast<float *>(b->host) + offset;
}

/// Calls `fn(coord)` for every coordinate of `out`'s domain.
template <typename Fn> void forEach(halide_buffer_t *out, Fn fn) {
  int64_t coord[8] = {0};
  int64_t total = 1;
  for (int d = 0; d < out->dimensions; ++d)
    total *= out->dim[d].extent;
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (int d = 0; d < out->dimensions; ++d) {
      coord[d] = rest % out->dim[d].extent;
      rest /= out->dim[d].extent;
    }
    fn(coord);
  }
}

/// Every call the stand-in kernels saw, to check types and ranks.
std::vector<std::string> calls;

bool isF32(halide_buffer_t *b) {
  return b->type.code == halide_type_float && b->type.bits == 32 && b->type.lanes == 1 &&
         b->host && b->device == 0 && b->device_interface == nullptr;
}

extern "C" int fakeRelu(halide_buffer_t *in, halide_buffer_t *out) {
  calls.push_back("relu");
  if (!isF32(in) || !isF32(out) || in->dimensions != 1)
    return -100;
  forEach(out, [&](const int64_t *c) { *at(out, c) = std::max(0.0f, *at(in, c)); });
  return 0;
}
template <char Op>
int fakeBinary(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out) {
  calls.push_back(std::string("binary") + Op);
  if (!isF32(a) || !isF32(b) || !isF32(out) || a->dimensions != out->dimensions)
    return -100;
  forEach(out, [&](const int64_t *c) {
    *at(out, c) = Op == '+' ? *at(a, c) + *at(b, c) : *at(a, c) * *at(b, c);
  });
  return 0;
}
extern "C" int fakeAdd(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out) {
  return fakeBinary<'+'>(a, b, out);
}
extern "C" int fakeMul(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out) {
  return fakeBinary<'*'>(a, b, out);
}
extern "C" int fakeCopy(halide_buffer_t *in, halide_buffer_t *out) {
  calls.push_back("copy");
  if (!isF32(in) || !isF32(out))
    return -100;
  forEach(out, [&](const int64_t *c) { *at(out, c) = *at(in, c); });
  return 0;
}
int threadsAsked = -1;
extern "C" int fakeSetNumThreads(int n) {
  threadsAsked = n;
  return 0;
}
int shutdownsAsked = 0;
extern "C" void fakeShutdownThreadPool() { ++shutdownsAsked; }
/// What the library's constructor installed as the dispatch check; the
/// stand-in for Halide's own check accepts everything.
using CanUseFn = int (*)(int, const uint64_t *);
CanUseFn installedCanUse = nullptr;
extern "C" CanUseFn fakeSetCustomCanUse(CanUseFn fn) {
  CanUseFn previous = installedCanUse;
  installedCanUse = fn;
  return previous;
}
extern "C" int fakeDefaultCanUse(int, const uint64_t *) { return 1; }
/// What the library's constructor installed as Halide's error handler.
halide_error_handler_t installedHandler = nullptr;
extern "C" halide_error_handler_t fakeSetErrorHandler(halide_error_handler_t handler) {
  halide_error_handler_t previous = installedHandler;
  installedHandler = handler;
  return previous;
}


/// A library's host code JIT-compiled, with `symbols` (kernel stand-ins)
/// and the Halide runtime's stand-ins above defined as a link would, and
/// its constructor run as dlopen would; `abi` is null (after a failure
/// recorded in the test) when a step fails.
struct JitLibrary {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  const attune_model_abi_t *abi = nullptr;
};
JitLibrary jitLibrary(std::unique_ptr<llvm::Module> llvmModule,
                      std::unique_ptr<llvm::LLVMContext> llvmContext,
                      const std::map<std::string, void *> &symbols) {
  JitLibrary library;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    ADD_FAILURE() << llvm::toString(jit.takeError());
    return library;
  }
  library.jit = std::move(*jit);
  llvm::orc::SymbolMap fakes;
  auto define = [&](const std::string &name, void *address) {
    fakes[library.jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                                 llvm::JITSymbolFlags::Exported};
  };
  for (const auto &[name, address] : symbols)
    define(name, address);
  define("halide_set_num_threads", reinterpret_cast<void *>(&fakeSetNumThreads));
  define("halide_set_error_handler", reinterpret_cast<void *>(&fakeSetErrorHandler));
  define("halide_shutdown_thread_pool", reinterpret_cast<void *>(&fakeShutdownThreadPool));
  define("halide_set_custom_can_use_target_features",
         reinterpret_cast<void *>(&fakeSetCustomCanUse));
  define("halide_default_can_use_target_features",
         reinterpret_cast<void *>(&fakeDefaultCanUse));
  if (llvm::Error error = library.jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(fakes))) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return library;
  }
  if (llvm::Error error = library.jit->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(llvmModule), std::move(llvmContext)))) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return library;
  }
  if (llvm::Error error = library.jit->initialize(library.jit->getMainJITDylib())) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return library;
  }
  auto getter = library.jit->lookup("attune_model_abi");
  if (!getter) {
    ADD_FAILURE() << llvm::toString(getter.takeError());
    return library;
  }
  library.abi = getter->toPtr<attune_model_abi_fn>()();
  return library;
}

TEST_F(HostCodegenTest, DispatchObeysTheIsaCap) {
  // One feature word: an AVX2 variant with bit 0, an AVX-512 one with bit
  // 1, no AVX512_ZEN4 or AVX512_SPR variant.
  isaDispatch.wordsPerLevel = 1;
  isaDispatch.forbidden = {0x3, 0x2, 0x0, 0x0, 0x0};
  isaDispatch.effectiveLevel = {0, 1, 2, 2, 2};
  const char *source = R"mlir(
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tfm.relu %x : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  ASSERT_TRUE(lower(source, module, result)) << errors;
  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule = translate(*module, *llvmContext);
  ASSERT_TRUE(llvmModule);
  installedCanUse = nullptr;
  JitLibrary library =
      jitLibrary(std::move(llvmModule), std::move(llvmContext),
                 {{result.kernels.at(0).symbolName(), reinterpret_cast<void *>(&fakeCopy)}});
  ASSERT_TRUE(library.abi);
  ASSERT_TRUE(installedCanUse);
  const attune_model_abi_t *abi = library.abi;

  const uint64_t avx2[1] = {0x1}, avx512[1] = {0x2};
  EXPECT_EQ(abi->dispatched_isa(), -1) << "no kernel has chosen yet";
  EXPECT_EQ(abi->set_isa_cap(ATTUNE_ISA_AVX2), ATTUNE_ISA_AVX2);
  EXPECT_EQ(installedCanUse(1, avx512), 0) << "above the cap";
  EXPECT_EQ(abi->dispatched_isa(), ATTUNE_ISA_BASELINE)
      << "a kernel asked, so it runs the baseline at least";
  EXPECT_EQ(installedCanUse(1, avx2), 1);
  EXPECT_EQ(abi->dispatched_isa(), ATTUNE_ISA_AVX2);
  EXPECT_EQ(installedCanUse(0, avx512), 1) << "no words, nothing to refuse";
  // A kernel chose AVX2: a lower cap could no longer hold.
  EXPECT_EQ(abi->set_isa_cap(ATTUNE_ISA_BASELINE), -1);
  // No SPR variant: under an SPR cap the kernels run at AVX-512.
  EXPECT_EQ(abi->set_isa_cap(ATTUNE_ISA_AVX512_SPR), ATTUNE_ISA_AVX512);
  EXPECT_EQ(installedCanUse(1, avx512), 1);
  EXPECT_EQ(abi->dispatched_isa(), ATTUNE_ISA_AVX512);
}

TEST_F(HostCodegenTest, RunsAgainstStandInKernels) {
  // relu, a broadcast add of a constant row, a product with the relu (kept
  // alive across the add), a reshape alias as one output and an input
  // copied to the other.
  const char *source = R"mlir(
func.func @f(%x: tensor<?x3xf32> {tfm.name = "x", tfm.dim_names = ["n", "c"]},
             %y: tensor<3xf32> {tfm.name = "y"})
    -> (tensor<?x3x1xf32> {tfm.name = "z"}, tensor<3xf32>) {
  %a = tfm.relu %x : tensor<?x3xf32> -> tensor<?x3xf32>
  %row = arith.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %b = tfm.add %a, %row : tensor<?x3xf32>, tensor<1x3xf32> -> tensor<?x3xf32>
  %b2 = tfm.add %b, %y : tensor<?x3xf32>, tensor<3xf32> -> tensor<?x3xf32>
  %c = tfm.mul %b2, %a : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  %z = tfm.reshape %c : tensor<?x3xf32> -> tensor<?x3x1xf32>
  return %z, %y : tensor<?x3x1xf32>, tensor<3xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  ASSERT_TRUE(lower(source, module, result)) << errors;
  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule = translate(*module, *llvmContext);
  ASSERT_TRUE(llvmModule);

  std::map<std::string, void *> kernels;
  for (const KernelSpec &spec : result.kernels) {
    void *fn = nullptr;
    if (spec.kind == KernelKind::Unary && spec.unary == UnaryKind::Relu)
      fn = reinterpret_cast<void *>(&fakeRelu);
    else if (spec.kind == KernelKind::Binary && spec.binary == BinaryKind::Add)
      fn = reinterpret_cast<void *>(&fakeAdd);
    else if (spec.kind == KernelKind::Binary && spec.binary == BinaryKind::Mul)
      fn = reinterpret_cast<void *>(&fakeMul);
    else if (spec.kind == KernelKind::Copy)
      fn = reinterpret_cast<void *>(&fakeCopy);
    ASSERT_TRUE(fn) << "unexpected kernel " << spec.symbolName();
    kernels[spec.symbolName()] = fn;
  }
  // The hooks are installed by a constructor, as dlopen would run it.
  JitLibrary library = jitLibrary(std::move(llvmModule), std::move(llvmContext), kernels);
  ASSERT_TRUE(library.abi);
  const attune_model_abi_t *abi = library.abi;

  // The descriptor, as the runtime reads it.
  EXPECT_EQ(abi->abi_version, ATTUNE_MODEL_ABI_VERSION);
  EXPECT_STREQ(abi->name, "f");
  ASSERT_EQ(abi->num_inputs, 2);
  EXPECT_STREQ(abi->inputs[0].name, "x");
  EXPECT_EQ(abi->inputs[0].dtype, ATTUNE_DTYPE_F32);
  ASSERT_EQ(abi->inputs[0].rank, 2);
  EXPECT_EQ(abi->inputs[0].dims[0], -1);
  EXPECT_EQ(abi->inputs[0].dims[1], 3);
  EXPECT_EQ(abi->inputs[0].index_bound, 0);
  ASSERT_EQ(abi->num_outputs, 2);
  EXPECT_STREQ(abi->outputs[0].name, "z");
  EXPECT_STREQ(abi->outputs[1].name, "output1");
  ASSERT_EQ(abi->outputs[0].rank, 3);
  EXPECT_EQ(abi->outputs[0].dims[0], -1);
  EXPECT_EQ(abi->outputs[0].dims[2], 1);
  ASSERT_EQ(abi->num_symbols, 1);
  EXPECT_STREQ(abi->symbol_names[0], "n");
  EXPECT_EQ(abi->symbol_max[0], -1);
  EXPECT_EQ(abi->weights, nullptr);
  EXPECT_EQ(abi->weights_size, 0);
  EXPECT_EQ(abi->weights_storage, ATTUNE_WEIGHTS_EMBEDDED);
  EXPECT_EQ(abi->weights_file, nullptr);
  EXPECT_EQ(std::string(abi->source_ir), source);

  abi->set_num_threads(3);
  EXPECT_EQ(threadsAsked, 3);
  EXPECT_EQ(shutdownsAsked, 1) << "the pool restarts at the new size";

  const int64_t n = 2;
  int64_t symbols[1] = {n};
  // relu(x) lives to the product; the first add cannot overwrite it, the
  // second overwrites the first's result in place: two slots of 24 bytes,
  // each rounded up to 64.
  EXPECT_EQ(abi->workspace_size(symbols), 2 * 64);
  alignas(64) unsigned char workspace[2 * 64];
  std::vector<float> x = {-1, 2, 3, 4, -5, 6}, y = {10, 20, 30};
  std::vector<float> z(n * 3, -1), yCopy(3, -1);
  void *inputs[2] = {x.data(), y.data()};
  void *outputs[2] = {z.data(), yCopy.data()};
  calls.clear();
  ASSERT_EQ(abi->run(inputs, outputs, symbols, workspace, abi->weights, nullptr), 0);
  EXPECT_EQ(calls, (std::vector<std::string>{"relu", "binary+", "binary+", "binary*", "copy"}));
  for (int64_t i = 0; i < n * 3; ++i) {
    float a = std::max(0.0f, x[i]);
    float expected = (a + (i % 3 + 1) + y[i % 3]) * a;
    EXPECT_FLOAT_EQ(z[i], expected) << "z[" << i << "]";
  }
  EXPECT_EQ(yCopy, y);

  // Symbols that overflow a halide_buffer_t are refused before any kernel.
  int64_t huge[1] = {int64_t(1) << 31};
  calls.clear();
  EXPECT_EQ(abi->run(inputs, outputs, huge, workspace, abi->weights, nullptr), halide_error_code_buffer_extents_too_large);
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(abi->workspace_size(huge), 0);
  int64_t negative[1] = {-1};
  EXPECT_EQ(abi->run(inputs, outputs, negative, workspace, abi->weights, nullptr),
            halide_error_code_buffer_extents_too_large);

  // A failing kernel's code comes back and stops the run.
  std::vector<float> xBad(3);
  int64_t one[1] = {1};
  void *badInputs[2] = {xBad.data(), nullptr}; // null host: stand-in refuses
  calls.clear();
  EXPECT_EQ(abi->run(badInputs, outputs, one, workspace, abi->weights, nullptr), -100);
  EXPECT_EQ(calls.size(), 3u); // the second add, which reads y, failed

  // Loading the library replaced Halide's aborting error handler with
  // one that keeps the message, per thread, for last_error().
  ASSERT_TRUE(installedHandler);
  ASSERT_TRUE(abi->last_error);
  EXPECT_STREQ(abi->last_error(), "");
  installedHandler(nullptr, "Input buffer x is accessed at 7\n");
  EXPECT_STREQ(abi->last_error(), "Input buffer x is accessed at 7\n");
  std::string otherThread = "unset";
  std::thread([&] { otherThread = abi->last_error(); }).join();
  EXPECT_EQ(otherThread, "") << "the message belongs to the thread that failed";
  // Long messages are truncated to 1023 bytes and a NUL.
  std::string longMessage(5000, 'e');
  installedHandler(nullptr, longMessage.c_str());
  EXPECT_EQ(std::string(abi->last_error()), longMessage.substr(0, 1023));
  installedHandler(nullptr, nullptr);
  EXPECT_STREQ(abi->last_error(), "");
  // A run starts with a clean slate.
  installedHandler(nullptr, "stale");
  ASSERT_EQ(abi->run(inputs, outputs, symbols, workspace, abi->weights, nullptr), 0);
  EXPECT_STREQ(abi->last_error(), "");
}


// A CUDA library's host code, run on the host: the stand-ins read the
// buffers' device addresses (host memory here), so what is checked is what
// the generated code hands the kernels and the runtime's matmul (addresses,
// extents, strides, the op's fields, the constants' place in the workspace),
// which no machine without a GPU could otherwise see.
int cudaEnters = 0;
void *enteredContext = nullptr, *enteredStream = nullptr;
extern "C" void fakeCudaEnter(void *context, void *stream) {
  ++cudaEnters;
  enteredContext = context;
  enteredStream = stream;
}
int cudaInterfaceStandIn;
extern "C" const void *fakeCudaDeviceInterface() { return &cudaInterfaceStandIn; }
extern "C" void fakeCudaRelease(void *) {}

float *atDevice(const halide_buffer_t *b, const int64_t *coord) {
  int64_t offset = 0;
  for (int d = 0; d < b->dimensions; ++d)
    offset += coord[d] * b->dim[d].stride;
  return reinterpret_cast<float *>(b->device) + offset;
}
bool onDevice(const halide_buffer_t *b) {
  return b->type.code == halide_type_float && b->type.bits == 32 && !b->host && b->device &&
         b->device_interface ==
             reinterpret_cast<const halide_device_interface_t *>(&cudaInterfaceStandIn) &&
         b->flags == halide_buffer_flag_device_dirty;
}
extern "C" int fakeDeviceMul(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out) {
  calls.push_back("mul");
  if (!onDevice(a) || !onDevice(b) || !onDevice(out))
    return -100;
  forEach(out, [&](const int64_t *c) { *atDevice(out, c) = *atDevice(a, c) * *atDevice(b, c); });
  return 0;
}
std::vector<attune_abi_matmul_t> matmulOps;
/// The names run() marked, "end" for the final NULL.
std::vector<std::string> marks;
extern "C" void fakeMark(void *user, const char *name) {
  marks.push_back(user != &matmulOps ? "wrong user" : name ? name : "end");
}
/// cuBLASLt's part, on the host: reads the operands as ModelDevice does.
extern "C" int32_t fakeMatmul(void *user, const attune_abi_matmul_t *op,
                              halide_buffer_t *const *args, int32_t numArgs) {
  matmulOps.push_back(*op);
  if (user != &matmulOps)
    return 1;
  bool linear = op->kind == ATTUNE_ABI_MATMUL_LINEAR;
  const halide_buffer_t *a = args[0], *b = args[1], *y = args[numArgs - 1];
  const halide_buffer_t *bias = linear && op->has_bias ? args[2] : nullptr;
  for (const halide_buffer_t *t : {a, b, y})
    if (!onDevice(t) || t->dimensions != (linear ? 2 : 3))
      return 1;
  int64_t batch = linear ? 1 : y->dim[2].extent;
  int64_t m = y->dim[1].extent, n = y->dim[0].extent;
  int64_t k = a->dim[op->transpose_a ? 1 : 0].extent;
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = bias ? *atDevice(bias, std::array<int64_t, 1>{j}.data()) : 0.f;
        for (int64_t p = 0; p < k; ++p) {
          int64_t ac[3] = {op->transpose_a ? i : p, op->transpose_a ? p : i, t};
          int64_t bc[3] = {op->transpose_b ? p : j, op->transpose_b ? j : p, t};
          sum += *atDevice(a, ac) * *atDevice(b, bc);
        }
        if (op->activation == ATTUNE_ABI_ACTIVATION_RELU)
          sum = std::max(sum, 0.f);
        int64_t yc[3] = {j, i, t};
        *atDevice(y, yc) = sum;
      }
  return 0;
}

/// A linear over embedded constants with bias and ReLU (cuBLASLt), an
/// element-wise product (a Halide kernel), a matmul with a transposed
/// operand (cuBLASLt).
const char *kCudaProducts = R"mlir(
func.func @g(%x: tensor<?x4xf32> {tfm.name = "x", tfm.dim_names = ["n", "k"]},
             %v: tensor<2x3xf32> {tfm.name = "v"}) -> tensor<?x2xf32> {
  %w = arith.constant dense<[[1.0, -2.0, 0.5], [0.25, 1.0, -1.0],
                             [2.0, 0.0, 1.0], [-0.5, 1.5, 3.0]]> : tensor<4x3xf32>
  %b = arith.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32>
  %h = tfm.linear %x, %w, %b {activation = #tfm.activation<relu>}
      : tensor<?x4xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<?x3xf32>
  %s = tfm.mul %h, %h : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  %m = tfm.matmul %s, %v {transpose_b = true}
      : tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}
)mlir";

/// kCudaProducts' host code JIT-compiled against the stand-ins above: its
/// one kernel (the product of h) and the CUDA support code.
JitLibrary cudaStandInLibrary(std::unique_ptr<llvm::Module> llvmModule,
                              std::unique_ptr<llvm::LLVMContext> llvmContext,
                              const HostLoweringResult &result) {
  return jitLibrary(
      std::move(llvmModule), std::move(llvmContext),
      {{result.kernels.at(0).symbolName(), reinterpret_cast<void *>(&fakeDeviceMul)},
       {"attune_cuda_enter", reinterpret_cast<void *>(&fakeCudaEnter)},
       {"attune_cuda_release", reinterpret_cast<void *>(&fakeCudaRelease)},
       {"halide_cuda_device_interface", reinterpret_cast<void *>(&fakeCudaDeviceInterface)}});
}

TEST_F(HostCodegenTest, RunsCudaHostCodeAgainstStandIns) {
  cuda = true;
  OwningOpRef<ModuleOp> module;
  HostLoweringResult result;
  ASSERT_TRUE(lower(kCudaProducts, module, result)) << errors;
  // The products are the runtime's: the only kernel is the product of h.
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_EQ(result.kernels[0].kind, KernelKind::Binary);
  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule = translate(*module, *llvmContext);
  ASSERT_TRUE(llvmModule);

  JitLibrary library =
      cudaStandInLibrary(std::move(llvmModule), std::move(llvmContext), result);
  ASSERT_TRUE(library.abi);
  const attune_model_abi_t *abi = library.abi;

  EXPECT_EQ(abi->device, ATTUNE_ABI_DEVICE_CUDA);
  ASSERT_TRUE(abi->release_device);
  // w (48 bytes) and b (12), each at a 64-byte boundary.
  ASSERT_EQ(abi->constants_size, 128);
  ASSERT_TRUE(abi->constants);
  const float *constants = static_cast<const float *>(abi->constants);
  EXPECT_EQ(constants[0], 1.0f);
  EXPECT_EQ(constants[16], 0.5f) << "b starts at byte 64";

  const int64_t n = 3;
  int64_t symbols[1] = {n};
  // The constants, then h and s (both live until the product reads s:
  // h's slot is reused by nothing) each rounded to 64 bytes.
  int64_t bytes = abi->workspace_size(symbols);
  ASSERT_GE(bytes, 128 + 64);
  std::vector<float> workspaceData(bytes / sizeof(float) + 16);
  auto *workspace = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<uintptr_t>(workspaceData.data()) + 63) / 64 * 64);
  std::memcpy(workspace, abi->constants, 128); // what ModelDevice uploads
  std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 2, -3, 0, 0, 1, 1};
  std::vector<float> v = {1, 0, -1, 0.5f, 2, 1};
  std::vector<float> out(n * 2, -7);
  void *inputs[2] = {x.data(), v.data()};
  void *outputs[1] = {out.data()};
  int context = 0, stream = 0;
  attune_abi_device_t device = {&context, &stream, &fakeMatmul, &matmulOps, &fakeMark};
  calls.clear();
  matmulOps.clear();
  marks.clear();
  ASSERT_EQ(abi->run(inputs, outputs, symbols, workspace, nullptr, &device), 0);
  EXPECT_EQ(cudaEnters, 1);
  EXPECT_EQ(enteredContext, &context);
  EXPECT_EQ(enteredStream, &stream);
  EXPECT_EQ(calls, std::vector<std::string>{"mul"});
  EXPECT_EQ(marks, (std::vector<std::string>{"cublasLt linear", result.kernels[0].symbolName(),
                                             "cublasLt batched matmul", "end"}));
  ASSERT_EQ(matmulOps.size(), 2u);
  EXPECT_EQ(matmulOps[0].kind, ATTUNE_ABI_MATMUL_LINEAR);
  EXPECT_EQ(matmulOps[0].has_bias, 1);
  EXPECT_EQ(matmulOps[0].activation, ATTUNE_ABI_ACTIVATION_RELU);
  EXPECT_EQ(matmulOps[1].kind, ATTUNE_ABI_MATMUL_BATCHED);
  EXPECT_EQ(matmulOps[1].transpose_a, 0);
  EXPECT_EQ(matmulOps[1].transpose_b, 1);
  const float w[4][3] = {{1, -2, 0.5f}, {0.25f, 1, -1}, {2, 0, 1}, {-0.5f, 1.5f, 3}};
  const float b[3] = {0.5f, -1, 2};
  for (int64_t i = 0; i < n; ++i) {
    float s[3];
    for (int j = 0; j < 3; ++j) {
      float h = b[j];
      for (int p = 0; p < 4; ++p)
        h += x[i * 4 + p] * w[p][j];
      h = std::max(h, 0.f);
      s[j] = h * h;
    }
    for (int j = 0; j < 2; ++j) {
      float expected = 0;
      for (int p = 0; p < 3; ++p)
        expected += s[p] * v[j * 3 + p];
      EXPECT_NEAR(out[i * 2 + j], expected, 1e-4f * (1 + std::fabs(expected)))
          << "out[" << i << ", " << j << "]";
    }
  }

  // A failing matmul stops the run with the code the runtime looks for.
  attune_abi_device_t wrongUser = {&context, &stream, &fakeMatmul, nullptr, &fakeMark};
  calls.clear();
  EXPECT_EQ(abi->run(inputs, outputs, symbols, workspace, nullptr, &wrongUser),
            ATTUNE_ABI_DEVICE_CALL_FAILED);
  EXPECT_TRUE(calls.empty()) << "nothing runs after the failed linear";
  EXPECT_EQ(matmulOps[0].products, ATTUNE_ABI_PRODUCTS_F32);
}

/// --precision=bf16 or f16 on CUDA: every product may round its operands
/// to that type, and the library says which.
TEST_F(HostCodegenTest, CudaRoundedProductsReachTheRuntime) {
  for (auto [type, abiProducts] : {std::pair{ScalarType::BF16, ATTUNE_ABI_PRODUCTS_BF16},
                                   std::pair{ScalarType::F16, ATTUNE_ABI_PRODUCTS_F16}}) {
    SCOPED_TRACE(scalarTypeName(type));
    cuda = true;
    matmulProducts = type;
    OwningOpRef<ModuleOp> module;
    HostLoweringResult result;
    ASSERT_TRUE(lower(kCudaProducts, module, result)) << errors;
    auto llvmContext = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> llvmModule = translate(*module, *llvmContext);
    ASSERT_TRUE(llvmModule);
    JitLibrary library =
        cudaStandInLibrary(std::move(llvmModule), std::move(llvmContext), result);
    ASSERT_TRUE(library.abi);
    const attune_model_abi_t *abi = library.abi;
    int64_t symbols[1] = {2};
    std::vector<float> workspaceData(abi->workspace_size(symbols) / sizeof(float) + 16);
    auto *workspace = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(workspaceData.data()) + 63) / 64 * 64);
    std::memcpy(workspace, abi->constants, abi->constants_size);
    std::vector<float> x(8, 1.f), v(6, 1.f), out(4);
    void *inputs[2] = {x.data(), v.data()};
    void *outputs[1] = {out.data()};
    int context = 0, stream = 0;
    attune_abi_device_t device = {&context, &stream, &fakeMatmul, &matmulOps, &fakeMark};
    matmulOps.clear();
    ASSERT_EQ(abi->run(inputs, outputs, symbols, workspace, nullptr, &device), 0);
    ASSERT_EQ(matmulOps.size(), 2u);
    for (const attune_abi_matmul_t &op : matmulOps)
      EXPECT_EQ(op.products, abiProducts);
  }
}

} // namespace
