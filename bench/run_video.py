#!/usr/bin/python3
"""bench/run_video.py: dvppd's VDEC and video job beside the ffmpeg 5.1 CLI.

Run it as `/usr/bin/python3 bench/run_video.py` (after
`make build/bench/bench_video`; needs ffmpeg and ffprobe, Debian's 5.1, the
same libavcodec dvppd links). 5-6 minutes with the defaults on an idle 2-vCPU VM.

Clips (1920x1080 H.264, both decoded by both sides from the same file):
  phone     the real phone clip .cache/testdata/video/VID_20191220_170832.mp4
            (H.264 High, 13.3 Mb/s, VFR ~27 fps, 41 frames). 41 frames take
            ~0.4 s to decode, too short for stable timing, so it is looped
            DVPP_BENCH_VIDEO_LOOPS (8) times into one MP4 in a temp dir:
            `ffmpeg -stream_loop 7 -i CLIP -map 0:v:0 -c copy loop.mp4`
            (328 frames; the bitstream is the clip's, repeated; every loop
            starts at its IDR frame). anchors.md s5 decodes the clip with
            `-stream_loop 7` instead: the same frames, but a decoder flush
            per loop
  testsrc2  a synthetic 10 s clip made here as anchors.md s5 makes clip.mp4:
            `ffmpeg -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 10
            -c:v libx264 -preset medium -crf 23 -pix_fmt yuv420p` (300 frames)
Both are deleted at exit (also on an error or a signal).

Cases, per clip and per thread count T (1 and 2: DVPP_BENCH_THREADS), every
process pinned as anchors.md s5 (T=1: taskset -c 1; T=2: taskset -c 0,1):
  ffmpeg null       ffmpeg -hide_banner -nostdin -nostats -threads T -i X -an
                    -filter_threads T -fps_mode passthrough -benchmark -f null -
                    (decode only: wrapped frames, no pixel conversion)
  ffmpeg nv12       the same with -pix_fmt nv12 (swscale yuv420p -> nv12 per
                    frame, as VDEC does)
  dvppd decode      build/bench/bench_video --case decode --threads T: one
                    dvpp_video_decode of the file (in memory) to NV12 with
                    VDEC strides; the sink reads one byte per frame
  ffmpeg scale      ... -vf scale=224:224 -f null - (swscale's CLI default,
                    bicubic, in yuv420p)
  ffmpeg scale bl   ... -vf scale=224:224:flags=bilinear -f null -: the
                    filter dvppd runs (bilinear), shown beside the goal's rows
  ffmpeg scale rgb  ... -vf scale=224:224 -pix_fmt rgb24 -f rawvideo -y
                    /dev/null: the closest equivalent that produces pixels
  dvppd video job   bench_video --case pipe224 --threads T: dvpp_video_run,
                    decode (each frame read as the decoder's own I420 buffer,
                    no NV12 conversion: dvpp_vdec_opts.direct_i420) + per
                    frame the pipeline stretch 224x224
                    (cv2-parity bilinear) + ImageNet normalise into a T x 3 x
                    224 x 224 f32 NCHW tensor; the tensor's buffer is reserved
                    and pre-faulted before timing (a pooled buffer)
  dvppd overlapped  the same with --overlap: each frame's pipeline on a helper
                    thread while the next is decoded, as the daemon runs one
                    video with a channel free (dvpp_video_spread: T frame
                    threads for T channels)
  (extra) cold out  the same with --cold-out: the output dvpp_buf starts empty
                    and grows (doubling, copying, first-touch faults) inside
                    the timed run, as for a fresh request (DVPP_BENCH_VIDEO_COLD=0
                    leaves it out)
Once per clip, after the rounds: bench_video --case pipe_frame (one
thread): the pipeline alone on the clip's first NV12 frame, ms/frame.

Timing, mirroring anchors.md s5: one process per measurement on both sides.
ffmpeg: fps = frames / rtime of `-benchmark` (the transcode loop; its input
probing happens before the timer, process start-up is outside it); CPU =
utime + stime of `-benchmark`. dvppd: fps = frames / wall time of one
dvpp_video_decode / dvpp_video_run call on the file already in memory (it
includes its own probe, demuxer and decoder open and close: probe_ms in the
JSON, ~12 ms, < 0.5 % here); CPU = getrusage(RUSAGE_SELF) around it (every
thread). The frame count of every run is checked against ffprobe's packet
count. Before the rounds one untimed run per clip (page cache, CPU clocks).
Each round runs the cases of one (clip, T) back to back in an order that
rotates per round. The tables give the median over DVPP_BENCH_RUNS (5)
rounds, the min-max, and CPU ms per frame; a ratio is dvppd's median fps over
the peer's median fps (> 1: dvppd faster); the per-round paired ratios are
in the JSON.

Goals (printed, never asserted): decode >= 0.95x ffmpeg (against both
`-f null` and `-pix_fmt nv12 -f null`); the video job (224x224 f32 tensors)
faster than ffmpeg (> 1.0x against `scale=224:224 -f null` and against
`scale=224:224 -pix_fmt rgb24 -f rawvideo`). Exit status 1 only when a case
could not run (a missing tool, clip or binary, a failed run).

Environment: DVPP_BENCH_RUNS (rounds, 5), DVPP_BENCH_THREADS ("1,2"),
DVPP_BENCH_VIDEO_CLIPS ("phone,testsrc2"), DVPP_BENCH_VIDEO_LOOPS (8),
DVPP_BENCH_VIDEO_COLD (1), DVPP_BUILD (build), DVPP_TESTDATA
(.cache/testdata). The summary goes to DVPP_BUILD/bench/video.json.
"""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import log, clean_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"))
TESTDATA = os.environ.get("DVPP_TESTDATA", os.path.join(ROOT, ".cache", "testdata"))
RUNS = int(os.environ.get("DVPP_BENCH_RUNS", "5"))
THREADS = [int(t) for t in os.environ.get("DVPP_BENCH_THREADS", "1,2").split(",") if t]
CLIPS = [c for c in os.environ.get("DVPP_BENCH_VIDEO_CLIPS", "phone,testsrc2").split(",") if c]
LOOPS = int(os.environ.get("DVPP_BENCH_VIDEO_LOOPS", "8"))
COLD = os.environ.get("DVPP_BENCH_VIDEO_COLD", "1") not in ("0", "")
EXE = os.path.join(BUILD, "bench", "bench_video")
PHONE = os.path.join(TESTDATA, "video", "VID_20191220_170832.mp4")
TIMEOUT = 600

GOAL_DECODE = 0.95  # dvpp_video_decode fps / ffmpeg fps, same threads
GOAL_PIPE = 1.0     # dvpp_video_run 224x224 f32 fps / ffmpeg scale=224:224 fps (strictly above)

# reference/anchors.md s5 (fps, medians of 10 runs on the project VM; the
# phone clip there is -stream_loop 7 of the original, 328 frames)
ANCHORS = {
    ("phone", 1): {"ff_null": 85.0, "ff_scale_rgb": 67.7},
    ("phone", 2): {"ff_null": 151.3, "ff_scale_rgb": 126.2},
    ("testsrc2", 1): {"ff_null": 175.2, "ff_scale_rgb": 119.7},
    ("testsrc2", 2): {"ff_null": 289.4, "ff_scale_rgb": 195.9},
}

FF_BASE = ["ffmpeg", "-hide_banner", "-nostdin", "-nostats"]
# case -> (row label, kind, ffmpeg output args or bench_video args)
CASES = {
    "ff_null": ("ffmpeg decode -> null", "ff", ["-f", "null", "-"]),
    "ff_nv12": ("ffmpeg decode -> nv12 -> null", "ff", ["-pix_fmt", "nv12", "-f", "null", "-"]),
    "dv_decode": ("dvppd dvpp_video_decode -> NV12", "dv", ["--case", "decode"]),
    "ff_scale": ("ffmpeg + scale=224:224 -> null", "ff",
                 ["-vf", "scale=224:224", "-f", "null", "-"]),
    "ff_scale_bl": ("ffmpeg + scale=224:224:flags=bilinear -> null", "ff",
                    ["-vf", "scale=224:224:flags=bilinear", "-f", "null", "-"]),
    "ff_scale_rgb": ("ffmpeg + scale=224:224 rgb24 -> rawvideo", "ff",
                     ["-vf", "scale=224:224", "-pix_fmt", "rgb24", "-f", "rawvideo", "-y",
                      "/dev/null"]),
    "dv_pipe": ("dvppd dvpp_video_run 224x224 f32 tensor", "dv", ["--case", "pipe224"]),
    "dv_pipe_ov": ("dvppd the same, overlapped (daemon, 2 ch)", "dv",
                   ["--case", "pipe224", "--overlap"]),
    "dv_pipe_cold": ("(extra) the same, cold output buffer", "dv",
                     ["--case", "pipe224", "--cold-out"]),
}
DECODE_CASES = ["ff_null", "ff_nv12", "dv_decode"]
PIPE_CASES = ["ff_scale", "ff_scale_bl", "ff_scale_rgb", "dv_pipe", "dv_pipe_ov"] + \
    (["dv_pipe_cold"] if COLD else [])

RE_BENCH = re.compile(r"bench: utime=([\d.]+)s stime=([\d.]+)s rtime=([\d.]+)s")
RE_FRAME = re.compile(r"frame=\s*(\d+)")


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def cpus_for(threads):
    """anchors.md s5: CPU 1 alone for 1 thread, CPUs 0..T-1 for T threads."""
    avail = sorted(os.sched_getaffinity(0))
    if threads == 1:
        return [avail[1] if len(avail) > 1 else avail[0]]
    return avail[:threads] if len(avail) >= threads else None


def taskset(cpus):
    return ["taskset", "-c", ",".join(str(c) for c in cpus)]


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def ffmpeg_version():
    try:
        out = subprocess.run(["ffmpeg", "-hide_banner", "-version"], capture_output=True,
                             text=True, timeout=30).stdout
        return out.splitlines()[0] if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def count_packets(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
                        "-show_entries", "stream=nb_read_packets,width,height,codec_name,profile",
                        "-of", "json", path], capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError(f"ffprobe {path}: {p.stderr.strip()[-300:]}")
    s = json.loads(p.stdout)["streams"][0]
    return int(s["nb_read_packets"]), s


def make_clips(tmp, problems):
    """clip name -> dict(path, desc, frames, ...); problems for the ones that cannot be made."""
    clips = {}
    for name in CLIPS:
        try:
            if name == "phone":
                if not os.path.isfile(PHONE):
                    problems.append(f"phone clip missing: {PHONE} (make test-data)")
                    continue
                path = os.path.join(tmp, f"phone_x{LOOPS}.mp4")
                cmd = FF_BASE + ["-v", "error", "-stream_loop", str(LOOPS - 1), "-i", PHONE,
                                 "-map", "0:v:0", "-c", "copy", "-y", path]
                desc = (f"{os.path.relpath(PHONE, ROOT) if PHONE.startswith(ROOT) else PHONE} "
                        f"looped x{LOOPS} (-stream_loop {LOOPS - 1} -c copy into one MP4)")
            elif name == "testsrc2":
                path = os.path.join(tmp, "testsrc2_1080p.mp4")
                cmd = FF_BASE + ["-v", "error", "-f", "lavfi", "-i",
                                 "testsrc2=size=1920x1080:rate=30", "-t", "10", "-c:v", "libx264",
                                 "-preset", "medium", "-crf", "23", "-pix_fmt", "yuv420p", "-y",
                                 path]
                desc = ("synthetic: testsrc2 1920x1080 30 fps 10 s, libx264 -preset medium "
                        "-crf 23 (anchors.md s5 clip.mp4)")
            else:
                problems.append(f"unknown clip {name!r} in DVPP_BENCH_VIDEO_CLIPS")
                continue
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(),
                               timeout=TIMEOUT)
            if p.returncode:
                problems.append(f"cannot make the {name} clip: {p.stderr.strip()[-300:]}")
                continue
            frames, st = count_packets(path)
            clips[name] = {"path": path, "desc": desc, "frames": frames,
                           "bytes": os.path.getsize(path), "width": st.get("width"),
                           "height": st.get("height"), "codec": st.get("codec_name"),
                           "profile": st.get("profile")}
            log(f"  {name}: {desc}: {frames} frames, {st.get('width')}x{st.get('height')} "
                f"{st.get('codec_name')} {st.get('profile')}, {os.path.getsize(path):,} B "
                f"(made in {time.perf_counter() - t0:.1f} s)")
        except (OSError, subprocess.SubprocessError, RuntimeError, ValueError, KeyError) as e:
            problems.append(f"cannot make the {name} clip: {e}")
    return clips


def run_ff(case, clip, threads, cpus):
    argv = (taskset(cpus) + FF_BASE + ["-threads", str(threads), "-i", clip["path"], "-an",
                                       "-filter_threads", str(threads), "-fps_mode",
                                       "passthrough", "-benchmark"] + CASES[case][2])
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT)
    m = RE_BENCH.search(p.stderr)
    frames = RE_FRAME.findall(p.stderr)
    if p.returncode or not m or not frames:
        raise RuntimeError(f"{' '.join(argv)} failed (exit {p.returncode}): "
                           f"{p.stderr.strip()[-300:]}")
    n = int(frames[-1])
    rtime = float(m.group(3))
    cpu = float(m.group(1)) + float(m.group(2))
    return {"s": rtime, "fps": n / rtime, "cpu_s": cpu, "frames": n,
            "cpu_ms_per_frame": cpu * 1e3 / n}


def run_dv(case, clip, threads, cpus, extra=()):
    argv = taskset(cpus) + [EXE] + CASES[case][2] + ["--threads", str(threads),
                                                    "--runs", "1", "--warm", "0"]
    argv += list(extra) + [clip["path"]]
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT)
    js = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or not js or not js[0].get("ok"):
        msg = js[0].get("message") if js else p.stderr.strip()[-300:]
        raise RuntimeError(f"{' '.join(argv)} failed (exit {p.returncode}): {msg}")
    r = js[0]["runs"][0]
    return {"s": r["s"], "fps": r["fps"], "cpu_s": r["cpu_s"], "frames": r["frames"],
            "cpu_ms_per_frame": r["cpu_s"] * 1e3 / r["frames"] if r["frames"] else None,
            "probe_ms": js[0]["probe_ms"]}


def run_case(case, clip, threads, cpus):
    if CASES[case][1] == "ff":
        return run_ff(case, clip, threads, cpus)
    return run_dv(case, clip, threads, cpus)


def pipe_frame(clip, cpus):
    argv = taskset(cpus) + [EXE, "--case", "pipe_frame", "--runs", "5", "--target", "0.3",
                            clip["path"]]
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT)
    js = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or not js or not js[0].get("ok"):
        msg = js[0].get("message") if js else p.stderr.strip()[-300:]
        raise RuntimeError(f"{' '.join(argv)} failed (exit {p.returncode}): {msg}")
    return js[0]


def main():
    t_start = time.perf_counter()
    problems = []
    for tool in ("ffmpeg", "ffprobe", "taskset"):
        if shutil.which(tool) is None:
            log(f"bench/run_video.py: {tool} not found (apt-get install ffmpeg util-linux)")
            return 1
    if not os.access(EXE, os.X_OK):
        log(f"{EXE} missing: make build/bench/bench_video (or make bench)")
        return 1
    tmp = tempfile.mkdtemp(prefix="dvpp-bench-video-")

    def on_signal(sig, _frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        return bench(tmp, problems, t_start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench(tmp, problems, t_start):
    warnings = []  # odd but measured (a frame count off): reported, exit status unchanged
    load0 = loadavg()
    log(f"video decode: dvppd (build/bench/bench_video) beside {ffmpeg_version()}")
    log(f"  {cpu_model()}, {os.cpu_count()} CPUs, load average {fmt(load0, '.2f')} at start"
        + ("  <-- other work is running: expect noise" if load0 and load0 > 0.5 else ""))
    log("clips:")
    clips = make_clips(tmp, problems)

    groups = []  # (clip, threads, cpus)
    skipped = []
    for name in clips:
        for t in THREADS:
            cpus = cpus_for(t)
            if cpus is None:
                skipped.append(f"{t} threads: only {len(os.sched_getaffinity(0))} CPUs")
                continue
            groups.append((name, t, cpus))
    cases = DECODE_CASES + PIPE_CASES
    runs = {(c, t): {k: [] for k in cases} for c, t, _ in groups}

    # one untimed run per clip: the file in the page cache, the clocks up
    for name in clips:
        for case in ("ff_null", "dv_decode"):
            try:
                run_case(case, clips[name], 1, cpus_for(1))
            except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
                problems.append(f"warm-up {name} {case}: {e}")

    log(f"\n{RUNS} rounds; each runs the {len(cases)} cases of every (clip, threads) back to "
        "back, the order rotating per round ...")
    for r in range(RUNS):
        for name, t, cpus in groups:
            k = r % len(cases)
            order = cases[k:] + cases[:k]
            line = []
            for case in order:
                try:
                    res = run_case(case, clips[name], t, cpus)
                except (RuntimeError, subprocess.SubprocessError, OSError, ValueError,
                        KeyError, IndexError) as e:
                    problems.append(f"round {r + 1} {name} T={t} {case}: {e}")
                    line.append(f"{case} FAILED")
                    continue
                res["round"] = r + 1
                if res["frames"] != clips[name]["frames"]:
                    warnings.append(f"round {r + 1} {name} T={t} {case}: {res['frames']} "
                                    f"frames, the clip has {clips[name]['frames']}")
                runs[(name, t)][case].append(res)
                line.append(f"{case} {res['fps']:.1f}")
            log(f"  round {r + 1} {name:<8} T={t}: " + ", ".join(line))

    stage = {}
    for name in clips:
        try:
            stage[name] = pipe_frame(clips[name], cpus_for(1))
        except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
            problems.append(f"pipe_frame {name}: {e}")

    # ---------------------------------------------------------------- summary
    def fps(g, c):
        return med(x["fps"] for x in runs[g][c])

    def span(g, c):
        v = [x["fps"] for x in runs[g][c]]
        return f"{min(v):,.1f}-{max(v):,.1f}" if v else "-"

    def cpu(g, c):
        return med(x["cpu_ms_per_frame"] for x in runs[g][c])

    def ratio(g, a, b):
        fa, fb = fps(g, a), fps(g, b)
        return fa / fb if fa and fb else None

    def paired(g, a, b):
        """per-round ratios a/b (the cases of one round ran minutes apart at most)"""
        rb = {x["round"]: x["fps"] for x in runs[g][b]}
        return [x["fps"] / rb[x["round"]] for x in runs[g][a] if x["round"] in rb]

    def mark(v, goal, strict=False):
        if v is None:
            return "-"
        v = round(v, 3)  # as printed: no "0.950 NOT MET"
        return "MET" if (v > goal if strict else v >= goal) else "NOT MET"

    medians, ratios, goals = {}, {}, {}
    for name, t, cpus in groups:
        g = (name, t)
        key = f"{name}/T{t}"
        clip = clips[name]
        medians[key] = {c: {"fps": fps(g, c), "cpu_ms_per_frame": cpu(g, c),
                            "runs": len(runs[g][c])} for c in cases}
        rr = {
            "decode_vs_null": ratio(g, "dv_decode", "ff_null"),
            "decode_vs_nv12": ratio(g, "dv_decode", "ff_nv12"),
            "pipe_vs_scale": ratio(g, "dv_pipe", "ff_scale"),
            "pipe_vs_scale_bilinear": ratio(g, "dv_pipe", "ff_scale_bl"),
            "pipe_vs_scale_rgb": ratio(g, "dv_pipe", "ff_scale_rgb"),
            "pipe_overlap_vs_scale": ratio(g, "dv_pipe_ov", "ff_scale"),
            "pipe_overlap_vs_scale_bilinear": ratio(g, "dv_pipe_ov", "ff_scale_bl"),
            # what any preprocessing on ffmpeg's own decode could reach at zero cost
            "ceiling_null_vs_scale": ratio(g, "ff_null", "ff_scale"),
        }
        if COLD:
            rr["pipe_cold_vs_scale_rgb"] = ratio(g, "dv_pipe_cold", "ff_scale_rgb")
        pr = {"decode_vs_null": paired(g, "dv_decode", "ff_null"),
              "decode_vs_nv12": paired(g, "dv_decode", "ff_nv12"),
              "pipe_vs_scale": paired(g, "dv_pipe", "ff_scale"),
              "pipe_vs_scale_rgb": paired(g, "dv_pipe", "ff_scale_rgb")}
        def cpu_ratio(a, b):  # peer CPU per frame / dvppd CPU per frame: > 1 = dvppd cheaper
            ca, cb = cpu(g, a), cpu(g, b)
            return cb / ca if ca and cb else None
        cr = {"decode_vs_null": cpu_ratio("dv_decode", "ff_null"),
              "decode_vs_nv12": cpu_ratio("dv_decode", "ff_nv12"),
              "pipe_vs_scale": cpu_ratio("dv_pipe", "ff_scale"),
              "pipe_vs_scale_rgb": cpu_ratio("dv_pipe", "ff_scale_rgb")}
        ratios[key] = {"medians": rr, "paired_per_round": pr, "by_cpu_time": cr}
        goals[key] = {}
        for k, gv, strict in (("decode_vs_null", GOAL_DECODE, False),
                              ("decode_vs_nv12", GOAL_DECODE, False),
                              ("pipe_vs_scale", GOAL_PIPE, True),
                              ("pipe_vs_scale_rgb", GOAL_PIPE, True)):
            goals[key][k] = {"goal": f"{'>' if strict else '>='} {gv}",
                             "value": rr[k], "met": mark(rr[k], gv, strict) == "MET",
                             "value_cpu": cr[k], "met_cpu": mark(cr[k], gv, strict) == "MET"}

        log(f"\n{name}: {clip['frames']} frames {clip['width']}x{clip['height']} "
            f"{clip['codec']} {clip['profile']}, {t} thread{'s' if t > 1 else ''} "
            f"(taskset -c {','.join(map(str, cpus))}); medians of {RUNS} rounds")
        log(f"  {'row':<42} {'fps':>7} {'min-max':>13} {'CPU ms/f':>9}  ratio (dvppd / ffmpeg)")
        for c in cases:
            label = CASES[c][0]
            if c == "dv_decode":
                rt = (f"{fmt(rr['decode_vs_null'], '.3f')}x null "
                      f"[{mark(rr['decode_vs_null'], GOAL_DECODE)}], "
                      f"{fmt(rr['decode_vs_nv12'], '.3f')}x nv12 "
                      f"[{mark(rr['decode_vs_nv12'], GOAL_DECODE)}]  (goal >= {GOAL_DECODE})")
            elif c == "dv_pipe":
                rt = (f"{fmt(rr['pipe_vs_scale'], '.3f')}x scale "
                      f"[{mark(rr['pipe_vs_scale'], GOAL_PIPE, True)}], "
                      f"{fmt(rr['pipe_vs_scale_rgb'], '.3f')}x scale rgb "
                      f"[{mark(rr['pipe_vs_scale_rgb'], GOAL_PIPE, True)}]  (goal > 1); "
                      f"{fmt(rr['pipe_vs_scale_bilinear'], '.3f')}x scale bilinear (the "
                      "same filter as dvppd's)")
            elif c == "dv_pipe_ov":
                rt = (f"{fmt(rr['pipe_overlap_vs_scale'], '.3f')}x scale, "
                      f"{fmt(rr['pipe_overlap_vs_scale_bilinear'], '.3f')}x scale bilinear "
                      "(--overlap: the pipeline on a helper thread, as dvpp_video_spread runs a "
                      "video with a channel free)")
            elif c == "dv_pipe_cold":
                rt = f"{fmt(rr.get('pipe_cold_vs_scale_rgb'), '.3f')}x scale rgb (no goal)"
            else:
                rt = "(peer)"
            log(f"  {label:<42} {fmt(fps(g, c)):>7} {span(g, c):>13} "
                f"{fmt(cpu(g, c), '.2f'):>9}  {rt}")
        log("  by CPU ms/frame (ffmpeg / dvppd, > 1: dvppd cheaper; less sensitive to other "
            f"load): decode {fmt(cr['decode_vs_null'], '.3f')}x null, "
            f"{fmt(cr['decode_vs_nv12'], '.3f')}x nv12; 224 tensors "
            f"{fmt(cr['pipe_vs_scale'], '.3f')}x scale, {fmt(cr['pipe_vs_scale_rgb'], '.3f')}x "
            "scale rgb")
        log(f"  ceiling: ffmpeg null / ffmpeg scale = {fmt(rr['ceiling_null_vs_scale'], '.3f')}x "
            "(the ratio a preprocessing of zero cost on the same libavcodec decode would "
            "reach)")
        pp = {k: f"{min(v):.2f}-{max(v):.2f}" for k, v in pr.items() if v}
        if pp:
            log("  paired per-round ratios (min-max): " +
                ", ".join(f"{k} {v}" for k, v in pp.items()))
        anc = ANCHORS.get(g)
        if anc:
            log("  anchors.md s5 on its VM: " + ", ".join(
                f"{c} {v} fps (this run {fmt(fps(g, c))})" for c, v in anc.items()))

    # where the time goes: per frame, T=1 (one CPU: wall ~ CPU)
    # where the time goes: CPU ms per frame at 1 thread (on an idle CPU the same as wall
    # time; on a shared one it leaves out the time other processes held the CPU)
    log("\nWhere the time goes (1 thread, CPU ms per frame, medians; pipeline alone: wall ms "
        "in a loop):")
    where = {}
    for name in clips:
        g = (name, 1)
        if g not in runs:
            continue

        def ms(c):
            return cpu(g, c)

        def diff(a, b):
            return a - b if a is not None and b is not None else None

        w = {
            "ffmpeg_decode": ms("ff_null"),
            "ffmpeg_nv12_conversion": diff(ms("ff_nv12"), ms("ff_null")),
            "ffmpeg_scale224": diff(ms("ff_scale"), ms("ff_null")),
            "ffmpeg_scale224_rgb24_rawvideo": diff(ms("ff_scale_rgb"), ms("ff_null")),
            "dvppd_decode_nv12": ms("dv_decode"),
            "dvppd_decode_over_ffmpeg_null": diff(ms("dv_decode"), ms("ff_null")),
            "dvppd_decode_over_ffmpeg_nv12": diff(ms("dv_decode"), ms("ff_nv12")),
            "dvppd_pipe_over_decode": diff(ms("dv_pipe"), ms("dv_decode")),
            "dvppd_pipeline_alone_wall": stage.get(name, {}).get("ms_per_frame"),
            "dvppd_cold_output_over_pooled": diff(ms("dv_pipe_cold"), ms("dv_pipe"))
            if COLD else None,
            "dvppd_probe_ms_per_video": med(x.get("probe_ms") for x in runs[g]["dv_decode"]),
        }
        where[name] = w
        log(f"  {name}: ffmpeg decode {fmt(w['ffmpeg_decode'], '.2f')}; "
            f"+ nv12 conversion {fmt(w['ffmpeg_nv12_conversion'], '+.2f')}; "
            f"+ scale=224:224 {fmt(w['ffmpeg_scale224'], '+.2f')} "
            f"(rgb24 rawvideo {fmt(w['ffmpeg_scale224_rgb24_rawvideo'], '+.2f')})")
        log(f"  {name}: dvppd decode->NV12 {fmt(w['dvppd_decode_nv12'], '.2f')} "
            f"({fmt(w['dvppd_decode_over_ffmpeg_nv12'], '+.2f')} vs ffmpeg nv12, "
            f"{fmt(w['dvppd_decode_over_ffmpeg_null'], '+.2f')} vs null); video job "
            f"{fmt(w['dvppd_pipe_over_decode'], '+.2f')} over decode; pipeline alone "
            f"(NV12 1080p -> 224x224 f32) {fmt(w['dvppd_pipeline_alone_wall'], '.3f')}"
            + (f"; cold output buffer {fmt(w['dvppd_cold_output_over_pooled'], '+.2f')}"
               if COLD else "")
            + f"; probe {fmt(w['dvppd_probe_ms_per_video'], '.1f')} ms per video")

    log("\nGoals (dvppd / ffmpeg by median fps; in brackets the same by CPU time per frame):")
    names = {"decode_vs_null": "decode vs ffmpeg -f null",
             "decode_vs_nv12": "decode vs ffmpeg -pix_fmt nv12",
             "pipe_vs_scale": "224 f32 tensors vs scale=224:224 -f null",
             "pipe_vs_scale_rgb": "224 f32 tensors vs scale=224:224 rgb24 rawvideo"}
    for key, gl in goals.items():
        for k, label in names.items():
            v = gl[k]
            log(f"  {key:<12} {label:<48} {v['goal']:>7}: {fmt(v['value'], '.3f')} "
                f"{'MET' if v['met'] else 'NOT MET':<7} [CPU {fmt(v['value_cpu'], '.3f')} "
                f"{'MET' if v['met_cpu'] else 'NOT MET'}]")
    for s in skipped:
        log(f"  (skipped: {s})")
    load1 = loadavg()
    total = time.perf_counter() - t_start
    if max(load0 or 0, load1 or 0) > 1.0:
        log(f"\nThe load average was {fmt(load0, '.2f')} at the start and {fmt(load1, '.2f')} at "
            "the end on this machine: other processes shared the pinned CPUs, so the fps "
            "and wall-time ratios carry their noise; the CPU-time ratios move much less.")
    if warnings:
        log("\nWARNINGS:")
        for w in warnings:
            log(f"  - {w}")
    if problems:
        log("\nPROBLEMS:")
        for p in problems:
            log(f"  - {p}")
    log(f"(total {total:.0f} s; load average {fmt(load0, '.2f')} at start, "
        f"{fmt(load1, '.2f')} at the end)")

    summary = {
        "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "ffmpeg": ffmpeg_version(),
                    "loadavg_start": load0, "loadavg_end": load1},
        "clips": {n: {k: v for k, v in c.items() if k != "path"} for n, c in clips.items()},
        "method": {"rounds": RUNS, "threads": THREADS, "loops": LOOPS,
                   "pinning": {f"T{t}": cpus for _, t, cpus in groups},
                   "ffmpeg": FF_BASE + ["-threads", "T", "-i", "X", "-an", "-filter_threads",
                                        "T", "-fps_mode", "passthrough", "-benchmark", "..."],
                   "cases": {c: {"label": CASES[c][0], "args": CASES[c][2]} for c in cases},
                   "fps": "frames / rtime (ffmpeg -benchmark) or / wall time of one "
                          "dvpp_video_decode / dvpp_video_run call (bench_video); one "
                          "process per measurement; medians over rounds"},
        "medians": medians, "ratios": ratios, "goals": goals, "where_ms_per_frame": where,
        "pipe_frame": stage,
        "runs": {f"{c}/T{t}": v for (c, t), v in runs.items()},
        "problems": problems, "warnings": warnings, "skipped": skipped, "total_s": total,
    }
    os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
    path = os.path.join(BUILD, "bench", "video.json")
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)
    log(f"summary: {os.path.relpath(path, ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
