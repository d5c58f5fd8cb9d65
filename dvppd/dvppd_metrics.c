/* dvppd_metrics: counters, histograms, Prometheus text. */
#include "dvppd_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Histogram bounds in seconds, as ns: 0.5 ms .. 10 s. */
static const uint64_t k_bounds_ns[DVPPD_HIST_BUCKETS] = {
    500000ull,     1000000ull,    2500000ull,    5000000ull,    10000000ull,
    25000000ull,   50000000ull,   100000000ull,  250000000ull,  500000000ull,
    1000000000ull, 2000000000ull, 3000000000ull, 5000000000ull, 10000000000ull,
};

/* The status codes the front end answers, in label order. */
static const unsigned k_codes[DVPPD_CODES] = {
    200, 202, 304, 400, 403, 404, 405, 408, 409, 411,
    413, 415, 422, 429, 500, 503, 0,   0,   0,   0,
};

static const char *const k_routes[DVPPD_ROUTE_COUNT] = {
    "preprocess", "image", "decode", "batch", "jobs", "job", "job_result",
    "healthz", "readyz", "metrics", "info", "video_decode", "video_encode", "presets",
    "stats", "console", "trace", "traces", "other",
};

static const char *const k_stages[DVPPD_STAGE_COUNT] = {
    "read", "queue", "decode", "vpc", "post", "total",
};

static const char *const k_rejects[DVPPD_REJECT_COUNT] = {"body_too_large", "deadline"};

const char *dvppd_route_name(dvppd_route r)
{
    return (unsigned)r < DVPPD_ROUTE_COUNT ? k_routes[r] : "unknown";
}

void dvppd_metrics_init(dvppd_metrics *m)
{
    memset(m, 0, sizeof(*m));
    dvppd_errlog_init(&m->errors);
    atomic_store(&m->generation, 1);
}

uint64_t dvppd_hist_bound_ns(int b)
{
    return b >= 0 && b < DVPPD_HIST_BUCKETS ? k_bounds_ns[b] : UINT64_MAX;
}

double dvppd_hist_quantile(const uint64_t *bucket, double q)
{
    uint64_t total = 0, cum = 0;
    double rank;

    for (int b = 0; b <= DVPPD_HIST_BUCKETS; b++)
        total += bucket[b];
    if (!total)
        return 0;
    rank = q * (double)total;
    for (int b = 0; b <= DVPPD_HIST_BUCKETS; b++) {
        double lo = b ? (double)k_bounds_ns[b - 1] / 1e9 : 0;
        if (!bucket[b] || (double)(cum + bucket[b]) < rank) {
            cum += bucket[b];
            continue;
        }
        if (b == DVPPD_HIST_BUCKETS)
            return lo;
        return lo + ((double)k_bounds_ns[b] / 1e9 - lo) * (rank - (double)cum) /
                        (double)bucket[b];
    }
    return (double)k_bounds_ns[DVPPD_HIST_BUCKETS - 1] / 1e9;
}

const char *dvppd_reject_label(dvppd_reject why)
{
    return (unsigned)why < DVPPD_REJECT_COUNT ? k_rejects[why] : "unknown";
}

static void hist_add(dvppd_hist *h, uint64_t ns)
{
    int b = 0;

    while (b < DVPPD_HIST_BUCKETS && ns > k_bounds_ns[b])
        b++;
    atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

static int code_index(unsigned code)
{
    for (int i = 0; i < DVPPD_CODES && k_codes[i]; i++)
        if (k_codes[i] == code)
            return i;
    return -1;
}

void dvppd_metrics_request(dvppd_metrics *m, dvppd_route r, unsigned code, uint64_t ns)
{
    int c = code_index(code);

    if ((unsigned)r >= DVPPD_ROUTE_COUNT)
        r = DVPPD_ROUTE_OTHER;
    if (c < 0)
        c = code_index(500);
    atomic_fetch_add_explicit(&m->requests[r][c], 1, memory_order_relaxed);
    hist_add(&m->route[r], ns);
}

void dvppd_metrics_stage(dvppd_metrics *m, dvppd_stage s, uint64_t ns)
{
    if ((unsigned)s < DVPPD_STAGE_COUNT)
        hist_add(&m->stage[s], ns);
}

void dvppd_metrics_reject(dvppd_metrics *m, dvppd_reject why)
{
    if ((unsigned)why < DVPPD_REJECT_COUNT)
        atomic_fetch_add_explicit(&m->rejected[why], 1, memory_order_relaxed);
}

void dvppd_metrics_pixels(dvppd_metrics *m, uint64_t n)
{
    atomic_fetch_add_explicit(&m->pixels, n, memory_order_relaxed);
}

void dvppd_metrics_result(dvppd_metrics *m, int64_t bytes)
{
    atomic_fetch_add_explicit(&m->result_bytes, bytes, memory_order_relaxed);
    if (bytes > 0)
        atomic_fetch_add_explicit(&m->results, 1, memory_order_relaxed);
}

void dvppd_metrics_inflight(dvppd_metrics *m, int delta)
{
    atomic_fetch_add_explicit(&m->inflight, delta, memory_order_relaxed);
}

void dvppd_metrics_suspended(dvppd_metrics *m, int delta)
{
    atomic_fetch_add_explicit(&m->suspended, delta, memory_order_relaxed);
}

/* --- rendering ------------------------------------------------------------------- */

typedef struct out {
    dvpp_buf *b;
    dvpp_status st;
} out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void emit(out *o, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    if (o->st != DVPP_OK)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    o->st = dvpp_buf_append(o->b, line, (size_t)n < sizeof(line) ? (size_t)n
                                                                   : sizeof(line) - 1);
}

static uint64_t load(atomic_uint_fast64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static void emit_hist(out *o, const char *name, const char *label, const char *value,
                      dvppd_hist *h)
{
    uint64_t cum = 0;

    for (int b = 0; b <= DVPPD_HIST_BUCKETS; b++) {
        cum += load(&h->bucket[b]);
        if (b < DVPPD_HIST_BUCKETS)
            emit(o, "%s_bucket{%s=\"%s\",le=\"%g\"} %llu\n", name, label, value,
                 (double)k_bounds_ns[b] / 1e9, (unsigned long long)cum);
        else
            emit(o, "%s_bucket{%s=\"%s\",le=\"+Inf\"} %llu\n", name, label, value,
                 (unsigned long long)cum);
    }
    emit(o, "%s_sum{%s=\"%s\"} %.9f\n", name, label, value, (double)load(&h->sum_ns) / 1e9);
    emit(o, "%s_count{%s=\"%s\"} %llu\n", name, label, value,
         (unsigned long long)load(&h->count));
}

static void emit_http(out *o, dvppd_metrics *m)
{
    emit(o, "# HELP dvppd_http_requests_total HTTP requests answered, by route and status.\n"
            "# TYPE dvppd_http_requests_total counter\n");
    for (int r = 0; r < DVPPD_ROUTE_COUNT; r++)
        for (int c = 0; c < DVPPD_CODES && k_codes[c]; c++) {
            uint64_t n = load(&m->requests[r][c]);
            if (n)
                emit(o, "dvppd_http_requests_total{route=\"%s\",code=\"%u\"} %llu\n",
                     k_routes[r], k_codes[c], (unsigned long long)n);
        }
    emit(o, "# HELP dvppd_http_request_seconds Time from request headers to answer.\n"
            "# TYPE dvppd_http_request_seconds histogram\n");
    for (int r = 0; r < DVPPD_ROUTE_COUNT; r++)
        if (load(&m->route[r].count))
            emit_hist(o, "dvppd_http_request_seconds", "route", k_routes[r], &m->route[r]);
    emit(o, "# HELP dvppd_stage_seconds Time per stage of image requests.\n"
            "# TYPE dvppd_stage_seconds histogram\n");
    for (int s = 0; s < DVPPD_STAGE_COUNT; s++)
        emit_hist(o, "dvppd_stage_seconds", "stage", k_stages[s], &m->stage[s]);
    emit(o, "# HELP dvppd_http_inflight Requests being read, processed or answered.\n"
            "# TYPE dvppd_http_inflight gauge\ndvppd_http_inflight %lld\n",
         (long long)atomic_load_explicit(&m->inflight, memory_order_relaxed));
    emit(o, "# HELP dvppd_http_suspended Of dvppd_http_inflight, requests whose body is "
            "read and whose job is submitted, waiting for it to end.\n"
            "# TYPE dvppd_http_suspended gauge\ndvppd_http_suspended %lld\n",
         (long long)atomic_load_explicit(&m->suspended, memory_order_relaxed));
    emit(o, "# HELP dvppd_pixels_total Output pixels of successful image jobs.\n"
            "# TYPE dvppd_pixels_total counter\ndvppd_pixels_total %llu\n",
         (unsigned long long)load(&m->pixels));
    emit(o, "# HELP dvppd_http_result_bytes Bytes of HTTP results alive (being made, "
            "sent, or kept by jobs).\n"
            "# TYPE dvppd_http_result_bytes gauge\ndvppd_http_result_bytes %lld\n",
         (long long)atomic_load_explicit(&m->result_bytes, memory_order_relaxed));
    emit(o, "# HELP dvppd_http_results_total HTTP result buffers made (a job's result "
            "fetched again makes none).\n"
            "# TYPE dvppd_http_results_total counter\ndvppd_http_results_total %llu\n",
         (unsigned long long)load(&m->results));
}

static void emit_device(out *o, dvpp_device *dev, dvppd_metrics *m)
{
    dvpp_device_counters c;

    emit(o, "# HELP dvppd_rejections_total Requests refused, by reason.\n"
            "# TYPE dvppd_rejections_total counter\n");
    if (dev) {
        dvpp_device_get_counters(dev, &c);
        for (int r = 0; r < DVPP_REJECT_COUNT; r++)
            emit(o, "dvppd_rejections_total{reason=\"%s\"} %llu\n", dvpp_reject_name(r),
                 (unsigned long long)c.rejected[r]);
    }
    for (int r = 0; r < DVPPD_REJECT_COUNT; r++)
        emit(o, "dvppd_rejections_total{reason=\"%s\"} %llu\n", k_rejects[r],
             (unsigned long long)load(&m->rejected[r]));
    if (!dev)
        return;
    emit(o, "# HELP dvppd_engine_queue_depth Jobs admitted, not yet started.\n"
            "# TYPE dvppd_engine_queue_depth gauge\n");
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
        emit(o, "dvppd_engine_queue_depth{engine=\"%s\"} %llu\n", dvpp_engine_name(e),
             (unsigned long long)c.engine[e].queued);
    emit(o, "# HELP dvppd_engine_running Jobs running now.\n"
            "# TYPE dvppd_engine_running gauge\n");
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
        emit(o, "dvppd_engine_running{engine=\"%s\"} %llu\n", dvpp_engine_name(e),
             (unsigned long long)c.engine[e].running);
    emit(o, "# HELP dvppd_engine_jobs_total Jobs and batch items completed.\n"
            "# TYPE dvppd_engine_jobs_total counter\n");
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        const dvpp_engine_counters *k = &c.engine[e];
        const char *n = dvpp_engine_name(e);
        emit(o, "dvppd_engine_jobs_total{engine=\"%s\",result=\"ok\"} %llu\n", n,
             (unsigned long long)k->done);
        emit(o, "dvppd_engine_jobs_total{engine=\"%s\",result=\"failed\"} %llu\n", n,
             (unsigned long long)(k->failed - k->canceled - k->timedout));
        emit(o, "dvppd_engine_jobs_total{engine=\"%s\",result=\"canceled\"} %llu\n", n,
             (unsigned long long)k->canceled);
        emit(o, "dvppd_engine_jobs_total{engine=\"%s\",result=\"timedout\"} %llu\n", n,
             (unsigned long long)k->timedout);
    }
    emit(o, "# HELP dvppd_inflight_pixels Pixels held by admitted jobs.\n"
            "# TYPE dvppd_inflight_pixels gauge\ndvppd_inflight_pixels %llu\n",
         (unsigned long long)c.inflight_pixels);
    emit(o, "# HELP dvppd_inflight_bytes Bytes of the device's budget in use: admitted "
            "jobs and held results.\n"
            "# TYPE dvppd_inflight_bytes gauge\ndvppd_inflight_bytes %llu\n",
         (unsigned long long)c.inflight_bytes);
    emit(o, "# HELP dvppd_held_bytes Of dvppd_inflight_bytes, results held while they "
            "wait to be sent or fetched.\n"
            "# TYPE dvppd_held_bytes gauge\ndvppd_held_bytes %llu\n",
         (unsigned long long)c.held_bytes);
    emit(o, "# HELP dvppd_idle_trims_total Idle workers trimmed (device.idle_trim_ms).\n"
            "# TYPE dvppd_idle_trims_total counter\ndvppd_idle_trims_total %llu\n"
            "# HELP dvppd_idle_trimmed_bytes_total Bytes idle trims released.\n"
            "# TYPE dvppd_idle_trimmed_bytes_total counter\n"
            "dvppd_idle_trimmed_bytes_total %llu\n",
         (unsigned long long)c.idle_trims, (unsigned long long)c.idle_trimmed_bytes);
}

void dvppd_metrics_reload(dvppd_metrics *m, bool ok, uint64_t generation)
{
    atomic_fetch_add_explicit(&m->reloads[ok ? 0 : 1], 1, memory_order_relaxed);
    if (ok)
        atomic_store_explicit(&m->generation, generation, memory_order_relaxed);
}

static void emit_reloads(out *o, dvppd_metrics *m)
{
    emit(o, "# HELP dvppd_reloads_total Configuration reloads (SIGHUP) by result.\n"
            "# TYPE dvppd_reloads_total counter\n"
            "dvppd_reloads_total{result=\"ok\"} %llu\n"
            "dvppd_reloads_total{result=\"failed\"} %llu\n",
         (unsigned long long)load(&m->reloads[0]), (unsigned long long)load(&m->reloads[1]));
    emit(o, "# HELP dvppd_config_generation Settings generation in use (1 at start, "
            "+1 per applied reload).\n# TYPE dvppd_config_generation gauge\n"
            "dvppd_config_generation %llu\n",
         (unsigned long long)load(&m->generation));
}

dvpp_status dvppd_metrics_render(dvppd_metrics *m, dvpp_device *dev,
                                 const dvppd_build_info *bi, dvpp_buf *b)
{
    out o = {b, DVPP_OK};

    emit_http(&o, m);
    emit_device(&o, dev, m);
    emit_reloads(&o, m);
    emit(&o, "# HELP dvppd_build_info Version, SIMD level in use, JPEG library.\n"
             "# TYPE dvppd_build_info gauge\n"
             "dvppd_build_info{version=\"%s\",simd=\"%s\",jpeg=\"%s\"} 1\n",
         bi->version, bi->simd, bi->jpeg);
    return o.st;
}
