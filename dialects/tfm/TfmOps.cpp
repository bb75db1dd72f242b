//===- TfmOps.cpp - tfm op verifiers and shape inference ------------------===//
#include "dialects/tfm/TfmOps.h"

using namespace mlir;
using namespace attune::tfm;

#define GET_OP_CLASSES
#include "dialects/tfm/TfmOps.cpp.inc"
