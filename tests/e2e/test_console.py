"""The web console (docs/console.md): GET /, /console/<file>, /v1/stats, and
the page itself in Debian's headless Chromium (python3-selenium +
chromium-driver).

What is asserted:
- the embedded files are served byte for byte as they are in dvppd/console/,
  with their Content-Type, a strong ETag (If-None-Match -> 304), the strict
  CSP and nosniff; anything else under /console/ is 404, POST / is 405;
- http.console: on by default for a loopback listener, off by default for a
  non-loopback one, and an explicit true/false wins; off, / and /console/*
  are 404 while /v1/stats (API) still answers;
- /v1/stats counts what was done: N preprocess requests move requests and
  images by exactly N, an error answer appears in "errors" with the status
  and message the client got, rejection counters equal /metrics', engines
  and channels equal /v1/info's;
- in the browser: the charts draw, the throughput series moves under
  concurrent load, "Try it" on a real photo shows the shape and per-channel
  min/max/mean/std of the tensor, equal (1e-4 relative) to numpy's stats of
  the API's own /v1/preprocess answer, for a preset (NCHW float32) and for
  an edited spec (NHWC float16 letterbox, whose outline and geometry text are
  checked against X-Dvpp-Scale/Pad); the printed curl command, run as
  printed, gives the same bytes as the API; the printed dvppctl command, run
  as printed, gives the same tensor. Screenshots go to build/console/ and
  are copied to docs/img/console-*.png.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import ROOT, free_port, npy_load, sock_dir, start_daemon, stop_daemon  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CONSOLE_DIR = os.path.join(ROOT, "dvppd", "console")
SHOTS = os.path.join(ROOT, daemon_util.BUILD, "console")
DOCS_IMG = os.path.join(ROOT, "docs", "img")

# A real photo: the fetched test data's, else forensics-samples-files' (a
# Debian package `make deps` installs): a 1280x960 phone picture.
PHOTO_CANDIDATES = [
    os.path.join(ROOT, ".cache", "testdata", "photos", "photo1080.jpg"),
    "/usr/share/forensics-samples/original-files/pic1/IMG_1054.JPG",
    "/usr/share/forensics-samples/original-files/pic1/IMG-20191006-WA0002.jpg",
]


def photo_path():
    for p in PHOTO_CANDIDATES:
        if os.path.exists(p):
            return p
    pytest.fail("no photo: run `make deps` (forensics-samples-files) or tests/tools/fetch-test-data")


def start(tmp, name, listen="127.0.0.1", console=None, sock=None):
    port = free_port()
    cfg = {"http": {"listen": f"{listen}:{port}"}, "socket": {"path": sock or ""},
           "device": {"channels": 2}}
    if console is not None:
        cfg["http"]["console"] = console
    return start_daemon(tmp, cfg, name, port, sock=sock)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("console"))
    sd = sock_dir("dvppcon")
    d = start(tmp, "console", sock=os.path.join(sd, "d.sock"))
    d.sock_dir = sd
    d.tmp = tmp
    yield d
    stop_daemon(d)


def small_jpeg(seed=1):
    return daemon_util.to_jpeg(daemon_util.gradient(160, 120, seed))


# --------------------------------------------------------------------------
# the routes, without a browser


def test_files_are_served_as_embedded(srv):
    names = sorted(os.listdir(CONSOLE_DIR))
    assert {"index.html", "console.css", "console.js"} <= set(names)
    types = {".html": "text/html", ".css": "text/css", ".js": "text/javascript"}
    for name in names:
        with open(os.path.join(CONSOLE_DIR, name), "rb") as f:
            want = f.read()
        r = srv.get("/console/" + name)
        assert r.status == 200, r
        assert r.body == want, name
        assert r.h("content-type").startswith(types[os.path.splitext(name)[1]])
        assert re.fullmatch(r'"[0-9a-f]{16}"', r.h("etag")), r.h("etag")
        assert r.h("cache-control") == "no-cache"
        assert r.h("x-content-type-options") == "nosniff"
        csp = r.h("content-security-policy")
        assert "default-src 'self'" in csp and "img-src 'self' blob: data:" in csp, csp
        again = srv.get("/console/" + name, headers={"If-None-Match": r.h("etag")})
        assert again.status == 304 and again.body == b"" and again.h("etag") == r.h("etag")
        listed = srv.get("/console/" + name, headers={"If-None-Match": '"0", ' + r.h("etag")})
        assert listed.status == 304
        other = srv.get("/console/" + name, headers={"If-None-Match": '"0000000000000000"'})
        assert other.status == 200 and other.body == want
    root = srv.get("/")
    with open(os.path.join(CONSOLE_DIR, "index.html"), "rb") as f:
        assert root.status == 200 and root.body == f.read()
    assert "script-src 'self'" in root.h("content-security-policy")
    # Every file gets its own tag.
    tags = {srv.get("/console/" + n).h("etag") for n in names}
    assert len(tags) == len(names)


@pytest.mark.parametrize("path", ["/console/x", "/console/", "/console/../dvppd",
                                  "/console/index.html/", "/console/INDEX.HTML",
                                  "/console/%2e%2e/Makefile", "/index.html"])
def test_unknown_console_paths_are_404(srv, path):
    r = srv.get(path)
    assert r.status == 404, (path, r)
    assert r.json()["error"]["code"] == "ENOTFOUND"


def test_console_methods(srv):
    r = srv.post("/", b"x")
    assert r.status == 405 and r.h("allow") == "GET"
    assert srv.request("HEAD", "/console/console.css").status == 200


def test_console_off_on(tmp_path):
    off = start(str(tmp_path), "off", console=False)
    try:
        for p in ("/", "/console/console.js", "/console/index.html"):
            assert off.get(p).status == 404, p
        s = off.get("/v1/stats")
        assert s.status == 200 and s.json()["console"] is False
    finally:
        stop_daemon(off)
    # A non-loopback listener: off unless asked for.
    public = start(str(tmp_path), "public", listen="0.0.0.0")
    try:
        assert public.get("/").status == 404
        assert public.get("/v1/stats").json()["console"] is False
    finally:
        stop_daemon(public)
    asked = start(str(tmp_path), "asked", listen="0.0.0.0", console=True)
    try:
        r = asked.get("/")
        assert r.status == 200 and b"dvppd console" in r.body
    finally:
        stop_daemon(asked)


def test_console_bad_config_value(tmp_path):
    cfg = daemon_util.write_config(str(tmp_path), "bad", {"http": {"console": "yes"}})
    r = subprocess.run([daemon_util.DVPPD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "http.console" in r.stderr + r.stdout


def metrics_rejections(text):
    out = {}
    for m in re.finditer(r'^dvppd_rejections_total\{reason="([^"]+)"\} (\d+)$', text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def test_stats_counts_the_work(srv):
    s0 = srv.get("/v1/stats").json()
    info = srv.get("/v1/info").json()
    assert [(e["name"], e["channels"]) for e in s0["engines"]] == \
        [(e["name"], e["channels"]) for e in info["engines"]]
    assert s0["version"] == info["version"] and s0["simd"] == info["simd"]
    assert s0["config"]["generation"] == 1
    n = 7
    for i in range(n):
        r = srv.post("/v1/preprocess?w=32&h=24", small_jpeg(i + 1))
        assert r.status == 200, r
    bad = srv.post("/v1/preprocess?w=32&h=24", b"\xff\xd8\xff not a jpeg at all")
    assert bad.status >= 400
    s1 = srv.get("/v1/stats").json()
    assert s1["throughput"]["requests"] - s0["throughput"]["requests"] == n + 1
    assert s1["throughput"]["images"] - s0["throughput"]["images"] == n
    assert s1["throughput"]["pixels"] - s0["throughput"]["pixels"] == n * 32 * 24
    jd0 = next(e for e in s0["engines"] if e["name"] == "vpc")
    jd1 = next(e for e in s1["engines"] if e["name"] == "vpc")
    assert jd1["done"] - jd0["done"] == n
    e = s1["errors"][0]
    err = bad.json()["error"]
    assert (e["route"], e["status"], e["code"], e["message"]) == \
        ("preprocess", bad.status, err["code"], err["message"])
    assert s1["throughput"]["errors"] == s0["throughput"]["errors"] + 1
    pre = s1["latency"]["routes"]["preprocess"]
    assert pre["count"] - s0["latency"]["routes"].get("preprocess", {"count": 0})["count"] == n + 1
    assert len(pre["buckets"]) == len(s1["latency"]["bounds_s"]) + 1
    assert sum(pre["buckets"]) == pre["count"]
    assert 0 < pre["p50_s"] <= pre["p99_s"]
    assert s1["rejections"] == metrics_rejections(srv.get("/metrics").body.decode())
    assert s1["socket"]["enabled"] is True and s1["socket"]["path"] == srv.sock


def test_stats_errors_ring_is_bounded(srv):
    for i in range(40):
        assert srv.get(f"/nope/{i}").status == 404
    errs = srv.get("/v1/stats").json()["errors"]
    assert len(errs) == 32
    assert [e["seq"] for e in errs] == sorted((e["seq"] for e in errs), reverse=True)
    assert errs[0]["route"] == "other" and errs[0]["status"] == 404


def test_stats_sees_socket_rings(srv):
    dvpp = daemon_util.pyclient()
    with dvpp.Client(srv.sock, timeout=30) as c:
        c.open_ring(slots=3, slot_bytes=1 << 16)
        c.open_ring(slots=2, slot_bytes=1 << 16)

        def sock_stats():
            return srv.get("/v1/stats").json()["socket"]
        daemon_util.wait_for(lambda: sock_stats()["connections"] == 1, "the connection counted",
                             timeout=5)
        daemon_util.wait_for(lambda: (sock_stats()["rings"], sock_stats()["slots"]) == (2, 5),
                             "the rings counted", timeout=5)
        assert sock_stats()["slots_leased"] == 0
    daemon_util.wait_for(lambda: srv.get("/v1/stats").json()["socket"]["connections"] == 0,
                         "the connection gone", timeout=5)


# --------------------------------------------------------------------------
# the page, in Chromium


def browser():
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("chromium / chromium-driver not installed (make deps installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--window-size=1400,1900", "--disable-gpu",
              "--disable-dev-shm-usage", "--force-device-scale-factor=1"):
        opts.add_argument(a)
    if os.geteuid() == 0:
        opts.add_argument("--no-sandbox")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def wait_js(drv, expr, what, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        v = drv.execute_script("return " + expr)
        if v:
            return v
        if time.monotonic() > deadline:
            logs = drv.get_log("browser")
            pytest.fail(f"timed out waiting for {what} ({expr}); browser log: {logs}")
        time.sleep(0.1)


CANVAS_INKED = """
const c = document.getElementById(arguments[0]);
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
return n;
"""


def numpy_stats(t, layout):
    a = t.astype(np.float64)
    if layout == "NCHW":
        per = a.transpose(1, 0, 2, 3).reshape(a.shape[1], -1)
    elif layout == "NHWC":
        per = a.reshape(-1, a.shape[-1]).T
    else:
        raise AssertionError(layout)
    return [(c.min(), c.max(), c.mean(), c.std()) for c in per]


def dom_tensor(drv):
    shape = drv.find_element("id", "tensor-shape").text
    rows = drv.execute_script(
        "return [...document.querySelectorAll('#tensor-stats tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))")
    return shape, [[float(x) for x in r[1:]] for r in rows]


def assert_stats_equal(dom, ref):
    assert len(dom) == len(ref)
    for c, (d, r) in enumerate(zip(dom, ref)):
        for name, x, y in zip(("min", "max", "mean", "std"), d, r):
            assert abs(x - y) <= 1e-4 * abs(y) + 1e-12, (c, name, x, y)


def run_try_it(drv, preset=None, spec=None):
    from selenium.webdriver.support.ui import Select
    drv.execute_script("window.dvppConsole.tensor = null")
    sel = Select(drv.find_element("id", "preset"))
    if preset:
        sel.select_by_value(preset)
    else:
        sel.select_by_value("")
        ta = drv.find_element("id", "spec")
        drv.execute_script("arguments[0].value = arguments[1]", ta, json.dumps(spec, indent=1))
    drv.find_element("id", "run").click()
    wait_js(drv, "window.dvppConsole.tensor && (window.dvppConsole.tensor.done || "
                 "window.dvppConsole.tensor.error)", "the Try-it run", timeout=60)
    err = drv.execute_script("return window.dvppConsole.tensor.error")
    assert not err, err


def run_printed(cmd, cwd):
    """A command as the page prints it, through the shell (dvppctl from the build)."""
    env = dict(os.environ, PATH=os.path.dirname(daemon_util.DVPPCTL) + ":" + os.environ["PATH"])
    r = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, timeout=120, env=env)
    assert r.returncode == 0, (cmd, r.stderr)


def test_console_in_chromium(srv, tmp_path):
    drv = browser()
    stop = threading.Event()
    posted = [0]
    try:
        drv.get(f"http://127.0.0.1:{srv.port}/")
        wait_js(drv, "window.dvppConsole && window.dvppConsole.polls >= 2", "two polls")
        for cid in ("chart-throughput", "chart-latency", "chart-queue", "chart-busy"):
            assert drv.execute_script(CANVAS_INKED, cid) > 100, cid
        assert drv.find_element("id", "b-version").text == srv.get("/v1/info").json()["version"]
        assert "jpeg-decode" in drv.find_element("id", "b-codecs").text

        # Load from another thread: the throughput chart's series must move.
        with open(photo_path(), "rb") as f:
            load_blob = f.read()

        def load():
            blob = load_blob
            c = srv.conn(timeout=30)
            while not stop.is_set():
                c.request("POST", "/v1/preprocess?w=224&h=224", body=blob)
                r = c.getresponse()
                r.read()
                assert r.status == 200
                posted[0] += 1
        threads = [threading.Thread(target=load, daemon=True) for _ in range(3)]
        for t in threads:
            t.start()
        wait_js(drv, "(() => { const s = window.dvppConsole.series.reqps;"
                     " return s.length && s[s.length - 1] > 5; })()", "req/s above 5")
        before = int(drv.find_element("id", "now-throughput").get_attribute("data-requests"))
        time.sleep(2.2)
        after = int(drv.find_element("id", "now-throughput").get_attribute("data-requests"))
        assert after > before, (before, after)
        # Sampled once a second: the photo's jobs keep a channel busy most of the time.
        wait_js(drv, "window.dvppConsole.series.busy.vpc.some(v => v >= 1)",
                "a busy VPC channel in the chart's series", timeout=15)
        os.makedirs(SHOTS, exist_ok=True)
        drv.save_screenshot(os.path.join(SHOTS, "overview.png"))
        stop.set()
        for t in threads:
            t.join(30)
        assert posted[0] > 10
        # The requests the page counted include every one the load made.
        wait_js(drv, f"window.dvppConsole.stats.throughput.requests >= {before + 1}", "counts")

        # Try it: a real photo, first through a preset.
        photo = os.path.join(str(tmp_path), "photo.jpg")
        shutil.copyfile(photo_path(), photo)
        with open(photo, "rb") as f:
            blob = f.read()
        drv.find_element("id", "file").send_keys(photo)
        presets = [p["name"] for p in srv.get("/v1/presets").json()["presets"]
                   if p.get("kind", "tensor") == "tensor"]
        assert "imagenet" in presets
        run_try_it(drv, preset="imagenet")
        api = srv.post("/v1/preprocess?preset=imagenet", blob)
        assert api.status == 200, api
        t = npy_load(api.body)
        shape, dom = dom_tensor(drv)
        assert shape == api.h("x-dvpp-shape") == ",".join(map(str, t.shape))
        assert drv.find_element("id", "tensor-dtype").text == "float32" == api.h("x-dvpp-dtype")
        assert_stats_equal(dom, numpy_stats(t, api.h("x-dvpp-layout")))
        # The decoded picture is the photo's size (EXIF orientation applied),
        # the preview the tensor's.
        from PIL import Image, ImageOps
        w, h = ImageOps.exif_transpose(Image.open(photo)).size
        size = drv.execute_script("const c = document.getElementById('img-decoded');"
                                  "return [c.width, c.height]")
        assert size == [w, h]
        size = drv.execute_script("const c = document.getElementById('img-preview');"
                                  "return [c.width, c.height]")
        assert size == [t.shape[3], t.shape[2]]
        legend = drv.find_element("id", "timing-legend").text
        assert "decode" in legend and "vpc" in legend
        # The curl command, run as printed, answers the same bytes.
        curl = drv.find_element("id", "cmd-curl").text
        assert "preset=imagenet" in curl
        run_printed(curl, str(tmp_path))
        with open(os.path.join(str(tmp_path), "out.npy"), "rb") as f:
            assert f.read() == api.body
        # The dvppctl command names the preset and, run as printed (through
        # the daemon's socket), answers the same bytes.
        ctl = drv.find_element("id", "cmd-dvppctl").text
        assert ctl.startswith("dvppctl preprocess") and "--preset 'imagenet'" in ctl, ctl
        os.remove(os.path.join(str(tmp_path), "out.npy"))
        run_printed(ctl, str(tmp_path))
        with open(os.path.join(str(tmp_path), "out.npy"), "rb") as f:
            assert f.read() == api.body

        # An edited spec: NHWC float16, letterboxed.
        spec = {"ops": [{"resize": {"w": 320, "h": 320, "mode": "letterbox",
                                    "pad": [114, 114, 114]}}],
                "normalize": {"mean": [0.5, 0.4, 0.3], "std": [0.25, 0.2, 0.3],
                              "layout": "nhwc", "dtype": "float16"}}
        run_try_it(drv, spec=spec)
        api = srv.post("/v1/preprocess", blob, headers={"X-Dvpp-Spec": json.dumps(spec)})
        assert api.status == 200, api
        t = npy_load(api.body)
        assert t.dtype == np.float16 and t.shape == (1, 320, 320, 3)
        shape, dom = dom_tensor(drv)
        assert shape == "1,320,320,3"
        assert_stats_equal(dom, numpy_stats(t, "NHWC"))
        sx, sy = map(float, api.h("x-dvpp-scale").split(","))
        px, py = map(float, api.h("x-dvpp-pad").split(","))
        geo = drv.find_element("id", "preview-geometry").text
        m = re.match(r"content ([\d.]+) x ([\d.]+) at \(([\d.]+), ([\d.]+)\)", geo)
        assert m, geo
        cw, ch, cx, cy = map(float, m.groups())
        assert abs(cw - w * sx) < 0.06 and abs(ch - h * sy) < 0.06, (geo, w * sx, h * sy)
        assert abs(cx - px) < 0.06 and abs(cy - py) < 0.06, geo
        # the outline is drawn: the preview's pixel on the content's top edge is the outline's red
        red = drv.execute_script(
            "const c = document.getElementById('img-preview');"
            "return [...c.getContext('2d').getImageData(arguments[0], arguments[1], 1, 1).data]",
            int(cx) + 13 * int(cw / 26) + 3, int(cy))
        assert red[0] > 200 and red[1] < 100, red
        curl = drv.find_element("id", "cmd-curl").text
        run_printed(curl, str(tmp_path))
        with open(os.path.join(str(tmp_path), "out.npy"), "rb") as f:
            assert f.read() == api.body
        ctl = drv.find_element("id", "cmd-dvppctl").text
        assert ctl.startswith("dvppctl preprocess") and "--socket" in ctl, ctl
        os.remove(os.path.join(str(tmp_path), "out.npy"))
        run_printed(ctl, str(tmp_path))
        with open(os.path.join(str(tmp_path), "out.npy"), "rb") as f:
            assert np.array_equal(npy_load(f.read()), t)
        drv.execute_script("document.getElementById('tryit').scrollIntoView()")
        time.sleep(0.3)
        drv.save_screenshot(os.path.join(SHOTS, "tryit.png"))
        # A test run never changes tracked files: the docs' copies are
        # refreshed only on request (DVPP_UPDATE_DOCS_IMG=1, docs/console.md).
        if os.environ.get("DVPP_UPDATE_DOCS_IMG") == "1":
            os.makedirs(DOCS_IMG, exist_ok=True)
            shutil.copyfile(os.path.join(SHOTS, "overview.png"),
                            os.path.join(DOCS_IMG, "console-overview.png"))
            shutil.copyfile(os.path.join(SHOTS, "tryit.png"),
                            os.path.join(DOCS_IMG, "console-tryit.png"))
        severe = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe
    finally:
        stop.set()
        drv.quit()
