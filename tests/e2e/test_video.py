"""dvppctl video-info / video-decode / video-encode against the ffmpeg CLI.

Decoded frames must equal `ffmpeg -pix_fmt nv12|rgb24` byte for byte (the
real clips of tests/tools/fetch-test-data, a synthetic H.265 and an
Annex-B .h264 made with ffmpeg), sampling must pick the frames ffmpeg's
select filter picks, encoded streams must decode in ffmpeg with the frame
count, quality, key frames and bitrate asked for, damaged or oversized
inputs must fail cleanly (exit 1 with the status name, never a signal),
and --size runs each frame through the same pipeline as dvppctl
preprocess. Clips are cut short (--max-frames, -frames:v) to keep the file
fast.
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import (DVPPCTL, ROOT, ctl, ff_key_frames, h264_rbsp,  # noqa: E402
                         nv12_unpad, psnr)

DATA = os.path.join(ROOT, ".cache", "testdata")
VIDEO = os.path.join(DATA, "video")
HELLO = os.path.join(VIDEO, "movie-hello.mp4")          # H.264 High 1280x720
PHONE = os.path.join(VIDEO, "VID_20191220_170832.mp4")  # H.264 High 1920x1080, BT.709
SMALL = (sorted(glob.glob(os.path.join(DATA, "afl", "**", "small_movie.mp4"),
                          recursive=True)) or [""])[0]  # 48x144, B-frames
NORM = ["--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]


def has_video():
    return os.path.exists(DVPPCTL) and "video-decode" in ctl("help", check=False,
                                                             timeout=None).stdout


pytestmark = [
    pytest.mark.skipif(not has_video(), reason="dvppctl without video commands"),
    pytest.mark.skipif(not shutil.which("ffmpeg") or not shutil.which("ffprobe"),
                       reason="ffmpeg/ffprobe missing"),
]


def need(path):
    if not path or not os.path.exists(path):
        pytest.skip(f"{path or 'small_movie.mp4'} missing (tests/tools/fetch-test-data)")
    return path


# --- helpers ------------------------------------------------------------------


def dvppctl(*args):
    return ctl(*args, check=False, timeout=None)


def decode(tmp_path, src, *args):
    """video-decode -> (array, side JSON)."""
    out = str(tmp_path / "frames.npy")
    r = dvppctl("video-decode", src, *args, "-o", out)
    assert r.returncode == 0, r.stderr
    meta = json.loads(r.stdout)
    arr = np.load(out)
    assert meta["frames"] == len(arr) == len(meta["index"]) == len(meta["pts"])
    return arr, meta


def ffmpeg_frames(src, pix_fmt, shape, vf=None, frames=None):
    """Decoded frames of the ffmpeg CLI, no frame dropped or duplicated."""
    cmd = ["ffmpeg", "-v", "error", "-i", src, "-map", "0:v:0", "-fps_mode", "passthrough"]
    if vf:
        cmd += ["-vf", vf]
    if frames:
        cmd += ["-frames:v", str(frames)]
    cmd += ["-f", "rawvideo", "-pix_fmt", pix_fmt, "-"]
    raw = subprocess.run(cmd, capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, *shape)


def size_of(src):
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=width,height", "-of", "csv=p=0", src],
                       capture_output=True, text=True, check=True)
    w, h = r.stdout.strip().split(",")[:2]
    return int(w), int(h)


def ffmpeg_make(dst, *args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args, dst], check=True,
                   capture_output=True)
    return dst


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Videos made with ffmpeg: a synthetic H.265 (MP4, odd sizes for stride
    padding; and Annex-B), the 720p clip as Annex-B H.264, an MPEG-4 Part 2
    clip (a codec dvppd does not decode)."""
    d = tmp_path_factory.mktemp("made")
    src = ["-f", "lavfi", "-i", "testsrc2=size=328x246:rate=25", "-frames:v", "20"]
    x265 = ["-c:v", "libx265", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p"]
    out = {
        "h265_mp4": ffmpeg_make(str(d / "syn265.mp4"), *src, *x265),
        "h265_annexb": ffmpeg_make(str(d / "syn265.h265"), *src, *x265, "-f", "hevc"),
        "mpeg4": ffmpeg_make(str(d / "mpeg4.mp4"), *src, "-c:v", "mpeg4"),
    }
    if os.path.exists(HELLO):
        out["h264_annexb"] = ffmpeg_make(str(d / "hello.h264"), "-i", HELLO, "-frames:v", "45",
                                         "-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-an",
                                         "-f", "h264")
    return out


def clip(made, name):
    """A source by name: the fetched clips or the made ones."""
    if name == "hello":
        return need(HELLO)
    if name == "phone":
        return need(PHONE)
    if name == "small":
        return need(SMALL)
    if name not in made:  # only h264_annexb, which is cut from movie-hello.mp4
        pytest.skip(f"{name} not made: {HELLO} missing (tests/tools/fetch-test-data)")
    return made[name]


# Clips and how many frames of each to compare (0: all).
CLIPS = [("hello", 40), ("phone", 0), ("small", 0), ("h265_mp4", 0), ("h265_annexb", 0),
         ("h264_annexb", 0)]


# --- video-info ---------------------------------------------------------------


def test_info_matches_ffprobe(made):
    for name, codec in (("hello", "h264"), ("h265_mp4", "h265"), ("h264_annexb", "h264")):
        src = clip(made, name)
        r = dvppctl("video-info", src)
        assert r.returncode == 0, r.stderr
        info = json.loads(r.stdout)
        assert (info["width"], info["height"]) == size_of(src)
        assert info["codec"] == codec and info["bit_depth"] == 8
        for k in ("container", "profile", "fps", "frames", "duration_s"):
            assert k in info
    info = json.loads(dvppctl("video-info", clip(made, "hello")).stdout)
    assert info["frames"] == 250 and info["profile"] == "High"
    assert "mp4" in info["container"] and abs(info["duration_s"] - 8.3) < 0.05


# --- frames equal ffmpeg's --------------------------------------------------------


@pytest.mark.parametrize("name,frames", CLIPS)
def test_nv12_equals_ffmpeg(tmp_path, made, name, frames):
    src = clip(made, name)
    w, h = size_of(src)
    limit = ["--max-frames", frames] if frames else []
    tight, _ = decode(tmp_path, src, "--align", "1x1", *limit)
    want = ffmpeg_frames(src, "nv12", (h * 3 // 2, w), frames=frames or None)
    assert tight.shape == want.shape
    for i in range(len(want)):
        assert np.array_equal(tight[i], want[i]), f"frame {i}"
    # VDEC strides (16 x 2): the same pixels once the padding is cut off.
    padded, _ = decode(tmp_path, src, "--max-frames", 3)
    assert padded.shape[2] == -(-w // 16) * 16
    assert np.array_equal(nv12_unpad(padded, w, h), want[:3])


@pytest.mark.parametrize("name,frames", CLIPS)
def test_rgb_equals_ffmpeg(tmp_path, made, name, frames):
    """rgb24 as the CLI converts: the frame's own matrix (BT.709 for the phone
    clip) and range."""
    src = clip(made, name)
    w, h = size_of(src)
    frames = frames or 12
    got, _ = decode(tmp_path, src, "--format", "rgb", "--max-frames", frames)
    want = ffmpeg_frames(src, "rgb24", (h, w, 3), frames=frames)
    assert got.shape == want.shape
    for i in range(len(want)):
        assert np.array_equal(got[i], want[i]), \
            f"frame {i}: max diff {np.abs(got[i].astype(int) - want[i]).max()}"


def test_bgr_equals_ffmpeg(tmp_path, made):
    src = clip(made, "h265_mp4")
    w, h = size_of(src)
    got, _ = decode(tmp_path, src, "--format", "bgr", "--align", "64x2")
    assert np.array_equal(got, ffmpeg_frames(src, "bgr24", (h, w, 3)))


# --- sampling = ffmpeg -vf select ----------------------------------------------


# --fps keeps a frame when t - t_last >= 1/F - 1e-9 (dvpp_video's keep_frame:
# the epsilon absorbs the rounding of pts x time_base, so --fps 5 of a 30 fps
# clip keeps every 6th frame; plain select drifts to 0, 0.2, 0.4, 0.633..).
FPS = r"isnan(prev_selected_t)+gte(t-prev_selected_t\,1/{}-1e-9)"
SELECT = [
    (["--every", "3"], r"not(mod(n\,3))"),
    (["--keyframes"], r"eq(key\,1)"),
    (["--fps", "7"], FPS.format(7)),
    (["--fps", "5"], FPS.format(5)),
    (["--start", "0.5", "--end", "1.2"], r"between(t\,0.5\,1.2)"),
    (["--start", "1"], r"gte(t\,1)"),
]


# The phone clip (1080p, irregular timestamps) only where time matters.
SAMPLING = [(name, a, s) for name in ("small", "h265_mp4") for a, s in SELECT] + \
    [("phone", a, s) for a, s in SELECT if a[0] in ("--fps", "--start")]


@pytest.mark.parametrize("name,args,select", SAMPLING,
                         ids=[f"{n}:{' '.join(a)}" for n, a, _ in SAMPLING])
def test_sampling_matches_select(tmp_path, made, name, args, select):
    src = clip(made, name)
    w, h = size_of(src)
    got, meta = decode(tmp_path, src, "--align", "1x1", *args)
    want = ffmpeg_frames(src, "nv12", (h * 3 // 2, w), vf="select=" + select)
    assert len(got) == len(want)
    for i in range(len(want)):
        assert np.array_equal(got[i], want[i]), f"kept frame {i} (index {meta['index'][i]})"
    assert meta["index"] == sorted(set(meta["index"]))
    assert all(b > a for a, b in zip(meta["time_s"], meta["time_s"][1:]))
    if "--keyframes" in args:
        assert all(meta["key"]) and meta["index"][0] == 0
    if "--every" in args:
        assert all(i % 3 == 0 for i in meta["index"])


def test_fps_of_a_30fps_clip(tmp_path, made):
    """--fps 5 of the 30 fps 720p clip: every 6th frame, as select keeps them."""
    src = clip(made, "hello")
    got, meta = decode(tmp_path, src, "--align", "1x1", "--fps", "5", "--end", "3")
    assert meta["index"] == list(range(0, 91, 6))  # t = 3.0 is in
    want = ffmpeg_frames(src, "nv12", (1080, 1280),
                         vf="select=between(t\\,0\\,3)*(" + FPS.format(5) + ")")
    assert len(want) == len(got) and np.array_equal(got, want)


def test_max_frames_and_side_json(tmp_path, made):
    src = clip(made, "hello")
    got, meta = decode(tmp_path, src, "--every", "5", "--max-frames", "4")
    assert meta["frames"] == 4 and meta["index"] == [0, 5, 10, 15]
    assert meta["key"][0] is True
    assert meta["time_s"][0] == 0.0 and abs(meta["time_s"][1] - 5 / 30) < 2e-3


def test_empty_selection(tmp_path, made):
    src = clip(made, "small")
    got, meta = decode(tmp_path, src, "--start", "100")
    assert meta == {"frames": 0, "index": [], "pts": [], "time_s": [], "key": []}
    assert got.shape == (0, 216, 48)
    got, _ = decode(tmp_path, src, "--start", "100", "--size", "32x32", *NORM)
    assert got.shape == (0, 3, 32, 32) and got.dtype == np.float32


# --- --size: the preprocess pipeline per frame -------------------------------------


@pytest.mark.parametrize("flags", [
    ["--size", "224x224", *NORM],
    ["--size", "96x64", "--mean", "0.5", "--scale", "0.0039", "--order", "bgr",
     "--layout", "nhwc", "--interp", "bicubic"],
], ids=["torchvision", "blob-bgr-nhwc"])
def test_size_equals_preprocess_per_frame(tmp_path, made, flags):
    src = clip(made, "hello")
    w, h = size_of(src)
    tensor, meta = decode(tmp_path, src, *flags, "--max-frames", 3)
    frames, _ = decode(tmp_path, src, "--align", "1x1", "--max-frames", 3)
    assert meta["index"] == [0, 1, 2] and len(tensor) == 3
    for i in range(3):
        raw = tmp_path / f"f{i}.yuv"
        frames[i].tofile(raw)
        one = str(tmp_path / f"p{i}.npy")
        r = dvppctl("preprocess", raw, "--input", f"nv12:{w}x{h}", *flags, "-o", one)
        assert r.returncode == 0, r.stderr
        want = np.load(one)
        assert want.shape[1:] == tensor.shape[1:] and want.dtype == tensor.dtype
        assert np.array_equal(want[0].view(np.uint8), tensor[i].view(np.uint8)), f"frame {i}"


# --- encoding -------------------------------------------------------------------


W, H, T = 320, 240, 30


def synthetic(t=T, noise=4, seed=7):
    """Moving gradients plus noise, RGB T x H x W x 3."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:H, 0:W]
    out = np.empty((t, H, W, 3), np.uint8)
    for i in range(t):
        f = np.stack([(x + 4 * i) % 256, (y * 255 // H + 2 * i) % 256,
                      ((x + y) // 3 + 6 * i) % 256], -1).astype(np.int16)
        f += rng.integers(-noise, noise + 1, f.shape, dtype=np.int16)
        out[i] = np.clip(f, 0, 255)
    return out


def luma(rgb):
    """BT.601 limited-range Y of RGB frames (what the encoder's swscale makes)."""
    f = rgb.astype(np.float64)
    return 16 + (65.481 * f[..., 0] + 128.553 * f[..., 1] + 24.966 * f[..., 2]) / 255


def to_nv12(rgb):
    """T x (H * 3 / 2) x W NV12 frames of @rgb (through ffmpeg)."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                          "-s", f"{W}x{H}", "-i", "-", "-f", "rawvideo", "-pix_fmt", "nv12",
                          "-"], input=rgb.tobytes(), capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, H * 3 // 2, W)


def encode(tmp_path, frames, name, *args):
    src = str(tmp_path / "in.npy")
    np.save(src, frames)
    out = str(tmp_path / name)
    r = dvppctl("video-encode", src, *args, "-o", out)
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)


@pytest.fixture(scope="module")
def rgb_frames():
    return synthetic()


@pytest.mark.parametrize("codec", ["h264", "h265"])
@pytest.mark.parametrize("container", ["mp4", "annexb"])
def test_encode_rgb_psnr(tmp_path, rgb_frames, codec, container):
    name = "out.mp4" if container == "mp4" else f"out.{codec}"
    out, res = encode(tmp_path, rgb_frames, name, "--codec", codec)
    assert res["frames"] == res["packets"] == T and res["keyframes"] >= 1
    assert res["bytes"] == os.path.getsize(out)
    dec = ffmpeg_frames(out, "nv12", (H * 3 // 2, W))
    assert len(dec) == T
    p = psnr(dec[:, :H], luma(rgb_frames))
    assert p >= 35, f"Y PSNR {p:.2f} dB"


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_encode_nv12_frames(tmp_path, rgb_frames, codec):
    """T x rows x stride NV12 in (--size), the same Y plane out."""
    nv12 = to_nv12(rgb_frames)
    out, res = encode(tmp_path, nv12, f"out.{codec}", "--codec", codec, "--size", f"{W}x{H}")
    dec = ffmpeg_frames(out, "nv12", (H * 3 // 2, W))
    assert len(dec) == T
    assert psnr(dec[:, :H], nv12[:, :H]) >= 35


def test_decode_encode_round_trip(tmp_path, made):
    """video-decode's frames (VDEC strides) go straight back into video-encode."""
    src = clip(made, "h265_mp4")
    w, h = size_of(src)
    frames, _ = decode(tmp_path, src)
    w2, h2 = w & ~1, h & ~1  # rows of 336 bytes, 369 rows: --input says what they hold
    out, res = encode(tmp_path, frames, "rt.mp4", "--codec", "h264",
                      "--input", f"nv12:{w2}x{h2}")
    assert res["frames"] == len(frames)
    dec = ffmpeg_frames(out, "nv12", (h2 * 3 // 2, w2))
    assert len(dec) == len(frames)
    assert psnr(dec[:, :h2], frames[:, :h2, :w2]) >= 35


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_gop_sets_key_frames(tmp_path, rgb_frames, codec):
    out, res = encode(tmp_path, rgb_frames, f"gop.{codec}", "--codec", codec, "--gop", "10")
    assert ff_key_frames(out) == [0, 10, 20]
    assert res["keyframes"] == 3


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_idr_forces_key_frames(tmp_path, rgb_frames, codec):
    out, _ = encode(tmp_path, rgb_frames, f"idr.{codec}", "--codec", codec, "--idr", "7,19")
    assert ff_key_frames(out) == [0, 7, 19]


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_mp4_plays_in_ffprobe(tmp_path, rgb_frames, codec):
    out, _ = encode(tmp_path, rgb_frames, "out.mp4", "--codec", codec, "--fps", "30")
    r = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                        "-show_entries", "stream=codec_name,nb_read_frames,nb_frames,width,"
                        "height,r_frame_rate", "-of", "json", out],
                       capture_output=True, text=True, check=True)
    st = json.loads(r.stdout)["streams"][0]
    assert st["codec_name"] == {"h264": "h264", "h265": "hevc"}[codec]
    assert int(st["nb_read_frames"]) == int(st["nb_frames"]) == T
    assert (st["width"], st["height"], st["r_frame_rate"]) == (W, H, "30/1")


def test_mp4_duration_and_rate(tmp_path, rgb_frames):
    """30 frames at 30 fps last 1 s: the last frame has its duration too."""
    out, _ = encode(tmp_path, rgb_frames, "out.mp4", "--codec", "h264")
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=avg_frame_rate,duration", "-of", "json", out],
                       capture_output=True, text=True, check=True)
    st = json.loads(r.stdout)["streams"][0]
    assert st["avg_frame_rate"] == "30/1"
    assert abs(float(st["duration"]) - 1.0) < 1e-3
    info = json.loads(dvppctl("video-info", out).stdout)
    assert abs(info["fps"] - 30) < 1e-6 and abs(info["duration_s"] - 1.0) < 1e-3


@pytest.mark.parametrize("codec", ["h264", "h265"])
@pytest.mark.parametrize("rc", ["cbr", "vbr"])
def test_bitrate_roughly_respected(tmp_path, codec, rc):
    frames = synthetic(t=60, noise=2, seed=3)
    kbps = 600
    out, res = encode(tmp_path, frames, f"br.{codec}", "--codec", codec, "--rc", rc,
                      "--bitrate", kbps, "--fps", "30")
    got = res["bytes"] * 8 / (60 / 30) / 1000
    assert 0.7 * kbps <= got <= 1.3 * kbps, f"{got:.0f} kbit/s for {kbps}"


def test_crf_and_profile(tmp_path, rgb_frames):
    low, a = encode(tmp_path, rgb_frames, "q40.h264", "--codec", "h264", "--crf", "40")
    high, b = encode(tmp_path, rgb_frames, "q18.h264", "--codec", "h264", "--crf", "18")
    assert a["bytes"] < b["bytes"]
    base, _ = encode(tmp_path, rgb_frames, "base.h264", "--codec", "h264",
                     "--profile", "baseline")
    r = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=profile", "-of",
                        "csv=p=0", base], capture_output=True, text=True, check=True)
    assert "Baseline" in r.stdout


# --- damaged, oversized and foreign inputs ---------------------------------------------


def fails_with(src, status, *args):
    r = dvppctl("video-decode", src, *args, "-o", os.devnull)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not a signal
    assert f"({status})" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("dvppctl: ")
    return r.stderr


def damaged_copies(tmp_path, src):
    data = open(src, "rb").read()
    cut = tmp_path / ("cut_" + os.path.basename(src))
    cut.write_bytes(data[:len(data) // 2])
    flip = bytearray(data)
    for i in range(len(data) // 4, len(data) * 3 // 4, 97):
        flip[i] ^= 0x55
    flipped = tmp_path / ("flip_" + os.path.basename(src))
    flipped.write_bytes(bytes(flip))
    return str(cut), str(flipped)


@pytest.mark.parametrize("codec,name", [("h264", "out.h264"), ("h265", "out.h265"),
                                        ("h264", "out.mp4"), ("h265", "out.mp4")])
def test_truncated_and_flipped_encoded(tmp_path, rgb_frames, codec, name):
    out, _ = encode(tmp_path, rgb_frames[:12], name, "--codec", codec)
    for bad in damaged_copies(tmp_path, out):
        fails_with(bad, "ECORRUPT")


def test_truncated_and_flipped_real(tmp_path, made):
    for src in (clip(made, "small"), clip(made, "h264_annexb")):
        for bad in damaged_copies(tmp_path, src):
            fails_with(bad, "ECORRUPT")


def h264_claiming(width, height):
    """Annex-B H.264 by hand: an SPS for width x height (Baseline, no VUI), a
    PPS and three IDR slices of junk."""
    def bits(fields):
        s = ""
        for kind, v in fields:
            if kind == "u":
                n, val = v
                s += format(val, f"0{n}b")
            else:  # ue(v)
                code = format(v + 1, "b")
                s += "0" * (len(code) - 1) + code
        return h264_rbsp(s)

    sps = bits([("u", (8, 66)), ("u", (8, 0xC0)), ("u", (8, 51)), ("ue", 0), ("ue", 0),
                ("ue", 2), ("ue", 1), ("u", (1, 0)), ("ue", width // 16 - 1),
                ("ue", height // 16 - 1), ("u", (1, 1)), ("u", (1, 1)), ("u", (1, 0)),
                ("u", (1, 0))])
    pps = bits([("ue", 0), ("ue", 0), ("u", (2, 0)), ("ue", 0), ("ue", 0), ("ue", 0),
                ("u", (3, 0)), ("ue", 0), ("ue", 0), ("ue", 0), ("u", (3, 0))])
    idr = bits([("ue", 0), ("ue", 7), ("ue", 0), ("u", (4, 0)), ("ue", 0), ("u", (2, 0)),
                ("ue", 0)] + [("u", (8, 0xA5))] * 200)
    start = b"\x00\x00\x00\x01"
    return start + b"\x67" + sps + start + b"\x68" + pps + (start + b"\x65" + idr) * 3


@pytest.mark.parametrize("w,h", [(16384, 16384), (16384, 8192)])
def test_huge_claim_is_elimit(tmp_path, w, h):
    src = tmp_path / f"claim_{w}x{h}.h264"
    src.write_bytes(h264_claiming(w, h))
    fails_with(str(src), "ELIMIT")
    r = dvppctl("video-info", src)
    assert r.returncode == 1 and "(ELIMIT)" in r.stderr


def test_ts_program_table_past_the_header_is_refused(tmp_path):
    """An MPEG-TS whose program table comes only after 6 MB of null packets:
    ffprobe finds the stream while probing, where FFmpeg would give its
    decoder neither our size check nor max_pixels; dvppd refuses it."""
    ts = tmp_path / "s.ts"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc=size=64x48:rate=10", "-frames", "10", "-c:v", "libx264", "-f",
                    "mpegts", str(ts)], check=True)
    null = b"\x47\x1f\xff\x10" + b"\xff" * 184
    late = tmp_path / "late.ts"
    late.write_bytes(null * (6 * 1024 * 1024 // 188) + ts.read_bytes())
    r = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of",
                        "csv=p=0", str(late)], capture_output=True, text=True, check=True)
    assert "h264" in r.stdout
    assert "no stream declared" in fails_with(str(late), "ECORRUPT")
    r = dvppctl("video-info", ts)
    assert r.returncode == 0, r.stderr


def test_other_codec_is_unsupported(made):
    fails_with(made["mpeg4"], "EUNSUPPORTED")
    r = dvppctl("video-info", made["mpeg4"])
    assert r.returncode == 1 and "(EUNSUPPORTED)" in r.stderr


def test_not_a_video(tmp_path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"plain text, not a video\n" * 40)
    fails_with(str(junk), "ECORRUPT")


def test_limits_from_the_command_line(made):
    src = clip(made, "hello")
    fails_with(src, "ELIMIT", "--max-pixels", 1280 * 720 - 1)
    fails_with(src, "ELIMIT", "--max-side", 1279)


# --- the command line -----------------------------------------------------------------


def test_usage_errors(tmp_path, made):
    src = clip(made, "small")
    out = str(tmp_path / "x.npy")
    cases = [
        # a flag a decode channel cannot carry: refused before connecting
        ["video-decode", src, "--socket", "/nowhere", "--threads", "4", "-o", out],
        ["video-decode", src, "--format", "gray", "-o", out],
        ["video-decode", src, "--every", "0", "-o", out],
        ["video-decode", src, "--fps", "-3", "-o", out],
        ["video-decode", src, "--end", "0", "-o", out],
        ["video-decode", src],
        ["video-encode", out, "-o", str(tmp_path / "y.mp4")],
        ["video-encode", out, "--codec", "vp9", "-o", str(tmp_path / "y.mp4")],
        ["video-encode", out, "--codec", "h264", "--rc", "crf", "--bitrate", "500",
         "-o", str(tmp_path / "y.mp4")],
        ["video-encode", out, "--codec", "h264", "--crf", "60", "-o", str(tmp_path / "y.mp4")],
        ["video-info"],
    ]
    for args in cases:
        r = dvppctl(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)


def test_encode_input_errors(tmp_path, rgb_frames):
    src = str(tmp_path / "nv12.npy")
    np.save(src, np.zeros((2, 360, 320), np.uint8))
    r = dvppctl("video-encode", src, "--codec", "h264", "-o", str(tmp_path / "o.h264"))
    assert r.returncode == 1 and "--size" in r.stderr
    np.save(src, rgb_frames[:3])
    r = dvppctl("video-encode", src, "--codec", "h264", "--idr", "3",
                "-o", str(tmp_path / "o.h264"))
    assert r.returncode == 1 and "(EINVAL)" in r.stderr
    np.save(src, rgb_frames[:3].astype(np.float32))
    r = dvppctl("video-encode", src, "--codec", "h264", "-o", str(tmp_path / "o.h264"))
    assert r.returncode == 1 and "uint8" in r.stderr


def frame_digest(arr):
    return [hashlib.sha1(f.tobytes()).hexdigest() for f in arr]


def test_threads_change_nothing(tmp_path, made):
    src = clip(made, "h264_annexb")
    one, _ = decode(tmp_path, src, "--max-frames", 10)
    four, _ = decode(tmp_path, src, "--max-frames", 10, "--threads", 4)
    assert frame_digest(one) == frame_digest(four)
