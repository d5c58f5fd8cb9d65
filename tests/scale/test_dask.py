"""dvpp.dask.preprocess on a real Dask cluster (distributed.LocalCluster: a
scheduler and two worker processes on loopback) into a real Zarr store.

1,000 generated images (JPEG and PNG, 32..96 px, two corrupt) through a
32 x 32 normalising spec, in shards of 64 (16 shards, the last one 40
items), in both forms a worker finds its daemon in:

- node: one dvppd started here (daemon_util), its socket given to the
  workers as DVPPD_SOCKET;
- private: no DVPPD_SOCKET, so each worker process starts its own dvppd
  (and the watchdog of dvpp.daemon stops it when that worker is killed).

In each, one worker gets SIGKILL mid-run (a worker that has just finished
a shard, found by the pid in its shard record); Dask reschedules what it
held, the nanny starts a new worker, and the run completes. The array must
equal `dvppctl batch` (in-process, the same flags, its --shard blocks
concatenated) on the same files byte for byte, with the labels stored and
the failed list naming exactly the corrupt files. Then a run is resumed:
after chunks and a record were deleted (node), or after the driver was
interrupted mid-run (private); the rerun must compute exactly the missing
shards and end equal. A store of another job is refused, and a shard whose
items all failed (an all-zero chunk) still counts as complete.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/scale/test_dask.py
"""
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

distributed = pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")
du.pyclient()
import dvpp.dask as dd  # noqa: E402

N, CHUNK = 1000, 64
NSHARDS = -(-N // CHUNK)        # 16, the last one 40 items
CORRUPT = {137: "truncated JPEG", 642: "not a PNG"}
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
SPEC = {"ops": [{"resize": {"w": 32, "h": 32}}], "normalize": {"mean": MEAN, "std": STD}}
FLAGS = ["--size", "32x32", "--mean", ",".join(map(str, MEAN)),
         "--std", ",".join(map(str, STD))]
CTL_SHARDS = 16                 # dvppctl batch takes at most 64 inputs a run

pytestmark = pytest.mark.skipif(not os.path.exists(du.DVPPCTL), reason="dvppctl not built")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """(paths, labels): N images of 32..96 px, every third a PNG, two
    corrupt (CORRUPT)."""
    d = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(16)
    paths = []
    for i in range(N):
        w, h = (int(v) for v in rng.integers(32, 97, 2))
        img = du.gradient(w, h, i, noise=12)
        png = i % 3 == 0
        blob = du.to_png(img) if png else du.to_jpeg(img, 70 + i % 30)
        if i == 137:
            blob = blob[:len(blob) // 2]
        elif i == 642:
            blob = b"\x89PNG\r\n\x1a\n" + bytes(40)
        p = d / f"img{i:04d}.{'png' if png else 'jpg'}"
        p.write_bytes(blob)
        paths.append(str(p))
    labels = rng.integers(0, 1000, N).astype(np.int64)
    return paths, labels


@pytest.fixture(scope="module")
def reference(dataset, tmp_path_factory):
    """(array, failed indices) of `dvppctl batch` on the same list."""
    paths, _ = dataset
    out = tmp_path_factory.mktemp("ref")
    env = {k: v for k, v in os.environ.items() if k != "DVPPD_SOCKET"}
    parts, failed = [], []
    for i in range(CTL_SHARDS):
        npy = out / f"part{i}.npy"
        r = subprocess.run([du.DVPPCTL, "batch", *paths, *FLAGS, "--channels", "2",
                            "--shard", f"{i}/{CTL_SHARDS}", "-o", str(npy)],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        failed += [int(k) for k in re.findall(r"item (\d+) \(", r.stderr)]
        parts.append(np.load(npy))
    ref = np.concatenate(parts)
    assert ref.shape == (N, 3, 32, 32) and ref.dtype == np.float32
    assert sorted(failed) == sorted(CORRUPT)
    assert all((ref[i] == 0).all() for i in CORRUPT) and ref[0].any()
    return ref, sorted(failed)


@contextlib.contextmanager
def local_cluster():
    """Two worker processes, one thread each, on loopback: they inherit
    this process's environment (DVPPD_SOCKET, DVPPD, PYTHONPATH)."""
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def worker_env(monkeypatch, socket):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [du.PYCLIENT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("DVPPD", du.DVPPD)
    monkeypatch.setenv("DVPPD_CHANNELS", "1")
    if socket:
        monkeypatch.setenv("DVPPD_SOCKET", socket)
    else:
        monkeypatch.delenv("DVPPD_SOCKET", raising=False)


def records(store):
    d = os.path.join(store, "dvpp-shards")
    out = {}
    for name in os.listdir(d) if os.path.isdir(d) else ():
        with open(os.path.join(d, name)) as f:
            out[int(name)] = json.load(f)
    return out


def chunks(store):
    """The chunk keys in @store's images (not the *.partial files of a
    DirectoryStore write that a killed worker left: zarr ignores them)."""
    return sorted(k for k in os.listdir(os.path.join(store, "images"))
                  if k[0].isdigit() and not k.endswith(".partial"))


class Watcher(threading.Thread):
    """Waits until @after shard records are in @store, then calls
    @act(records); ``fired`` holds what it returned."""

    def __init__(self, store, after, act):
        super().__init__(daemon=True)
        self.store, self.after, self.act = store, after, act
        self.fired = None
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                recs = records(self.store)
            except (OSError, ValueError):
                recs = {}
            if len(recs) >= self.after:
                self.fired = self.act(recs)
                return
            time.sleep(0.002)


def kill_a_worker(recs):
    """SIGKILL the worker that wrote the newest record: (its pid, its
    private daemon's pid, how many shards were done then)."""
    rec = max(recs.values(), key=lambda r: r["shard"])
    os.kill(rec["pid"], signal.SIGKILL)
    return rec["pid"], rec["daemon_pid"], len(recs)


def pid_gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:    # reparented and not reaped yet: a zombie is gone too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def check_equal(run, dataset, reference):
    paths, labels = dataset
    ref, failed = reference
    images = run.images
    assert images.shape == (N, 3, 32, 32) and images.dtype == np.float32
    assert images.chunks == (CHUNK, 3, 32, 32)
    got = images[:]
    assert got.tobytes() == ref.tobytes(), \
        f"{int((got != ref).any(axis=(1, 2, 3)).sum())} rows differ from dvppctl batch"
    assert run.labels is not None and run.labels.dtype == np.int64
    assert np.array_equal(run.labels[:], labels)
    assert [f["index"] for f in run.failed] == failed
    assert [f["path"] for f in run.failed] == [paths[i] for i in failed]
    assert all(f["code"] and f["error"] for f in run.failed), run.failed
    assert images.attrs["failed"] == run.failed and images.attrs["complete"] is True
    assert images.attrs["spec"] == SPEC


def run_with_a_kill(client, store, dataset):
    paths, labels = dataset
    w = Watcher(store, 3, kill_a_worker)
    w.start()
    t0 = time.monotonic()
    try:
        run = dd.preprocess(paths, SPEC, store, client=client, chunk=CHUNK, labels=labels)
    finally:
        w.stop.set()
        w.join()
    took = time.monotonic() - t0
    assert w.fired is not None, "the run ended before a worker could be killed"
    victim, victim_daemon, done_then = w.fired
    print(f"\n  killed worker {victim} after {done_then} of {NSHARDS} shards; "
          f"run took {took:.1f} s")
    assert done_then < NSHARDS
    assert run.computed == NSHARDS and run.skipped == 0 and run.shards == NSHARDS
    # Every result the dead worker held was computed again elsewhere.
    pids = {r["pid"] for r in run.results}
    assert len(run.results) == NSHARDS and victim not in pids
    client.wait_for_workers(2, timeout=30)     # the nanny replaced the dead one
    return run, victim_daemon


def test_node_daemon_from_the_environment(dataset, reference, tmp_path, monkeypatch):
    daemon = du.CtlDaemon("dvpp-dask-")
    try:
        daemon.wait_ready()
        worker_env(monkeypatch, daemon.sock)
        store = str(tmp_path / "node.zarr")
        with local_cluster() as client:
            run, victim_daemon = run_with_a_kill(client, store, dataset)
            assert victim_daemon is None        # the node's daemon, not a private one
            assert {r["daemon_pid"] for r in run.results} == {None}
            check_equal(run, dataset, reference)
            assert daemon.proc.poll() is None

            again = dd.preprocess(dataset[0], SPEC, store, client=client, chunk=CHUNK,
                                  labels=dataset[1])
            assert (again.computed, again.skipped) == (0, NSHARDS)

            # An interruption that left three chunks unwritten (the last,
            # partial one among them) and one chunk without its record.
            for i in (2, 9, NSHARDS - 1):
                os.remove(os.path.join(store, "images", f"{i}.0.0.0"))
            os.remove(os.path.join(store, "dvpp-shards", "5"))
            again = dd.preprocess(dataset[0], SPEC, store, client=client, chunk=CHUNK,
                                  labels=dataset[1])
            assert (again.computed, again.skipped) == (4, NSHARDS - 4)
            assert sorted(r["shard"] for r in again.results) == [2, 5, 9, NSHARDS - 1]
            check_equal(again, dataset, reference)
            assert len(chunks(store)) == NSHARDS
    finally:
        daemon.stop()


class Interrupt(Exception):
    pass


def test_private_daemon_per_worker(dataset, reference, tmp_path, monkeypatch):
    worker_env(monkeypatch, None)
    store = str(tmp_path / "private.zarr")
    with local_cluster() as client:
        run, victim_daemon = run_with_a_kill(client, store, dataset)
        check_equal(run, dataset, reference)
        # Each worker process started one daemon and kept it for its shards.
        per_worker = {}
        for r in run.results:
            per_worker.setdefault(r["pid"], set()).add(r["daemon_pid"])
        assert all(len(d) == 1 and None not in d for d in per_worker.values()), per_worker
        daemons = {pid: d.pop() for pid, d in per_worker.items()}
        assert len(set(daemons.values())) == len(daemons)
        assert victim_daemon is not None
        du.wait_for(lambda: pid_gone(victim_daemon),
                    "the killed worker's private dvppd to be stopped by its watchdog",
                    timeout=30)
        for pid in daemons.values():
            assert not pid_gone(pid)

        # The driver interrupted mid-run (SIGINT's KeyboardInterrupt, here
        # an exception of the test's): its futures are cancelled.
        store2 = str(tmp_path / "interrupted.zarr")
        def interrupt(*_):
            raise Interrupt()
        old = signal.signal(signal.SIGINT, interrupt)
        w = Watcher(store2, 3, lambda recs: os.kill(os.getpid(), signal.SIGINT) or len(recs))
        w.start()
        try:
            with pytest.raises(Interrupt):
                dd.preprocess(dataset[0], SPEC, store2, client=client, chunk=CHUNK,
                              labels=dataset[1])
        finally:
            w.stop.set()
            w.join()
            signal.signal(signal.SIGINT, old)
        # A task already running finishes on its worker; then nothing moves.
        du.wait_for(lambda: not any(client.run(lambda dask_worker:
                                               dask_worker.executing_count).values()),
                    "the workers to be idle", timeout=30)
        done = len(set(records(store2)) & {int(c.split(".")[0]) for c in chunks(store2)})
        assert 3 <= done < NSHARDS
        assert zarr.open_group(store2)["images"].attrs["complete"] is False
        again = dd.preprocess(dataset[0], SPEC, store2, client=client, chunk=CHUNK,
                              labels=dataset[1])
        print(f"  interrupted after {done} shards, resumed: {again.computed} computed")
        assert (again.computed, again.skipped) == (NSHARDS - done, done)
        check_equal(again, dataset, reference)
    # The workers exited: their daemons with them.
    for pid in daemons.values():
        du.wait_for(lambda: pid_gone(pid), f"private dvppd {pid} to stop", timeout=30)


def test_local_scheduler_refusals_and_an_all_zero_shard(dataset, reference, tmp_path,
                                                        monkeypatch):
    """Without a cluster (dask's threads in this process, a private daemon
    here): a shard whose items all fail is an all-zero chunk that still
    counts as complete; a missing file is a failed item; a store of
    another job is refused, naming what differs."""
    with pytest.raises(ValueError):
        distributed.default_client()        # no client is current: the local scheduler
    worker_env(monkeypatch, None)
    paths, _ = dataset
    ref, _ = reference
    missing = str(tmp_path / "missing.jpg")
    # 12 items in shards of 2: shard 3 is the truncated JPEG twice, shard 4
    # the broken PNG and a file that is not there: both all-zero chunks.
    sub = paths[130:136] + [paths[137], paths[137], paths[642], missing] + paths[:2]
    labels = list("abcdefghijkl")
    store = str(tmp_path / "local.zarr")
    try:
        run = dd.preprocess(sub, json.dumps(SPEC), store, chunk=2, labels=labels)
        assert (run.computed, run.skipped) == (6, 0)
        assert [f["index"] for f in run.failed] == [6, 7, 8, 9]
        assert [f["path"] for f in run.failed] == sub[6:10]
        assert run.failed[0]["code"] == run.failed[1]["code"] == "ECORRUPT"
        assert run.failed[3]["code"] == "ENOENT"
        got = run.images[:]
        assert not got[6:10].any()
        assert got[:6].tobytes() == ref[130:136].tobytes()
        assert got[10:].tobytes() == ref[:2].tobytes()
        assert list(run.labels[:]) == labels
        assert {"3.0.0.0", "4.0.0.0"} <= set(chunks(store))    # the all-zero chunks
        again = dd.preprocess(sub, SPEC, store, chunk=2, labels=labels)
        assert (again.computed, again.skipped) == (0, 6)

        def refused(match, *args, **kw):
            with pytest.raises(ValueError, match=match):
                dd.preprocess(*args, **kw)
        other = dict(SPEC, ops=[{"resize": {"w": 32, "h": 16}}])
        refused("differs in the spec", sub, other, store, chunk=2, labels=labels)
        refused("differs in the paths", sub[::-1], SPEC, store, chunk=2,
                labels=labels)
        refused(r"chunk \(2 there, 3 now\)", sub, SPEC, store, chunk=3,
                labels=labels)
        refused("differs in the labels", sub, SPEC, store, chunk=2)
        refused("in-memory store", sub, SPEC, zarr.storage.MemoryStore(), chunk=2,
                client=object())
        with pytest.raises(DvppErrorLike, match="output size depends on the input"):
            dd.preprocess(sub, {"ops": [{"resize": {"w": 32, "mode": "shorter"}}]},
                          str(tmp_path / "bad.zarr"))
    finally:
        dd.shutdown()
    shutil.rmtree(store, ignore_errors=True)


DvppErrorLike = du.pyclient().DvppError
