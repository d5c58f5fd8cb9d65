#!/usr/bin/python3
"""dvpp_norm beside numpy and cv2.dnn.blobFromImage, in one run.

    DVPP_BUILD=build /usr/bin/python3 bench/run_norm.py

Runs build/bench/bench_norm (224x224x3 u8 HWC -> f32 NCHW with ImageNet
mean/std, -> f16 NC1HWC0, -> f32 NHWC, and memcpy of the same output bytes)
and, pinned the same way (taskset -c 1, the only CPU if there is one),
a Python worker timing the peers on the same image:
  numpy fused   preallocated out=: np.copyto(out, hwc.transpose, unsafe),
                np.multiply(out, scale, out), np.add(out, bias, out) (f32
                scale = 1/(255 std), bias =
                -mean/std; for NC1HWC0 the same into a f32 scratch, then
                cast into lanes 0..2 of a preallocated zeroed f16 array)
  numpy plain   the usual expression, ((x.astype(f32) / 255 - mean) / std)
                .transpose(2, 0, 1) made contiguous (allocates)
  blobFromImage cv2.dnn.blobFromImage(img, 1/255, mean=255*mean), then
                blob /= std (cv2.setNumThreads(1))
Method (reference/anchors.md): 2 warm-ups, a loop calibrated to about 0.5 s,
7 timed runs, median; GB/s of OUTPUT bytes. Knobs: BENCH_RUNS, BENCH_TARGET,
BENCH_PASSES (passes pooled, dvppd and peers alternating), BENCH_CPU.
Nothing here judges a time.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from benchlib import calibrated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DVPP_BUILD", "build")
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
TARGET = float(os.environ.get("BENCH_TARGET", "0.5"))
# 2: each side runs first once (passes alternate who starts)
PASSES = int(os.environ.get("BENCH_PASSES", "2"))

W = H = 224
F32_BYTES = 3 * W * H * 4            # 602,112
F16C0_BYTES = W * H * 16 * 2         # 1,605,632

# (label, dvppd case, memcpy case, output bytes, [(peer label, peer case)])
ROWS = [
    ("u8 HWC -> f32 NCHW (ImageNet)", "f32_nchw", "memcpy_f32", F32_BYTES,
     [("numpy fused", "np_fused_nchw"), ("numpy plain", "np_plain_nchw"),
      ("blobFromImage", "cv2_blob_nchw")]),
    ("u8 HWC -> f16 NC1HWC0 (ImageNet)", "f16_nc1hwc0", "memcpy_f16c0", F16C0_BYTES,
     [("numpy fused", "np_fused_c0"), ("numpy plain", "np_plain_c0")]),
    ("u8 HWC -> f32 NHWC (ImageNet)", "f32_nhwc", "memcpy_f32", F32_BYTES,
     [("numpy fused", "np_fused_nhwc"), ("numpy plain", "np_plain_nhwc")]),
]
PEER_LABELS = ["numpy fused", "numpy plain", "blobFromImage"]


def image():
    """The bench_norm source: byte i = i*7 + i/5791 (mod 256)."""
    import numpy as np
    i = np.arange(3 * W * H, dtype=np.uint64)
    return ((i * 7 + i // 5791) % 256).astype(np.uint8).reshape(H, W, 3)


def peer_worker(cases):
    import cv2
    import numpy as np

    cv2.setNumThreads(1)
    img = image()
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    scale = (1.0 / (255.0 * std.astype(np.float64))).astype(np.float32)
    bias = (-mean.astype(np.float64) / std).astype(np.float32)
    chw = np.empty((3, H, W), np.float32)
    hwc = np.empty((H, W, 3), np.float32)
    c0 = np.zeros((1, 1, H, W, 16), np.float16)
    s3 = scale[:, None, None]
    b3 = bias[:, None, None]

    # copyto first: faster than letting np.multiply cast u8 (measured).
    def np_fused_nchw():
        np.copyto(chw, img.transpose(2, 0, 1), casting="unsafe")
        np.multiply(chw, s3, out=chw)
        np.add(chw, b3, out=chw)
        return chw

    def np_fused_nhwc():
        np.copyto(hwc, img, casting="unsafe")
        np.multiply(hwc, scale, out=hwc)
        np.add(hwc, bias, out=hwc)
        return hwc

    def np_fused_c0():
        np_fused_nhwc()
        c0[0, 0, :, :, :3] = hwc
        return c0

    def np_plain_nchw():
        return np.ascontiguousarray(((img.astype(np.float32) / 255 - mean) / std)
                                    .transpose(2, 0, 1))

    def np_plain_nhwc():
        return (img.astype(np.float32) / 255 - mean) / std

    def np_plain_c0():
        out = np.zeros((1, 1, H, W, 16), np.float16)
        out[0, 0, :, :, :3] = (img.astype(np.float32) / 255 - mean) / std
        return out

    std4 = std.reshape(1, 3, 1, 1)
    mean255 = tuple(float(m) * 255.0 for m in mean)

    def cv2_blob_nchw():
        blob = cv2.dnn.blobFromImage(img, 1.0 / 255, (W, H), mean255, False, False)
        blob /= std4
        return blob

    fns = {f.__name__: f for f in (np_fused_nchw, np_fused_nhwc, np_fused_c0, np_plain_nchw,
                                   np_plain_nhwc, np_plain_c0, cv2_blob_nchw)}
    for c in cases:
        per, _ = calibrated(fns[c], TARGET, RUNS, probe=min(0.05, TARGET / 10))
        print(json.dumps({"case": c, "sec": per}), flush=True)


def pin():
    cpu = os.environ.get("BENCH_CPU", "1" if (os.cpu_count() or 1) > 1 else "0")
    return ["taskset", "-c", cpu] if shutil.which("taskset") else []


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("OPENBLAS_") or k == "GLIBC_TUNABLES":
            env.pop(k)
    return env


def run_dvppd(cases):
    exe = os.path.join(ROOT, BUILD, "bench", "bench_norm")
    argv = pin() + [exe, "--target", str(TARGET), "--runs", str(RUNS)]
    for c in cases:
        argv += ["--case", c]
    out = subprocess.run(argv, capture_output=True, text=True, check=True,
                         env=clean_env()).stdout
    return {j["case"]: j for j in map(json.loads, filter(None, out.splitlines()))}


def run_peers(cases):
    out = subprocess.run(pin() + [sys.executable, os.path.abspath(__file__), "--peer-worker",
                                  *cases], capture_output=True, text=True, check=True,
                         env=clean_env()).stdout
    return {j["case"]: j for j in map(json.loads, filter(None, out.splitlines()))}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--peer-worker":
        peer_worker(sys.argv[2:])
        return 0
    ours_cases = []
    for r in ROWS:
        for c in (r[1], r[2]):
            if c not in ours_cases:
                ours_cases.append(c)
    ours = {c: [] for c in ours_cases}
    peers = {p[1]: [] for r in ROWS for p in r[4]}
    level = "?"
    for p in range(PASSES):
        order = ["dvppd", "peers"] if p % 2 == 0 else ["peers", "dvppd"]
        for who in order:
            if who == "dvppd":
                for c, j in run_dvppd(ours_cases).items():
                    ours[c] += j["runs"]
                    if not c.startswith("memcpy"):
                        level = j.get("level", level)
            else:
                for c, j in run_peers(list(peers)).items():
                    peers[c] += j["sec"]

    def cell(v):
        return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-"

    print(f"\ndvpp_norm 224x224x3, single thread, SIMD {level}, {PASSES} pass(es) x {RUNS} "
          "runs, median GB/s of output bytes (min-max)")
    head = (f"{'case':<36} {'dvppd':>20} {'memcpy':>20} " +
            " ".join(f"{lbl:>20}" for lbl in PEER_LABELS) +
            f" {'/memcpy':>8} " + " ".join(f"{'/' + lbl:>14}" for lbl in PEER_LABELS))
    print(head)
    for label, case, mcase, nbytes, prs in ROWS:
        d = ours[case]
        m = ours[mcase]
        cells = {plabel: [nbytes / 1e9 / s for s in peers[pcase]] for plabel, pcase in prs}
        dm = statistics.median(d) if d else 0

        def rat(v):
            return f"{dm / statistics.median(v):.2f}x" if d and v else "-"
        print(f"{label:<36} {cell(d):>20} {cell(m):>20} " +
              " ".join(f"{cell(cells.get(lbl, [])):>20}" for lbl in PEER_LABELS) +
              f" {rat(m):>8} " + " ".join(f"{rat(cells.get(lbl, [])):>14}" for lbl in PEER_LABELS))
    print("A ratio is dvppd's median over the other's: above 1 means dvppd is faster "
          "(/memcpy: the fraction of memcpy speed reached for the same output bytes).")
    print("memcpy: f32 rows 602,112 B; f16 NC1HWC0 row 224*224*16*2 = 1,605,632 B.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
