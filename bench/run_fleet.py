#!/usr/bin/python3
"""bench/run_fleet.py: req/s of one dvppd against three behind HAProxy (issue 16).

Run it as `DVPP_BUILD=build /usr/bin/python3 bench/run_fleet.py` after `make`;
needs Debian's haproxy (DEB_TEST) and wrk (DEB_BENCH). About 3 minutes.

The fleet comes from tests/scale/fleet.py (fleet.Daemon, and fleet.HAProxy,
which renders the shipped deploy/haproxy/haproxy.cfg with only the bind,
stats socket and server lines changed to loopback), the wrk runs from
bench/run_http.py (its wrk() parser and its POST Lua script). Three daemons
dvppd1..3 run throughout, each on the same config: fleet.daemon_config()
(2 HTTP threads, no Unix socket) with device.channels 2, i.e. every daemon
could use both vCPUs on its own, as bench/run_http.py's daemon does. Two
HAProxy instances are started from the shipped file: one with dvppd1..3 as
its servers, one with dvppd1 only.

Cases, each a closed-loop `wrk -t2 -c16 -dDUR s` with the JPEG as the body:
  (a) direct     dvppd1 itself
  (b) haproxy x3 HAProxy in front of dvppd1..3 (leastconn)
  (c) haproxy x1 HAProxy in front of dvppd1 alone: the balancer's own
                 overhead, isolated
for two requests: POST /v1/preprocess?w=224&h=224&mean=..&std=.. (ImageNet,
a 1x3x224x224 f32 .npy back) and POST /v1/image?w=256&h=256&mode=fit (a
JPEG back). The input is a 640x480 q90 JPEG made here with Pillow (smooth
random colour fields plus grain, seeded). Each target first gets
DVPP_BENCH_WARMUP s of wrk; then DVPP_BENCH_RUNS rounds, each running every
(request, case) once, the order of the cases rotating per round. Reported:
the medians of req/s, the ratios b/a and c/a of the medians (and per round),
and the CPU per request of the daemons and of HAProxy (utime+stime from
/proc/PID/stat read before and 0.25 s after each wrk run, over the requests
wrk counted) plus wrk's own (its rusage). The "CPU-cost ratio" is (a)'s CPU
per request over the case's, all three summed: the req/s ratio that CPU-bound
cores with nothing else on them would give. It is the figure to read when
other processes load the machine, because then req/s also depends on the CPU
share a case wins from them, and three daemons run three times the threads.

Everything (the three daemons, HAProxy and wrk) shares this machine's CPUs
(2 vCPUs on the project VMs): three daemons cannot be faster than one here,
the point is what the balancer costs. Goal: balancer overhead < 10 %, i.e.
b/a >= 0.90 (and c/a, the overhead isolated, shown against the same line);
the verdict is printed for the req/s ratios and for the CPU-cost ratios.

Checks: every wrk run must have rc 0, zero non-2xx responses and zero socket
errors; before the runs, the answers through each HAProxy (several requests,
so that leastconn reaches every daemon) must be byte-identical to the direct
daemon's. A failed check is listed under PROBLEMS and the exit status is 1;
2 when the bench cannot run at all. No time is asserted.

Environment: DVPP_BENCH_RUNS (3), DVPP_BENCH_DURATION (8), DVPP_BENCH_WARMUP
(2), DVPP_BUILD (build). The summary goes to DVPP_BUILD/bench/fleet.json.
"""
import hashlib
import http.client
import io
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "scale"))
sys.path.insert(0, HERE)

import fleet      # noqa: E402  tests/scale/fleet.py
import run_http   # noqa: E402  bench/run_http.py

RUNS = run_http.RUNS
DUR = run_http.DUR
WARMUP = run_http.WARMUP
# -c16: enough requests in flight to keep three daemons busy (and well below
# the shipped maxconn 64 per server, so HAProxy never queues).
run_http.WRK_ARGS = ["-t2", "-c16", "--latency"]

N_DAEMONS = 3
CHANNELS = 2
Q_PRE = run_http.Q_PRE
Q_IMAGE = "/v1/image?w=256&h=256&mode=fit"
REQUESTS = [("preprocess", Q_PRE), ("image", Q_IMAGE)]
CASES = ["a", "b", "c"]
CASE_NAME = {"a": "(a) one dvppd, direct", "b": "(b) three dvppd behind HAProxy",
             "c": "(c) one dvppd behind HAProxy"}
GOAL = 0.90
IDENTITY_PROBES = 6  # requests per balancer and endpoint checked byte for byte


def make_jpeg(path):
    """A 640x480 q90 JPEG with some detail: smooth random colour fields
    (bicubic from 20x15) plus grain, fixed seed."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(16)
    low = Image.fromarray(rng.integers(0, 256, (15, 20, 3), dtype=np.uint8), "RGB")
    base = np.asarray(low.resize((640, 480), Image.BICUBIC), dtype=np.int16)
    grain = rng.integers(-12, 13, base.shape, dtype=np.int16)
    img = Image.fromarray(np.clip(base + grain, 0, 255).astype(np.uint8), "RGB")
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return buf.getvalue()


def start_daemons(dir):
    """dvppd1..N on fleet.daemon_config() with CHANNELS device channels each
    (the same config for all), started."""
    daemons = []
    for i in range(1, N_DAEMONS + 1):
        name = f"dvppd{i}"
        cfg = fleet.daemon_config(fleet.free_port(), drain_delay_s=0)
        cfg["device"]["channels"] = CHANNELS
        with open(os.path.join(dir, f"{name}.json"), "w") as f:
            json.dump(cfg, f)
        d = fleet.Daemon(dir, name)
        daemons.append(d)
        d.start()
    return daemons


def answer(port, path, body):
    """(status, sha256, length) of one POST on a fresh connection."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("POST", path, body=body, headers={"Content-Type": "image/jpeg",
                                                    "Content-Length": str(len(body))})
        r = c.getresponse()
        out = r.read()
        return r.status, hashlib.sha256(out).hexdigest(), len(out)
    finally:
        c.close()


def check_identity(targets, body, problems):
    """Every answer through each balancer equals the direct daemon's."""
    for req, path in REQUESTS:
        st, ref, n = answer(targets["a"], path, body)
        if st != 200:
            problems.append(f"{req}: the direct daemon answered {st}")
            continue
        for case in ("b", "c"):
            got = [answer(targets[case], path, body) for _ in range(IDENTITY_PROBES)]
            bad = [g for g in got if g[0] != 200 or g[1] != ref]
            verdict = "byte-identical" if not bad else f"{len(bad)} DIFFER"
            print(f"  {req:<10} {CASE_NAME[case]}: {IDENTITY_PROBES} answers {verdict} "
                  f"to the direct daemon's ({n:,} B, sha256 {ref[:12]})", flush=True)
            if bad:
                problems.append(f"{req} via {CASE_NAME[case]}: {bad[0]} vs {(200, ref, n)}")


def served_per_daemon(h3, daemons):
    """Requests HAProxy x3 sent to each daemon so far (`show stat` stot)."""
    try:
        st = h3.stat()
    except (OSError, IndexError):
        return None
    return {d.name: int(st.get(d.name, {}).get("stot") or 0) for d in daemons}


def cpu(pids):
    v = [run_http.proc_cpu_s(p) for p in pids]
    return None if None in v else sum(v)


def one_run(port, path, lua, dur, daemon_pids, haproxy_pid):
    d0, h0 = cpu(daemon_pids), (cpu([haproxy_pid]) if haproxy_pid else 0.0)
    res = run_http.wrk(f"http://127.0.0.1:{port}{path}", dur, script=lua)
    time.sleep(0.25)  # the requests in flight when wrk stopped
    d1, h1 = cpu(daemon_pids), (cpu([haproxy_pid]) if haproxy_pid else 0.0)
    n = res.get("requests")
    if n and None not in (d0, d1, h0, h1):
        res["dvppd_cpu_ms_per_req"] = (d1 - d0) * 1e3 / n
        res["haproxy_cpu_ms_per_req"] = (h1 - h0) * 1e3 / n
    return res


def wrk_problem(res):
    if res.get("error") or res.get("rc") != 0 or res.get("req_s") is None:
        return res.get("error") or f"wrk rc {res.get('rc')}"
    if res["non2xx"] or res["socket_errors"]:
        return (f"non-2xx {res['non2xx']}, "
                f"{res.get('socket_errors_detail', 'socket errors 0')}")
    return None


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def bench(tmp):
    problems = []
    image = os.path.join(tmp, "in640x480_q90.jpg")
    body = make_jpeg(image)
    lua = os.path.join(tmp, "post.lua")
    with open(lua, "w") as f:
        f.write(run_http.WRK_POST_LUA.format(path=image))
    ncpu, load0 = os.cpu_count(), os.getloadavg()[0]
    print(f"image: 640x480 q90 JPEG made with Pillow, {len(body):,} B", flush=True)

    ddir, h3dir, h1dir = (os.path.join(tmp, x) for x in ("fleet", "haproxy3", "haproxy1"))
    for x in (ddir, h3dir, h1dir):
        os.makedirs(x)
    state = {"daemons": [], "balancers": []}
    try:
        daemons = state["daemons"] = start_daemons(ddir)
        h3 = fleet.HAProxy(h3dir, daemons)
        state["balancers"].append(h3)
        h3.start()
        h1 = fleet.HAProxy(h1dir, daemons[:1])
        state["balancers"].append(h1)
        h1.start()
        targets = {"a": daemons[0].port, "b": h3.port, "c": h1.port}
        pids = {"a": ([daemons[0].pid()], None),
                "b": ([d.pid() for d in daemons], h3.proc.pid),
                "c": ([daemons[0].pid()], h1.proc.pid)}
        print(f"dvppd x{N_DAEMONS} ({fleet.DVPPD}), each: http.threads 2, device.channels "
              f"{CHANNELS}, no Unix socket; ports {[d.port for d in daemons]}", flush=True)
        print(f"HAProxy x3 on :{h3.port}, HAProxy x1 (dvppd1 only) on :{h1.port}, both from "
              f"deploy/haproxy/haproxy.cfg", flush=True)

        check_identity(targets, body, problems)

        if WARMUP > 0:
            for req, path in REQUESTS:
                for case in CASES:
                    res = run_http.wrk(f"http://127.0.0.1:{targets[case]}{path}", WARMUP,
                                       script=lua)
                    if wrk_problem(res):
                        problems.append(f"warm-up {req} {case}: {wrk_problem(res)}")
        served0 = served_per_daemon(h3, daemons)

        runs = {(req, case): [] for req, _ in REQUESTS for case in CASES}
        argv = None
        for rnd in range(RUNS):
            order = CASES[rnd % 3:] + CASES[:rnd % 3]
            for req, path in REQUESTS:
                for case in order:
                    dp, hp = pids[case]
                    res = one_run(targets[case], path, lua, DUR, dp, hp)
                    argv = res["argv"].replace(lua, "post.lua")
                    res["round"] = rnd + 1
                    runs[(req, case)].append(res)
                    bad = wrk_problem(res)
                    if bad:
                        problems.append(f"round {rnd + 1} {req} {CASE_NAME[case]}: {bad}")
                    print(f"  round {rnd + 1} {req:<10} {case}: {fmt(res['req_s'], '.1f')} req/s"
                          f"{'  PROBLEM: ' + bad if bad else ''}", flush=True)
        served1 = served_per_daemon(h3, daemons)
    finally:
        for b in state["balancers"]:
            b.stop()
        fleet.stop_all(state["daemons"])

    report(runs, argv, served0, served1, ncpu, load0, problems)
    return 1 if problems else 0


def run_cpu_ms(r):
    """CPU ms per request of everything a run needs: the daemons, HAProxy and
    wrk (None when a figure is missing)."""
    parts = [r.get("dvppd_cpu_ms_per_req"), r.get("haproxy_cpu_ms_per_req"),
             r.get("wrk_cpu_ms_per_req")]
    return None if None in parts else sum(parts)


def report(runs, argv, served0, served1, ncpu, load0, problems):
    print()
    print(f"command: {argv} URL (post.lua POSTs the JPEG as the body); "
          f"{RUNS} rounds, medians (min-max); load average {load0:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end")
    print(f"NOTE: the {N_DAEMONS} daemons, HAProxy and wrk all share this machine's {ncpu} "
          f"vCPUs: three daemons cannot be faster than one here; the point is the "
          f"balancer's overhead.")
    print()
    print("| request | case | req/s | min-max | p99 ms | CPU ms/req dvppd / HAProxy / all "
          "| req/s ratio to (a), per round | CPU-cost ratio |")
    print("|---|---|---|---|---|---|---|---|")
    summary = {}
    for req, _ in REQUESTS:
        a = med([r["req_s"] for r in runs[(req, "a")]])
        a_cpu = med([run_cpu_ms(r) for r in runs[(req, "a")]])
        for case in CASES:
            rr = runs[(req, case)]
            rs = [r["req_s"] for r in rr if r["req_s"] is not None]
            m = med(rs)
            ratio = m / a if m and a else None
            per_round = [(x["req_s"] / y["req_s"]) if x["req_s"] and y["req_s"] else None
                         for x, y in zip(rr, runs[(req, "a")])]
            all_cpu = med([run_cpu_ms(r) for r in rr])
            # What req/s would be on otherwise idle, CPU-bound cores: the
            # inverse ratio of the CPU every request costs.
            cpu_ratio = a_cpu / all_cpu if a_cpu and all_cpu else None
            if case == "a":
                rtxt, ctxt = "1.00x", "1.00x"
            else:
                rtxt = (f"**{ratio:.2f}x** ({', '.join(fmt(p, '.2f') for p in per_round)})"
                        if ratio is not None else "-")
                ctxt = f"{fmt(cpu_ratio, '.2f')}x"
            hcpu = med([r.get("haproxy_cpu_ms_per_req") for r in rr]) if case != "a" else None
            print(f"| {req} | {CASE_NAME[case]} | {fmt(m, '.1f')} | "
                  f"{fmt(min(rs) if rs else None, '.1f')}-{fmt(max(rs) if rs else None, '.1f')} | "
                  f"{fmt(med([r.get('p99_ms') for r in rr]), '.1f')} | "
                  f"{fmt(med([r.get('dvppd_cpu_ms_per_req') for r in rr]), '.2f')} / "
                  f"{fmt(hcpu, '.2f') if case != 'a' else '-'} / {fmt(all_cpu, '.2f')} | "
                  f"{rtxt} | {ctxt} |")
            summary[f"{req}/{case}"] = {"req_s_median": m, "ratio_to_a": ratio,
                                        "per_round_ratio": per_round,
                                        "cpu_ms_per_req_all": all_cpu,
                                        "cpu_cost_ratio": cpu_ratio, "runs": rr}
    print()
    print("CPU ms/req: utime+stime per request counted by wrk; 'all' adds wrk's own. "
          "CPU-cost ratio = (a)'s all / this row's all: the req/s ratio CPU-bound, otherwise "
          "idle cores would give. Under load from other processes the req/s ratios also "
          "reflect the CPU share each case wins (three daemons run 3x the threads).")
    if served0 is not None and served1 is not None:
        spread = {k: served1[k] - served0[k] for k in served1}
        print("HAProxy x3 spread over the timed runs (show stat stot): "
              + ", ".join(f"{k} {v:,}" for k, v in spread.items()))
        summary["haproxy3_spread"] = spread
    print(f"goal: balancer overhead < 10 %, i.e. ratio to (a) >= {GOAL:.2f}")
    for req, _ in REQUESTS:
        for case in ("b", "c"):
            x = summary[f"{req}/{case}"]
            r, cr = x["ratio_to_a"], x["cpu_cost_ratio"]
            print(f"  {req:<10} {case}/a req/s {fmt(r, '.2f')}: "
                  f"{'met' if r is not None and r >= GOAL else 'NOT met'}; "
                  f"CPU-cost {fmt(cr, '.2f')}: "
                  f"{'met' if cr is not None and cr >= GOAL else 'NOT met'}")
    if problems:
        print("\nPROBLEMS:")
        for p in problems:
            print(f"  {p}")
    else:
        print("\nall wrk runs: 0 non-2xx, 0 socket errors; answers through HAProxy "
              "byte-identical to the direct daemon's")
    out = os.path.join(run_http.BUILD, "bench", "fleet.json")
    try:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump({"argv": argv, "duration_s": DUR, "rounds": RUNS, "vcpus": ncpu,
                       "daemons": N_DAEMONS, "channels": CHANNELS, "http_threads": 2,
                       "goal": GOAL, "results": summary, "problems": problems}, f, indent=1)
        print(f"summary: {os.path.relpath(out, ROOT)}")
    except OSError as e:
        print(f"summary not written: {e}")


def main():
    for tool in ("wrk", "haproxy"):
        if shutil.which(tool) is None:
            print(f"bench/run_fleet.py: {tool} not found (make deps DEB_EXTRA=\"wrk\")",
                  file=sys.stderr)
            return 2
    if not os.access(fleet.DVPPD, os.X_OK):
        print(f"bench/run_fleet.py: {fleet.DVPPD} not built (make BUILD=...)", file=sys.stderr)
        return 2

    def on_signal(sig, _frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    tmp = tempfile.mkdtemp(prefix="dvpp-fleet-bench-")
    try:
        return bench(tmp)
    except fleet.FleetError as e:
        print(f"bench/run_fleet.py: cannot run: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
