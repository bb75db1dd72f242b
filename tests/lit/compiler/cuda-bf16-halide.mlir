// RUN: not attune-compile %s --target=cuda --no-kernel-cache -o %t.so 2>&1 | FileCheck %s

/// A bf16 model's element-wise kernels do not build for the GPU: Halide 21's
/// CUDA back end aborts on bf16 arithmetic. The compile runs in a child
/// process, so attune-compile reports the kernel and the target says why and
/// what to do instead.

// CHECK: attune-compile: error: cannot compile kernel 'attune_binary_bf16_add_r{{[0-9]+}}': the compiling process died of signal 6 (Aborted)
// CHECK: note: Halide 21's CUDA back end aborts on bf16 arithmetic {{.*}}; build the model in f32, with --precision=bf16 for bf16 products on the tensor cores, or in f16
func.func @f(%x: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %y = tfm.add %x, %x : tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  return %y : tensor<2x?x64xbf16>
}
