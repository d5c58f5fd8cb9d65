/* ctl_daemon: the commands about the daemon itself, as entries of the
 * remote runner's table: the daemon's half of `version`, `stats` (its
 * counters) and `bench` (one preprocess job, many times, K in flight). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_remote.h"

/* --- version ---------------------------------------------------------------- */

/* The daemon's Welcome, after the local version lines. */
static dvpp_status version_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    const dvppc_server_info *in = dvppc_info(c);

    (void)state, (void)err;
    printf("daemon: dvppd %s at %s (protocol %u)\n"
           "daemon simd: %s\n"
           "daemon limits: max_inline %llu, max_input_bytes %llu, max_rings %u, "
           "max_slots %u, max_ring_bytes %llu, max_inflight %u, lease_timeout_ms %u, "
           "max_batch_items %u\n",
           in->version, a->socket, in->protocol, in->simd,
           (unsigned long long)in->max_inline, (unsigned long long)in->max_input_bytes,
           in->max_rings, in->max_slots, (unsigned long long)in->max_ring_bytes,
           in->max_inflight, in->lease_timeout_ms, in->max_batch_items);
    return DVPP_OK;
}

const ctl_remote_cmd ctl_remote_version_cmd = {
    .name = "version", .flags = CTL_REMOTE_CONNECT_BARE, .talk = version_talk};

/* Options only, and a daemon to talk to. Returns 0, or 2 after printing
 * why not. */
static int parse_daemon_cmd(int argc, char **argv, ctl_args *a, unsigned inputs)
{
    int rc = ctl_parse_options(argc, argv, a);

    if (rc)
        return rc;
    if (!ctl_use_socket(a)) {
        fprintf(stderr, "dvppctl %s: needs a daemon: --socket PATH (or DVPPD_SOCKET)\n",
                argv[0]);
        return 2;
    }
    if (a->ninputs != inputs) {
        fprintf(stderr, "dvppctl %s: %s\n", argv[0],
                inputs ? "one input FILE" : "takes no FILE");
        return 2;
    }
    return 0;
}

/* --- stats ----------------------------------------------------------------- */

/* The counters, as libdvppclient renders them (JSON), re-indented. */
typedef struct stats_out {
    char *text;
    json_t *j;
} stats_out;

static dvpp_status stats_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    stats_out *so = state;
    dvppc_error e;

    (void)a;
    memset(&e, 0, sizeof(e));
    return dvppc_stats_json(c, &so->text, &e) == 0 ? DVPP_OK : ctl_from_client(&e, err);
}

static dvpp_status stats_finish(ctl_args *a, void *state, dvpp_err *err)
{
    stats_out *so = state;

    (void)a;
    if (!(so->j = json_loads(so->text, 0, NULL)))
        return dvpp_err_set(err, DVPP_EIO, NULL, "the daemon's counters are not JSON");
    json_dumpf(so->j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    return DVPP_OK;
}

static void stats_fini(void *state)
{
    stats_out *so = state;

    json_decref(so->j);
    free(so->text);
}

const ctl_remote_cmd ctl_remote_stats_cmd = {
    .name = "stats", .flags = CTL_REMOTE_FAIL_NAME | CTL_REMOTE_CONNECT_BARE,
    .state_bytes = sizeof(stats_out), .talk = stats_talk, .finish = stats_finish,
    .fini = stats_fini};

int ctl_cmd_stats(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    int rc;

    if (!a)
        return 1;
    rc = parse_daemon_cmd(argc, argv, a, 0);
    if (!rc)
        rc = ctl_remote_run("stats", a);
    free(a);
    return rc;
}

/* --- bench --------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The jobs of a run: one request, @n times, at most @k in flight. */
typedef struct bench_run {
    dvppc_conn *c;
    dvppc_request q;
    unsigned k;
    unsigned long long n;
    uint64_t *tickets;      /* k: the jobs in flight, a circular queue */
    uint64_t *sent_ns;      /* k: when each was sent */
    unsigned head, inflight;/* the oldest in flight, how many */
    unsigned long long started, finished; /* jobs sent (or refused), done */
    double *lat_ms;         /* n: latencies of the jobs that succeeded */
    unsigned long long nlat, failed;
    dvppc_error first;      /* the first failure */
} bench_run;

static void bench_failed(bench_run *b, const dvppc_error *e)
{
    if (!b->failed++)
        b->first = *e;
}

/* Take the answer of the oldest job in flight. */
static void bench_collect(bench_run *b)
{
    dvppc_result r;
    dvppc_error e;

    memset(&e, 0, sizeof(e));
    if (dvppc_wait(b->c, b->tickets[b->head], &r, -1, &e) == 0)
        b->lat_ms[b->nlat++] = (double)(now_ns() - b->sent_ns[b->head]) / 1e6;
    else
        bench_failed(b, &e);
    dvppc_release(b->c, &r);
    b->head = (b->head + 1) % b->k;
    b->inflight--;
    b->finished++;
}

/* Send the next job; false when it must wait for one in flight. */
static bool bench_send(bench_run *b)
{
    unsigned slot = (b->head + b->inflight) % b->k;
    dvppc_error e;

    memset(&e, 0, sizeof(e));
    b->sent_ns[slot] = now_ns();
    if (dvppc_submit_async(b->c, &b->q, &b->tickets[slot], &e) == 0) {
        b->inflight++;
        b->started++;
        return true;
    }
    /* Refused for now (admission, a slot not back yet): retry once the
     * oldest job is in. Any other refusal is that job's failure. */
    if (e.status == DVPPC_EAGAIN && b->inflight)
        return false;
    bench_failed(b, &e);
    b->started++;
    b->finished++;
    return true;
}

static void bench_loop(bench_run *b)
{
    while (b->finished < b->n) {
        while (b->started < b->n && b->inflight < b->k && bench_send(b))
            ;
        if (b->inflight)
            bench_collect(b);
    }
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Nearest rank: the smallest latency at or above @p of the jobs. */
static double percentile(const double *sorted, unsigned long long n, double p)
{
    unsigned long long rank = (unsigned long long)(p * (double)n + 0.999999999);

    return sorted[rank ? rank - 1 : 0];
}

/* One JSON line; throughput counts the images that came back, latencies
 * are theirs (send to answer, queueing in the daemon included). */
static void bench_print(const bench_run *b, double seconds)
{
    double *lat = b->lat_ms;
    unsigned long long n = b->nlat;

    qsort(lat, n, sizeof(*lat), by_value);
    printf("{\"images\": %llu, \"failed\": %llu, \"concurrency\": %u, "
           "\"seconds\": %.3f, \"images_per_s\": %.1f, \"p50_ms\": %.3f, "
           "\"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
           n, b->failed, b->k, seconds, seconds > 0 ? (double)n / seconds : 0.0,
           n ? percentile(lat, n, 0.50) : 0.0, n ? percentile(lat, n, 0.99) : 0.0,
           n ? lat[n - 1] : 0.0);
}

/* The preprocess job of the flags (shrink-on-load as the pipeline does
 * it: a benchmark has no offline twin to agree with). */
static dvpp_status bench_job(ctl_args *a, const ctl_source *s, ctl_job *j,
                             size_t *bytes, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    dvpp_status st;

    ctl_job_init(j, a, s, DVPPC_TENSOR);
    j->pipe.decode.shrink_on_load = a->shrink_on_load && s->kind == CTL_INPUT_JPEG;
    st = ctl_job_resize(j, a, a->mode, a->size_w, a->size_h, err);
    ctl_job_normalize(j, a);
    if (st == DVPP_OK)
        st = ctl_job_plan(j, s, &plan, err);
    *bytes = st == DVPP_OK ? ctl_job_out_bytes(j, &plan) : 0;
    return st;
}

static dvpp_status bench_run_all(ctl_args *a, bench_run *b, const ctl_source *s,
                                 dvpp_err *err)
{
    ctl_job j;
    dvppc_ring *ring = NULL;
    dvppc_error e;
    size_t bytes;
    char *spec = NULL;
    uint64_t t0;
    dvpp_status st = bench_job(a, s, &j, &bytes, err);

    memset(&e, 0, sizeof(e));
    if (st == DVPP_OK && !(spec = ctl_spec_json(&j)))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    /* Always a ring, even for outputs that would fit inline: the point is
     * the zero-copy path inference apps use. */
    if (st == DVPP_OK && dvppc_ring_open(b->c, NULL, b->k, bytes, &ring, &e) != 0)
        st = ctl_from_client(&e, err);
    if (st == DVPP_OK) {
        b->q = (dvppc_request){.kind = DVPPC_TENSOR, .spec = spec, .input = s->data,
                               .input_len = s->len, .input_fd = -1, .ring = ring};
        t0 = now_ns();
        bench_loop(b);
        bench_print(b, (double)(now_ns() - t0) / 1e9);
        if (b->failed)
            st = ctl_from_client(&b->first, err);
    }
    dvppc_ring_close(ring);
    free(spec);
    return st;
}

/* bench's state: the run and its input. */
typedef struct bench_state {
    bench_run b;
    ctl_source s;
} bench_state;

static int bench_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    bench_state *bs = state;
    bench_run *b = &bs->b;

    b->k = a->concurrency < a->count ? a->concurrency : (unsigned)a->count;
    b->n = a->count;
    b->tickets = calloc(b->k, sizeof(*b->tickets));
    b->sent_ns = calloc(b->k, sizeof(*b->sent_ns));
    b->lat_ms = calloc(b->n, sizeof(*b->lat_ms));
    if (!b->tickets || !b->sent_ns || !b->lat_ms) {
        dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
        return 1;
    }
    return ctl_source_load(a->inputs[0], a, DVPP_PIXEL_RGB, &bs->s, err) == DVPP_OK ? 0 : 1;
}

static dvpp_status bench_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    bench_state *bs = state;

    bs->b.c = c;
    return bench_run_all(a, &bs->b, &bs->s, err);
}

static void bench_fini(void *state)
{
    bench_state *bs = state;

    ctl_source_fini(&bs->s);
    free(bs->b.tickets);
    free(bs->b.sent_ns);
    free(bs->b.lat_ms);
}

const ctl_remote_cmd ctl_remote_bench_cmd = {
    .name = "bench", .flags = CTL_REMOTE_SPEC, .state_bytes = sizeof(bench_state),
    .prepare = bench_prepare, .talk = bench_talk, .fini = bench_fini};

int ctl_cmd_bench(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    int rc;

    if (!a)
        return 1;
    rc = parse_daemon_cmd(argc, argv, a, 1);
    if (!rc && !a->size_set)
        a->size_w = a->size_h = 224, a->size_set = true;
    if (!rc)
        rc = ctl_remote_run("bench", a);
    free(a);
    return rc;
}
