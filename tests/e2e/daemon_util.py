"""Helpers shared by the end-to-end tests that run build/dvppd, build/dvppctl
and ffmpeg (test_http.py, test_socket.py, test_http_video.py,
test_socket_video.py, test_video.py).

A plain module, not a conftest.py: it defines no fixtures and changes
nothing for the other files in tests/e2e. The test files import it by name
(pytest puts tests/e2e on sys.path for them) after
`pytest.register_assert_rewrite("daemon_util")`, so that its assertions
explain themselves as the tests' own do.

The build directory is $DVPP_BUILD (default "build"), relative to the
repository root unless absolute.
"""
import http.client
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DVPP_BUILD", "build")
DVPPD = os.path.join(ROOT, BUILD, "dvppd")
DVPPCTL = os.path.join(ROOT, BUILD, "dvppctl")
PYCLIENT = os.path.join(ROOT, "clients", "python")
FFMPEG = shutil.which("ffmpeg")
FFPROBE = shutil.which("ffprobe")


def build_path(*parts):
    """A file of the build: build_path("tests", "e2e", "ring_attack")."""
    return os.path.join(ROOT, BUILD, *parts)


def pyclient():
    """The Python client (clients/python/dvpp), imported from the tree."""
    if PYCLIENT not in sys.path:
        sys.path.insert(0, PYCLIENT)
    import dvpp
    return dvpp


# --------------------------------------------------------------------------
# HTTP (standard library only)


class Resp:
    def __init__(self, status, headers, body, reason=""):
        self.status = status
        self.headers = headers          # lower-cased names
        self.body = body
        self.reason = reason

    def h(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def json(self):
        return json.loads(self.body.decode())

    def npy(self):
        return npy_load(self.body)

    def ints(self, name):
        v = self.h(name)
        return [] if not v else [int(x) for x in v.split(",")]

    def __repr__(self):
        return f"<{self.status} {self.headers} {self.body[:300]!r}>"


def resp_from(r):
    """An http.client response, read whole, as a Resp."""
    body = r.read()
    return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, body, r.reason)


def read_raw_response(s, timeout=10):
    """One HTTP response from a raw socket: (status, headers, body), or None
    when the peer closed (or reset) before sending a status line."""
    s.settimeout(timeout)
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            d = s.recv(65536)
            if not d:
                return None if not buf else _parse_head(buf, s)
            buf += d
    except (ConnectionResetError, BrokenPipeError):
        return None if not buf else _parse_head(buf, s)
    return _parse_head(buf, s)


def _parse_head(buf, s):
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    try:
        while len(rest) < n:
            d = s.recv(65536)
            if not d:
                break
            rest += d
    except (OSError, socket.timeout):
        pass
    return status, headers, rest


def multipart(parts, boundary=None, as_files=False):
    """multipart/form-data: (body, headers). parts: (name, data) or (name,
    data, filename, content_type); with @as_files a part without a filename
    is given its name as one."""
    boundary = boundary or "dvpp%016x" % random.getrandbits(64)
    out = io.BytesIO()
    for p in parts:
        name, data = p[0], p[1]
        filename = p[2] if len(p) > 2 else (name if as_files else None)
        ctype = p[3] if len(p) > 3 else "application/octet-stream"
        if isinstance(data, str):
            data = data.encode()
        out.write(b"--" + boundary.encode() + b"\r\n")
        disp = f'Content-Disposition: form-data; name="{name}"'
        if filename:
            disp += f'; filename="{filename}"'
        out.write(disp.encode() + b"\r\n")
        out.write(f"Content-Type: {ctype}\r\n\r\n".encode())
        out.write(data + b"\r\n")
    out.write(b"--" + boundary.encode() + b"--\r\n")
    return out.getvalue(), {"Content-Type": f"multipart/form-data; boundary={boundary}"}


# --------------------------------------------------------------------------
# .npy


def encode_image(img, fmt="PNG", **kw):
    """The bytes of PIL image @img saved as @fmt (PIL's save options @kw)."""
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


def post_spec(srv, path, body, spec, status=200):
    """POST @body to @path of daemon @srv with @spec as X-Dvpp-Spec; the
    answer, which must have @status."""
    r = srv.post(path, body, {"X-Dvpp-Spec": json.dumps(spec)})
    assert r.status == status, r
    return r


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def npy_load(blob):
    return np.load(io.BytesIO(blob), allow_pickle=False)


# --------------------------------------------------------------------------
# The daemon


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sock_dir(prefix, mode=None):
    """A directory for the daemon's socket: a short path (sun_path is 108
    bytes), away from pytest's deep tmp dirs."""
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    if mode is not None:
        os.chmod(d, mode)
    return d


def write_config(tmp, name, cfg):
    """@cfg as @tmp/@name.json: its path."""
    cfg_path = os.path.join(tmp, f"{name}.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    return cfg_path


def log_tail(path, n=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def proc_kb(pid, field):
    """A kB field of /proc/PID/status (VmRSS, VmHWM, ...)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class Daemon:
    """A dvppd started by start_daemon(): its process, log, HTTP port and
    (when it has one) socket."""

    def __init__(self, proc, log_path, cfg_path, port, sock=None, sock_dir=None, timeout=30):
        self.proc, self.log_path, self.cfg_path = proc, log_path, cfg_path
        self.port, self.sock, self.sock_dir = port, sock, sock_dir
        self.timeout = timeout          # of an HTTP request, by default

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        return log_tail(self.log_path)

    def alive(self):
        return self.proc.poll() is None

    def fd_count(self):
        return fd_count(self.pid)

    def conn(self, timeout=None):
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=self.timeout if timeout is None else timeout)

    def request(self, method, path, body=None, headers=None, timeout=None, conn=None):
        c = conn or self.conn(timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            return resp_from(c.getresponse())
        finally:
            if conn is None:
                c.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=b"", headers=None, **kw):
        return self.request("POST", path, body=body, headers=headers, **kw)

    def raw(self, timeout=10):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def client(self, **kw):
        kw.setdefault("timeout", 30)
        return pyclient().Client(self.sock, **kw)

    def ready(self):
        """/readyz is 200 and the socket (if any) is there."""
        try:
            if self.get("/readyz", timeout=2).status != 200:
                return False
        except (OSError, http.client.HTTPException):
            return False
        return self.sock is None or os.path.exists(self.sock)

    def _remove_sock_dir(self):
        if self.sock_dir:
            shutil.rmtree(self.sock_dir, ignore_errors=True)


def start_daemon(tmp, cfg, name, port, sock=None, sock_dir=None, preexec_fn=None, timeout=30,
                 faults=None):
    """dvppd with @cfg (written to @tmp/@name.json, its log @tmp/@name.log),
    once /readyz answers 200 on @port and @sock exists; the test fails if it
    exits or is not ready within 20 s. @sock_dir is removed when it stops
    (or fails to start); @timeout is its HTTP requests' default. @faults:
    DVPPD_FAULTS for it (dvppd/dvppd_faults.h), e.g. "stall_ms=500"."""
    cfg_path = write_config(tmp, name, cfg)
    log_path = os.path.join(tmp, f"{name}.log")
    env = dict(os.environ, DVPPD_FAULTS=faults) if faults else None
    with open(log_path, "w") as log:
        proc = subprocess.Popen([DVPPD, "--config", cfg_path], stdout=log, stderr=log,
                                preexec_fn=preexec_fn, env=env)
    d = Daemon(proc, log_path, cfg_path, port, sock, sock_dir, timeout)
    deadline = time.monotonic() + 20
    while True:
        if proc.poll() is not None:
            d._remove_sock_dir()
            pytest.fail(f"dvppd exited with {proc.returncode} at start:\n{d.log()}")
        if d.ready():
            return d
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            d._remove_sock_dir()
            what = "/readyz not 200" if sock is None else \
                f"dvppd not ready (or no socket at {sock})"
            pytest.fail(f"{what} within 20 s:\n{d.log()}")
        time.sleep(0.05)


def stop_daemon(d, check=True):
    """SIGTERM; the daemon must be gone within 25 s, with exit status 0
    unless not @check."""
    try:
        if d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
        try:
            rc = d.proc.wait(timeout=25)
        except subprocess.TimeoutExpired:
            d.proc.kill()
            d.proc.wait()
            pytest.fail(f"dvppd did not stop within 25 s of SIGTERM:\n{d.log()}")
        if check:
            assert rc == 0, f"dvppd exit status {rc}:\n{d.log()}"
    finally:
        d._remove_sock_dir()


class CtlDaemon:
    """dvppd with HTTP off and its socket in a fresh temp folder (prefix
    @prefix), for the `dvppctl --socket` tests: ready once `dvppctl version
    --socket` answers; stop() removes the folder."""

    def __init__(self, prefix):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.sock = os.path.join(self.dir, "d.sock")
        cfg = os.path.join(self.dir, "dvppd.json")
        with open(cfg, "w") as f:
            json.dump({"http": {"listen": "127.0.0.1:0"},  # port 0: HTTP off
                       "socket": {"path": self.sock, "mode": "0600"},
                       "device": {"channels": 2}}, f)
        self.log = open(os.path.join(self.dir, "dvppd.log"), "w+")
        self.proc = subprocess.Popen([DVPPD, "--config", cfg], stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def wait_ready(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.logtext()
            if os.path.exists(self.sock) and subprocess.run(
                    [DVPPCTL, "version", "--socket", self.sock], capture_output=True,
                    timeout=60).returncode == 0:
                return
            time.sleep(0.05)
        raise AssertionError("dvppd did not answer on its socket:\n" + self.logtext())

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def settled_fd_count(d):
    """The daemon's fd count once it has stayed the same 5 times running
    (at most 5 s)."""
    last, same = None, 0
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        n = d.fd_count()
        same = same + 1 if n == last else 0
        last = n
        if same >= 5:
            break
        time.sleep(0.02)
    return last


# Sanitizer builds (build folders named for them: build/asan, build/asan-x)
# run several times slower; deadlines of waits scale with this.
SLOW = 3 if "asan" in os.path.basename(BUILD.rstrip("/")) else 1
# The default deadline of wait_for: generous, since it only bounds how long
# a broken daemon takes to fail the test; a working one ends the wait early.
WAIT_S = 20 * SLOW


def wait_for(cond, what, timeout=None, every=0.02):
    """Poll cond() every @every s until it returns a true value, which is
    returned; the test fails naming @what (and the last value) once
    @timeout s (default WAIT_S) have passed. Use instead of a fixed sleep
    before an assertion, or of an absolute latency limit."""
    timeout = WAIT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s (last: {v!r})")
        time.sleep(every)


def stats_wait(c, pred, what, timeout=5):
    """Poll the client's stats() until pred(stats) holds; the last stats."""
    deadline = time.monotonic() + timeout
    while True:
        s = c.stats()
        if pred(s):
            return s
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s; stats {s}")
        time.sleep(0.02)


def assert_refused(ei, code, field=None):
    """@ei (a pytest.raises(dvpp.DvppError) ExceptionInfo) holds a refusal
    by dvppd with @code (and @field): an Error or a failed Result, not the
    client's Disconnected or ProtocolError (DvppError subclasses, code EIO),
    which a bare pytest.raises(dvpp.DvppError) would accept too."""
    e = ei.value
    assert type(e) is pyclient().DvppError, f"not a refusal: {e!r}"
    assert e.code == code, e
    if field is not None:
        assert e.field == field, e
    return e


# --------------------------------------------------------------------------
# Commands: dvppctl, ffmpeg, ffprobe


def run(*cmd, check=True, timeout=120):
    """A command's CompletedProcess (bytes); with @check, exit status 0."""
    r = subprocess.run(list(map(str, cmd)), capture_output=True, timeout=timeout)
    if check:
        assert r.returncode == 0, \
            f"{' '.join(map(str, cmd))}: {r.stderr.decode(errors='replace')[-2000:]}"
    return r


def ctl(*args, check=True, timeout=120):
    """build/dvppctl (text output); with @check, exit status 0."""
    r = subprocess.run([DVPPCTL, *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    if check:
        assert r.returncode == 0, f"dvppctl {' '.join(map(str, args))}: {r.stderr}"
    return r


def ctl_batch(out, *args, flags=(), socket=None, timeout=120):
    """`dvppctl batch ARGS FLAGS -o @out` (through the daemon at @socket
    when given; DVPPD_SOCKET of the environment never applies): the
    CompletedProcess, unchecked."""
    cmd = [DVPPCTL, "batch", *args, *flags, "-o", str(out)]
    if socket:
        cmd += ["--socket", socket]
    env = {k: v for k, v in os.environ.items() if k != "DVPPD_SOCKET"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def batch_dataset(d, n, seed, corrupt=()):
    """@n small generated images in the pathlib folder @d (JPEG and PNG,
    sizes vary, names sorted = creation order, pixels from @seed); the
    indices in @corrupt get a broken PNG (the others are the same images
    whatever @corrupt is)."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    d.mkdir(exist_ok=True)
    for i in range(n):
        px = rng.integers(0, 256, (24 + i % 7, 30 + i % 5, 3), dtype=np.uint8)
        if i in corrupt:
            (d / f"img{i:04d}.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
        else:
            Image.fromarray(px).save(d / (f"img{i:04d}." + ("png" if i % 3 else "jpg")),
                                     quality=90)
    return d


def ff_key_frames(path):
    """Indices of the key frames ffprobe sees, in presentation order."""
    out = run(FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_entries",
              "frame=key_frame", "-of", "csv=p=0", path).stdout.decode()
    flags = [ln.split(",")[0] for ln in out.splitlines() if ln.strip()]
    return [i for i, f in enumerate(flags) if f == "1"]


def nv12_unpad(frames, w, h):
    """T x rows x stride NV12 (VDEC strides) -> T x (h*3/2) x w, the stride
    and row padding removed."""
    hs = frames.shape[1] * 2 // 3
    y = frames[:, :h, :w]
    uv = frames[:, hs:hs + (h + 1) // 2, :w]
    return np.concatenate([y, uv], axis=1)


def psnr(a, b, identical=99.0):
    """PSNR in dB of 8-bit pictures; @identical when they are equal."""
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return identical if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def h264_rbsp(bits):
    """An H.264 RBSP given as a string of "0"/"1" -> the NAL unit's payload:
    the stop bit, zeros to a byte boundary, emulation prevention."""
    bits += "1"
    bits += "0" * (-len(bits) % 8)
    raw = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    out, zeros = bytearray(), 0
    for x in raw:  # emulation prevention
        if zeros >= 2 and x <= 3:
            out.append(3)
            zeros = 0
        out.append(x)
        zeros = zeros + 1 if x == 0 else 0
    return bytes(out)


# --------------------------------------------------------------------------
# AIPP


def aipp_rgb(w, h):
    """A static AIPP config for RGB888_U8 input of @w x @h: no CSC, a mean
    and a 1/std per channel."""
    return f"""aipp_op {{
  aipp_mode : static
  input_format : RGB888_U8
  src_image_size_w : {w}
  src_image_size_h : {h}
  csc_switch : false
  mean_chn_0 : 123
  mean_chn_1 : 117
  mean_chn_2 : 104
  var_reci_chn_0 : 0.0171
  var_reci_chn_1 : 0.0175
  var_reci_chn_2 : 0.0174
}}
"""


# --------------------------------------------------------------------------
# Test images


def gradient(w, h, seed, noise=8):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1),
                    (x * 3 + y * 2 + seed * 17) % 256], -1).astype(np.int32)
    img += rng.integers(-noise, noise + 1, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def to_jpeg(img, q=90):
    import cv2
    ok, b = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    assert ok
    return b.tobytes()


def to_png(img):
    import cv2
    ok, b = cv2.imencode(".png", img)
    assert ok
    return b.tobytes()


class Data:
    """A module fixture's data: put() writes a file under @tmp."""

    def __init__(self, tmp=None):
        self.tmp = tmp
        self.files = {}

    def put(self, name, blob):
        p = os.path.join(self.tmp, name)
        with open(p, "wb") as f:
            f.write(blob)
        self.files[name] = p
        return blob

    def put_jpegs(self):
        """The JPEGs the image suites share, as .jpg640 (i640.jpg, 640x480),
        .jpg1080 (i1080.jpg, 1920x1080), .jpg630 (i630.jpg, 630x478: odd
        sizes) and .small (small.jpg, 64x48)."""
        self.jpg640 = self.put("i640.jpg", to_jpeg(gradient(640, 480, 1)))
        self.jpg1080 = self.put("i1080.jpg", to_jpeg(gradient(1920, 1080, 2)))
        self.jpg630 = self.put("i630.jpg", to_jpeg(gradient(630, 478, 3)))
        self.small = self.put("small.jpg", to_jpeg(gradient(64, 48, 5)))

    def put_batch(self, n):
        """@n images of mixed sizes (every fourth a PNG, the others JPEGs of
        mixed quality) as b00.jpg ...: their names."""
        names = []
        for i in range(n):
            w, h = 96 + (37 * i) % 401, 80 + (53 * i) % 301
            img = gradient(w, h, 100 + i)
            blob = to_png(img) if i % 4 == 3 else to_jpeg(img, 80 + i % 15)
            name = f"b{i:02d}." + ("png" if i % 4 == 3 else "jpg")
            self.put(name, blob)
            names.append(name)
        return names
