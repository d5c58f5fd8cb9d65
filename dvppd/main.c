/* dvppd: the daemon process.
 *
 * Configuration (defaults, file, flags), logging, the settings a reload
 * replaces (dvppd_live), the device model, the Unix-socket front end
 * (dvppd_sock, shared-memory rings for local apps) and the HTTP front end.
 * The main thread then only handles signals and the service manager:
 * SIGHUP re-reads the configuration and applies what can change live;
 * SIGINT/SIGTERM stop accepting, finish every request in flight (up to
 * service.drain_timeout_s), then free the device. Under systemd it takes
 * the sockets passed to it and sends READY/STATUS/WATCHDOG/RELOADING/
 * STOPPING (dvppd_service).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_log.h"
#include "device/dvpp_batchjob.h"
#include "dvppd_config.h"
#include "dvppd_faults.h"
#include "dvppd_http.h"
#include "dvppd_live.h"
#include "dvppd_metrics.h"
#include "dvppd_service.h"
#include "dvppd_sock.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

/* How often the main loop wakes (status, watchdog) when systemd asks for
 * nothing faster. */
#define TICK_NS (1000ull * 1000 * 1000)
/* STATUS= lines this often. */
#define STATUS_EVERY_NS (5ull * 1000 * 1000 * 1000)

/* The command line: kept, because a reload re-applies its flags over the
 * re-read file. */
typedef struct cli {
    const char *config, *http, *socket, *channels, *level;
    bool check;
} cli;

/* Everything the main thread holds. */
typedef struct daemon_state {
    cli o;
    dvppd_config cfg;            /* as started (restart-only keys) */
    dvppd_live *live;
    dvppd_metrics metrics;
    dvpp_device *device;
    dvppd_sock *sock;
    dvppd_http *http;
    dvppd_trace_store *traces;   /* finished traces and the capture (both front ends) */
    dvppd_faults faults;         /* DVPPD_FAULTS: tests only */
    uint64_t watchdog_usec;      /* 0: systemd wants no pings */
    dvppd_watchdog wd;
    uint64_t ticks, next_status_ns;
} daemon_state;

/* device.channels as a count: 0 means the default (CPU count, capped). */
static unsigned effective_channels(const dvppd_config *c)
{
    dvpp_device_config dc;

    if (c->channels)
        return c->channels;
    dvpp_device_config_default(&dc);
    return dc.channels[DVPP_ENGINE_VPC];
}

/* Engine @e's channels: its device.engine_channels entry, else
 * device.channels. */
static unsigned engine_channels(const dvppd_config *c, int e)
{
    return c->engine_channels[e] ? c->engine_channels[e] : effective_channels(c);
}

/* The device model from the configuration: every engine gets the
 * configured channels (0 = the default, CPU count capped at 8) and queue
 * depth, the pipeline backend on VPC, the admission budgets. */
static dvpp_status start_device(const dvppd_config *c, const dvppd_faults *faults,
                                dvpp_device **out, dvpp_err *err)
{
    dvpp_device_config dc;
    dvpp_status st;

    dvpp_device_config_default(&dc);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        dc.channels[e] = engine_channels(c, e);
        dc.queue_depth[e] = c->queue_depth;
    }
    dc.fault_stall_ns = faults->stall_ns;
    dc.fault_deaf_ns = faults->deaf_ns;
    dc.pixel_budget = c->max_pixels_in_flight;
    dc.byte_budget = c->max_bytes_in_flight;
    dc.idle_trim_ms = c->idle_trim_ms;
    dc.idle_keep_bytes = c->idle_keep_bytes;
    st = dvpp_pipe_device_new(&dc, 0, &c->limits, out, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "device: %u channel(s) per engine%s, queue %u, "
                 "budget %llu pixels / %llu bytes in flight", effective_channels(c),
                 memcmp(c->engine_channels, (uint32_t[DVPP_ENGINE_COUNT]){0},
                        sizeof(c->engine_channels)) ? " (some set by device.engine_channels)"
                                                    : "",
                 c->queue_depth,
                 (unsigned long long)dc.pixel_budget,
                 (unsigned long long)dc.byte_budget);
    return st;
}

/* Stop: wait until every admitted job has finished (queued and running
 * gauges at zero, no batch open), up to @timeout_s, before the device is
 * freed. Front ends stop submitting before this is called. */
/* Jobs queued or running, and batches open, from @c. */
static uint64_t device_busy(const dvpp_device_counters *c)
{
    uint64_t busy = c->batches_open;

    for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
        busy += c->engine[e].queued + c->engine[e].running;
    return busy;
}

static void drain_device(dvpp_device *d, unsigned timeout_s)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    uint64_t deadline = dvpp_now_ns() + (uint64_t)timeout_s * 1000000000u;

    for (;;) {
        dvpp_device_counters c;
        uint64_t busy;
        dvpp_device_get_counters(d, &c);
        busy = device_busy(&c);
        if (busy == 0)
            return;
        if (dvpp_now_ns() > deadline) {
            dvpp_log(DVPP_LOG_WARN, "stop: %llu job(s) still in flight after "
                     "%u s; canceling them", (unsigned long long)busy, timeout_s);
            return;
        }
        nanosleep(&tick, NULL);
    }
}

/* Under systemd, stderr goes to the journal: "<N>" priority prefixes and
 * no timestamps (journald stamps lines itself). */
static void journal_sink(void *ctx, dvpp_log_level level, const char *line)
{
    (void)ctx;
    fprintf(stderr, "<%d>%s\n", (int)level, line);
}

static void report_start(const dvppd_config *c)
{
    dvpp_log(DVPP_LOG_INFO, "dvppd %s starting (pid %ld), config: %s",
             DVPP_VERSION, (long)getpid(), c->source);
    dvpp_log(DVPP_LOG_INFO, "simd: %s (cpu supports %s%s%s; cap with DVPP_SIMD)",
             dvpp_simd_name(dvpp_simd_active()), dvpp_simd_name(dvpp_cpu_detect()),
             *dvpp_cpu_extras() ? "; not used: " : "", dvpp_cpu_extras());
    dvpp_log(DVPP_LOG_INFO, "codecs: jpeg (%s), png", dvpp_jpeg_library());
    dvpp_log(DVPP_LOG_INFO, "limits: %llu encoded bytes, %llu pixels, %u px "
             "per side, %u JPEG scans",
             (unsigned long long)c->limits.max_encoded_bytes,
             (unsigned long long)c->limits.max_pixels, c->limits.max_side,
             c->limits.max_jpeg_scans);
}

/* The Unix-socket front end on systemd's socket @fd, else on socket.path
 * unless it is "". */
static dvpp_status start_sock(daemon_state *d, int fd, dvpp_err *err)
{
    const dvppd_config *c = &d->cfg;
    dvppd_sock_env env = {c, d->device, d->live, fd, d->traces};
    dvpp_status st;

    if (fd < 0 && !c->socket_path[0]) {
        dvpp_log(DVPP_LOG_INFO, "socket: disabled (socket.path is empty)");
        return DVPP_OK;
    }
    st = dvppd_sock_start(&env, &d->sock, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "socket: listening on %s (mode %04o, %u connections max, "
                 "lease timeout %u ms)", fd >= 0 ? "the socket systemd passed"
                 : dvppd_sock_path(d->sock), c->socket_mode, c->sock.max_connections,
                 c->sock.lease_timeout_ms);
    return st;
}

/* The HTTP front end on systemd's socket @fd, else on http.listen unless
 * its port is 0. */
static dvpp_status start_http(daemon_state *d, int fd, dvpp_err *err)
{
    const dvppd_config *c = &d->cfg;
    dvppd_http_env env = {c, d->device, &d->metrics, d->live, fd, d->sock, d->traces};
    dvpp_status st;

    if (fd < 0 && c->http_port == 0) {
        dvpp_log(DVPP_LOG_INFO, "http: disabled (port 0)");
        return DVPP_OK;
    }
    st = dvppd_http_start(&env, &d->http, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "http: listening on %s%s:%u (%u threads, %u connections "
                 "max, request deadline %u s)", fd >= 0 ? "the socket systemd passed, " : "",
                 fd >= 0 ? "port" : c->http_addr, dvppd_http_port(d->http), c->http.threads,
                 c->http.max_connections, c->http.request_timeout_s);
    return st;
}

/* Block SIGINT/SIGTERM/SIGHUP before any thread starts, so every thread
 * inherits the mask and only the main thread receives them (sigtimedwait). */
static int block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    return pthread_sigmask(SIG_BLOCK, set, NULL);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: dvppd [--config FILE] [--http ADDR:PORT] [--socket PATH]\n"
               "             [--channels N] [--log-level err|warn|info|debug]\n"
               "             [--check-config] [--version]\n"
               "Without --config, %s is read when it exists, else the built-in\n"
               "defaults apply. Flags override the file. --check-config prints the\n"
               "effective configuration as JSON and exits (1 when it is invalid).\n",
            DVPPD_DEFAULT_CONFIG);
}

static int parse_cli(int argc, char **argv, cli *o)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"http", required_argument, NULL, 'H'},
        {"socket", required_argument, NULL, 's'},
        {"channels", required_argument, NULL, 'n'},
        {"log-level", required_argument, NULL, 'l'},
        {"check-config", no_argument, NULL, 'k'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    memset(o, 0, sizeof(*o));
    while ((opt = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c': o->config = optarg; break;
        case 'H': o->http = optarg; break;
        case 's': o->socket = optarg; break;
        case 'n': o->channels = optarg; break;
        case 'l': o->level = optarg; break;
        case 'k': o->check = true; break;
        case 'V': printf("dvppd %s\n", DVPP_VERSION); exit(0);
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "dvppd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

/* File, then flags, over the defaults. */
static dvpp_status build_config(const cli *o, dvppd_config *c, dvpp_err *err)
{
    dvpp_status st = DVPP_OK;
    char *end;

    dvppd_config_defaults(c);
    if (o->config)
        st = dvppd_config_load(c, o->config, err);
    else if (access(DVPPD_DEFAULT_CONFIG, F_OK) == 0)
        st = dvppd_config_load(c, DVPPD_DEFAULT_CONFIG, err);
    if (st == DVPP_OK && o->http)
        st = dvppd_config_set_listen(c, o->http, err);
    if (st == DVPP_OK && o->socket) {
        if (strlen(o->socket) >= sizeof(c->socket_path))
            return dvpp_err_set(err, DVPP_EINVAL, "socket", "--socket path too long");
        snprintf(c->socket_path, sizeof(c->socket_path), "%s", o->socket);
    }
    if (st == DVPP_OK && o->channels) {
        unsigned long n = strtoul(o->channels, &end, 10);
        if (*end || *o->channels == '\0' || n > 256)
            return dvpp_err_set(err, DVPP_EINVAL, "channels",
                                "--channels wants 0..256 (0 = CPUs)");
        c->channels = (uint32_t)n;
    }
    if (st == DVPP_OK && o->level && !dvpp_log_level_parse(o->level, &c->log_level))
        return dvpp_err_set(err, DVPP_EINVAL, "log-level",
                            "--log-level wants err, warn, info or debug");
    return st;
}

/* --- reload ---------------------------------------------------------------- */

/* Put @next's live keys into effect: log level, channel counts, the
 * workers' limits; then publish it so new requests use it. Takes @next. */
static void apply_live(daemon_state *d, const dvppd_settings *running, dvppd_settings *next)
{
    const dvppd_config *was = &running->cfg, *now = &next->cfg;
    dvpp_err err;

    if (now->log_level != was->log_level)
        dvpp_log_set_level(now->log_level);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        unsigned ch = engine_channels(now, e);
        if (ch == engine_channels(was, e))
            continue;
        if (dvpp_device_set_channels(d->device, (dvpp_engine)e, ch, &err) != DVPP_OK &&
            err.status != DVPP_EUNSUPPORTED)
            dvpp_log(DVPP_LOG_WARN, "reload: %s channels stay at %u: %s",
                     dvpp_engine_name(e), dvpp_device_channels(d->device, (dvpp_engine)e),
                     err.msg);
        else
            dvpp_log(DVPP_LOG_INFO, "reload: %u %s channel(s)", ch, dvpp_engine_name(e));
    }
    if (memcmp(&now->limits, &was->limits, sizeof(now->limits)) != 0)
        dvpp_pipe_device_set_limits(d->device, &now->limits, NULL);
    dvppd_live_publish(d->live, next);
}

/* SIGHUP: re-read the file with the same flags on top, validate it (the
 * AIPP files too), keep the restart-only keys as they run, apply the rest.
 * On any error the running settings stay and the log says why. */
static void reload(daemon_state *d)
{
    const dvppd_settings *running = dvppd_live_get(d->live);
    const char *changed[32];
    dvppd_settings *next = NULL;
    dvppd_config cfg;
    unsigned n;
    dvpp_err err;

    dvppd_service_notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the "
                         "configuration", (unsigned long long)(dvpp_now_ns() / 1000));
    dvpp_err_clear(&err);
    if (build_config(&d->o, &cfg, &err) != DVPP_OK ||
        dvppd_settings_new(&cfg, &next, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_ERR, "reload failed: %s; keeping the running configuration",
                 err.msg);
        dvppd_metrics_reload(&d->metrics, false, running->generation);
        dvppd_service_notify("READY=1\nSTATUS=reload failed: %.200s", err.msg);
        dvppd_settings_put(running);
        return;
    }
    n = dvppd_settings_carry(&running->cfg, &next->cfg, changed, 32);
    for (unsigned i = 0; i < n && i < 32; i++)
        dvpp_log(DVPP_LOG_WARN, "reload: %s changed; it takes effect at the next restart",
                 changed[i]);
    apply_live(d, running, next);
    dvpp_log(DVPP_LOG_INFO, "reloaded %s (settings generation %llu)", next->cfg.source,
             (unsigned long long)dvppd_live_generation(d->live));
    dvppd_metrics_reload(&d->metrics, true, dvppd_live_generation(d->live));
    dvppd_service_notify("READY=1\nSTATUS=configuration reloaded");
    dvppd_settings_put(running);
}

/* --- the main loop -------------------------------------------------------------- */

/* STATUS= for systemctl status, and the watchdog ping when the engines
 * and the socket thread are moving. */
static void tick(daemon_state *d, uint64_t now)
{
    dvpp_device_counters c;
    uint64_t done = 0, turns = d->ticks;
    unsigned conns = 0;

    d->ticks++;
    dvppd_http_idle(d->http, d->cfg.idle_trim_ms);
    dvpp_device_get_counters(d->device, &c);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
        done += c.engine[e].done;
    if (d->sock)
        dvppd_sock_status(d->sock, &turns, &conns);
    if (d->watchdog_usec &&
        dvppd_watchdog_tick(&d->wd, now, device_busy(&c), c.progress, turns))
        dvppd_service_notify("WATCHDOG=1");
    if (now >= d->next_status_ns) {
        uint64_t queued = 0, running = 0;
        for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
            queued += c.engine[e].queued, running += c.engine[e].running;
        dvppd_service_notify("STATUS=serving: %ld HTTP request(s) in flight, %llu job(s) "
                             "queued, %llu running, %llu done; %u socket connection(s)",
                             dvppd_http_inflight(d->http), (unsigned long long)queued,
                             (unsigned long long)running, (unsigned long long)done, conns);
        d->next_status_ns = now + STATUS_EVERY_NS;
    }
}

/* Serve until SIGINT/SIGTERM: reload on SIGHUP, tick in between. */
static int serve(daemon_state *d, const sigset_t *set)
{
    uint64_t step = TICK_NS;

    d->watchdog_usec = dvppd_service_watchdog_usec();
    if (d->watchdog_usec) {
        /* Ping at a quarter of the interval; stop after half of it without
         * progress, so systemd acts within 1.5 intervals of a hang. */
        if (d->watchdog_usec * 1000 / 4 < step)
            step = d->watchdog_usec * 1000 / 4;
        dvppd_watchdog_init(&d->wd, dvpp_now_ns(), d->watchdog_usec * 1000 / 2);
        dvpp_log(DVPP_LOG_INFO, "watchdog: every %llu ms",
                 (unsigned long long)(d->watchdog_usec / 1000));
    }
    for (;;) {
        struct timespec ts = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
        int sig = sigtimedwait(set, NULL, &ts);
        if (sig == SIGHUP) {
            dvpp_log(DVPP_LOG_INFO, "received SIGHUP, reloading %s",
                     d->o.config ? d->o.config : DVPPD_DEFAULT_CONFIG);
            reload(d);
        } else if (sig == SIGINT || sig == SIGTERM) {
            dvpp_log(DVPP_LOG_INFO, "received %s, stopping", strsignal(sig));
            return 0;
        }
        tick(d, dvpp_now_ns());
    }
}

/* Stop: take nothing new, answer everything in flight, let the device
 * finish what is left (batch jobs nobody waits for), within the drain time. */
/* Whole seconds left until @deadline_ns, rounded up (0 once past it). */
static unsigned seconds_left(uint64_t deadline_ns)
{
    uint64_t now = dvpp_now_ns();

    return now >= deadline_ns ? 0 : (unsigned)((deadline_ns - now + 999999999u) / 1000000000u);
}

/* The HTTP front end could not stop: a request waits on a job that
 * ignores its cancellation and may, at any moment, touch the socket front
 * end's rings, the device and the settings. Nothing it uses can be freed,
 * so the process ends as it is (the kernel reclaims it all; a stale socket
 * file is replaced at the next start), with status 1: the stop did not
 * finish its work. */
static _Noreturn void abandon_stop(void)
{
    dvpp_log(DVPP_LOG_ERR, "stop: exiting with HTTP requests still running");
    dvppd_service_notify("STATUS=stopped with HTTP requests still running");
    _exit(1);
}

/* The stop's first stage, service.drain_delay_s long: everything is still
 * served, but /readyz answers 503 and answers close their connections, so
 * that the load balancers in front (their health checks, every few
 * seconds) take the daemon out before its listener closes. A second
 * SIGTERM or SIGINT ends the wait at once. */
static void leave_rotation(daemon_state *d, const sigset_t *set, unsigned delay_s)
{
    uint64_t until = dvpp_now_ns() + (uint64_t)delay_s * 1000000000u;

    dvppd_http_leave(d->http);
    if (!delay_s)
        return;
    dvpp_log(DVPP_LOG_INFO, "stop: /readyz answers 503; serving %u s more before the "
             "drain (service.drain_delay_s)", delay_s);
    dvppd_service_notify("STOPPING=1\nSTATUS=leaving rotation: /readyz 503 for %u s", delay_s);
    for (uint64_t now = dvpp_now_ns(); now < until; now = dvpp_now_ns()) {
        uint64_t left = until - now, step = left < TICK_NS ? left : TICK_NS;
        struct timespec ts = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
        int sig = sigtimedwait(set, NULL, &ts);

        if (sig == SIGINT || sig == SIGTERM) {
            dvpp_log(DVPP_LOG_INFO, "received %s, draining now", strsignal(sig));
            return;
        }
        tick(d, dvpp_now_ns());
    }
}

static void stop(daemon_state *d, const sigset_t *sigs)
{
    const dvppd_settings *set = dvppd_live_get(d->live);
    unsigned drain_s = set->cfg.drain_timeout_s, delay_s = set->cfg.drain_delay_s;
    uint64_t deadline;

    dvppd_settings_put(set);
    leave_rotation(d, sigs, delay_s);
    /* One deadline for the three drain stages, so the drain stays within
     * service.drain_timeout_s (and, with the delay, below TimeoutStopSec). */
    deadline = dvpp_now_ns() + (uint64_t)drain_s * 1000000000u;
    dvppd_service_notify("STOPPING=1\nSTATUS=draining: %ld HTTP request(s) in flight",
                         dvppd_http_inflight(d->http));
    dvppd_http_drain(d->http);
    dvppd_sock_drain(d->sock);
    /* The HTTP front end first, and whole: it delivers into the socket
     * front end's rings and runs on the device, so those are stopped and
     * freed only once no HTTP request can run (or never, see above). */
    if (!dvppd_http_stop(d->http, seconds_left(deadline)))
        abandon_stop();
    d->http = NULL;
    dvppd_sock_stop(d->sock, seconds_left(deadline));
    d->sock = NULL;
    drain_device(d->device, seconds_left(deadline));
}

/* Settings, device, socket, HTTP: in that order, the HTTP front end last
 * because it delivers into the socket's named rings. */
static dvpp_status start(daemon_state *d, dvpp_err *err)
{
    dvppd_passed_fds fds;
    dvpp_status st = dvppd_service_take_fds(&fds, err);

    if (st != DVPP_OK)
        return st;
    if (fds.http >= 0 || fds.unix_sock >= 0) {
        dvpp_log(DVPP_LOG_INFO, "systemd passed %s%s%s", fds.http >= 0 ? "the HTTP socket" : "",
                 fds.http >= 0 && fds.unix_sock >= 0 ? " and " : "",
                 fds.unix_sock >= 0 ? "the Unix socket" : "");
        /* Under the shipped unit (PrivateNetwork=yes) an address the daemon
         * binds itself is unreachable: say so rather than serve nobody. */
        if (fds.http < 0 && d->cfg.http_port)
            dvpp_log(DVPP_LOG_WARN, "systemd passed no HTTP socket: binding http.listen "
                     "%s:%u here (unreachable if the unit has PrivateNetwork=yes; add "
                     "ListenStream= to dvppd.socket)", d->cfg.http_addr, d->cfg.http_port);
        if (fds.unix_sock < 0 && d->cfg.socket_path[0])
            dvpp_log(DVPP_LOG_WARN, "systemd passed no Unix socket: binding socket.path %s "
                     "here (add ListenSequentialPacket= to dvppd.socket)", d->cfg.socket_path);
    }
    st = start_device(&d->cfg, &d->faults, &d->device, err);
    if (st == DVPP_OK)
        st = dvppd_trace_store_new(&d->cfg.trace, &d->traces, err);
    if (st == DVPP_OK) {
        st = start_sock(d, fds.unix_sock, err);
        fds.unix_sock = -1; /* owned by the front end now */
    }
    /* HTTP last: its /readyz says 200 from the first connection, which must
     * find the device and the socket front end up. */
    if (st == DVPP_OK) {
        st = start_http(d, fds.http, err);
        fds.http = -1;
    }
    if (fds.unix_sock >= 0)
        close(fds.unix_sock);
    if (fds.http >= 0)
        close(fds.http);
    return st;
}

int main(int argc, char **argv)
{
    daemon_state d;
    dvppd_settings *set = NULL;
    sigset_t sigs;
    dvpp_err err;
    int rc;

    memset(&d, 0, sizeof(d));
    rc = parse_cli(argc, argv, &d.o);
    if (rc)
        return rc;
    dvpp_err_clear(&err);
    if (build_config(&d.o, &d.cfg, &err) != DVPP_OK ||
        dvppd_settings_new(&d.cfg, &set, &err) != DVPP_OK) {
        fprintf(stderr, "dvppd: configuration: %s\n", err.msg);
        return 1;
    }
    if (d.o.check) {
        char *dump = dvppd_config_dump(&d.cfg);
        printf("%s\n", dump ? dump : "{}");
        free(dump);
        dvppd_settings_put(set);
        return 0;
    }
    if (dvppd_faults_parse(&d.faults, getenv("DVPPD_FAULTS"), &err) != DVPP_OK) {
        fprintf(stderr, "dvppd: %s\n", err.msg);
        dvppd_settings_put(set);
        return 1;
    }
    /* A log write to a closed pipe (journald gone) must not kill the
     * daemon; sockets already send with MSG_NOSIGNAL. */
    signal(SIGPIPE, SIG_IGN);
    dvpp_log_configure(d.cfg.log_level, getenv("JOURNAL_STREAM") ? journal_sink : NULL,
                       NULL);
    report_start(&d.cfg);
    if (d.faults.alloc_fail_every || d.faults.stall_ns || d.faults.deaf_ns)
        dvpp_log(DVPP_LOG_WARN, "DVPPD_FAULTS: injecting faults (allocation failure every "
                 "%llu, task stall %llu ms, cancellation ignored %llu ms): for tests only",
                 (unsigned long long)d.faults.alloc_fail_every,
                 (unsigned long long)(d.faults.stall_ns / 1000000),
                 (unsigned long long)(d.faults.deaf_ns / 1000000));
    dvppd_faults_install(&d.faults);
    dvppd_metrics_init(&d.metrics);
    rc = 1;
    if (dvppd_live_new(set, &d.live, &err) != DVPP_OK) {
        dvppd_settings_put(set);
        dvpp_log(DVPP_LOG_ERR, "%s", err.msg);
        return 1;
    }
    if (block_signals(&sigs) != 0) {
        dvpp_log(DVPP_LOG_ERR, "cannot block signals");
        goto out;
    }
    if (start(&d, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_ERR, "cannot start: %s", err.msg);
        goto out;
    }
    dvpp_log(DVPP_LOG_INFO, "ready");
    dvppd_faults_arm(&d.faults);
    dvppd_service_notify("READY=1\nSTATUS=serving\nMAINPID=%ld", (long)getpid());
    rc = serve(&d, &sigs);
    stop(&d, &sigs);
out:
    if (!dvppd_http_stop(d.http, 0))
        abandon_stop();
    dvppd_sock_stop(d.sock, 0);
    dvpp_pipe_device_free(d.device);
    dvppd_trace_store_free(d.traces); /* after every job that could write to it */
    dvppd_live_free(d.live);
    dvppd_faults_fini(&d.faults);
    dvpp_log(DVPP_LOG_INFO, "stopped");
    return rc;
}
