// RUN: attune-compile %s --emit=llvm | FileCheck %s --check-prefix=LLVM && attune-compile %s --emit=obj -o %t.o && llvm-nm %t.o | FileCheck %s --check-prefix=OBJ

/// --emit=llvm prints the optimised LLVM IR of the host code and --emit=obj
/// writes its object: the descriptor is defined there, the kernels and the
/// weights are references the link resolves. (Patterns use {{...}} so that
/// they cannot match their own text in the embedded source IR.)

// LLVM-DAG: define {{.*}}ptr @{{attune_model_abi}}()
// LLVM-DAG: declare i32 @attune_{{softmax}}_f32(ptr, ptr)

// OBJ-DAG: U attune_softmax_f32
// OBJ-DAG: U attune_weights_data
// OBJ-DAG: T attune_model_abi
func.func @scaled_softmax(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %w = tfm.weight "w" : tensor<16xf32>
  %y = tfm.mul %x, %w : tensor<?x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %p = tfm.softmax %y {axis = -1 : i64} : tensor<?x16xf32> -> tensor<?x16xf32>
  return %p : tensor<?x16xf32>
}
