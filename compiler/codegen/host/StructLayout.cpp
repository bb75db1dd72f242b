//===- StructLayout.cpp - C struct layouts for generated host code --------===//

#include "compiler/codegen/host/StructLayout.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace attune::codegen::host {

namespace {
uint64_t sizeOf(CField field) {
  switch (field) {
  case CField::U8:
    return 1;
  case CField::U16:
    return 2;
  case CField::I32:
    return 4;
  case CField::I64:
  case CField::F64:
  case CField::Ptr:
    return 8;
  }
  llvm_unreachable("unknown field kind");
}

Type llvmType(MLIRContext *context, CField field) {
  switch (field) {
  case CField::U8:
    return IntegerType::get(context, 8);
  case CField::U16:
    return IntegerType::get(context, 16);
  case CField::I32:
    return IntegerType::get(context, 32);
  case CField::I64:
    return IntegerType::get(context, 64);
  case CField::F64:
    return Float64Type::get(context);
  case CField::Ptr:
    return LLVM::LLVMPointerType::get(context);
  }
  llvm_unreachable("unknown field kind");
}
} // namespace

CStructLayout::CStructLayout(MLIRContext *context, ArrayRef<CField> fields) {
  SmallVector<Type> members;
  auto pad = [&](uint64_t bytes) {
    if (bytes)
      members.push_back(LLVM::LLVMArrayType::get(IntegerType::get(context, 8), bytes));
  };
  uint64_t offset = 0;
  for (CField field : fields) {
    // Scalars are naturally aligned in the C ABIs the library targets.
    uint64_t size = sizeOf(field);
    uint64_t aligned = llvm::alignTo(offset, size);
    pad(aligned - offset);
    offsets_.push_back(aligned);
    members_.push_back(members.size());
    members.push_back(llvmType(context, field));
    offset = aligned + size;
    alignment_ = std::max(alignment_, size);
  }
  size_ = llvm::alignTo(offset, alignment_);
  pad(size_ - offset); // tail padding, so arrays stride by sizeof
  type_ = LLVM::LLVMStructType::getLiteral(context, members, /*isPacked=*/true);
}

Value CStructLayout::fieldAddress(OpBuilder &builder, Location loc, Value base,
                                  unsigned field) const {
  auto ptr = LLVM::LLVMPointerType::get(builder.getContext());
  return LLVM::GEPOp::create(builder, loc, ptr, type_, base,
                             ArrayRef<LLVM::GEPArg>{0, members_[field]});
}

void CStructLayout::store(OpBuilder &builder, Location loc, Value base,
                          unsigned field, Value value) const {
  LLVM::StoreOp::create(builder, loc, value,
                        fieldAddress(builder, loc, base, field));
}

Value CStructLayout::load(OpBuilder &builder, Location loc, Value base,
                          unsigned field) const {
  return LLVM::LoadOp::create(builder, loc, fieldType(field),
                              fieldAddress(builder, loc, base, field));
}

Value CStructLayout::insert(OpBuilder &builder, Location loc, Value aggregate,
                            unsigned field, Value value) const {
  return LLVM::InsertValueOp::create(builder, loc, aggregate, value,
                                     ArrayRef<int64_t>{members_[field]});
}

CStructLayout halideDimensionLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::I32, CField::I32, CField::I32, CField::I32});
}

CStructLayout halideBufferLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::I64, CField::Ptr, CField::Ptr, CField::I64,
                                 CField::U8, CField::U8, CField::U16, CField::I32,
                                 CField::Ptr, CField::Ptr});
}

CStructLayout abiTensorLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::Ptr, CField::I32, CField::I32, CField::Ptr,
                                 CField::I64});
}

CStructLayout modelAbiLayout(MLIRContext *context) {
  return CStructLayout(
      context, {CField::I32, CField::Ptr, CField::I32, CField::Ptr, CField::I32,
                CField::Ptr, CField::I32, CField::Ptr, CField::Ptr, CField::Ptr,
                CField::Ptr, CField::Ptr, CField::Ptr, CField::Ptr, CField::I64,
                CField::I32, CField::Ptr, CField::I64, CField::Ptr, CField::Ptr,
                CField::Ptr, CField::I32, CField::Ptr, CField::I32, CField::Ptr,
                CField::I64, CField::Ptr});
}

CStructLayout abiDeviceLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::Ptr, CField::Ptr, CField::Ptr, CField::Ptr,
                                 CField::Ptr, CField::Ptr});
}

CStructLayout abiAttentionLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::Ptr, CField::Ptr, CField::Ptr, CField::I32,
                                 CField::I32, CField::I32, CField::I32, CField::I32,
                                 CField::I32, CField::Ptr, CField::I64, CField::F64,
                                 CField::F64, CField::Ptr, CField::I32, CField::I32,
                                 CField::I32, CField::I32, CField::I32, CField::I32,
                                 CField::Ptr});
}

CStructLayout abiMatmulLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::I32, CField::I32, CField::I32, CField::I32,
                                 CField::I32, CField::I32});
}

CStructLayout abiSymbolSumLayout(MLIRContext *context) {
  return CStructLayout(context, {CField::I32, CField::I32, CField::Ptr, CField::I64});
}

} // namespace attune::codegen::host
