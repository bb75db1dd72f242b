#!/usr/bin/env python3
"""Prints fused vs unfused attention side by side from attention_benchmark's JSON.

  build/bin/attention_benchmark --benchmark_repetitions=3 --benchmark_min_time=0.3 \
      --benchmark_report_aggregates_only=true --benchmark_out=attn.json --benchmark_out_format=json
  scripts/attention_table.py attn.json
"""
import json
import re
import sys

NAME = re.compile(r"BM_Attention/(fused|unfused)/S:(\d+)/D:(\d+)/causal:(\d)/T:(\d+)")


def main(path):
    runs = json.load(open(path))["benchmarks"]
    rows = {}
    for run in runs:
        if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
            continue
        m = NAME.match(run["name"])
        if not m:
            continue
        variant, s, d, causal, t = m.groups()
        key = (int(t), int(causal), int(d), int(s))
        # peak_fraction: against the FMA peak of the ISA the run used
        # (absent from JSON written before the benchmark measured it).
        rows.setdefault(key, {})[variant] = (run["real_time"], run["GFLOPs"],
                                             run.get("peak_fraction", float("nan")))
    context = json.load(open(path)).get("context", {})
    if "attune_isa" in context:
        print(f"ISA {context['attune_isa']}, FMA peak {context['peak_GFLOPs_per_thread']} "
              "GFLOP/s per thread")
    print("| T | causal | D | S | fused ms | fused GFLOP/s | unfused ms | unfused GFLOP/s "
          "| fused/unfused | fused peak_fraction | unfused peak_fraction |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (t, causal, d, s), v in sorted(rows.items()):
        if "fused" not in v or "unfused" not in v:
            continue
        (fm, fg, fp), (um, ug, up) = v["fused"], v["unfused"]
        print(f"| {t} | {causal} | {d} | {s} | {fm:.3f} | {fg:.1f} | {um:.3f} | {ug:.1f} "
              f"| {um / fm:.2f}x | {fp:.2f} | {up:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
