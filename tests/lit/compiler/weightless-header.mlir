// RUN: rm -rf %t && mkdir -p %t && attune-compile %s -o %t/2layer.so && FileCheck %s < %t/2layer.h && attune-compile %s --emit=host-mlir | FileCheck %s --check-prefix=HOST
// RUN: attune-compile %s -o %t/external.so --weights-storage=external && FileCheck %s --check-prefix=EXTERNAL < %t/external.h
// RUN: python3 -c "import os, sys; print('exists' if os.path.exists(sys.argv[1]) else 'absent')" %t/external.safetensors | FileCheck %s --check-prefix=ABSENT

/// The header guard is an identifier whatever the output is called: a name
/// that starts with a digit still gives a valid macro. A model without
/// weights embeds none, says so in its header, and its host code never
/// references the weights symbol. (Patterns use {{...}} so that they cannot
/// match their own text in the embedded source IR.)

// CHECK: * Weights: none.
// CHECK: #ifndef ATTUNE_2LAYER_H
// CHECK-NEXT: #define ATTUNE_2LAYER_H
// CHECK: #endif /* ATTUNE_2LAYER_H */

// HOST-NOT: attune_{{weights}}_data
// HOST: llvm.func @{{attune_model_abi}}()
// HOST-NOT: attune_{{weights}}_data

/// With --weights-storage=external there is nothing to keep outside either:
/// no weights file is written.
// EXTERNAL: * Weights: none.
// ABSENT: absent

func.func @weightless(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %y = tfm.softmax %x {axis = -1 : i64} : tensor<?x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
