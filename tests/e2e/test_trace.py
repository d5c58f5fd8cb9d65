"""Per-request traces and captures over HTTP (docs/tracing.md), end to end.

A traced /v1/preprocess answers X-Dvpp-Trace-Id / X-Dvpp-Trace, and GET
/v1/traces/{id} is a valid Chrome Trace (every event has ph/ts/pid/tid/name,
X events dur >= 0, M events name the threads), whose spans nest (per thread,
properly nested intervals; every pipeline span inside "run", "run" inside
"request"), whose stages add up to no more than their parent, whose
"request" equals X-Dvpp-Timing's total within 5%, with one span per op
(its index) of a crop + resize + normalise spec; the tensor is the untraced
one, byte for byte. A batch of 4 shows items 0..3. GET /v1/trace?seconds=1
under a concurrent load holds every job run in the window (counted against
the requests sent), a second capture meanwhile is 409. Unknown ids are 404,
untraced requests store nothing.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_trace.py
"""
import json
import threading
import time
import urllib.parse

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import free_port, gradient, multipart, stop_daemon, to_jpeg  # noqa: E402
import daemon_util  # noqa: E402

SPEC = {"crop": "10,10,409,309", "w": 224, "h": 224, "mean": "0.485,0.456,0.406",
        "std": "0.229,0.224,0.225"}
PIPELINE_SPANS = {"plan", "decode", "crop", "resize", "convert", "border", "flip",
                  "normalise", "aipp", "image"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("trace"))
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "threads": 4},
           "socket": {"path": ""}, "device": {"channels": 3},
           "trace": {"keep": 8, "max_seconds": 5}}
    d = daemon_util.start_daemon(tmp, cfg, "d", port)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def jpg():
    return to_jpeg(gradient(640, 480, seed=7))


def qs(params):
    return urllib.parse.urlencode(params, safe=",:")


def timing(r):
    return {k: int(v) for k, v in (p.split("=") for p in r.h("X-Dvpp-Timing").split(";"))}


def fetch_trace(srv, r):
    tid = r.h("X-Dvpp-Trace-Id")
    assert tid and tid.isdigit(), r
    assert r.h("X-Dvpp-Trace") == f"/v1/traces/{tid}"
    t = srv.get(f"/v1/traces/{tid}")
    assert t.status == 200, t
    assert t.h("content-type") == "application/json"
    return t.json()


def check_format(tr):
    """Chrome Trace Event Format as chrome://tracing and Perfetto read it."""
    assert set(tr) >= {"traceEvents", "displayTimeUnit", "otherData"}
    assert tr["displayTimeUnit"] == "ms"
    ev = tr["traceEvents"]
    for e in ev:
        for k in ("ph", "ts", "pid", "tid", "name"):
            assert k in e, e
        assert e["ph"] in ("X", "M"), e
        if e["ph"] == "X":
            assert e["dur"] >= 0, e
    named = {e["tid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    xs = [e for e in ev if e["ph"] == "X"]
    for e in xs:
        assert e["tid"] in named, f"thread {e['tid']} of {e['name']} is not named"
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in ev)
    return xs, named


def check_nesting(xs):
    """Per thread (and job: in a capture, connections served by one HTTP
    thread interleave), the X events are properly nested intervals."""
    eps = 0.002  # µs: the three decimals of the ns clock
    by_tid = {}
    for e in xs:
        by_tid.setdefault((e["tid"], e["args"].get("job")), []).append(e)
    for tid, evs in by_tid.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - eps:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + eps, \
                    f"{e['name']} overlaps {top['name']} on thread {tid}"
            stack.append(e)


def inside(inner, outer, eps=0.002):
    return inner["ts"] >= outer["ts"] - eps and \
        inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + eps


def test_traced_preprocess(srv, jpg):
    plain = srv.post("/v1/preprocess?" + qs(SPEC), jpg)
    assert plain.status == 200 and plain.h("X-Dvpp-Trace-Id") is None
    r = srv.post("/v1/preprocess?" + qs(dict(SPEC, trace=1)), jpg)
    assert r.status == 200, r
    assert r.body == plain.body  # the watch changes no byte of the tensor
    tr = fetch_trace(srv, r)
    xs, named = check_format(tr)
    check_nesting(xs)
    names = [e["name"] for e in xs]
    for want in ("request", "read", "queue", "write", "run", "plan", "decode", "crop",
                 "normalise"):
        assert names.count(want) == 1, (want, names)
    # the last resize is fused into the normalisation (the plan a trace does
    # not change): its time is the "normalise" span's, it has none of its own
    assert "resize" not in names
    ev = {e["name"]: e for e in xs}
    # the front end's spans on the HTTP thread, the pipeline's on a worker
    assert named[ev["request"]["tid"]] == "http"
    assert named[ev["run"]["tid"]].startswith("vpc-worker-"), named
    assert ev["run"]["tid"] != ev["request"]["tid"]
    # op indices of the spec: crop is op 0
    assert ev["crop"]["args"]["index"] == 0
    # nesting across threads: pipeline spans in run, run and the rest in request
    req, run = ev["request"], ev["run"]
    for e in xs:
        if e["name"] in PIPELINE_SPANS:
            assert inside(e, run), e
        if e is not req:
            assert inside(e, req), e
    # stages add up to no more than their parent
    assert sum(e["dur"] for e in xs if e["name"] in PIPELINE_SPANS) <= run["dur"] + 0.01
    assert ev["read"]["dur"] + ev["queue"]["dur"] + run["dur"] + ev["write"]["dur"] \
        <= req["dur"] + 0.01
    # the request span is X-Dvpp-Timing's total (µs) within 5%
    total = timing(r)["total"]
    assert abs(req["dur"] - total) <= 0.05 * total + 20, (req["dur"], total)
    assert ev["read"]["args"]["bytes"] == len(jpg)
    assert abs(ev["queue"]["dur"] - timing(r)["queue"]) <= 2
    assert tr["otherData"]["dropped_events"] == 0


def test_every_op_span(srv, jpg):
    """crop, resize, flip, normalise: nothing fused away, one span per op."""
    spec = {"ops": [{"crop": [10, 10, 409, 309]}, {"resize": {"w": 224, "h": 224}},
                    {"flip": "horizontal"}],
            "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}
    hdr = {"X-Dvpp-Spec": json.dumps(spec)}
    plain = srv.post("/v1/preprocess", jpg, headers=hdr)
    r = srv.post("/v1/preprocess?trace=1", jpg, headers=hdr)
    assert r.status == 200 and r.body == plain.body, r
    xs, _ = check_format(fetch_trace(srv, r))
    check_nesting(xs)
    ops = sorted((e["args"]["index"], e["name"]) for e in xs
                 if e["name"] in ("crop", "resize", "flip"))
    assert ops == [(0, "crop"), (1, "resize"), (2, "flip")], ops
    run = next(e for e in xs if e["name"] == "run")
    seq = sorted((e for e in xs if e["name"] in PIPELINE_SPANS), key=lambda e: e["ts"])
    assert [e["name"] for e in seq] == ["plan", "decode", "crop", "resize", "flip",
                                        "normalise"]
    for a, b in zip(seq, seq[1:]):  # in stage order, one after the other
        assert a["ts"] + a["dur"] <= b["ts"] + 0.002
    assert all(inside(e, run) for e in seq)


def test_trace_header_and_batch(srv, jpg):
    imgs = [to_jpeg(gradient(320 + 16 * i, 240, seed=i)) for i in range(4)]
    body, hdr = multipart([(f"img{i}", b) for i, b in enumerate(imgs)], as_files=True)
    r = srv.post("/v1/batch?w=64&h=64", body, headers=dict(hdr, **{"X-Dvpp-Trace": "1"}))
    assert r.status == 200, r
    assert r.npy().shape == (4, 3, 64, 64)
    tr = fetch_trace(srv, r)
    xs, named = check_format(tr)
    check_nesting(xs)
    runs = [e for e in xs if e["name"] == "run"]
    assert sorted(e["args"]["item"] for e in runs) == [0, 1, 2, 3]
    req = next(e for e in xs if e["name"] == "request")
    for e in runs:
        assert inside(e, req)
        assert named[e["tid"]].startswith("vpc-worker-")
    # every item's decode and normalise (the resize fused in it), inside its own run
    for item in range(4):
        run = next(e for e in runs if e["args"]["item"] == item)
        mine = [e for e in xs if e["name"] in PIPELINE_SPANS and e["args"].get("item") == item]
        assert {"plan", "decode", "normalise"} <= {e["name"] for e in mine}
        for e in mine:
            assert inside(e, run) and e["tid"] == run["tid"]


def test_trace_off_unknown_and_bad(srv, jpg):
    r = srv.post("/v1/preprocess?" + qs(dict(SPEC, trace=1)), jpg)
    last = int(r.h("X-Dvpp-Trace-Id"))
    for flag in ({}, {"trace": 0}, {"trace": "false"}):
        p = srv.post("/v1/preprocess?" + qs(dict(SPEC, **flag)), jpg)
        assert p.status == 200 and p.h("X-Dvpp-Trace-Id") is None and p.h("X-Dvpp-Trace") is None
    # untraced requests took no id and stored nothing
    assert srv.get(f"/v1/traces/{last + 1}").status == 404
    r2 = srv.post("/v1/preprocess?" + qs(dict(SPEC, trace="true")), jpg)
    assert int(r2.h("X-Dvpp-Trace-Id")) == last + 1
    for bad in ("/v1/traces/999999", "/v1/traces/0", "/v1/traces/abc"):
        e = srv.get(bad)
        assert e.status == 404, (bad, e)
    e = srv.post("/v1/preprocess?" + qs(dict(SPEC, trace="yes")), jpg)
    assert e.status == 400 and e.json()["error"]["field"] == "trace"
    assert srv.get("/v1/trace").status == 400
    assert srv.get("/v1/trace?seconds=0").status == 400
    assert srv.get("/v1/trace?seconds=6").status == 400  # above trace.max_seconds


def test_capture_window(srv, jpg):
    small = to_jpeg(gradient(160, 120, seed=3))
    out = {}

    def capture():
        out["r"] = srv.get("/v1/trace?seconds=1", timeout=10)

    th = threading.Thread(target=capture)
    t0 = time.monotonic()
    th.start()
    time.sleep(0.15)
    busy = srv.get("/v1/trace?seconds=1")
    assert busy.status == 409, busy
    sent, lock = [], threading.Lock()

    def load(k):
        for _ in range(5):
            r = srv.post("/v1/preprocess?w=32&h=32", small)
            assert r.status == 200
            with lock:
                sent.append(r)

    workers = [threading.Thread(target=load, args=(k,)) for k in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert time.monotonic() - t0 < 0.9, "the load did not fit the window"
    th.join()
    r = out["r"]
    assert r.status == 200, r
    assert time.monotonic() - t0 >= 1.0  # answered after its N seconds
    tr = r.json()
    xs, _ = check_format(tr)
    check_nesting(xs)
    reqs = [e for e in xs if e["name"] == "request"]
    runs = [e for e in xs if e["name"] == "run"]
    # the 15 sent (and the 409 GET is not a job): one request and one run each
    assert len(sent) == 15
    assert len(reqs) == 15 and len(runs) == 15, (len(reqs), len(runs))
    assert len({e["args"]["job"] for e in reqs}) == 15
    assert {e["args"]["job"] for e in runs} == {e["args"]["job"] for e in reqs}
    assert tr["otherData"]["dropped_events"] == 0
    assert int(r.h("X-Dvpp-Trace-Events")) == len(xs)
    # the capture is over: a job now is in no capture, and a new one may start
    assert srv.post("/v1/preprocess?w=32&h=32", small).status == 200
    r2 = srv.get("/v1/trace?seconds=1", timeout=10)
    assert r2.status == 200
    assert not [e for e in r2.json()["traceEvents"] if e["name"] == "request"]


# --- the socket (Submit.trace, BatchSubmit.trace, TraceGet) and dvppctl --trace ----------

SOCK_INLINE = 4096  # socket.max_inline: a traced batch's JSON is larger (ELIMIT)


@pytest.fixture(scope="module")
def ssrv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("strace"))
    port = free_port()
    sdir = daemon_util.sock_dir("dvppt-", 0o755)
    sock = f"{sdir}/t.sock"
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "threads": 4},
           "socket": {"path": sock, "mode": "0600", "max_inline": SOCK_INLINE},
           "device": {"channels": 3}, "trace": {"keep": 16, "max_seconds": 5}}
    d = daemon_util.start_daemon(tmp, cfg, "d", port, sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def dvpp_mod():
    return daemon_util.pyclient()


def sock_spec():
    return {"ops": [{"resize": {"w": 64, "h": 48}}], "normalize": {"scale": 1 / 255}}


def check_socket_trace(tr, items=1):
    """A socket job's trace: valid, nested per thread; "queue" (a Submit)
    and "request" on the socket thread, every "run" inside "request" on a
    worker, "write" with "hand-off" inside it after the runs."""
    xs, named = check_format(tr)
    check_nesting(xs)
    by = {}
    for e in xs:
        by.setdefault(e["name"], []).append(e)
    req, = by["request"]
    assert named[req["tid"]] == "socket"
    runs = by["run"]
    assert len(runs) == items
    for e in runs:
        assert inside(e, req)
        assert named[e["tid"]].startswith("vpc-worker-")
    for name in PIPELINE_SPANS & set(by):
        for e in by[name]:
            run = next(r for r in runs if r["args"].get("item", 0) == e["args"].get("item", 0))
            assert inside(e, run) and e["tid"] == run["tid"], e
    write, = by["write"]
    hand, = by["hand-off"]
    assert inside(write, req) and inside(hand, write)
    assert all(write["ts"] >= r["ts"] + r["dur"] - 0.002 for r in runs)
    if items == 1:
        queue, = by["queue"]
        assert queue["tid"] == req["tid"] and inside(queue, req)
        assert queue["ts"] + queue["dur"] <= runs[0]["ts"] + 0.002
    return by


def test_socket_submit_traced(ssrv, dvpp_mod, jpg):
    with dvpp_mod.Client(ssrv.sock, timeout=20) as c:
        ring = c.open_ring(2, 1 << 20)
        plain = c.submit(sock_spec(), jpg, ring=ring)
        assert plain.trace_id == 0
        want = plain.array().copy()
        plain.release()
        r = c.submit(sock_spec(), jpg, ring=ring, trace=True)
        assert r.trace_id > 0
        assert np.array_equal(r.array(), want)  # the watch changes no byte
        total_us = r.timings.total_us
        r.release()
        tr = c.trace(r.trace_id)
    by = check_socket_trace(tr)
    assert {"plan", "decode", "normalise"} <= set(by)
    assert tr["otherData"]["label"] == "socket submit"
    # "request" covers what Result.timings.total measures (submit .. answer)
    assert by["request"][0]["dur"] >= total_us - 1
    # one store: HTTP serves the very same JSON
    h = ssrv.get(f"/v1/traces/{r.trace_id}")
    assert h.status == 200 and h.json() == tr


def test_socket_batch_traced(ssrv, dvpp_mod):
    imgs = [to_jpeg(gradient(200 + 8 * i, 150, seed=i)) for i in range(3)]
    with dvpp_mod.Client(ssrv.sock, timeout=20) as c:
        ring = c.open_ring(2, 1 << 20)
        r = c.batch_submit(sock_spec(), imgs, ring, trace=True)
        assert r.trace_id > 0 and r.item_status == [0, 0, 0]
        r.release()
        tr = c.trace(r.trace_id)
    by = check_socket_trace(tr, items=3)
    assert sorted(e["args"]["item"] for e in by["run"]) == [0, 1, 2]
    for item in range(3):
        assert {"decode", "normalise"} <= {e["name"] for e in tr["traceEvents"]
                                          if e["args"].get("item") == item}
    assert tr["otherData"]["label"] == "socket batch"


def test_socket_trace_errors(ssrv, dvpp_mod):
    big = [to_jpeg(gradient(64, 48, seed=i)) for i in range(12)]
    with dvpp_mod.Client(ssrv.sock, timeout=20) as c:
        with pytest.raises(dvpp_mod.DvppError) as ei:
            c.trace(987654)
        assert ei.value.code == "ENOTFOUND"
        # a traced batch of 12 is several KiB of JSON: more than max_inline
        ring = c.open_ring(2, 1 << 20)
        r = c.batch_submit(sock_spec(), big, ring, trace=True)
        r.release()
        with pytest.raises(dvpp_mod.DvppError) as ei:
            c.trace(r.trace_id)
        assert ei.value.code == "ELIMIT" and ei.value.field == "trace"
        assert "max_inline" in str(ei.value)
    h = ssrv.get(f"/v1/traces/{r.trace_id}")  # HTTP has no such bound
    assert h.status == 200 and len(h.body) > SOCK_INLINE
    assert len([e for e in h.json()["traceEvents"] if e["name"] == "run"]) == 12


def test_capture_counts_socket_jobs(ssrv, dvpp_mod, jpg):
    small = to_jpeg(gradient(160, 120, seed=5))
    out = {}

    def capture():
        out["r"] = ssrv.get("/v1/trace?seconds=1", timeout=10)

    th = threading.Thread(target=capture)
    t0 = time.monotonic()
    th.start()
    time.sleep(0.15)
    with dvpp_mod.Client(ssrv.sock, timeout=20) as c:
        ring = c.open_ring(4, 1 << 20)
        ids = [c.submit_async(sock_spec(), small, ring=ring) for _ in range(3)]
        for i in ids:
            c.wait(i).release()
        for _ in range(2):
            c.submit(sock_spec(), small, ring=ring).release()
        c.batch_submit(sock_spec(), [small, small], ring).release()
    assert ssrv.post("/v1/preprocess?w=32&h=32", small).status == 200  # and one HTTP job
    assert time.monotonic() - t0 < 0.9, "the load did not fit the window"
    th.join()
    r = out["r"]
    assert r.status == 200, r
    xs, named = check_format(r.json())
    check_nesting(xs)
    reqs = [e for e in xs if e["name"] == "request"]
    # 5 Submits + 1 BatchSubmit on the socket, 1 HTTP request: 7 jobs
    assert len(reqs) == 7 and len({e["args"]["job"] for e in reqs}) == 7
    assert sorted(named[e["tid"]] for e in reqs) == ["http"] + ["socket"] * 6
    assert len([e for e in xs if e["name"] == "run"]) == 5 + 2 + 1


def test_dvppctl_trace_socket_and_local(ssrv, jpg, tmp_path):
    src = tmp_path / "in.jpg"
    src.write_bytes(jpg)
    outs = {}
    for mode in ("socket", "local"):
        tfile, npy = tmp_path / f"{mode}.json", tmp_path / f"{mode}.npy"
        extra = ["--socket", ssrv.sock] if mode == "socket" else []
        daemon_util.ctl("preprocess", src, "--size", "64x48", "--trace", tfile, "-o", npy,
                        *extra)
        outs[mode] = daemon_util.npy_load(npy.read_bytes())
        tr = json.loads(tfile.read_text())
        xs, named = check_format(tr)
        check_nesting(xs)
        names = {e["name"] for e in xs}
        run, = [e for e in xs if e["name"] == "run"]
        assert {"plan", "decode", "normalise"} <= names
        for e in xs:
            if e["name"] in PIPELINE_SPANS:
                assert inside(e, run)
        top = "request" if mode == "socket" else "preprocess"
        outer, = [e for e in xs if e["name"] == top]
        assert inside(run, outer)
        if mode == "local":
            assert {"read", "write"} <= names and set(named.values()) == {"dvppctl"}
            assert tr["otherData"]["label"] == "dvppctl preprocess"
    assert np.array_equal(outs["socket"], outs["local"])
    # no daemon, another command: refused, naming why
    r = daemon_util.ctl("resize", src, "--size", "64x48", "--trace", tmp_path / "x.json",
                        "-o", tmp_path / "x.jpg", check=False)
    assert r.returncode == 2 and "--trace needs --socket" in r.stderr


def test_dvppctl_trace_local_preset(ssrv, jpg, tmp_path):
    """--preset with --trace and no daemon: the preset's pipeline run here
    and recorded (every op of imagenet: resize, then the centre crop), the
    tensor the very bytes of the daemon's ?preset=imagenet answer."""
    src = tmp_path / "in.jpg"
    src.write_bytes(jpg)
    tfile, npy = tmp_path / "p.json", tmp_path / "p.npy"
    daemon_util.ctl("preprocess", src, "--preset", "imagenet", "--trace", tfile, "-o", npy)
    tr = json.loads(tfile.read_text())
    xs, named = check_format(tr)
    check_nesting(xs)
    run, = [e for e in xs if e["name"] == "run"]
    ops = sorted((e["args"]["index"], e["name"]) for e in xs
                 if e["name"] in ("resize", "crop") and inside(e, run))
    assert ops == [(0, "resize"), (1, "crop")], ops
    assert {"read", "write", "preprocess"} <= {e["name"] for e in xs}
    api = ssrv.post("/v1/preprocess?preset=imagenet", jpg)
    assert api.status == 200, api
    assert npy.read_bytes() == api.body
