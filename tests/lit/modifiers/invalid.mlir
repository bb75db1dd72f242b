// RUN: attune-opt %s -split-input-file -verify-diagnostics

/// Every diagnostic of the score modifiers' verification, one case each.

func.func @negative_unknown_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{unknown score modifier 'rope_typo', expected one of alibi, sliding_window, t5}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "rope_typo"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_no_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected a score modifier to have a string 'kind' (alibi, sliding_window, t5), got {window = 4 : i64}}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{window = 4 : i64}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_unknown_parameter(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 'alibi': unknown parameter 'slope', expected one of max_bias, symmetric}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "alibi", slope = 0.5 : f64}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_missing_parameter(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 'sliding_window': missing parameter 'window' (keys a query sees, its own position included)}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "sliding_window"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_parameter_not_integer(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 'sliding_window': expected 'window' to be an integer, got 2.5}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "sliding_window", window = 2.5 : f64}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_parameter_range(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 'sliding_window': expected 'window' in [1, 2.14748e+09], got 0}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "sliding_window", window = 0 : i64}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_parameter_not_a_number(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 'alibi': expected 'max_bias' to be a number or a boolean, got "8"}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "alibi", max_bias = "8"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_missing_operand(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected 1 modifier operand(s) for 't5' (#0), 0 left}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_extra_operand(%q: tensor<1x4x8x16xf32>, %t: tensor<32x4xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected 0 modifier operand(s), as 'modifiers' lists, got 1}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<32x4xf32>) {scale = 1.0 : f64, modifiers = [{kind = "alibi"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_t5_table_rows(%q: tensor<1x4x8x16xf32>, %t: tensor<16x4xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 't5': expected operand 'table' [num_buckets, H] to have 32 rows, got 16}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<16x4xf32>) {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_t5_table_heads(%q: tensor<1x4x8x16xf32>, %t: tensor<32x6xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 't5': expected operand 'table' [num_buckets, H] to have one column per query head (4), got 6}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<32x6xf32>) {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_t5_table_rank(%q: tensor<1x4x8x16xf32>, %t: tensor<32xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 't5': expected operand 'table' [num_buckets, H] of rank 2, got rank 1}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<32xf32>) {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_t5_max_distance(%q: tensor<1x4x8x16xf32>, %t: tensor<32x4xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{modifier 't5': expected max_distance above the 8 exactly bucketed distances, got 8}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<32x4xf32>) {scale = 1.0 : f64, modifiers = [{kind = "t5", max_distance = 8 : i64}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_operand_element_type(%q: tensor<1x4x8x16xf32>, %t: tensor<32x4xf16>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected 'modifier operand' element type 'f32' as in 'query', got 'f16'}}
  %o = tfm.attention %q, %q, %q modifier_operands(%t : tensor<32x4xf16>) {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_score_bias_rank(%s: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  // expected-error @+1 {{expected 'input' rank 4, got 3}}
  %b = tfm.score_bias %s {modifier = {kind = "alibi"}} : tensor<4x8x8xf32> -> tensor<4x8x8xf32>
  return %b : tensor<4x8x8xf32>
}

// -----

func.func @negative_score_bias_result(%s: tensor<1x4x8x8xf32>) -> tensor<1x4x8x?xf32> {
  // expected-error @+1 {{expected the result type 'tensor<1x4x8x8xf32>' of 'input', got 'tensor<1x4x8x?xf32>'}}
  %b = tfm.score_bias %s {modifier = {kind = "alibi"}} : tensor<1x4x8x8xf32> -> tensor<1x4x8x?xf32>
  return %b : tensor<1x4x8x?xf32>
}

// -----

func.func @negative_score_bias_heads(%s: tensor<1x4x8x8xf32>, %t: tensor<32x2xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{modifier 't5': expected operand 'table' [num_buckets, H] to have one column per query head (4), got 2}}
  %b = tfm.score_bias %s modifier_operands(%t : tensor<32x2xf32>) {modifier = {kind = "t5"}} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %b : tensor<1x4x8x8xf32>
}

// -----

func.func @negative_rope_odd_dims(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope 'rotary_dims' even and >= 2, got 7}}
  %r = tfm.rope %q {rotary_dims = 7 : i64} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_dims_past_head(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope 'rotary_dims' <= the head dim 16, got 32}}
  %r = tfm.rope %q {rotary_dims = 32 : i64} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_base(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope 'base' finite and > 0, got 0}}
  %r = tfm.rope %q {base = 0.0 : f64} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_short_align(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x4x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected 'align' length (dim 2) >= the input's 8, got 4}}
  %r = tfm.rope %q align(%k : tensor<1x4x4x16xf32>) : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_dynamic_head(%q: tensor<1x4x8x?xf32>) -> tensor<1x4x8x?xf32> {
  // expected-error @+1 {{expected 'rotary_dims' when the head dim is dynamic}}
  %r = tfm.rope %q : tensor<1x4x8x?xf32> -> tensor<1x4x8x?xf32>
  return %r : tensor<1x4x8x?xf32>
}

// -----

func.func @negative_attention_rope_entry(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected 'rope' entries base (float), rotary_dims (integer), interleaved (bool) and position_offset (integer), got 'theta' = 1.000000e+04 : f64}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, rope = {theta = 10000.0 : f64}}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_attention_rope_dims(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope 'rotary_dims' <= the head dim 16, got 18}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, rope = {rotary_dims = 18 : i64}}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
