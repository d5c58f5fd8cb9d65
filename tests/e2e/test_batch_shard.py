"""dvppctl batch --shard I/N: block I of N of the input list, in-process and
through a real dvppd (--socket).

The N shard outputs concatenated in order must be the unsharded batch byte
for byte, cut exactly as numpy.array_split cuts the list (also with more
inputs than one batch job takes, and with empty shards); a failed item is
reported with its index in the whole list; bad shard arguments are refused
(exit 2) with a line naming --shard.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_batch_shard.py
"""
import os
import re
import subprocess

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DVPPCTL = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"), "dvppctl")
FLAGS = ["--size", "20x16", "--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]

pytestmark = pytest.mark.skipif(not os.path.exists(DVPPCTL), reason="dvppctl not built")


def make_dataset(d, n, corrupt=()):
    return du.batch_dataset(d, n, 16, corrupt)


def batch(out, *args, socket=None):
    return du.ctl_batch(out, *args, flags=FLAGS, socket=socket, timeout=120)


def shards(tmp_path, inputs, n, socket=None):
    outs = []
    for i in range(n):
        out = tmp_path / f"shard-{i}-of-{n}.npy"
        r = batch(out, *inputs, "--shard", f"{i}/{n}", socket=socket)
        assert r.returncode == 0, r.stderr
        outs.append(np.load(out))
    return outs


@pytest.fixture(scope="module")
def daemon():
    d = du.CtlDaemon("dvpp-shard-")
    d.wait_ready()
    yield d
    d.stop()


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_three_shards_concatenate_to_the_whole_batch(tmp_path, via, request):
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    data = make_dataset(tmp_path / "data", 10)
    r = batch(tmp_path / "all.npy", str(data), socket=sock)
    assert r.returncode == 0, r.stderr
    whole = np.load(tmp_path / "all.npy")
    assert whole.shape == (10, 3, 16, 20)
    parts = shards(tmp_path, [str(data)], 3, socket=sock)
    # numpy.array_split's blocks of 10 in 3: 4, 3, 3 (the first 10 % 3 longer)
    assert [p.shape[0] for p in parts] == \
        [len(b) for b in np.array_split(np.arange(10), 3)] == [4, 3, 3]
    cat = np.concatenate(parts)
    assert cat.dtype == whole.dtype and cat.tobytes() == whole.tobytes()
    # and each block is that slice of the whole, not merely a permutation
    assert parts[1].tobytes() == whole[4:7].tobytes()


def test_shard_and_socket_give_the_same_bytes(tmp_path, daemon):
    data = make_dataset(tmp_path / "data", 7)
    local = shards(tmp_path, [str(data)], 2)
    remote = shards(tmp_path, [str(data)], 2, socket=daemon.sock)
    assert [a.tobytes() for a in local] == [b.tobytes() for b in remote]


def test_files_and_dirs_keep_the_batch_order(tmp_path):
    """The list is the one batch builds: files in argv order, each directory
    replaced by its sorted files."""
    data = make_dataset(tmp_path / "data", 5)
    extra = make_dataset(tmp_path / "extra", 2)
    inputs = [str(extra / "img0001.png"), str(data), str(extra / "img0000.jpg")]
    r = batch(tmp_path / "all.npy", *inputs)
    assert r.returncode == 0, r.stderr
    whole = np.load(tmp_path / "all.npy")
    assert whole.shape[0] == 7
    for n in (2, 4, 7):
        assert np.concatenate(shards(tmp_path, inputs, n)).tobytes() == whole.tobytes(), n


def test_more_shards_than_inputs_write_empty_blocks(tmp_path):
    data = make_dataset(tmp_path / "data", 3)
    r = batch(tmp_path / "all.npy", str(data))
    whole = np.load(tmp_path / "all.npy")
    parts = shards(tmp_path, [str(data)], 5)
    assert [p.shape for p in parts] == [(1, 3, 16, 20)] * 3 + [(0, 3, 16, 20)] * 2
    assert np.concatenate(parts).tobytes() == whole.tobytes()
    r = batch(tmp_path / "e.npy", str(data), "--shard", "4/5")
    assert r.returncode == 0 and "none of the inputs" in r.stderr


def test_a_list_longer_than_one_batch_job_is_run_whole(tmp_path):
    """150 inputs: a run goes 64 at a time (tests/e2e/test_batch_stream.py),
    so unsharded and 2 shards of 75 run too, and 3 shards (50 each) are the
    batches of the slices of the list."""
    data = make_dataset(tmp_path / "data", 150)
    r = batch(tmp_path / "x.npy", str(data))
    assert r.returncode == 0, r.stderr
    whole = np.load(tmp_path / "x.npy")
    assert whole.shape == (150, 3, 16, 20)
    halves = shards(tmp_path, [str(data)], 2)
    assert [p.shape[0] for p in halves] == [75, 75]
    assert np.concatenate(halves).tobytes() == whole.tobytes()
    parts = shards(tmp_path, [str(data)], 3)
    names = sorted(os.listdir(data))
    for i, p in enumerate(parts):
        assert p.shape[0] == 50
        ref = tmp_path / f"ref{i}.npy"
        r = batch(ref, *[str(data / f) for f in names[50 * i:50 * (i + 1)]])
        assert r.returncode == 0, r.stderr
        assert p.tobytes() == np.load(ref).tobytes() == \
            whole[50 * i:50 * (i + 1)].tobytes(), i


@pytest.mark.parametrize("via", ["in-process", "socket"])
def test_failed_items_keep_their_global_index(tmp_path, via, request):
    sock = request.getfixturevalue("daemon").sock if via == "socket" else None
    data = make_dataset(tmp_path / "data", 9, corrupt={5})
    r = batch(tmp_path / "all.npy", str(data), socket=sock)
    assert r.returncode == 0, r.stderr
    assert re.findall(r"item (\d+) \(", r.stderr) == ["5"]
    whole = np.load(tmp_path / "all.npy")
    out = tmp_path / "s1.npy"
    r = batch(out, str(data), "--shard", "1/3", socket=sock)    # items 3, 4, 5
    assert r.returncode == 0, r.stderr
    assert re.findall(r"item (\d+) \(([^)]*)\)", r.stderr) == \
        [("5", str(data / "img0005.png"))]
    assert "1 of 3 items failed" in r.stderr and "ECORRUPT" in r.stderr
    part = np.load(out)
    assert (part[2] == 0).all() and part.tobytes() == whole[3:6].tobytes()
    r = batch(tmp_path / "s0.npy", str(data), "--shard", "0/3", socket=sock)
    assert r.returncode == 0 and "item" not in r.stderr


@pytest.mark.parametrize("bad", ["3/3", "1/0", "0/1048577", "/3", "1", "x/2", "-1/2",
                                 "1/2/3", "", "1/", "2/2"])
def test_bad_shards_are_refused(tmp_path, bad):
    data = make_dataset(tmp_path / "data", 2)
    out = tmp_path / "x.npy"
    r = batch(out, str(data), "--shard", bad)
    assert r.returncode == 2, (bad, r.stderr)
    assert f"--shard wants I/N with 0 <= I < N" in r.stderr and f"'{bad}'" in r.stderr
    assert not out.exists()


def test_help_names_shard():
    r = subprocess.run([DVPPCTL, "--help"], capture_output=True, text=True)
    assert "--shard I/N" in r.stdout and "JOB_COMPLETION_INDEX" in r.stdout
