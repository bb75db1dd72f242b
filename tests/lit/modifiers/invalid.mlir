// RUN: attune-opt %s -split-input-file -verify-diagnostics

/// Every diagnostic of the score modifiers' verification, one case each.

func.func @negative_unknown_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{unknown score modifier 'rope_typo', expected one of alibi, deberta, shaw, sliding_window, t5, xl}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "rope_typo"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_no_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected a score modifier to have a string 'kind' (alibi, deberta, shaw, sliding_window, t5, xl), got {window = 4 : i64}}}
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
  // expected-error @+1 {{expected 'rope' entries base (float), rotary_dims (integer), interleaved (bool), position_offset (integer) and scaling (dictionary), got 'theta' = 1.000000e+04 : f64}}
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

// -----

func.func @negative_shaw_table_rows(%q: tensor<1x2x8x16xf32>, %rk: tensor<8x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'shaw': expected operand 'key_table' [2 max_distance + 1, D] to have 9 rows, got 8}}
  %o = tfm.attention %q, %q, %q modifier_operands(%rk, %rv : tensor<8x16xf32>, tensor<9x16xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_shaw_value_width(%q: tensor<1x2x8x16xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x8xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'shaw': expected operand 'value_table' [2 max_distance + 1, Dv] to have 16 columns, the value head dim (dim 1), got 8}}
  %o = tfm.attention %q, %q, %q modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x8xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_content_head_dim(%q: tensor<1x2x8x16xf32>, %rk: tensor<9x32xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'shaw': expected operand 'key_table' [2 max_distance + 1, D] to have 16 columns, the head dim (dim 1), got 32}}
  %o = tfm.attention %q, %q, %q modifier_operands(%rk, %rv : tensor<9x32xf32>, tensor<9x16xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_xl_short_table(%q: tensor<1x2x8x16xf32>, %u: tensor<2x16xf32>, %r: tensor<6x2x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'xl': expected max_distance >= 7, the largest distance of 8 keys, got 5}}
  %o = tfm.attention %q, %q, %q modifier_operands(%u, %u, %r : tensor<2x16xf32>, tensor<2x16xf32>, tensor<6x2x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 5 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_xl_rows(%q: tensor<1x2x8x16xf32>, %u: tensor<2x16xf32>, %r: tensor<7x2x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'xl': expected operand 'r' [L, H, D] to have a row for every distance from max_distance 7 to 0, got 7 rows}}
  %o = tfm.attention %q, %q, %q modifier_operands(%u, %u, %r : tensor<2x16xf32>, tensor<2x16xf32>, tensor<7x2x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 7 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_xl_bias_heads(%q: tensor<1x2x8x16xf32>, %u: tensor<3x16xf32>, %r: tensor<8x2x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'xl': expected operand 'u' [H, D] to have 2 heads (dim 0), got 3}}
  %o = tfm.attention %q, %q, %q modifier_operands(%u, %u, %r : tensor<3x16xf32>, tensor<3x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 7 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_deberta_buckets(%q: tensor<1x2x8x16xf32>, %p: tensor<8x2x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'deberta': expected span >= 4 and max_position > span / 2 + 1 for log buckets, got span 4 and max_position 3}}
  %o = tfm.attention %q, %q, %q modifier_operands(%p, %p : tensor<8x2x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "deberta", span = 4 : i64, max_position = 3 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_deberta_heads(%q: tensor<1x2x8x16xf32>, %p: tensor<8x4x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'deberta': expected operand 'key_pos' [2 span, H, D] to have 2 heads (dim 1), got 4}}
  %o = tfm.attention %q, %q, %q modifier_operands(%p, %p : tensor<8x4x16xf32>, tensor<8x4x16xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "deberta", span = 4 : i64}]}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_score_bias_without_content(%s: tensor<1x2x8x8xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{modifier 'shaw' reads the query and key rows: expected content(q, k) and 'scale'}}
  %b = tfm.score_bias %s modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  return %b : tensor<1x2x8x8xf32>
}

// -----

func.func @negative_score_bias_content_no_scale(%s: tensor<1x2x8x8xf32>, %q: tensor<1x2x8x16xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{expected 'scale' with content(q, k): the content terms are scaled like q . k}}
  %b = tfm.score_bias %s content(%q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  return %b : tensor<1x2x8x8xf32>
}

// -----

func.func @negative_score_bias_content_length(%s: tensor<1x2x8x8xf32>, %q: tensor<1x2x8x16xf32>, %k: tensor<1x2x6x16xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{expected 'k' dim 2 (key length) to be 8 as in 'input', got 6}}
  %b = tfm.score_bias %s content(%q, %k : tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}, scale = 0.25 : f64} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  return %b : tensor<1x2x8x8xf32>
}

// -----

func.func @negative_score_bias_stray_content(%s: tensor<1x2x8x8xf32>, %q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{modifier 'alibi' has no content terms: expected no content(q, k)}}
  %b = tfm.score_bias %s content(%q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
      {modifier = {kind = "alibi"}, scale = 0.25 : f64} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  return %b : tensor<1x2x8x8xf32>
}

// -----

func.func @negative_score_values_no_value_term(%p: tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{modifier 'alibi' has no value term}}
  %r = tfm.score_values %p {modifier = {kind = "alibi"}} : tensor<1x2x8x8xf32> -> tensor<1x2x8x16xf32>
  return %r : tensor<1x2x8x16xf32>
}

// -----

func.func @negative_score_values_result(%p: tensor<1x2x8x8xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x2x8x32xf32> {
  // expected-error @+1 {{modifier 'shaw': expected operand 'value_table' [2 max_distance + 1, Dv] to have 32 columns, the value head dim (dim 1), got 16}}
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}} : tensor<1x2x8x8xf32> -> tensor<1x2x8x32xf32>
  return %r : tensor<1x2x8x32xf32>
}

// -----

func.func @negative_score_values_rank(%p: tensor<1x2x8x8xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expected the result type 'tensor<1x2x8x16xf32>' ([B, H, Sq] of 'input', Dv of the value table), got 'tensor<2x8x16xf32>'}}
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}} : tensor<1x2x8x8xf32> -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

func.func @negative_rope_scaling_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope scaling kind 'linear' or 'llama3', got 'dynamic'}}
  %r = tfm.rope %q {scaling = {kind = "dynamic", factor = 2.0 : f64}} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_scaling_factor(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected a rope scaling factor >= 1, got 0.500000}}
  %r = tfm.rope %q {scaling = {kind = "linear", factor = 0.5 : f64}} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_rope_scaling_entry(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected rope linear scaling entries factor (float), got 'low_freq_factor'}}
  %r = tfm.rope %q {scaling = {kind = "linear", factor = 2.0 : f64, low_freq_factor = 1.0 : f64}} : tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

func.func @negative_attention_rope_llama3_bands(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expected llama3 rope scaling with 0 < low_freq_factor < high_freq_factor, got 4.000000 and 1.000000}}
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, rope = {base = 10000.0 : f64, scaling = {kind = "llama3", factor = 8.0 : f64, low_freq_factor = 4.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 64 : i64}}}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
