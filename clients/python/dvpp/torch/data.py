"""dvpp.torch.data: datasets and the loader whose batches dvppd builds.

``ImageFolder(root, transform)`` is torchvision's class layout (one folder
per class, sorted; the same ``classes``, ``class_to_idx``, ``samples``,
``targets`` and sample order, the same default extensions);
``FileDataset(paths, labels, transform)`` takes the list itself. Both are
torch Datasets too: ``ds[i]`` is ``(tensor, target)`` made by the daemon,
so they also work under torch's own DataLoader.

``DataLoader(dataset, batch_size, shuffle, generator, drop_last,
prefetch)`` yields ``(images, labels)`` as torch's does, where images is
one N x C x H x W tensor that the daemon wrote straight into a ring slot
(one BatchSubmit per batch, @prefetch batches in flight, each item with its
own spec: the random transforms' draws). Sample order: torch's own
samplers (RandomSampler with @generator, SequentialSampler), with torch
DataLoader's draw of a base seed first, so a seed gives torch's order. The
random transforms draw in sample order from torch's global generator, as
torch's loader does with ``num_workers=0``.

Failed items (a corrupt or unreadable file): ``on_error="raise"`` (the
default) raises ItemError naming the path and the daemon's reason;
``"skip"`` leaves them out of the batch (``images`` then has fewer rows)
and records them in ``loader.failures`` as (path, error).
"""

import collections
import os

import torch
from torch.utils.data import BatchSampler, RandomSampler, SequentialSampler

from ..errors import Disconnected, DvppError
from . import _runner
from ._tensor import as_tensor
from .transforms import Compose

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
MAX_BATCH_FDS = 64  # ipc/ipc_msg.h IPC_MAX_FDS: memfds per BatchSubmit


class ItemError(DvppError):
    """A sample of a batch failed: ``path`` (or the dataset index, for
    sources that are not files), ``index`` in the dataset, and the daemon's
    code and message."""

    def __init__(self, path, index, code, status, message):
        self.path = path
        self.index = index
        super().__init__(status, code, f"{path} (sample {index}): {message}", "input")


def _compose(transform):
    if transform is None:
        return Compose([])
    return transform if isinstance(transform, Compose) else Compose(transform)


class _Dataset(torch.utils.data.Dataset):
    """The part the loader uses: ``samples`` [(source, target)],
    ``transform`` (a Compose), ``target_transform``."""

    client = None
    draft = None

    def __len__(self):
        return len(self.samples)

    def source(self, index):
        return self.samples[index][0]

    def target(self, index):
        t = self.samples[index][1]
        return self.target_transform(t) if self.target_transform is not None else t

    def __getitem__(self, index):
        return (self.transform(self.source(index), client=self.client, draft=self.draft),
                self.target(index))


class FileDataset(_Dataset):
    """Images from @paths (or encoded bytes) with @labels (default: all 0),
    through @transform (a dvpp.torch.transforms.Compose or a list of
    transforms, torchvision's accepted)."""

    def __init__(self, paths, labels=None, transform=None, target_transform=None,
                 client=None, draft=None):
        paths = list(paths)
        labels = [0] * len(paths) if labels is None else list(labels)
        if len(labels) != len(paths):
            raise ValueError(f"{len(paths)} paths but {len(labels)} labels")
        self.samples = list(zip(paths, labels))
        self.targets = labels
        self.transform = _compose(transform)
        self.target_transform = target_transform
        self.client = client
        self.draft = draft


def find_classes(directory):
    """torchvision's DatasetFolder.find_classes: the sorted subfolders."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx, extensions=IMG_EXTENSIONS, is_valid_file=None):
    """torchvision 0.14's make_dataset: (path, class index) in its order."""
    directory = os.path.expanduser(directory)
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at "
                         "the same time")
    if is_valid_file is None:
        exts = tuple(e.lower() for e in extensions)

        def is_valid_file(x):
            return x.lower().endswith(exts)
    instances, available = [], set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available.add(target_class)
    empty = set(class_to_idx.keys()) - available
    if empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            msg += f"Supported extensions are: {', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


class ImageFolder(_Dataset):
    """torchvision.datasets.ImageFolder, the images decoded and transformed
    by dvppd: ``root/<class>/**/<file>``, classes sorted, samples in
    torchvision's order. dvppd decodes JPEG and PNG; a file of another
    format among the default extensions fails as an item (on_error)."""

    def __init__(self, root, transform=None, target_transform=None, extensions=None,
                 is_valid_file=None, client=None, draft=None):
        self.root = root
        self.classes, self.class_to_idx = find_classes(root)
        if extensions is None and is_valid_file is None:
            extensions = IMG_EXTENSIONS
        self.samples = make_dataset(root, self.class_to_idx, extensions, is_valid_file)
        self.imgs = self.samples
        self.targets = [s[1] for s in self.samples]
        self.extensions = extensions
        self.transform = _compose(transform)
        self.target_transform = target_transform
        self.client = client
        self.draft = draft


_TORCH_IGNORED = {"num_workers", "pin_memory", "persistent_workers", "prefetch_factor",
                  "worker_init_fn", "multiprocessing_context", "pin_memory_device"}


class DataLoader:
    """Batches of a dvpp.torch dataset built by dvppd (see the module
    docstring). @socket: a running daemon's socket (default $DVPPD_SOCKET;
    none: a private daemon for the loader's lifetime, with @channels
    workers); @client: a dvpp.Client to use instead. @prefetch: batches in
    flight. @collate_labels: how targets become the labels (default:
    torch's default_collate). torch's num_workers, pin_memory,
    persistent_workers, prefetch_factor, worker_init_fn,
    multiprocessing_context and pin_memory_device are accepted and ignored
    (no worker processes here: the daemon's channels do the work); a
    collate_fn is refused (the daemon builds the batch tensor)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 generator=None, drop_last=False, prefetch=2, socket=None, client=None,
                 channels=None, on_error="raise", timeout=120.0, collate_labels=None,
                 collate_fn=None, **torch_options):
        # torch's DataLoader arguments about worker processes and pinning
        # have nothing to do here (the daemon's channels do the work, in
        # another process already; the batches are CPU tensors): accepted,
        # so that swapping the import is enough, and ignored
        unknown = set(torch_options) - _TORCH_IGNORED
        if unknown:
            raise TypeError(f"DataLoader got unexpected keyword argument(s) "
                            f"{', '.join(sorted(unknown))}")
        if collate_fn is not None:
            raise TypeError("dvpp.torch.DataLoader builds each batch as one tensor in the "
                            "daemon: a collate_fn cannot be applied (collate_labels= collates "
                            "the targets)")
        if not isinstance(dataset, _Dataset):
            raise TypeError(f"dvpp.torch.DataLoader loads dvpp.torch datasets (ImageFolder, "
                            f"FileDataset), not {type(dataset).__name__}; other datasets "
                            f"work with torch.utils.data.DataLoader")
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error is 'raise' or 'skip', not {on_error!r}")
        if prefetch < 1:
            raise ValueError(f"prefetch {prefetch} < 1")
        self.dataset = dataset
        self.generator = generator
        if batch_sampler is None:
            if sampler is None:
                sampler = (RandomSampler(dataset, generator=generator) if shuffle
                           else SequentialSampler(dataset))
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.batch_sampler = batch_sampler
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.prefetch = prefetch
        self.on_error = on_error
        self.timeout = timeout
        self.failures = []
        self.collate_labels = collate_labels or torch.utils.data.default_collate
        self._own = client is None
        self._socket, self._channels = socket, channels
        self._client = client
        self._rings = None

    def __len__(self):
        return len(self.batch_sampler)

    @property
    def client(self):
        """The client the loader uses (connected on first use)."""
        if self._client is None or (self._own and self._client.closed):
            from ._daemon import connect
            self._client = connect(self._socket, timeout=self.timeout,
                                   channels=self._channels)
            self._rings = None
        return self._client

    def _ring_for(self, nbytes):
        """A ring whose slots hold @nbytes: prefetch + 3 slots (the batches
        in flight, the one being used, one the caller may still hold, one
        spare), per power-of-two size class, kept until close()."""
        if self._rings is None or self._rings.client is not self.client:
            self._rings = _runner.RingPool(self.client, self.prefetch + 3)
        return self._rings.get(nbytes)

    def __iter__(self):
        return _LoaderIter(self)

    def close(self):
        """Close the rings and, for the loader's own client, the connection
        (and a private daemon with it)."""
        c, self._client = self._client, None
        rings, self._rings = self._rings, None
        if c is not None and self._own:
            c.close()
        elif rings is not None:
            rings.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()   # its rings (and its own client): nothing else uses them
        except Exception:
            pass


class _Pending:
    """A batch in flight: its BatchSubmits (one per MAX_BATCH_FDS items:
    (Batch, positions in the batch)), or the error to raise when it is its
    turn; the items that could not even be read; each item's spec and input
    (to redo a failed one alone for its reason)."""
    __slots__ = ("parts", "indices", "error", "specs", "datas", "shape", "dtype",
                 "unreadable")


class _LoaderIter:
    def __init__(self, loader):
        self.loader = loader
        self.ds = loader.dataset
        self._batches = iter(loader.batch_sampler)
        # torch's DataLoader draws its workers' base seed here, before the
        # sampler's first draw: the same draw keeps the same order.
        torch.empty((), dtype=torch.int64).random_(generator=loader.generator)
        self._inflight = collections.deque()
        self._done = False
        self._n = 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def _fill(self):
        while not self._done and len(self._inflight) < self.loader.prefetch:
            indices = next(self._batches, None)
            if indices is None:
                self._done = True
                return
            self._inflight.append(self._submit(list(indices)))

    def _submit(self, indices):
        p = _Pending()
        p.indices, p.parts, p.error, p.unreadable = indices, [], None, {}
        p.specs, p.datas, p.shape, p.dtype = [], [], None, None
        try:
            self._plan(p)
            sent = [k for k in range(len(indices)) if k not in p.unreadable]
            client = self.loader.client
            for at in range(0, len(sent), MAX_BATCH_FDS):
                pos = sent[at:at + MAX_BATCH_FDS]
                p.parts.append((self._send(client, p, pos), pos))
        except (DvppError, OSError) as e:
            p.error = e
        return p

    def _send(self, client, p, pos):
        ring = self.loader._ring_for(_runner.tensor_bytes(p.shape, p.dtype,
                                                          min(len(p.indices), MAX_BATCH_FDS)))
        specs = [p.specs[k] for k in pos]
        datas = [p.datas[k] for k in pos]
        kw = {"timeout": self.loader.timeout}
        if any(s != specs[0] for s in specs):
            kw["item_specs"] = specs        # the random draws differ per item
        return _runner.retry_ring_full(
            lambda: client.batch_submit_async(specs[0], datas, ring, **kw), "DataLoader")

    def _plan(self, p):
        """Read and plan every item (the random draws happen here, in
        sample order); an item that cannot be read is kept aside in
        p.unreadable."""
        for k, i in enumerate(p.indices):
            source = self.ds.source(i)
            try:
                data, spec, sh, dtype = _runner.prepare(self.ds.transform, source,
                                                        by_path=True, draft=self.ds.draft)
            except _runner.SourceError as e:
                p.unreadable[k] = e
                p.specs.append(None)
                p.datas.append(None)
                continue
            if p.shape is not None and sh != p.shape:
                raise DvppError(-1, "EINVAL", f"sample {i} ({_label(source, i)}) comes "
                                f"out {list(sh)}, the batch's first {list(p.shape)}: a "
                                f"batch needs one size (add a Resize/crop to a fixed "
                                f"size)", "transform")
            if p.shape is None:
                p.shape, p.dtype = sh, dtype
            p.specs.append(_size_fixed(spec, sh))
            p.datas.append(data)

    def __next__(self):
        self._fill()
        if not self._inflight:
            raise StopIteration
        p = self._inflight.popleft()
        try:
            return self._finish(p)
        finally:
            self._fill()

    def _finish(self, p):
        if p.error is not None:
            raise self._wrap(p.error)
        tensors, failed = [], dict(p.unreadable)
        rows = []                       # batch positions of the rows of tensors
        for batch, pos in p.parts:
            try:
                res = batch.wait(timeout=self.loader.timeout, check=True)
            except DvppError as e:
                raise self._wrap(e) from None
            tensors.append(as_tensor(res))
            rows.extend(pos)
            for j, st in enumerate(res.item_status):
                if st != 0:
                    failed[pos[j]] = st
        self._n += 1
        labels = [self.ds.target(i) for i in p.indices]
        if len(tensors) == 1:
            images = tensors[0]
        elif tensors:
            images = torch.cat(tensors)   # more than MAX_BATCH_FDS items: one copy
        else:
            images = None
        if failed:
            errors = [self._item_error(p, k, failed[k]) for k in sorted(failed)]
            if self.loader.on_error == "raise":
                raise errors[0]
            self.loader.failures.extend((e.path, e) for e in errors)
            keep = [r for r, k in enumerate(rows) if k not in failed]
            if images is not None and len(keep) != len(rows):
                images = images[keep]
            labels = [labels[k] for k in rows if k not in failed]
            if images is None:
                images = torch.empty((0,) + (p.shape or (3, 0, 0)), dtype=p.dtype or
                                     torch.float32)
        else:
            labels = [labels[k] for k in rows]
        return images, self.loader.collate_labels(labels)

    def _item_error(self, p, k, why):
        i = p.indices[k]
        source = self.ds.source(i)
        if isinstance(why, DvppError):      # unreadable: the client's reason
            return ItemError(_label(source, i), i, why.code, why.status, why.message)
        status = why
        code = next((c for c, v in _STATUS.items() if v == status), str(status))
        message = f"{code} (the daemon's code for this item)"
        try:  # the batch result carries codes only: ask for this one's reason
            ring = _runner.pool_of(self.loader.client).get(
                _runner.tensor_bytes(p.shape, p.dtype))
            r = self.loader.client.submit(p.specs[k], _runner.source_bytes(p.datas[k]),
                                          ring=ring, check=False, timeout=self.loader.timeout)
            if r.status != 0:
                code, status, message = r.code, r.status, r.message
            r.release()
        except (DvppError, OSError):
            pass
        return ItemError(_label(source, i), i, code, status, message)

    def _wrap(self, e):
        if isinstance(e, Disconnected):
            return Disconnected(f"dvppd went away during the epoch (after {self._n} "
                                f"batches): {e.message}", e.last_error)
        return e


def _size_fixed(spec, shape):
    """@spec with an op that fixes its output size, which a batch needs
    (dvpp_batchjob_tensor): a plan whose ops leave the image as it is (only
    ToTensor, or a crop that became the decode region and an equal-size
    resize skipped) gets a crop of the whole picture at the end, which
    changes no pixel."""
    ops = spec.get("ops", [])
    if any("crop" in op or "resize" in op for op in ops):
        return spec
    _, h, w = shape
    return dict(spec, ops=list(ops) + [{"crop": [0, 0, w - 1, h - 1]}])


def _label(source, index):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"sample {index}"


from ..errors import STATUS as _STATUS  # noqa: E402
