"""Shared timing for the bench/run_*.py scripts (reference/anchors.md method)."""
import time


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
