// RUN: attune-compile %s --emit=mlir -o %t.mlir --fusion-report=%t.json --verbose 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t.json
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=IR

/// The fusion report says which exporter-written encodings became attune's
/// ops and why the others did not: a rotate_half RoPE with llama3-scaled
/// frequencies is not tfm.rope, stays element-wise ops around a fused
/// attention, and the report and a remark say why; the plain one is raised
/// and folded into the attention.

// REMARK: remark: RoPE not raised: the inverse frequencies are not base^(-2i/R) for one base

// CHECK-DAG: "encoding": "RoPE",
// CHECK-DAG: "raised": false,
// CHECK-DAG: "reason": "the inverse frequencies are not base^(-2i/R) for one base
// CHECK-DAG: "from": "rotate_half",
// CHECK-DAG: "raised": true
// CHECK-DAG: "fused": 2,

// IR-LABEL: func.func @scaled_rope
// IR: tfm.cos
// IR: tfm.attention
// IR-NOT: rope =
// IR-LABEL: func.func @llama_style
// IR-NOT: tfm.cos
// IR: tfm.attention {{.+}} rope = {base = 1.000000e+04 : f64, rotary_dims = 8 : i64}

func.func @scaled_rope(%x: tensor<1x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>) -> tensor<1x4x?x8xf32> {
  %ql = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %qs4 = tfm.reshape %ql : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %q = tfm.transpose %qs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %kl = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %ks4 = tfm.reshape %kl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %k = tfm.transpose %ks4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %vl = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %vs4 = tfm.reshape %vl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %v = tfm.transpose %vs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.000125]> : tensor<4xf32>
  %pos = tfm.arange %x {axis = 1 : i64} : tensor<1x?x32xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %a4 = tfm.reshape %a : tensor<?x8xf32> -> tensor<1x1x?x8xf32>
  %cos = tfm.cos %a4 : tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  %sin = tfm.sin %a4 : tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  %qq1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %qq2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %qqn = tfm.neg %qq2 : tensor<1x4x?x4xf32> -> tensor<1x4x?x4xf32>
  %qqh = tfm.concat %qqn, %qq1 {axis = 3 : i64} : tensor<1x4x?x4xf32>, tensor<1x4x?x4xf32> -> tensor<1x4x?x8xf32>
  %qqc = tfm.mul %q, %cos : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %qqs = tfm.mul %qqh, %sin : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %qqr = tfm.add %qqc, %qqs : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %kk1 = tfm.slice %k {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %kk2 = tfm.slice %k {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %kkn = tfm.neg %kk2 : tensor<1x4x?x4xf32> -> tensor<1x4x?x4xf32>
  %kkh = tfm.concat %kkn, %kk1 {axis = 3 : i64} : tensor<1x4x?x4xf32>, tensor<1x4x?x4xf32> -> tensor<1x4x?x8xf32>
  %kkc = tfm.mul %k, %cos : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %kks = tfm.mul %kkh, %sin : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %kkr = tfm.add %kkc, %kks : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %s = tfm.matmul %qqr, %kkr {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<0.353553385> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  return %o : tensor<1x4x?x8xf32>
}

func.func @llama_style(%x: tensor<1x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>) -> tensor<1x4x?x8xf32> {
  %ql = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %qs4 = tfm.reshape %ql : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %q = tfm.transpose %qs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %kl = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %ks4 = tfm.reshape %kl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %k = tfm.transpose %ks4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %vl = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %vs4 = tfm.reshape %vl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %v = tfm.transpose %vs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %x {axis = 1 : i64} : tensor<1x?x32xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %a4 = tfm.reshape %a : tensor<?x8xf32> -> tensor<1x1x?x8xf32>
  %cos = tfm.cos %a4 : tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  %sin = tfm.sin %a4 : tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  %qq1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %qq2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %qqn = tfm.neg %qq2 : tensor<1x4x?x4xf32> -> tensor<1x4x?x4xf32>
  %qqh = tfm.concat %qqn, %qq1 {axis = 3 : i64} : tensor<1x4x?x4xf32>, tensor<1x4x?x4xf32> -> tensor<1x4x?x8xf32>
  %qqc = tfm.mul %q, %cos : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %qqs = tfm.mul %qqh, %sin : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %qqr = tfm.add %qqc, %qqs : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %kk1 = tfm.slice %k {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %kk2 = tfm.slice %k {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  %kkn = tfm.neg %kk2 : tensor<1x4x?x4xf32> -> tensor<1x4x?x4xf32>
  %kkh = tfm.concat %kkn, %kk1 {axis = 3 : i64} : tensor<1x4x?x4xf32>, tensor<1x4x?x4xf32> -> tensor<1x4x?x8xf32>
  %kkc = tfm.mul %k, %cos : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %kks = tfm.mul %kkh, %sin : tensor<1x4x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x4x?x8xf32>
  %kkr = tfm.add %kkc, %kks : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %s = tfm.matmul %qqr, %kkr {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<0.353553385> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  return %o : tensor<1x4x?x8xf32>
}
