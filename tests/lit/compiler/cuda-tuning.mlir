// RUN: attune-compile %s --target=cuda --emit=host-mlir -o /dev/null --verbose 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: attune-compile %s --target=cuda --emit=host-mlir -o /dev/null --verbose --cuda-arch=sm_86 2>&1 | FileCheck %s --check-prefix=SM86
// RUN: attune-compile %s --target=cuda --no-kernel-cache -o %t.so --verbose --tuning=%S/Inputs/tuning-cuda.json 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not attune-compile %s --target=cuda --no-kernel-cache -o %t.bad.so --tuning=%S/Inputs/tuning-cuda-bad-param.json 2>&1 | FileCheck %s --check-prefix=PARAM
// RUN: sed 's/"blocks_per_sm": 4/"blocks_per_sm": 17/' %S/Inputs/tuning-cuda.json > %t.17.json
// RUN: not attune-compile %s --target=cuda --no-kernel-cache -o %t.17.so --tuning=%t.17.json 2>&1 | FileCheck %s --check-prefix=RANGE

/// The tuning database's GPU section: --target=cuda looks up each kernel at
/// the architectures its fatbin carries (--cuda-arch, sm_80 by default, and
/// sm_90), never at the CPU's ISA levels.
/// The shipped database holds the fused attention's blocks per SM measured
/// on an H200 (bench64: ptxas's own choice, 0). (Patterns use {{...}} so
/// that they cannot match their own text in the embedded source IR.)

// DEFAULT: attune-compile: tuning attune_{{attention}}_bf16_d64_{{.*}} attention_bf16_d64: sm_80 formula, sm_90 {blocks_per_sm=0}
// SM86: attune-compile: tuning attune_{{attention}}_bf16_d64_{{.*}} attention_bf16_d64: sm_86 formula, sm_90 {blocks_per_sm=0}
// FILE: attune-compile: tuning attune_{{attention}}_bf16_d64_{{.*}} attention_bf16_d64: sm_80 {blocks_per_sm=2}, sm_90 {blocks_per_sm=4}
// FILE: attune-compile: 1 kernels + runtime + support code: 3 compiled

/// The entry's value reaches the kernel generator, which refuses one out of
/// range; a parameter the GPU kernel does not read is an error naming the
/// entry.
// RANGE: attune-compile: error: cannot compile kernel 'attune_{{attention}}_bf16_d64_{{.*}}': no GPU attention kernel for it: blocks per SM 17 for sm_90
// PARAM: attune-compile: error: cannot compile kernel 'attune_{{attention}}_bf16_d64_{{.*}}': its tuning entry for sm_90: unknown tuning parameter 'query_tile' (the GPU attention kernel reads blocks_per_sm)
func.func @block(%q: tensor<1x4x?x64xbf16>, %k: tensor<1x4x?x64xbf16>, %v: tensor<1x4x?x64xbf16>) -> tensor<1x4x?x64xbf16> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16> -> tensor<1x4x?x64xbf16>
  return %o : tensor<1x4x?x64xbf16>
}
