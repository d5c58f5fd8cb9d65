"""A Debian root booted with systemd as PID 1 under systemd-nspawn, for the package tests.

Why: the unit files, sysusers/tmpfiles entries and maintainer scripts of the .debs only
mean something under a real systemd; this host runs none of its own, so the tests boot
one in a container (`systemd-nspawn --boot`) and talk to it from outside.

Public API
----------
``prepare_host()``
    What this host (no systemd of its own) needs before nspawn can boot a container:
    a tmpfs on /run/systemd/nspawn and the nodes
    /run/systemd/inaccessible/{reg,dir,fifo,sock,chr,blk} (mode 0, what nspawn mounts
    over paths it hides). Each is made only when missing. Skips unless root with
    systemd-nspawn (package systemd-container) and nsenter.

``Machine(root, log_dir)`` (context manager: boots on enter, powers off on exit)
    ``boot(timeout)`` runs ``systemd-nspawn -D ROOT --boot --register=no --keep-unit
    --console=pipe`` (the host's network namespace is shared: no --private-network) and
    waits for ``systemctl is-system-running`` to say ``running``; ``degraded`` (or any
    other end state) fails with ``systemctl --failed``; nspawn exiting or no PID 1 within
    the time skips with the console's tail. ``run(argv, user=None, input=None,
    check=True, timeout=60)`` runs a command inside (``nsenter -t <PID 1> -a``, as root,
    or as @user through runuser) and returns the CompletedProcess; ``sh(script)`` the
    same through /bin/sh; ``popen(argv, user=None)`` a background one;
    ``systemctl(*args)``; ``show(unit, *props) -> dict``; ``cursor()`` and
    ``journal(unit=None, after=None) -> list[dict]`` (``journalctl -o json``);
    ``path(p) -> Path`` the host path of @p inside the running machine (through
    /proc/<PID 1>/root, so the container's own /run and /tmp mounts are seen);
    ``write(p, text, mode=0o644)``. ``poweroff(timeout)`` shuts it down cleanly and kills
    it when that does not finish in time: a test never leaves a container running.

Every command has a timeout; one that runs past it fails the test with the command named.
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

INACCESSIBLE = Path("/run/systemd/inaccessible")
NSPAWN_RUN = Path("/run/systemd/nspawn")
# The environment of every command run inside: the host's must not leak in.
INSIDE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
              "LANG": "C.UTF-8", "TERM": "dumb", "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0",
              "HOME": "/root"}


# --------------------------------------------------------------------------
# The host


def _make_inaccessible_node(path, kind):
    """One of systemd's mode-0 'inaccessible' nodes (see prepare_host)."""
    if kind == "reg":
        path.touch()
    elif kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sock":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(str(path))
        finally:
            s.close()
    elif kind == "chr":
        os.mknod(path, stat.S_IFCHR, os.makedev(0, 0))
    elif kind == "blk":
        os.mknod(path, stat.S_IFBLK, os.makedev(0, 0))
    os.chmod(path, 0)


def prepare_host():
    """Make this host able to run systemd-nspawn --boot (see the module
    docstring); returns what it had to do, for the test's log."""
    if os.geteuid() != 0:
        pytest.skip("booting a container with systemd-nspawn needs root")
    for tool, pkg in (("systemd-nspawn", "systemd-container"), ("nsenter", "util-linux"),
                      ("runuser", "util-linux")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian package {pkg})")
    done = []
    NSPAWN_RUN.mkdir(parents=True, exist_ok=True)
    if not os.path.ismount(NSPAWN_RUN):
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(NSPAWN_RUN)],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs on {NSPAWN_RUN}: {r.stderr.strip()}")
        done.append(f"tmpfs on {NSPAWN_RUN}")
    INACCESSIBLE.mkdir(parents=True, exist_ok=True)
    for kind in ("reg", "dir", "fifo", "sock", "chr", "blk"):
        p = INACCESSIBLE / kind
        if not os.path.lexists(p):
            _make_inaccessible_node(p, kind)
            done.append(str(p))
    return done


# --------------------------------------------------------------------------
# The container


def _die_with_parent():
    """preexec_fn of nspawn: SIGTERM when the test process dies, which nspawn
    turns into a clean shutdown of the container (no orphan left running)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _children(pid):
    """PIDs of the direct children of @pid (empty once it is gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _comm(pid):
    """The command name of @pid ('' once it is gone)."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _is_container_init(pid):
    """True when @pid is PID 1 of a PID namespace below ours (NSpid: host pid, 1)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    ids = line.split()[1:]
                    return len(ids) >= 2 and ids[-1] == "1"
    except OSError:
        pass
    return False


class Machine:
    """One booted container (see the module docstring). Owns the nspawn
    process and its console log; the root directory stays the caller's."""

    counter = 0

    def __init__(self, root, log_dir, boot_timeout=60):
        Machine.counter += 1
        self.root = Path(root)
        self.log_dir = Path(log_dir)
        self.name = f"dvpp-test-{os.getpid()}-{Machine.counter}"
        self.console_path = self.log_dir / f"{self.name}.console.log"
        self.boot_timeout = boot_timeout
        self.proc = None        # the systemd-nspawn process
        self.pid1 = None        # the container's PID 1, as the host sees it
        self.boot_seconds = None

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self):
        try:
            self.boot(self.boot_timeout)
        except BaseException:
            self.poweroff()
            raise
        return self

    def __exit__(self, *exc):
        self.poweroff()

    def console(self, lines=40):
        """The last @lines of the container's console (nspawn's own output too)."""
        try:
            text = self.console_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def boot(self, timeout=60):
        """Start systemd-nspawn and wait for a booted, running system."""
        prepare_host()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        cmd = ["systemd-nspawn", "-D", str(self.root), "--boot", "--register=no",
               "--keep-unit", "--console=pipe", f"--machine={self.name}"]
        t0 = time.monotonic()
        with open(self.console_path, "w") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        deadline = t0 + timeout
        while self.pid1 is None:
            if self.proc.poll() is not None:
                pytest.skip(f"systemd-nspawn exited ({self.proc.returncode}) before booting: "
                            f"{self.console(15)}")
            if time.monotonic() > deadline:
                pytest.skip(f"systemd-nspawn started no PID 1 within {timeout} s: "
                            f"{self.console(15)}")
            for c in _children(self.proc.pid):
                # PID 1 of the new namespace, once it is systemd (before its
                # exec it is still nspawn's own child setting the container up)
                if _is_container_init(c) and _comm(c) == "systemd":
                    self.pid1 = c
            time.sleep(0.05)
        state = self._wait_booted(deadline)
        self.boot_seconds = time.monotonic() - t0
        if state != "running":
            failed = self.run(["systemctl", "--failed", "--no-legend", "--plain"],
                              check=False).stdout
            jobs = self.run(["systemctl", "list-jobs", "--no-legend"], check=False).stdout
            pytest.fail(f"the container booted to '{state}', not 'running'; failed units:\n"
                        f"{failed}\njobs:\n{jobs}\nconsole:\n{self.console()}")

    def _wait_booted(self, deadline):
        """The state is-system-running settles on (or 'timeout'). 'offline'
        and 'unknown' are what it says while systemd is still coming up (no
        /run/systemd/system yet, no bus): not an answer."""
        state = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.skip(f"systemd-nspawn exited ({self.proc.returncode}) during boot: "
                            f"{self.console(15)}")
            try:
                r = self._nsenter(["systemctl", "is-system-running"], timeout=10)
                state = r.stdout.strip()
            except subprocess.TimeoutExpired:
                state = "no answer"
            if state in ("running", "degraded", "maintenance", "stopping"):
                return state
            time.sleep(0.1)
        return f"timeout (last: {state or 'no answer'})"

    def poweroff(self, timeout=30):
        """Shut the container down (systemctl poweroff), or kill it when that
        does not end within @timeout seconds. Safe to call more than once."""
        if self.proc is None or self.proc.poll() is not None:
            return
        if self.pid1 is not None:
            try:
                self._nsenter(["systemctl", "poweroff", "--no-block"], timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
        try:
            self.proc.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            pass
        # SIGKILL of the container's PID 1 ends its whole PID namespace.
        for pid in ([self.pid1] if self.pid1 else []) + [self.proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"systemd-nspawn {self.proc.pid} survives SIGKILL")

    # -- commands inside ---------------------------------------------------

    def _argv(self, argv, user=None):
        inner = list(argv)
        if user is not None:
            inner = ["runuser", "-u", user, "--"] + inner
        return ["nsenter", f"--target={self.pid1}", "--all", "--root", "--wd"] + inner

    def _nsenter(self, argv, user=None, input=None, timeout=60):
        return subprocess.run(self._argv(argv, user), input=input, capture_output=True,
                              env=INSIDE_ENV, timeout=timeout,
                              text=not isinstance(input, bytes))

    def run(self, argv, user=None, input=None, check=True, timeout=60):
        """@argv inside the machine (as root, or as @user); the CompletedProcess
        (text unless @input is bytes). @check: a non-zero status fails the test."""
        assert self.pid1 is not None, "the machine is not booted"
        try:
            r = self._nsenter(argv, user=user, input=input, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{argv} inside the machine ran past {timeout} s: {e.stdout!r:.2000}")
        if check and r.returncode != 0:
            pytest.fail(f"{argv} inside the machine: exit {r.returncode}\n"
                        f"stdout: {r.stdout!s:.4000}\nstderr: {r.stderr!s:.4000}")
        return r

    def sh(self, script, **kw):
        """@script through /bin/sh -c inside the machine (see run)."""
        return self.run(["sh", "-c", script], **kw)

    def popen(self, argv, user=None, **kw):
        """@argv inside the machine in the background (the caller waits)."""
        return subprocess.Popen(self._argv(argv, user), env=INSIDE_ENV, **kw)

    def systemctl(self, *args, check=True, timeout=90):
        """systemctl @args inside the machine; a failure (with @check) fails the
        test with the journal's last lines, which say why ("Job ... failed")."""
        argv = ["systemctl", "--no-pager", *args]
        r = self.run(argv, check=False, timeout=timeout)
        if check and r.returncode != 0:
            tail = self.run(["journalctl", "-n", "15", "--no-pager", "-o", "short-monotonic"],
                            check=False).stdout
            pytest.fail(f"{argv} inside the machine: exit {r.returncode}\n{r.stderr.strip()}\n"
                        f"journal:\n{tail}")
        return r

    def show(self, unit, *props):
        """systemctl show @unit -p @props, as a dict (a property systemctl
        prints on several lines, such as a socket's Listen, joined by newlines)."""
        out = self.systemctl("show", unit, *[f"--property={p}" for p in props]).stdout
        got = {}
        for line in out.splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                got[k] = f"{got[k]}\n{v}" if k in got else v
        return got

    def cursor(self):
        """The journal's current cursor: journal(after=cursor()) is what comes next."""
        out = self.run(["journalctl", "-n", "1", "-o", "json", "--no-pager"]).stdout
        lines = out.strip().splitlines()
        return json.loads(lines[-1])["__CURSOR"] if lines else None

    def journal(self, unit=None, after=None, timeout=60):
        """Journal entries (dicts of journalctl -o json) of @unit, after the
        cursor @after when given."""
        argv = ["journalctl", "-o", "json", "--no-pager"]
        if unit:
            argv += ["-u", unit]
        if after:
            argv += [f"--after-cursor={after}"]
        out = self.run(argv, timeout=timeout).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    # -- files inside ------------------------------------------------------

    def path(self, p):
        """The host path of @p (absolute, inside the machine) while it runs."""
        return Path(f"/proc/{self.pid1}/root") / str(p).lstrip("/")

    def write(self, p, text, mode=0o644):
        """Write @text (str or bytes) to @p inside the machine, parents made."""
        host = self.path(p)
        host.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            host.write_bytes(text)
        else:
            host.write_text(text)
        os.chmod(host, mode)
        return host
