#!/usr/bin/python3
"""bench/soak.py: a long, fixed-rate, mixed load on dvppd (HTTP and Unix
socket, valid and hostile requests) that watches the daemon's memory, file
descriptors and threads, and passes or fails on a condition written below.

    /usr/bin/python3 bench/soak.py                 # 100,000 requests at 250 req/s (make soak)
    /usr/bin/python3 bench/soak.py --quick         # 3,000 requests: a smoke check (~16 s)
    /usr/bin/python3 bench/soak.py --rate 300 --requests 200000 --summary /tmp/soak.json

It needs the build (build/dvppd, clients/python/dvpp/dvpp_pb2.py: `make`),
Debian's python3-numpy, python3-opencv and python3-protobuf, nothing else.

The daemon. build/dvppd (DVPP_BUILD, default build) is started here on a
temp config {"http": {"listen": "127.0.0.1:PORT", "threads": 2},
"socket": {"path": TMP/dvppd.sock, "mode": "0600"}, "device": {"channels": 2}}
(a free port; everything else default; DVPP_SOAK_DEVICE='{"idle_keep_bytes": 0}'
merges keys into "device"), ready when GET /readyz answers 200
and the socket exists, and stopped at the end with SIGTERM (it must exit 0
within 25 s). Its log is printed (tail) when something fails.

The load. --requests N (100,000) requests at --rate R req/s (250), open
loop: request i is due at t0 + i / R whatever happened to the ones before
it (a late one is sent at once and its lateness recorded). --procs P (4)
driver processes of --threads T (4) threads each; thread g sends requests
g, g + P*T, g + 2*P*T, ... on its own keep-alive HTTP connection and its own
socket connection (dvpp.Client, with a ring of 2 slots of 224x224x3 f32).
The share of HTTP requests is --http-share (0.6), the share of invalid or
hostile ones --invalid-share (0.1); both are exact (the kinds are counted
out and shuffled with --seed), the class within a kind is drawn by weight.

  valid HTTP      POST /v1/preprocess (JPEG 64x48..640x480, ImageNet 224x224;
                  PNG letterbox float16 out=raw; a JSON spec in X-Dvpp-Spec),
                  /v1/image (JPEG thumbnail, PNG crop), /v1/decode (rgb .npy,
                  nv12 raw), /v1/batch of 4 (multipart), GET /healthz, /readyz,
                  /metrics, /v1/info
  valid socket    Submit: tensor inline (16x16 f32), tensor into the ring
                  (224x224 f32, read and released), the same from a 640x480
                  JPEG sent as a sealed memfd, image (JPEG) inline, pixels inline
  invalid HTTP    garbage bytes (415), truncated JPEG and PNG (422), an unknown
                  parameter (400), an oversized target 20000x224 (400 ELIMIT),
                  a bad value (400), a GET on a POST route (405), an unknown
                  route (404), Content-Length 100 MB (413, sent on a raw socket
                  that sends no body), a strict batch with a garbage item (4xx);
                  bombs: a PNG whose IHDR says 100000x100000 with a 20-byte IDAT,
                  an 8000x8000 PNG whose 192 MB of pixels deflate to ~190 KB,
                  a JPEG whose SOF says 60000x60000, a JSON spec nested 3000 deep
  invalid socket  an unknown spec key, garbage input, a truncated JPEG, the
                  PNG header bomb, a deeply nested spec, a 602 KB output asked
                  inline (each must come back as an Error/failed Result on a
                  connection that stays)

Every request is judged when its answer arrives:
  ok        a valid one answered 200 (socket: a Result with status 0), an
            invalid one answered 4xx (socket: a DvppError, not a disconnect)
  overload  503 with Retry-After (socket: EAGAIN), valid or not: counted
  fail      anything else: another 5xx, a 503 without Retry-After, a 2xx for
            an invalid request, a valid one refused, a connection error,
            reset, time-out (--timeout, 30 s) or drop
The daemon's VmRSS, fd count (/proc/PID/fd) and thread count
(/proc/PID/status Threads) are sampled every --sample-interval s (1; 0.5
with --quick) with the number of requests answered so far.

Pass condition (all of them; exit 0 on pass, 1 on fail, 2 when the soak
could not run):
  1. the daemon served the whole run and exited 0 on SIGTERM;
  2. no 5xx other than 503, and every 503 had Retry-After;
  3. zero connection errors, resets, time-outs or drops (HTTP and socket);
  4. every valid request ok (or overload), every invalid one ok (a 4xx or a
     socket error; or overload), i.e. zero "fail" outcomes;
  5. all N requests sent and answered, at an achieved rate >= 90 % of R
     (else the machine did not keep the schedule and the run says nothing
     about R), with at most --max-overload (5 %) of them overload;
  6. RSS: warm-up is the first 10 % of the requests (--warmup-share; 50 %
     with --quick: a fresh daemon's heap grows over its first ~10,000
     requests, so 10 % of 3,000 would compare two points of that ramp,
     measured 46 -> 52 MiB in 12 s). "after warm-up" is the
     median of the samples in the window of W seconds that starts when the
     warm-up has been answered, "end" the median of the last W seconds of
     load (W = 5 % of the planned duration, 2..15 s). end < 1.10 x after
     warm-up;
  7. fds: |end - after warm-up| (the same window medians) <= P*T*9. Every
     driver thread holds one keep-alive HTTP connection, which the daemon
     closes after a 404/405/413 (Connection: close) and the thread reopens
     on its next request, and the 413 case opens one more; so at a sample
     up to P*T daemon-side sockets may be missing or extra. The socket
     connections and rings are held for the whole run, and each socket
     connection's input-mapping cache keeps a duplicate fd of up to 8
     sealed memfds it mapped (bounded; the run's fresh memfds fill it as
     it goes), so P*T*8 more may appear. And, exactly: once
     the load is over and every driver connection is closed, the daemon's
     fd count settles back to the count before the drivers connected;
  8. threads: the same count in every sample from the start of the load to
     its end (dvppd's threads are fixed at start: HTTP, socket, workers);
  9. memory at rest: within 30 s of the load's end RSS is back within 10 %
     of its pre-burst level, "primed": before the load 4 drivers at once
     send every class 4 times and the daemon idles past its trim (the codecs'
     code pages, the workers' stack pages and the channels' buffers under
     device.idle_keep_bytes are then counted in, which a fresh daemon has
     not touched yet; the fresh RSS is reported beside it).

It prints progress lines, the verdict with every failed condition, and a
JSON summary (requests by class and outcome and status, latencies, duration,
achieved rate, lateness, RSS start / after warm-up / end / max, fds,
threads, conditions, pass) that also goes to --summary (default
DVPP_BUILD/bench/soak.json). With DVPP_SOAK_SMAPS_DIR=DIR the daemon's
/proc/PID/smaps is copied to DIR/fresh.smaps, DIR/primed.smaps and
DIR/at_rest.smaps, to see
which mappings hold the RSS that stays.
"""
import argparse
import http.client
import io
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
import traceback
import zlib

import benchlib
from benchlib import log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
MEAN_Q = ",".join(map(str, MEAN))
STD_Q = ",".join(map(str, STD))
RING_SLOT = 3 * 224 * 224 * 4

# class -> weight within its kind (http/sock x valid/invalid)
HTTP_VALID = {
    "http_preprocess_jpeg": 26, "http_preprocess_png_letterbox": 8, "http_preprocess_spec": 8,
    "http_image_jpeg": 14, "http_image_png": 5, "http_decode_rgb": 8, "http_decode_nv12_raw": 7,
    "http_batch4": 4, "http_ops_get": 3,
}
HTTP_INVALID = {
    "http_bad_garbage": 8, "http_bad_truncated_jpeg": 8, "http_bad_truncated_png": 5,
    "http_bad_unknown_param": 8, "http_bad_oversized_dims": 8, "http_bad_value": 5,
    "http_bad_method": 4, "http_bad_route": 4, "http_bad_body_too_large": 4,
    "http_bad_batch_strict": 4, "http_bomb_png_header": 8, "http_bomb_png_8k": 4,
    "http_bomb_jpeg_sof": 8, "http_bomb_deep_json": 8,
}
SOCK_VALID = {
    "sock_tensor_inline": 30, "sock_tensor_ring": 30, "sock_tensor_ring_memfd": 8,
    "sock_image_inline": 16, "sock_pixels_inline": 16,
}
SOCK_INVALID = {
    "sock_bad_spec": 20, "sock_bad_garbage": 15, "sock_bad_truncated": 15,
    "sock_bomb_png_header": 15, "sock_bomb_deep_json": 15, "sock_bad_inline_too_big": 20,
}
KINDS = [("http", True, HTTP_VALID), ("http", False, HTTP_INVALID),
         ("sock", True, SOCK_VALID), ("sock", False, SOCK_INVALID)]
ALL_CLASSES = [c for _, _, t in KINDS for c in t]
VALID = {c: v for _, v, t in KINDS for c in t}


# ---------------------------------------------------------------------------
# inputs (made once in the parent; the drivers inherit them by fork)
# ---------------------------------------------------------------------------

def _img(w, h, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1),
                  (x * 3 + y * 2 + seed * 17) % 256], -1).astype(np.int32)
    a += rng.integers(-12, 13, a.shape)
    return np.clip(a, 0, 255).astype(np.uint8)


def _enc(ext, a, q=90):
    import cv2
    ok, b = cv2.imencode(ext, a, [cv2.IMWRITE_JPEG_QUALITY, q] if ext == ".jpg" else [])
    assert ok
    return b.tobytes()


def _png_chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)


def _png_bomb(w, h, full):
    """An 8-bit RGB PNG header of @w x @h; with @full an IDAT of all of its
    (zero) rows, deflated, else a 20-odd byte IDAT."""
    ihdr = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    if full:
        z = zlib.compressobj(9)
        row = b"\0" * (3 * w + 1)
        parts = [z.compress(row * 64) for _ in range(h // 64)]
        parts.append(z.compress(row * (h % 64)))
        parts.append(z.flush())
        idat = b"".join(parts)
    else:
        idat = zlib.compress(b"\0" * 64)
    return b"\x89PNG\r\n\x1a\n" + ihdr + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


def _patch_sof(jpg, w, h):
    d = bytearray(jpg)
    i = 2
    while i + 9 < len(d):
        m, ln = d[i + 1], int.from_bytes(d[i + 2:i + 4], "big")
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
            d[i + 5:i + 7] = h.to_bytes(2, "big")
            d[i + 7:i + 9] = w.to_bytes(2, "big")
            return bytes(d)
        i += 2 + ln
    raise ValueError("no SOF")


def _multipart(parts, boundary="dvppsoak7f3a9c"):
    out = io.BytesIO()
    for name, data in parts:
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                  f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                  .encode() + data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def make_inputs(seed):
    jpg = {s: _enc(".jpg", _img(*s, seed + k), 80 + 5 * (k % 3))
           for k, s in enumerate([(64, 48), (160, 120), (320, 240), (640, 480)])}
    png = {s: _enc(".png", _img(*s, seed + 10 + k))
           for k, s in enumerate([(64, 48), (160, 120), (200, 150)])}
    rng = random.Random(seed)
    garbage = bytes(rng.getrandbits(8) for _ in range(3000))
    small = [jpg[(64, 48)], jpg[(160, 120)], png[(64, 48)], png[(160, 120)]]
    batches = [_multipart([(f"i{k}", small[(j + k) % 4]) for k in range(4)]) for j in range(4)]
    bad_batch = _multipart([("a", jpg[(64, 48)]), ("b", garbage[:500]),
                            ("c", png[(64, 48)]), ("d", jpg[(160, 120)])])
    jpg_list = [jpg[(64, 48)], jpg[(160, 120)], jpg[(320, 240)], jpg[(640, 480)]]
    t = jpg[(320, 240)]
    p = png[(160, 120)]
    return {
        "jpg": jpg_list,
        "jpg_small": [jpg[(64, 48)], jpg[(160, 120)], jpg[(320, 240)]],
        "png": [png[(64, 48)], png[(160, 120)], png[(200, 150)]],
        "jpg640": jpg[(640, 480)],
        "garbage": garbage,
        "trunc_jpg": t[:len(t) // 2],
        "trunc_png": p[:len(p) * 2 // 3],
        "batches": batches,
        "bad_batch": bad_batch,
        "png_bomb_header": _png_bomb(100000, 100000, False),
        "png_bomb_8k": _png_bomb(8000, 8000, True),
        "jpeg_bomb": _patch_sof(jpg[(160, 120)], 60000, 60000),
        "deep_json": '{"ops":' + "[" * 3000 + "]" * 3000 + "}",
    }


def make_schedule(n, http_share, invalid_share, seed):
    """The class of every request: exact kind counts, shuffled; the class
    within a kind by weight."""
    rng = random.Random(seed)
    n_http = round(n * http_share)
    n_bad = round(n * invalid_share)
    proto = ["http"] * n_http + ["sock"] * (n - n_http)
    valid = [False] * n_bad + [True] * (n - n_bad)
    rng.shuffle(proto)
    rng.shuffle(valid)
    table = {(p, v): t for p, v, t in KINDS}
    out = []
    for i in range(n):
        t = table[(proto[i], valid[i])]
        out.append(rng.choices(list(t), weights=list(t.values()))[0])
    return out


# ---------------------------------------------------------------------------
# one request of each class
# ---------------------------------------------------------------------------
# Every runner returns (outcome, status_key, detail): outcome "ok",
# "overload" or "fail"; status_key the HTTP status ("200", "413",
# "503+retry-after", "conn:RemoteDisconnected") or the socket answer ("ok",
# "EINVAL", "disconnected"); detail a short text for failures.


def _pick(seq, i):
    return seq[(i * 2654435761 >> 5) % len(seq)]


class _Conn(http.client.HTTPConnection):
    """Keep-alive HTTP with TCP_NODELAY on every (re)connection."""

    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Driver:
    """One driver thread: its HTTP connection and socket client."""

    def __init__(self, host, port, sock_path, timeout, inputs):
        self.host, self.port, self.sock_path = host, port, sock_path
        self.timeout = timeout
        self.inp = inputs
        self.conn = _Conn(host, port, timeout=timeout)
        self.conn.connect()
        self.client = None
        self.ring = None
        self.reconnects = {"http": 0, "sock": 0}
        self._sock_connect()

    def _sock_connect(self):
        import dvpp
        if self.client is not None:
            try:
                self.client.close()
            except Exception:
                pass
        self.client = dvpp.Client(self.sock_path, timeout=self.timeout, client_name="soak")
        self.ring = self.client.open_ring(slots=2, slot_bytes=RING_SLOT)

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass
        if self.client is not None:
            try:
                self.client.close_ring(self.ring, timeout=10)
            except Exception:
                pass
            try:
                self.client.close()
            except Exception:
                pass

    # -- HTTP ----------------------------------------------------------------

    def http(self, method, path, body=None, headers=None, valid=True, check=None):
        try:
            self.conn.request(method, path, body=body, headers=headers or {})
            r = self.conn.getresponse()
            data = r.read()
            status = r.status
            retry = r.getheader("Retry-After")
            hdrs = r
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()             # the next request reconnects
            self.reconnects["http"] += 1
            return "fail", f"conn:{type(e).__name__}", f"{method} {path[:80]}: {e!r}"
        return self._judge_http(status, retry, data, hdrs, valid, check, f"{method} {path[:80]}")

    @staticmethod
    def _judge_http(status, retry, data, hdrs, valid, check, what):
        if status == 503:
            if retry:
                return "overload", "503+retry-after", ""
            return "fail", "503-no-retry-after", f"{what}: 503 without Retry-After"
        key = str(status)
        if status >= 500:
            return "fail", key, f"{what}: {status} {data[:200]!r}"
        if valid:
            if status != 200:
                return "fail", key, f"{what}: valid request answered {status} {data[:200]!r}"
            if check is not None:
                why = check(hdrs, data)
                if why:
                    return "fail", "200-bad-body", f"{what}: {why}"
            return "ok", key, ""
        if 400 <= status < 500:
            return "ok", key, ""
        return "fail", key, f"{what}: invalid request answered {status} {data[:200]!r}"

    def raw_http(self, head, valid=False):
        """A request whose head is sent on a fresh connection without its
        body (Content-Length over the limit: the answer comes at once)."""
        s = None
        try:
            s = socket.create_connection((self.host, self.port), timeout=self.timeout)
            s.sendall(head)
            buf = b""
            while b"\r\n\r\n" not in buf:
                d = s.recv(65536)
                if not d:
                    break
                buf += d
            if not buf:
                return "fail", "conn:closed-without-answer", "raw request: no answer"
            lines = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            retry = any(ln.lower().startswith("retry-after:") for ln in lines[1:])
        except (OSError, ValueError, IndexError) as e:
            return "fail", f"conn:{type(e).__name__}", f"raw request: {e!r}"
        finally:
            if s is not None:
                s.close()
        return self._judge_http(status, retry, buf[:200], None, valid, None, "raw POST")

    # -- socket --------------------------------------------------------------

    def sock(self, spec, data, valid=True, kind="tensor", ring=False, memfd=None, check=None):
        import dvpp
        try:
            r = self.client.submit(spec, data, kind=kind, ring=self.ring if ring else None,
                                   memfd=memfd)
            try:
                why = check(r) if check is not None else None
            finally:
                r.release()
            if not valid:
                return "fail", "ok", f"sock {kind}: invalid submit succeeded"
            if why:
                return "fail", "ok-bad-result", f"sock {kind}: {why}"
            return "ok", "ok", ""
        except dvpp.Disconnected as e:
            self.reconnects["sock"] += 1
            try:
                self._sock_connect()
            except Exception:
                pass
            return "fail", "disconnected", f"sock {kind}: {e}"
        except dvpp.ProtocolError as e:
            return "fail", "protocol-error", f"sock {kind}: {e}"
        except dvpp.DvppError as e:
            if e.code == "EAGAIN":
                return "overload", "EAGAIN", ""
            if valid:
                return "fail", e.code or str(e.status), f"sock {kind}: valid submit refused: {e}"
            return "ok", e.code or str(e.status), ""
        except (OSError, TimeoutError) as e:
            self.reconnects["sock"] += 1
            try:
                self._sock_connect()
            except Exception:
                pass
            return "fail", f"conn:{type(e).__name__}", f"sock {kind}: {e!r}"

    # -- the classes ---------------------------------------------------------

    def run(self, cls, i):
        inp = self.inp
        P = "/v1/preprocess"
        if cls == "http_preprocess_jpeg":
            return self.http("POST", f"{P}?w=224&h=224&mean={MEAN_Q}&std={STD_Q}",
                             _pick(inp["jpg"], i), check=_shape("1,3,224,224", 128 + RING_SLOT))
        if cls == "http_preprocess_png_letterbox":
            return self.http("POST", f"{P}?w=256&h=256&mode=letterbox&pad=727272&dtype=float16"
                                     "&out=raw", _pick(inp["png"], i),
                             check=_shape("1,3,256,256", 3 * 256 * 256 * 2))
        if cls == "http_preprocess_spec":
            spec = {"ops": [{"resize": {"w": 160, "h": 160, "mode": "fill"}}],
                    "normalize": {"dtype": "uint8", "layout": "nhwc"}}
            return self.http("POST", P, _pick(inp["jpg_small"] + inp["png"], i),
                             {"X-Dvpp-Spec": json.dumps(spec)},
                             check=_shape("1,160,160,3", 128 + 160 * 160 * 3))
        if cls == "http_image_jpeg":
            return self.http("POST", "/v1/image?w=128&h=128&mode=fit&quality=85",
                             _pick(inp["jpg"], i), check=_magic(b"\xff\xd8"))
        if cls == "http_image_png":
            return self.http("POST", "/v1/image?crop=8,8,55,39&w=96&h=64&format=png",
                             _pick(inp["jpg_small"] + inp["png"], i), check=_magic(b"\x89PNG"))
        if cls == "http_decode_rgb":
            return self.http("POST", "/v1/decode?format=rgb",
                             _pick(inp["jpg_small"] + inp["png"], i), check=_magic(b"\x93NUMPY"))
        if cls == "http_decode_nv12_raw":
            return self.http("POST", "/v1/decode?format=nv12&align=16x2&out=raw",
                             _pick(inp["jpg_small"] + inp["png"], i), check=_nonempty)
        if cls == "http_batch4":
            body, h = _pick(inp["batches"], i)
            return self.http("POST", f"/v1/batch?w=112&h=112&mean={MEAN_Q}&std={STD_Q}", body, h,
                             check=_batch_ok)
        if cls == "http_ops_get":
            return self.http("GET", _pick(["/healthz", "/readyz", "/metrics", "/v1/info"], i))
        # invalid HTTP
        if cls == "http_bad_garbage":
            return self.http("POST", f"{P}?w=224&h=224", inp["garbage"], valid=False)
        if cls == "http_bad_truncated_jpeg":
            return self.http("POST", f"{P}?w=224&h=224", inp["trunc_jpg"], valid=False)
        if cls == "http_bad_truncated_png":
            return self.http("POST", "/v1/decode?format=rgb", inp["trunc_png"], valid=False)
        if cls == "http_bad_unknown_param":
            return self.http("POST", f"{P}?w=224&h=224&sharpen=1", _pick(inp["jpg_small"], i),
                             valid=False)
        if cls == "http_bad_oversized_dims":
            return self.http("POST", f"{P}?w=20000&h=224", _pick(inp["jpg_small"], i), valid=False)
        if cls == "http_bad_value":
            return self.http("POST", "/v1/image?w=128&h=128&format=gif", _pick(inp["jpg_small"], i),
                             valid=False)
        if cls == "http_bad_method":
            return self.http("GET", P, valid=False)
        if cls == "http_bad_route":
            return self.http("POST", "/v1/sharpen", _pick(inp["jpg_small"], i), valid=False)
        if cls == "http_bad_body_too_large":
            return self.raw_http(b"POST /v1/preprocess?w=224&h=224 HTTP/1.1\r\nHost: soak\r\n"
                                 b"Content-Type: image/jpeg\r\nContent-Length: 100000000\r\n\r\n")
        if cls == "http_bad_batch_strict":
            body, h = inp["bad_batch"]
            return self.http("POST", "/v1/batch?w=112&h=112&strict=1", body, h, valid=False)
        if cls == "http_bomb_png_header":
            return self.http("POST", f"{P}?w=224&h=224", inp["png_bomb_header"], valid=False)
        if cls == "http_bomb_png_8k":
            return self.http("POST", f"{P}?w=224&h=224", inp["png_bomb_8k"], valid=False)
        if cls == "http_bomb_jpeg_sof":
            return self.http("POST", "/v1/image?w=128&h=128", inp["jpeg_bomb"], valid=False)
        if cls == "http_bomb_deep_json":
            return self.http("POST", P, _pick(inp["jpg_small"], i),
                             {"X-Dvpp-Spec": inp["deep_json"]}, valid=False)
        # socket
        tensor224 = {"ops": [{"resize": {"w": 224, "h": 224}}],
                     "normalize": {"mean": MEAN, "std": STD}}
        if cls == "sock_tensor_inline":
            return self.sock({"ops": [{"resize": {"w": 16, "h": 16}}], "normalize": {}},
                             _pick(inp["jpg_small"] + inp["png"], i),
                             check=_result_shape((1, 3, 16, 16)))
        if cls == "sock_tensor_ring":
            return self.sock(tensor224, _pick(inp["jpg_small"] + inp["png"], i), ring=True,
                             check=_result_shape((1, 3, 224, 224), touch=True))
        if cls == "sock_tensor_ring_memfd":
            return self.sock(tensor224, inp["jpg640"], ring=True, memfd=True,
                             check=_result_shape((1, 3, 224, 224), touch=True))
        if cls == "sock_image_inline":
            return self.sock({"ops": [{"resize": {"w": 64, "h": 64, "mode": "fit"}}],
                              "output": {"format": "jpeg", "quality": 80}},
                             _pick(inp["jpg_small"] + inp["png"], i), kind="image",
                             check=_result_magic(b"\xff\xd8"))
        if cls == "sock_pixels_inline":
            return self.sock({"decode": {"format": "rgb"},
                              "ops": [{"resize": {"w": 32, "h": 32}}]},
                             _pick(inp["jpg_small"] + inp["png"], i), kind="pixels",
                             check=_result_bytes(32 * 32 * 3))
        if cls == "sock_bad_spec":
            return self.sock({"ops": [{"resize": {"w": 16, "h": 16, "sharpen": 1}}],
                              "normalize": {}}, _pick(inp["jpg_small"], i), valid=False)
        if cls == "sock_bad_garbage":
            return self.sock(tensor224, inp["garbage"], ring=True, valid=False)
        if cls == "sock_bad_truncated":
            return self.sock(tensor224, inp["trunc_jpg"], ring=True, valid=False)
        if cls == "sock_bomb_png_header":
            return self.sock(tensor224, inp["png_bomb_header"], ring=True, valid=False)
        if cls == "sock_bomb_deep_json":
            return self.sock(inp["deep_json"], _pick(inp["jpg_small"], i), ring=True, valid=False)
        if cls == "sock_bad_inline_too_big":
            return self.sock(tensor224, _pick(inp["jpg_small"], i), valid=False)
        raise ValueError(cls)


def _shape(shape, nbytes):
    def check(r, data):
        got = r.getheader("X-Dvpp-Shape")
        if got != shape:
            return f"X-Dvpp-Shape {got!r}, want {shape!r}"
        if len(data) != nbytes:
            return f"{len(data)} bytes, want {nbytes}"
        return None
    return check


def _magic(m):
    def check(_r, data):
        return None if data.startswith(m) else f"body starts {data[:8]!r}, want {m!r}"
    return check


def _nonempty(_r, data):
    return None if data else "empty body"


def _batch_ok(r, data):
    if r.getheader("X-Dvpp-Shape") != "4,3,112,112":
        return f"X-Dvpp-Shape {r.getheader('X-Dvpp-Shape')!r}"
    if r.getheader("X-Dvpp-Items-Failed", "0") != "0":
        return f"X-Dvpp-Items-Failed {r.getheader('X-Dvpp-Items-Failed')}"
    return None


def _result_shape(shape, touch=False):
    def check(res):
        if res.shape != shape:
            return f"shape {res.shape}, want {shape}"
        if touch:
            a = res.array()
            float(a[0, 0, 0, 0]) + float(a[0, 2, 223, 223])  # read the slot in place
        return None
    return check


def _result_magic(m):
    def check(res):
        b = res.tobytes()
        return None if b.startswith(m) else f"payload starts {b[:8]!r}"
    return check


def _result_bytes(n):
    def check(res):
        return None if res.nbytes == n else f"{res.nbytes} bytes, want {n}"
    return check


# ---------------------------------------------------------------------------
# driver processes
# ---------------------------------------------------------------------------

def _percentiles(xs, ps=(50, 99)):
    if not xs:
        return {f"p{p}": None for p in ps} | {"max": None}
    s = sorted(xs)
    out = {f"p{p}": s[min(len(s) - 1, int(len(s) * p / 100))] for p in ps}
    out["max"] = s[-1]
    return out


def driver_proc(p, args, port, sock_path, inputs, schedule, done, ready, go, t0v, stop, q):
    """Process @p: args.threads threads; puts its tallies on @q."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    T = args.threads
    stride = args.procs * T
    lock = threading.Lock()
    tally = {}        # cls -> {"outcome": {..}, "status": {..}}
    lat = {}          # cls -> [seconds]
    late = []
    fails = []        # first failure details
    recon = {"http": 0, "sock": 0}
    setup_err = []
    t_last = [0.0]    # the last answer, seconds after t0

    def thread(t):
        g = p * T + t
        try:
            d = Driver("127.0.0.1", port, sock_path, args.timeout, inputs)
        except Exception as e:
            setup_err.append(f"driver {g}: {e!r}")
            ready.release()
            return
        ready.release()
        go.wait()
        t0 = t0v.value
        my_lat, my_late = {}, []
        my_tally = {}
        t_end = 0.0
        try:
            for i in range(g, len(schedule), stride):
                if stop.is_set():
                    break
                due = t0 + i / args.rate
                now = time.time()
                if due > now:
                    time.sleep(due - now)
                my_late.append(max(0.0, time.time() - due))
                cls = schedule[i]
                ts = time.perf_counter()
                try:
                    outcome, key, detail = d.run(cls, i)
                except Exception as e:  # a bug here, not in the daemon: still a failure
                    outcome, key, detail = "fail", f"driver:{type(e).__name__}", \
                        f"{cls}: {traceback.format_exc(limit=3)}"
                my_lat.setdefault(cls, []).append(time.perf_counter() - ts)
                tc = my_tally.setdefault(cls, {"outcome": {}, "status": {}})
                tc["outcome"][outcome] = tc["outcome"].get(outcome, 0) + 1
                tc["status"][key] = tc["status"].get(key, 0) + 1
                if outcome == "fail" and len(fails) < 40:
                    with lock:
                        fails.append({"i": i, "class": cls, "status": key, "detail": detail,
                                      "t": round(time.time() - t0, 3)})
                done[g] += 1
                t_end = time.time() - t0
        finally:
            d.close()
            with lock:
                for cls, tc in my_tally.items():
                    dst = tally.setdefault(cls, {"outcome": {}, "status": {}})
                    for k in ("outcome", "status"):
                        for s, n in tc[k].items():
                            dst[k][s] = dst[k].get(s, 0) + n
                for cls, xs in my_lat.items():
                    lat.setdefault(cls, []).extend(xs)
                late.extend(my_late)
                t_last[0] = max(t_last[0], t_end)
                for k in recon:
                    recon[k] += d.reconnects[k]

    ths = [threading.Thread(target=thread, args=(t,)) for t in range(T)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    q.put({"proc": p, "tally": tally, "lat": lat, "late": late, "fails": fails,
           "reconnects": recon, "setup_errors": setup_err, "t_last": t_last[0]})


# ---------------------------------------------------------------------------
# the daemon
# ---------------------------------------------------------------------------

class Dvppd(benchlib.Dvppd):
    """build/dvppd for the soak, with its RSS, fd and thread samples."""

    def __init__(self, tmp):
        device = json.loads(os.environ.get("DVPP_SOAK_DEVICE", "{}"))
        super().__init__(tmp, BUILD, {"http": {"threads": 2}, "device": device})

    def sample(self):
        """(rss_kib, fds, threads) or None when gone."""
        pid = self.proc.pid
        try:
            rss = thr = None
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        thr = int(line.split()[1])
            fds = len(os.listdir(f"/proc/{pid}/fd"))
            return rss, fds, thr
        except (OSError, ValueError):
            return None

    def settled_fds(self, timeout=10.0, same=10, step=0.1):
        last, n = None, 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.sample()
            if s is None:
                return None
            n = n + 1 if s[1] == last else 0
            last = s[1]
            if n >= same:
                break
            time.sleep(step)
        return last


# ---------------------------------------------------------------------------
# the soak
# ---------------------------------------------------------------------------

def _median(xs):
    return statistics.median(xs) if xs else None


def soak(args, tmp):
    d = Dvppd(tmp)
    try:
        return _soak(args, d)
    finally:
        if d.alive():          # an error on the way: never leave the daemon behind
            d.stop()



def smaps_copy(d, name):
    """With DVPP_SOAK_SMAPS_DIR set: the daemon's /proc/PID/smaps into DIR/NAME.smaps
    (fresh and at rest), to see which mappings hold what RSS stays."""
    out = os.environ.get("DVPP_SOAK_SMAPS_DIR")
    if not out or not d.alive():
        return
    try:
        os.makedirs(out, exist_ok=True)
        with open(f"/proc/{d.proc.pid}/smaps") as f, open(os.path.join(out, f"{name}.smaps"), "w") as g:
            g.write(f.read())
    except OSError:
        pass

PRIME_VARIANTS = 4   # requests per class in the primer (inputs are picked by index)
PRIME_THREADS = 4    # its drivers, at once


def prime(d, inputs, fresh):
    """The daemon's pre-burst level: PRIME_THREADS drivers at once send
    every class PRIME_VARIANTS times, close, and the daemon idles past its trim
    (device.idle_trim_ms, 5 s by default) until RSS is steady. What a
    fresh daemon lacks and a working one keeps is then counted in: the code
    pages of the codecs the requests touched, the worker threads' stack
    pages, the channels' buffers under device.idle_keep_bytes. Returns a
    sample()."""
    def one(t):
        drv = Driver("127.0.0.1", d.port, d.sock, 30.0, inputs)
        try:
            for i in range(PRIME_VARIANTS):
                for cls in ALL_CLASSES[t:] + ALL_CLASSES[:t]:
                    drv.run(cls, i)
        finally:
            drv.close()

    # concurrent, so that every channel and HTTP thread sees the big inputs
    ths = [threading.Thread(target=one, args=(t,)) for t in range(PRIME_THREADS)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    time.sleep(7.0)
    s = d.sample()
    deadline = time.time() + 20
    while s and time.time() < deadline:   # steady: two samples a second apart within 64 KiB
        time.sleep(1.0)
        prev, s = s, d.sample()
        if s and abs(s[0] - prev[0]) <= 64:
            break
    log(f"primed: RSS {s[0] / 1024:.1f} MiB after every class {PRIME_VARIANTS} times and "
        f"7+ s idle (fresh {fresh[0] / 1024:.1f})")
    return s


def _soak(args, d):
    t_start = time.time()
    N = args.requests
    log(f"soak: {N:,} requests at {args.rate:g} req/s (~{N / args.rate:.0f} s), "
        f"{args.http_share:.0%} HTTP, {args.invalid_share:.0%} invalid/hostile, "
        f"{args.procs}x{args.threads} driver threads, seed {args.seed}")
    inputs = make_inputs(args.seed)
    schedule = make_schedule(N, args.http_share, args.invalid_share, args.seed)
    planned = {c: schedule.count(c) for c in ALL_CLASSES}

    d.start()
    pid = d.proc.pid
    log(f"dvppd {os.path.relpath(os.path.join(BUILD, 'dvppd'), ROOT)} pid {pid}: "
        f"http 127.0.0.1:{d.port}, socket {d.sock}, 2 HTTP threads, 2 channels")
    fresh = d.sample()
    smaps_copy(d, "fresh")
    primed = prime(d, inputs, fresh)
    smaps_copy(d, "primed")
    fds_idle_before = d.settled_fds()

    ctx = mp.get_context("fork")
    n_thr = args.procs * args.threads
    done = ctx.Array("q", n_thr, lock=False)
    ready = ctx.Semaphore(0)
    go = ctx.Event()
    stop = ctx.Event()
    t0v = ctx.Value("d", 0.0, lock=False)
    q = ctx.Queue()
    procs = [ctx.Process(target=driver_proc, daemon=True,
                         args=(p, args, d.port, d.sock, inputs, schedule, done, ready, go,
                               t0v, stop, q)) for p in range(args.procs)]
    for pr in procs:
        pr.start()
    for _ in range(n_thr):
        if not ready.acquire(timeout=60):
            raise RuntimeError("driver threads did not connect within 60 s")
    connected = d.sample()
    log(f"before load: RSS {fresh[0] / 1024:.1f} MiB fresh, fds {fds_idle_before} idle / "
        f"{connected[1]} with {n_thr} HTTP + {n_thr} socket connections and rings, "
        f"threads {connected[2]}")

    duration = N / args.rate
    window = args.window if args.window else min(15.0, max(2.0, 0.05 * duration))
    interval = args.sample_interval
    samples = []      # (t since t0, answered, rss_kib, fds, threads)
    t0 = time.time() + 0.5
    t0v.value = t0
    go.set()
    next_progress = t0 + args.progress
    died = None
    while True:
        now = time.time()
        s = d.sample()
        answered = sum(done)
        if s is None or not d.alive():
            died = f"dvppd exited ({d.proc.poll()}) after {answered:,} answers"
            log(f"!! {died}")
            stop.set()
            break
        samples.append((round(now - t0, 3), answered, s[0], s[1], s[2]))
        if now >= next_progress:
            el = max(now - t0, 1e-9)
            log(f"  t={el:6.0f}s answered {answered:>7,}/{N:,} ({answered / el:6.1f}/s) "
                f"RSS {s[0] / 1024:7.1f} MiB fds {s[1]:4d} threads {s[2]:3d}")
            next_progress += args.progress
        if answered >= N or all(not pr.is_alive() for pr in procs):
            break
        time.sleep(max(0.0, interval - (time.time() - now)))
    t_load_end = time.time()

    results = []
    for _ in procs:
        try:
            results.append(q.get(timeout=120))
        except Exception:
            break
    for pr in procs:
        pr.join(timeout=30)
        if pr.is_alive():
            pr.terminate()
    if len(results) != len(procs):
        raise RuntimeError(f"only {len(results)} of {len(procs)} driver processes reported")

    # every driver connection is closed now: the daemon back at idle
    fds_idle_after = d.settled_fds() if d.alive() else None
    after = d.sample() if d.alive() else None
    # Memory at rest: RSS polled for up to 30 s of idleness (the daemon's
    # idle trim, device.idle_trim_ms, gives a burst's buffers back), until
    # it is within 10 % of the primed daemon's (its pre-burst level).
    rest, rest_s = after, 0.0
    t_idle = time.time()
    # (at least 7 s: past the 5 s trim, so the figure is the level at rest)
    while rest and d.alive() and time.time() - t_idle < 30 and \
            (rest[0] > primed[0] * 1.10 or time.time() - t_idle < 7):
        time.sleep(0.5)
        rest = d.sample() or rest
        rest_s = time.time() - t_idle
    smaps_copy(d, "at_rest")
    exit_status = d.stop() if died is None else d.proc.poll()
    log_tail = d.tail()

    # ------------------------------------------------------------ tallies
    tally, lat, late, fails, setup_errors = {}, {}, [], [], []
    recon = {"http": 0, "sock": 0}
    for r in results:
        for cls, tc in r["tally"].items():
            dst = tally.setdefault(cls, {"outcome": {}, "status": {}})
            for k in ("outcome", "status"):
                for s, n in tc[k].items():
                    dst[k][s] = dst[k].get(s, 0) + n
        for cls, xs in r["lat"].items():
            lat.setdefault(cls, []).extend(xs)
        late.extend(r["late"])
        fails.extend(r["fails"])
        setup_errors.extend(r["setup_errors"])
        for k in recon:
            recon[k] += r["reconnects"][k]
    fails.sort(key=lambda f: f["i"])

    def total(pred):
        return sum(n for cls, tc in tally.items() if pred(cls)
                   for n in tc["outcome"].values())
    n_total = total(lambda c: True)
    outcome = {"ok": 0, "overload": 0, "fail": 0}
    by_kind = {}
    for cls, tc in tally.items():
        kind = ("http" if cls.startswith("http") else "sock") + \
            ("_valid" if VALID[cls] else "_invalid")
        bk = by_kind.setdefault(kind, {"requests": 0, "ok": 0, "overload": 0, "fail": 0})
        for o, n in tc["outcome"].items():
            outcome[o] += n
            bk[o] += n
            bk["requests"] += n
    status_5xx = {}
    conn_errors = 0
    for cls, tc in tally.items():
        for s, n in tc["status"].items():
            if s[:1] == "5" and s != "503+retry-after":
                status_5xx[f"{cls}:{s}"] = n
            if s.startswith("conn:") or s in ("disconnected", "protocol-error"):
                conn_errors += n
    n_503 = sum(tc["status"].get("503+retry-after", 0) for tc in tally.values())
    n_eagain = sum(tc["status"].get("EAGAIN", 0) for tc in tally.values())

    # ------------------------------------------------------------ samples
    load = [s for s in samples if s[0] >= 0]
    # the windows use samples taken while requests were still outstanding: once
    # the last one is answered the drivers start closing their connections
    during = [s for s in load if s[1] < n_total] or load
    warm_n = int(N * args.warmup_share)
    i_warm = next((k for k, s in enumerate(during) if s[1] >= warm_n), None)
    w_warm = [s for s in during[i_warm:] if s[0] <= during[i_warm][0] + window] \
        if i_warm is not None else []
    t_last = during[-1][0] if during else 0
    w_end = [s for s in during if s[0] >= t_last - window]
    if i_warm is not None and w_end and w_end[0][0] < during[i_warm][0] + window:
        w_end = []    # the windows overlap: the run is too short to say anything
    rss_warm = _median([s[2] for s in w_warm])
    rss_end = _median([s[2] for s in w_end])
    fd_warm = _median([s[3] for s in w_warm])
    fd_end = _median([s[3] for s in w_end])
    thr_all = sorted({s[4] for s in load})
    duration_s = max(r["t_last"] for r in results)   # t0 to the last answer
    achieved = n_total / duration_s if duration_s > 0 else 0.0

    # ------------------------------------------------------------ conditions
    cond = {}

    def c(name, ok, text):
        cond[name] = {"pass": bool(ok), "detail": text}

    c("daemon_alive_and_clean_exit", died is None and exit_status == 0,
      f"dvppd {'died: ' + died if died else 'served the whole run'}; exit status on SIGTERM "
      f"{exit_status}")
    c("no_5xx_except_503", not status_5xx,
      f"5xx other than 503 (or 503 without Retry-After): {status_5xx or 'none'}; "
      f"503 with Retry-After: {n_503}")
    c("no_connection_errors", conn_errors == 0 and not setup_errors,
      f"connection errors/resets/time-outs/drops: {conn_errors}; driver set-up errors: "
      f"{len(setup_errors)}; reconnects after an error: http {recon['http']}, "
      f"socket {recon['sock']}")
    c("every_request_as_expected", outcome["fail"] == 0,
      f"fail outcomes: {outcome['fail']} (valid: 200 / Result ok; invalid: 4xx / socket error; "
      f"503+Retry-After and EAGAIN counted as overload)")
    max_ovl = args.max_overload * N
    c("all_answered_at_rate", n_total == N and achieved >= 0.9 * args.rate
      and outcome["overload"] <= max_ovl,
      f"answered {n_total:,}/{N:,} in {duration_s:.1f} s = {achieved:.1f} req/s (target "
      f"{args.rate:g}, >= 90 % needed); overload {outcome['overload']} "
      f"(503 {n_503}, EAGAIN {n_eagain}; at most {args.max_overload:.0%} = {max_ovl:.0f})")
    if rss_warm and rss_end:
        growth = rss_end / rss_warm - 1
        c("rss_growth_below_10pct", growth < 0.10,
          f"RSS after warm-up {rss_warm / 1024:.1f} MiB (median of {len(w_warm)} samples), "
          f"end {rss_end / 1024:.1f} MiB (median of {len(w_end)}): {growth:+.1%} "
          f"(must be < +10 %)")
    else:
        growth = None
        c("rss_growth_below_10pct", False, "not enough samples for the warm-up and end "
          "windows (run longer or lower --window)")
    if rest and primed:
        c("rss_at_rest_within_10pct", rest[0] <= primed[0] * 1.10,
          f"RSS at rest {rest[0] / 1024:.1f} MiB after {rest_s:.1f} s idle, primed "
          f"(pre-burst) {primed[0] / 1024:.1f} MiB: {rest[0] / primed[0] - 1:+.1%} "
          f"(must be <= +10 % within 30 s; fresh {fresh[0] / 1024:.1f} MiB)")
    else:
        c("rss_at_rest_within_10pct", False, "the daemon was gone before the rest samples")
    # One keep-alive HTTP connection per driver thread may be closed or
    # reopened at a sample; and each socket connection's input-mapping cache
    # keeps a duplicate of up to SOCK_MAPCACHE (8, dvppd/sock/sock_int.h)
    # sealed memfds it has mapped, as the identity of the file (kcmp), so a
    # run that sends fresh memfds fills those caches as it goes: bounded,
    # and given back when the connection closes (the idle counts must match).
    mapcache = 8
    tol = n_thr + n_thr * mapcache
    fd_ok = fd_warm is not None and fd_end is not None and abs(fd_end - fd_warm) <= tol
    c("fds_stable", fd_ok and fds_idle_after == fds_idle_before,
      f"under load: after warm-up {fd_warm}, end {fd_end} (|diff| <= {tol}: one keep-alive "
      f"HTTP connection per driver thread may be closed or reopened at a sample, and each "
      f"socket connection's mapping cache holds up to {mapcache} memfds); idle (no "
      f"client connected): before the load {fds_idle_before}, after it {fds_idle_after} "
      f"(must be equal)")
    c("threads_constant", len(thr_all) == 1 and (after is None or after[2] == thr_all[0]),
      f"thread counts seen during the load: {thr_all}; before {connected[2]}, after "
      f"{after[2] if after else None}")
    passed = all(v["pass"] for v in cond.values())

    lat_ms = {cls: {k: (round(v * 1000, 2) if v is not None else None)
                    for k, v in _percentiles(xs).items()} for cls, xs in lat.items()}
    late_s = {k: (round(v, 4) if v is not None else None) for k, v in _percentiles(late).items()}
    mib = (lambda k: round(k / 1024, 1) if k is not None else None)
    summary = {
        "pass": passed,
        "fail_reasons": [f"{k}: {v['detail']}" for k, v in cond.items() if not v["pass"]],
        "requests": {"planned": N, "answered": n_total, "by_outcome": outcome,
                     "by_kind": by_kind, "503_with_retry_after": n_503, "eagain": n_eagain,
                     "by_class": {cls: {"planned": planned[cls], "valid": VALID[cls],
                                        "outcome": tally.get(cls, {}).get("outcome", {}),
                                        "status": tally.get(cls, {}).get("status", {})}
                                  for cls in ALL_CLASSES}},
        "rate": {"target_per_s": args.rate, "achieved_per_s": round(achieved, 1),
                 "duration_s": round(duration_s, 1), "lateness_s": late_s},
        "rss_mib": {"fresh": mib(fresh[0]), "primed": mib(primed[0]),
                    "with_connections": mib(connected[0]),
                    "after_warmup": mib(rss_warm), "end": mib(rss_end),
                    "max": mib(max((s[2] for s in load), default=None)),
                    "growth_pct": round(growth * 100, 2) if growth is not None else None,
                    "idle_after": mib(after[0]) if after else None,
                    "at_rest": mib(rest[0]) if rest else None,
                    "at_rest_after_s": round(rest_s, 1)},
        "fds": {"idle_before": fds_idle_before, "with_connections": connected[1],
                "after_warmup": fd_warm, "end": fd_end,
                "min": min((s[3] for s in during), default=None),
                "max": max((s[3] for s in during), default=None),
                "idle_after": fds_idle_after, "tolerance": tol},
        "threads": {"before": connected[2], "during": thr_all,
                    "after": after[2] if after else None},
        "windows": {"warmup_share": args.warmup_share, "warmup_requests": warm_n,
                    "window_s": window,
                    "after_warmup_t_s": [w_warm[0][0], w_warm[-1][0]] if w_warm else None,
                    "end_t_s": [w_end[0][0], w_end[-1][0]] if w_end else None,
                    "samples": len(load), "sample_interval_s": interval},
        "conditions": cond,
        "latency_ms": lat_ms,
        "failures_first": fails[:20],
        "driver": {"procs": args.procs, "threads": args.threads, "http_share": args.http_share,
                   "invalid_share": args.invalid_share, "seed": args.seed,
                   "timeout_s": args.timeout, "reconnects": recon,
                   "setup_errors": setup_errors},
        "dvppd": {"exe": os.path.relpath(os.path.join(BUILD, "dvppd"), ROOT),
                  "config": d.config, "exit_status": exit_status},
        "total_s": round(time.time() - t_start, 1),
        "load_s": round(t_load_end - t0, 1),
    }
    if args.samples:
        summary["samples"] = [list(s) for s in load]
    return summary, log_tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--rate", type=float, default=250.0, help="requests per second (250)")
    ap.add_argument("--http-share", type=float, default=0.6)
    ap.add_argument("--invalid-share", type=float, default=0.1)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=4, help="per driver process")
    ap.add_argument("--timeout", type=float, default=30.0, help="per request, seconds")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--sample-interval", type=float, default=None)
    ap.add_argument("--window", type=float, default=None,
                    help="seconds of the after-warm-up and end windows (default 5 %% of the "
                         "planned duration, 2..15)")
    ap.add_argument("--warmup-share", type=float, default=None,
                    help="share of the requests that is warm-up (0.10; 0.5 with --quick)")
    ap.add_argument("--max-overload", type=float, default=0.05)
    ap.add_argument("--progress", type=float, default=None, help="seconds between lines")
    ap.add_argument("--samples", action="store_true", help="put every sample in the summary")
    ap.add_argument("--quick", action="store_true", help="3,000 requests (a smoke check)")
    ap.add_argument("--summary", default=os.path.join(BUILD, "bench", "soak.json"))
    args = ap.parse_args()
    if args.quick and args.requests == ap.get_default("requests"):
        args.requests = 3000
    if args.warmup_share is None:
        args.warmup_share = 0.5 if args.quick else 0.10
    if args.sample_interval is None:
        args.sample_interval = 0.5 if args.quick else 1.0
    if args.progress is None:
        args.progress = 5.0 if args.quick else 30.0
    if args.requests < 1 or args.rate <= 0 or not 0 <= args.http_share <= 1 \
            or not 0 <= args.invalid_share <= 1 or args.procs < 1 or args.threads < 1 \
            or not 0 <= args.warmup_share < 1:
        ap.error("bad --requests/--rate/--http-share/--invalid-share/--procs/--threads/"
                 "--warmup-share")

    tmp = tempfile.mkdtemp(prefix="dvpp-soak-", dir="/tmp")   # a short socket path

    def on_signal(sig, _frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        try:
            summary, log_tail = soak(args, tmp)
        except RuntimeError as e:
            log(f"soak could not run: {e}")
            return 2
        text = json.dumps(summary, indent=1)
        print(text, flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.summary)), exist_ok=True)
        with open(args.summary, "w") as f:
            f.write(text + "\n")
        log("")
        for name, v in summary["conditions"].items():
            log(f"  [{'pass' if v['pass'] else 'FAIL'}] {name}: {v['detail']}")
        if not summary["pass"]:
            if summary["failures_first"]:
                log("first failures:")
                for f in summary["failures_first"][:10]:
                    log(f"  #{f['i']} t={f['t']}s {f['class']} {f['status']}: "
                        f"{f['detail'][:300]}")
            log(f"dvppd log (tail):\n{log_tail}")
        r, ss = summary["rss_mib"], summary["fds"]
        where = os.path.relpath(args.summary, ROOT) if args.summary.startswith(ROOT) \
            else args.summary
        log(f"SOAK {'PASS' if summary['pass'] else 'FAIL'}: {summary['requests']['answered']:,} "
            f"requests in {summary['rate']['duration_s']} s "
            f"({summary['rate']['achieved_per_s']} req/s); RSS after warm-up "
            f"{r['after_warmup']} MiB, end {r['end']} MiB ({r['growth_pct']}%), max {r['max']}, "
            f"at rest {r['at_rest']} MiB after {r['at_rest_after_s']} s idle (primed "
            f"{r['primed']}, fresh {r['fresh']}); "
            f"fds {ss['after_warmup']} -> {ss['end']} (idle {ss['idle_before']} -> "
            f"{ss['idle_after']}); threads {summary['threads']['during']}; summary: {where}")
        return 0 if summary["pass"] else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
