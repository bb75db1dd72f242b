// A decoder step with its cache inside the model: the past keys and values
// joined with the new ones by tfm.concat along a dynamic axis. The joined
// length is a symbol the library computes from the input shapes, (past+seq);
// the new rows are copied in at offset past. Checked against the reference
// evaluator at a few lengths (the query block sits at the end of the keys).

// RUN: attune-compile %s --entry=decode -o %t.so --dump-phases-to=%t.phases
// RUN: cat %t.phases/*memory-plan* | FileCheck %s --check-prefix=PLAN
// PLAN: symbols: seq past (past+seq)
// RUN: attune-run %t.so --dim=seq=1 --dim=past=7 --random-inputs --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-run %t.so --dim=seq=5 --dim=past=40 --random-inputs --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-run %t.so --dim=seq=3 --dim=past=1 --random-inputs --check-reference | FileCheck %s --check-prefix=REF
// REF: output 'present_k' f32[1x2x{{8|45|4}}x16]
// REF-COUNT-3: reference '{{out|present_k|present_v}}': {{.*}}: ok)

/// Where an input dimension gives the joined length as well (the mask's
/// key axis, `total`), the two must agree when the library runs.
// RUN: attune-compile %s --entry=masked -o %t-masked.so
// RUN: attune-run %t-masked.so --dim=seq=3 --dim=past=5 --dim=total=8 --random-inputs --check-reference | FileCheck %s --check-prefix=REF
// RUN: not attune-run %t-masked.so --dim=seq=3 --dim=past=5 --dim=total=7 --random-inputs 2>&1 | FileCheck %s --check-prefix=DISAGREE
// DISAGREE: error: {{.*}}the inputs give total = 7, but it is the joined length past (5) + seq (3) = 8

/// Two dynamic operands before the last: the last one's offset would be a
/// sum of two symbols, which code generation does not take.
// RUN: not attune-compile %s --entry=three -o %t-three.so 2>&1 | FileCheck %s --check-prefix=THREE
// THREE: error: 'tfm.concat' op expected the operands before 'inputs #2' to have static joined dims 0, or to be one operand

module {
  func.func @decode(%q: tensor<1x4x?x16xf32> {tfm.name = "q", tfm.dim_names = ["", "", "seq", ""]},
                    %k: tensor<1x2x?x16xf32> {tfm.name = "k", tfm.dim_names = ["", "", "seq", ""]},
                    %v: tensor<1x2x?x16xf32> {tfm.name = "v", tfm.dim_names = ["", "", "seq", ""]},
                    %pk: tensor<1x2x?x16xf32> {tfm.name = "past_k", tfm.dim_names = ["", "", "past", ""]},
                    %pv: tensor<1x2x?x16xf32> {tfm.name = "past_v", tfm.dim_names = ["", "", "past", ""]})
      -> (tensor<1x4x?x16xf32> {tfm.name = "out"}, tensor<1x2x?x16xf32> {tfm.name = "present_k"},
          tensor<1x2x?x16xf32> {tfm.name = "present_v"}) {
    %kk = tfm.concat %pk, %k {axis = 2 : i64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    %vv = tfm.concat %pv, %v {axis = 2 : i64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    %o = tfm.attention %q, %kk, %vv {causal = true, scale = 0.25 : f64} : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
    return %o, %kk, %vv : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  }

  func.func @masked(%q: tensor<1x4x?x16xf32> {tfm.name = "q", tfm.dim_names = ["", "", "seq", ""]},
                    %k: tensor<1x2x?x16xf32> {tfm.name = "k", tfm.dim_names = ["", "", "seq", ""]},
                    %v: tensor<1x2x?x16xf32> {tfm.name = "v", tfm.dim_names = ["", "", "seq", ""]},
                    %pk: tensor<1x2x?x16xf32> {tfm.name = "past_k", tfm.dim_names = ["", "", "past", ""]},
                    %pv: tensor<1x2x?x16xf32> {tfm.name = "past_v", tfm.dim_names = ["", "", "past", ""]},
                    %m: tensor<?x?xf32> {tfm.name = "mask", tfm.dim_names = ["seq", "total"]})
      -> (tensor<1x4x?x16xf32> {tfm.name = "out"}, tensor<1x2x?x16xf32> {tfm.name = "present_k"},
          tensor<1x2x?x16xf32> {tfm.name = "present_v"}) {
    %kk = tfm.concat %pk, %k {axis = 2 : i64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    %vv = tfm.concat %pv, %v {axis = 2 : i64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    %o = tfm.attention %q, %kk, %vv mask(%m : tensor<?x?xf32>) {scale = 0.25 : f64} : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
    return %o, %kk, %vv : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  }

  func.func @three(%a: tensor<?x4xf32> {tfm.name = "a", tfm.dim_names = ["n", ""]},
                   %b: tensor<?x4xf32> {tfm.name = "b", tfm.dim_names = ["m", ""]})
      -> (tensor<?x4xf32> {tfm.name = "out"}) {
    %r = tfm.concat %a, %b, %a {axis = 0 : i64} : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}
