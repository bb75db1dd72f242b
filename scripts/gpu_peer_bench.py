#!/usr/bin/env python3
"""PyTorch on the shapes gpu_benchmark times, in the same run on the same GPU.

The peer for attune's GPU kernels: torch's linear (cuBLASLt underneath),
layer_norm, rms_norm, softmax, erf GELU and add, timed with CUDA events
around 20 back-to-back launches after warm-up; the median of 5 such rounds.
Prints one line per row: TFLOP/s for the linears, GB/s of bytes read plus
written for the rest, and the latency of a GPT-2 block (embedding, learned
positions, pre-norm attention with SDPA, GELU-tanh MLP, final norm: what
examples/gpt2-block computes) at batch 1 in f32 (TF32 off, as attune's f32),
bf16 and f16, beside gpu_benchmark's BM_Model (whose GPT-2 block libraries
are the f32 build and the --precision=bf16 and f16 ones).
"""
import statistics

import torch


def time_ms(fn, repeats=20, rounds=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / repeats)
    return statistics.median(times)


def main():
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    torch.backends.cuda.matmul.allow_tf32 = False
    for dtype, label in ((torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.float32, "f32")):
        for m, k, n in ((4096, 768, 3072), (4096, 3072, 768), (4096, 768, 2304), (512, 768, 3072)):
            if dtype != torch.bfloat16 and m != 4096:
                continue
            x = torch.randn(m, k, device=dev, dtype=dtype)
            w = torch.randn(n, k, device=dev, dtype=dtype)
            ms = time_ms(lambda: torch.nn.functional.linear(x, w))
            print(f"linear/{label}/M:{m}/K:{k}/N:{n}  {2 * m * n * k / ms / 1e9:8.1f} TFLOP/s  {ms * 1e3:8.1f} us")
    x = torch.randn(4096, 768, device=dev, dtype=torch.bfloat16)
    w = torch.randn(3072, 768, device=dev, dtype=torch.bfloat16)
    b = torch.randn(3072, device=dev, dtype=torch.bfloat16)
    ms = time_ms(lambda: torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b), approximate="tanh"))
    print(f"linear+bias+gelu(two kernels)/bf16/M:4096/K:768/N:3072  {2 * 4096 * 3072 * 768 / ms / 1e9:8.1f} TFLOP/s")

    f32 = 4
    tokens, width = 32768, 768
    x = torch.randn(tokens, width, device=dev)
    g = torch.randn(width, device=dev)
    rows = [
        ("layer_norm/768x32768", lambda: torch.nn.functional.layer_norm(x, (width,), g, g), 2 * tokens * width * f32),
        ("rms_norm/768x32768", lambda: torch.nn.functional.rms_norm(x, (width,), g), 2 * tokens * width * f32),
        ("add/768x32768", lambda: torch.add(x, x), 3 * tokens * width * f32),
    ]
    s = torch.randn(12 * 2048, 2048, device=dev)
    rows.append(("softmax/2048x2048x12", lambda: torch.softmax(s, -1), 2 * s.numel() * f32))
    h = torch.randn(16384, 3072, device=dev)
    rows.append(("gelu_erf/3072x16384", lambda: torch.nn.functional.gelu(h), 2 * h.numel() * f32))
    big = torch.empty(1 << 28, device=dev)
    other = torch.empty_like(big)
    rows.append(("copy/1GiB", lambda: other.copy_(big), 2 * big.numel() * f32))
    for name, fn, nbytes in rows:
        ms = time_ms(fn)
        print(f"{name}  {nbytes / ms / 1e6:8.1f} GB/s  {ms * 1e3:8.1f} us")
    block_latency(dev)


def gpt2_block(dev, dtype, vocab=500, width=768, heads=12):
    """examples/gpt2-block in PyTorch: returns f(ids) -> hidden states."""
    F = torch.nn.functional
    r = lambda *shape: (torch.randn(*shape, device=dev) * 0.02).to(dtype)
    wte, wpe = r(vocab, width), r(2048, width)
    ones, zeros = torch.ones(width, device=dev, dtype=dtype), torch.zeros(width, device=dev, dtype=dtype)
    wq, wk, wv, wo = (r(width, width) for _ in range(4))
    bq, bk, bv, bo = (r(width) for _ in range(4))
    fc, fc_b, pr, pr_b = r(4 * width, width), r(4 * width), r(width, 4 * width), r(width)

    def run(ids):
        s = ids.shape[1]
        x = wte[ids] + wpe[:s]
        h = F.layer_norm(x, (width,), ones, zeros)
        split = lambda t: t.view(1, s, heads, width // heads).transpose(1, 2)
        q, k, v = split(F.linear(h, wq, bq)), split(F.linear(h, wk, bk)), split(F.linear(h, wv, bv))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + F.linear(a.transpose(1, 2).reshape(1, s, width), wo, bo)
        h = F.layer_norm(x, (width,), ones, zeros)
        x = x + F.linear(F.gelu(F.linear(h, fc, fc_b), approximate="tanh"), pr, pr_b)
        return F.layer_norm(x, (width,), ones, zeros)

    return run


def block_latency(dev):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for dtype, label in ((torch.float32, "f32"), (torch.bfloat16, "bf16"),
                         (torch.float16, "f16")):
        block = gpt2_block(dev, dtype)
        for seq in (128, 512, 1024, 2048):
            ids = torch.randint(0, 500, (1, seq), device=dev)
            with torch.no_grad():
                ms = time_ms(lambda: block(ids), repeats=10)
            print(f"gpt2_block/{label}/seq:{seq}  {ms:8.3f} ms  {seq / ms * 1e3:10.0f} tokens/s")


if __name__ == "__main__":
    main()
