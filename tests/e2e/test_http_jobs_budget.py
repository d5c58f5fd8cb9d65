"""A /v1/jobs job keeps its request body (its inputs) after the request has
ended, until the job is deleted or expires: that memory is held against the
device's byte budget (`dvppd_held_bytes`) like the job's result, so a
client cannot park http.max_jobs bodies outside every budget. Before the
fix only the result was counted (the held bytes were the small tensor's)
and a second job was admitted past the budget.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_http_jobs_budget.py
"""
import io
import numpy as np
from PIL import Image
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import SLOW, WAIT_S, free_port, stop_daemon, wait_for  # noqa: E402

MB = 1 << 20
SMALL_Q = "w=8&h=8&dtype=uint8&scale=1"


def noise_png(w, h, seed):
    """A PNG that does not compress: about 3 * w * h bytes."""
    a = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(a).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def metric(d, name):
    for line in d.get("/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no metric {name}")


def start(tmp, budget):
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}", "request_timeout_s": 30 * SLOW},
           "socket": {"path": ""},
           "device": {"channels": 2, "max_bytes_in_flight": budget}}
    return daemon_util.start_daemon(tmp, cfg, "jobs", port, timeout=60 * SLOW)


def wait_job(d, loc):
    def done():
        j = d.get(loc).json()
        return j if j["state"] != "running" else None
    return wait_for(done, f"job {loc} finished", WAIT_S)


def post_job(d, png, name="a"):
    body, hdrs = daemon_util.multipart([(name, png, name + ".png")])
    return d.post("/v1/jobs?" + SMALL_Q, body, hdrs), len(body)


def test_a_job_body_is_held_until_the_job_is_deleted(tmp_path):
    png = noise_png(1600, 1600, 1)
    assert len(png) > 7 * MB
    # Room for one job's body and its run (the decoded 1600x1600 image, as
    # big again) and a bit more; not for a second body beside the first
    # plus that run.
    d = start(str(tmp_path), 2 * len(png) + 2 * MB)
    try:
        r, body_len = post_job(d, png)
        assert r.status == 202, r
        loc = r.h("location")
        assert wait_job(d, loc)["state"] == "done"
        held = metric(d, "dvppd_held_bytes")
        assert held >= body_len, (held, body_len)
        res = d.get(loc + "/result")
        assert res.status == 200 and res.npy().shape == (1, 3, 8, 8)
        # A second job does not fit beside the first one's body.
        r2, _ = post_job(d, png, "b")
        assert r2.status == 503, r2
        e = r2.json()["error"]
        assert (e["code"], e.get("field")) == ("EAGAIN", "bytes"), e
        assert d.request("DELETE", loc).status == 200
        wait_for(lambda: metric(d, "dvppd_held_bytes") == 0, "the job's body freed", WAIT_S)
        r3, _ = post_job(d, png, "c")
        assert r3.status == 202, r3
        assert wait_job(d, r3.h("location"))["state"] == "done"
    finally:
        stop_daemon(d)
