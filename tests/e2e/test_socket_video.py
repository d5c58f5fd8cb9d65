"""Video channels over dvppd's Unix socket (proto/PROTOCOL.md "Video
channels"), end to end through the real daemon, the Python client
(Client.encode_video / decode_video) and the C client (libdvppclient's
dvppc_video_* through tests/e2e/video_client).

Encode: synthetic RGB frames (a moving gradient with noise) to H.264 and
H.265, decoded back with Debian's ffmpeg: the frame count is kept, the luma
PSNR against the input is >= 35 dB, and the key frames (ffprobe) are the
GOP's and the forced IDRs'. Decode: streams made by ffmpeg (B-frames, an
odd width, Annex-B and MP4) are decoded into a ring; every frame equals
`ffmpeg -f rawvideo -pix_fmt nv12` (or rgb24) in its meaningful bytes (the
slot has VDEC strides ALIGN(w,16) x ALIGN(h,2)); the sampling options pick
the frames they should; a per-frame tensor spec equals `dvppctl preprocess`
of the same frame; a truncated stream fails with ECORRUPT and the daemon
serves on; a full ring holds the decoder back without losing frames.

Run with Debian's /usr/bin/python3 (numpy, python3-protobuf) after `make`:

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_socket_video.py
"""
import json
import os
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (DVPPCTL, DVPPD, FFMPEG, FFPROBE, PYCLIENT, Data,  # noqa: E402
                         assert_refused, build_path, ctl, free_port, psnr, pyclient, run,
                         sock_dir, stats_wait, stop_daemon)
import daemon_util  # noqa: E402

VIDEO_CLIENT = build_path("tests", "e2e", "video_client")

pytestmark = pytest.mark.skipif(
    not (os.path.exists(DVPPD) and os.path.exists(DVPPCTL) and FFMPEG and FFPROBE and
         os.path.exists(os.path.join(PYCLIENT, "dvpp", "dvpp_pb2.py"))),
    reason="needs `make` (dvppd, dvppctl, dvpp_pb2.py) and ffmpeg/ffprobe")

dvpp = pyclient()

LEASE_MS = 2000
MEANS = [0.485, 0.456, 0.406]
STDS = [0.229, 0.224, 0.225]
SPEC224 = {"ops": [{"resize": {"w": 224, "h": 224}}],
           "normalize": {"mean": MEANS, "std": STDS}}
CTL224 = ["--size", "224x224", "--mean", "0.485,0.456,0.406",
          "--std", "0.229,0.224,0.225"]

# the encode case of the brief
EW, EH, EN, GOP, IDRS = 320, 240, 30, 10, (5, 17)
# the decode streams: an odd-sized width (VDEC pads rows to 336 bytes)
DW, DH, DN, DFPS = 330, 246, 40, 30


# --------------------------------------------------------------------------
# The daemon


def start_daemon(tmp, name="v"):
    port = free_port()
    sdir = sock_dir("dvppv-")
    sock = os.path.join(sdir, f"{name}.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600", "lease_timeout_ms": LEASE_MS},
           "device": {"channels": 2}}
    return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, sock_dir=sdir)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = start_daemon(str(tmp_path_factory.mktemp("vsrv")))
    yield d
    stop_daemon(d)


# --------------------------------------------------------------------------
# Data and references


def moving_frames(w, h, n, seed, noise=6, dx=2, dy=1):
    """A textured gradient (colour ramps, a sine pattern, fixed noise)
    panning by (@dx, @dy) pixels a frame: motion an encoder predicts, noise
    it cannot drop."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h + dy * n + 1, 0:w + dx * n + 1]
    big = np.stack([xx * 255 // (w + 2 * n), yy * 255 // (h + 2 * n),
                    128 + 100 * np.sin(xx / 23.0 + yy / 31.0)], -1)
    big = np.clip(big + rng.integers(-noise, noise + 1, big.shape), 0, 255).astype(np.uint8)
    return [np.ascontiguousarray(big[dy * i:dy * i + h, dx * i:dx * i + w]) for i in range(n)]


def ffmpeg(*args):
    return run(FFMPEG, "-v", "error", "-nostdin", *args).stdout


def probe_frames(path, *opts):
    """ffprobe's frames (presentation order) and format."""
    r = subprocess.run([FFPROBE, "-v", "error", *map(str, opts), "-select_streams", "v",
                        "-show_frames",
                        "-show_entries", "frame=key_frame,pict_type:stream=codec_name,"
                        "r_frame_rate,width,height:format=format_name", "-of", "json",
                        str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def probe_keys(path):
    return [i for i, f in enumerate(probe_frames(path)["frames"]) if f["key_frame"]]


def expected_keys(n, gop, idrs):
    """Key frames of the daemon's VENC: the first, every forced IDR, and
    @gop frames after the previous key frame (a forced IDR starts a new
    GOP, as libx264/libx265 do)."""
    keys, last = [], None
    for i in range(n):
        if last is None or i in idrs or i - last >= gop:
            keys.append(i)
            last = i
    return keys


def luma_of(raw_path, fmt, w, h):
    """The Y plane of raw frames, through ffmpeg's own conversion."""
    return np.frombuffer(ffmpeg("-f", "rawvideo", "-pix_fmt", fmt, "-s", f"{w}x{h}",
                                "-i", raw_path, "-f", "rawvideo", "-pix_fmt", "gray", "-"),
                         np.uint8)


def luma_psnr(raw_path, fmt, stream_path, w, h, *opts):
    ref = luma_of(raw_path, fmt, w, h)
    got = np.frombuffer(ffmpeg(*opts, "-i", stream_path, "-f", "rawvideo", "-pix_fmt", "gray",
                               "-"), np.uint8)
    assert got.size == ref.size, f"{got.size // (w * h)} frames decoded, {ref.size // (w * h)} in"
    return psnr(ref, got, identical=float("inf"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vdata")
    d = Data(tmp)
    # encode inputs
    d.frames = moving_frames(EW, EH, EN, seed=7)
    d.rgb_path = str(tmp / "enc.rgb")
    with open(d.rgb_path, "wb") as f:
        for fr in d.frames:
            f.write(fr.tobytes())
    d.nv12_path = str(tmp / "enc.nv12")
    with open(d.nv12_path, "wb") as f:
        f.write(ffmpeg("-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{EW}x{EH}",
                       "-i", d.rgb_path, "-f", "rawvideo", "-pix_fmt", "nv12", "-"))
    # decode inputs: ffmpeg's libx264 with B-frames (frames leave the decoder
    # reordered), an Annex-B stream larger than one max_inline packet, and
    # the same stream in MP4 (real timestamps)
    src = str(tmp / "dec.rgb")
    with open(src, "wb") as f:
        for fr in moving_frames(DW, DH, DN, seed=3):
            f.write(fr.tobytes())
    d.mp4 = str(tmp / "dec.mp4")
    ffmpeg("-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{DW}x{DH}", "-r", DFPS, "-i", src,
           "-c:v", "libx264", "-g", 12, "-bf", 2, "-crf", 12, "-pix_fmt", "yuv420p", d.mp4)
    d.h264 = str(tmp / "dec.h264")
    ffmpeg("-i", d.mp4, "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", d.h264)
    d.stream = open(d.h264, "rb").read()
    assert len(d.stream) > 65536, "the stream must need several inline packets"
    d.keys = probe_keys(d.h264)
    assert len(d.keys) >= 3 and d.keys[0] == 0
    d.ref_nv12 = ffmpeg("-i", d.h264, "-f", "rawvideo", "-pix_fmt", "nv12", "-")
    d.ref_rgb = ffmpeg("-i", d.h264, "-f", "rawvideo", "-pix_fmt", "rgb24", "-")
    assert len(d.ref_nv12) == DN * DW * DH * 3 // 2
    assert ffmpeg("-i", d.mp4, "-f", "rawvideo", "-pix_fmt", "rgb24", "-") == d.ref_rgb
    return d


def ref_nv12(d, i):
    """Frame @i of ffmpeg's decode as (Y, UV) planes of the picture."""
    fs = DW * DH * 3 // 2
    a = np.frombuffer(d.ref_nv12, np.uint8, fs, i * fs)
    return a[:DW * DH].reshape(DH, DW), a[DW * DH:].reshape(DH // 2, DW)


def ref_rgb(d, i):
    fs = DW * DH * 3
    return np.frombuffer(d.ref_rgb, np.uint8, fs, i * fs).reshape(DH, DW, 3)


def nv12_planes(buf, ws, hs):
    """(Y, UV) of a VDEC-strided NV12 slot, cropped to the picture."""
    a = np.frombuffer(buf, np.uint8)
    y = a[:ws * hs].reshape(hs, ws)[:DH, :DW]
    uv = a[ws * hs:ws * hs + ws * hs // 2].reshape(hs // 2, ws)[:DH // 2, :DW]
    return y, uv


def run_client(*args, check=True):
    if not os.access(VIDEO_CLIENT, os.X_OK):
        pytest.skip(f"{VIDEO_CLIENT} not built")
    r = subprocess.run([VIDEO_CLIENT, *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    if check:
        assert r.returncode == 0, f"video_client {args}: {r.returncode}\n{r.stderr}"
    return r, [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]


def decode_all(c, ring, data, **kw):
    """Every frame of a decode as (index, time_s, key, pixels copy)."""
    out = []
    for f in c.decode_video(data, ring, **kw):
        with f:
            out.append((f.index, f.time_s, f.key, f.tobytes()))
    return out


# --------------------------------------------------------------------------
# Encode


def encode(srv, data, api, codec, tmp_path, **kw):
    """(stream path, packets, keyframes) of the brief's encode."""
    out = str(tmp_path / f"out.{codec}")
    if api == "python":
        with srv.client() as c:
            b = c.encode_video(data.frames, codec=codec, width=EW, height=EH, gop=GOP,
                               idr=IDRS, input_format="rgb", **kw)
        assert isinstance(b, dvpp.EncodedVideo)
        with open(out, "wb") as f:
            f.write(b)
        return out, b.packets, b.keyframes
    extra = ["--stream"] if api == "c-stream" else []
    _, lines = run_client(srv.sock, "encode", data.rgb_path, out, "-c", codec, "-s",
                          f"{EW}x{EH}", "-f", "rgb", "-g", GOP, "-i",
                          ",".join(map(str, IDRS)), *extra)
    return out, lines[-1]["packets"], lines[-1]["keyframes"]


@pytest.mark.parametrize("api", ["python", "c", "c-stream"])
@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_encode_gop_idr_and_quality(srv, data, tmp_path, codec, api):
    path, packets, keyframes = encode(srv, data, api, codec, tmp_path)
    info = probe_frames(path)
    assert info["streams"][0]["codec_name"] == {"h264": "h264", "h265": "hevc"}[codec]
    assert (info["streams"][0]["width"], info["streams"][0]["height"]) == (EW, EH)
    assert len(info["frames"]) == EN
    want = expected_keys(EN, GOP, IDRS)
    assert want == [0, 5, 15, 17, 27]
    keys = [i for i, f in enumerate(info["frames"]) if f["key_frame"]]
    assert keys == want
    assert all(info["frames"][i]["pict_type"] == "I" for i in keys)
    assert (packets, keyframes) == (EN, len(want))
    q = luma_psnr(data.rgb_path, "rgb24", path, EW, EH)
    assert q >= 35.0, f"{codec} luma PSNR {q:.2f} dB"


def test_encode_nv12_input_to_mp4(srv, data, tmp_path):
    with open(data.nv12_path, "rb") as f:
        raw = f.read()
    fs = EW * EH * 3 // 2
    frames = [np.frombuffer(raw, np.uint8, fs, i * fs).reshape(EH * 3 // 2, EW)
              for i in range(EN)]
    with srv.client() as c:
        b = c.encode_video(iter(frames), codec="h264", fps=25, gop=15, mp4=True,
                           input_format="nv12", crf=20, profile="high")
    path = str(tmp_path / "out.mp4")
    with open(path, "wb") as f:
        f.write(b)
    info = probe_frames(path, "-ignore_editlist", 1)   # see test_mp4_edit_list_...
    assert "mp4" in info["format"]["format_name"]
    assert info["streams"][0]["r_frame_rate"] == "25/1"
    assert len(info["frames"]) == EN
    assert [i for i, f in enumerate(info["frames"]) if f["key_frame"]] == [0, 15]
    assert (b.packets, b.keyframes) == (EN, 2)
    assert luma_psnr(data.nv12_path, "nv12", path, EW, EH, "-ignore_editlist", 1) >= 35.0


def test_mp4_edit_list_covers_every_frame(srv, data, tmp_path):
    with srv.client() as c:
        b = c.encode_video(data.frames, codec="h264", fps=25, mp4=True)
    path = tmp_path / "e.mp4"
    path.write_bytes(b)
    assert len(probe_frames(path)["frames"]) == EN


def test_encode_refusals_and_the_connection_stays(srv, data):
    with srv.client() as c:
        with pytest.raises(dvpp.DvppError) as ei:
            c.encode_video(data.frames[:2], width=EW + 1, height=EH)
        assert ei.value.code == "EINVAL" and ei.value.field == "width"
        with pytest.raises(dvpp.DvppError) as ei:
            c.encode_video(data.frames[:2], codec="vp9")
        assert ei.value.code == "EINVAL" and ei.value.field == "codec"
        with pytest.raises(ValueError):   # a frame of the wrong size, found here
            c.encode_video([data.frames[0], data.frames[1][:100]])
        b = c.encode_video(data.frames[:3], gop=2)
        assert (b.packets, b.keyframes) == (3, 2)
        assert not c._answers and not c._alias
        stats_wait(c, lambda s: s["connections"] == 1, "one connection")


# --------------------------------------------------------------------------
# Decode


@pytest.mark.parametrize("memfd", [False, True])
def test_decode_nv12_equals_ffmpeg(srv, data, memfd):
    with srv.client() as c:
        ring = c.open_ring(4, 1 << 20)
        n = 0
        for f in c.decode_video(data.stream, ring, memfd=memfd):
            with f:
                assert f.index == n
                m = f.meta
                assert (m.format, m.width, m.height) == ("nv12", DW, DH)
                assert (m.width_stride, m.height_stride) == (336, 246)
                assert f.nbytes == 336 * 246 * 3 // 2 and m.dtype == "uint8"
                assert f.key == (n in data.keys)
                y, uv = f.planes()
                ry, ruv = ref_nv12(data, n)
                assert np.array_equal(y, ry), f"frame {n}: Y differs"
                assert np.array_equal(uv, ruv), f"frame {n}: UV differs"
                n += 1
        assert n == DN
        stats_wait(c, lambda s: s["slots_leased"] == 0, "slots back")


def test_decode_nv12_c_client_equals_ffmpeg(srv, data, tmp_path):
    out = tmp_path / "c.nv12"
    _, lines = run_client(srv.sock, "decode", data.h264, out)
    frames, summary = lines[:-1], lines[-1]
    assert summary == {"frames": DN, "status": 0, "code": "OK"}
    raw = out.read_bytes()
    off = 0
    for n, fr in enumerate(frames):
        assert fr["index"] == n and fr["key"] == (n in data.keys)
        assert (fr["format"], fr["width"], fr["height"]) == ("nv12", DW, DH)
        ws, hs = fr["width_stride"], fr["height_stride"]
        assert (ws, hs, fr["bytes"]) == (336, 246, 336 * 246 * 3 // 2)
        y, uv = nv12_planes(raw[off:off + fr["bytes"]], ws, hs)
        off += fr["bytes"]
        ry, ruv = ref_nv12(data, n)
        assert np.array_equal(y, ry) and np.array_equal(uv, ruv), f"frame {n}"
    assert off == len(raw)


@pytest.mark.parametrize("container", ["h264", "mp4"])
def test_decode_rgb_equals_ffmpeg(srv, data, container):
    blob = open(data.h264 if container == "h264" else data.mp4, "rb").read()
    with srv.client() as c:
        ring = c.open_ring(3, 1 << 20)
        n = pts0 = 0
        for f in c.decode_video(blob, ring, format="rgb"):
            pts0 = f.pts if n == 0 else pts0
            with f:
                assert f.index == n and f.meta.format == "rgb"
                assert f.meta.width_stride == 336 * 3
                assert np.array_equal(f.planes()[0], ref_rgb(data, n)), f"frame {n}"
                if container == "mp4":   # real timestamps
                    assert f.time_s == pytest.approx(n / DFPS, abs=1e-6)
                    assert f.pts == n * 512 + pts0   # 15360 Hz, after the B-frame delay
                n += 1
        assert n == DN


SAMPLINGS = [
    {"every": 3},
    {"keyframes": True},
    {"max_frames": 5},
    {"every": 4, "max_frames": 3},
    {"keyframes": True, "every": 2},
    {"fps": 7},
    {"fps": 10},
    {"start": 0.25, "end": 0.61},
    {"start": 0.2, "end": 0.5},
    {"start": 0.5, "every": 2, "max_frames": 4},
]


def expected_indices(full, every=1, keyframes=False, max_frames=0, fps=0, start=0, end=0):
    """The sampling rules (codecs/dvpp_video.h) over a full decode's
    (index, time_s, key): every Nth decoded frame, key frames, times in
    [start, end], at most @fps a second (a frame at least 1/fps after the
    last kept one, less 1 ns of rounding), at most @max_frames."""
    out, prev = [], None
    for i, t, key, _ in full:
        if (every > 1 and i % every) or (keyframes and not key) or t < start or \
                (end and t > end) or \
                (fps and prev is not None and t - prev < 1.0 / fps - 1e-9):
            continue
        out.append(i)
        prev = t
        if max_frames and len(out) == max_frames:
            break
    return out


@pytest.fixture(scope="module")
def full_decode(srv, data):
    with srv.client() as c:
        ring = c.open_ring(4, 1 << 20)
        return decode_all(c, ring, data.stream)


@pytest.mark.parametrize("opts", SAMPLINGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_sampling_picks_the_frames(srv, data, full_decode, opts):
    want = expected_indices(full_decode, **opts)
    assert want, "a sampling that keeps nothing tests nothing"
    if opts.get("keyframes"):
        assert set(want) <= set(data.keys)
    with srv.client() as c:
        ring = c.open_ring(4, 1 << 20)
        got = decode_all(c, ring, data.stream, **opts)
    assert [g[0] for g in got] == want
    full = {f[0]: f for f in full_decode}
    for i, t, key, px in got:   # the same frames, not just the same numbers
        assert (t, key, px) == full[i][1:]


@pytest.mark.parametrize("flags,opts", [(["-e", "3"], {"every": 3}),
                                        (["-k"], {"keyframes": True}),
                                        (["-e", "2", "-m", "6"], {"every": 2, "max_frames": 6})])
def test_sampling_c_client(srv, data, full_decode, tmp_path, flags, opts):
    _, lines = run_client(srv.sock, "decode", data.h264, tmp_path / "s.nv12", *flags)
    assert [x["index"] for x in lines[:-1]] == expected_indices(full_decode, **opts)


def test_frame_times_and_time_range(srv, data, full_decode):
    """Annex-B carries no timestamps: frame n is at n / fps (and pts is
    INT64_MIN, "none"); an MP4's come from the container. [start, end] is
    inclusive at both ends."""
    assert [round(t * DFPS, 6) for _, t, _, _ in full_decode] == list(range(DN))
    with srv.client() as c:
        ring = c.open_ring(4, 1 << 20)
        f = next(iter(c.decode_video(data.stream, ring, max_frames=1)))
        assert f.pts == -(1 << 63)
        f.release()
        got = decode_all(c, ring, open(data.mp4, "rb").read(), start=0.1, end=0.2)
    assert [g[0] for g in got] == [3, 4, 5, 6]


def test_per_frame_spec_equals_dvppctl_preprocess(srv, data, tmp_path):
    frame_yuv = tmp_path / "frame.yuv"
    with srv.client() as c:
        ring = c.open_ring(4, 3 * 224 * 224 * 4)
        n = 0
        for f in c.decode_video(data.stream, ring, spec=SPEC224, every=13):
            with f:
                assert f.index == 13 * n
                assert (f.meta.dtype, f.meta.layout) == ("float32", "NCHW")
                assert list(f.meta.shape) == [1, 3, 224, 224]
                got = f.array().copy()
            y, uv = ref_nv12(data, f.index)   # the frame as tight NV12
            frame_yuv.write_bytes(y.tobytes() + uv.tobytes())
            out = tmp_path / f"ref{n}.npy"
            ctl("preprocess", frame_yuv, "--input", f"nv12:{DW}x{DH}", *CTL224, "-o", out,
                timeout=60)
            ref = np.load(out)
            assert ref.shape == got.shape and ref.dtype == got.dtype
            assert np.array_equal(ref, got), f"frame {f.index}: max diff {np.abs(ref - got).max()}"
            n += 1
        assert n == 4   # frames 0, 13, 26, 39


def test_truncated_stream_is_ecorrupt_and_the_daemon_serves_on(srv, data, tmp_path):
    cut = data.stream[:len(data.stream) * 3 // 5]
    with srv.client() as c:
        ring = c.open_ring(4, 1 << 20)
        got = []
        with pytest.raises(dvpp.DvppError) as ei:
            for f in c.decode_video(cut, ring):
                with f:
                    y, uv = f.planes()
                    ry, ruv = ref_nv12(data, f.index)
                    assert np.array_equal(y, ry) and np.array_equal(uv, ruv)
                    got.append(f.index)
        assert ei.value.code == "ECORRUPT"
        assert got == list(range(len(got))) and 0 < len(got) < DN
        # the connection and the daemon go on
        assert len(decode_all(c, ring, data.stream)) == DN
        stats_wait(c, lambda s: s["slots_leased"] == 0, "slots back")
    bad = tmp_path / "cut.h264"
    bad.write_bytes(cut)
    r, lines = run_client(srv.sock, "decode", bad, tmp_path / "cut.nv12", check=False)
    assert r.returncode == 1 and lines[-1]["code"] == "ECORRUPT", r.stdout[-500:] + r.stderr
    assert lines[-1]["frames"] == len(got)
    assert srv.alive()


def test_full_ring_holds_the_decoder_back(srv, data):
    with srv.client() as c:
        ring = c.open_ring(2, 1 << 20)
        expired = c.stats()["leases_expired"]
        it = c.decode_video(data.stream, ring)
        a, b = next(it), next(it)          # both slots held by this consumer
        with pytest.raises(TimeoutError):  # the decoder waits (lease: 2 s)
            it.next_frame(timeout=0.6)
        assert c.stats()["slots_leased"] == 2
        ya = a.planes()[0].copy()
        a.release()
        b.release()
        idx = [a.index, b.index]
        for f in it:                       # and goes on: nothing dropped
            with f:
                idx.append(f.index)
                if f.index == 2:
                    time.sleep(0.3)        # a slow consumer now and then
        assert idx == list(range(DN))
        assert np.array_equal(ya, ref_nv12(data, 0)[0])
        s = stats_wait(c, lambda s: s["slots_leased"] == 0, "slots back")
        assert s["leases_expired"] == expired   # every slot came back by release


def test_leaving_early_gives_the_slots_back(srv, data):
    with srv.client() as c:
        ring = c.open_ring(3, 1 << 20)
        with c.decode_video(data.stream, ring) as it:
            for f in it:
                f.release()
                if f.index == 4:
                    break
        assert not c._answers and not c._alias
        stats_wait(c, lambda s: s["slots_leased"] == 0, "slots back")
        assert len(decode_all(c, ring, data.stream, every=10)) == 4


def test_threads_share_one_connection(srv, data):
    """Decodes with different sampling, an encode and plain jobs at once on
    one Client: every thread gets exactly its own answers."""
    full = None
    errors, results = [], {}
    with srv.client() as c:
        ring = c.open_ring(8, 1 << 20)
        full = decode_all(c, ring, data.stream)

        def dec(name, **kw):
            try:
                results[name] = [g[0] for g in decode_all(c, ring, data.stream, **kw)]
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def enc():
            try:
                results["enc"] = c.encode_video(data.frames[:8], gop=4).keyframes
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        ts = [threading.Thread(target=dec, args=("all",)),
              threading.Thread(target=dec, args=("e3",), kwargs={"every": 3}),
              threading.Thread(target=dec, args=("k",), kwargs={"keyframes": True}),
              threading.Thread(target=enc)]
        for t in ts:
            t.start()
        for _ in range(5):
            c.stats()
        for t in ts:
            t.join(120)
        assert not errors, errors
    assert results["all"] == list(range(DN))
    assert results["e3"] == expected_indices(full, every=3)
    assert results["k"] == data.keys
    assert results["enc"] == 2


def test_c_threads_share_one_connection(srv, data, tmp_path):
    out = tmp_path / "t.nv12"
    _, lines = run_client(srv.sock, "decode", data.h264, out, "--threads", 4, "--keep",
                          "--slots", 6)
    assert lines[-1] == {"frames": 4 * DN, "status": 0, "code": "OK"}
    one = (tmp_path / "t.nv12.0").read_bytes()
    for t in range(1, 4):
        assert (tmp_path / f"t.nv12.{t}").read_bytes() == one
    y, uv = nv12_planes(one[-336 * 246 * 3 // 2:], 336, 246)
    assert np.array_equal(y, ref_nv12(data, DN - 1)[0])


def test_decode_refusals(srv, data):
    with srv.client() as c:
        ring = c.open_ring(2, 1 << 20)
        cases = [({"ring": 99}, "ENOTFOUND", "ring"),
                 ({"format": "yuv444sp"}, "EINVAL", "format"),
                 ({"fps": -1}, "EINVAL", "fps"),
                 ({"spec": {"ops": [{"resize": {"w": 0, "h": 0}}]}}, "EINVAL", None)]
        for kw, code, field in cases:
            r = kw.pop("ring", ring)
            with pytest.raises(dvpp.DvppError) as ei:
                c.decode_video(data.stream, r, **kw)
            assert ei.value.code == code, (kw, ei.value)
            if field:
                assert ei.value.field == field
        with pytest.raises(dvpp.DvppError) as ei:   # not a video at all
            list(c.decode_video(b"\x00\x01garbage" * 50, ring))
        assert_refused(ei, "ECORRUPT")
        assert len(decode_all(c, ring, data.stream, max_frames=2)) == 2
        assert not c._answers and not c._alias and not c._pending


# --------------------------------------------------------------------------
# Daemon bugs found while writing these tests (see the reasons)


def test_h264_gop_is_fixed_whatever_the_content(srv):
    frames = moving_frames(EW, EH, EN, seed=7, noise=4, dx=2, dy=2)
    with srv.client() as c:
        b = c.encode_video(frames, codec="h264", gop=GOP)
    assert (b.packets, b.keyframes) == (EN, 3)


def test_unpadded_page_sized_frames_do_not_crash_the_daemon(tmp_path):
    d = start_daemon(str(tmp_path), name="crash")
    try:
        w, h = 640, 480                  # 921600 bytes: 225 pages exactly
        rng = np.random.default_rng(1)
        with d.client() as c:
            env = c._envelope()
            vo = env.video_open
            vo.encode, vo.codec, vo.width, vo.height, vo.input_format = True, "h264", w, h, "rgb"
            ch = dvpp._Channel(c, env, 30, "VideoOpened")
            for i in range(20):
                fd = dvpp.sealed_memfd(rng.integers(0, 255, (h, w, 3), np.uint8))  # no pad
                try:
                    ch.packet([fd], data_fd=True, data_len=w * h * 3, eos=i == 19)
                finally:
                    os.close(fd)
            while True:
                _, ans = ch.next(30, "Ack")
                if ans.WhichOneof("body") != "video_data":
                    break
            assert ans.WhichOneof("body") == "ack"
        assert d.alive(), d.log()
    except BaseException:
        stop_daemon(d, check=False)
        raise
    # exit status 0: no crash while stopping, no LeakSanitizer report
    stop_daemon(d)


def jobs_finished(stats):
    """Device jobs finished, well or not, on every engine (a channel's encode
    job runs on a VPC worker)."""
    return sum(e["done"] + e["failed"] for e in stats["engines"])


def test_video_close_under_a_running_job_does_not_crash_the_daemon(tmp_path):
    d = start_daemon(str(tmp_path), name="close")
    try:
        frame = moving_frames(EW, EH, 1, seed=1)[0]
        done = 0
        for _ in range(8):
            with d.client() as c:
                env = c._envelope()
                vo = env.video_open
                vo.encode, vo.codec, vo.input_format = True, "h265", "rgb"
                vo.width, vo.height = EW, EH
                ch = dvpp._Channel(c, env, 30, "VideoOpened")
                fd = dvpp.sealed_memfd(frame)
                try:
                    ch.packet([fd], data_fd=True, data_len=frame.nbytes)
                finally:
                    os.close(fd)
                ch.close()                  # at once: the frame is still being encoded
                # the encode job runs to its end with its channel gone
                stats_wait(c, lambda s: jobs_finished(s) > done, "the encode job done",
                           10 * daemon_util.SLOW)
                done = jobs_finished(c.stats())
                assert c.stats()["connections"] >= 1
        assert d.alive(), d.log()
    except BaseException:
        stop_daemon(d, check=False)
        raise
    # exit status 0: no crash while stopping, no LeakSanitizer report
    stop_daemon(d)


def _testsrc_h264(w, h, frames, path):
    run(FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=10",
        "-frames:v", frames, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
        "-f", "h264", str(path))
    return path.read_bytes()


@pytest.mark.parametrize("channels", [1, 2])
def test_a_frame_the_spec_refuses_is_named_either_way(tmp_path, channels):
    """A 320x240 stream that goes on at 160x120 from frame 4, with a crop
    the small frames cannot hold: frames 0-3 arrive, then the job fails
    naming frame 4. With one channel the frame runs inline; with two the
    spread runs each frame's pipeline on a helper while the next is decoded.
    Both say "frame 4: " (the inline socket path said no frame before)."""
    data = _testsrc_h264(320, 240, 4, tmp_path / "a.h264") + \
        _testsrc_h264(160, 120, 3, tmp_path / "b.h264")
    port = free_port()
    sdir = sock_dir("dvppv-")
    sock = os.path.join(sdir, "f.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": {"path": sock, "mode": "0600"},
           "device": {"channels": channels}}
    d = daemon_util.start_daemon(str(tmp_path), cfg, "f", port, sock=sock, sock_dir=sdir)
    spec = {"ops": [{"crop": [0, 0, 319, 239]}, {"resize": {"w": 32, "h": 32}}],
            "normalize": {"mean": MEANS, "std": STDS}}
    got = []
    try:
        with d.client() as c:
            ring = c.open_ring(2, 1 << 20)
            with pytest.raises(dvpp.DvppError) as ei:
                for f in c.decode_video(data, ring, spec=spec):
                    with f:
                        got.append(f.index)
            assert got == [0, 1, 2, 3]
            assert "frame 4: " in str(ei.value), ei.value
            assert len(decode_all(c, ring, data, max_frames=2)) == 2  # the connection serves on
    finally:
        stop_daemon(d)
