"""The driver's side of each engine: attune through its command-line tools (attune-compile,
attune-run, model_benchmark: a process per burst), the peers through compare_lib/worker.py
processes, IREE's ahead-of-time compiles, and the peers' installs into the venv."""
import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "worker.py")
NAMES = {"attune": "attune", "ort": "ONNX Runtime", "torch": "PyTorch", "iree": "IREE"}


def log(*args):
    print("compare:", *args, file=sys.stderr, flush=True)


def first_line(text):
    lines = [l.strip() for l in str(text).strip().splitlines() if l.strip()]
    return lines[0] if lines else "(no message)"


def last_line(text):
    lines = [l.strip() for l in str(text).strip().splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


class EngineMissing(Exception):
    """An engine cannot run a model (or a row): the message is the reason the table gives."""


def file_key(path):
    st = os.stat(path)
    return [os.path.realpath(path), st.st_size, int(st.st_mtime)]


def digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def cached(path, key):
    stamp = path + ".key"
    try:
        return os.path.exists(path) and open(stamp).read() == key
    except OSError:
        return False


def stamp(path, key):
    with open(path + ".key", "w") as f:
        f.write(key)


# ------------------------------------------------------------------------------------------
# Installing the peers

def ensure_packages(python, packages, probe, install):
    """None when `probe` (Python source) runs in the venv, after pip-installing `packages` if
    needed and allowed; otherwise the reason (the failing import's or pip's last line)."""
    def try_import():
        r = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        return None if r.returncode == 0 else last_line(r.stderr)
    reason = try_import()
    if reason is None or not install:
        return reason
    log("installing %s into the venv (pip, from PyPI)" % " ".join(packages))
    r = subprocess.run([python, "-m", "pip", "install", "-q"] + packages,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "pip install %s failed: %s" % (" ".join(packages), last_line(r.stderr))
    return try_import()


# ------------------------------------------------------------------------------------------
# attune

class Attune:
    """attune's tools at one precision: "f32" (attune-compile's default) or "bf16"
    (--precision=bf16: the linear layers multiply bf16 weights by bf16-rounded inputs and
    accumulate in f32, the rest is f32). A bf16 library is cached under a name of its own."""

    def __init__(self, bin_dir, cache_dir, env, precision="f32"):
        self.bin = bin_dir
        self.precision = precision
        self.flags = [] if precision == "f32" else ["--precision=" + precision]
        self.compiler = os.path.join(bin_dir, "attune-compile")
        self.runner = os.path.join(bin_dir, "attune-run")
        self.bench = os.path.join(bin_dir, "model_benchmark")
        self.cache = cache_dir
        self.env = env
        # The library holds every ISA variant; ATTUNE_CPU picks one at run time, so the
        # compile does not depend on it and the cache serves both.
        self.compile_env = {k: v for k, v in env.items() if k != "ATTUNE_CPU"}
        for tool in (self.compiler, self.runner, self.bench):
            if not os.path.exists(tool):
                raise EngineMissing("%s is missing (build it, or pass --bin)" % tool)

    def version(self):
        r = subprocess.run([self.compiler, "--version"], capture_output=True, text=True,
                           env=self.env)
        return first_line(r.stdout or r.stderr)

    def compile(self, source, source_key, name, kernel_cache):
        """attune-compile SOURCE (a checkpoint folder or an .mlir file) into a library,
        cached under build/compare-models/attune/ while the compiler and source are unchanged."""
        os.makedirs(self.cache, exist_ok=True)
        suffix = "" if self.precision == "f32" else "_" + self.precision
        lib = os.path.join(self.cache, "lib%s%s.so" % (name, suffix))
        # f32's key is the one it had before there were precisions (its cache stays valid)
        key = digest([file_key(self.compiler), source_key] + ([self.flags] if self.flags else []))
        if cached(lib, key):
            return lib, None
        cmd = [self.compiler, source, "-o", lib, "--kernel-cache=" + kernel_cache] + self.flags
        log("+ " + " ".join(cmd))
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.compile_env)
        seconds = time.perf_counter() - start
        if r.returncode != 0:
            raise EngineMissing("attune-compile failed: " + first_line(r.stderr or r.stdout))
        for extra in (lib[:-3] + ".a",):  # the static library is not used here
            if os.path.exists(extra):
                os.remove(extra)
        stamp(lib, key)
        return lib, seconds

    def outputs(self, lib, feeds, tmp):
        """One run with attune-run (one thread): {output name: array}."""
        import numpy as np
        d = tempfile.mkdtemp(prefix="attune-run-", dir=tmp)
        cmd = [self.runner, lib, "--num-threads=1", "--output=" + os.path.join(d, "out")]
        for name, x in feeds.items():
            path = os.path.join(d, name + ".npy")
            np.save(path, x)
            cmd.append("--input=%s=@%s" % (name, path))
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            shutil.rmtree(d, ignore_errors=True)
            raise EngineMissing("attune-run failed: " + first_line(r.stderr or r.stdout))
        out_dir = os.path.join(d, "out")
        outs = {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir)}
        shutil.rmtree(d, ignore_errors=True)
        return outs

    def burst(self, lib, dims, threads, min_time):
        """One model_benchmark process: (ms per run, the ISA attune ran at)."""
        cmd = [self.bench, lib] + ["--dim=%s=%d" % kv for kv in dims] + [
            "--threads=%d" % threads, "--benchmark_min_time=%g" % min_time,
            "--benchmark_format=json"]
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise EngineMissing("model_benchmark failed: " + last_line(r.stderr or r.stdout))
        data = json.loads(r.stdout)
        rows = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"
                and b["name"].startswith("BM_Model/")]
        if len(rows) != 1:
            raise EngineMissing("model_benchmark gave %d rows" % len(rows))
        row = rows[0]
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[row["time_unit"]]
        isa = sorted({v for k, v in data["context"].items() if k.startswith("attune_isa:")})
        return row["real_time"] * scale, "/".join(isa), " ".join(cmd)


# ------------------------------------------------------------------------------------------
# The peers' worker processes

def proc_cpu_seconds(pid):
    """utime + stime of a process (all its threads), from /proc; 0 when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Worker:
    """A compare_lib/worker.py process running one peer engine at one thread count."""

    def __init__(self, engine, spec, python, env, log_path, timeout):
        self.engine, self.timeout = engine, timeout
        self.log_path = log_path
        wenv = dict(env)
        t = str(spec["threads"])
        # Thread pools sized by the row's thread count: OpenMP (PyTorch), MKL; ORT and IREE
        # are set through their APIs in the worker.
        wenv.update(OMP_NUM_THREADS=t, MKL_NUM_THREADS=t, TOKENIZERS_PARALLELISM="false")
        if avx2_only(env):
            wenv.update(TORCH_AVX2_ENV)
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen([python, WORKER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=wenv)
        self.pid = self.proc.pid
        reply = self.request({"op": "load", "engine": engine, "spec": spec})
        self.version = reply.get("version", "")

    def tail(self):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - 4000))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def request(self, msg, timeout=None):
        if self.proc.poll() is not None:
            raise EngineMissing("%s worker exited (%s): %s" % (
                NAMES[self.engine], self.proc.returncode, last_line(self.tail())))
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout or self.timeout)
        if not ready:
            self.kill()
            raise EngineMissing("%s: no answer to %s within %d s (killed)" % (
                NAMES[self.engine], msg["op"], timeout or self.timeout))
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            how = "killed by signal %d" % -code if code < 0 else "exit status %d" % code
            raise EngineMissing("%s worker died (%s) during %s; its last words: %s" % (
                NAMES[self.engine], how, msg["op"], last_line(self.tail())))
        reply = json.loads(line)
        if "error" in reply:
            raise EngineMissing(reply["error"])
        return reply

    def cpu_seconds(self):
        return proc_cpu_seconds(self.pid)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.kill()
        self.log.close()


# ------------------------------------------------------------------------------------------
# IREE's ahead-of-time compile

IREE_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
              "--iree-llvmcpu-target-cpu=host"]
# With ATTUNE_CPU=avx2 the peers are held to AVX2 where they can be: IREE compiles for Zen 3
# (AVX2 + FMA, no AVX-512), PyTorch's own kernels, oneDNN and MKL are capped by their
# variables. ONNX Runtime's MLAS picks its kernels from CPUID and has no such switch: it keeps
# AVX-512 on a machine that has it, which the report says.
IREE_AVX2_CPU = "znver3"
TORCH_AVX2_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                  "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def avx2_only(env):
    return env.get("ATTUNE_CPU", "").lower() == "avx2"


def iree_flags(env):
    if not avx2_only(env):
        return IREE_FLAGS
    return [f if not f.startswith("--iree-llvmcpu-target-cpu=") else
            "--iree-llvmcpu-target-cpu=" + IREE_AVX2_CPU for f in IREE_FLAGS]
# Tried first; where a model does not compile with it (MiniLM's LayerNormalization did not,
# IREE 3.13), the default level is used instead.
IREE_O3 = ["--iree-opt-level=O3"]


def iree_version(venv_bin):
    r = subprocess.run([os.path.join(venv_bin, "iree-compile"), "--version"],
                       capture_output=True, text=True)
    m = re.search(r"IREE compiler version (\S+)", r.stdout + r.stderr)
    return m.group(1) if m else "?"


def iree_compile(venv_bin, write_onnx, source_key, out_path, tmp, flags=IREE_FLAGS):
    """A .vmfb for one static-shape ONNX graph (write_onnx(path) writes it) compiled with
    `flags`, cached while the source, the compiler and the flags are unchanged. Returns (path,
    opt level, seconds or None when cached)."""
    version = iree_version(venv_bin)
    key = digest([source_key, version, flags, IREE_O3])
    if cached(out_path, key):
        with open(out_path + ".level") as f:
            return out_path, f.read().strip(), None
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    d = tempfile.mkdtemp(prefix="iree-", dir=tmp)
    start = time.perf_counter()
    try:
        onnx_path, mlir = os.path.join(d, "model.onnx"), os.path.join(d, "model.mlir")
        write_onnx(onnx_path)
        r = subprocess.run([os.path.join(venv_bin, "iree-import-onnx"), onnx_path, "-o", mlir],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise EngineMissing("iree-import-onnx failed: " + _iree_error(r.stderr))
        os.remove(onnx_path)
        errors = []
        for level, extra in (("O3", IREE_O3), ("default", [])):
            cmd = [os.path.join(venv_bin, "iree-compile"), mlir] + flags + extra + [
                "-o", out_path + ".tmp"]
            log("+ iree-compile %s %s" % (os.path.basename(out_path), " ".join(flags + extra)))
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0:
                os.replace(out_path + ".tmp", out_path)
                with open(out_path + ".level", "w") as f:
                    f.write(level)
                stamp(out_path, key)
                return out_path, level, time.perf_counter() - start
            errors.append("%s: %s" % (level, _iree_error(r.stderr)))
        raise EngineMissing("iree-compile failed: " + "; ".join(errors))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _iree_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()[:300]
    return last_line(stderr)[:300]
