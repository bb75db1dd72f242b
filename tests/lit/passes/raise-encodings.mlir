// RUN: attune-opt %s -split-input-file -tfm-raise-encodings -verify-diagnostics | FileCheck %s

/// Hugging Face's rotate_half spelling, tables [S, D] broadcast over batch and
/// heads, dynamic sequence: one tfm.rope, base read off the frequencies.
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x?x8xf32>)
// CHECK-NEXT: %[[R:.+]] = tfm.rope %[[Q]] {tfm.raised_from = "RoPE: rotate_half"} : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_half(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %cos, %q : tensor<?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %hs, %qc : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// LLaMA-3's base (500000), frequencies rounded to f32 as PyTorch computes them;
/// positions from the hidden states [B, S, E] the projections read, offset by
/// a constant (a cache of 5 earlier tokens); tables reshaped to [1, 1, S, D],
/// the negation written as a multiply by -1.
// CHECK-LABEL: func.func @offset_base
// CHECK: %[[Q:.+]] = tfm.transpose
// CHECK-NEXT: %[[R:.+]] = tfm.rope %[[Q]] {base = 5.000000e+05 : f64, position_offset = 5 : i64, tfm.raised_from = "RoPE: rotate_half"} : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @offset_base(%x: tensor<1x?x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x2x?x8xf32> {
  %l = tfm.linear %x, %w : tensor<1x?x16xf32>, tensor<16x16xf32> -> tensor<1x?x16xf32>
  %s = tfm.reshape %l : tensor<1x?x16xf32> -> tensor<1x?x2x8xf32>
  %q = tfm.transpose %s {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x8xf32> -> tensor<1x2x?x8xf32>
  %inv = arith.constant dense<[1.0, 0.03760603070259094, 0.0014142135623842478, 5.3182957344688475e-05]> : tensor<4xf32>
  %p0 = tfm.arange %x {axis = 1 : i64, start = 2 : i64} : tensor<1x?x16xf32> -> tensor<?xf32>
  %c3 = arith.constant dense<3.0> : tensor<f32>
  %pos = tfm.add %p0, %c3 : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %cos4 = tfm.reshape %cos : tensor<?x8xf32> -> tensor<1x1x?x8xf32>
  %sin4 = tfm.reshape %sin : tensor<?x8xf32> -> tensor<1x1x?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %m1 = arith.constant dense<-1.0> : tensor<f32>
  %n = tfm.mul %m1, %x2 : tensor<f32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %cos4, %q : tensor<1x1x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin4 : tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %hs, %qc : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// GPT-NeoX's partial rotary: the first 8 of 16 dims rotated, the rest passed
/// through by a slice and a concat: one tfm.rope with rotary_dims.
// CHECK-LABEL: func.func @partial_rotary
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x?x16xf32>)
// CHECK-NEXT: %[[R:.+]] = tfm.rope %[[X]] {rotary_dims = 8 : i64, tfm.raised_from = "RoPE: partial rotary (a rotation of x{{\[}}..., :R{{\]}} joined with x{{\[}}..., R:{{\]}})"} : tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @partial_rotary(%x: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %q = tfm.slice %x {axis = 3 : i64, start = 0 : i64, end = 8 : i64} : tensor<1x2x?x16xf32> -> tensor<1x2x?x8xf32>
  %pass = tfm.slice %x {axis = 3 : i64, start = 8 : i64, end = 16 : i64} : tensor<1x2x?x16xf32> -> tensor<1x2x?x8xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %x {axis = 2 : i64} : tensor<1x2x?x16xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %qc, %hs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %y = tfm.concat %r, %pass {axis = 3 : i64} : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x16xf32>
  return %y : tensor<1x2x?x16xf32>
}

// -----

/// Frequencies scaled as llama3's rope_scaling does (the low ones divided by
/// the factor): not base^(-2i/R), so not a tfm.rope; left with a remark.
// CHECK-LABEL: func.func @scaled_frequencies
// CHECK-NOT: tfm.rope
// CHECK: tfm.cos
func.func @scaled_frequencies(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.000125]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-remark @+1 {{RoPE not raised: the inverse frequencies are not base^(-2i/R) for one base}}
  %r = tfm.add %qc, %hs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// Positions counted along another input's dynamic dim: nothing says it is the
/// rotated tensor's sequence length.
// CHECK-LABEL: func.func @other_length
// CHECK-NOT: tfm.rope
func.func @other_length(%q: tensor<1x2x?x8xf32>, %ids: tensor<1x?xi32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %ids {axis = 1 : i64} : tensor<1x?xi32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-remark @+1 {{RoPE not raised: the positions count another length than the sequence axis of the rotated tensor}}
  %r = tfm.add %qc, %hs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// cos and sin of different angles: not a rotation.
// CHECK-LABEL: func.func @different_angles
// CHECK-NOT: tfm.rope
func.func @different_angles(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %a2 = tfm.mul %a, %two : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf32>
  %sin = tfm.sin %a2 : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-remark @+1 {{RoPE not raised: the tables are not cos and sin of one angle tensor}}
  %r = tfm.add %qc, %hs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// GPT-J's rotate_every_two: every other element, negated and stacked on a new
/// last axis, flattened; sin and cos repeated pairwise (duplicate_interleave)
/// after the sin and cos: tfm.rope in the interleaved layout.
// CHECK-LABEL: func.func @rotate_every_two
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x?x8xf32>)
// CHECK-NEXT: %[[R:.+]] = tfm.rope %[[Q]] {interleaved = true, tfm.raised_from = "RoPE: rotate_every_two"} : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_every_two(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %s0 = tfm.sin %f : tensor<?x4xf32> -> tensor<?x4xf32>
  %c0 = tfm.cos %f : tensor<?x4xf32> -> tensor<?x4xf32>
  %sin = tfm.repeat_interleave %s0 {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.repeat_interleave %c0 {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %even = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %odd = tfm.slice %q {axis = 3 : i64, start = 1 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %odd : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %n1 = tfm.reshape %n : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %e1 = tfm.reshape %even : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %st = tfm.concat %n1, %e1 {axis = 4 : i64} : tensor<1x2x?x4x1xf32>, tensor<1x2x?x4x1xf32> -> tensor<1x2x?x4x2xf32>
  %rot = tfm.reshape %st : tensor<1x2x?x4x2xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %rs = tfm.mul %rot, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %qc, %rs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// The same with the angles repeated before the sin and cos.
// CHECK-LABEL: func.func @rotate_every_two_repeated_angles
// CHECK-NEXT: %[[R:.+]] = tfm.rope %{{.+}} {interleaved = true, tfm.raised_from = "RoPE: rotate_every_two"}
// CHECK-NEXT: return %[[R]]
func.func @rotate_every_two_repeated_angles(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.repeat_interleave %f {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %even = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %odd = tfm.slice %q {axis = 3 : i64, start = 1 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %odd : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %n1 = tfm.reshape %n : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %e1 = tfm.reshape %even : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %st = tfm.concat %n1, %e1 {axis = 4 : i64} : tensor<1x2x?x4x1xf32>, tensor<1x2x?x4x1xf32> -> tensor<1x2x?x4x2xf32>
  %rot = tfm.reshape %st : tensor<1x2x?x4x2xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %rs = tfm.mul %rot, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %qc, %rs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// rotate_half (split halves) with tables repeated pairwise (interleaved): the
/// layouts disagree, so it is not a rotation tfm.rope can be.
// CHECK-LABEL: func.func @mixed_layouts
// CHECK-NOT: tfm.rope
func.func @mixed_layouts(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.repeat_interleave %f {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-remark @+1 {{RoPE not raised: the tables are not cos and sin of one angle tensor concat(F, F) (the split-halves layout of rotate_half)}}
  %r = tfm.add %qc, %hs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

/// ALiBi as BLOOM-style code writes it: slopes [H, 1, 1] times j - i from two
/// aranges of one length (q's sequence axis, which is also k's here).
// CHECK-LABEL: func.func @alibi
// CHECK: %[[S:.+]] = tfm.matmul
// CHECK-NEXT: %[[B:.+]] = tfm.score_bias %[[S]] {modifier = {kind = "alibi", max_bias = 8.000000e+00 : f64}, tfm.raised_from = "ALiBi: slopes times an arange difference"} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
// CHECK-NEXT: return %[[B]]
func.func @alibi(%q: tensor<1x4x?x8xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %pq = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %pk = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %i = tfm.reshape %pq : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pk : tensor<?xf32> -> tensor<1x?xf32>
  %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %m = arith.constant dense<[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]]]> : tensor<4x1x1xf32>
  %b = tfm.mul %d, %m : tensor<?x?xf32>, tensor<4x1x1xf32> -> tensor<4x?x?xf32>
  %y = tfm.add %s, %b : tensor<1x4x?x?xf32>, tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

/// Encoder ALiBi, -m |i - j|, with 6 heads (not a power of two: the paper's
/// interleaved slopes) and max_bias 8, slopes [1, H, 1, 1].
// CHECK-LABEL: func.func @alibi_symmetric
// CHECK: tfm.score_bias %{{.+}} {modifier = {kind = "alibi", max_bias = 8.000000e+00 : f64, symmetric = true}, tfm.raised_from = "ALiBi: slopes times an arange difference"}
// CHECK-NOT: tfm.abs
func.func @alibi_symmetric(%q: tensor<1x6x?x8xf32>) -> tensor<1x6x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x6x?x8xf32>, tensor<1x6x?x8xf32> -> tensor<1x6x?x?xf32>
  %pq = tfm.arange %q {axis = 2 : i64} : tensor<1x6x?x8xf32> -> tensor<?xf32>
  %pk = tfm.arange %q {axis = 2 : i64} : tensor<1x6x?x8xf32> -> tensor<?xf32>
  %i = tfm.reshape %pq : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pk : tensor<?xf32> -> tensor<1x?xf32>
  %d0 = tfm.sub %i, %j : tensor<?x1xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %d = tfm.abs %d0 : tensor<?x?xf32> -> tensor<?x?xf32>
  %m = arith.constant dense<[[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]], [[0.5]], [[0.125]]]]> : tensor<1x6x1x1xf32>
  %b0 = tfm.mul %m, %d : tensor<1x6x1x1xf32>, tensor<?x?xf32> -> tensor<1x6x?x?xf32>
  %b = tfm.neg %b0 : tensor<1x6x?x?xf32> -> tensor<1x6x?x?xf32>
  %y = tfm.add %s, %b : tensor<1x6x?x?xf32>, tensor<1x6x?x?xf32> -> tensor<1x6x?x?xf32>
  return %y : tensor<1x6x?x?xf32>
}

// -----

/// Slopes of another sequence: an additive bias, not ALiBi.
// CHECK-LABEL: func.func @alibi_other_slopes
// CHECK-NOT: tfm.score_bias
func.func @alibi_other_slopes(%q: tensor<1x4x?x8xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %pq = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %pk = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %i = tfm.reshape %pq : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pk : tensor<?xf32> -> tensor<1x?xf32>
  %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %m = arith.constant dense<[[[0.25]], [[0.125]], [[0.0625]], [[0.03125]]]> : tensor<4x1x1xf32>
  %b = tfm.mul %d, %m : tensor<?x?xf32>, tensor<4x1x1xf32> -> tensor<4x?x?xf32>
  // expected-remark @+1 {{ALiBi not raised: head 1's slope is 0.125, not 0.0625 as in the paper's geometric sequence for 4 heads}}
  %y = tfm.add %s, %b : tensor<1x4x?x?xf32>, tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

/// q and k of independent lengths: j - i is not aligned to the end of the keys
/// as tfm's modifiers are, so it stays a bias.
// CHECK-LABEL: func.func @alibi_lengths_may_differ
// CHECK-NOT: tfm.score_bias
func.func @alibi_lengths_may_differ(%q: tensor<1x4x?x8xf32>, %k: tensor<1x4x?x8xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %pq = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %pk = tfm.arange %k {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %i = tfm.reshape %pq : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pk : tensor<?xf32> -> tensor<1x?xf32>
  %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %m = arith.constant dense<[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]]]> : tensor<4x1x1xf32>
  %b = tfm.mul %d, %m : tensor<?x?xf32>, tensor<4x1x1xf32> -> tensor<4x?x?xf32>
  // expected-remark @+1 {{ALiBi not raised: the query and key lengths may differ}}
  %y = tfm.add %s, %b : tensor<1x4x?x?xf32>, tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}
