/* notice_client: libdvppclient's unsolicited-notice queue from the command
 * line, for tests/e2e/test_c_client_notices.py.
 *
 *   notice_client SOCKET RING_NAME SLOTS EXPECT_DROPPED
 *
 * Opens an HTTP-deliverable ring RING_NAME of SLOTS 4096-byte slots, prints
 * {"ring":ID,"stats":STATS} and waits for a line on stdin (the test then
 * makes the HTTP deliveries). Then it reads the socket only through
 * dvppc_stats_json round trips (a consumer busy with something else, never
 * calling dvppc_wait) until dvppc_notices_dropped reaches EXPECT_DROPPED
 * (10 s at most), and prints {"dropped":D,"stats":STATS} from one more
 * round trip (every SlotRelease sent before it is handled by then). After
 * a second line on stdin it collects the kept notices with dvppc_wait(0)
 * and prints {"collected":N,"bad":B} (B: notices without a slot in this
 * ring), releasing each.
 *
 * Exit status 0 when every call succeeded, 1 when one failed (stderr says
 * which), 2 for usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvppclient.h"

/* The daemon's counters, or exit 1. Caller frees. */
static char *stats(dvppc_conn *c)
{
    dvppc_error e;
    char *json = NULL;

    if (dvppc_stats_json(c, &json, &e) != 0) {
        fprintf(stderr, "notice_client: stats: %s\n", e.message);
        exit(1);
    }
    return json;
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Block until a line arrives on stdin; exit 1 at its end. */
static void wait_line(void)
{
    char line[64];

    if (!fgets(line, sizeof(line), stdin)) {
        fprintf(stderr, "notice_client: stdin closed\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    dvppc_conn *c = NULL;
    dvppc_ring *ring = NULL;
    dvppc_error e;
    dvppc_result res;
    unsigned long slots;
    unsigned long long want;
    unsigned collected = 0, bad = 0;
    double deadline;
    char *json;

    if (argc != 5) {
        fprintf(stderr, "usage: notice_client SOCKET RING_NAME SLOTS EXPECT_DROPPED\n");
        return 2;
    }
    slots = strtoul(argv[3], NULL, 10);
    want = strtoull(argv[4], NULL, 10);
    if (dvppc_connect(argv[1], &c, &e) != 0 ||
        dvppc_ring_open_flags(c, argv[2], (uint32_t)slots, 4096, DVPPC_RING_HTTP, &ring,
                              &e) != 0) {
        fprintf(stderr, "notice_client: %s\n", e.message);
        dvppc_close(c);
        return 1;
    }
    json = stats(c);
    printf("{\"ring\":%u,\"stats\":%s}\n", dvppc_ring_id(ring), json);
    fflush(stdout);
    free(json);
    wait_line();
    deadline = now_s() + 10;
    while (dvppc_notices_dropped(c) < want && now_s() < deadline)
        free(stats(c));
    json = stats(c);
    printf("{\"dropped\":%llu,\"stats\":%s}\n", (unsigned long long)dvppc_notices_dropped(c),
           json);
    fflush(stdout);
    free(json);
    wait_line();
    while (dvppc_wait(c, 0, &res, 0, &e) == 0) {
        if (res.ring != ring || !res.data || !res.from_http)
            bad++;
        collected++;
        dvppc_release(c, &res);
    }
    printf("{\"collected\":%u,\"bad\":%u}\n", collected, bad);
    fflush(stdout);
    dvppc_close(c);
    return 0;
}
