// RUN: attune-compile %s -o %t.so
// RUN: attune-run %t.so --random-inputs --dim seq=9 --check-reference | FileCheck %s --check-prefix=OK
// RUN: not attune-run %t.so --random-inputs --dim seq=17 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: attune-compile %s --no-fuse-attention -o %t.unfused.so
// RUN: not attune-run %t.unfused.so --random-inputs --dim seq=17 2>&1 | FileCheck %s --check-prefix=LONG

/// Transformer-XL's r has rows for distances up to max_distance (15 here),
/// so the library takes at most 16 keys, fused or not, and says so rather
/// than reading the nearest row for longer distances.

// OK: reference 'out': max abs err {{.*}}: ok)
// LONG: seq = 17 exceeds the model's maximum 16

func.func @xl(%q: tensor<1x2x?x16xf32> {tfm.name = "q", tfm.dim_names = ["", "", "seq", ""]},
              %k: tensor<1x2x?x16xf32> {tfm.name = "k", tfm.dim_names = ["", "", "seq", ""]},
              %v: tensor<1x2x?x16xf32> {tfm.name = "v", tfm.dim_names = ["", "", "seq", ""]})
    -> (tensor<1x2x?x16xf32> {tfm.name = "out"}) {
  %u = tfm.weight "u" {std = 1.0 : f64} : tensor<2x16xf32>
  %w = tfm.weight "w" {std = 1.0 : f64} : tensor<2x16xf32>
  %r = tfm.weight "r" {std = 1.0 : f64} : tensor<16x2x16xf32>
  %o = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<2x16xf32>, tensor<2x16xf32>, tensor<16x2x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 15 : i64}]}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
