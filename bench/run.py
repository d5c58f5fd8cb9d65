#!/usr/bin/python3
"""bench/run.py: dvppd's JPEG decode beside Pillow and OpenCV, in one run.

`make bench` runs it as `DVPP_BUILD=build /usr/bin/python3 bench/run.py`
after building build/bench/bench_decode and fetching the test data.

Three worker processes are pinned to the same CPU and driven in turn:
  dvppd          build/bench/bench_decode --serve (libdvpp.a, reused buffer)
  peers          this file --peer-worker (Debian's Pillow and OpenCV,
                 cv2.setNumThreads(1)), default glibc malloc
  peers+hugetlb  the same with GLIBC_TUNABLES=glibc.malloc.hugetlb=1
Method (reference/anchors.md): every measurement makes 2 warm-up calls,
calibrates a loop count to ~0.5 s, then times 7 runs. A pass measures every
case once, interleaving dvppd and the peers (the order rotates per pass);
3 passes are pooled. The tables give the median of all runs and their
min-max, in Mpx/s of *source* pixels, and the ratios of the medians
(dvppd / peer: above 1 means dvppd is faster). Nothing is asserted about
times; the exit status is 0 unless a measurement could not run at all.

Environment: BENCH_PASSES (3), BENCH_RUNS (7), BENCH_TARGET (0.5 s),
BENCH_QUICK=1 (1 pass, 3 runs, 0.2 s), BENCH_HUGETLB (full | all | 0:
which peer rows also run under glibc.malloc.hugetlb=1; default full,
the full-size decodes, where page faults matter), BENCH_CPU (CPU to pin),
DVPP_BUILD (build folder), DVPP_TESTDATA (.cache/testdata), PYTHON
(interpreter for the peers, default /usr/bin/python3).
"""

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import calibrated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHRINK = 224
WARMUP = 2

# ---------------------------------------------------------------------------
# peer worker (runs in its own process, under Debian's /usr/bin/python3)
# ---------------------------------------------------------------------------


def peer_worker():
    import cv2
    import numpy as np
    import PIL
    from PIL import Image

    cv2.setNumThreads(1)
    reduced_flag = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
                    4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}
    state = {}

    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def cases(data, arr, red):
        flag = reduced_flag[red]

        def pil_rgb():
            im = Image.open(io.BytesIO(data))
            im.load()
            return im

        def pil_ycbcr():
            # Pillow's own YUV path: libjpeg's YCbCr output, no colour
            # conversion (chroma still upsampled to 4:4:4)
            im = Image.open(io.BytesIO(data))
            im.draft("YCbCr", im.size)
            im.load()
            return im

        def pil_reduced():
            im = Image.open(io.BytesIO(data))
            im.draft("RGB", (SHRINK, SHRINK))
            im.load()
            return im

        def pil_reduced_resize():
            return pil_reduced().resize((SHRINK, SHRINK), Image.BILINEAR)

        def cv2_rgb():
            return cv2.imdecode(arr, cv2.IMREAD_COLOR)

        def cv2_reduced():
            return cv2.imdecode(arr, flag)

        def cv2_reduced_resize():
            return cv2.resize(cv2.imdecode(arr, flag), (SHRINK, SHRINK),
                              interpolation=cv2.INTER_AREA)

        return {f.__name__: f for f in (pil_rgb, pil_ycbcr, pil_reduced, pil_reduced_resize,
                                         cv2_rgb, cv2_reduced, cv2_reduced_resize)}

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if words[0] == "load":
                path = line.strip()[5:]
                with open(path, "rb") as f:
                    data = f.read()
                state["data"] = data
                state["arr"] = np.frombuffer(data, np.uint8)
                im = Image.open(io.BytesIO(data))
                state["size"] = im.size
                reply({"ok": True, "file": path, "width": im.size[0],
                       "height": im.size[1], "mode": im.mode,
                       "pillow": PIL.__version__, "opencv": cv2.__version__,
                       "numpy": np.__version__,
                       "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
                       "python": sys.version.split()[0]})
            elif words[0] == "measure":
                name, target, runs, red = words[1], float(words[2]), int(words[3]), int(words[4])
                fn = cases(state["data"], state["arr"], red)[name]
                out = fn()
                if name.startswith("pil"):
                    ow, oh, mode = out.size[0], out.size[1], out.mode
                else:
                    oh, ow = out.shape[:2]
                    mode = "BGR"
                per, iters = calibrated(fn, target, runs)
                reply({"ok": True, "impl": name.split("_")[0], "case": name,
                       "src_width": state["size"][0], "src_height": state["size"][1],
                       "out_width": ow, "out_height": oh, "out_mode": mode,
                       "reduction": red, "iters": iters, "runs_s": per})
            elif words[0] == "quit":
                break
            else:
                reply({"ok": False, "error": "unknown command", "message": line.strip()})
        except Exception as e:  # report, keep serving
            reply({"ok": False, "error": words[0], "message": "%s: %s" % (type(e).__name__, e)})
    return 0


# ---------------------------------------------------------------------------
# orchestrator
# ---------------------------------------------------------------------------


class WorkerError(Exception):
    pass


class Worker:
    def __init__(self, name, argv, env=None):
        self.name = name
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True, env=env, bufsize=1)

    def ask(self, line):
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        ans = self.p.stdout.readline()
        if not ans:
            self.err.seek(0)
            tail = self.err.read()[-2000:]
            raise WorkerError("%s worker died (exit %s) on '%s'\n%s"
                              % (self.name, self.p.wait(), line, tail))
        try:
            return json.loads(ans)
        except ValueError:
            raise WorkerError("%s worker said: %s" % (self.name, ans.strip()))

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def env_num(name, default, kind=float):
    v = os.environ.get(name, "")
    try:
        return kind(v) if v else default
    except ValueError:
        sys.exit("bench/run.py: %s=%r is not a number" % (name, v))


def pin_prefix():
    if not shutil.which("taskset"):
        return [], None
    cpus = sorted(os.sched_getaffinity(0))
    cpu = env_num("BENCH_CPU", 1 if 1 in cpus else cpus[-1], int)
    return ["taskset", "-c", str(cpu)], cpu


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            s = f.read()
        return s[s.index("[") + 1:s.index("]")]
    except (OSError, ValueError):
        return "unknown"


def peer_reduction(w, h):
    """Largest power-of-two DCT reduction (1/8, 1/4, 1/2) that keeps the
    image at least SHRINK x SHRINK: what Pillow's draft() picks, and the
    cv2 IMREAD_REDUCED_COLOR_k flag that matches it."""
    for k in (8, 4, 2):
        if -(-w // k) >= SHRINK and -(-h // k) >= SHRINK:
            return k
    return 1


def fmt_num(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


class Result:
    def __init__(self):
        self.runs = []          # seconds per call, all passes
        self.pass_medians = []  # seconds per call, one per pass
        self.meta = None
        self.error = None

    def add(self, rep):
        if not rep.get("ok"):
            self.error = "%s: %s %s" % (rep.get("error"), rep.get("status", ""),
                                         rep.get("message", ""))
            return
        self.meta = rep
        self.runs.extend(rep["runs_s"])
        self.pass_medians.append(statistics.median(rep["runs_s"]))

    def ok(self):
        return bool(self.runs) and self.error is None

    def mpx(self):
        """(median, min, max) Mpx/s of source pixels."""
        px = self.meta["src_width"] * self.meta["src_height"] / 1e6
        return (px / statistics.median(self.runs), px / max(self.runs),
                px / min(self.runs))

    def cell(self):
        if self.error:
            return "error"
        if not self.runs:
            return "-"
        med, lo, hi = self.mpx()
        return "%s (%s-%s)" % (fmt_num(med), fmt_num(lo), fmt_num(hi))


def ratio(a, b):
    if not (a and b and a.ok() and b.ok()):
        return "-"
    return "%.2fx" % (a.mpx()[0] / b.mpx()[0])


def print_table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print()
    print(title)
    line = "  ".join(h.ljust(widths[i]) if i == 0 else h.rjust(widths[i])
                     for i, h in enumerate(header))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i])
                        for i, c in enumerate(r)))


def main():
    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    passes = env_num("BENCH_PASSES", 1 if quick else 3, int)
    runs = env_num("BENCH_RUNS", 3 if quick else 7, int)
    target = env_num("BENCH_TARGET", 0.2 if quick else 0.5)
    huge_mode = os.environ.get("BENCH_HUGETLB", "full").lower()
    if huge_mode not in ("full", "all", "0", "off", "no"):
        sys.exit("bench/run.py: BENCH_HUGETLB must be full, all or 0")
    huge_mode = "off" if huge_mode in ("0", "off", "no") else huge_mode

    build = os.environ.get("DVPP_BUILD", "build")
    build = build if os.path.isabs(build) else os.path.join(ROOT, build)
    data_dir = os.environ.get("DVPP_TESTDATA", os.path.join(ROOT, ".cache", "testdata"))
    exe = os.path.join(build, "bench", "bench_decode")
    files = [("1080p", os.path.join(data_dir, "photos", "photo1080.jpg")),
             ("12MP", os.path.join(data_dir, "photos", "IMG_20200608_111614.jpg"))]
    missing = [p for _, p in files if not os.path.isfile(p)]
    if missing:
        sys.exit("bench/run.py: missing %s (run tests/tools/fetch-test-data)" % ", ".join(missing))
    if not os.access(exe, os.X_OK):
        sys.exit("bench/run.py: %s not built (run make bench)" % exe)
    python = os.environ.get("PYTHON") or ("/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                                          else sys.executable)

    pin, cpu = pin_prefix()
    peer_env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GLIBC_TUNABLES"):
        peer_env.pop(k, None)
    huge_env = dict(peer_env, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    me = os.path.abspath(__file__)
    workers = {"dvppd": Worker("dvppd", pin + [exe, "--serve"], env=peer_env),
               "peers": Worker("peers", pin + [python, me, "--peer-worker"], env=peer_env)}
    if huge_mode != "off":
        workers["huge"] = Worker("peers+hugetlb", pin + [python, me, "--peer-worker"],
                                 env=huge_env)

    # (file label, worker, case) -> Result
    res = {}
    info = {}
    errors = []

    def get(label, w, case):
        return res.setdefault((label, w, case), Result())

    def measure(label, w, case, red):
        cmd = ("measure %s %g %d" % (case, target, runs)) + ("" if w == "dvppd" else " %d" % red)
        rep = workers[w].ask(cmd)
        r = get(label, w, case)
        r.add(rep)
        if not rep.get("ok"):
            errors.append("%s %s %s: %s" % (label, w, case, r.error))

    t_start = time.time()
    est = "about %d min" % max(1, round(passes * (22 if huge_mode == "full" else 30)
                                        * (runs * target + 0.6) / 60))
    print("dvppd decode benchmark: %d passes x %d runs of ~%gs per measurement (%s)"
          % (passes, runs, target, est))
    try:
        for p in range(passes):
            for label, path in files:
                for w, wk in workers.items():
                    rep = wk.ask("load " + path)
                    if not rep.get("ok"):
                        raise WorkerError("%s cannot load %s: %s" % (w, path, rep))
                    info[(label, w)] = rep
                src = info[(label, "peers")]
                red = peer_reduction(src["width"], src["height"])
                # Slots: each is measured back to back, order rotated per pass.
                slot_full = [("dvppd", "rgb"), ("dvppd", "nv12"), ("dvppd", "rgb_fresh"),
                             ("peers", "pil_rgb"), ("peers", "pil_ycbcr"), ("peers", "cv2_rgb")]
                slot_shrink = [("dvppd", "shrink224"), ("peers", "pil_reduced"),
                               ("peers", "cv2_reduced"), ("peers", "pil_reduced_resize"),
                               ("peers", "cv2_reduced_resize")]
                if huge_mode != "off":
                    slot_full += [("huge", "pil_rgb"), ("huge", "cv2_rgb")]
                if huge_mode == "all":
                    slot_shrink += [("huge", c) for c in ("pil_reduced", "cv2_reduced",
                                                          "pil_reduced_resize",
                                                          "cv2_reduced_resize")]
                for slot in (slot_full, slot_shrink):
                    k = p % len(slot)
                    for w, case in slot[k:] + slot[:k]:
                        measure(label, w, case, red)
            print("  pass %d/%d done (%.0f s)" % (p + 1, passes, time.time() - t_start))
            sys.stdout.flush()
    except WorkerError as e:
        errors.append(str(e))
    finally:
        for wk in workers.values():
            wk.close()

    report(files, info, res, errors, passes, runs, target, cpu, huge_mode, build)
    return 1 if errors else 0


def report(files, info, res, errors, passes, runs, target, cpu, huge_mode, build):
    pe = next((v for (l, w), v in info.items() if w == "peers"), {})
    dv = next((v for (l, w), v in info.items() if w == "dvppd"), {})
    print()
    print("machine: %s, %d CPUs, pinned to CPU %s, THP %s" % (
        cpu_model(), os.cpu_count() or 0, "none (no taskset)" if cpu is None else cpu,
        thp_mode()))
    print("dvppd %s (%s, reused output buffer)  |  Pillow %s  |  OpenCV %s "
          "(setNumThreads(1))  |  numpy %s  |  Python %s" % (
              dv.get("dvpp_version", "?"), dv.get("jpeg_library", "?"), pe.get("pillow", "?"),
              pe.get("opencv", "?"), pe.get("numpy", "?"), pe.get("python", "?")))
    print("Mpx/s of source pixels: median of %d runs (%d passes x %d), (min-max); "
          "ratio = dvppd median / peer median, >1 = dvppd faster" % (passes * runs, passes, runs))

    def g(label, w, case):
        return res.get((label, w, case), Result())

    header = ["case", "dvppd Mpx/s", "Pillow Mpx/s", "OpenCV Mpx/s", "dvppd/Pillow",
              "dvppd/OpenCV"]
    rows = []
    notes = []
    for label, path in files:
        d_rgb, d_nv12, d_sh = g(label, "dvppd", "rgb"), g(label, "dvppd", "nv12"), \
            g(label, "dvppd", "shrink224")
        d_fresh = g(label, "dvppd", "rgb_fresh")
        p_rgb, c_rgb = g(label, "peers", "pil_rgb"), g(label, "peers", "cv2_rgb")
        p_yuv = g(label, "peers", "pil_ycbcr")
        p_red, c_red = g(label, "peers", "pil_reduced"), g(label, "peers", "cv2_reduced")
        p_rr, c_rr = g(label, "peers", "pil_reduced_resize"), g(label, "peers",
                                                                  "cv2_reduced_resize")
        src = info.get((label, "peers"), {})
        size = "%dx%d" % (src.get("width", 0), src.get("height", 0))
        rows.append(["%s %s decode -> RGB" % (label, size), d_rgb.cell(), p_rgb.cell(),
                     c_rgb.cell(), ratio(d_rgb, p_rgb), ratio(d_rgb, c_rgb)])
        rows.append(["%s decode -> RGB, output allocated per call" % label, d_fresh.cell(),
                     p_rgb.cell(), c_rgb.cell(), ratio(d_fresh, p_rgb), ratio(d_fresh, c_rgb)])
        rows.append(["%s decode -> NV12 (Pillow: YCbCr, OpenCV: RGB)" % label, d_nv12.cell(),
                     p_yuv.cell(), c_rgb.cell(), ratio(d_nv12, p_yuv), ratio(d_nv12, c_rgb)])
        sh = ""
        if d_sh.meta:
            sh = " %d/8 -> %dx%d" % (d_sh.meta["scale_num"], d_sh.meta["out_width"],
                                     d_sh.meta["out_height"])
        rows.append(["%s decode, shrink-on-load%s (resize not incl.)" % (label, sh),
                     d_sh.cell(), p_red.cell(), c_red.cell(), ratio(d_sh, p_red),
                     ratio(d_sh, c_red)])
        rows.append(["%s   peers: same + resize to 224x224" % label, "n/a", p_rr.cell(),
                     c_rr.cell(), "-", "-"])
        # Do the reduced outputs agree in size?
        sizes = []
        for name, r in (("dvppd", d_sh), ("Pillow draft", p_red), ("OpenCV", c_red)):
            if r.meta:
                sizes.append("%s %dx%d" % (name, r.meta["out_width"], r.meta["out_height"]))
        if sizes:
            notes.append("%s reduced decode output: %s" % (label, ", ".join(sizes)))
    print_table("JPEG decode, single thread (peers: default glibc malloc)", header, rows)
    print("  NV12 rows: against each peer's own YUV path where it has one: Pillow "
          "Image.draft('YCbCr', size), libjpeg's YCbCr without colour conversion (4:4:4, "
          "chroma upsampled; NV12 keeps it 4:2:0); OpenCV has none, shown decoding to BGR.")
    print("  'allocated per call' rows: dvppd's output allocated and freed around each decode, "
          "as the peers' are (the other dvppd rows reuse one warm buffer, as the daemon's "
          "workers do).")
    print("  shrink rows: dvppd DCT-scales by dvpp_jpeg_shrink_scale(w,h,224,224); peers use "
          "Image.draft('RGB',(224,224)) and cv2.IMREAD_REDUCED_COLOR_k with the same "
          "reduction.")
    print("  '+ resize' rows: Pillow resize BILINEAR (antialiased), OpenCV INTER_AREA; dvppd's "
          "resize is measured in bench/run_vpc.py.")
    for n in notes:
        print("  " + n)

    if huge_mode != "off":
        hrows = []
        for label, _ in files:
            d_rgb, d_nv12 = g(label, "dvppd", "rgb"), g(label, "dvppd", "nv12")
            hp, hc = g(label, "huge", "pil_rgb"), g(label, "huge", "cv2_rgb")
            hrows.append(["%s decode -> RGB" % label, d_rgb.cell(), hp.cell(), hc.cell(),
                          ratio(d_rgb, hp), ratio(d_rgb, hc)])
            hrows.append(["%s decode -> NV12 (peers: RGB)" % label, d_nv12.cell(), hp.cell(),
                          hc.cell(), ratio(d_nv12, hp), ratio(d_nv12, hc)])
            if huge_mode == "all":
                d_sh = g(label, "dvppd", "shrink224")
                hpr, hcr = g(label, "huge", "pil_reduced"), g(label, "huge", "cv2_reduced")
                hrows.append(["%s shrink-on-load decode" % label, d_sh.cell(), hpr.cell(),
                              hcr.cell(), ratio(d_sh, hpr), ratio(d_sh, hcr)])
                hrows.append(["%s peers: same + resize 224x224" % label, "n/a",
                              g(label, "huge", "pil_reduced_resize").cell(),
                              g(label, "huge", "cv2_reduced_resize").cell(), "-", "-"])
        tun = next((v.get("glibc_tunables") for (l, w), v in info.items() if w == "huge"), "")
        print_table("Same, peers with GLIBC_TUNABLES=%s (malloc on THP: fewer page faults; "
                    "dvppd column repeated)" % (tun or "?"), header, hrows)
        if thp_mode() == "never":
            print("  note: THP is 'never' on this machine, so hugetlb=1 cannot help the peers.")

    # Per-measurement detail: ms per image, images/s, pass medians, loop count.
    print()
    print("detail: ms/image median, images/s, pass medians (ms), output, loop count")
    for (label, w, case), r in sorted(res.items()):
        if not r.ok():
            continue
        ms = statistics.median(r.runs) * 1e3
        m = r.meta
        out = "%dx%d" % (m["out_width"], m["out_height"])
        print("  %-5s %-13s %-19s %8.3f ms %8.1f img/s  passes %-26s out %-9s x%d" % (
            label, {"huge": "peers+hugetlb"}.get(w, w), case, ms, 1e3 / ms,
            " / ".join("%.3f" % (x * 1e3) for x in r.pass_medians), out, m["iters"]))

    out = {"passes": passes, "runs": runs, "target_s": target, "cpu": cpu,
           "thp": thp_mode(), "info": {"%s|%s" % k: v for k, v in info.items()},
           "results": {"%s|%s|%s" % k: {"runs_s": r.runs, "pass_medians_s": r.pass_medians,
                                        "meta": r.meta, "error": r.error}
                       for k, r in res.items()},
           "errors": errors}
    path = os.path.join(build, "bench", "decode-results.json")
    try:
        with open(path, "w") as f:
            json.dump(out, f, indent=1)
        rel = os.path.relpath(path, ROOT)
        print("\nraw runs: %s" % (path if rel.startswith("..") else rel))
    except OSError as e:
        print("\n(could not write %s: %s)" % (path, e))
    if errors:
        print("\nERRORS (measurements that could not run):")
        for e in errors:
            print("  " + e)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--peer-worker":
        sys.exit(peer_worker())
    sys.exit(main())
