//===- TfmDialect.cpp - tfm dialect registration --------------------------===//
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attune::tfm;

#include "dialects/tfm/TfmDialect.cpp.inc"
#include "dialects/tfm/TfmEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/tfm/TfmAttrs.cpp.inc"

void TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/tfm/TfmOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tfm/TfmAttrs.cpp.inc"
      >();
}
