// bf16 attention: q, k, v and the output bf16, f32 arithmetic. On a CPU
// with AMX (the avx512_spr variant) a plain or causal one runs on AMX tiles
// (runtime/model/amx_kernels.c), its probabilities rounded to bf16 for
// the second product; elsewhere the Halide kernel widens to f32. Either
// way attune-run checks a bf16 output by relative L2 error: measured 2.0e-3
// on AMX and 1.6e-3 in f32 (Intel Xeon, Sapphire Rapids), against a bf16
// output's own rounding of about 2^-9 = 2e-3.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s -o %t/attn.so
// RUN: attune-run %t/attn.so --random-inputs --check-reference --l2-tol=5e-3 | FileCheck %s
// RUN: not attune-run %t/attn.so --random-inputs --check-reference --l2-tol=1e-4 | FileCheck %s --check-prefix=TIGHT
//
// f32 tensors with --precision=bf16: the attention gets bf16 products (on
// AMX where there is AMX, f32 elsewhere); measured rel L2 3.6e-3 at S=2048.
// A library whose only bf16 arithmetic is attention is checked
// elementwise unless --l2-tol is given.
// RUN: attune-compile %S/Inputs/attention-f32.mlir --precision=bf16 --emit=mlir | FileCheck %s --check-prefix=IR
// RUN: attune-compile %S/Inputs/attention-f32.mlir --precision=bf16 -o %t/f32.so
// RUN: attune-run %t/f32.so --random-inputs --check-reference --l2-tol=1e-2 | FileCheck %s --check-prefix=F32

// CHECK: reference 'plain': {{.*}} (bf16 output, rel l2 err <= 0.005: ok)
// CHECK: reference 'causal_gqa': {{.*}} (bf16 output, rel l2 err <= 0.005: ok)
// TIGHT: (bf16 output, rel l2 err <= 0.0001: FAIL)
// IR: tfm.attention {{.*}}product_type = bf16
// F32: reference 'o': {{.*}} (rel l2 err <= 0.01: ok)

func.func @attn(%q: tensor<2x4x300x128xbf16> {tfm.name = "q"},
                %k: tensor<2x4x129x128xbf16> {tfm.name = "k"},
                %v: tensor<2x4x129x64xbf16> {tfm.name = "v"},
                %k2: tensor<2x2x129x128xbf16> {tfm.name = "k2"},
                %v2: tensor<2x2x129x64xbf16> {tfm.name = "v2"})
    -> (tensor<2x4x300x64xbf16> {tfm.name = "plain"},
        tensor<2x4x300x64xbf16> {tfm.name = "causal_gqa"}) {
  %0 = tfm.attention %q, %k, %v {scale = 0.088388 : f64}
      : tensor<2x4x300x128xbf16>, tensor<2x4x129x128xbf16>, tensor<2x4x129x64xbf16> -> tensor<2x4x300x64xbf16>
  %1 = tfm.attention %q, %k2, %v2 {scale = 0.088388 : f64, causal = true}
      : tensor<2x4x300x128xbf16>, tensor<2x2x129x128xbf16>, tensor<2x2x129x64xbf16> -> tensor<2x4x300x64xbf16>
  return %0, %1 : tensor<2x4x300x64xbf16>, tensor<2x4x300x64xbf16>
}
