// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --kernel-cache=%t/cache-a -j2 -o %t/a.so
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --kernel-cache=%t/cache-b -j2 -o %t/b.so
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --kernel-cache=%t/cache-a -j1 -o %t/warm.so
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --no-kernel-cache -j1 -o %t/serial.so
// RUN: cmp %t/a.so %t/b.so
// RUN: cmp %t/a.so %t/warm.so
// RUN: cmp %t/a.so %t/serial.so
// RUN: cmp %t/a.a %t/b.a
// RUN: cmp %t/a.a %t/serial.a
// RUN: diff -r %t/cache-a %t/cache-b

/// Reproducible builds: the GPT-2 block compiled into two empty kernel
/// caches on two threads, from the warm cache on one, and with no cache,
/// gives byte-identical libraries and archives, and the two caches hold the
/// same objects. (Halide names what it generates from process-wide
/// counters; each kernel is compiled in a child process forked from the
/// same state, see buildKernelObjects. Before, a pair of such builds
/// differed in 4 of the 9 cached objects.)
