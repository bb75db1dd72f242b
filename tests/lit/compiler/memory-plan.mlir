// RUN: rm -rf %t && attune-compile %attune_src_root/examples/gpt2-block/block.mlir --dump-phases-to=%t -o %t.so && FileCheck %s --input-file=%t/10-memory-plan.txt
// RUN: attune-run %t.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=RESULT

/// The GPT-2 example's memory plan: the first residual add and the GELU
/// overwrite an input they read for the last time (element-wise kernels,
/// same view; the second residual add is the final norm's residual,
/// tfm-fuse-residual-norm, and stores nothing), so the block needs five slots, four of 3072 bytes per token
/// (a 768-float row) and one of 12288 (the MLP's 3072-float row): 24576
/// bytes per token, against 18432 in the largest set of intermediates alive
/// at once (the residual stream, the second norm's output and the MLP's
/// first linear), 1.33x. The library reports that size for 2 x 37 tokens
/// and still matches the reference evaluator.

// CHECK:      slot 0: bytes = 3072*batch*seq
// CHECK-NEXT: slot 1: bytes = 3072*batch*seq
// CHECK-NEXT: slot 2: bytes = 12288*batch*seq
// CHECK-NEXT: slot 3: bytes = 3072*batch*seq
// CHECK-NEXT: slot 4: bytes = 3072*batch*seq
// CHECK-NOT:  slot 5
// CHECK:      (tfm.add): slot {{[0-9]}}, bytes 3072*batch*seq, live calls 8..13, in place of
// CHECK:      (tfm.gelu): slot {{[0-9]}}, bytes 12288*batch*seq, live calls 11..12, in place of
// CHECK-NOT:  (tfm.add)

// RESULT: workspace: 1818624 bytes
// RESULT: (|err| <= {{.+}}: ok)
