#!/usr/bin/python3
"""bench/run_acl.py: the AscendCL layer as an Ascend program uses it, beside
libdvpp called directly and OpenCV, in one run.

`make bench` runs it last, as `DVPP_BUILD=build /usr/bin/python3 bench/run_acl.py`,
after building build/bench/acl_bench (bench/acl_bench.c: libascendcl.so +
libacl_dvpp.so from $DVPP_BUILD/acl, and libdvpp.a for the direct calls).

Rows (profile ascend310, the layer's default; ACL buffers acldvppMalloc'd once):
  (a) JPEG -> NV12         acldvppJpegDecodeAsync + aclrtSynchronizeStream, one stream
                           | dvpp_jpeg_decode direct | cv2.imdecode(IMREAD_COLOR) (BGR)
  (b) + resize 224x224     JpegDecodeAsync + VpcResizeAsync (interpolation 1), one sync
                           | decode + dvpp_vpc_crop_resize_paste | imdecode +
                           cv2.resize(INTER_LINEAR, dst=)
  (c) (b) with N = 1, 2    N streams on N threads (own channel and buffers) | N
                           direct lanes | N Python threads (cv2 releases the GIL)
  (d) one tiny call        VpcResizeAsync 10x6 -> 16x16 + sync vs the direct call, us
acl_bench checks before timing that the layer's bytes equal the direct call's.

Files: .cache/testdata/photos/photo1080.jpg (1920x1080, q90 4:2:0) and two
smaller baseline JPEGs made here, in a temp dir removed at exit, from the same
real photo (IMG_20200608_111614.jpg) the way tests/tools/fetch-test-data makes
photo1080.jpg (Pillow LANCZOS, q90, 4:2:0): 1280x720 (the centred 16:9 crop)
and 640x480 (the whole 4:3 frame).

Placement: (a), (b) and (d, 1 CPU) run pinned to one CPU (BENCH_CPU, default 1):
the layer's engine workers and the calling thread share it, as OpenCV's single
thread does. (c) and (d, 2 CPUs) run on CPUs 0,1. OpenCV: cv2.setNumThreads(1).
OPENBLAS_* and GLIBC_TUNABLES are removed; an extra OpenCV column for (a) and (b)
runs under GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (BENCH_HUGETLB=0: not run), as
bench/run.py quotes both (page faults on a fresh BGR buffer per imdecode).

Method (reference/anchors.md): 2 warm-up calls, a loop calibrated to
BENCH_TARGET s (0.3), BENCH_RUNS runs (5); BENCH_PASSES passes (3) alternate
the groups, the order rotating per pass; the tables give the median images/s of
all runs (min-max) and ratios of medians (> 1: the first is faster). Nothing is
asserted about times; exit 1 only when a measurement cannot run. Raw runs:
$DVPP_BUILD/bench/acl.json. BENCH_QUICK=1: 1 pass, 3 runs, 0.15 s.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import calibrated, clean_env, log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DVPP_BUILD", "build")
PHOTOS = os.path.join(os.environ.get("DVPP_TESTDATA", os.path.join(ROOT, ".cache", "testdata")),
                      "photos")
QUICK = os.environ.get("BENCH_QUICK") == "1"
PASSES = int(os.environ.get("BENCH_PASSES", "1" if QUICK else "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "3" if QUICK else "5"))
TARGET = float(os.environ.get("BENCH_TARGET", "0.15" if QUICK else "0.3"))
HUGETLB = os.environ.get("BENCH_HUGETLB", "1") != "0"
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
THREADS = (1, 2)
SRC_PHOTO = "IMG_20200608_111614.jpg"


# --- peer worker (its own process, Debian's OpenCV) ------------------------------------------

def peer_worker(argv):
    """argv: --threads N, then CASE:FILE items; one JSON line each."""
    import cv2
    import numpy as np

    cv2.setNumThreads(1)
    n = int(argv[1])
    for item in argv[2:]:
        case, path = item.split(":", 1)
        buf = np.frombuffer(open(path, "rb").read(), np.uint8)
        outs = [np.empty((224, 224, 3), np.uint8) for _ in range(n)]

        def step(k, case=case, buf=buf, outs=outs):
            img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
            if img is None:
                raise RuntimeError(f"cv2.imdecode failed on {path}")
            if case == "decode_resize":
                cv2.resize(img, (224, 224), dst=outs[k], interpolation=cv2.INTER_LINEAR)

        if n == 1:
            per, iters = calibrated(lambda: step(0), TARGET, RUNS)
        else:
            _, iters = calibrated(lambda: step(0), TARGET, 1)  # the loop count, on one lane
            for k in range(1, n):
                step(k), step(k)
            per = []
            for _ in range(RUNS):
                go = threading.Barrier(n + 1)

                def lane(k):
                    go.wait()
                    for _ in range(iters):
                        step(k)
                ts = [threading.Thread(target=lane, args=(k,)) for k in range(n)]
                for t in ts:
                    t.start()
                go.wait()
                t0 = time.perf_counter()
                for t in ts:
                    t.join()
                per.append((time.perf_counter() - t0) / (iters * n))
        print(json.dumps({"impl": "cv2", "case": case, "file": path, "threads": n,
                          "iters": iters, "sec": per}), flush=True)


# --- orchestration ---------------------------------------------------------------------------

def make_inputs(tmp):
    """[(label, path)]: photo1080.jpg and the 720p / 480p JPEGs made from its source."""
    src = os.path.join(PHOTOS, SRC_PHOTO)
    p1080 = os.path.join(PHOTOS, "photo1080.jpg")
    for p in (src, p1080):
        if not os.path.isfile(p):
            raise RuntimeError(f"{p} missing (tests/tools/fetch-test-data)")
    script = r"""
import sys
from PIL import Image
src, tmp = sys.argv[1], sys.argv[2]
im = Image.open(src).convert("RGB")
w, h = im.size
ch = w * 9 // 16
top = (h - ch) // 2
im.crop((0, top, w, top + ch)).resize((1280, 720), Image.LANCZOS).save(
    tmp + "/photo720.jpg", "JPEG", quality=90, subsampling=2, progressive=False, optimize=False)
im.resize((640, 480), Image.LANCZOS).save(
    tmp + "/photo480.jpg", "JPEG", quality=90, subsampling=2, progressive=False, optimize=False)
"""
    subprocess.run([PYTHON, "-c", script, src, tmp], check=True, env=clean_env())
    return [("1920x1080", p1080), ("1280x720", os.path.join(tmp, "photo720.jpg")),
            ("640x480", os.path.join(tmp, "photo480.jpg"))]


def cpus(group):
    if not shutil.which("taskset"):
        return []
    n = os.cpu_count() or 1
    one = os.environ.get("BENCH_CPU", "1" if n > 1 else "0")
    return ["taskset", "-c", one if group == "1cpu" else ("0,1" if n > 1 else "0")]


def run_json(argv, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env or clean_env())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def acl_jobs(exe, files):
    """(group, column tag, argv) for every acl_bench process of a pass."""
    common = [exe, "--target", str(TARGET), "--runs", str(RUNS)]
    paths = [p for _, p in files]
    jobs = [("1cpu", "", cpus("1cpu") + common + ["--case", "tiny", "--case", "decode",
                                                 "--case", "decode_resize"] + paths),
            ("2cpu", "", cpus("2cpu") + common + ["--case", "tiny"])]
    for n in THREADS:
        jobs.append(("2cpu", "", cpus("2cpu") + common + ["--threads", str(n), "--case",
                                                         "decode_resize"] + paths))
    return jobs


def peer_jobs(files):
    me = os.path.abspath(__file__)
    one = [f"{c}:{p}" for c in ("decode", "decode_resize") for _, p in files]
    jobs = [("1cpu", "", cpus("1cpu") + [PYTHON, me, "--peer-worker", "--threads", "1"] + one)]
    if HUGETLB:
        jobs.append(("1cpu", "huge", cpus("1cpu") + [PYTHON, me, "--peer-worker", "--threads",
                                                     "1"] + one))
    for n in THREADS:
        jobs.append(("2cpu", "", cpus("2cpu") + [PYTHON, me, "--peer-worker", "--threads", str(n)]
                     + [f"decode_resize:{p}" for _, p in files]))
    return jobs


def collect(files):
    exe = os.path.join(ROOT, BUILD, "bench", "acl_bench")
    if not os.access(exe, os.X_OK):
        raise RuntimeError(f"{exe} missing (make BUILD={BUILD} {BUILD}/bench/acl_bench)")
    jobs = acl_jobs(exe, files) + peer_jobs(files)
    huge_env = dict(clean_env(), GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    pooled = {}
    for p in range(PASSES):
        k = p % len(jobs)
        order = jobs[k:] + jobs[:k]
        log(f"pass {p + 1}/{PASSES}: {len(order)} processes")
        for group, tag, argv in order:
            for j in run_json(argv, huge_env if tag == "huge" else None):
                key = (j["impl"] + (f"+{tag}" if tag else ""), j["case"],
                       os.path.basename(j["file"]), group, j["threads"])
                pooled.setdefault(key, []).extend(j["sec"])
    return pooled


def med_rate(pooled, key):
    s = pooled.get(key)
    return (1 / statistics.median(s), 1 / max(s), 1 / min(s)) if s else None


def fmt(r):
    return f"{r[0]:,.1f} ({r[1]:,.0f}-{r[2]:,.0f})" if r else "-"


def ratio(a, b):
    return f"{a[0] / b[0]:.2f}x" if a and b else "-"


def report(pooled, files):
    names = [(label, os.path.basename(p)) for label, p in files]
    print(f"\nAscendCL layer (profile ascend310), {PASSES} passes x {RUNS} runs, median "
          "images/s (min-max); ratios of medians")
    print("\n(a, b) one stream, pinned to one CPU (the layer's workers share it)")
    head = (f"{'row':<34} {'ACL':>20} {'direct':>20} {'OpenCV':>20} {'ACL/dir':>8} "
            f"{'ACL/cv2':>8}" + (f" {'OpenCV hugetlb':>20} {'ACL/cv2h':>8}" if HUGETLB else ""))
    print(head)
    for case, what in (("decode", "decode -> NV12 | BGR"),
                       ("decode_resize", "+ resize 224 NV12 | BGR")):
        for label, f in names:
            a = med_rate(pooled, ("acl", case, f, "1cpu", 1))
            d = med_rate(pooled, ("direct", case, f, "1cpu", 1))
            c = med_rate(pooled, ("cv2", case, f, "1cpu", 1))
            line = (f"{label + ' ' + what:<34} {fmt(a):>20} {fmt(d):>20} {fmt(c):>20} "
                    f"{ratio(a, d):>8} {ratio(a, c):>8}")
            if HUGETLB:
                h = med_rate(pooled, ("cv2+huge", case, f, "1cpu", 1))
                line += f" {fmt(h):>20} {ratio(a, h):>8}"
            print(line)
    print("\n(c) decode + resize 224, N streams on N threads (ACL), N lanes (direct), "
          "N Python threads (OpenCV), CPUs 0,1")
    print(f"{'file, N':<20} {'ACL':>20} {'direct':>20} {'OpenCV':>20} {'ACL/dir':>8} "
          f"{'ACL/cv2':>8} {'ACL N2/N1':>10} {'cv2 N2/N1':>10}")
    for label, f in names:
        r1 = {i: med_rate(pooled, (i, "decode_resize", f, "2cpu", 1))
              for i in ("acl", "direct", "cv2")}
        for n in THREADS:
            r = {i: med_rate(pooled, (i, "decode_resize", f, "2cpu", n))
                 for i in ("acl", "direct", "cv2")}
            sc = (f"{ratio(r['acl'], r1['acl']):>10} {ratio(r['cv2'], r1['cv2']):>10}"
                  if n > 1 else f"{'':>10} {'':>10}")
            print(f"{label + ', ' + str(n):<20} {fmt(r['acl']):>20} {fmt(r['direct']):>20} "
                  f"{fmt(r['cv2']):>20} {ratio(r['acl'], r['direct']):>8} "
                  f"{ratio(r['acl'], r['cv2']):>8} {sc}")
    print("\n(d) one VpcResizeAsync 10x6 -> 16x16 NV12 + aclrtSynchronizeStream vs the direct "
          "call: median us per call (min-max)")
    print(f"{'placement':<12} {'ACL us':>22} {'direct us':>22} {'overhead us':>12}")
    for group, label in (("1cpu", "1 CPU"), ("2cpu", "CPUs 0,1")):
        a, d = pooled.get(("acl", "tiny", "", group, 1)), pooled.get(("direct", "tiny", "",
                                                                       group, 1))
        if not a or not d:
            continue
        us = [statistics.median(a) * 1e6, min(a) * 1e6, max(a) * 1e6]
        ud = [statistics.median(d) * 1e6, min(d) * 1e6, max(d) * 1e6]
        print(f"{label:<12} {us[0]:>8.2f} ({us[1]:.2f}-{us[2]:.2f}) {ud[0]:>8.2f} "
              f"({ud[1]:.2f}-{ud[2]:.2f}) {us[0] - ud[0]:>12.2f}")
    print("ACL and direct write the same NV12 bytes (checked before timing); OpenCV writes "
          "BGR (imdecode) and a 224x224 BGR resize.")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--peer-worker":
        peer_worker(sys.argv[2:])
        return 0
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="dvpp-acl-bench.")
    try:
        files = make_inputs(tmp)
        pooled = collect(files)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"run_acl.py: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(pooled, files)
    out = os.path.join(ROOT, BUILD, "bench", "acl.json")
    with open(out, "w") as f:
        json.dump({"passes": PASSES, "runs": RUNS, "target_s": TARGET,
                   "runs_s": [{"impl": k[0], "case": k[1], "file": k[2], "cpus": k[3],
                               "threads": k[4], "sec": v} for k, v in sorted(pooled.items())]},
                  f, indent=1)
    print(f"\nraw runs: {out} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
