#!/usr/bin/python3
"""bench/run_trace.py: what tracing costs on /v1/preprocess (docs/tracing.md "Cost").

For machines without wrk (bench/run_http.py's load generator, which has the
same traced case): a closed loop of K Python threads, each on its own
keep-alive connection, POSTing the 1920x1080 q90 photo (DVPP_TESTDATA's
photos/photo1080.jpg, else a synthetic one) to
/v1/preprocess?w=224&h=224&mean=..&std=.. for D seconds. Each round runs,
in rotating order: this tree's dvppd untraced, the same with ?trace=1, and
(with --baseline DVPPD) another build's dvppd untraced (e.g. the commit
before tracing: git worktree add /tmp/dvpp-94f0308 94f0308 && make -C
/tmp/dvpp-94f0308 build/dvppd). Each daemon is started once
({"http":{"threads":2},"device":{"channels":2}}, no socket) and warmed up.
Reported: the median req/s of each case, and the medians of the per-round
ratios traced/untraced and this/baseline. Nothing is asserted.

  /usr/bin/python3 bench/run_trace.py [--rounds 5] [--seconds 4] [--threads 4]
                                      [--baseline /tmp/dvpp-94f0308/build/dvppd]
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DVPP_BUILD", "build")
MEAN, STD = "0.485,0.456,0.406", "0.229,0.224,0.225"
Q_PRE = f"/v1/preprocess?w=224&h=224&mean={MEAN}&std={STD}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def photo():
    p = os.path.join(os.environ.get("DVPP_TESTDATA", os.path.join(ROOT, ".cache", "testdata")),
                     "photos", "photo1080.jpg")
    if os.path.exists(p):
        return open(p, "rb").read(), p
    import cv2
    import numpy as np
    rng = np.random.default_rng(1)
    img = cv2.GaussianBlur(rng.integers(0, 255, (1080, 1920, 3), dtype=np.uint8), (0, 0), 3)
    return cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes(), "synthetic"


def start(exe, tmp, name):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "threads": 2}, "socket": {"path": ""},
           "device": {"channels": 2}}
    path = os.path.join(tmp, f"{name}.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    p = subprocess.Popen([exe, "--config", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return p, port
        except OSError:
            pass
        time.sleep(0.05)
    p.kill()
    raise RuntimeError(f"{exe} did not start")


def load(port, url, body, seconds, threads):
    """req/s of @threads closed loops for @seconds; fails on any non-200."""
    done, bad = [0] * threads, []
    stop = time.monotonic() + seconds

    def loop(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.monotonic() < stop:
            c.request("POST", url, body, {"Content-Type": "image/jpeg"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                bad.append(r.status)
                return
            done[k] += 1
        c.close()

    ts = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if bad:
        raise RuntimeError(f"non-200 answers: {bad[:5]}")
    return sum(done) / (time.monotonic() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--baseline", help="another build's dvppd, run untraced")
    a = ap.parse_args()
    body, src = photo()
    print(f"image: {src}, {len(body):,} B; {a.threads} threads x {a.seconds} s, "
          f"{a.rounds} rounds, {os.cpu_count()} CPUs")
    tmp = tempfile.mkdtemp(prefix="dvpp-trace-bench-")
    procs = {}
    try:
        procs["tree"] = start(os.path.join(ROOT, BUILD, "dvppd"), tmp, "tree")
        if a.baseline:
            procs["baseline"] = start(a.baseline, tmp, "baseline")
        cases = {"untraced": ("tree", Q_PRE), "traced": ("tree", Q_PRE + "&trace=1")}
        if a.baseline:
            cases["baseline"] = ("baseline", Q_PRE)
        for d, url in set(cases.values()):
            load(procs[d][1], url, body, 1.0, a.threads)  # warm-up
        res = {c: [] for c in cases}
        names = list(cases)
        for r in range(a.rounds):
            for c in names[r % len(names):] + names[:r % len(names)]:
                d, url = cases[c]
                res[c].append(load(procs[d][1], url, body, a.seconds, a.threads))
            print(f"  round {r + 1}: " + ", ".join(f"{c} {res[c][-1]:.1f}" for c in names))
        for c in names:
            print(f"{c:<10} median {statistics.median(res[c]):.1f} req/s "
                  f"(min {min(res[c]):.1f}, max {max(res[c]):.1f})")
        tr = [t / u for t, u in zip(res["traced"], res["untraced"])]
        print(f"traced/untraced: median {statistics.median(tr):.3f} "
              f"(rounds: {', '.join(f'{x:.3f}' for x in tr)})")
        if a.baseline:
            br = [u / b for u, b in zip(res["untraced"], res["baseline"])]
            print(f"this tree untraced / baseline: median {statistics.median(br):.3f} "
                  f"(rounds: {', '.join(f'{x:.3f}' for x in br)})")
    finally:
        for p, _ in procs.values():
            p.terminate()
            p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
