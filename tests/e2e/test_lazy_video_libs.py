"""FFmpeg's libraries are loaded on first use (codecs/dvpp_avlib.c), not at
start: dvppd links none of them, a fresh daemon maps none of them (nor the
~140 libraries they bring: x265, librsvg, ICU, ...), and the first video
request loads them and is answered as before.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_lazy_video_libs.py
"""
import os
import subprocess

import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import DVPPD, FFMPEG, free_port, run, stop_daemon  # noqa: E402
import daemon_util  # noqa: E402

AV = ("libavcodec.so", "libavformat.so", "libavutil.so", "libswscale.so")

if not FFMPEG:
    pytest.skip("ffmpeg is needed (apt-get install ffmpeg)", allow_module_level=True)


def mapped_av(pid):
    with open(f"/proc/{pid}/maps") as f:
        return sorted({ln.split()[-1] for ln in f if any(a in ln for a in AV)})


def test_dvppd_links_no_ffmpeg_library():
    out = subprocess.run(["readelf", "-d", DVPPD], capture_output=True, text=True,
                         check=True).stdout
    needed = [ln for ln in out.splitlines() if "(NEEDED)" in ln]
    assert needed, out
    assert not [ln for ln in needed if any(a in ln for a in AV)], needed


def test_video_libraries_load_on_first_use(tmp_path):
    clip = str(tmp_path / "c.mp4")
    run(FFMPEG, "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10",
        "-frames:v", 5, "-pix_fmt", "yuv420p", "-c:v", "libx264", clip)
    port = free_port()
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": ""},
           "device": {"channels": 1}}
    d = daemon_util.start_daemon(str(tmp_path), cfg, "lazy", port)
    try:
        # images need no FFmpeg: a fresh daemon serving them maps none of it
        assert mapped_av(d.proc.pid) == []
        r = d.get("/v1/info")
        assert r.status == 200, r
        assert mapped_av(d.proc.pid) == []
        r = d.post("/v1/video/decode?w=32&h=32&dtype=uint8", open(clip, "rb").read())
        assert r.status == 200, r
        assert r.h("x-dvpp-frames") == "5"
        assert r.npy().shape == (5, 3, 32, 32)
        loaded = mapped_av(d.proc.pid)
        assert {os.path.basename(p).split(".so")[0] for p in loaded} == \
            {"libavcodec", "libavformat", "libavutil", "libswscale"}, loaded
    finally:
        stop_daemon(d)
