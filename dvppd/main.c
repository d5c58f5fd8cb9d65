/* dvppd: the daemon process.
 *
 * This build holds the process shell: built-in default configuration,
 * logging, capability report, and a clean stop on SIGINT/SIGTERM. The
 * device model (engines, streams) and the HTTP and Unix-socket front ends
 * are added on top of libdvpp by the following milestones (docs/
 * architecture.md lists them); until then the process serves nothing and
 * says so in its start-up log.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_log.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

/* Built-in defaults (DESIGN.md: HTTP on 127.0.0.1:8080, socket in ./run). */
typedef struct dvppd_config {
    const char *http_addr;
    unsigned http_port;
    const char *socket_path;
    dvpp_limits limits;
} dvppd_config;

static dvppd_config default_config(void)
{
    return (dvppd_config){
        .http_addr = "127.0.0.1",
        .http_port = 8080,
        .socket_path = "run/dvppd.sock",
        .limits = dvpp_limits_default(),
    };
}

static void report_start(const dvppd_config *c)
{
    dvpp_log(DVPP_LOG_INFO, "dvppd %s starting (pid %ld)", DVPP_VERSION,
             (long)getpid());
    dvpp_log(DVPP_LOG_INFO, "simd: %s (cpu supports %s; cap with DVPP_SIMD)",
             dvpp_simd_name(dvpp_simd_active()),
             dvpp_simd_name(dvpp_cpu_detect()));
    dvpp_log(DVPP_LOG_INFO, "codecs: jpeg (%s), png", dvpp_jpeg_library());
    dvpp_log(DVPP_LOG_INFO, "limits: %llu encoded bytes, %llu pixels, %u px "
             "per side, %u JPEG scans",
             (unsigned long long)c->limits.max_encoded_bytes,
             (unsigned long long)c->limits.max_pixels, c->limits.max_side,
             c->limits.max_jpeg_scans);
    dvpp_log(DVPP_LOG_INFO, "front ends not built yet: HTTP %s:%u and socket "
             "%s arrive with the daemon milestones; use dvppctl offline",
             c->http_addr, c->http_port, c->socket_path);
}

static int wait_for_stop(void)
{
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 || sigwait(&set, &sig) != 0) {
        dvpp_log(DVPP_LOG_ERR, "cannot wait for signals");
        return 1;
    }
    dvpp_log(DVPP_LOG_INFO, "received %s, stopping", strsignal(sig));
    return 0;
}

int main(int argc, char **argv)
{
    dvppd_config cfg = default_config();

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("dvppd %s\n", DVPP_VERSION);
            return 0;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: dvppd [--version]\nRuns on the built-in default "
                   "configuration; stop with SIGINT or SIGTERM.\n");
            return 0;
        }
        fprintf(stderr, "dvppd: unknown argument '%s'\n", argv[i]);
        return 2;
    }
    report_start(&cfg);
    return wait_for_stop();
}
