/* dvppd: the daemon process.
 *
 * Configuration (defaults, file, flags), logging, the named AIPP configs,
 * the device model started from the configuration, the HTTP front end, and
 * a clean stop on SIGINT/SIGTERM: stop accepting, finish every request in
 * flight (up to DVPPD_DRAIN_SECONDS), then free the device. The Unix-socket
 * front end (dvppd_sock) serves local apps with shared-memory rings.
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
#include "dvppd_aipp.h"
#include "dvppd_config.h"
#include "dvppd_http.h"
#include "dvppd_metrics.h"
#include "dvppd_sock.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

/* How long a stop waits for in-flight jobs (below systemd's default 90 s
 * stop timeout and reliability.md's 20 s target). */
#define DVPPD_DRAIN_SECONDS 20

/* The device model from the configuration: every engine gets the
 * configured channels (0 = the default, CPU count capped at 8) and queue
 * depth, the pipeline backend on VPC, the admission budgets. */
static dvpp_status start_device(const dvppd_config *c, dvpp_device **out,
                                dvpp_err *err)
{
    dvpp_device_config dc;
    dvpp_status st;

    dvpp_device_config_default(&dc);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        if (c->channels)
            dc.channels[e] = c->channels;
        dc.queue_depth[e] = c->queue_depth;
    }
    dc.pixel_budget = c->max_pixels_in_flight;
    dc.byte_budget = c->max_bytes_in_flight;
    st = dvpp_pipe_device_new(&dc, 0, &c->limits, out, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "device: %u channel(s) per engine, queue %u, "
                 "budget %llu pixels / %llu bytes in flight",
                 dc.channels[DVPP_ENGINE_VPC], c->queue_depth,
                 (unsigned long long)dc.pixel_budget,
                 (unsigned long long)dc.byte_budget);
    return st;
}

/* Stop: wait until every admitted job has finished (queued and running
 * gauges at zero, no batch open), up to @timeout_s, before the device is
 * freed. Front ends stop submitting before this is called. */
static void drain_device(dvpp_device *d, unsigned timeout_s)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    uint64_t deadline = dvpp_now_ns() + (uint64_t)timeout_s * 1000000000u;

    for (;;) {
        dvpp_device_counters c;
        uint64_t busy = 0;
        dvpp_device_get_counters(d, &c);
        for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
            busy += c.engine[e].queued + c.engine[e].running;
        busy += c.batches_open;
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
    dvpp_log(DVPP_LOG_INFO, "simd: %s (cpu supports %s; cap with DVPP_SIMD)",
             dvpp_simd_name(dvpp_simd_active()),
             dvpp_simd_name(dvpp_cpu_detect()));
    dvpp_log(DVPP_LOG_INFO, "codecs: jpeg (%s), png", dvpp_jpeg_library());
    dvpp_log(DVPP_LOG_INFO, "limits: %llu encoded bytes, %llu pixels, %u px "
             "per side, %u JPEG scans",
             (unsigned long long)c->limits.max_encoded_bytes,
             (unsigned long long)c->limits.max_pixels, c->limits.max_side,
             c->limits.max_jpeg_scans);
}

/* The Unix-socket front end, unless socket.path is "" (and no socket was
 * passed by systemd). */
static dvpp_status start_sock(const dvppd_config *c, dvpp_device *dev,
                              const dvppd_aipp_set *aipp, dvppd_sock **out, dvpp_err *err)
{
    dvppd_sock_env env = {c, dev, aipp};
    dvpp_status st;

    *out = NULL;
    if (!c->socket_path[0] && !getenv("LISTEN_FDS")) {
        dvpp_log(DVPP_LOG_INFO, "socket: disabled (socket.path is empty)");
        return DVPP_OK;
    }
    st = dvppd_sock_start(&env, out, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "socket: listening on %s (mode %04o, %u connections max, "
                 "lease timeout %u ms)", dvppd_sock_path(*out)[0] ? dvppd_sock_path(*out)
                 : "an inherited socket", c->socket_mode, c->sock.max_connections,
                 c->sock.lease_timeout_ms);
    return st;
}

/* The HTTP front end, unless http.listen has port 0. */
static dvpp_status start_http(const dvppd_config *c, dvpp_device *dev, dvppd_metrics *m,
                              const dvppd_aipp_set *aipp, dvppd_sock *sock,
                              dvppd_http **out, dvpp_err *err)
{
    dvppd_http_env env = {c, dev, m, aipp, sock};
    dvpp_status st;

    *out = NULL;
    if (c->http_port == 0) {
        dvpp_log(DVPP_LOG_INFO, "http: disabled (port 0)");
        return DVPP_OK;
    }
    st = dvppd_http_start(&env, out, err);
    if (st == DVPP_OK)
        dvpp_log(DVPP_LOG_INFO, "http: listening on %s:%u (%u threads, %u connections "
                 "max, request deadline %u s)", c->http_addr, dvppd_http_port(*out),
                 c->http.threads, c->http.max_connections, c->http.request_timeout_s);
    return st;
}

/* Block SIGINT/SIGTERM before any thread starts, so every thread inherits
 * the mask and only the main thread receives them, in sigwait. */
static int block_stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    return pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int wait_for_stop(const sigset_t *set)
{
    int sig = 0;

    if (sigwait(set, &sig) != 0) {
        dvpp_log(DVPP_LOG_ERR, "cannot wait for signals");
        return 1;
    }
    dvpp_log(DVPP_LOG_INFO, "received %s, stopping", strsignal(sig));
    return 0;
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

typedef struct cli {
    const char *config, *http, *socket, *channels, *level;
    bool check;
} cli;

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

int main(int argc, char **argv)
{
    dvpp_device *device = NULL;
    dvppd_http *http = NULL;
    dvppd_sock *sock = NULL;
    dvppd_aipp_set aipp;
    dvppd_metrics metrics;
    dvppd_config cfg;
    sigset_t stop;
    dvpp_err err;
    cli o;
    int rc;

    rc = parse_cli(argc, argv, &o);
    if (rc)
        return rc;
    dvpp_err_clear(&err);
    if (build_config(&o, &cfg, &err) != DVPP_OK) {
        fprintf(stderr, "dvppd: configuration: %s\n", err.msg);
        return 1;
    }
    if (dvppd_aipp_set_load(&aipp, &cfg, &err) != DVPP_OK) {
        fprintf(stderr, "dvppd: configuration: %s\n", err.msg);
        return 1;
    }
    if (o.check) {
        char *dump = dvppd_config_dump(&cfg);
        printf("%s\n", dump ? dump : "{}");
        free(dump);
        dvppd_aipp_set_fini(&aipp);
        return 0;
    }
    dvpp_log_configure(cfg.log_level, getenv("JOURNAL_STREAM") ? journal_sink : NULL,
                       NULL);
    report_start(&cfg);
    dvppd_metrics_init(&metrics);
    rc = 1;
    if (block_stop_signals(&stop) != 0) {
        dvpp_log(DVPP_LOG_ERR, "cannot block the stop signals");
        goto out;
    }
    if (start_device(&cfg, &device, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_ERR, "cannot start the device: %s", err.msg);
        goto out;
    }
    if (start_sock(&cfg, device, &aipp, &sock, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_ERR, "%s", err.msg);
        goto out;
    }
    if (start_http(&cfg, device, &metrics, &aipp, sock, &http, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_ERR, "%s", err.msg);
        goto out;
    }
    if (http)
        dvppd_http_set_ready(http, true);
    dvpp_log(DVPP_LOG_INFO, "ready");
    rc = wait_for_stop(&stop);
    /* Stop taking requests, answer every one in flight, then let the device
     * finish what is left (batch jobs nobody waits for) before freeing it. */
    dvppd_http_drain(http);
    dvppd_sock_drain(sock);
    dvppd_http_stop(http, DVPPD_DRAIN_SECONDS);
    http = NULL;
    dvppd_sock_stop(sock, DVPPD_DRAIN_SECONDS);
    sock = NULL;
    drain_device(device, DVPPD_DRAIN_SECONDS);
out:
    dvppd_http_stop(http, 0);
    dvppd_sock_stop(sock, 0);
    dvpp_pipe_device_free(device);
    dvppd_aipp_set_fini(&aipp);
    dvpp_log(DVPP_LOG_INFO, "stopped");
    return rc;
}
