"""dvpp.connection: one socket to dvppd and the answers filed under their ids.

_Connection is the plumbing under dvpp.Client: it connects and does the
Hello/Welcome handshake, sends each request as one ``sendmsg`` (fds as
SCM_RIGHTS), and lets one waiting thread at a time read the socket and file
every packet: under its request id (a video channel's packets under the
channel's key), unsolicited Results in the notice queue, Errors answering a
SlotRelease in ``release_errors``. One lock (a ``threading.Condition``)
guards that state. It also gives slots back (SlotRelease), which Results,
channels and the notice queue all need. The requests themselves are
Client's (dvpp.client).
"""

import collections
import errno
import os
import select
import socket
import threading
import time

from . import dvpp_pb2 as pb
from .errors import DvppError, Disconnected, ProtocolError, _error_from
from .guard import _Guards
from .ring import Result
from .wire import MAX_FDS, PROTOCOL, VERSION, _body, _close_fds, _fds_of, _rights

# Unsolicited notices kept for next_notice() (the C client's
# DVPPC_MAX_NOTICES): beyond this the newest are dropped, counted in
# Client.notices_dropped, and their slots given back at once, so a consumer
# that never asks cannot grow the queue (or hold the ring) without bound.
MAX_NOTICES = 1024


class _Connection:
    """The connection state and its reader (see the module); dvpp.Client
    is the class to use, its docstring says what the arguments mean."""

    def __init__(self, path, timeout=None, client_name=None, guard=None):
        self.path = path
        self.timeout = timeout
        if guard is None:
            guard = os.environ.get("DVPP_GUARD", "") not in ("", "0")
        self.guard = bool(guard)
        self._guards = _Guards() if self.guard else None
        self.notices_dropped = 0
        self._cv = threading.Condition()
        self._next_id = 1
        self._reading = False
        self._pending = set()            # ids whose answers are filed
        self._answers = {}               # id -> deque[(seq, Envelope, fds, Ring)]
        self._notices = collections.deque()
        self.release_errors = collections.deque(maxlen=256)  # Errors to SlotRelease
        self._release_ids = set()
        self._gc_releases = collections.deque()  # (Ring, slot, gen) of collected arrays
        self._rings = {}
        self._alias = {}                 # video packet id -> its channel's key
        self._seq = 0
        self._dead = None                # the Disconnected once gone
        self._last_error = None          # an unsolicited Error (before a drop)
        self._recv_cap = 1 << 20
        self.info = None
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        try:
            self._sock.connect(path)
            env = self._envelope()
            env.hello.protocol = PROTOCOL
            env.hello.client = client_name or f"dvpp-python {VERSION}"
            ans, _ = self._call(env, timeout=timeout if timeout is not None else 30.0,
                                what="Welcome")
            if ans.WhichOneof("body") != "welcome":
                raise ProtocolError(f"answer to Hello is {ans.WhichOneof('body')}, not Welcome")
            if ans.welcome.protocol != PROTOCOL:
                raise ProtocolError(f"dvppd speaks protocol {ans.welcome.protocol}, "
                                    f"this client {PROTOCOL}", "protocol")
            self.info = ans.welcome
            # a packet is at most max_inline + 64 KiB (PROTOCOL.md)
            self._recv_cap = int(self.info.max_inline) + (128 << 10)
        except Disconnected as e:
            self._sock.close()
            raise Disconnected(f"dvppd closed the connection before its Welcome "
                               f"(peer not allowed?): {e.message}", e.last_error) from None
        except BaseException:
            self._sock.close()
            raise

    # -- plumbing ------------------------------------------------------------

    def fileno(self):
        return self._sock.fileno()

    @property
    def closed(self):
        return self._dead is not None

    def _envelope(self):
        env = pb.Envelope()
        env.protocol = PROTOCOL
        with self._cv:
            env.id = self._next_id
            self._next_id += 1
        return env

    def _send(self, env, fds=()):
        """Send @env with @fds (borrowed)."""
        self._sendmsg(env, fds, 0)

    def _send_nowait(self, env):
        """Send @env unless the socket buffer is full (then drop it and
        return False): for the reading thread, which must never block."""
        try:
            self._sendmsg(env, (), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        return True

    def _sendmsg(self, env, fds, flags):
        if self._dead is not None:
            raise self._dead
        data = env.SerializeToString()
        try:
            self._sock.sendmsg([data], _rights(fds), flags)
        except BlockingIOError:
            raise
        except OSError as e:
            if e.errno in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.EBADF):
                self._mark_dead(Disconnected(f"send: {e.strerror}", self._last_error))
                raise self._dead from None
            raise

    def _mark_dead(self, exc):
        with self._cv:
            if self._dead is None:
                self._dead = exc
            self._cv.notify_all()

    def _recv_packet(self, timeout):
        """One packet, or None after @timeout seconds. Called by the one
        reading thread, without the lock."""
        if self._sock.fileno() < 0:
            raise Disconnected("the client was closed")
        p = select.poll()
        p.register(self._sock, select.POLLIN)
        ms = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
        if not p.poll(ms):
            return None
        try:
            data, anc, flags, _ = self._sock.recvmsg(
                self._recv_cap, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC)
        except (ConnectionResetError, BrokenPipeError) as e:
            raise Disconnected(f"recv: {e.strerror}", self._last_error) from None
        fds = _fds_of(anc)
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            _close_fds(fds)
            raise ProtocolError("truncated packet from dvppd")
        if not data and not anc:
            raise Disconnected("dvppd closed the connection", self._last_error)
        env = pb.Envelope()
        try:
            env.ParseFromString(data)
        except Exception as e:  # google.protobuf.message.DecodeError
            _close_fds(fds)
            raise ProtocolError(f"undecodable packet from dvppd: {e}") from None
        return env, fds

    def _pin(self, env, body):
        """The Ring a Result or VideoFrame names, as the connection stands
        now (lock held): ids may be given to a later ring after a
        RingClose, so the ring is pinned in the socket's order, on arrival,
        not when someone collects the answer. None for no ring, an unknown
        one, or one being closed."""
        if body == "result":
            rid = env.result.ring
        elif body == "video_frame":
            rid = env.video_frame.result.ring
        else:
            return None
        ring = self._rings.get(rid) if rid else None
        return ring if ring is not None and self._ring_live(ring) else None

    def _file(self, env, fds):
        """File one received packet (lock held)."""
        self._seq += 1
        body = env.WhichOneof("body")
        ring = self._pin(env, body)
        if env.id == 0:
            if body == "result":
                self._notice(env.result, ring)
            elif body == "error":
                self._last_error = _error_from(env.error)
            _close_fds(fds)
            return
        key = self._alias.get(env.id, env.id)
        if key in self._pending:
            self._answers.setdefault(key, collections.deque()).append(
                (self._seq, env, fds, ring))
            return
        _close_fds(fds)
        if body == "error":
            if env.id in self._release_ids:
                self._release_ids.discard(env.id)
                self.release_errors.append(_error_from(env.error))
            else:
                self._last_error = _error_from(env.error)

    def _notice(self, msg, ring):
        """Queue an unsolicited Result (lock held), or past MAX_NOTICES
        drop it, count it and give its slot back at once (without blocking:
        this is the reading thread; a full socket leaves the slot to its
        lease timeout)."""
        if len(self._notices) < MAX_NOTICES:
            self._notices.append(Result(self, 0, msg, self._seq, ring))
            return
        self.notices_dropped += 1
        if msg.ring and msg.status == 0 and ring is not None:
            try:
                self._release_lease(ring, msg.slot, msg.generation, nowait=True)
            except DvppError:
                pass

    def _wait_for(self, take, timeout, what):
        """Read packets until take() (called with the lock held) returns
        something; one thread reads at a time. @timeout 0: read only what
        has already arrived (no waiting)."""
        if self._gc_releases:
            self._flush_gc_releases()
        if timeout is None:
            timeout = self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        idle = False   # timeout 0: the socket had nothing more
        with self._cv:
            while True:
                got = take()
                if got is not None:
                    return got
                if self._dead is not None:
                    raise self._dead
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    if timeout != 0 or idle or self._reading:
                        raise TimeoutError(f"no {what} from dvppd within {timeout} s")
                    left = 0
                if self._reading:
                    self._cv.wait(left)
                    continue
                self._reading = True
                self._cv.release()
                pkt, exc = None, None
                try:
                    pkt = self._recv_packet(left)
                except DvppError as e:
                    exc = e
                finally:
                    self._cv.acquire()
                    self._reading = False
                    self._cv.notify_all()
                if exc is not None:
                    if isinstance(exc, Disconnected):
                        # answers already filed stay there for their waiters
                        self._dead = exc
                        got = take()
                        if got is not None:
                            return got
                    raise exc
                if pkt is not None:
                    self._file(*pkt)
                else:
                    idle = True

    def _take_answer(self, req_id):
        q = self._answers.get(req_id)
        if not q:
            return None
        item = q.popleft()
        if not q:
            del self._answers[req_id]
        return item

    def _wait_answer(self, req_id, timeout, what, final=True):
        """(seq, Envelope, fds, pinned Ring) of @req_id's next answer."""
        try:
            seq, env, fds, ring = self._wait_for(lambda: self._take_answer(req_id),
                                                 timeout, what)
        except TimeoutError:
            raise  # still filed when it comes: wait again
        except BaseException:
            if final:
                self._unfile(req_id)
            raise
        if final:
            self._unfile(req_id)
        return seq, env, fds, ring

    def _send_tracked(self, env, fds=()):
        """Send @env (with @fds, borrowed) as a request whose answers are
        filed under its id (none is, when the send fails)."""
        if self._gc_releases:
            self._flush_gc_releases()
        with self._cv:
            self._pending.add(env.id)
        try:
            self._send(env, fds)
        except BaseException:
            self._unfile(env.id)
            raise

    def _unfile(self, req_id):
        """File no more answers to @req_id (later ones are dropped)."""
        with self._cv:
            self._pending.discard(req_id)

    def _call(self, env, fds=(), timeout=None, what="answer", final=True):
        self._send_tracked(env, fds)
        seq, ans, got_fds, _ = self._wait_answer(env.id, timeout, what, final)
        return ans, got_fds

    def _simple(self, env, want, timeout=None):
        """Send, wait, raise an Error answer, check the body kind."""
        ans, fds = self._call(env, timeout=timeout, what=want)
        _close_fds(fds)
        return _body(ans, want)

    def close(self):
        """Close the connection (the daemon closes its rings and frees
        their slots) and unmap every ring."""
        with self._cv:
            if self._dead is None:
                self._dead = Disconnected("the client was closed")
            rings = list(self._rings.values())
            self._rings.clear()
            for q in self._answers.values():
                for _, _, fds, _ in q:
                    _close_fds(fds)
            self._answers.clear()
            self._cv.notify_all()
        if self._guards is not None:
            self._guards.close()
        for r in rings:
            r.closed = True
            r._unmap()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a thread polling it
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if self._dead is None:
                self.close()
        except Exception:
            pass

    # -- leases --------------------------------------------------------------

    def _ring_live(self, ring):
        """@ring is open on this connection and still the ring of its id."""
        return not ring.closed and not ring._closing and self._rings.get(ring.id) is ring

    def _release_lease(self, ring, slot, generation, nowait=False):
        self._send_release(ring.id, slot, generation, nowait)

    def _release_from_gc(self, ring, slot, generation):
        """SlotRelease for a lease whose last leased array was collected.
        This runs wherever the garbage collector ran: when it is this
        client's own code, holding the lock halfway through a change, the
        release is only queued (and sent by the next request or wait: see
        _flush_gc_releases); otherwise it is sent now, without blocking
        (a full socket queues it too)."""
        item = (ring, slot, generation)
        if self._cv._is_owned():
            self._gc_releases.append(item)
            return
        self._gc_releases.append(item)
        self._flush_gc_releases()

    def _flush_gc_releases(self):
        """Send the queued releases of collected leased arrays (not from
        inside the lock: see _release_from_gc)."""
        q = self._gc_releases
        while q:
            if self._cv._is_owned():
                return
            try:
                ring, slot, generation = q.popleft()
            except IndexError:
                return
            if self._dead is not None or not self._ring_live(ring):
                continue
            env = self._envelope()
            env.slot_release.ring = ring.id
            env.slot_release.slot = slot
            env.slot_release.generation = generation
            with self._cv:
                self._release_ids.add(env.id)
            try:
                if not self._send_nowait(env):
                    q.appendleft((ring, slot, generation))
                    return
            except DvppError:
                return

    def _send_release(self, ring_id, slot, generation, nowait=False):
        """SlotRelease by bare id: its id is remembered so that an Error
        answering it lands in ``release_errors``."""
        env = self._envelope()
        env.slot_release.ring = ring_id
        env.slot_release.slot = slot
        env.slot_release.generation = generation
        with self._cv:
            self._release_ids.add(env.id)
            if len(self._release_ids) > 4096:
                self._release_ids = set(sorted(self._release_ids)[-2048:])
        if nowait:
            self._send_nowait(env)
        else:
            self._send(env)
