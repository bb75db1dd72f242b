// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s --merge-projections --emit=mlir | FileCheck %s
// RUN: attune-compile %s --emit=mlir | FileCheck %s --check-prefix=DEFAULT
// RUN: attune-compile %s -o %t/separate.so && attune-run %t/separate.so --random-inputs --dim=batch=2 --dim=seq=37 --output=%t/separate | FileCheck %s --check-prefix=OUT
// RUN: attune-compile %s --merge-projections -o %t/merged.so && attune-run %t/merged.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference --output=%t/merged | FileCheck %s --check-prefix=REF
// RUN: cmp %t/merged/y.npy %t/separate/y.npy
// RUN: attune-compile %s --merge-projections --no-pack-weights -o %t/plain.so && attune-run %t/plain.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference --output=%t/plain | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --no-pack-weights -o %t/plain-separate.so && attune-run %t/plain-separate.so --random-inputs --dim=batch=2 --dim=seq=37 --output=%t/plain-separate | FileCheck %s --check-prefix=OUT
// RUN: cmp %t/plain/y.npy %t/plain-separate/y.npy
// RUN: attune-compile %s --merge-projections --emit=mlir -o %t/merged.mlir && attune-compile %t/merged.mlir -o %t/again.so && attune-run %t/again.so --random-inputs --dim=batch=2 --dim=seq=37 --output=%t/again | FileCheck %s --check-prefix=OUT
// RUN: cmp %t/again/y.npy %t/separate/y.npy
// RUN: attune-compile %s --merge-projections --weights-storage=external -o %t/external.so && attune-compile %s --weights=%t/external.safetensors -o %t/back.so && attune-run %t/back.so --random-inputs --dim=batch=2 --dim=seq=37 --output=%t/back | FileCheck %s --check-prefix=OUT
// RUN: cmp %t/back/y.npy %t/separate/y.npy
// RUN: attune-compile %attune_src_root/tests/models/bert-tiny --merge-projections --emit=mlir | FileCheck %s --check-prefix=BERT
// RUN: attune-compile %attune_src_root/tests/models/bert-tiny --merge-projections -o %t/bert.so && attune-run %t/bert.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF

/// tfm-merge-projections in the compiler (--merge-projections; off by
/// default). The encoder layer below projects 6 query heads and 2
/// key/value heads of 16 from one input: with the flag they are one linear
/// of 96 + 32 + 32 columns (not a multiple of the 96-column panels) whose
/// slices attention reads in place. The merged library computes every
/// column as the separate ones do, so its output is the same bit for bit,
/// with packed weights and without; it matches the reference evaluator on
/// the model as written (attune-run's default tolerance, 1e-5 + 1e-4 |ref|),
/// which finds each part's weights inside the library's merged entry. The
/// merged IR, compiled again, binds its merged weights part by part and
/// gives the same library output; so does the model as written, compiled
/// with the merged library's own weights file (--weights-storage=external),
/// whose parameters it finds inside the merged entries. A Hugging Face BERT checkpoint's q, k
/// and v (nn.Linear weights, transposed as they are read) merge per layer.

// CHECK-DAG: tfm.weight "wq|wk|wv" {part_sizes = array<i64: 96, 32, 32>, transpose} : tensor<96x160xf32, #tfm.panels<16>>
// CHECK-DAG: tfm.weight "bq|bk|bv" {part_sizes = array<i64: 96, 32, 32>, std = 5.000000e-01 : f64} : tensor<160xf32>
// CHECK-COUNT-3: tfm.slice
// CHECK: tfm.attention {{.+}} {layout = #tfm.head_layout<bshd>
// DEFAULT-NOT: part_sizes
// DEFAULT-NOT: tfm.slice

// OUT-NOT: FAIL
// OUT: wrote {{.+}}y.npy
// REF-NOT: FAIL
// REF: (|err| <= {{.+}}: ok)

// BERT-COUNT-2: tfm.weight "{{.+}}.attention.self.query.weight|{{.+}}.attention.self.key.weight|{{.+}}.attention.self.value.weight" {part_sizes = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>, transpose}

func.func @gqa_encoder(%x: tensor<?x?x96xf32> {tfm.dim_names = ["batch", "seq", "hidden"]}) -> (tensor<?x?x96xf32> {tfm.name = "y"}) {
  %wq = tfm.weight "wq" {transpose} : tensor<96x96xf32>
  %wk = tfm.weight "wk" {transpose} : tensor<96x32xf32>
  %wv = tfm.weight "wv" {transpose} : tensor<96x32xf32>
  %bq = tfm.weight "bq" {std = 0.5 : f64} : tensor<96xf32>
  %bk = tfm.weight "bk" {std = 0.5 : f64} : tensor<32xf32>
  %bv = tfm.weight "bv" {std = 0.5 : f64} : tensor<32xf32>
  %wo = tfm.weight "wo" : tensor<96x96xf32>
  %q = tfm.linear %x, %wq, %bq : tensor<?x?x96xf32>, tensor<96x96xf32>, tensor<96xf32> -> tensor<?x?x96xf32>
  %k = tfm.linear %x, %wk, %bk : tensor<?x?x96xf32>, tensor<96x32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  %v = tfm.linear %x, %wv, %bv : tensor<?x?x96xf32>, tensor<96x32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  %q4 = tfm.reshape %q : tensor<?x?x96xf32> -> tensor<?x?x6x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x6x16xf32> -> tensor<?x6x?x16xf32>
  %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  %o = tfm.attention %qh, %kh, %vh {scale = 0.25 : f64}
      : tensor<?x6x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x6x?x16xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x6x?x16xf32> -> tensor<?x?x6x16xf32>
  %m = tfm.reshape %ot : tensor<?x?x6x16xf32> -> tensor<?x?x96xf32>
  %y = tfm.linear %m, %wo : tensor<?x?x96xf32>, tensor<96x96xf32> -> tensor<?x?x96xf32>
  return %y : tensor<?x?x96xf32>
}
