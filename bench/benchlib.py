"""Shared pieces of the bench/run_*.py scripts and bench/soak.py: timing
(reference/anchors.md method), logging, the environment daemons and peers
run with, free ports."""
import os
import socket
import time


def log(msg):
    print(msg, flush=True)


def clean_env():
    """The environment for the programs a benchmark starts: without the
    tuning variables a caller's shell may set for its own numpy."""
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GLIBC_TUNABLES"):
        env.pop(k, None)
    return env


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def calibrated(fn, target, runs, warm=2, probe=0.2):
    """@warm warm-up calls, a loop count doubling until one probe takes
    min(@probe, @target) seconds, scaled to ~@target seconds per run, then
    @runs timed runs. Returns (seconds per call of each run, loop count)."""
    for _ in range(warm):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min(probe, target):
            break
        n *= 2
    iters = max(1, int(round(n * target / dt)))
    per = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        per.append((time.perf_counter() - t0) / iters)
    return per, iters
