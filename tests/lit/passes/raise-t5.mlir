// RUN: attune-opt %s -split-input-file -tfm-raise-encodings -verify-diagnostics | FileCheck %s

/// Hugging Face's T5Attention._relative_position_bucket for an encoder, written
/// as an exporter writes it (integer positions, a float log, casts), the
/// table looked up by the ids and moved to [1, H, Sq, Sk]: the t5 modifier
/// with the parameters the bucket function has.
// CHECK-LABEL: func.func @t5_encoder
// CHECK-SAME: %[[T:[^:]+]]: tensor<32x4xf32>
// CHECK: %[[S:.+]] = tfm.matmul
// CHECK-NEXT: %[[B:.+]] = tfm.score_bias %[[S]] modifier_operands(%[[T]] : tensor<32x4xf32>) {modifier = {bidirectional = true, kind = "t5", max_distance = 128 : i64, num_buckets = 32 : i64}, tfm.raised_from = "T5 bias: a table looked up by bucket ids"} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
// CHECK-NEXT: return %[[B]]
func.func @t5_encoder(%q: tensor<1x4x?x8xf32>, %table: tensor<32x4xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xi64>
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
  %y = tfm.add %s, %bias : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

/// The decoder's causal buckets, with the mask added to the position bias
/// before the scores (as Hugging Face does): the bias is raised and the mask
/// stays an add after it.
// CHECK-LABEL: func.func @t5_decoder_masked
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x1x?xf32>
// CHECK: %[[B:.+]] = tfm.score_bias %{{.+}} modifier_operands(%{{.+}} : tensor<32x4xf32>) {modifier = {bidirectional = false, kind = "t5", max_distance = 128 : i64, num_buckets = 32 : i64}, tfm.raised_from = "T5 bias: a table looked up by bucket ids"}
// CHECK-NEXT: %[[Y:.+]] = tfm.add %[[B]], %[[M]]
// CHECK-NEXT: return %[[Y]]
func.func @t5_decoder_masked(%q: tensor<1x4x?x8xf32>, %table: tensor<32x4xf32>, %mask: tensor<1x1x1x?xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xi64>
  %i = tfm.reshape %p : tensor<?xi64> -> tensor<?x1xi64>
  %j = tfm.reshape %p : tensor<?xi64> -> tensor<1x?xi64>
  %rp = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %mn = tfm.minimum %rp, %zero : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %n = tfm.neg %mn : tensor<?x?xi64> -> tensor<?x?xi64>
  %cex = arith.constant dense<16> : tensor<i64>
  %small = tfm.compare %n, %cex {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %nf = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  %cexf = arith.constant dense<16.0> : tensor<f32>
  %ratio = tfm.div %nf, %cexf : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %lg = tfm.log %ratio : tensor<?x?xf32> -> tensor<?x?xf32>
  %clog = arith.constant dense<2.0794415416798357> : tensor<f32>
  %q1 = tfm.div %lg, %clog : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %cspan = arith.constant dense<16.0> : tensor<f32>
  %q2 = tfm.mul %q1, %cspan : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %q3 = tfm.cast %q2 : tensor<?x?xf32> -> tensor<?x?xi64>
  %large = tfm.add %cex, %q3 : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %clast = arith.constant dense<31> : tensor<i64>
  %large2 = tfm.minimum %large, %clast : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %within = tfm.where %small, %n, %large2 : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %ids = tfm.add %within, %zero : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %vals = tfm.embedding %table, %ids : tensor<32x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %vt = tfm.transpose %vals {permutation = array<i64: 2, 0, 1>} : tensor<?x?x4xf32> -> tensor<4x?x?xf32>
  %bias = tfm.reshape %vt : tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  %bm = tfm.add %bias, %mask : tensor<1x4x?x?xf32>, tensor<1x1x1x?xf32> -> tensor<1x4x?x?xf32>
  %y = tfm.add %s, %bm : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

/// max_distance 256 is read off the bucket function, not off a spelling.
// CHECK-LABEL: func.func @t5_other_distance
// CHECK: max_distance = 256 : i64
func.func @t5_other_distance(%q: tensor<1x4x?x8xf32>, %table: tensor<32x4xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xi64>
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
  %clog = arith.constant dense<3.4657359027997265> : tensor<f32>
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
  %y = tfm.add %s, %bias : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

/// Ids of i + j: a table lookup by positions, but not relative.
// CHECK-LABEL: func.func @not_relative
// CHECK-NOT: tfm.score_bias
func.func @not_relative(%q: tensor<1x4x?x8xf32>, %table: tensor<32x4xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xi64>
  %i = tfm.reshape %p : tensor<?xi64> -> tensor<?x1xi64>
  %j = tfm.reshape %p : tensor<?xi64> -> tensor<1x?xi64>
  %rp = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %c8 = arith.constant dense<8> : tensor<i64>
  %ij = tfm.add %i, %j : tensor<?x1xi64>, tensor<1x?xi64> -> tensor<?x?xi64>
  %ids = tfm.minimum %ij, %c8 : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %vals = tfm.embedding %table, %ids : tensor<32x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %vt = tfm.transpose %vals {permutation = array<i64: 2, 0, 1>} : tensor<?x?x4xf32> -> tensor<4x?x?xf32>
  %bias = tfm.reshape %vt : tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  // expected-remark @+1 {{T5 bias not raised: the bucket ids are not a function of the distance j - i}}
  %y = tfm.add %s, %bias : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}
