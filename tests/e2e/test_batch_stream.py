"""dvppctl batch over more inputs than one batch job takes (64 in-process;
with --socket also at most the daemon's http.max_batch_items): the list is
run chunk after chunk into one .npy written as each chunk completes, in
process and through a real dvppd.

The output of 150 inputs must be the per-slice runs of 64, 64 and 22
inputs concatenated byte for byte, and the --shard runs concatenated;
failed items are zero rows reported with their index in the whole list;
--strict fails the run with no output file (and no OUT.tmp) left behind.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_batch_stream.py
"""
import io
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DVPPCTL = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"), "dvppctl")
FLAGS = ["--size", "20x16", "--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]
N = 150
SHAPE = (N, 3, 16, 20)

pytestmark = pytest.mark.skipif(not os.path.exists(DVPPCTL), reason="dvppctl not built")


def make_dataset(d, n, corrupt=()):
    return du.batch_dataset(d, n, 17, corrupt)


def batch(out, *args, socket=None):
    return du.ctl_batch(out, *args, flags=FLAGS, socket=socket, timeout=300)


def load(out, r):
    assert r.returncode == 0, r.stderr
    return np.load(out)


class SmallBatchDaemon(du.CtlDaemon):
    """A CtlDaemon whose Welcome says max_batch_items @items."""

    def __init__(self, items):  # noqa: super().__init__ writes another config
        self.dir = tempfile.mkdtemp(prefix="dvpp-stream-")
        self.sock = os.path.join(self.dir, "d.sock")
        cfg = os.path.join(self.dir, "dvppd.json")
        with open(cfg, "w") as f:
            json.dump({"http": {"listen": "127.0.0.1:0", "max_batch_items": items},
                       "socket": {"path": self.sock, "mode": "0600"},
                       "device": {"channels": 2}}, f)
        self.log = open(os.path.join(self.dir, "dvppd.log"), "w+")
        self.proc = subprocess.Popen([du.DVPPD, "--config", cfg], stdout=self.log,
                                     stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def daemon():
    d = du.CtlDaemon("dvpp-stream-")
    d.wait_ready()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("stream") / "data", N)


@pytest.fixture(scope="module")
def whole(data, tmp_path_factory):
    """The in-process output of the 150 inputs (the reference the other
    tests compare with, itself checked against the slices)."""
    out = tmp_path_factory.mktemp("whole") / "all.npy"
    return load(out, batch(out, str(data)))


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_150_inputs_are_the_64_slices_concatenated(tmp_path, data, whole, via, request):
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    out = tmp_path / "all.npy"
    got = load(out, batch(out, str(data), socket=sock))
    assert got.shape == SHAPE and got.dtype == np.float32
    assert got.tobytes() == whole.tobytes()
    # the file is the header and the 150 rows, nothing more
    row = 3 * 16 * 20 * 4
    with open(out, "rb") as f:
        raw = f.read()
    assert raw[-N * row:] == whole.tobytes() and len(raw) - N * row in (128, 256)
    names = sorted(os.listdir(data))
    slices = []
    for i, lo in enumerate(range(0, N, 64)):
        ref = tmp_path / f"slice{i}.npy"
        slices.append(load(ref, batch(ref, *[str(data / f) for f in names[lo:lo + 64]],
                                      socket=sock)))
    assert [s.shape[0] for s in slices] == [64, 64, 22]
    assert np.concatenate(slices).tobytes() == got.tobytes()
    # rows differ from one another: a chunk written twice would show
    assert not np.array_equal(got[63], got[64]) and not np.array_equal(got[0], got[64])
    assert not (got == 0).all(axis=(1, 2, 3)).any()


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_shards_longer_than_64_concatenate_to_the_whole(tmp_path, data, whole, via,
                                                         request):
    """2 shards of 75 (each more than one chunk) and 3 of 50."""
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    for n in (2, 3):
        parts = []
        for i in range(n):
            out = tmp_path / f"s{i}-of-{n}.npy"
            parts.append(load(out, batch(out, str(data), "--shard", f"{i}/{n}",
                                         socket=sock)))
        assert [p.shape[0] for p in parts] == [len(b) for b in
                                               np.array_split(np.arange(N), n)]
        assert np.concatenate(parts).tobytes() == whole.tobytes(), n


def test_chunks_follow_the_daemons_batch_limit(tmp_path, data, whole):
    """A daemon that takes 10 items a batch (its client refuses more): the
    150 inputs go as 15 chunks and still make the same bytes."""
    d = SmallBatchDaemon(10)
    try:
        d.wait_ready()
        out = tmp_path / "all.npy"
        assert load(out, batch(out, str(data), socket=d.sock)).tobytes() == \
            whole.tobytes()
    finally:
        d.stop()


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_failed_items_in_later_chunks(tmp_path, whole, via, request):
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    bad = {3, 100, 149}
    data = make_dataset(tmp_path / "data", N, corrupt=bad)
    out = tmp_path / "all.npy"
    r = batch(out, str(data), socket=sock)
    got = load(out, r)
    assert re.findall(r"item (\d+) \(", r.stderr) == ["3", "100", "149"]
    assert "item 100 (%s)" % (data / "img0100.png") in r.stderr
    assert "3 of 150 items failed" in r.stderr and "ECORRUPT" in r.stderr
    zero = (got == 0).all(axis=(1, 2, 3))
    assert set(np.flatnonzero(zero)) == bad
    keep = [i for i in range(N) if i not in bad]
    assert got[keep].tobytes() == whole[keep].tobytes()


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_strict_leaves_no_partial_output(tmp_path, via, request):
    """A bad item in the second chunk, after the first chunk's rows were
    written: exit 1, OUT as it was before (absent, or the old file), no
    OUT.tmp."""
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    data = make_dataset(tmp_path / "data", 100, corrupt={70})
    out = tmp_path / "all.npy"
    r = batch(out, str(data), "--strict", socket=sock)
    assert r.returncode == 1, r.stderr
    assert "ECORRUPT" in r.stderr
    if not sock:    # the daemon's strict failure does not name the item
        assert "item 70 (" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["data"]
    out.write_bytes(b"old")
    r = batch(out, str(data), "--strict", socket=sock)
    assert r.returncode == 1 and out.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["all.npy", "data"]


def test_an_unwritable_output_is_refused(tmp_path, data):
    out = tmp_path / "missing" / "all.npy"
    r = batch(out, str(data))
    assert r.returncode == 1 and "cannot create" in r.stderr and "all.npy.tmp" in r.stderr


def test_a_pipe_output_is_written_in_place(data, whole):
    """-o /dev/stdout (a pipe here, not renamable): the same bytes."""
    env = {k: v for k, v in os.environ.items() if k != "DVPPD_SOCKET"}
    r = subprocess.run([DVPPCTL, "batch", str(data), *FLAGS, "-o", "/dev/stdout"],
                       capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert np.load(io.BytesIO(r.stdout)).tobytes() == whole.tobytes()


def test_help_and_man_page_state_no_64_limit():
    r = subprocess.run([DVPPCTL, "--help"], capture_output=True, text=True)
    assert "Any number of" in r.stdout and "1048576" in r.stdout
    with open(os.path.join(ROOT, "docs", "man", "dvppctl.1")) as f:
        man = f.read()
    assert "At most 64 inputs per run" not in man and "each block at most 64" not in man
