// RUN: attune-opt %s -split-input-file -verify-diagnostics

/// Every diagnostic of the tfm verifiers, one case each. Shape checks only
/// fire on static dims; a `?` is checked by the runtime.

/// Weights are read from a file: their shape must be known.
func.func @negative_weight_dynamic_shape() {
  // expected-error @+1 {{expected 'result' to have a static shape, got 'tensor<?x4xf32>'}}
  %0 = tfm.weight "w" : tensor<?x4xf32>
  return
}

// -----

/// The name is the key into the weights file.
func.func @negative_weight_empty_name() {
  // expected-error @+1 {{expected a non-empty 'name'}}
  %0 = tfm.weight "" : tensor<4xf32>
  return
}

// -----

func.func @negative_weight_negative_std() {
  // expected-error @+1 {{expected 'std' >= 0, got -1}}
  %0 = tfm.weight "w" {std = -1.0 : f64} : tensor<4xf32>
  return
}

// -----

/// `transpose` swaps the two dims of nn.Linear's [out, in]; other ranks
/// would need a permutation.
func.func @negative_weight_transpose_rank() {
  // expected-error @+1 {{expected 'result' rank 2 with 'transpose', got 3}}
  %0 = tfm.weight "w" {transpose} : tensor<2x3x4xf32>
  return
}

// -----

/// A merged weight (tfm-merge-projections) names one part per size.
func.func @negative_weight_parts_count() {
  // expected-error @+1 {{expected 'name' to list as many parts, separated by '|', as 'part_sizes' has (at least 2), got 2 and 3}}
  %0 = tfm.weight "q|k" {part_sizes = array<i64: 2, 2, 2>} : tensor<4x6xf32>
  return
}

// -----

func.func @negative_weight_one_part() {
  // expected-error @+1 {{expected 'name' to list as many parts, separated by '|', as 'part_sizes' has (at least 2), got 1 and 1}}
  %0 = tfm.weight "q" {part_sizes = array<i64: 6>} : tensor<4x6xf32>
  return
}

// -----

func.func @negative_weight_parts_sum() {
  // expected-error @+1 {{expected 'part_sizes' to sum to the last dimension, 6, got 5}}
  %0 = tfm.weight "q|k" {part_sizes = array<i64: 2, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @negative_weight_part_size() {
  // expected-error @+1 {{expected 'part_sizes' >= 1, got 0}}
  %0 = tfm.weight "q|k" {part_sizes = array<i64: 6, 0>} : tensor<4x6xf32>
  return
}

// -----

/// A part's name is followed by its extent after '#' in the blob key.
func.func @negative_weight_part_name() {
  // expected-error @+1 {{expected each part's name non-empty and without '#', got 'k#1'}}
  %0 = tfm.weight "q|k#1" {part_sizes = array<i64: 3, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @negative_weight_part_empty() {
  // expected-error @+1 {{expected each part's name non-empty and without '#', got ''}}
  %0 = tfm.weight "q||k" {part_sizes = array<i64: 2, 2, 2>} : tensor<4x6xf32>
  return
}

// -----

func.func @negative_embedding_table_rank(%t: tensor<2x3x4xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{expected 'table' rank 2, got 3}}
  %0 = tfm.embedding %t, %i : tensor<2x3x4xf32>, tensor<?xi32> -> tensor<?x4xf32>
  return
}

// -----

/// The result is ids.shape + [D]; a declared type that disagrees is diagnosed.
func.func @negative_embedding_result(%t: tensor<100x64xf32>, %i: tensor<?x?xi32>) {
  // expected-error @+1 {{expected result type 'tensor<?x?x64xf32>' (inferred from the operands), got 'tensor<?x64xf32>'}}
  %0 = tfm.embedding %t, %i : tensor<100x64xf32>, tensor<?x?xi32> -> tensor<?x64xf32>
  return
}

// -----

func.func @negative_learned_position_input_rank(%x: tensor<8x64xf32>, %t: tensor<16x64xf32>) {
  // expected-error @+1 {{expected 'input' rank 3, got 2}}
  %0 = tfm.learned_position %x, %t : tensor<8x64xf32>, tensor<16x64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @negative_learned_position_table_rank(%x: tensor<2x8x64xf32>, %t: tensor<64xf32>) {
  // expected-error @+1 {{expected 'table' rank 2, got 1}}
  %0 = tfm.learned_position %x, %t : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  return
}

// -----

func.func @negative_learned_position_model_dim(%x: tensor<?x?x768xf32>, %t: tensor<1024x512xf32>) {
  // expected-error @+1 {{expected 'table' dim 1 (model dim) to be 768 as in 'input', got 512}}
  %0 = tfm.learned_position %x, %t : tensor<?x?x768xf32>, tensor<1024x512xf32> -> tensor<?x?x768xf32>
  return
}

// -----

/// A static sequence longer than the table has no positions to add.
func.func @negative_learned_position_too_long(%x: tensor<1x2048x64xf32>, %t: tensor<1024x64xf32>) {
  // expected-error @+1 {{expected 'input' sequence length (dim 1) <= 1024 (the positions of 'table'), got 2048}}
  %0 = tfm.learned_position %x, %t : tensor<1x2048x64xf32>, tensor<1024x64xf32> -> tensor<1x2048x64xf32>
  return
}

// -----

func.func @negative_learned_position_element_type(%x: tensor<1x8x64xf32>, %t: tensor<16x64xf16>) {
  // expected-error @+1 {{expected 'table' element type 'f32' as in 'input', got 'f16'}}
  %0 = tfm.learned_position %x, %t : tensor<1x8x64xf32>, tensor<16x64xf16> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_sinusoidal_rank(%x: tensor<8x64xf32>) {
  // expected-error @+1 {{expected 'input' rank 3, got 2}}
  %0 = tfm.sinusoidal_position %x : tensor<8x64xf32> -> tensor<8x64xf32>
  return
}

// -----

/// Both forms take the logarithm of the timescales.
func.func @negative_sinusoidal_min_timescale(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected 'min_timescale' > 0, got 0}}
  %0 = tfm.sinusoidal_position %x {form = #tfm.sinusoidal_form<concat>, min_timescale = 0.0 : f64} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_sinusoidal_max_timescale(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected 'max_timescale' > 0, got -1}}
  %0 = tfm.sinusoidal_position %x {max_timescale = -1.0 : f64} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_sinusoidal_result(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x8x64xf32>' (inferred from the operands), got 'tensor<1x8x32xf32>'}}
  %0 = tfm.sinusoidal_position %x : tensor<1x8x64xf32> -> tensor<1x8x32xf32>
  return
}

// -----

func.func @negative_multiplicative_position_input_rank(%x: tensor<8x64xf32>, %t: tensor<16x64xf32>) {
  // expected-error @+1 {{expected 'input' rank 3, got 2}}
  %0 = tfm.multiplicative_position %x, %t : tensor<8x64xf32>, tensor<16x64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_table_rank(%x: tensor<2x8x64xf32>, %t: tensor<64xf32>) {
  // expected-error @+1 {{expected 'table' rank 2, got 1}}
  %0 = tfm.multiplicative_position %x, %t : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_model_dim(%x: tensor<?x?x768xf32>, %t: tensor<1024x512xf32>) {
  // expected-error @+1 {{expected 'table' dim 1 (model dim) to be 768 as in 'input', got 512}}
  %0 = tfm.multiplicative_position %x, %t : tensor<?x?x768xf32>, tensor<1024x512xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @negative_multiplicative_position_too_long(%x: tensor<1x2048x64xf32>, %t: tensor<1024x64xf32>) {
  // expected-error @+1 {{expected 'input' sequence length (dim 1) <= 1024 (the positions of 'table'), got 2048}}
  %0 = tfm.multiplicative_position %x, %t : tensor<1x2048x64xf32>, tensor<1024x64xf32> -> tensor<1x2048x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_element_type(%x: tensor<1x8x64xf32>, %t: tensor<16x64xbf16>) {
  // expected-error @+1 {{expected 'table' element type 'f32' as in 'input', got 'bf16'}}
  %0 = tfm.multiplicative_position %x, %t : tensor<1x8x64xf32>, tensor<16x64xbf16> -> tensor<1x8x64xf32>
  return
}

// -----

/// A form next to a table would do nothing: it shapes only the sinusoid.
func.func @negative_multiplicative_position_form_with_table(%x: tensor<1x8x64xf32>, %t: tensor<16x64xf32>) {
  // expected-error @+1 {{expected no 'form', 'min_timescale' or 'max_timescale' with a 'table': they describe the sinusoid used without one}}
  %0 = tfm.multiplicative_position %x, %t {form = #tfm.sinusoidal_form<concat>} : tensor<1x8x64xf32>, tensor<16x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_min_timescale(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected 'min_timescale' > 0, got -2}}
  %0 = tfm.multiplicative_position %x {form = #tfm.sinusoidal_form<concat>, min_timescale = -2.0 : f64} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_max_timescale(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected 'max_timescale' > 0, got 0}}
  %0 = tfm.multiplicative_position %x {max_timescale = 0.0 : f64} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_multiplicative_position_result(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x8x64xf32>' (inferred from the operands), got 'tensor<1x8x32xf32>'}}
  %0 = tfm.multiplicative_position %x : tensor<1x8x64xf32> -> tensor<1x8x32xf32>
  return
}

// -----

func.func @negative_recursive_position_input_rank(%x: tensor<8x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'input' rank 3, got 2}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<8x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<32xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @negative_recursive_position_w1_rank(%x: tensor<1x8x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'w1' rank 2, got 1}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<1x8x64xf32>, tensor<64xf32>, tensor<65xf32>, tensor<32xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @negative_recursive_position_p0_size(%x: tensor<?x?x64xf32>, %p0: tensor<32xf32>, %w1: tensor<65x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'p0' dim 0 (model dim) to be 64 as in 'input', got 32}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<32xf32>, tensor<65x32xf32>, tensor<32xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

/// The time enters h as one more input feature: w1 has a row for it.
func.func @negative_recursive_position_w1_time_row(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<64x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'w1' dim 0 (the model dim and a time row) to be 64 + 1 = 65 as in 'input', got 64}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<32xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_recursive_position_hidden(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<16xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'b1' dim 0 (hidden dim) to be 32 as in 'w1', got 16}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<16xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_recursive_position_w2_time_row(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<?xf32>, %w2: tensor<32x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'w2' dim 0 (the hidden dim and a time row) to be 32 + 1 = 33 as in 'w1' and 'b1', got 32}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<?xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_recursive_position_w2_model_dim(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x32xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'w2' dim 1 (model dim) to be 64 as in 'input', got 32}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<32xf32>, tensor<33x32xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_recursive_position_element_type(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf16>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected 'w2' element type 'f32' as in 'input', got 'f16'}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<32xf32>, tensor<33x64xf16>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_recursive_position_time_step(%x: tensor<?x?x64xf32>, %p0: tensor<64xf32>, %w1: tensor<65x32xf32>, %b1: tensor<32xf32>, %w2: tensor<33x64xf32>, %b2: tensor<64xf32>) {
  // expected-error @+1 {{expected a finite 'time_step', got INF}}
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0x7FF0000000000000 : f64} : tensor<?x?x64xf32>, tensor<64xf32>, tensor<65x32xf32>, tensor<32xf32>, tensor<33x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_complex_embedding_ids_rank(%i: tensor<?xi32>, %t: tensor<100x64xf32>) {
  // expected-error @+1 {{expected 'ids' rank 2, got 1}}
  %0 = tfm.complex_embedding %i, %t, %t, %t : tensor<?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32> -> tensor<?x128xf32>
  return
}

// -----

func.func @negative_complex_embedding_ids_type(%i: tensor<?x?xf32>, %t: tensor<100x64xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfm.complex_embedding %i, %t, %t, %t : tensor<?x?xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @negative_complex_embedding_table_rank(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>, %p: tensor<100x64x1xf32>) {
  // expected-error @+1 {{expected 'phase' rank 2, got 3}}
  %0 = tfm.complex_embedding %i, %t, %t, %p : tensor<?x?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64x1xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @negative_complex_embedding_vocabulary(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>, %f: tensor<99x64xf32>) {
  // expected-error @+1 {{expected 'frequency' dim 0 (vocabulary) to be 100 as in 'amplitude', got 99}}
  %0 = tfm.complex_embedding %i, %t, %f, %t : tensor<?x?xi32>, tensor<100x64xf32>, tensor<99x64xf32>, tensor<100x64xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @negative_complex_embedding_width(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>, %p: tensor<100x32xf32>) {
  // expected-error @+1 {{expected 'phase' dim 1 (embedding dim) to be 64 as in 'amplitude', got 32}}
  %0 = tfm.complex_embedding %i, %t, %t, %p : tensor<?x?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x32xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @negative_complex_embedding_element_type(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>, %f: tensor<100x64xf16>) {
  // expected-error @+1 {{expected 'frequency' element type 'f32' as in 'amplitude', got 'f16'}}
  %0 = tfm.complex_embedding %i, %t, %f, %t : tensor<?x?xi32>, tensor<100x64xf32>, tensor<100x64xf16>, tensor<100x64xf32> -> tensor<?x?x128xf32>
  return
}

// -----

/// The result holds the real and the imaginary parts: twice the table width.
func.func @negative_complex_embedding_result(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<?x?x128xf32>' (inferred from the operands), got 'tensor<?x?x64xf32>'}}
  %0 = tfm.complex_embedding %i, %t, %t, %t : tensor<?x?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @negative_complex_embedding_first_position(%i: tensor<?x?xi32>, %t: tensor<100x64xf32>) {
  // expected-error @+1 {{expected 'first_position' in [0, 2^30), got -1}}
  %0 = tfm.complex_embedding %i, %t, %t, %t {first_position = -1 : i64} : tensor<?x?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @negative_complex_linear_weight_rank(%x: tensor<2x16xf32>, %w: tensor<8x4xf32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{expected 'weight_imag' rank 2, got 1}}
  %0 = tfm.complex_linear %x, %w, %v : tensor<2x16xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_complex_linear_scalar_input(%x: tensor<f32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{expected 'input' rank >= 1, got 0}}
  %0 = tfm.complex_linear %x, %w, %w : tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @negative_complex_linear_weight_shapes(%x: tensor<2x16xf32>, %w: tensor<8x4xf32>, %v: tensor<8x5xf32>) {
  // expected-error @+1 {{expected 'weight_imag' dim 1 (out features) to be 4 as in 'weight_real', got 5}}
  %0 = tfm.complex_linear %x, %w, %v : tensor<2x16xf32>, tensor<8x4xf32>, tensor<8x5xf32> -> tensor<2x8xf32>
  return
}

// -----

/// A [real | imaginary] row has an even width.
func.func @negative_complex_linear_odd_input(%x: tensor<?x15xf32>, %w: tensor<?x4xf32>) {
  // expected-error @+1 {{expected 'input' last dim to be even (real and imaginary halves), got 15}}
  %0 = tfm.complex_linear %x, %w, %w : tensor<?x15xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @negative_complex_linear_in_features(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{expected 'input' last dim to be 2 * 8 (real and imaginary halves of the weights' in features), got 8}}
  %0 = tfm.complex_linear %x, %w, %w : tensor<2x8xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_complex_linear_element_type(%x: tensor<2x16xf32>, %w: tensor<8x4xf32>, %v: tensor<8x4xbf16>) {
  // expected-error @+1 {{expected 'weight_imag' element type 'f32' as in 'input', got 'bf16'}}
  %0 = tfm.complex_linear %x, %w, %v : tensor<2x16xf32>, tensor<8x4xf32>, tensor<8x4xbf16> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_complex_linear_bias_size(%x: tensor<2x16xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{expected 'bias_imag' dim 0 (out features) to be 4 as in 'weight_real', got 8}}
  %0 = tfm.complex_linear %x, %w, %w bias(%b, %c : tensor<4xf32>, tensor<8xf32>) : tensor<2x16xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  return
}

// -----

/// The result is [..., 2N]: real then imaginary out features.
func.func @negative_complex_linear_result(%x: tensor<?x16xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{expected result type 'tensor<?x8xf32>' (inferred from the operands), got 'tensor<?x4xf32>'}}
  %0 = tfm.complex_linear %x, %w, %w : tensor<?x16xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @negative_layer_norm_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{expected 'epsilon' >= 0, got -1}}
  %0 = tfm.layer_norm %x, %g, %g {epsilon = -1.0 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

/// A norm needs a last dimension to normalise over.
func.func @negative_layer_norm_scalar_input(%x: tensor<f32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{expected 'input' rank >= 1, got 0}}
  %0 = tfm.layer_norm %x, %g, %g : tensor<f32>, tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  return
}

// -----

func.func @negative_layer_norm_gamma_rank(%x: tensor<2x8xf32>, %g: tensor<1x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'gamma' rank 1, got 2}}
  %0 = tfm.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<1x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_layer_norm_gamma_size(%x: tensor<?x?x768xf32>, %g: tensor<512xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{expected 'gamma' size 768 (the last dim of 'input'), got 512}}
  %0 = tfm.layer_norm %x, %g, %b : tensor<?x?x768xf32>, tensor<512xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @negative_layer_norm_beta_size(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<767xf32>) {
  // expected-error @+1 {{expected 'beta' size 768 (the last dim of 'input'), got 767}}
  %0 = tfm.layer_norm %x, %g, %b : tensor<?x?x768xf32>, tensor<768xf32>, tensor<767xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @negative_layer_norm_gamma_element_type(%x: tensor<2x8xf32>, %g: tensor<8xf16>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'gamma' element type 'f32' as in 'input', got 'f16'}}
  %0 = tfm.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<8xf16>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_rms_norm_gamma_size(%x: tensor<?x4096xbf16>, %g: tensor<4095xbf16>) {
  // expected-error @+1 {{expected 'gamma' size 4096 (the last dim of 'input'), got 4095}}
  %0 = tfm.rms_norm %x, %g : tensor<?x4096xbf16>, tensor<4095xbf16> -> tensor<?x4096xbf16>
  return
}

// -----

/// A residual is a stream of the input's shape: no broadcast.
func.func @negative_layer_norm_residual_shape(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %r: tensor<1x8xf32>) {
  // expected-error @+1 {{expected 'residual' of the shape of 'input', 'tensor<2x8xf32>', got 'tensor<1x8xf32>'}}
  %0 = tfm.layer_norm %x, %g, %g residual(%r : tensor<1x8xf32>) : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_rms_norm_residual_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %r: tensor<2x8xf16>) {
  // expected-error @+1 {{expected 'residual' element type 'f32' as in 'input', got 'f16'}}
  %0 = tfm.rms_norm %x, %g residual(%r : tensor<2x8xf16>) : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_rms_norm_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{expected 'epsilon' >= 0, got -5.000000e-01}}
  %0 = tfm.rms_norm %x, %g {epsilon = -0.5 : f64} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{expected 'weight' rank 2, got 1}}
  %0 = tfm.linear %x, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_linear_scalar_input(%x: tensor<f32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{expected 'input' rank >= 1, got 0}}
  %0 = tfm.linear %x, %w : tensor<f32>, tensor<8x4xf32> -> tensor<4xf32>
  return
}

// -----

/// The weight is [K, N], in-features major (GPT-2 Conv1D); a PyTorch [N, K] weight must be transposed first.
func.func @negative_linear_in_features(%x: tensor<?x?x768xf32>, %w: tensor<3072x768xf32>) {
  // expected-error @+1 {{expected 'weight' dim 0 (in features) to be 768 as the last dim of 'input', got 3072}}
  %0 = tfm.linear %x, %w : tensor<?x?x768xf32>, tensor<3072x768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @negative_linear_bias_rank(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{expected 'bias' rank 1, got 2}}
  %0 = tfm.linear %x, %w, %b : tensor<2x8xf32>, tensor<8x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @negative_linear_bias_size(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'bias' dim 0 (out features) to be 4 as in 'weight', got 8}}
  %0 = tfm.linear %x, %w, %b : tensor<2x8xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @negative_linear_result(%x: tensor<?x?x768xf32>, %w: tensor<768x3072xf32>) {
  // expected-error @+1 {{expected result type 'tensor<?x?x3072xf32>' (inferred from the operands), got 'tensor<?x?x768xf32>'}}
  %0 = tfm.linear %x, %w : tensor<?x?x768xf32>, tensor<768x3072xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @negative_matmul_rank(%a: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'lhs' rank >= 2, got 1}}
  %0 = tfm.matmul %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  return
}

// -----

/// Batch dims are not broadcast: both operands have the same rank.
func.func @negative_matmul_rank_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{expected 'rhs' rank 3 (the rank of 'lhs'), got 4}}
  %0 = tfm.matmul %a, %b : tensor<2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @negative_matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+1 {{expected 'rhs' dim 0 (batch) to be 2 as in 'lhs', got 3}}
  %0 = tfm.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

/// Without transpose_b, Q [.., Sq, 64] times K [.., Sk, 64] contracts 64 against Sk.
func.func @negative_matmul_contraction(%q: tensor<1x12x16x64xf32>, %k: tensor<1x12x32x64xf32>) {
  // expected-error @+1 {{expected contraction dims to match, got 64 in 'lhs' (dim 3) and 32 in 'rhs' (dim 2)}}
  %0 = tfm.matmul %q, %k : tensor<1x12x16x64xf32>, tensor<1x12x32x64xf32> -> tensor<1x12x16x64xf32>
  return
}

// -----

func.func @negative_matmul_element_type(%a: tensor<4x8xf32>, %b: tensor<8x4xf16>) {
  // expected-error @+1 {{expected 'rhs' element type 'f32' as in 'lhs', got 'f16'}}
  %0 = tfm.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf16> -> tensor<4x4xf32>
  return
}

// -----

func.func @negative_matmul_result(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x12x?x?xf32>' (inferred from the operands), got 'tensor<1x12x?x64xf32>'}}
  %0 = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{expected broadcast-compatible shapes, got 'lhs' [2, 3] and 'rhs' [4, 3]}}
  %0 = tfm.add %a, %b : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

/// A dynamic dim does not excuse a static mismatch elsewhere.
func.func @negative_sub_broadcast_dynamic(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>) {
  // expected-error @+1 {{expected broadcast-compatible shapes, got 'lhs' [?, 3] and 'rhs' [?, 5]}}
  %0 = tfm.sub %a, %b : tensor<?x3xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @negative_mul_element_type(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tfm.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

/// `?` against 12 broadcasts to 12; the declared result must say so.
func.func @negative_div_result_static_vs_dynamic(%a: tensor<?x12xf32>, %b: tensor<?x1xf32>) {
  // expected-error @+1 {{expected result type 'tensor<?x12xf32>' (inferred from the operands), got 'tensor<?x?xf32>'}}
  %0 = tfm.div %b, %a : tensor<?x1xf32>, tensor<?x12xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @negative_where_broadcast(%c: tensor<1x1x8x8xi1>, %t: tensor<f32>, %f: tensor<1x12x8x9xf32>) {
  // expected-error @+1 {{expected broadcast-compatible shapes, got 'condition' [1, 1, 8, 8], 'on_true' [] and 'on_false' [1, 12, 8, 9]}}
  %0 = tfm.where %c, %t, %f : tensor<1x1x8x8xi1>, tensor<f32>, tensor<1x12x8x9xf32> -> tensor<1x12x8x9xf32>
  return
}

// -----

func.func @negative_where_element_type(%c: tensor<8xi1>, %t: tensor<f16>, %f: tensor<8xf32>) {
  // expected-error @+1 {{expected 'on_false' element type 'f16' as in 'on_true', got 'f32'}}
  %0 = tfm.where %c, %t, %f : tensor<8xi1>, tensor<f16>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

/// Unary ops keep the input type.
func.func @negative_relu_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = tfm.relu %x : tensor<4xf32> -> tensor<4xf16>
  return
}

// -----

/// cos and sin are float ops, as the other unary ops but neg and abs.
func.func @negative_cos_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = tfm.cos %x : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @negative_neg_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = tfm.neg %x : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

/// Integer division rounds differently in PyTorch and ONNX: div is float-only.
func.func @negative_div_integer(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = tfm.div %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return
}

// -----

/// Integers are not promoted: i32 + i64 is an error, as f32 + f16 is.
func.func @negative_add_mixed_integers(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tfm.add %a, %b : tensor<4xi32>, tensor<4xi64> -> tensor<4xi64>
  return
}

// -----

/// Arithmetic is on f32, f16, bf16, i32 and i64; i1 is a condition.
func.func @negative_maximum_i1(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = tfm.maximum %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @negative_minimum_broadcast(%a: tensor<2x3xi64>, %b: tensor<2xi64>) {
  // expected-error @+1 {{expected broadcast-compatible shapes, got 'lhs' [2, 3] and 'rhs' [2]}}
  %0 = tfm.minimum %a, %b : tensor<2x3xi64>, tensor<2xi64> -> tensor<2x3xi64>
  return
}

// -----

func.func @negative_minimum_result(%a: tensor<?x1xi64>, %b: tensor<1x?xi64>) {
  // expected-error @+1 {{expected result type 'tensor<?x?xi64>' (inferred from the operands), got 'tensor<?x1xi64>'}}
  %0 = tfm.minimum %a, %b : tensor<?x1xi64>, tensor<1x?xi64> -> tensor<?x1xi64>
  return
}

// -----

func.func @negative_neg_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = tfm.neg %x : tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

/// log is a real function: cast an integer to a float first.
func.func @negative_log_integer(%x: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = tfm.log %x : tensor<4xi64> -> tensor<4xi64>
  return
}

// -----

/// ceil rounds floats: an integer is its own ceiling, and has no op.
func.func @negative_ceil_integer(%x: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = tfm.ceil %x : tensor<4xi64> -> tensor<4xi64>
  return
}

// -----

/// sign keeps the element type: the result is not a different type.
func.func @negative_sign_result_type(%x: tensor<4xi64>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = tfm.sign %x : tensor<4xi64> -> tensor<4xf32>
  return
}

// -----

/// compare's operands have one element type: no implicit promotion.
func.func @negative_compare_element_types(%a: tensor<4xi64>, %b: tensor<f32>) {
  // expected-error @+1 {{expected 'rhs' element type 'i64' as in 'lhs', got 'f32'}}
  %0 = tfm.compare %a, %b {predicate = #tfm.compare<lt>} : tensor<4xi64>, tensor<f32> -> tensor<4xi1>
  return
}

// -----

func.func @negative_compare_result_not_i1(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi64>'}}
  %0 = tfm.compare %a, %b {predicate = #tfm.compare<eq>} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return
}

// -----

func.func @negative_compare_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{expected broadcast-compatible shapes, got 'lhs' [2, 3] and 'rhs' [4, 3]}}
  %0 = tfm.compare %a, %b {predicate = #tfm.compare<gt>} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return
}

// -----

func.func @negative_compare_result_shape(%a: tensor<2x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x3xi1>' (inferred from the operands), got 'tensor<2x1xi1>'}}
  %0 = tfm.compare %a, %b {predicate = #tfm.compare<ne>} : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x1xi1>
  return
}

// -----

/// A condition is not compared: i1 is not a numeric type.
func.func @negative_compare_i1(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = tfm.compare %a, %b {predicate = #tfm.compare<eq>} : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @negative_cast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = tfm.cast %x : tensor<4xf32> -> tensor<8xi64>
  return
}

// -----

func.func @negative_cast_to_i8(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 1-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi8>'}}
  %0 = tfm.cast %x : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @negative_where_integer_values(%c: tensor<4xi1>, %t: tensor<4xi64>, %f: tensor<i32>) {
  // expected-error @+1 {{expected 'on_false' element type 'i64' as in 'on_true', got 'i32'}}
  %0 = tfm.where %c, %t, %f : tensor<4xi1>, tensor<4xi64>, tensor<i32> -> tensor<4xi64>
  return
}

// -----

func.func @negative_softmax_axis(%x: tensor<1x12x?x?xf32>) {
  // expected-error @+1 {{expected 'axis' in [-4, 4), got 4}}
  %0 = tfm.softmax %x {axis = 4 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  return
}

// -----

func.func @negative_softmax_negative_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{expected 'axis' in [-2, 2), got -3}}
  %0 = tfm.softmax %x {axis = -3 : i64} : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

/// The mask relates a query dim to a key dim.
func.func @negative_causal_mask_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{expected 'input' rank >= 2, got 1}}
  %0 = tfm.causal_mask %x : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @negative_reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected 'result' element type 'f32' as in 'input', got 'f16'}}
  %0 = tfm.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @negative_reshape_element_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected 'result' to have 24 elements as 'input' does, got 20}}
  %0 = tfm.reshape %x : tensor<2x3x4xf32> -> tensor<4x5xf32>
  return
}

// -----

/// Shapes come from user IR: element counts past int64 are refused, not
/// wrapped around.
func.func @negative_reshape_overflow(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{expected the static dims of 'input' to multiply to at most 2^63 - 1 elements}}
  %0 = tfm.reshape %x : tensor<4611686018427387904x4xf32> -> tensor<4x4611686018427387904xf32>
  return
}

// -----

/// Two dynamic dims cannot become one: their product is not a dim the IR can name.
func.func @negative_reshape_dynamic_count(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{expected 'result' to have 2 dynamic dims as 'input' does, got 1}}
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x768xf32>
  return
}

// -----

func.func @negative_reshape_static_product(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{expected the static dims of 'result' to multiply to 768 as those of 'input' do, got 384}}
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x32xf32>
  return
}

// -----

func.func @negative_transpose_size(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{expected 'permutation' of size 4 (the rank of 'input'), got 3}}
  %0 = tfm.transpose %x {permutation = array<i64: 0, 2, 1>} : tensor<1x2x3x4xf32> -> tensor<1x3x2xf32>
  return
}

// -----

func.func @negative_transpose_repeated(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{expected 'permutation' to be a permutation of [0, 4), got [0, 1, 1, 3]}}
  %0 = tfm.transpose %x {permutation = array<i64: 0, 1, 1, 3>} : tensor<1x2x3x4xf32> -> tensor<1x2x2x4xf32>
  return
}

// -----

func.func @negative_transpose_out_of_range(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{expected 'permutation' to be a permutation of [0, 4), got [0, 1, 2, 4]}}
  %0 = tfm.transpose %x {permutation = array<i64: 0, 1, 2, 4>} : tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @negative_transpose_result(%x: tensor<?x?x12x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<?x12x?x64xf32>' (inferred from the operands), got 'tensor<?x?x12x64xf32>'}}
  %0 = tfm.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x?x12x64xf32>
  return
}

// -----

func.func @negative_repeat_interleave_axis(%x: tensor<1x2x?x64xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 4), got 4}}
  %0 = tfm.repeat_interleave %x {axis = 4 : i64, repeats = 2 : i64} : tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return
}

// -----

func.func @negative_repeat_interleave_overflow(%x: tensor<1x4611686018427387904xf32>) {
  // expected-error @+1 {{expected 'repeats' (4) times the repeated dim (4611686018427387904) to fit in int64}}
  %0 = tfm.repeat_interleave %x {axis = 1 : i64, repeats = 4 : i64} : tensor<1x4611686018427387904xf32> -> tensor<1x4611686018427387904xf32>
  return
}

// -----

func.func @negative_repeat_interleave_repeats(%x: tensor<1x2x?x64xf32>) {
  // expected-error @+1 {{expected 'repeats' >= 1, got 0}}
  %0 = tfm.repeat_interleave %x {axis = 1 : i64, repeats = 0 : i64} : tensor<1x2x?x64xf32> -> tensor<1x0x?x64xf32>
  return
}

// -----

func.func @negative_repeat_interleave_result(%x: tensor<1x2x?x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x8x?x64xf32>' (inferred from the operands), got 'tensor<1x4x?x64xf32>'}}
  %0 = tfm.repeat_interleave %x {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x4x?x64xf32>
  return
}

// -----

func.func @negative_slice_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got 2}}
  %0 = tfm.slice %x {axis = 2 : i64, start = 0 : i64, end = 4 : i64} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

/// The sliced axis is a head dim, never the sequence: it must be static.
func.func @negative_slice_dynamic_axis(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{expected a static dim 1 of 'input' to slice, got ?}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 0 : i64, end = 4 : i64} : tensor<2x?xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @negative_slice_step(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 'step' >= 1, got 0}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 0 : i64, end = 4 : i64, step = 0 : i64} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @negative_slice_end(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 0 <= start < end <= 8 (dim 1 of 'input'), got start 4 and end 9}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 4 : i64, end = 9 : i64} : tensor<2x8xf32> -> tensor<2x5xf32>
  return
}

// -----

/// An empty slice is refused: no kernel or model needs one.
func.func @negative_slice_empty(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 0 <= start < end <= 8 (dim 1 of 'input'), got start 4 and end 4}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 4 : i64, end = 4 : i64} : tensor<2x8xf32> -> tensor<2x0xf32>
  return
}

// -----

/// ceil((8 - 1) / 2) = 4 elements: 1, 3, 5, 7.
func.func @negative_slice_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x4xf32>' (inferred from the operands), got 'tensor<2x3xf32>'}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 1 : i64, end = 8 : i64, step = 2 : i64} : tensor<2x8xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @negative_slice_missing_end(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{requires attribute 'end'}}
  %0 = tfm.slice %x {axis = 1 : i64, start = 1 : i64} : tensor<2x8xf32> -> tensor<2x3xf32>
  return
}

// -----

/// The custom form cannot spell an empty list; the generic one can.
func.func @negative_concat_no_inputs() {
  // expected-error @+1 {{expected at least one input, got none}}
  %0 = "tfm.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

/// No negative axes: exporters' -1 is normalised before tfm.
func.func @negative_concat_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got -1}}
  %0 = tfm.concat %x, %x {axis = -1 : i64} : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @negative_concat_rank(%x: tensor<2x8xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{expected 'inputs #1' rank 2, got 1}}
  %0 = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @negative_concat_element_type(%x: tensor<2x8xf32>, %y: tensor<2x8xf16>) {
  // expected-error @+1 {{expected 'inputs #1' element type 'f32' as in 'inputs #0', got 'f16'}}
  %0 = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x8xf16> -> tensor<2x16xf32>
  return
}

// -----

func.func @negative_concat_dim(%x: tensor<2x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{expected 'inputs #1' dim 0 (not joined) to be 2 as in 'inputs #0', got 3}}
  %0 = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @negative_concat_overflow(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{expected the joined dim 0 to fit in int64}}
  %0 = tfm.concat %x, %x, %x {axis = 0 : i64} : tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32> -> tensor<?xf32>
  return
}

// -----

/// ? + 3 is ?, whatever the other operand turns out to be.
func.func @negative_concat_result(%x: tensor<2x?xf32>, %y: tensor<2x3xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x?xf32>' (inferred from the operands), got 'tensor<2x3xf32>'}}
  %0 = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x?xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @negative_arange_axis(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got 2}}
  %0 = tfm.arange %x {axis = 2 : i64} : tensor<2x?xf32> -> tensor<?xf32>
  return
}

// -----

/// The length is exactly the counted dim: a static claim about a `?` would
/// be checked by nothing.
func.func @negative_arange_length(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{expected result shape [?] (dim 1 of 'like'), got [2]}}
  %0 = tfm.arange %x {axis = 1 : i64} : tensor<2x?xf32> -> tensor<2xf32>
  return
}

// -----

func.func @negative_arange_rank(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{expected result shape [2] (dim 0 of 'like'), got [2, 1]}}
  %0 = tfm.arange %x {axis = 0 : i64} : tensor<2x?xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @negative_arange_element_type(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi8>'}}
  %0 = tfm.arange %x {axis = 0 : i64} : tensor<2x?xf32> -> tensor<2xi8>
  return
}

// -----

/// No negative axes: exporters' -1 is normalised before tfm.
func.func @negative_gather_elements_axis(%x: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got -1}}
  %0 = tfm.gather_elements %x, %i {axis = -1 : i64} : tensor<2x8xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  return
}

// -----

func.func @negative_gather_elements_axis_rank(%x: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got 2}}
  %0 = tfm.gather_elements %x, %i {axis = 2 : i64} : tensor<2x8xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  return
}

// -----

/// Indices are not broadcast: they have the input's rank.
func.func @negative_gather_elements_indices_rank(%x: tensor<2x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{expected 'indices' rank 2, got 1}}
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<3xi64> -> tensor<3xf32>
  return
}

// -----

func.func @negative_gather_elements_dim(%x: tensor<2x8xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{expected 'indices' dim 0 (not gathered) to be 2 as in 'input', got 4}}
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  return
}

// -----

/// The result has the indices' shape and the input's element type.
func.func @negative_gather_elements_result(%x: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{expected result type 'tensor<2x3xf32>' (inferred from the operands), got 'tensor<2x8xf32>'}}
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x3xi64> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_gather_elements_result_type(%x: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{expected result type 'tensor<2x3xf32>' (inferred from the operands), got 'tensor<2x3xi64>'}}
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x3xi64> -> tensor<2x3xi64>
  return
}

// -----

func.func @negative_gather_elements_index_type(%x: tensor<2x8xf32>, %i: tensor<2x3xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2x3xf32>'}}
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @negative_gather_elements_missing_axis(%x: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{requires attribute 'axis'}}
  %0 = tfm.gather_elements %x, %i : tensor<2x8xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  return
}

// -----

/// expand moves elements; it does not convert them.
func.func @negative_expand_element_type(%x: tensor<1x4xi64>) {
  // expected-error @+1 {{expected the result element type 'i64' of 'input', got 'i32'}}
  %0 = tfm.expand %x : tensor<1x4xi64> -> tensor<3x4xi32>
  return
}

// -----

/// Dims are added in front, never dropped.
func.func @negative_expand_rank(%x: tensor<2x1x4xf32>) {
  // expected-error @+1 {{expected a result of rank >= 3 (the rank of 'input'), got 2}}
  %0 = tfm.expand %x : tensor<2x1x4xf32> -> tensor<2x4xf32>
  return
}

// -----

/// Only a 1 stretches.
func.func @negative_expand_dim(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{expected result dim 0 to be 2 (dim 0 of 'input', which is not 1), got 6}}
  %0 = tfm.expand %x : tensor<2x4xf32> -> tensor<6x4xf32>
  return
}

// -----

/// A `?` stays a `?`: a static size in its place would be unchecked.
func.func @negative_expand_dynamic_to_static(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{expected result dim 1 to be ? (dim 0 of 'input', which is not 1), got 8}}
  %0 = tfm.expand %x : tensor<?x4xf32> -> tensor<3x8x4xf32>
  return
}

// -----

/// A stretched dim has no other source for its size.
func.func @negative_expand_stretch_to_dynamic(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{expected a static result dim 0 where 'input' is stretched from 1, got ?}}
  %0 = tfm.expand %x : tensor<1x4xf32> -> tensor<?x4xf32>
  return
}

// -----

/// A dim the input does not have is stretched too.
func.func @negative_expand_new_dim_dynamic(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected a static result dim 0 where 'input' is stretched from 1, got ?}}
  %0 = tfm.expand %x : tensor<4xf32> -> tensor<?x4xf32>
  return
}

// -----

/// Attention takes BHSD tensors; split heads first.
func.func @negative_attention_query_rank(%q: tensor<1x?x768xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected 'query' rank 4, got 3}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x?x768xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_key_rank(%q: tensor<1x12x?x64xf32>, %k: tensor<1x?x768xf32>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected 'key' rank 4, got 3}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x?x768xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_value_rank(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<12x?x64xf32>) {
  // expected-error @+1 {{expected 'value' rank 4, got 3}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_key_element_type(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf16>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected 'key' element type 'f32' as in 'query', got 'f16'}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf16>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_key_batch(%q: tensor<1x12x?x64xf32>, %k: tensor<2x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected 'key' dim 0 (batch) to be 1 as in 'query', got 2}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<2x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// Scores contract the head dim of query and key.
func.func @negative_attention_head_dim(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x32xf32>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{expected 'key' dim 3 (head dim) to be 64 as in 'query', got 32}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x32xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_value_batch(%q: tensor<?x12x?x64xf32>, %k: tensor<2x12x?x64xf32>, %v: tensor<3x12x?x64xf32>) {
  // expected-error @+1 {{expected 'value' dim 0 (batch) to be 2 as in 'query' and 'key', got 3}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<?x12x?x64xf32>, tensor<2x12x?x64xf32>, tensor<3x12x?x64xf32> -> tensor<2x12x?x64xf32>
  return
}

// -----

/// In the bshd layout heads are dim 2: a key with 5 heads (dim 2) cannot
/// serve 12 query heads, whatever its dim 1 says.
func.func @negative_attention_bshd_heads(%q: tensor<1x?x12x64xf32>, %k: tensor<1x4x5x64xf32>, %v: tensor<1x4x5x64xf32>) {
  // expected-error @+1 {{expected 'query' heads (12) to be a multiple of 'key' heads, got 5}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64, layout = #tfm.head_layout<bshd>} : tensor<1x?x12x64xf32>, tensor<1x4x5x64xf32>, tensor<1x4x5x64xf32> -> tensor<1x?x12x64xf32>
  return
}

// -----

/// The bshd result is [B, Sq, H, Dv]: written as [B, H, Sq, Dv] it is wrong.
func.func @negative_attention_bshd_result(%q: tensor<1x7x12x64xf32>, %k: tensor<1x7x12x64xf32>, %v: tensor<1x7x12x64xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x7x12x64xf32>' (inferred from the operands), got 'tensor<1x12x7x64xf32>'}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64, layout = #tfm.head_layout<bshd>} : tensor<1x7x12x64xf32>, tensor<1x7x12x64xf32>, tensor<1x7x12x64xf32> -> tensor<1x12x7x64xf32>
  return
}

// -----

/// Key and value share their length: dim 1 in bshd.
func.func @negative_attention_bshd_value_length(%q: tensor<1x?x12x64xf32>, %k: tensor<1x9x12x64xf32>, %v: tensor<1x8x12x64xf32>) {
  // expected-error @+1 {{expected 'value' dim 1 (key length) to be 9 as in 'key', got 8}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64, layout = #tfm.head_layout<bshd>} : tensor<1x?x12x64xf32>, tensor<1x9x12x64xf32>, tensor<1x8x12x64xf32> -> tensor<1x?x12x64xf32>
  return
}

// -----

/// Key and value share their heads.
func.func @negative_attention_value_heads(%q: tensor<1x12x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x2x?x64xf32>) {
  // expected-error @+1 {{expected 'value' dim 1 (heads) to be 4 as in 'key', got 2}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_value_length(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x16x64xf32>, %v: tensor<1x12x8x64xf32>) {
  // expected-error @+1 {{expected 'value' dim 2 (key length) to be 16 as in 'key', got 8}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x16x64xf32>, tensor<1x12x8x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// Grouped-query attention needs H to be a multiple of Hkv.
func.func @negative_attention_gqa_heads(%q: tensor<1x12x?x64xf32>, %k: tensor<1x5x?x64xf32>, %v: tensor<1x5x?x64xf32>) {
  // expected-error @+1 {{expected 'query' heads (12) to be a multiple of 'key' heads, got 5}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x5x?x64xf32>, tensor<1x5x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_zero_kv_heads(%q: tensor<1x12x?x64xf32>, %k: tensor<1x0x?x64xf32>, %v: tensor<1x0x?x64xf32>) {
  // expected-error @+1 {{expected 'key' heads (dim 1) >= 1, got 0}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x0x?x64xf32>, tensor<1x0x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// The mask broadcasts to the scores [B, H, Sq, Sk]; 8 heads cannot become 12.
func.func @negative_attention_mask_shape(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %m: tensor<1x8x1x1xf32>) {
  // expected-error @+1 {{expected 'mask' to broadcast to the scores [B, H, Sq, Sk] = [1, 12, ?, ?], got [1, 8, 1, 1]}}
  %0 = tfm.attention %q, %k, %v mask(%m : tensor<1x8x1x1xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_mask_rank(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %m: tensor<1x1x1x1x1xf32>) {
  // expected-error @+1 {{expected 'mask' to broadcast to the scores [B, H, Sq, Sk] = [1, 12, ?, ?], got [1, 1, 1, 1, 1]}}
  %0 = tfm.attention %q, %k, %v mask(%m : tensor<1x1x1x1x1xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_mask_element_type(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %m: tensor<1x1x?x?xf16>) {
  // expected-error @+1 {{expected 'mask' element type 'f32' as in 'query', got 'f16'}}
  %0 = tfm.attention %q, %k, %v mask(%m : tensor<1x1x?x?xf16>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// key_padding_mask is Hugging Face's [B, Sk] attention_mask, not an expanded one.
func.func @negative_attention_key_padding_rank(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %p: tensor<1x1x1x?xi1>) {
  // expected-error @+1 {{expected 'key_padding_mask' rank 2, got 4}}
  %0 = tfm.attention %q, %k, %v key_padding_mask(%p : tensor<1x1x1x?xi1>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_key_padding_length(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x16x64xf32>, %v: tensor<1x12x16x64xf32>, %p: tensor<1x32xi64>) {
  // expected-error @+1 {{expected 'key_padding_mask' dim 1 (key length) to be 16 as in 'key', got 32}}
  %0 = tfm.attention %q, %k, %v key_padding_mask(%p : tensor<1x32xi64>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x16x64xf32>, tensor<1x12x16x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_attention_key_padding_batch(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %p: tensor<2x?xi1>) {
  // expected-error @+1 {{expected 'key_padding_mask' dim 0 (batch) to be 1 as in 'query', got 2}}
  %0 = tfm.attention %q, %k, %v key_padding_mask(%p : tensor<2x?xi1>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// The result is [B, H, Sq, Dv]: the value head dim, not the query's.
func.func @negative_attention_result(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x128xf32>) {
  // expected-error @+1 {{expected result type 'tensor<1x12x?x128xf32>' (inferred from the operands), got 'tensor<1x12x?x64xf32>'}}
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x128xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

/// The scale is explicit: exporters differ (1/sqrt(D), 1, folded into q).
func.func @negative_attention_missing_scale(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) {
  // expected-error @+1 {{requires attribute 'scale'}}
  %0 = tfm.attention %q, %k, %v {causal = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return
}

// -----

func.func @negative_linear_activation(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+2 {{expected ::attune::tfm::ActivationKind to be one of: none, relu, gelu, gelu_tanh, silu}}
  // expected-error @+1 {{failed to parse Tfm_ActivationAttr parameter 'value'}}
  %0 = tfm.linear %x, %w {activation = #tfm.activation<tanh>} : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @negative_panels_outside_linear(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{a weight packed into #tfm.panels is read only as the weight of tfm.linear, but 'tfm.add' uses it as operand 1}}
  %w = tfm.weight "w" : tensor<2x8xf32, #tfm.panels<64>>
  %0 = tfm.add %x, %w : tensor<2x8xf32>, tensor<2x8xf32, #tfm.panels<64>> -> tensor<2x8xf32>
  return
}

// -----

func.func @negative_panels_rank() {
  // expected-error @+1 {{expected 'result' rank 2 with #tfm.panels, got 1}}
  %w = tfm.weight "w" : tensor<8xf32, #tfm.panels<64>>
  return
}

// -----

func.func @negative_panels_width() {
  // expected-error @+1 {{expected a panel width in [1, 1024], got 0}}
  %w = tfm.weight "w" : tensor<8x8xf32, #tfm.panels<0>>
  return
}

// -----

func.func @attention_product_type_not_16_bits(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  // expected-error @+1 {{expected 'product_type' to be bf16 or f16 (the product types besides the operands' own), got 'f64'}}
  %0 = tfm.attention %q, %k, %v {product_type = f64, scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %0 : tensor<1x12x?x64xf32>
}

// -----

func.func @attention_softcap_not_positive(%q: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  // expected-error @+1 {{expected 'softcap' to be positive and finite, got 0}}
  %0 = tfm.attention %q, %q, %q {scale = 0.125 : f64, softcap = 0.0 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %0 : tensor<1x12x?x64xf32>
}

// -----

func.func @attention_softcap_with_content_modifier(%q: tensor<1x2x8x16xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{expected no content modifier with 'softcap' (the cap would have to include its terms), got 'shaw'}}
  %o = tfm.attention %q, %q, %q modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {scale = 0.25 : f64, softcap = 30.0 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
