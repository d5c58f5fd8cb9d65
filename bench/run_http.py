#!/usr/bin/python3
"""bench/run_http.py: dvppd's HTTP API beside nginx image_filter and dvppctl batch.

Run it as `/usr/bin/python3 bench/run_http.py` (after `make`; needs nginx,
libnginx-mod-http-image-filter and wrk, as reference/anchors.md section 4).

Input: the 1920x1080 q90 photo of reference/anchors.md (img1080_q90.jpg,
587,194 B), i.e. .cache/testdata/photos/photo1080.jpg made by
tests/tools/fetch-test-data. When only the 12 MP source photo is cached it is
remade here the same way (Pillow: centred 16:9 crop, LANCZOS to 1920x1080,
q90). When neither is there a synthetic photo-like 1920x1080 q90 JPEG is
generated with cv2, and the output says so (its numbers are then not
comparable with the anchors).

Servers, both started by this script on free ports and stopped at exit
(also on an error or a signal):
  nginx   its own prefix in a temp dir, the nginx.conf of anchors.md s4
          (2 workers, image_filter resize 300 300, jpeg quality 85,
          buffer 20M), GET /resize.jpg
  dvppd   build/dvppd --config TMP.json with
          {"http":{"listen":"127.0.0.1:PORT","threads":2},"socket":{"path":""},
           "device":{"channels":2}}; ready when GET /readyz answers 200
Loads (wrk -t2 -c8 -dDUR s --latency, closed loop, same 2 vCPUs as the
servers, unpinned, as anchors.md):
  nginx image_filter thumbnail   GET  /resize.jpg
  dvppd /v1/image thumbnail      POST /v1/image?w=300&h=300&mode=fit&quality=85
                                 (shrinks on load, as users get it)
  dvppd /v1/image full decode    the same with &shrink_on_load=0: a full-size
                                 decode, as nginx image_filter does (the fair row)
  dvppd /v1/preprocess tensor    POST /v1/preprocess?w=224&h=224&mean=..&std=..
                                 (the JPEG as body, from a wrk Lua script)
  dvppd /v1/preprocess?trace=1   the same with every request traced and stored
                                 (docs/tracing.md); reported as traced/untraced,
                                 the median of the per-round ratios
  dvppctl batch                  64 copies of the photo, --size 224x224, the same
                                 mean/std, --channels 2, -o TMP/out.npy; wall
                                 time of the whole process, images/s = 64 / t
                                 (it waits on the job's completion notice, so t
                                 ends with the last image); a 1-image batch's
                                 time is shown as start-up + 1 image
  (extra) bench_batch            build/bench/bench_batch --case dvppd_c2_exact:
                                 the same job on the device model in-process,
                                 when built (make bench); ratio shown, no goal
Each round runs every case once, the order rotating per round; rounds are
pooled and the medians reported. Ratios: /v1/image vs nginx (goal >= 5x),
/v1/preprocess vs dvppctl batch (goal >= 0.90), /v1/preprocess vs the
in-process batch (goal >= 0.97: the front end's own cost; wrk runs on the
same CPUs, so the CPU-per-item ratio is printed beside it). Every wrk run must have
zero non-2xx responses and zero socket errors, else it is flagged.

CPU per item (the HTTP layer's cost): wrk shares the 2 vCPUs with the server,
so req/s mixes wrk's CPU with dvppd's. Around every /v1/image and
/v1/preprocess wrk run the dvppd process's utime+stime (/proc/PID/stat, all
threads, SC_CLK_TCK ticks) is read before and 0.25 s after wrk exits, and
divided by the requests wrk completed (the <= 8 requests in flight at the end
are served but not counted: < 0.5 % high). wrk's own CPU (rusage of the
child) is reported beside it. bench_batch and dvppctl batch: the child's
rusage (RUSAGE_CHILDREN delta around each run) over the images it processed;
bench_batch runs 1 warm-up batch, a calibration of 1+2+..+n batches (n
doubling until a probe takes min(0.2 s, --target)) and --runs x
batches_per_run timed batches of 64, so its count is derived from its JSON
line and the batch time (bench/bench_batch.c). The line "HTTP layer costs Z%"
compares dvppd's CPU per /v1/preprocess request with bench_batch's CPU per
image: the same decode/resize/normalise, so the rest is the HTTP path
(receiving the JPEG, parsing, one single-image job, sending the tensor).

Nothing is asserted about times. Exit status: 0, or 1 when a case could not
run at all or a wrk run saw errors.

Environment: DVPP_BENCH_RUNS (rounds, 3), DVPP_BENCH_DURATION (s per wrk run, 8),
DVPP_BENCH_WARMUP (s of wrk per target before the first round, 2; 0 = none),
DVPP_BENCH_BATCH_REPS (dvppctl batch runs per round, 3), DVPP_BUILD (build),
DVPP_TESTDATA (.cache/testdata). The summary goes to DVPP_BUILD/bench/http.json.
"""
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from benchlib import calibrated, log, clean_env, free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"))
TESTDATA = os.environ.get("DVPP_TESTDATA", os.path.join(ROOT, ".cache", "testdata"))
RUNS = int(os.environ.get("DVPP_BENCH_RUNS", "3"))
DUR = int(float(os.environ.get("DVPP_BENCH_DURATION", "8")))
WARMUP = int(float(os.environ.get("DVPP_BENCH_WARMUP", "2")))
BATCH_REPS = int(os.environ.get("DVPP_BENCH_BATCH_REPS", "3"))
N_BATCH = 64
INPROC_RUNS, INPROC_TARGET = 3, 0.5  # bench_batch --runs, --target
CLK_TCK = os.sysconf("SC_CLK_TCK")
WRK_ARGS = ["-t2", "-c8", "--latency"]

MEAN = "0.485,0.456,0.406"
STD = "0.229,0.224,0.225"
Q_IMAGE = "/v1/image?w=300&h=300&mode=fit&quality=85"
# the same with a full-size decode, as nginx image_filter decodes (the fair row)
Q_IMAGE_FULL = Q_IMAGE + "&shrink_on_load=0"
Q_PRE = f"/v1/preprocess?w=224&h=224&mean={MEAN}&std={STD}"
NGINX_MODULE = "/usr/lib/nginx/modules/ngx_http_image_filter_module.so"

GOAL_THUMB = 5.0   # /v1/image req/s >= 5x nginx image_filter
GOAL_TENSOR = 0.90  # /v1/preprocess req/s >= 0.90 x dvppctl batch images/s
GOAL_FRONT = 0.97   # /v1/preprocess req/s >= 0.97 x the in-process batch images/s (8/8)
ANCHOR_NGINX = 31.2  # reference/anchors.md s4, -t2 -c8 -d15s, 5 runs

NGINX_CONF = """\
worker_processes 2; daemon off; pid nginx.pid; error_log logs/error.log warn;
load_module {module};
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; types {{ image/jpeg jpg; }}
  client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fcgi; uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
  server {{ listen 127.0.0.1:{port}; root html;
    location = /static.jpg {{ alias html/img1080_q90.jpg; }}
    location = /resize.jpg {{ alias html/img1080_q90.jpg; image_filter resize 300 300; image_filter_jpeg_quality 85; image_filter_buffer 20M; }}
    location = /crop.jpg   {{ alias html/img1080_q90.jpg; image_filter crop 224 224;   image_filter_jpeg_quality 85; image_filter_buffer 20M; }} }} }}
"""

WRK_POST_LUA = """\
local f = assert(io.open("{path}", "rb"))
local body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "image/jpeg"
"""


def http(method, url, body=None, headers=None, timeout=10):
    """(status, headers dict lower-case, body bytes); status 0 on no answer."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
    except (urllib.error.URLError, OSError):
        return 0, {}, b""


def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker, or None."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        m = data[i + 1]
        if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        ln = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
            return (int.from_bytes(data[i + 7:i + 9], "big"),
                    int.from_bytes(data[i + 5:i + 7], "big"))
        i += 2 + ln
    return None


# ---------------------------------------------------------------------------
# the test image
# ---------------------------------------------------------------------------

def find_image(tmp):
    """(path, description) of the 1080p q90 test JPEG."""
    photos = os.path.join(TESTDATA, "photos")
    p = os.path.join(photos, "photo1080.jpg")
    if os.path.isfile(p):
        return p, (f"{os.path.relpath(p, ROOT)} (real photo, made by tests/tools/fetch-test-data "
                   "as anchors.md img1080_q90.jpg: forensics-samples-files "
                   "IMG_20200608_111614.jpg, 16:9 crop, LANCZOS 1920x1080, Pillow q90)")
    src = os.path.join(photos, "IMG_20200608_111614.jpg")
    out = os.path.join(tmp, "img1080_q90.jpg")
    if os.path.isfile(src):
        from PIL import Image
        im = Image.open(src).convert("RGB")
        im = im.crop((0, 375, 4000, 2625)).resize((1920, 1080), Image.Resampling.LANCZOS)
        im.save(out, quality=90)
        return out, (f"made here from {os.path.relpath(src, ROOT)} as anchors.md does "
                     "(16:9 crop, LANCZOS 1920x1080, Pillow q90)")
    import cv2
    import numpy as np
    rng = np.random.default_rng(1080)
    h, w = 1080, 1920
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    img[..., 0] = 90 + 60 * np.sin(xx / 310.0) + 40 * (yy / h)       # B
    img[..., 1] = 120 + 50 * np.cos(yy / 170.0 + xx / 600.0)          # G: "grass" band
    img[..., 2] = 100 + 70 * (xx / w) + 30 * np.sin((xx + yy) / 90.0)  # R
    for _ in range(60):  # blobs: objects at several scales
        c = tuple(int(v) for v in rng.integers(0, 255, 3))
        cv2.circle(img, (int(rng.integers(0, w)), int(rng.integers(0, h))),
                   int(rng.integers(10, 220)), c, -1, cv2.LINE_AA)
    img = cv2.GaussianBlur(img, (0, 0), 3)
    # fine texture (foliage / fur level of detail), then mild noise like a sensor
    tex = cv2.GaussianBlur(rng.normal(0, 1, (h, w, 3)).astype(np.float32), (0, 0), 1.2)
    img += 28 * tex + rng.normal(0, 4, (h, w, 3)).astype(np.float32)
    cv2.imwrite(out, np.clip(img, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 90])
    return out, ("SYNTHETIC: no cached real photo (run tests/tools/fetch-test-data); "
                 "generated a photo-like 1920x1080 image with cv2, q90 - numbers are not "
                 "comparable with anchors.md")


# ---------------------------------------------------------------------------
# servers
# ---------------------------------------------------------------------------

class Servers:
    def __init__(self, tmp):
        self.tmp = tmp
        self.nginx = None
        self.dvppd = None
        self.dvppd_log = None

    def start_nginx(self, image):
        prefix = os.path.join(self.tmp, "ngx")
        for d in ("html", "logs", "tmp"):
            os.makedirs(os.path.join(prefix, d), exist_ok=True)
        shutil.copyfile(image, os.path.join(prefix, "html", "img1080_q90.jpg"))
        # workers run as nobody when the master is root: let them read the tree
        for dirpath, dirs, files in os.walk(self.tmp):
            os.chmod(dirpath, 0o755)
            for f in files:
                os.chmod(os.path.join(dirpath, f), 0o644)
        port = free_port()
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(module=NGINX_MODULE, port=port))
        argv = ["nginx", "-p", prefix + "/", "-c", conf, "-e", "logs/error.log"]
        self.nginx = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      env=clean_env(), start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.nginx.poll() is not None:
                err = self.nginx.stderr.read().decode(errors="replace")
                raise RuntimeError(f"nginx exited {self.nginx.returncode}: {err.strip()}")
            if http("GET", base + "/static.jpg", timeout=2)[0] == 200:
                return base
            time.sleep(0.1)
        raise RuntimeError("nginx did not answer within 15 s")

    def start_dvppd(self):
        exe = os.path.join(BUILD, "dvppd")
        if not os.access(exe, os.X_OK):
            raise RuntimeError(f"{exe} missing (make)")
        port = free_port()
        conf = os.path.join(self.tmp, "dvppd.json")
        with open(conf, "w") as f:
            json.dump({"http": {"listen": f"127.0.0.1:{port}", "threads": 2},
                       "socket": {"path": ""}, "device": {"channels": 2}}, f)
        self.dvppd_log = os.path.join(self.tmp, "dvppd.log")
        with open(self.dvppd_log, "wb") as lf:
            self.dvppd = subprocess.Popen([exe, "--config", conf], stdout=lf, stderr=lf,
                                          stdin=subprocess.DEVNULL, env=clean_env(),
                                          start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        t0 = time.monotonic()
        while time.monotonic() < t0 + 30:
            if self.dvppd.poll() is not None:
                raise RuntimeError(f"dvppd exited {self.dvppd.returncode}: "
                                   f"{self.dvppd_tail()}")
            st = http("GET", base + "/readyz", timeout=2)[0]
            if st == 200:
                return base
            if st == 0 and time.monotonic() > t0 + 10:  # nothing listens: no HTTP front end
                raise RuntimeError(f"dvppd: nothing answers on {base} after 10 s; "
                                   f"log: {self.dvppd_tail()}")
            time.sleep(0.1)
        raise RuntimeError(f"dvppd: GET /readyz not 200 within 30 s; log: {self.dvppd_tail()}")

    def dvppd_tail(self, n=600):
        try:
            with open(self.dvppd_log, "rb") as f:
                return f.read().decode(errors="replace")[-n:].strip()
        except OSError:
            return ""

    @staticmethod
    def _stop(p, sig, wait):
        if p is None or p.poll() is not None:
            return
        try:
            p.send_signal(sig)
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # its own session: itself and its workers
            except OSError:
                pass
            p.wait(timeout=5)
        except OSError:
            pass

    def stop(self):
        self._stop(self.nginx, signal.SIGQUIT, 10)   # graceful, workers finish and exit
        self._stop(self.dvppd, signal.SIGTERM, 25)   # dvppd drains up to 20 s
        for p in (self.nginx, self.dvppd):
            if p is not None and p.stderr is not None:
                p.stderr.close()


# ---------------------------------------------------------------------------
# measurements
# ---------------------------------------------------------------------------

def to_ms(v, unit):
    return float(v) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def proc_cpu_s(pid):
    """utime + stime of process @pid, all its threads, in seconds (None if gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return None
    fields = st[st.rindex(")") + 2:].split()  # after "pid (comm) "; fields[0] is state
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # stat fields 14, 15


def children_cpu_s():
    """utime + stime of every reaped child so far, in seconds."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def wrk(url, dur, script=None, server_pid=None):
    """One wrk run; with @server_pid also the server's CPU time during it."""
    argv = ["wrk"] + WRK_ARGS + [f"-d{dur}s"]
    if script:
        argv += ["-s", script]
    argv.append(url)
    srv0, ch0 = (proc_cpu_s(server_pid) if server_pid else None), children_cpu_s()
    p = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       timeout=dur + 60)
    ch1 = children_cpu_s()
    srv1 = None
    if srv0 is not None:
        time.sleep(0.25)  # let the server finish the requests in flight when wrk stopped
        srv1 = proc_cpu_s(server_pid)
    out = p.stdout
    res = {"argv": " ".join(argv[:-1]), "rc": p.returncode}
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    res["req_s"] = float(m.group(1)) if m else None
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
    res["p99_ms"] = to_ms(*m.groups()) if m else None
    m = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
    res["p50_ms"] = to_ms(*m.groups()) if m else None
    m = re.search(r"(\d+) requests in", out)
    res["requests"] = int(m.group(1)) if m else None
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    res["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    res["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    if m:
        res["socket_errors_detail"] = m.group(0)
    if res["req_s"] is None or p.returncode != 0:
        res["error"] = (out + p.stderr).strip()[-400:]
    if res["requests"]:
        res["wrk_cpu_ms_per_req"] = (ch1 - ch0) * 1e3 / res["requests"]
        if srv0 is not None and srv1 is not None:
            res["server_cpu_s"] = srv1 - srv0
            res["server_cpu_ms_per_req"] = (srv1 - srv0) * 1e3 / res["requests"]
    return res


def inproc_images(js, runs, target):
    """(images, exact) that one bench_batch case processed: 1 warm-up batch, the
    calibration 1+2+..+n (n doubles until a probe of n batches takes
    min(0.2, target) s) and runs x batches_per_run timed ones (bench/bench_batch.c).
    n comes from the median run's batch time; exact is False when the fastest or
    the slowest run, each +-10 %, would give another n."""
    thr = min(0.2, target)

    def calib_n(tb):
        n = 1
        while n * tb < thr:
            n *= 2
        return n
    n = calib_n(N_BATCH / statistics.median(js["runs"]))
    ns = {n} | {calib_n(N_BATCH / v * k) for v in (max(js["runs"]), min(js["runs"]))
                for k in (0.9, 1.1)}
    batches = 1 + (2 * n - 1) + runs * js["batches_per_run"]
    return batches * N_BATCH, len(ns) == 1


def run_batch(image, tmp):
    """(once, out path, cpu list): once() runs the 64-image dvppctl batch and
    appends the process's CPU seconds (rusage) to the list."""
    exe = os.path.join(BUILD, "dvppctl")
    out = os.path.join(tmp, "out.npy")
    argv = ([exe, "batch"] + [image] * N_BATCH +
            ["--size", "224x224", "--mean", MEAN, "--std", STD, "--channels", "2", "-o", out])
    cpu = []

    def once():
        c0 = children_cpu_s()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=clean_env())
        cpu.append(children_cpu_s() - c0)
    return once, out, cpu


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def main():
    t_start = time.perf_counter()
    for tool in ("nginx", "wrk"):
        if shutil.which(tool) is None:
            sys.exit(f"bench/run_http.py: {tool} not found (apt-get install nginx "
                     "libnginx-mod-http-image-filter wrk)")
    if not os.path.isfile(NGINX_MODULE):
        sys.exit(f"bench/run_http.py: {NGINX_MODULE} missing "
                 "(apt-get install libnginx-mod-http-image-filter)")

    tmp = tempfile.mkdtemp(prefix="dvpp-http-bench-")
    srv = Servers(tmp)

    def on_signal(sig, _frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        return bench(srv, tmp, t_start)
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def bench(srv, tmp, t_start):
    problems = []
    image, image_desc = find_image(tmp)
    with open(image, "rb") as f:
        body = f.read()
    wh = jpeg_size(body)
    log(f"image: {image_desc}; {wh[0]}x{wh[1]}, {len(body):,} B" if wh else f"image: {image_desc}")

    ngx = srv.start_nginx(image)
    st, hd, thumb = http("GET", ngx + "/resize.jpg")
    ngx_out = jpeg_size(thumb) if st == 200 else None
    log(f"nginx {ngx}: GET /resize.jpg -> {st}, {ngx_out and '%dx%d' % ngx_out}, {len(thumb):,} B")
    if st != 200:
        problems.append(f"nginx /resize.jpg answered {st}")

    dv, dv_err, checks = None, None, {}
    try:
        dv = srv.start_dvppd()
    except RuntimeError as e:
        dv_err = str(e)
        problems.append(dv_err)
        log(f"dvppd: NOT RUNNING: {dv_err}")
    if dv:
        st, _, _ = http("GET", dv + "/healthz")
        log(f"dvppd {dv}: /healthz {st}, /readyz 200")
        hdr = {"Content-Type": "image/jpeg"}
        st, hd, out = http("POST", dv + Q_IMAGE, body, hdr)
        checks["image"] = {"status": st, "bytes": len(out),
                           "size": jpeg_size(out) if st == 200 else None,
                           "timing": hd.get("x-dvpp-timing")}
        log(f"  POST {Q_IMAGE} -> {st} {hd.get('content-type')}, "
            f"{checks['image']['size'] and '%dx%d' % checks['image']['size']}, {len(out):,} B"
            + ("" if st == 200 else f": {out[:300].decode(errors='replace')}"))
        if st != 200:
            problems.append(f"/v1/image answered {st}")
        st, hd, pre = http("POST", dv + Q_PRE, body, hdr)
        checks["preprocess"] = {"status": st, "bytes": len(pre), "shape": hd.get("x-dvpp-shape"),
                                "dtype": hd.get("x-dvpp-dtype"), "timing": hd.get("x-dvpp-timing")}
        log(f"  POST {Q_PRE} -> {st} {hd.get('content-type')}, shape {hd.get('x-dvpp-shape')} "
            f"{hd.get('x-dvpp-dtype')}, {len(pre):,} B"
            + ("" if st == 200 else f": {pre[:300].decode(errors='replace')}"))
        if st != 200:
            problems.append(f"/v1/preprocess answered {st}")
            pre = None
    else:
        pre = None

    # the wrk Lua script: the JPEG as the POST body
    lua = os.path.join(tmp, "post_jpeg.lua")
    with open(lua, "w") as f:
        f.write(WRK_POST_LUA.format(path=image.replace("\\", "\\\\").replace('"', '\\"')))
    batch_once, batch_out, batch_cpu = run_batch(image, tmp)

    cases = ["nginx", "image", "image_full", "preprocess", "traced", "batch"]
    inproc_exe = os.path.join(BUILD, "bench", "bench_batch")
    if os.access(inproc_exe, os.X_OK):
        cases.append("inproc")
    wrk_target = {"nginx": (ngx + "/resize.jpg", None),
                  "image": (dv + Q_IMAGE, lua) if dv else None,
                  "image_full": (dv + Q_IMAGE_FULL, lua) if dv else None,
                  "preprocess": (dv + Q_PRE, lua) if dv else None,
                  "traced": (dv + Q_PRE + "&trace=1", lua) if dv else None}
    runs = {c: [] for c in cases}
    batch_s = []
    inproc_cpu = []

    # batch: one untimed call, and the byte check against the HTTP tensor
    try:
        batch_once()
        if pre is not None:
            try:
                import numpy as np, io
                a = np.load(io.BytesIO(pre))
                b = np.load(batch_out, mmap_mode="r")
                same = a.shape[1:] == b.shape[1:] and bool(np.array_equal(a[0], b[0]))
                checks["preprocess"]["same_as_batch"] = same
                log(f"  /v1/preprocess tensor {a.shape} {a.dtype} == dvppctl batch slice 0: {same}")
            except Exception as e:  # numpy missing or a bad .npy: report, go on
                log(f"  tensor check skipped: {e}")
    except subprocess.CalledProcessError as e:
        problems.append(f"dvppctl batch failed: {e.stderr.decode(errors='replace')[-300:]}")
        cases.remove("batch")

    if WARMUP > 0:
        for c in ("nginx", "image", "preprocess", "traced"):
            if wrk_target.get(c):
                wrk(wrk_target[c][0], WARMUP, wrk_target[c][1])

    log(f"\n{RUNS} rounds x (3 wrk runs of {DUR} s, {BATCH_REPS} dvppctl batch runs), "
        "order rotating ...")
    for r in range(RUNS):
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for c in order:
            if c == "inproc":
                c0 = children_cpu_s()
                p = subprocess.run([inproc_exe, "--case", "dvppd_c2_exact",
                                    "--runs", str(INPROC_RUNS), "--target", str(INPROC_TARGET),
                                    "--photo", image], capture_output=True,
                                   text=True, env=clean_env())
                cpu_s = children_cpu_s() - c0
                js = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
                if p.returncode or not js:
                    problems.append(f"bench_batch failed: {p.stderr.strip()[-300:]}")
                    continue
                n_img, exact = inproc_images(js[0], INPROC_RUNS, INPROC_TARGET)
                inproc_cpu.append({"round": r + 1, "cpu_s": cpu_s, "images": n_img,
                                   "images_exact": exact,
                                   "batches_per_run": js[0]["batches_per_run"],
                                   "cpu_ms_per_img": cpu_s * 1e3 / n_img})
                runs[c].extend({"img_s": v} for v in js[0]["runs"])
                log(f"  round {r + 1} inproc     " +
                    ", ".join(f"{v:.1f} img/s" for v in js[0]["runs"]) +
                    f"; CPU {cpu_s:.2f} s / {n_img} images = {cpu_s * 1e3 / n_img:.2f} ms/img"
                    + ("" if exact else " (image count uncertain: calibration n ambiguous)"))
                continue
            if c == "batch":
                del batch_cpu[:]
                per, _ = calibrated(batch_once, 0.0, BATCH_REPS, warm=0)
                cpu = batch_cpu[-len(per):]  # the timed calls (the first is calibrated's probe)
                batch_s.extend(per)
                runs[c].extend({"seconds": s, "img_s": N_BATCH / s, "cpu_s": u,
                                "cpu_ms_per_img": u * 1e3 / N_BATCH} for s, u in zip(per, cpu))
                log(f"  round {r + 1} batch      " +
                    ", ".join(f"{N_BATCH / s:.1f} img/s ({s:.3f} s, CPU {u * 1e3 / N_BATCH:.2f} "
                              "ms/img)" for s, u in zip(per, cpu)))
                continue
            if not wrk_target.get(c):
                continue
            res = wrk(wrk_target[c][0], DUR, wrk_target[c][1],
                      server_pid=srv.dvppd.pid if c in ("image", "image_full", "preprocess",
                                                        "traced")
                      else None)
            res["round"] = r + 1
            runs[c].append(res)
            bad = []
            if res.get("error"):
                bad.append(f"wrk failed: {res['error']}")
            if res["non2xx"]:
                bad.append(f"{res['non2xx']} non-2xx responses")
            if res["socket_errors"]:
                bad.append(res["socket_errors_detail"])
            for b in bad:
                problems.append(f"{c} round {r + 1}: {b}")
            cpu = ""
            if res.get("server_cpu_ms_per_req") is not None:
                cpu = (f", dvppd CPU {res['server_cpu_ms_per_req']:.2f} ms/req, "
                       f"wrk {res['wrk_cpu_ms_per_req']:.2f} ms/req")
            log(f"  round {r + 1} {c:<10} {fmt(res['req_s'], '.1f')} req/s, p99 "
                f"{fmt(res['p99_ms'], '.1f')} ms, {res['requests']} requests{cpu}"
                + (f"  <-- {'; '.join(bad)}" if bad else ""))
        if dv and srv.dvppd.poll() is not None:
            problems.append(f"dvppd died (exit {srv.dvppd.returncode}): {srv.dvppd_tail()}")
            wrk_target["image"] = wrk_target["preprocess"] = wrk_target["traced"] = None
            dv = None

    # one-image dvppctl batch: the process + device start-up cost inside the 64-image time
    # (a note only: it is a few % of the 64-image time, below the round-to-round spread)
    one = [os.path.join(BUILD, "dvppctl"), "batch", image, "--size", "224x224", "--mean", MEAN,
           "--std", STD, "--channels", "2", "-o", os.path.join(tmp, "one.npy")]
    startup_s = med(calibrated(lambda: subprocess.run(one, check=True, env=clean_env(),
                                                      stdout=subprocess.DEVNULL), 0.0, 3,
                               warm=1)[0])

    # ---------------------------------------------------------------- summary
    def rate(c):
        return med(x["req_s"] if "req_s" in x else x["img_s"] for x in runs[c])

    def p99(c):
        return med(x.get("p99_ms") for x in runs[c])

    def span(c):
        v = [x["req_s"] if "req_s" in x else x["img_s"] for x in runs[c]]
        v = [x for x in v if x is not None]
        return f"{min(v):,.1f}-{max(v):,.1f}" if v else "-"

    def cpu_ms(c):
        """median CPU ms per request / image of the process measured in case @c"""
        if c == "inproc":
            return med(x["cpu_ms_per_img"] for x in inproc_cpu)
        return med(x.get("server_cpu_ms_per_req", x.get("cpu_ms_per_img")) for x in runs[c])

    r_ngx, r_img, r_pre, r_bat = rate("nginx"), rate("image"), rate("preprocess"), rate("batch")
    # tracing on: ?trace=1 on the same load, per round (the same daemon, minutes apart)
    per_round = {x["round"]: x["req_s"] for x in runs["preprocess"] if x.get("req_s")}
    trace_ratios = [x["req_s"] / per_round[x["round"]] for x in runs["traced"]
                    if x.get("req_s") and per_round.get(x["round"])]
    trace_ratio = med(trace_ratios) if trace_ratios else None
    thumb_ratio = r_img / r_ngx if r_img and r_ngx else None
    r_full = rate("image_full")
    full_ratio = r_full / r_ngx if r_full and r_ngx else None
    tensor_ratio = r_pre / r_bat if r_pre and r_bat else None
    cpu_img, cpu_pre = cpu_ms("image"), cpu_ms("preprocess")
    cpu_bat = cpu_ms("batch") if "batch" in runs else None
    cpu_inp = cpu_ms("inproc") if "inproc" in runs else None
    http_pct = (cpu_pre / cpu_inp - 1) * 100 if cpu_pre and cpu_inp else None
    wrk_cpu = {c: med(x.get("wrk_cpu_ms_per_req") for x in runs[c])
               for c in ("nginx", "image", "preprocess")}

    rows = [("nginx image_filter thumbnail", "nginx", "1.00x (peer)"),
            ("dvppd /v1/image thumbnail", "image",
             f"{thumb_ratio:.2f}x nginx" if thumb_ratio else "-"),
            ("  the same, full-size decode", "image_full",
             f"{full_ratio:.2f}x nginx" if full_ratio else "-"),
            ("dvppd /v1/preprocess tensor", "preprocess",
             f"{tensor_ratio:.2f}x batch" if tensor_ratio else "-"),
            ("dvppd /v1/preprocess?trace=1", "traced",
             f"{trace_ratio:.3f}x untraced" if trace_ratio else "-"),
            ("dvppctl batch (64 imgs, img/s)", "batch", "1.00x (peer)")]
    r_inp = rate("inproc") if "inproc" in runs else None
    if r_inp:
        rows.append(("(extra) bench_batch c2, in-process", "inproc",
                     f"pre {r_pre / r_inp:.2f}x" if r_pre else "-"))
    log(f"\nHTTP serving, 1920x1080 q90 JPEG, wrk {' '.join(WRK_ARGS)} -d{DUR}s on the same "
        f"{os.cpu_count()} vCPUs (unpinned); medians of {RUNS} rounds (min-max)")
    log(f"{'row':<34} {'req/s (median)':>15} {'min-max':>15} {'p99 ms':>9} {'ratio':>14} "
        f"{'CPU ms/item':>12}")
    for label, c, ratio in rows:
        log(f"{label:<34} {fmt(rate(c), ',.1f'):>15} {span(c):>15} {fmt(p99(c), '.1f'):>9} "
            f"{ratio:>14} {fmt(cpu_ms(c) if c != 'nginx' else None, '.2f'):>12}")
    log(f"  nginx anchor (anchors.md s4, -d15s): {ANCHOR_NGINX} req/s; this run "
        f"{fmt(r_ngx, '.1f')} ({fmt(r_ngx / ANCHOR_NGINX if r_ngx else None, '.2f')}x the anchor)")
    bat_s = med(batch_s)
    log(f"  dvppctl batch: wall time of the process (start-up, 64 file reads, 38.5 MB .npy "
        f"written), ending on the job's completion notice; a 1-image batch takes "
        f"{fmt(startup_s and startup_s * 1e3, '.0f')} ms (start-up + 1 image), "
        f"{fmt(startup_s / bat_s * 100 if startup_s and bat_s else None, '.0f')}% of the "
        f"64-image time")
    if r_inp:
        log("  the extra row is build/bench/bench_batch --case dvppd_c2_exact: the same "
            "64-image job on the device model in-process (no start-up, no file I/O), the "
            "ceiling an HTTP tensor request can approach")
    log("  CPU ms/item: dvppd's CPU (/proc/PID/stat, all threads) per request wrk completed; "
        "the batch rows: the child's rusage per image processed")
    log(f"\ndvppd CPU per /v1/preprocess request {fmt(cpu_pre, '.2f')} ms vs "
        f"{fmt(cpu_inp, '.2f')} ms per image in-process \u2192 HTTP layer costs "
        f"{fmt(http_pct, '+.1f')}% CPU")
    log(f"  dvppctl batch (whole process) {fmt(cpu_bat, '.2f')} ms CPU per image; "
        f"dvppd CPU per /v1/image thumbnail request {fmt(cpu_img, '.2f')} ms (no peer)")
    log(f"  wrk's own CPU per request on the same vCPUs: /v1/preprocess "
        f"{fmt(wrk_cpu['preprocess'], '.2f')} ms, /v1/image {fmt(wrk_cpu['image'], '.2f')} ms, "
        f"nginx {fmt(wrk_cpu['nginx'], '.2f')} ms")
    if any(not x["images_exact"] for x in inproc_cpu):
        log("  (bench_batch's image count was ambiguous in some round: see http.json)")
    if "image" in checks and checks["image"].get("size") and ngx_out:
        log(f"  thumbnails: nginx {ngx_out[0]}x{ngx_out[1]} {len(thumb):,} B, dvppd "
            f"{checks['image']['size'][0]}x{checks['image']['size'][1]} "
            f"{checks['image']['bytes']:,} B")

    def mark(ok):
        return "-" if ok is None else ("MET" if ok else "NOT MET")
    log("\nGoals:")
    log(f"  thumbnail: dvppd /v1/image vs nginx image_filter >= {GOAL_THUMB:.0f}x : "
        f"{fmt(thumb_ratio, '.2f')}x  {mark(thumb_ratio and thumb_ratio >= GOAL_THUMB)}")
    log(f"  tensor: /v1/preprocess vs dvppctl batch within 10% (>= {GOAL_TENSOR:.2f}) : "
        f"{fmt(tensor_ratio, '.3f')}  {mark(tensor_ratio and tensor_ratio >= GOAL_TENSOR)}")
    front = r_pre / r_inp if r_pre and r_inp else None
    log(f"  front end: /v1/preprocess vs the in-process batch (>= {GOAL_FRONT:.2f}) : "
        f"{fmt(front, '.3f')}  {mark(front and front >= GOAL_FRONT)}; by CPU per item "
        f"{fmt(cpu_inp / cpu_pre if cpu_pre and cpu_inp else None, '.3f')} (wrk shares the "
        f"CPUs: it cannot be pinned apart on {os.cpu_count()} vCPUs)")
    log(f"  thumbnail with a full-size decode (what nginx does): "
        f"{fmt(full_ratio, '.2f')}x nginx (the row above shrinks on load, as users get it)")
    log(f"  tracing on (?trace=1, every request traced and stored): traced/untraced req/s "
        f"{fmt(trace_ratio, '.3f')} (median of {len(trace_ratios)} per-round ratios)")
    if problems:
        log("\nPROBLEMS:")
        for p in problems:
            log(f"  - {p}")
    total = time.perf_counter() - t_start
    log(f"(total {total:.0f} s)")

    summary = {
        "image": {"path": os.path.relpath(image, ROOT) if image.startswith(ROOT) else "generated",
                  "source": image_desc, "bytes": len(body), "size": wh},
        "method": {"wrk": WRK_ARGS + [f"-d{DUR}s"], "rounds": RUNS, "warmup_s": WARMUP,
                   "batch_reps_per_round": BATCH_REPS, "batch_images": N_BATCH,
                   "cpus": os.cpu_count(),
                   "dvppd_config": {"http": {"threads": 2}, "socket": {"path": ""},
                                    "device": {"channels": 2}},
                   "urls": {"nginx": "/resize.jpg", "image": Q_IMAGE, "preprocess": Q_PRE}},
        "medians": {c: {"rate": rate(c), "p99_ms": p99(c)} for c in runs},
        "ratios": {"image_vs_nginx": thumb_ratio, "preprocess_vs_batch": tensor_ratio,
                   "preprocess_vs_inproc_batch": r_pre / r_inp if r_pre and r_inp else None,
                   "traced_vs_untraced": trace_ratio, "traced_vs_untraced_rounds": trace_ratios},
        "goals": {"image_vs_nginx": {"goal": GOAL_THUMB, "met": bool(thumb_ratio and
                                                                   thumb_ratio >= GOAL_THUMB)},
                  "preprocess_vs_batch": {"goal": GOAL_TENSOR, "met": bool(
                      tensor_ratio and tensor_ratio >= GOAL_TENSOR)}},
        "cpu": {"preprocess_dvppd_ms_per_req": cpu_pre, "image_dvppd_ms_per_req": cpu_img,
                "inproc_ms_per_img": cpu_inp, "batch_ms_per_img": cpu_bat,
                "http_layer_pct": http_pct, "wrk_ms_per_req": wrk_cpu,
                "inproc_runs": inproc_cpu, "clk_tck": CLK_TCK,
                "method": "dvppd: utime+stime of /proc/PID/stat (all threads) before and "
                          "0.25 s after each wrk run / requests wrk completed; bench_batch, "
                          "dvppctl batch: RUSAGE_CHILDREN delta around the child / images "
                          "processed; medians over rounds; http_layer_pct = "
                          "preprocess_dvppd_ms_per_req / inproc_ms_per_img - 1"},
        "batch_startup_s": startup_s,
        "checks": checks, "runs": runs, "problems": problems,
        "dvppd_error": dv_err, "total_s": total,
    }
    os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
    path = os.path.join(BUILD, "bench", "http.json")
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)
    log(f"summary: {os.path.relpath(path, ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
