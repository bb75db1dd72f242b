// A cold compile says how far its kernels are once they take over 2 s
// (--progress; by default only when stderr is a terminal); a warm one
// finishes its kernels before that and says nothing. The GPT-2 block's 8
// kernels, runtime and support code on one thread take 5-8 s cold on the
// CPUs this project runs on.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --kernel-cache=%t/cache -j1 --progress -o %t/a.so 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --kernel-cache=%t/cache -j1 --progress -o %t/a.so 2>&1 | FileCheck %s --check-prefix=WARM --allow-empty
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --no-kernel-cache -j1 -o %t/b.so 2>&1 | FileCheck %s --check-prefix=WARM --allow-empty

// COLD: attune-compile: kernels {{[0-9]+}}/10 ready, {{[0-9]+}} compiled, {{[0-9.]+}} s
// COLD: attune-compile: kernels 10/10 ready, 10 compiled, {{[0-9.]+}} s
// WARM-NOT: kernels
