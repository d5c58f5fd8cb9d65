"""dvpp.dask: a dataset preprocessed once, sharded over a Dask cluster, into Zarr.

    import distributed, dvpp.dask
    client = distributed.Client("tcp://scheduler:8786")
    spec = {"ops": [{"resize": {"w": 224, "h": 224}}],
            "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}
    run = dvpp.dask.preprocess(paths, spec, "/shared/train.zarr", labels=labels)
    run.images          # zarr array N x C x H x W, chunked by shard
    run.failed          # [{"index", "path", "code", "error"}], their rows are zeros
    run.computed, run.skipped   # shards run now / found complete in the store

The file list is cut into shards of @chunk items, one Dask task each. A
task runs its shard through the dvppd of the worker's node (the socket at
$DVPPD_SOCKET in the worker's environment, as every dvpp client finds it),
else through a private dvppd of the worker process (dvpp.daemon: started
by the first task, reused by the later ones, stopped when the process
exits, also when it is killed), as BatchSubmits of up to 64 files sent as
memfds the kernel fills (the file bytes never pass through Python), two in
flight; then it writes the shard's rows into its own chunk of the array.

Store layout (a Zarr v2 group; docs/python.md, "Dataset jobs on Dask"):

- ``images``: N x (the spec's per-item shape, e.g. C x H x W), the spec's
  dtype, chunks (chunk, C, H, W), fill 0, written with write_empty_chunks
  so that every finished shard has its chunk key (an all-zero shard too).
  ``images.attrs``: ``spec`` (the spec as given, JSON), ``dvpp`` (format,
  n, chunk, the SHA-256 of the path list and of the labels: a rerun with
  another spec, list, chunk or labels is refused), ``complete`` and, once a
  run has finished every shard, ``failed``: [{index, path, code, error}]
  in index order.
- ``labels``: N, the labels as numpy makes them (``numpy.asarray``), written
  by the driver at creation; only when labels were given.
- ``dvpp-shards/<i>``: one JSON record per finished shard (its range, its
  failed items, the worker and daemon pids), written by the task *before*
  its chunk. A shard is complete when both its record and its chunk are in
  the store; only those are skipped by a rerun. Only the driver writes
  ``.zattrs`` (never two workers at once); each worker writes its own
  keys, which a DirectoryStore replaces atomically (write + rename).

The store must be shared by the workers and the driver: a directory path
(on a shared filesystem across nodes), or a zarr store object that pickles
to the same place (DirectoryStore, FSStore). In-memory and zip stores are
refused.
"""

import atexit
import errno
import hashlib
import json
import os
import threading
import uuid
import weakref

try:
    import dask
    import numpy as np
    import zarr
except ImportError as e:  # pragma: no cover - exercised without them only
    raise ImportError("dvpp.dask needs dask, numpy and zarr (Debian: apt install "
                      "python3-distributed python3-zarr; pip: the 'dask' extra of dvpp)") from e

from .client import Client
from .daemon import PrivateDaemon
from .errors import STATUS, DvppError
from .wire import MAX_FDS, NP_DTYPES, FileInput

FORMAT = 1                    # of the store layout (images.attrs["dvpp"]["format"])
RECORDS = "dvpp-shards"       # the group member holding the shard records
INFLIGHT = 2                  # BatchSubmits in flight per task (ring slots)
PROBE_SLOT_BYTES = 256 << 20  # the probe's ring slot: the largest item it can measure
PROBE_FILES = 16              # files tried (unreadable ones skipped) to learn the shape


class PreprocessResult:
    """What ``preprocess`` returns: ``group`` (the zarr group), ``images``
    (the N x ... zarr array), ``labels`` (its zarr array or None),
    ``failed`` (images.attrs["failed"]), ``shards`` (how many), ``computed``
    (shards run by this call), ``skipped`` (shards already complete in the
    store) and ``results`` (the computed tasks' summaries: shard, failed
    count, worker pid, daemon pid)."""

    def __init__(self, group, shards, computed, skipped, results):
        self.group = group
        self.images = group["images"]
        self.labels = group["labels"] if "labels" in group else None
        self.failed = self.images.attrs.get("failed", [])
        self.shards, self.computed, self.skipped = shards, computed, skipped
        self.results = results

    def __repr__(self):
        return (f"<dvpp.dask.PreprocessResult {self.images.shape} {self.images.dtype}: "
                f"{self.computed} shards computed, {self.skipped} skipped, "
                f"{len(self.failed)} items failed>")


def preprocess(paths, spec, store, client=None, chunk=1024, labels=None, *, retries=2,
               timeout=600.0):
    """Run every file of @paths through @spec (a dict or its JSON) into the
    Zarr group at @store (a path or a zarr store, see the module docstring),
    sharded in chunks of @chunk items, one Dask task each, on @client (a
    distributed.Client; None: the current one, or else dask's local
    threaded scheduler in this process). @labels (N values) are stored
    beside the images. A store that holds an earlier run of the same
    paths, spec, chunk and labels is resumed: complete shards are skipped.
    A task that fails (its worker died, the daemon went away) is retried
    up to @retries times; @timeout bounds each wait for the daemon.
    Returns a PreprocessResult. The spec's tensor must not depend on the
    input's size (a batch: resize stretch, fill or letterbox)."""
    paths = [os.fspath(p) for p in paths]
    n = len(paths)
    if n == 0:
        raise ValueError("dvpp.dask.preprocess: no paths")
    chunk = int(chunk)
    if chunk < 1:
        raise ValueError(f"dvpp.dask.preprocess: chunk must be >= 1, not {chunk}")
    spec = json.loads(spec) if isinstance(spec, (str, bytes)) else dict(spec)
    lab = None
    if labels is not None:
        lab = np.asarray(labels)
        if lab.shape[:1] != (n,):
            raise ValueError(f"dvpp.dask.preprocess: {len(lab)} labels for {n} paths")
    client = _dask_client(client)
    zstore = _shared_store(store, client)
    meta = {"format": FORMAT, "n": n, "chunk": chunk, "paths_sha256": _digest(paths),
            "labels_sha256": None if lab is None else _digest(lab)}
    group = zarr.open_group(zstore, mode="a")
    images = _open_images(group, meta, spec)
    if images is None:
        shape, dtype = _run_probe(client, paths[:PROBE_FILES], spec, timeout)
        images = _create(group, meta, spec, shape, dtype, lab)

    nshards = -(-n // chunk)
    done = _complete_shards(zstore, group, images, nshards)
    todo = [i for i in range(nshards) if i not in done]
    results = []
    if todo:
        if images.attrs.get("complete"):
            images.attrs["complete"] = False
        results = _run_shards(client, zstore, group, images, paths, spec, chunk, todo,
                              retries, timeout)
        missing = set(todo) - _complete_shards(zstore, group, images, nshards)
        if missing:
            raise RuntimeError(f"dvpp.dask.preprocess: shards {sorted(missing)[:10]} have no "
                               f"complete chunk after their tasks ran (was the store "
                               f"changed meanwhile?)")
    _finish(zstore, group, images, nshards)
    return PreprocessResult(group, nshards, len(todo), nshards - len(todo), results)


# -- the driver ------------------------------------------------------------------


def _dask_client(client):
    """@client, or the current distributed client, or None (dask's local
    scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _shared_store(store, client):
    """The zarr store the driver and the tasks open: refused when the tasks
    could not reach it (in memory, with worker processes) or could not
    rewrite a chunk (zip)."""
    zs = zarr.storage.normalize_store_arg(store, mode="a")
    if isinstance(zs, zarr.storage.ZipStore):
        raise ValueError("dvpp.dask.preprocess: a zip store cannot be resumed (its chunks "
                         "cannot be rewritten): use a directory")
    if client is not None and (isinstance(zs, zarr.storage.MemoryStore) or
                               isinstance(getattr(zs, "_mutable_mapping", None), dict)):
        raise ValueError("dvpp.dask.preprocess: an in-memory store is not shared with the "
                         "Dask workers: use a directory (on a filesystem every worker "
                         "mounts) or an FSStore")
    return zs


def _digest(values):
    h = hashlib.sha256()
    if isinstance(values, np.ndarray):
        h.update(str(values.dtype).encode() + b"\0" + repr(values.shape).encode() + b"\0")
        h.update(np.ascontiguousarray(values).tobytes() if values.dtype != object
                 else json.dumps(values.tolist(), default=str).encode())
    else:
        for v in values:
            h.update(v.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def _canonical(spec):
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def _open_images(group, meta, spec):
    """The store's images array when it holds this very job (None when it
    holds none yet); ValueError naming what differs when it holds another."""
    if "images" not in group:
        return None
    images = group["images"]
    old = images.attrs.get("dvpp")
    if old is None:
        if images.nchunks_initialized == 0 and not zarr.storage.listdir(
                group.store, _record_key(group, 0).rsplit("/", 1)[0]):
            return None     # created by an interrupted first run: made again below
        raise ValueError(f"dvpp.dask.preprocess: {images.store} holds an 'images' array "
                         f"that dvpp.dask did not make (no attrs['dvpp']): use another store")
    diffs = []
    if _canonical(images.attrs.get("spec")) != _canonical(spec):
        diffs.append(f"the spec ({_canonical(images.attrs.get('spec'))} there)")
    for key, what in (("n", "the number of paths"), ("paths_sha256", "the paths"),
                      ("chunk", "chunk"), ("labels_sha256", "the labels"),
                      ("format", "the layout version")):
        if old.get(key) != meta[key]:
            diffs.append(f"{what} ({old.get(key)} there, {meta[key]} now)"
                         if key in ("n", "chunk", "format") else what)
    if diffs:
        raise ValueError("dvpp.dask.preprocess: the store holds another job: it differs in "
                         + ", ".join(diffs) + "; use a new store (or remove this one)")
    return images


def _create(group, meta, spec, shape, dtype, lab):
    n, chunk = meta["n"], meta["chunk"]
    images = group.create("images", shape=(n,) + tuple(shape), chunks=(chunk,) + tuple(shape),
                          dtype=dtype, fill_value=0, write_empty_chunks=True,
                          overwrite=True)
    if lab is not None:
        group.array("labels", lab, chunks=(chunk,), overwrite=True)
    elif "labels" in group:
        del group["labels"]
    # Last: a store is this job's once its attrs say so.
    images.attrs.put({"spec": spec, "dvpp": meta, "complete": False})
    return images


def _chunk_key(images, shard):
    return images._chunk_key((shard,) + (0,) * (images.ndim - 1))


def _record_key(group, shard):
    return (group.path + "/" if group.path else "") + f"{RECORDS}/{shard}"


def _complete_shards(zstore, group, images, nshards):
    """The shards whose record and chunk are both in the store (the record
    is written first, so a chunk without one is from a run that died)."""
    have = set(zarr.storage.listdir(zstore, images.path))
    recs = set(zarr.storage.listdir(zstore, _record_key(group, 0).rsplit("/", 1)[0]))
    prefix = images.path + "/" if images.path else ""
    out = set()
    for i in range(nshards):
        if _chunk_key(images, i)[len(prefix):] in have and str(i) in recs:
            out.add(i)
    return out


def _run_probe(client, head, spec, timeout):
    """(per-item shape, dtype) of @spec: one item through the daemon of a
    worker (or of this process, without a cluster)."""
    if client is None:
        return _probe(head, spec, timeout)
    return tuple(client.submit(_probe, head, spec, timeout, pure=False).result())


def _run_shards(client, zstore, group, images, paths, spec, chunk, todo, retries, timeout):
    token = uuid.uuid4().hex[:8]
    shape, dtype = tuple(images.shape[1:]), str(images.dtype)
    run = dask.delayed(_run_shard, pure=False)
    tasks = [run(zstore, images.path, _record_key(group, i), i, i * chunk,
                 paths[i * chunk:(i + 1) * chunk], spec, shape, dtype, timeout,
                 dask_key_name=f"dvpp-shard-{i}-{token}") for i in todo]
    if client is None:
        return list(dask.compute(*tasks, scheduler="threads"))
    futures = client.compute(tasks, retries=retries)
    try:
        return client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise


def _finish(zstore, group, images, nshards):
    """The failed list of every shard's record into images.attrs (the
    driver's only write to it after creation)."""
    failed = []
    for i in range(nshards):
        failed.extend(json.loads(bytes(zstore[_record_key(group, i)]))["failed"])
    failed.sort(key=lambda f: f["index"])
    images.attrs.update({"failed": failed, "complete": True})


# -- the tasks -----------------------------------------------------------------


class _Node:
    """This process's way to its dvppd: the private daemon (when
    $DVPPD_SOCKET is unset), one connection per thread, and every
    connection made (closed at exit)."""
    lock = threading.Lock()
    daemon = None
    local = threading.local()
    clients = weakref.WeakSet()


def _socket_path():
    path = os.environ.get("DVPPD_SOCKET")
    if path:
        return path
    with _Node.lock:
        d = _Node.daemon
        if d is None or not d.alive:
            if d is not None:
                d.stop()
            _Node.daemon = d = PrivateDaemon(prefix="dvpp-dask-")
        return d.socket


def _client(timeout):
    """This thread's connection to the node's (or the private) dvppd; a new
    one when the daemon changed or the connection was lost."""
    path = _socket_path()
    loc = _Node.local
    c = getattr(loc, "client", None)
    if c is None or c.closed or loc.path != path:
        if c is not None:
            c.close()
        c = Client(path, timeout=timeout, client_name="dvpp.dask")
        loc.client, loc.path = c, path
        with _Node.lock:
            _Node.clients.add(c)
    return c


def daemon_pid():
    """The pid of this process's private dvppd, None when it has none (a
    node daemon from $DVPPD_SOCKET, or no task ran here yet)."""
    d = _Node.daemon
    return d.pid if d is not None and d.alive else None


def shutdown():
    """Close this process's connections and stop its private dvppd (done at
    exit anyway; e.g. ``client.run(dvpp.dask.shutdown)`` on every worker)."""
    with _Node.lock:
        clients, _Node.clients = list(_Node.clients), weakref.WeakSet()
        d, _Node.daemon = _Node.daemon, None
    for c in clients:
        c.close()
    if d is not None:
        d.stop()


atexit.register(shutdown)


def _failure(index, path, code, message):
    return {"index": index, "path": path, "code": code, "error": message}


def _status_name(status):
    return next((c for c, v in STATUS.items() if v == status), str(status))


def _probe(head, spec, timeout):
    c = _client(timeout)
    ring = c.open_ring(1, min(PROBE_SLOT_BYTES, c.info.max_ring_bytes))
    try:
        for p in head:
            try:
                res = c.batch_submit(spec, [FileInput(p)], ring, timeout=timeout)
            except OSError:
                continue        # unreadable here: the next one
            # An item that failed still gives the batch's shape.
            with res:
                return tuple(res.shape[1:]), np.dtype(NP_DTYPES[res.dtype]).str
    finally:
        ring.close()
    raise OSError(errno.ENOENT, f"none of the first {len(head)} files could be read to learn "
                  f"the spec's tensor shape", head[0] if head else "")


def _run_shard(zstore, array_path, record_key, shard, start, paths, spec, shape, dtype,
               timeout):
    """One shard: its rows through the daemon, its record, then its chunk."""
    rows, failed = _rows(paths, start, spec, tuple(shape), np.dtype(dtype), timeout)
    rec = {"shard": shard, "start": start, "stop": start + len(paths), "failed": failed,
           "pid": os.getpid(), "daemon_pid": daemon_pid()}
    zstore[record_key] = json.dumps(rec).encode()
    images = zarr.open_array(zstore, mode="r+", path=array_path, write_empty_chunks=True)
    images[start:start + len(paths)] = rows
    return {"shard": shard, "failed": len(failed), "pid": rec["pid"],
            "daemon_pid": rec["daemon_pid"]}


def _rows(paths, start, spec, shape, dtype, timeout):
    """(rows, failed) of @paths: the len x @shape array (zeros for failed
    items) and the failure records, with indices counted from @start."""
    c = _client(timeout)
    item = int(np.prod(shape)) * dtype.itemsize
    per = max(1, min(MAX_FDS, c.info.max_batch_items or MAX_FDS,
                     c.info.max_ring_bytes // (INFLIGHT * item) if item else MAX_FDS))
    rows = np.zeros((len(paths),) + shape, dtype)
    failed = []
    ring = c.open_ring(INFLIGHT, per * item)
    try:
        pending = []
        for j in range(0, len(paths), per):
            if len(pending) == INFLIGHT:
                _take(c, pending.pop(0), rows, failed, paths, start, spec, ring, timeout)
            pending.append(_send(c, spec, ring, list(range(j, min(j + per, len(paths)))),
                                 paths, failed, start, timeout))
        for p in pending:
            _take(c, p, rows, failed, paths, start, spec, ring, timeout)
    finally:
        ring.close()
    failed.sort(key=lambda f: f["index"])
    return rows, failed


def _send(c, spec, ring, idxs, paths, failed, start, timeout):
    """A BatchSubmit of the files @idxs: (Batch or None, the idxs it holds).
    Files this process cannot read are failed items of their own (ENOENT,
    EACCES, ...), not a failed shard."""
    try:
        return c.batch_submit_async(spec, [FileInput(paths[i]) for i in idxs], ring,
                                    timeout=timeout), idxs
    except OSError:
        pass
    ok = []
    for i in idxs:
        try:
            with open(paths[i], "rb"):
                ok.append(i)
        except OSError as e:
            failed.append(_failure(start + i, paths[i], errno.errorcode.get(e.errno, "EIO"),
                                   e.strerror or str(e)))
    if not ok:
        return None, []
    return c.batch_submit_async(spec, [FileInput(paths[i]) for i in ok], ring,
                                timeout=timeout), ok


def _take(c, sent, rows, failed, paths, start, spec, ring, timeout):
    batch, idxs = sent
    if batch is None:
        return
    res = batch.wait(timeout=timeout, check=True)
    with res:
        a = res.array()
        if tuple(a.shape[1:]) != rows.shape[1:] or a.dtype != rows.dtype:
            raise DvppError(STATUS["EINVAL"], "EINVAL", f"the daemon made {a.dtype} "
                            f"{list(a.shape)} items, the store holds {rows.dtype} "
                            f"{list(rows.shape[1:])}", "spec")
        bad = [k for k, st in enumerate(res.item_status) if st != 0]
        rows[idxs] = a
        statuses = [res.item_status[k] for k in bad]
    for k, st in zip(bad, statuses):
        i = idxs[k]
        rows[i] = 0
        failed.append(_why(c, spec, ring, start + i, paths[i], st, timeout))


def _why(c, spec, ring, index, path, status, timeout):
    """The failure record of a failed batch item: a batch result carries
    codes only, so the item is run alone once for the daemon's message."""
    code, message = _status_name(status), "(the daemon's code for this item)"
    try:
        with open(path, "rb") as f:
            data = f.read()
        r = c.submit(spec, data, ring=ring, check=False, timeout=timeout)
        if r.status != 0:
            code, message = r.code, r.message
        r.release()
    except DvppError as e:
        code, message = e.code, e.message
    except OSError as e:
        code, message = errno.errorcode.get(e.errno, "EIO"), e.strerror or str(e)
    return _failure(index, path, code, message)
