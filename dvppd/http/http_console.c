/* http_console: the web console's routes, answered at once on the HTTP
 * thread.
 *
 *   GET /                 the page (index.html)
 *   GET /console/<file>   one of the embedded files (http_console_assets.h),
 *                         nothing else: the name is looked up in the table,
 *                         never used as a path
 *   GET /v1/stats         the JSON the page draws (docs/http-api.md): engines,
 *                         throughput counters, latency histograms, rejections,
 *                         the socket front end, recent errors, generation
 *
 * The page and its files are served only when the request's settings turn
 * the console on (dvppd_config_console_on: http.console, or a loopback
 * listener); otherwise they are the same 404 as any unknown path. /v1/stats
 * is API and always answers. Every console answer carries a strict
 * Content-Security-Policy (the page loads only its own files, talks only
 * to this daemon, and shows images from blob:/data: URLs it makes) and
 * X-Content-Type-Options: nosniff; files carry a strong ETag and are
 * revalidated (Cache-Control: no-cache), answered 304 on If-None-Match.
 */
#include <jansson.h>
#include <string.h>
#include <time.h>

#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "http_console_assets.h"
#include "http_int.h"

#define CONSOLE_PREFIX "/console/"
#define CONSOLE_CSP                                                                      \
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; " \
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "      \
    "form-action 'none'"

static const http_console_asset *console_find(const char *name)
{
    for (unsigned i = 0; i < http_console_asset_count; i++)
        if (!strcmp(http_console_assets[i].name, name))
            return &http_console_assets[i];
    return NULL;
}

bool http_console_route(http_req *r, const char *url)
{
    if (!strcmp(url, "/")) {
        r->route = DVPPD_ROUTE_CONSOLE;
        r->asset = console_find("index.html");
        return true;
    }
    if (strncmp(url, CONSOLE_PREFIX, strlen(CONSOLE_PREFIX)))
        return false;
    r->route = DVPPD_ROUTE_CONSOLE;
    /* Only a table name: "../x", "a/b" or "" simply are not in it. */
    r->asset = console_find(url + strlen(CONSOLE_PREFIX));
    return true;
}

static void console_security_headers(struct MHD_Response *resp)
{
    http_header(resp, "Content-Security-Policy", CONSOLE_CSP);
    http_header(resp, "X-Content-Type-Options", "nosniff");
    http_header(resp, "Referrer-Policy", "no-referrer");
    http_header(resp, "X-Frame-Options", "DENY");
}

/* If-None-Match names @etag (one of a list) or is "*". */
static bool console_etag_matches(http_req *r, const char *etag)
{
    const char *inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_IF_NONE_MATCH);

    if (!inm)
        return false;
    if (!strcmp(inm, "*"))
        return true;
    return strstr(inm, etag) != NULL; /* the tag is quoted: no partial match */
}

enum MHD_Result http_console_serve(http_req *r)
{
    const http_console_asset *a = r->asset;
    struct MHD_Response *resp;
    bool fresh;

    if (!dvppd_config_console_on(&r->set->cfg) || !a)
        return http_answer_status(r, DVPP_ENOTFOUND, "path", "no such endpoint");
    fresh = console_etag_matches(r, a->etag);
    /* Static bytes: libmicrohttpd sends them without a copy. */
    resp = fresh ? MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT)
                 : MHD_create_response_from_buffer(a->len, (void *)a->data,
                                                   MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    if (!fresh)
        http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
    http_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
    http_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    console_security_headers(resp);
    return http_answer(r, fresh ? 304 : 200, resp);
}

/* --- GET /v1/stats ------------------------------------------------------------------- */

static uint64_t stats_load(atomic_uint_fast64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static json_t *stats_engines(http_req *r, const dvpp_device_counters *c)
{
    json_t *a = json_array();

    for (int e = 0; a && e < DVPP_ENGINE_COUNT; e++) {
        const dvpp_engine_counters *k = &c->engine[e];
        json_array_append_new(
            a, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "name",
                         dvpp_engine_name(e), "channels",
                         (json_int_t)dvpp_device_channels(r->h->device, (dvpp_engine)e),
                         "queue_capacity", (json_int_t)r->h->queue_depth, "queued",
                         (json_int_t)k->queued, "busy", (json_int_t)k->running, "done",
                         (json_int_t)k->done, "failed", (json_int_t)k->failed, "canceled",
                         (json_int_t)k->canceled, "timedout", (json_int_t)k->timedout,
                         "wait_s", (double)k->wait_ns / 1e9, "run_s",
                         (double)k->run_ns / 1e9));
    }
    return a;
}

/* One histogram: counts per bucket (not cumulative: the page subtracts two
 * polls to get a window), count, sum and the cumulative p50/p99. */
static json_t *stats_hist(dvppd_hist *h)
{
    uint64_t b[DVPPD_HIST_BUCKETS + 1];
    json_t *buckets = json_array();

    for (int i = 0; i <= DVPPD_HIST_BUCKETS; i++) {
        b[i] = stats_load(&h->bucket[i]);
        json_array_append_new(buckets, json_integer((json_int_t)b[i]));
    }
    return json_pack("{s:I, s:f, s:f, s:f, s:o}", "count", (json_int_t)stats_load(&h->count),
                     "sum_s", (double)stats_load(&h->sum_ns) / 1e9, "p50_s",
                     dvppd_hist_quantile(b, 0.5), "p99_s", dvppd_hist_quantile(b, 0.99),
                     "buckets", buckets ? buckets : json_array());
}

static json_t *stats_latency(dvppd_metrics *m)
{
    static const char *const stages[DVPPD_STAGE_COUNT] = {"read", "queue", "decode",
                                                          "vpc", "post", "total"};
    json_t *bounds = json_array(), *routes = json_object(), *st = json_object();

    for (int b = 0; bounds && b < DVPPD_HIST_BUCKETS; b++)
        json_array_append_new(bounds, json_real((double)dvppd_hist_bound_ns(b) / 1e9));
    for (int r = 0; routes && r < DVPPD_ROUTE_COUNT; r++)
        if (stats_load(&m->route[r].count))
            json_object_set_new(routes, dvppd_route_name((dvppd_route)r),
                                stats_hist(&m->route[r]));
    for (int s = 0; st && s < DVPPD_STAGE_COUNT; s++)
        json_object_set_new(st, stages[s], stats_hist(&m->stage[s]));
    return json_pack("{s:o, s:o, s:o}", "bounds_s", bounds ? bounds : json_array(), "routes",
                     routes ? routes : json_object(), "stages", st ? st : json_object());
}

/* Requests answered: all, and those of the routes that do work (the
 * page's req/s; its own polling is not work). Images: every still image
 * (a request's or a batch item) runs as one job of the VPC engine, the
 * pipe device's, so its completions are the images done. */
static json_t *stats_throughput(dvppd_metrics *m, const dvpp_device_counters *c)
{
    uint64_t all = 0, work = 0, errors = 0;
    json_t *by_route = json_object();

    for (int r = 0; r < DVPPD_ROUTE_COUNT; r++) {
        uint64_t n = 0;
        for (int k = 0; k < DVPPD_CODES; k++)
            n += stats_load(&m->requests[r][k]);
        all += n;
        if (http_route_has_body((dvppd_route)r))
            work += n;
        if (n && by_route)
            json_object_set_new(by_route, dvppd_route_name((dvppd_route)r),
                                json_integer((json_int_t)n));
    }
    errors = dvppd_errlog_total(&m->errors);
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "requests", (json_int_t)work,
                     "requests_all", (json_int_t)all, "errors", (json_int_t)errors,
                     "images",
                     (json_int_t)c->engine[DVPP_ENGINE_VPC].done,
                     "pixels", (json_int_t)stats_load(&m->pixels), "by_route",
                     by_route ? by_route : json_object());
}

static json_t *stats_rejections(dvppd_metrics *m, const dvpp_device_counters *c)
{
    json_t *o = json_object();

    for (int r = 0; o && r < DVPP_REJECT_COUNT; r++)
        json_object_set_new(o, dvpp_reject_name(r), json_integer((json_int_t)c->rejected[r]));
    for (int r = 0; o && r < DVPPD_REJECT_COUNT; r++)
        json_object_set_new(o, dvppd_reject_label((dvppd_reject)r),
                            json_integer((json_int_t)stats_load(&m->rejected[r])));
    return o;
}

static json_t *stats_socket(dvppd_http *h)
{
    dvppd_sock_totals t;

    dvppd_sock_totals_get(h->sock, &t);
    return json_pack("{s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "enabled", h->sock != NULL, "path", h->sock ? dvppd_sock_path(h->sock) : "",
                     "connections", (json_int_t)t.connections,
                     "rings", (json_int_t)t.rings, "slots", (json_int_t)t.slots,
                     "slots_leased", (json_int_t)t.slots_leased, "connections_total",
                     (json_int_t)t.connections_total, "submitted", (json_int_t)t.submitted,
                     "failed", (json_int_t)t.failed, "leases_expired",
                     (json_int_t)t.leases_expired, "bad_releases", (json_int_t)t.bad_releases,
                     "dropped_connections", (json_int_t)t.dropped, "refused_peers",
                     (json_int_t)t.refused_peers);
}

static json_t *stats_errors(dvppd_metrics *m)
{
    dvppd_errlog_entry e[DVPPD_ERRLOG_N];
    unsigned n = dvppd_errlog_read(&m->errors, e, DVPPD_ERRLOG_N);
    json_t *a = json_array();

    for (unsigned i = 0; a && i < n; i++)
        json_array_append_new(
            a, json_pack("{s:I, s:I, s:s, s:I, s:s, s:o, s:o}", "seq", (json_int_t)e[i].seq,
                         "time_ms", (json_int_t)e[i].time_ms, "route", e[i].route,
                         "status", (json_int_t)e[i].status, "code", e[i].code, "field",
                         http_json_str(e[i].field), "message", http_json_str(e[i].message)));
    return a;
}

static json_t *stats_http(dvppd_http *h, dvppd_metrics *m)
{
    return json_pack("{s:I, s:I, s:I, s:I}", "inflight",
                     (json_int_t)atomic_load_explicit(&m->inflight, memory_order_relaxed),
                     "suspended",
                     (json_int_t)atomic_load_explicit(&m->suspended, memory_order_relaxed),
                     "result_bytes",
                     (json_int_t)atomic_load_explicit(&m->result_bytes, memory_order_relaxed),
                     "body_bytes", (json_int_t)atomic_load(&h->body_bytes));
}

static json_t *stats_device(const dvpp_device_counters *c)
{
    return json_pack("{s:I, s:I, s:I, s:I}", "inflight_pixels",
                     (json_int_t)c->inflight_pixels, "inflight_bytes",
                     (json_int_t)c->inflight_bytes, "held_bytes", (json_int_t)c->held_bytes,
                     "batches_open", (json_int_t)c->batches_open);
}

/* Wall clock (the errors' times are on it); mono_ms is for rates. */
static uint64_t stats_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

enum MHD_Result http_stats_serve(http_req *r)
{
    dvppd_metrics *m = r->h->metrics;
    dvpp_device_counters c;
    json_t *o;

    dvpp_device_get_counters(r->h->device, &c);
    o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:{s:I, s:I, s:I}, s:b}", "time_ms",
                  (json_int_t)stats_wall_ms(), "mono_ms", (json_int_t)(dvpp_now_ns() / 1000000u),
                  "version", DVPP_VERSION, "simd",
                  dvpp_simd_name(dvpp_simd_active()), "jpeg", dvpp_jpeg_library(), "config",
                  "generation", (json_int_t)r->set->generation, "reloads_ok",
                  (json_int_t)stats_load(&m->reloads[0]), "reloads_failed",
                  (json_int_t)stats_load(&m->reloads[1]), "console",
                  dvppd_config_console_on(&r->set->cfg));
    if (!o)
        return http_answer_status(r, DVPP_ENOMEM, NULL, "out of memory");
    json_object_set_new(o, "engines", stats_engines(r, &c));
    json_object_set_new(o, "throughput", stats_throughput(m, &c));
    json_object_set_new(o, "latency", stats_latency(m));
    json_object_set_new(o, "rejections", stats_rejections(m, &c));
    json_object_set_new(o, "http", stats_http(r->h, m));
    json_object_set_new(o, "device", stats_device(&c));
    json_object_set_new(o, "socket", stats_socket(r->h));
    json_object_set_new(o, "errors", stats_errors(m));
    return http_answer_json(r, 200, o);
}
