"""dvppctl's command line: every option that takes a value, or does not,
reports a wrong use by name and with what it wants; and one rule for
--std with --scale everywhere (dvppctl refuses the pair in the daemon's
words, offline and with --socket).

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_dvppctl_args.py
"""
import os
import subprocess

import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

# Each option that takes a value, a value it refuses (None: it takes any
# string) and a word of what it wants.
VALUE_OPTIONS = [
    ("--format", "purple", "pixel format"),
    ("--align", "16", "WxH"),
    ("--profile", "ascend999", "ascend310"),
    ("--scale", "9", "1..8"),
    ("--shrink-on-load", "big", "WxH or auto"),
    ("--roi", "4,4,1,1", "L,T,R,B"),
    ("--alpha", "half", "composite"),
    ("--background", "fff", "RRGGBB"),
    ("--quality", "101", "0..100"),
    ("--max-bytes", "-5", "byte count"),
    ("--max-pixels", "lots", "pixel count"),
    ("--max-side", "1e3", "side"),
    ("--max-scans", "x", "scan count"),
    ("--size", "0x0", "WxH"),
    ("--mode", "squash", "letterbox"),
    ("--interp", "cubic-ish", "lanczos"),
    ("--parity", "numpy", "ascend"),
    ("--ascend-mode", "5", "0..4"),
    ("--pad", "GG0000", "RRGGBB"),
    ("--csc", "bt2020", "bt709"),
    ("--range", "half", "narrow or full"),
    ("--margins", "1,2,3", "T,B,L,R"),
    ("--border-type", "wrap", "reflect101"),
    ("--value", "x", "v0"),
    ("--input", None, "FMT"),
    ("--decode-format", "purple", "pixel format"),
    ("--config", None, "config"),
    ("--dynamic", None, "parameter file"),
    ("--op", "x", "index"),
    ("--mean", "1,2", "R,G,B"),
    ("--std", "0", "none of them 0"),
    ("--order", "grb", "rgb or bgr"),
    ("--layout", "chwn", "nchw"),
    ("--dtype", "f64", "f32"),
    ("--channels", "999", "0..256"),
    ("--socket", None, "socket path"),
    ("--count", "0", "N >= 1"),
    ("-n", "0", "N >= 1"),
    ("--concurrency", "0", "1..256"),
    ("--every", "0", "N >= 1"),
    ("--fps", "0", "rate"),
    ("--start", "-1", "seconds"),
    ("--end", "0", "seconds > 0"),
    ("--max-frames", "0", "N >= 1"),
    ("--threads", "65", "1..64"),
    ("--codec", "vp9", "h264 or h265"),
    ("--bitrate", "5", "10..500000"),
    ("--gop", "0", "1..65536"),
    ("--rc", "abr", "crf, cbr or vbr"),
    ("--crf", "52", "0..51"),
    ("--idr", None, "frame indices"),
    ("--output", None, "file name"),
    ("-o", None, "file name"),
]

FLAGS = ["--no-orient", "--allow-partial", "--fast-dct", "--nosmooth", "--strict",
         "--keyframes", "--help"]

DAEMON_STD_SCALE = "give std (torchvision) or scale (blobFromImage), not both"


def ctl(*args):
    return subprocess.run([du.DVPPCTL, *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def spelled(opt):
    """How the error names an option: -o/--output, -n/--count, --size."""
    return {"-o": "-o/--output", "--output": "-o/--output", "-n": "-n/--count",
            "--count": "-n/--count"}.get(opt, opt)


@pytest.fixture(scope="module")
def png(tmp_path_factory):
    p = tmp_path_factory.mktemp("args") / "in.png"
    p.write_bytes(du.to_png(du.gradient(48, 32, 7)))
    return str(p)


def usage_error(r):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "bad option value" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_value_swallowed_from_the_next_option(png, tmp_path):
    """The issue's case: --shrink-on-load takes -o as its value."""
    msg = usage_error(ctl("batch", "--shrink-on-load", "-o", tmp_path / "x.npy", png))
    assert msg == "dvppctl batch: --shrink-on-load needs a value (WxH or auto) before -o", msg


@pytest.mark.parametrize("opt,bad,want", VALUE_OPTIONS, ids=[o[0] for o in VALUE_OPTIONS])
def test_every_value_option_says_what_it_wants(png, tmp_path, opt, bad, want):
    cmd = "video-decode" if opt in ("--every", "--start", "--end", "--max-frames") else \
        "video-encode" if opt in ("--codec", "--bitrate", "--gop", "--rc", "--crf") else \
        "resize"
    name = spelled(opt)
    # a refused value: the option, what it wants, what it got
    if bad is not None:
        msg = usage_error(ctl(cmd, png, opt, bad, "-o", tmp_path / "x.png"))
        assert msg.startswith(f"dvppctl {cmd}: {name} wants "), msg
        assert want in msg and msg.endswith(f"not '{bad}'"), msg
    # no value at all (the last word of the line)
    msg = usage_error(ctl(cmd, png, "-o" if opt not in ("-o", "--output") else "--size",
                          tmp_path / "x.png" if opt not in ("-o", "--output") else "8x8",
                          opt))
    assert msg.startswith(f"dvppctl {cmd}: {name} needs a value (") and want in msg, msg
    # the next option taken for its value
    nxt = "--size" if opt not in ("--size",) else "--mode"
    msg = usage_error(ctl(cmd, png, opt, nxt, "8x8"))
    assert msg.startswith(f"dvppctl {cmd}: {name} needs a value (") and \
        msg.endswith(f") before {nxt}"), msg
    # --opt=VALUE says it explicitly: a value that starts with '-' is taken
    if opt.startswith("--") and bad is not None:
        msg = usage_error(ctl(cmd, png, f"{opt}=-x", "-o", tmp_path / "x.png"))
        assert f"{name} wants " in msg and msg.endswith("not '-x'"), msg


@pytest.mark.parametrize("flag", FLAGS)
def test_flags_refuse_a_value(png, tmp_path, flag):
    msg = usage_error(ctl("resize", png, f"{flag}=1", "--size", "8x8", "-o",
                          tmp_path / "x.png"))
    name = "-h/--help" if flag == "--help" else flag
    assert msg == f"dvppctl resize: {name} takes no value (got '{flag}=1')", msg


def test_unknown_and_ambiguous_options(png, tmp_path):
    msg = usage_error(ctl("resize", png, "--bogus", "-o", tmp_path / "x.png"))
    assert msg == "dvppctl resize: unknown option '--bogus' (dvppctl help lists them)", msg
    msg = usage_error(ctl("resize", png, "-x", "-o", tmp_path / "x.png"))
    assert msg == "dvppctl resize: unknown option '-x' (dvppctl help lists them)", msg
    msg = usage_error(ctl("resize", png, "--max-s", "3", "-o", tmp_path / "x.png"))
    assert msg == "dvppctl resize: '--max-s' is ambiguous: --max-side, --max-scans", msg


def test_negative_numbers_are_values(png, tmp_path):
    """A value like -1 is a number, not the next option: the option's own
    check refuses it (or takes it)."""
    msg = usage_error(ctl("resize", png, "--start", "-1", "-o", tmp_path / "x.png"))
    assert msg.endswith("not '-1'"), msg
    out = tmp_path / "m.png"
    r = ctl("make-border", png, "--margins", "1,1,1,1", "--value", "-1", "-o", out)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------
# --std with --scale: refused everywhere, in the daemon's words


@pytest.fixture(scope="module")
def daemon():
    d = du.CtlDaemon("dvppargs-")
    try:
        d.wait_ready()
        yield d
    finally:
        d.stop()


def test_daemon_refuses_std_with_scale(daemon, png):
    dvpp = du.pyclient()
    with dvpp.Client(daemon.sock, timeout=30) as c, open(png, "rb") as f:
        with pytest.raises(dvpp.DvppError) as ei:
            c.submit({"ops": [{"resize": {"w": 8, "h": 8}}],
                      "normalize": {"mean": [0.5] * 3, "std": [0.2] * 3, "scale": 0.5}},
                     f.read())
    assert not isinstance(ei.value, dvpp.Disconnected)
    # the daemon names the key first ("scale: ..."), then the rule
    assert ei.value.field == "scale" and ei.value.message.endswith(DAEMON_STD_SCALE), \
        ei.value


@pytest.mark.parametrize("cmd", ["preprocess", "batch", "video-decode", "bench"])
@pytest.mark.parametrize("remote", [False, True], ids=["offline", "socket"])
def test_dvppctl_refuses_std_with_scale(daemon, png, tmp_path, cmd, remote):
    args = [cmd, png, "--size", "8x8", "--mean", "0.5", "--std", "0.2", "--scale", "0.5"]
    if cmd != "bench":
        args += ["-o", tmp_path / "x.npy"]
    if remote or cmd == "bench":
        args += ["--socket", daemon.sock]
    msg = usage_error(ctl(*args))
    assert msg == f"dvppctl {cmd}: --std and --scale: {DAEMON_STD_SCALE}", msg
    assert not (tmp_path / "x.npy").exists()


def test_std_or_scale_alone_still_work(daemon, png, tmp_path):
    for flag in (["--std", "0.2"], ["--scale", "0.5"]):
        for remote in ([], ["--socket", daemon.sock]):
            r = ctl("preprocess", png, "--size", "8x8", "--mean", "0.5", *flag, "-o",
                    tmp_path / "y.npy", *remote)
            assert r.returncode == 0, (flag, remote, r.stderr)
