// RUN: not attune-compile %s --target=tpu -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not attune-compile %s --target=cuda --cuda-arch=sm_70 -o %t.so 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not attune-compile %s --target=cuda --cuda-arch=hopper -o %t.so 2>&1 | FileCheck %s --check-prefix=ARCHNAME
// RUN: not attune-compile %s --target=cuda --cpu-features=avx2-fma -o %t.so 2>&1 | FileCheck %s --check-prefix=CUDAFEATURES
// RUN: not attune-compile %s --emit=exe 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not attune-compile %s --emit=lib 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: not attune-compile %s --emit=mlir --weights=%t.does-not-exist.safetensors 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// RUN: not attune-compile %s --emit=mlir --weights=%S/Inputs/wrong_shape.safetensors 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not attune-compile %t.no-such-model.mlir --emit=mlir 2>&1 | FileCheck %s --check-prefix=NOINPUT
// RUN: not attune-compile %s -o %t.missing-dir/libm.so 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not attune-compile %s --emit=mlir --cpu-features='avx2;rm' 2>&1 | FileCheck %s --check-prefix=FEATURES

/// Bad flags and bad weights files are one clear error line each.

// TARGET: attune-compile: error: unknown --target value 'tpu', expected cpu or cuda
// ARCH: attune-compile: error: invalid --cuda-arch: CUDA compute capability 70 is not one Halide 21 generates code for: expected 80 (sm_80, which also runs on sm_89 and sm_90 GPUs) or 86
// ARCHNAME: attune-compile: error: invalid --cuda-arch 'hopper', expected sm_80 or sm_86
// CUDAFEATURES: attune-compile: error: --cpu-features applies to --target=cpu, not to --target=cuda
// EMIT: attune-compile: error: unknown --emit value 'exe', expected one of input, mlir, host-mlir, llvm, obj, lib
// NOOUT: attune-compile: error: --emit=lib needs an output file (-o FILE)
// NOWEIGHTS: attune-compile: error: cannot bind weights from '{{.*}}does-not-exist.safetensors': cannot open weights file '{{.*}}does-not-exist.safetensors': {{[Nn]}}o such file or directory
// SHAPE: attune-compile: error: cannot bind weights from '{{.*}}wrong_shape.safetensors': {{.*}}w{{.*}}
// NODIR: attune-compile: error: output directory '{{.*}}missing-dir' does not exist
// FEATURES: attune-compile: error: invalid --cpu-features entry 'avx2;rm', expected a Halide feature list such as avx2-fma-f16c
// NOINPUT: attune-compile: error: cannot read '{{.*}}no-such-model.mlir'

func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = tfm.weight "w" : tensor<4xf32>
  %y = tfm.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
