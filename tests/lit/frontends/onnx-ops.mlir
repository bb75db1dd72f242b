// ONNX ops as exporters write them, one small graph each
// (Inputs/make_onnx_ops.py: the graphs, their inputs and ONNX Runtime's
// outputs, committed): imported, compiled, run and compared with ORT,
// |attune - ort| <= 1e-5 + 1e-4 |ort| (scripts/compare_npy.py).

// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %S/Inputs/onnx-ops/rmsnorm.onnx --emit=input | FileCheck %s --check-prefix=RMS
// RUN: attune-compile %S/Inputs/onnx-ops/rmsnorm.onnx -o %t/rmsnorm.so
// RUN: attune-run %t/rmsnorm.so --input=x=@%S/Inputs/onnx-ops/rmsnorm/inputs/x.npy --output=%t/rmsnorm
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/rmsnorm %S/Inputs/onnx-ops/rmsnorm/reference | FileCheck %s --check-prefix=OK
// RMS: tfm.rms_norm %arg0, %{{.+}} {epsilon = 9.99{{[0-9]+}}E-7 : f64} : tensor<?x16xf32>, tensor<16xf32> -> tensor<?x16xf32>

/// Both dims dynamic: the mask is computed from positions (tfm.arange), not
/// stored.
// RUN: attune-compile %S/Inputs/onnx-ops/trilu.onnx --emit=input | FileCheck %s --check-prefix=TRILU
// RUN: attune-compile %S/Inputs/onnx-ops/trilu.onnx -o %t/trilu.so
// RUN: attune-run %t/trilu.so --input=x=@%S/Inputs/onnx-ops/trilu/inputs/x.npy --output=%t/trilu
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/trilu %S/Inputs/onnx-ops/trilu/reference | FileCheck %s --check-prefix=OK2
// TRILU: tfm.arange %arg0 {axis = 1 : i64} : tensor<2x?x?xf32> -> tensor<?xi64>
// TRILU: tfm.arange %arg0 {axis = 2 : i64} : tensor<2x?x?xf32> -> tensor<?xi64>
// TRILU: tfm.compare {{.+}} {predicate = #tfm.compare<ge>}
// TRILU: tfm.where
// TRILU: tfm.compare {{.+}} {predicate = #tfm.compare<le>}

/// Trilu of a constant folds: the mask is one constant.
// RUN: attune-compile %S/Inputs/onnx-ops/causal_mask.onnx --emit=input | FileCheck %s --check-prefix=CAUSAL
// RUN: attune-compile %S/Inputs/onnx-ops/causal_mask.onnx -o %t/causal_mask.so
// RUN: attune-run %t/causal_mask.so --input=x=@%S/Inputs/onnx-ops/causal_mask/inputs/x.npy --output=%t/causal_mask
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/causal_mask %S/Inputs/onnx-ops/causal_mask/reference | FileCheck %s --check-prefix=OK
// CAUSAL-NOT: tfm.arange
// CAUSAL: tfm.mul %arg0, %{{.+}} : tensor<4x8x8xf32>, tensor<8x8xf32> -> tensor<4x8x8xf32>

// RUN: attune-compile %S/Inputs/onnx-ops/expand.onnx --emit=input | FileCheck %s --check-prefix=EXPAND
// RUN: attune-compile %S/Inputs/onnx-ops/expand.onnx -o %t/expand.so
// RUN: attune-run %t/expand.so --input=x=@%S/Inputs/onnx-ops/expand/inputs/x.npy --output=%t/expand
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/expand %S/Inputs/onnx-ops/expand/reference | FileCheck %s --check-prefix=OK
// EXPAND: tfm.expand %arg0 : tensor<?x1x16xf32> -> tensor<?x4x16xf32>
// EXPAND: tfm.add %{{.+}}, %{{.+}} : tensor<?x4x16xf32>, tensor<4x16xf32> -> tensor<?x4x16xf32>

/// Attention (opset 23), GQA: is_causal with query and key lengths dynamic
/// (ONNX keeps key j <= query i) is an additive mask from positions, run
/// with Sq = 5 and Sk = 9; with both 8 it is tfm's causal attribute; an
/// additive float mask and a scale pass through.
// RUN: attune-compile %S/Inputs/onnx-ops/attention_causal.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-CAUSAL
// RUN: attune-compile %S/Inputs/onnx-ops/attention_static.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-STATIC
// RUN: attune-compile %S/Inputs/onnx-ops/attention_mask.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-MASK
// ATTN-CAUSAL: tfm.attention %arg0, %arg1, %arg2 mask(%{{.+}} : tensor<?x?xf32>) {scale = 2.500000e-01 : f64} : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
// ATTN-STATIC: tfm.attention %arg0, %arg1, %arg2 {causal = true, scale = 2.500000e-01 : f64}
// ATTN-MASK: tfm.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x1x?x?xf32>) {scale = 0.20000000298023224 : f64}
// RUN: attune-compile %S/Inputs/onnx-ops/attention_causal.onnx -o %t/attention_causal.so
// RUN: attune-run %t/attention_causal.so --input=q=@%S/Inputs/onnx-ops/attention_causal/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_causal/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_causal/inputs/v.npy --output=%t/attention_causal
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_causal %S/Inputs/onnx-ops/attention_causal/reference | FileCheck %s --check-prefix=OK
// RUN: attune-compile %S/Inputs/onnx-ops/attention_static.onnx -o %t/attention_static.so
// RUN: attune-run %t/attention_static.so --input=q=@%S/Inputs/onnx-ops/attention_static/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_static/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_static/inputs/v.npy --output=%t/attention_static
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_static %S/Inputs/onnx-ops/attention_static/reference | FileCheck %s --check-prefix=OK
// RUN: attune-compile %S/Inputs/onnx-ops/attention_mask.onnx -o %t/attention_mask.so
// RUN: attune-run %t/attention_mask.so --input=q=@%S/Inputs/onnx-ops/attention_mask/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_mask/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_mask/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_mask/inputs/mask.npy --output=%t/attention_mask
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_mask %S/Inputs/onnx-ops/attention_mask/reference | FileCheck %s --check-prefix=OK

/// Attention's softcap (softcap * tanh(s / softcap) before the mask, ONNX
/// Runtime's order) is the fused op's softcap.
// RUN: attune-compile %S/Inputs/onnx-ops/attention_softcap.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-CAP
// ATTN-CAP: tfm.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x1x?x?xf32>) {scale = 0.30000001192092896 : f64, softcap = 2.000000e+00 : f64}
// RUN: attune-compile %S/Inputs/onnx-ops/attention_softcap.onnx -o %t/attention_softcap.so
// RUN: attune-run %t/attention_softcap.so --input=q=@%S/Inputs/onnx-ops/attention_softcap/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_softcap/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_softcap/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_softcap/inputs/mask.npy --output=%t/attention_softcap
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_softcap %S/Inputs/onnx-ops/attention_softcap/reference | FileCheck %s --check-prefix=OK

/// qk_matmul_output in its four modes (scaled q.k, softcapped, masked with
/// -inf kept, the softmax with a fully masked row of zeros): the attention
/// is written out as its ops, so the scores exist, and it is left unfused.
// RUN: attune-compile %S/Inputs/onnx-ops/attention_qk_mode2.onnx --emit=mlir 2>&1 | FileCheck %s --check-prefix=ATTN-QK
// ATTN-QK: tfm.tanh
// ATTN-QK: tfm.softmax
// ATTN-QK-NOT: tfm.attention
// RUN: attune-compile %S/Inputs/onnx-ops/attention_qk_mode0.onnx -o %t/attention_qk_mode0.so
// RUN: attune-run %t/attention_qk_mode0.so --input=q=@%S/Inputs/onnx-ops/attention_qk_mode0/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_qk_mode0/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_qk_mode0/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_qk_mode0/inputs/mask.npy --output=%t/attention_qk_mode0
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_qk_mode0 %S/Inputs/onnx-ops/attention_qk_mode0/reference | FileCheck %s --check-prefix=OK2
// RUN: attune-compile %S/Inputs/onnx-ops/attention_qk_mode1.onnx -o %t/attention_qk_mode1.so
// RUN: attune-run %t/attention_qk_mode1.so --input=q=@%S/Inputs/onnx-ops/attention_qk_mode1/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_qk_mode1/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_qk_mode1/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_qk_mode1/inputs/mask.npy --output=%t/attention_qk_mode1
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_qk_mode1 %S/Inputs/onnx-ops/attention_qk_mode1/reference | FileCheck %s --check-prefix=OK2
// RUN: attune-compile %S/Inputs/onnx-ops/attention_qk_mode2.onnx -o %t/attention_qk_mode2.so
// RUN: attune-run %t/attention_qk_mode2.so --input=q=@%S/Inputs/onnx-ops/attention_qk_mode2/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_qk_mode2/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_qk_mode2/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_qk_mode2/inputs/mask.npy --output=%t/attention_qk_mode2
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_qk_mode2 %S/Inputs/onnx-ops/attention_qk_mode2/reference | FileCheck %s --check-prefix=OK2
// RUN: attune-compile %S/Inputs/onnx-ops/attention_qk_mode3.onnx -o %t/attention_qk_mode3.so
// RUN: attune-run %t/attention_qk_mode3.so --input=q=@%S/Inputs/onnx-ops/attention_qk_mode3/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_qk_mode3/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_qk_mode3/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_qk_mode3/inputs/mask.npy --output=%t/attention_qk_mode3
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_qk_mode3 %S/Inputs/onnx-ops/attention_qk_mode3/reference | FileCheck %s --check-prefix=OK2

/// A negative softcap or an unknown qk_matmul_output_mode is an error naming
/// the node.
// RUN: not attune-compile %S/Inputs/onnx-ops/attention_bad_softcap.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=BAD-CAP
// BAD-CAP: error: cannot import '{{.*}}attention_bad_softcap.onnx': node 'attn_bad' (Attention) (opset 23): expected softcap >= 0 and finite (0: none), got -1
// RUN: not attune-compile %S/Inputs/onnx-ops/attention_bad_qk_mode.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=BAD-QK
// BAD-QK: error: cannot import '{{.*}}attention_bad_qk_mode.onnx': node 'attn_bad' (Attention) (opset 23): expected qk_matmul_output_mode 0 (q . k scaled), 1 (softcapped), 2 (masked) or 3 (softmax), got 7

// OK: 1 passed, 0 failed
// OK2: 2 passed, 0 failed

// RUN: not attune-compile %S/Inputs/onnx-ops/bad_expand.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=BAD-EXPAND
// BAD-EXPAND: error: cannot import '{{.*}}bad_expand.onnx': node 'expand_x' (Expand) (opset 17): cannot expand [?, 3, 16] to [1, 4, 16]
// RUN: not attune-compile %S/Inputs/onnx-ops/trilu_dynamic_k.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=DYNAMIC-K
// DYNAMIC-K: error: cannot import '{{.*}}trilu_dynamic_k.onnx': node 'triu' (Trilu) (opset 17): input 1 ('k') must be a constant
/// 3-D inputs: heads split by a reshape and read in place (bshd); a bool
/// mask beside a dynamic is_causal.
// RUN: attune-compile %S/Inputs/onnx-ops/attention_3d.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-3D
// ATTN-3D: tfm.reshape %arg0 : tensor<1x?x64xf32> -> tensor<1x?x4x16xf32>
// ATTN-3D: tfm.attention {{.+}} {layout = #tfm.head_layout<bshd>, scale = 2.500000e-01 : f64} : tensor<1x?x4x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x4x16xf32>
// ATTN-3D: tfm.reshape %{{.+}} : tensor<1x?x4x16xf32> -> tensor<1x?x64xf32>
// RUN: attune-compile %S/Inputs/onnx-ops/attention_3d.onnx -o %t/attention_3d.so
// RUN: attune-run %t/attention_3d.so --input=q=@%S/Inputs/onnx-ops/attention_3d/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_3d/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_3d/inputs/v.npy --input=mask=@%S/Inputs/onnx-ops/attention_3d/inputs/mask.npy --output=%t/attention_3d
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_3d %S/Inputs/onnx-ops/attention_3d/reference | FileCheck %s --check-prefix=OK
// RUN: not attune-compile %S/Inputs/onnx-ops/attention_3d_bad_heads.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=ATTN-HEADS
// ATTN-HEADS: error: cannot import '{{.*}}attention_3d_bad_heads.onnx': node 'attn3d' (Attention) (opset 23): 3-D inputs need q_num_heads and kv_num_heads dividing the static hidden sizes; q is [1, ?, 64] with 5 heads

/// RotaryEmbedding (opset 23): the caches' rows gathered by position_ids
/// (tfm.embedding) and the rotation written out; 4-D halves, and 3-D with
/// num_heads, interleaved pairs and a partial rotary dim at positions 5..9.
// RUN: attune-compile %S/Inputs/onnx-ops/rope.onnx --emit=input | FileCheck %s --check-prefix=ROPE
// ROPE: tfm.embedding %{{.+}}, %arg1 : tensor<32x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32>
// ROPE: tfm.slice %arg0 {axis = 3 : i64, end = 8 : i64, start = 0 : i64} : tensor<1x2x?x16xf32> -> tensor<1x2x?x8xf32>
// RUN: attune-compile %S/Inputs/onnx-ops/rope.onnx -o %t/rope.so
// RUN: attune-run %t/rope.so --input=x=@%S/Inputs/onnx-ops/rope/inputs/x.npy --input=pos=@%S/Inputs/onnx-ops/rope/inputs/pos.npy --output=%t/rope
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/rope %S/Inputs/onnx-ops/rope/reference | FileCheck %s --check-prefix=OK
// RUN: attune-compile %S/Inputs/onnx-ops/rope_3d.onnx -o %t/rope_3d.so
// RUN: attune-run %t/rope_3d.so --input=x=@%S/Inputs/onnx-ops/rope_3d/inputs/x.npy --input=pos=@%S/Inputs/onnx-ops/rope_3d/inputs/pos.npy --output=%t/rope_3d
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/rope_3d %S/Inputs/onnx-ops/rope_3d/reference | FileCheck %s --check-prefix=OK

/// Einsum: attention written as two Einsums imports as the matmuls an
/// exporter's MatMul would give, and fuses; the other forms each become
/// one tfm.linear or tfm.matmul with the transposes and reshapes around it.
// RUN: attune-compile %S/Inputs/onnx-ops/einsum_attention.onnx --emit=mlir | FileCheck %s --check-prefix=EINSUM-ATTN
// EINSUM-ATTN: tfm.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
// EINSUM-ATTN-NOT: tfm.matmul
// RUN: attune-compile %S/Inputs/onnx-ops/einsum_attention.onnx -o %t/einsum_attention.so
// RUN: attune-run %t/einsum_attention.so --input=q=@%S/Inputs/onnx-ops/einsum_attention/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/einsum_attention/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/einsum_attention/inputs/v.npy --output=%t/einsum_attention
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/einsum_attention %S/Inputs/onnx-ops/einsum_attention/reference | FileCheck %s --check-prefix=OK
// RUN: attune-compile %S/Inputs/onnx-ops/einsum.onnx --emit=input | FileCheck %s --check-prefix=EINSUM
// EINSUM-DAG: tfm.linear %arg0, %{{.+}} : tensor<2x?x8xf32>, tensor<8x12xf32> -> tensor<2x?x12xf32>
// EINSUM-DAG: tfm.weight "wt" {transpose} : tensor<8x12xf32>
// EINSUM-DAG: tfm.matmul %{{.+}}, %{{.+}} {transpose_a = true} : tensor<12x5xf32>, tensor<12x7xf32> -> tensor<5x7xf32>
// EINSUM-DAG: tfm.reshape %arg4 : tensor<2x8xf32> -> tensor<2x8x1xf32>
// EINSUM-DAG: tfm.transpose %arg2 {permutation = array<i64: 0, 2, 1>} : tensor<3x4x5xf32> -> tensor<3x5x4xf32>
// EINSUM-DAG: tfm.matmul %arg5, %arg6 : tensor<4x5xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
// EINSUM-DAG: tfm.reshape %arg7 : tensor<?xf32> -> tensor<?x1xf32>
// RUN: attune-compile %S/Inputs/onnx-ops/einsum.onnx -o %t/einsum.so
// RUN: attune-run %t/einsum.so --input=x=@%S/Inputs/onnx-ops/einsum/inputs/x.npy --input=y=@%S/Inputs/onnx-ops/einsum/inputs/y.npy --input=z=@%S/Inputs/onnx-ops/einsum/inputs/z.npy --input=z2=@%S/Inputs/onnx-ops/einsum/inputs/z2.npy --input=u=@%S/Inputs/onnx-ops/einsum/inputs/u.npy --input=a=@%S/Inputs/onnx-ops/einsum/inputs/a.npy --input=c=@%S/Inputs/onnx-ops/einsum/inputs/c.npy --input=t=@%S/Inputs/onnx-ops/einsum/inputs/t.npy --output=%t/einsum
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/einsum %S/Inputs/onnx-ops/einsum/reference | FileCheck %s --check-prefix=EINSUM-OK
// EINSUM-OK: 9 passed, 0 failed
// RUN: not attune-compile %S/Inputs/onnx-ops/einsum_diagonal.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=EINSUM-DIAG
// EINSUM-DIAG: error: cannot import '{{.*}}einsum_diagonal.onnx': node 'einsum_diagonal' (Einsum) (opset 17): term 'ii' repeats index 'i' (a diagonal or trace), which is not supported
// RUN: not attune-compile %S/Inputs/onnx-ops/einsum_sum.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=EINSUM-SUM
// EINSUM-SUM: error: cannot import '{{.*}}einsum_sum.onnx': node 'einsum_sum' (Einsum) (opset 17): equation 'ij,jk->i' sums over index 'k' of input 1 alone, which is not supported

/// Attention with a cache: past_key/past_value joined with the new keys by
/// tfm.concat (the library computes the joined length), present_key and
/// present_value out. Every length dynamic with fewer new keys than queries:
/// is_causal is a mask, zeros over the past and the triangle over the new
/// keys. One 3-D decoding step (Sq = Sk_new = 1): tfm's causal attribute.
// RUN: attune-compile %S/Inputs/onnx-ops/attention_past.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-PAST
// ATTN-PAST: tfm.concat %arg3, %arg1 {axis = 2 : i64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
// ATTN-PAST: tfm.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// ATTN-PAST: tfm.attention %arg0, %0, %1 mask(%{{.+}} : tensor<?x?xf32>) {scale = 2.500000e-01 : f64}
// RUN: attune-compile %S/Inputs/onnx-ops/attention_past.onnx -o %t/attention_past.so
// RUN: attune-run %t/attention_past.so --input=q=@%S/Inputs/onnx-ops/attention_past/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_past/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_past/inputs/v.npy --input=past_key=@%S/Inputs/onnx-ops/attention_past/inputs/past_key.npy --input=past_value=@%S/Inputs/onnx-ops/attention_past/inputs/past_value.npy --output=%t/attention_past
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_past %S/Inputs/onnx-ops/attention_past/reference | FileCheck %s --check-prefix=OK3
// RUN: attune-compile %S/Inputs/onnx-ops/attention_step.onnx --emit=mlir | FileCheck %s --check-prefix=ATTN-STEP
// ATTN-STEP: tfm.attention {{.+}} {causal = true, scale = 2.500000e-01 : f64} : tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x1x16xf32>
// RUN: attune-compile %S/Inputs/onnx-ops/attention_step.onnx -o %t/attention_step.so
// RUN: attune-run %t/attention_step.so --input=q=@%S/Inputs/onnx-ops/attention_step/inputs/q.npy --input=k=@%S/Inputs/onnx-ops/attention_step/inputs/k.npy --input=v=@%S/Inputs/onnx-ops/attention_step/inputs/v.npy --input=past_key=@%S/Inputs/onnx-ops/attention_step/inputs/past_key.npy --input=past_value=@%S/Inputs/onnx-ops/attention_step/inputs/past_value.npy --output=%t/attention_step
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/attention_step %S/Inputs/onnx-ops/attention_step/reference | FileCheck %s --check-prefix=OK3
// OK3: 3 passed, 0 failed

/// 16-bit floats: FLOAT16 initializers in raw_data and in int32_data, a
/// BFLOAT16 one, Casts to and from FLOAT16, and a tanh GELU recognised from
/// fp16 constants (0.044715 is 0.04471 in fp16). Against ORT with fp16's
/// tolerance: |attune - ort| <= 4e-3 + 4e-3 |ort| (outputs up to 15).
// RUN: attune-compile %S/Inputs/onnx-ops/half_types.onnx --emit=input | FileCheck %s --check-prefix=HALF
// RUN: attune-compile %S/Inputs/onnx-ops/half_types.onnx -o %t/half_types.so
// RUN: attune-run %t/half_types.so --input=x=@%S/Inputs/onnx-ops/half_types/inputs/x.npy --output=%t/half_types
// RUN: python3 %attune_src_root/scripts/compare_npy.py %t/half_types %S/Inputs/onnx-ops/half_types/reference --rtol 4e-3 --atol 4e-3 | FileCheck %s --check-prefix=OK
// HALF-DAG: tfm.weight "w2" : tensor<8x8xbf16>
// HALF-DAG: tfm.weight "bias" : tensor<8xf16>
// HALF-DAG: tfm.weight "w" : tensor<16x8xf16>
// HALF: tfm.cast %arg0 : tensor<?x16xf32> -> tensor<?x16xf16>
// HALF: tfm.linear {{.+}} : tensor<?x16xf16>, tensor<16x8xf16> -> tensor<?x8xf16>
// HALF: tfm.gelu {{.+}} {approximate = #tfm.gelu_approx<tanh>} : tensor<?x8xf16>
// HALF: tfm.cast {{.+}} : tensor<?x8xf16> -> tensor<?x8xf32>
// HALF: tfm.cast {{.+}} : tensor<8x8xbf16> -> tensor<8x8xf32>

// RUN: not attune-compile %S/Inputs/onnx-ops/half_bad_bits.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=HALF-BITS
// HALF-BITS: error: cannot import '{{.*}}half_bad_bits.onnx': initializer 'w': value 1 holds 70000, which is not 16 bits of FLOAT16
