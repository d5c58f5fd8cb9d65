#!/usr/bin/python3
"""bench/run_video_spread.py: one video on all channels (issue 8/8's first goal).

Run it as `/usr/bin/python3 bench/run_video_spread.py` after `make` and
`make build/bench/bench_video build/bench/bench_sock` (needs ffmpeg; ~4 minutes on an idle 2-vCPU VM).

One 1080p H.264 clip (the clips of bench/run_video.py: the phone clip looped
x8, 328 frames, and testsrc2 10 s, 300 frames) decoded, every frame turned
into a 224x224 f32 NCHW tensor (stretch, cv2-parity bilinear, ImageNet
normalise), every process on CPUs 0,1:

  ffmpeg scale      ffmpeg -threads 2 -i X -vf scale=224:224 -f null - (the
                    issue's peer: swscale's default bicubic, in yuv420p, no
                    float tensor) with -filter_threads 2 -fps_mode passthrough
  ffmpeg bilinear   the same with scale=224:224:flags=bilinear (dvppd is
                    bilinear: the fair row)
  in-process 1ch    bench_video --case pipe224 --threads 1 (one thread: what
                    one channel does)
  in-process 2ch    bench_video --case pipe224 --threads 2 --overlap (what the
                    daemon's spread gives a video with one other channel free)
  HTTP 1ch / 2ch    POST /v1/video/decode?w=224&h=224&mean=..&std=.. to a
                    dvppd with device.channels 1 / 2 (the file in the body,
                    the tensor read to the end): fps = frames / wall time of
                    the request, upload and answer included. The answer is
                    the whole T x 3 x 224 x 224 f32 tensor (180 MB for 300
                    frames) over loopback TCP, read by this Python client on
                    the same two CPUs: its CPU share of the wall time is
                    printed beside the headers
  socket 1ch / 2ch  dvppctl video-decode --socket ... --size 224x224 --mean
                    --std -o /dev/shm/...npy: a VideoOpen decode, one frame
                    per ring slot; fps = frames / wall time of the dvppctl
                    process (its start, ~10 ms, included, and its gathering
                    of every frame into one 180-197 MB .npy written to
                    /dev/shm, on the same two CPUs)
  ring 1ch / 2ch    build/bench/bench_sock video SOCK CLIP: the same VideoOpen
                    decode and tensors, taken as a local inference app takes
                    them: each frame read in its ring slot (shape and 224
                    values checked) and the slot given back, nothing copied;
                    fps = frames / the wall time of dvppc_video_decode (the
                    file already in memory: bytes sent, every frame
                    delivered)

Rounds interleave the cases in an order rotating per round; the tables give
medians over DVPP_BENCH_RUNS (5) rounds. Goals (printed, never asserted):
2ch >= 1.8x 1ch on each front end, and 2ch >= 1.15x `ffmpeg scale`.
Writes DVPP_BUILD/bench/video_spread.json.
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import run_video as rv
from benchlib import Dvppd, clean_env, log

RUNS = int(os.environ.get("DVPP_BENCH_RUNS", "5"))
MEAN, STD = "0.485,0.456,0.406", "0.229,0.224,0.225"
CPUS = ["taskset", "-c", "0,1"]
GOAL_SCALE, GOAL_PEER = 1.8, 1.15

FF_CASES = {
    "ff_scale": ["-vf", "scale=224:224", "-f", "null", "-"],
    "ff_bilinear": ["-vf", "scale=224:224:flags=bilinear", "-f", "null", "-"],
}


def run_ff(case, clip):
    argv = CPUS + rv.FF_BASE + ["-threads", "2", "-i", clip["path"], "-an", "-filter_threads",
                                "2", "-fps_mode", "passthrough", "-benchmark"] + FF_CASES[case]
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       timeout=rv.TIMEOUT)
    m = rv.RE_BENCH.search(p.stderr)
    frames = rv.RE_FRAME.findall(p.stderr)
    if p.returncode or not m or not frames:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr[-300:]}")
    return int(frames[-1]) / float(m.group(3))


def run_inproc(clip, two):
    argv = CPUS + [rv.EXE, "--case", "pipe224", "--runs", "1", "--warm", "0", "--threads",
                   "2" if two else "1"] + (["--overlap"] if two else []) + [clip["path"]]
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       timeout=rv.TIMEOUT)
    js = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode or not js or not js[0].get("ok"):
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr[-300:]}")
    return js[0]["runs"][0]["fps"]


def run_http(d, clip, body):
    q = f"/v1/video/decode?w=224&h=224&mean={MEAN}&std={STD}"
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=rv.TIMEOUT)
    c0 = time.process_time()
    t0 = time.perf_counter()
    c.request("POST", q, body, {"Content-Type": "application/octet-stream"})
    r = c.getresponse()
    data = r.read()
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    c.close()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {data[:300]!r}")
    n = int(r.getheader("X-Dvpp-Frames"))
    if n != clip["frames"]:
        raise RuntimeError(f"HTTP: {n} frames, want {clip['frames']}")
    return n / dt, r.getheader("X-Dvpp-Decode-Threads"), r.getheader("X-Dvpp-Overlap"), \
        round(cpu / dt, 3), len(data)


def run_ring(d, clip):
    argv = [os.path.join(rv.BUILD, "bench", "bench_sock"), "video", d.sock, clip["path"]]
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       timeout=rv.TIMEOUT)
    js = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or not js:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr[-300:]}")
    if js[0]["frames"] != clip["frames"]:
        raise RuntimeError(f"ring: {js[0]['frames']} frames, want {clip['frames']}")
    return js[0]["fps"]


def run_sock(d, clip, out):
    argv = [os.path.join(rv.BUILD, "dvppctl"), "video-decode", clip["path"], "--socket", d.sock,
            "--size", "224x224", "--mean", MEAN, "--std", STD, "-o", out]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       timeout=rv.TIMEOUT)
    dt = time.perf_counter() - t0
    if p.returncode:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr[-300:]}")
    os.unlink(out)
    return clip["frames"] / dt


def main():
    problems = []
    results = {}
    with tempfile.TemporaryDirectory(prefix="dvpp-vspread-") as tmp:
        log("one video on all channels: 224x224 f32 tensors of one 1080p H.264 clip")
        clips = rv.make_clips(tmp, problems)
        daemons = {}
        for ch in (1, 2):
            dtmp = os.path.join(tmp, f"d{ch}")
            os.mkdir(dtmp)
            d = Dvppd(dtmp, rv.BUILD, {"device": {"channels": ch},
                                       "limits": {"max_video_bytes": 256 << 20},
                                       "http": {"max_body_bytes": 256 << 20,
                                                "request_timeout_s": 300}})
            d.start()
            daemons[ch] = d
        out = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tmp, "vspread.npy")
        try:
            for name, clip in clips.items():
                body = open(clip["path"], "rb").read()
                cases = {
                    "ff_scale": lambda: run_ff("ff_scale", clip),
                    "ff_bilinear": lambda: run_ff("ff_bilinear", clip),
                    "inproc_1ch": lambda: run_inproc(clip, False),
                    "inproc_2ch": lambda: run_inproc(clip, True),
                    "http_1ch": lambda: run_http(daemons[1], clip, body),
                    "http_2ch": lambda: run_http(daemons[2], clip, body),
                    "sock_1ch": lambda: run_sock(daemons[1], clip, out),
                    "sock_2ch": lambda: run_sock(daemons[2], clip, out),
                    "ring_1ch": lambda: run_ring(daemons[1], clip),
                    "ring_2ch": lambda: run_ring(daemons[2], clip),
                }
                order = list(cases)
                got = {c: [] for c in order}
                heads = {}
                for c in order:  # one untimed pass: page cache, clocks, pools
                    cases[c]()
                for r in range(RUNS):
                    k = r % len(order)
                    line = []
                    for c in order[k:] + order[:k]:
                        v = cases[c]()
                        if isinstance(v, tuple):
                            heads[c] = v[1:]
                            v = v[0]
                        got[c].append(v)
                        line.append(f"{c} {v:.1f}")
                    log(f"  round {r + 1} {name}: " + ", ".join(line))
                med = {c: statistics.median(v) for c, v in got.items()}
                results[name] = {"frames": clip["frames"], "fps": got, "median": med,
                                 "http_headers": heads}
                log(f"\n{name} ({clip['frames']} frames), median fps of {RUNS}:")
                for c in order:
                    log(f"  {c:<12} {med[c]:7.1f}")
                for fe in ("inproc", "http", "sock", "ring"):
                    s = med[f"{fe}_2ch"] / med[f"{fe}_1ch"]
                    p = med[f"{fe}_2ch"] / med["ff_scale"]
                    b = med[f"{fe}_2ch"] / med["ff_bilinear"]
                    log(f"  {fe:<7} 2ch/1ch {s:.2f} (goal >= {GOAL_SCALE}: "
                        f"{'MET' if s >= GOAL_SCALE else 'NOT MET'}); 2ch/ffmpeg scale {p:.2f} "
                        f"(goal >= {GOAL_PEER}: {'MET' if p >= GOAL_PEER else 'NOT MET'}); "
                        f"2ch/ffmpeg bilinear {b:.2f}")
                log(f"  HTTP (decode threads, overlap, client CPU share of the wall time, "
                    f"answer bytes): {heads}")
        finally:
            for d in daemons.values():
                d.stop()
    os.makedirs(os.path.join(rv.BUILD, "bench"), exist_ok=True)
    with open(os.path.join(rv.BUILD, "bench", "video_spread.json"), "w") as f:
        json.dump({"results": results, "problems": problems}, f, indent=1)
    for p in problems:
        log(f"problem: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
