// RUN: attune-opt %s -split-input-file -tfm-raise-encodings -tfm-fuse-attention | FileCheck %s

/// A LLaMA-style block as an exporter writes it: q and k projected from the
/// hidden states, rotated by rotate_half with cos/sin tables computed from an
/// arange of the sequence, causal. The rotations are raised to tfm.rope, and
/// fusion folds both into tfm.attention's `rope`: no table, no rotation op,
/// no score tensor is left.
// CHECK-LABEL: func.func @llama_style
// CHECK-NOT: tfm.cos
// CHECK-NOT: tfm.rope
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, rope = {base = 1.000000e+04 : f64, rotary_dims = 8 : i64}, scale = 0.35355338454246521 : f64}
// CHECK-NOT: tfm.softmax
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

// -----

/// ALiBi as BLOOM computes it, slopes times j - i of aranges over the hidden
/// states' sequence, added after the scale, with a causal where: raised to
/// the alibi modifier and fused.
// CHECK-LABEL: func.func @alibi_style
// CHECK-NOT: tfm.arange
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, modifiers = [{kind = "alibi", max_bias = 8.000000e+00 : f64}], scale = 0.35355338454246521 : f64}
// CHECK-NOT: tfm.softmax
func.func @alibi_style(%x: tensor<1x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>) -> tensor<1x4x?x8xf32> {
  %ql = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %qs4 = tfm.reshape %ql : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %q = tfm.transpose %qs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %kl = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %ks4 = tfm.reshape %kl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %k = tfm.transpose %ks4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %vl = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %vs4 = tfm.reshape %vl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %v = tfm.transpose %vs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<0.353553385> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %pos = tfm.arange %x {axis = 1 : i64} : tensor<1x?x32xf32> -> tensor<?xf32>
  %i = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pos : tensor<?xf32> -> tensor<1x?xf32>
  %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %sl = arith.constant dense<[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]]]> : tensor<4x1x1xf32>
  %b = tfm.mul %sl, %d : tensor<4x1x1xf32>, tensor<?x?xf32> -> tensor<4x?x?xf32>
  %u = tfm.add %t, %b : tensor<1x4x?x?xf32>, tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %u : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  return %o : tensor<1x4x?x8xf32>
}

// -----

/// A T5 encoder's attention as Hugging Face writes it: no scale, the
/// bucketed position bias plus the padding mask added to the scores. The
/// bias is raised to the t5 modifier and fused; the mask stays additive.
// CHECK-LABEL: func.func @t5_style
// CHECK-NOT: tfm.embedding
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x1x?xf32>) modifier_operands(%{{.+}} : tensor<32x4xf32>) {modifiers = [{bidirectional = true, kind = "t5", max_distance = 128 : i64, num_buckets = 32 : i64}], scale = 1.000000e+00 : f64}
// CHECK-NOT: tfm.softmax
func.func @t5_style(%x: tensor<1x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %table: tensor<32x4xf32>, %mask: tensor<1x1x1x?xf32>) -> tensor<1x4x?x8xf32> {
  %ql = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %qs4 = tfm.reshape %ql : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %q = tfm.transpose %qs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %kl = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %ks4 = tfm.reshape %kl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %k = tfm.transpose %ks4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %vl = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %vs4 = tfm.reshape %vl : tensor<1x?x32xf32> -> tensor<1x?x4x8xf32>
  %v = tfm.transpose %vs4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x8xf32> -> tensor<1x4x?x8xf32>
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %x {axis = 1 : i64} : tensor<1x?x32xf32> -> tensor<?xi64>
  %i = tfm.reshape %p : tensor<?xi64> -> tensor<?x1xi64>
  %j = tfm.reshape %p : tensor<?xi64> -> tensor<1x?xi64>
  %rp = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %after = tfm.compare %rp, %zero {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %afteri = tfm.cast %after : tensor<?x?xi1> -> tensor<?x?xi64>
  %cside = arith.constant dense<16> : tensor<i64>
  %off = tfm.mul %afteri, %cside : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %n = tfm.abs %rp : tensor<?x?xi64> -> tensor<?x?xi64>
  %cex = arith.constant dense<8> : tensor<i64>
  %small = tfm.compare %n, %cex {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %nf = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  %cexf = arith.constant dense<8.0> : tensor<f32>
  %ratio = tfm.div %nf, %cexf : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %lg = tfm.log %ratio : tensor<?x?xf32> -> tensor<?x?xf32>
  %clog = arith.constant dense<2.772588722239781> : tensor<f32>
  %q1 = tfm.div %lg, %clog : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %cspan = arith.constant dense<8.0> : tensor<f32>
  %q2 = tfm.mul %q1, %cspan : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %q3 = tfm.cast %q2 : tensor<?x?xf32> -> tensor<?x?xi64>
  %large = tfm.add %cex, %q3 : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %clast = arith.constant dense<15> : tensor<i64>
  %large2 = tfm.minimum %large, %clast : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %within = tfm.where %small, %n, %large2 : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %ids = tfm.add %off, %within : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %vals = tfm.embedding %table, %ids : tensor<32x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %vt = tfm.transpose %vals {permutation = array<i64: 2, 0, 1>} : tensor<?x?x4xf32> -> tensor<4x?x?xf32>
  %bias = tfm.reshape %vt : tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  %bm = tfm.add %bias, %mask : tensor<1x4x?x?xf32>, tensor<1x1x1x?xf32> -> tensor<1x4x?x?xf32>
  %y = tfm.add %s, %bm : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %pr = tfm.softmax %y {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %pr, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  return %o : tensor<1x4x?x8xf32>
}
