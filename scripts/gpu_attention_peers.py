#!/usr/bin/env python3
"""The peers issue 10's fused GPU attention is measured against, on this GPU.

PyTorch's scaled_dot_product_attention with each of its back-ends (cuDNN,
flash, memory-efficient) forced in turn, bf16, non-causal and causal, at
S = 512 ... 16k and D = 64 and 128, with batch x heads filling the GPU as
FlashAttention's own benchmark does (batch = 16384 / S, heads = 2048 / D);
the same in f16 at D = 128 (gpu_attention_benchmark's bench128_f16); then decode (one query against Sk = 8k ... 128k keys) beside the time to read
K and V once at the bandwidth of a device copy measured in the same run.

TFLOP/s counts 4·B·H·S²·D per forward (half when causal). Times are the
median of 5 rounds of CUDA events around 20 calls, after warm-up
(gpu_peer_bench.time_ms). A back-end that refuses a shape prints why. The
whole grid ran in well under a minute on an H200; --quick runs two prefill
rows and one decode row:

    python3 scripts/gpu_attention_peers.py [--quick]
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_peer_bench import time_ms  # beside this file, here and in gpu-bundle/


BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def prefill(lengths, dims, dtype=torch.bfloat16):
    print(f"prefill, {'f16' if dtype == torch.float16 else 'bf16'}: TFLOP/s per back-end")
    print(f"{'S':>6} {'D':>4} {'causal':>6} {'B':>4} {'H':>4} " +
          " ".join(f"{name:>10}" for name, _ in BACKENDS))
    for d in dims:
        for s in lengths:
            b, h = max(1, 16384 // s), 2048 // d
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
            for causal in (False, True):
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                cells = []
                for _, backend in BACKENDS:
                    try:
                        with sdpa_kernel([backend]):
                            ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                        cells.append(f"{flops / ms / 1e9:10.1f}")
                    except RuntimeError as error:  # the back-end refuses the shape
                        cells.append(f"{'n/a':>10}")
                        reason = str(error).splitlines()[0][:100]
                        print(f"  ({backend.name} at S={s} D={d}: {reason})")
                print(f"{s:>6} {d:>4} {int(causal):>6} {b:>4} {h:>4} " + " ".join(cells))
            del q, k, v
            torch.cuda.empty_cache()


def decode(lengths):
    big = torch.empty(1 << 28, device="cuda")
    other = torch.empty_like(big)
    copy = 2 * big.numel() * 4 / (time_ms(lambda: other.copy_(big)) / 1e3)
    del big, other
    print(f"decode, bf16, 1 query, B=1, H=32, D=128 (device copy: {copy / 1e9:.0f} GB/s)")
    print(f"{'Sk':>7} {'read K,V us':>12} " + " ".join(f"{name + ' us':>13}" for name, _ in BACKENDS))
    for sk in lengths:
        h, d = 32, 128
        q = torch.randn(1, h, 1, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(1, h, sk, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        floor_us = 2 * sk * h * d * 2 / copy * 1e6
        cells = []
        for _, backend in BACKENDS:
            try:
                with sdpa_kernel([backend]):
                    ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v))
                cells.append(f"{ms * 1e3:13.1f}")
            except RuntimeError:
                cells.append(f"{'n/a':>13}")
        print(f"{sk:>7} {floor_us:12.1f} " + " ".join(cells))
        del q, k, v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="S = 2k and 8k, D = 128, Sk = 32k only")
    args = parser.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    if args.quick:
        prefill([2048, 8192], [128])
        prefill([8192], [128], torch.float16)
        decode([32768])
    else:
        prefill([512, 1024, 2048, 4096, 8192, 16384], [64, 128])
        prefill([512, 1024, 2048, 4096, 8192, 16384], [128], torch.float16)
        decode([8192, 32768, 131072])


if __name__ == "__main__":
    main()
