/* http_server: the HTTP front end's lifecycle and libmicrohttpd's
 * callbacks. dvppd_http_start binds (or takes systemd's socket) and starts
 * libmicrohttpd's poll() thread pool; on_request routes each request
 * (404/405), starts its body (http_body), and once the body is whole
 * dispatches it: the device routes submit a job and suspend the
 * connection until http_finish resumes it, the others answer at once.
 * on_completed frees the request record. Drain stops accepting; stop waits
 * for requests in flight, cancels the device's work past the drain time,
 * then stops libmicrohttpd and frees the front end.
 *
 * Locks: http_req.mu guards a request's done/suspended/status/err and
 * serialises MHD_suspend_connection (request_wait_for_job, on the request's
 * HTTP thread) with MHD_resume_connection (http_finish, on a device
 * worker), so a completion that arrives before the suspend is never lost
 * and a resume never precedes its suspend. No other lock is taken under
 * it but libmicrohttpd's own. */
#include "dvppd_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_log.h"
#include "http_int.h"

/* --- routes ------------------------------------------------------------------------ */

typedef struct route_def {
    const char *path;
    const char *method;   /* GET also serves HEAD */
    dvppd_route route;
} route_def;

static const route_def k_routes[] = {
    {"/v1/preprocess", "POST", DVPPD_ROUTE_PREPROCESS},
    {"/v1/image", "POST", DVPPD_ROUTE_IMAGE},
    {"/v1/decode", "POST", DVPPD_ROUTE_DECODE},
    {"/v1/batch", "POST", DVPPD_ROUTE_BATCH},
    {"/v1/jobs", "POST", DVPPD_ROUTE_JOBS},
    {"/healthz", "GET", DVPPD_ROUTE_HEALTHZ},
    {"/readyz", "GET", DVPPD_ROUTE_READYZ},
    {"/metrics", "GET", DVPPD_ROUTE_METRICS},
    {"/v1/info", "GET", DVPPD_ROUTE_INFO},
    {"/v1/video/decode", "POST", DVPPD_ROUTE_VIDEO_DECODE},
    {"/v1/video/encode", "POST", DVPPD_ROUTE_VIDEO_ENCODE},
    {"/v1/presets", "GET", DVPPD_ROUTE_PRESETS},
    {"/v1/trace", "GET", DVPPD_ROUTE_TRACE},
    {"/v1/stats", "GET", DVPPD_ROUTE_STATS},
};

static bool method_is(const char *m, const char *want)
{
    return !strcmp(m, want) || (!strcmp(want, "GET") && !strcmp(m, "HEAD"));
}

/* "/v1/jobs/{id}" or "/v1/jobs/{id}/result" */
static bool parse_job_path(const char *url, uint64_t *id, bool *result)
{
    const char *p = url + strlen("/v1/jobs/");
    char *end;

    if (strncmp(url, "/v1/jobs/", 9) || *p < '1' || *p > '9')
        return false;
    errno = 0;
    *id = strtoull(p, &end, 10);
    if (errno)
        return false;
    *result = !strcmp(end, "/result");
    return *end == '\0' || *result;
}

/* "/v1/traces/{id}" */
static bool parse_trace_path(const char *url, uint64_t *id)
{
    const char *p = url + strlen("/v1/traces/");
    char *end;

    if (strncmp(url, "/v1/traces/", 11) || *p < '1' || *p > '9')
        return false;
    errno = 0;
    *id = strtoull(p, &end, 10);
    return !errno && *end == '\0';
}

/* Route @r by url and method; on a mismatch answer 404/405 and return
 * false. */
static bool route_request(http_req *r, const char *url, const char *method,
                          enum MHD_Result *ret)
{
    bool result;

    for (size_t i = 0; i < sizeof(k_routes) / sizeof(k_routes[0]); i++) {
        if (strcmp(url, k_routes[i].path))
            continue;
        r->route = k_routes[i].route;
        if (method_is(method, k_routes[i].method))
            return true;
        *ret = http_answer_error_code(r, 405, DVPP_EINVAL, k_routes[i].method,
                                      "method not allowed");
        return false;
    }
    if (parse_job_path(url, &r->job_id, &result)) {
        r->route = result ? DVPPD_ROUTE_JOB_RESULT : DVPPD_ROUTE_JOB;
        if (method_is(method, "GET") || (!result && !strcmp(method, "DELETE")))
            return true;
        *ret = http_answer_error_code(r, 405, DVPP_EINVAL, result ? "GET" : "GET, DELETE",
                                      "method not allowed");
        return false;
    }
    if (parse_trace_path(url, &r->trace_id)) {
        r->route = DVPPD_ROUTE_TRACES;
        if (method_is(method, "GET"))
            return true;
        *ret = http_answer_error_code(r, 405, DVPP_EINVAL, "GET", "method not allowed");
        return false;
    }
    if (http_console_route(r, url)) { /* "/" and the "/console/" prefix */
        if (method_is(method, "GET"))
            return true;
        *ret = http_answer_error_code(r, 405, DVPP_EINVAL, "GET", "method not allowed");
        return false;
    }
    r->route = DVPPD_ROUTE_OTHER;
    *ret = http_answer_status(r, DVPP_ENOTFOUND, "path", "no such endpoint");
    return false;
}

static bool route_is_video(dvppd_route r)
{
    return r == DVPPD_ROUTE_VIDEO_DECODE || r == DVPPD_ROUTE_VIDEO_ENCODE;
}

bool http_route_has_body(dvppd_route r)
{
    return r <= DVPPD_ROUTE_JOBS || route_is_video(r);
}

bool http_route_is_batch(dvppd_route r)
{
    return r == DVPPD_ROUTE_BATCH || r == DVPPD_ROUTE_JOBS;
}

/* --- requests ----------------------------------------------------------------------- */

static http_req *req_new(dvppd_http *h, struct MHD_Connection *conn)
{
    http_req *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        return NULL;
    }
    r->h = h;
    r->set = dvppd_live_get(h->live);
    r->conn = conn;
    r->t_start = dvpp_now_ns();
    r->deadline = r->t_start + (uint64_t)r->set->cfg.http.request_timeout_s * 1000000000u;
    dvpp_buf_init(&r->out.encoded);
    return r;
}

static void req_free(http_req *r)
{
    if (!r)
        return;
    atomic_fetch_sub(&r->h->body_bytes, r->reserved);
    /* Both wait for a job still running (only possible if the connection
     * died between submit and suspend, which libmicrohttpd cannot do). */
    dvpp_stream_free(r->stream);
    dvpp_batchjob_free(r->bj);
    http_video_free(r->vid);
    http_dump_free(r->dump);
    dvppd_trace_job_end(&r->tj, NULL); /* never answered: nothing stored */
    if (r->ticket.ring) /* reserved, never answered: give the slot back */
        dvppd_sock_ring_deliver(r->h->sock, &r->ticket, false, NULL, NULL);
    free(r->parts);
    free(r->inputs);
    http_buf_put(r->h, r->body);
    http_result_unref(r->result);
    dvpp_buf_fini(&r->out.encoded);
    dvppd_settings_put(r->set);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* --- completion --------------------------------------------------------------------- */

void http_finish(http_req *r, dvpp_status st, const dvpp_err *err)
{
    pthread_mutex_lock(&r->mu);
    r->status = st;
    if (err && st != DVPP_OK)
        r->err = *err;
    r->done = true;
    if (r->suspended) {
        r->suspended = false;
        MHD_resume_connection(r->conn);
        atomic_fetch_sub(&r->h->suspended, 1);
        dvppd_metrics_suspended(r->h->metrics, -1);
    }
    pthread_mutex_unlock(&r->mu);
    /* r may be freed from here on. */
}

/* Suspend until http_finish() unless it already ran. True when suspended. */
static bool request_wait_for_job(http_req *r)
{
    bool suspended;

    pthread_mutex_lock(&r->mu);
    suspended = !r->done;
    if (suspended) {
        r->suspended = true;
        atomic_fetch_add(&r->h->suspended, 1);
        dvppd_metrics_suspended(r->h->metrics, 1);
        MHD_suspend_connection(r->conn);
    }
    pthread_mutex_unlock(&r->mu);
    return suspended;
}

/* The routes that need no device job: answered now. */
static enum MHD_Result request_answer_now(http_req *r, const char *method)
{
    switch (r->route) {
    case DVPPD_ROUTE_JOB:
    case DVPPD_ROUTE_JOB_RESULT:
        return http_batch_job_serve(r, method);
    case DVPPD_ROUTE_JOBS:
        return http_batch_job_create(r);
    case DVPPD_ROUTE_PRESETS:
        return http_presets_serve(r);
    case DVPPD_ROUTE_STATS:
        return http_stats_serve(r);
    case DVPPD_ROUTE_CONSOLE:
        return http_console_serve(r);
    case DVPPD_ROUTE_TRACES:
        return http_traces_serve(r);
    default: /* /healthz, /readyz, /metrics, /v1/info (else 404) */
        return http_ops_serve(r);
    }
}

/* --- the access handler ----------------------------------------------------------------- */

/* The job of a device route has finished: answer it. */
static enum MHD_Result request_answer_finished(http_req *r)
{
    return r->route == DVPPD_ROUTE_BATCH    ? http_batch_answer(r)
           : r->route == DVPPD_ROUTE_TRACE ? http_trace_capture_answer(r)
           : route_is_video(r->route) ? http_video_answer(r)
                                           : http_image_answer(r);
}

/* The body is complete: run the request or answer it now. */
static enum MHD_Result request_dispatch(http_req *r, const char *method)
{
    dvpp_err e;
    dvpp_status st;

    r->t_read = dvpp_now_ns();
    dvpp_err_clear(&e);
    if (r->multipart && http_body_split(r, &e) != DVPP_OK)
        return http_answer_error(r, &e);
    if (http_route_has_body(r->route) && http_trace_begin(r, &e) != DVPP_OK)
        return http_answer_error(r, &e); /* ?trace=, and the capture's sinks */
    if (r->route != DVPPD_ROUTE_PREPROCESS && r->route != DVPPD_ROUTE_IMAGE &&
        r->route != DVPPD_ROUTE_DECODE && r->route != DVPPD_ROUTE_BATCH &&
        r->route != DVPPD_ROUTE_TRACE && !route_is_video(r->route))
        return request_answer_now(r, method);
    dvpp_err_clear(&e);
    st = r->route == DVPPD_ROUTE_BATCH    ? http_batch_submit(r, &e)
         : r->route == DVPPD_ROUTE_TRACE ? http_trace_capture_submit(r, &e)
         : route_is_video(r->route) ? http_video_submit(r, &e)
                                         : http_image_submit(r, &e);
    if (st != DVPP_OK) {
        http_dump_abort(r, &e); /* a dump begun before the failure gets its manifest */
        return http_answer_error(r, &e);
    }
    r->state = HTTP_REQ_RUNNING;
    if (request_wait_for_job(r))
        return MHD_YES;
    return request_answer_finished(r);
}

static enum MHD_Result request_first_call(dvppd_http *h, struct MHD_Connection *conn,
                                          const char *url, const char *method, void **con_cls)
{
    enum MHD_Result ret = MHD_YES;
    bool answered;
    http_req *r = req_new(h, conn);

    if (!r)
        return MHD_NO;
    *con_cls = r;
    atomic_fetch_add(&h->inflight, 1);
    dvppd_metrics_inflight(h->metrics, 1);
    if (!route_request(r, url, method, &ret))
        return ret;
    if (atomic_load(&h->draining) && http_route_has_body(r->route))
        return http_answer_status(r, DVPP_ECANCELED, NULL, "the server is stopping");
    if (!http_route_has_body(r->route) || strcmp(method, "POST"))
        return MHD_YES;
    ret = http_body_start(r, &answered);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    http_req *r = *con_cls;
    bool done;

    (void)version;
    if (!r)
        return request_first_call(cls, conn, url, method, con_cls);
    if (r->state == HTTP_REQ_ANSWERED) { /* an early answer: ignore the body */
        enum MHD_Result ret = *upload_data_size ? http_body_skip(r) : MHD_YES;
        *upload_data_size = 0;
        return ret;
    }
    if (r->state == HTTP_REQ_READING && *upload_data_size) {
        enum MHD_Result ret = http_body_take(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return ret;
    }
    if (r->state == HTTP_REQ_READING)
        return request_dispatch(r, method);
    /* Resumed after the job finished. */
    pthread_mutex_lock(&r->mu);
    done = r->done;
    pthread_mutex_unlock(&r->mu);
    if (!done)
        return MHD_YES;
    return request_answer_finished(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    dvppd_http *h = cls;
    http_req *r = *con_cls;

    (void)conn, (void)toe;
    if (!r)
        return;
    *con_cls = NULL;
    req_free(r);
    dvppd_metrics_inflight(h->metrics, -1);
    atomic_fetch_sub(&h->inflight, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    dvpp_log(DVPP_LOG_DEBUG, "http: %s", line);
}

/* --- lifecycle ---------------------------------------------------------------------------- */

static dvpp_status listen_address(const char *host, uint16_t port, struct sockaddr_storage *ss,
                                  dvpp_err *err)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return DVPP_OK;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return DVPP_OK;
    }
    return dvpp_err_set(err, DVPP_EINVAL, "http.listen",
                        "http.listen host '%s' is not an IPv4 or IPv6 address", host);
}

/* libmicrohttpd on systemd's socket @lfd, or bound to @ss. */
static struct MHD_Daemon *mhd_start(dvppd_http *h, unsigned flags, const dvppd_config *c,
                                    int lfd, struct sockaddr_storage *ss)
{
    struct MHD_OptionItem o[] = {
        lfd >= 0 ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, lfd, NULL}
                 : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, ss},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)c->http.threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->http.max_connections, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)c->http.max_per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)c->http.idle_timeout_s, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->http.connection_memory, NULL},
        {MHD_OPTION_END, 0, NULL},
    };

    return MHD_start_daemon(flags, lfd >= 0 ? 0 : c->http_port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
                            MHD_OPTION_ARRAY, o,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
}

dvpp_status dvppd_http_start(const dvppd_http_env *env, dvppd_http **out, dvpp_err *err)
{
    const dvppd_config *c = env->cfg;
    /* poll(), not epoll: libmicrohttpd 0.9.75's MHD_quiesce_daemon races its
     * own epoll workers for the listen fd's removal (both test, neither
     * under a lock; the loser's epoll_ctl answers ENOENT and MHD_PANIC
     * aborts the process, "Failed to remove listen FD from epoll set": seen
     * on a SIGINT stop under ASan in CI). With poll() quiesce only sets each
     * worker's flag and wakes it through its ITC; a worker polls its own
     * connections (http.max_connections / http.threads of them at most). */
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    struct sockaddr_storage ss;
    const union MHD_DaemonInfo *info;
    int lfd = env->listen_fd;
    dvppd_http *h;
    dvpp_status st;

    *out = NULL;
    if (lfd < 0) {
        st = listen_address(c->http_addr, c->http_port, &ss, err);
        if (st != DVPP_OK)
            return st;
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
    } else {
        /* systemd's socket: libmicrohttpd must not bind, only accept. */
        socklen_t len = sizeof(ss);
        if (getsockname(lfd, (struct sockaddr *)&ss, &len) != 0) {
            close(lfd);
            return dvpp_err_set(err, DVPP_ESYS, "http.listen", "passed HTTP socket: %s",
                                strerror(errno));
        }
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        if (lfd >= 0)
            close(lfd);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "http server");
    }
    h->quiesced_fd = -1;
    h->listen_passed = lfd >= 0;
    http_pool_init(&h->pool);
    h->cfg = c->http;
    h->device = env->device;
    h->metrics = env->metrics;
    h->live = env->live;
    h->sock = env->sock;
    h->queue_depth = c->queue_depth;
    st = http_jobs_new(c->http.max_jobs, c->http.job_ttl_s, &h->jobs, err);
    if (st == DVPP_OK)
        st = dvppd_dump_new(&c->dump, &h->dump, err);
    h->traces = env->traces;
    if (st == DVPP_OK)
        st = http_trace_init(h, err);
    if (st != DVPP_OK)
        goto fail;
    h->mhd = mhd_start(h, flags, c, lfd, &ss);
    if (!h->mhd) {
        st = dvpp_err_set(err, DVPP_ESYS, "http.listen", "cannot serve HTTP on %s: %s",
                          lfd >= 0 ? "the passed socket" : c->http_addr, strerror(errno));
        goto fail;
    }
    info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : c->http_port;
    *out = h;
    return DVPP_OK;

fail:
    if (lfd >= 0)
        close(lfd);
    http_jobs_free(h->jobs);
    dvppd_dump_free(h->dump);
    http_trace_fini(h);
    http_pool_fini(&h->pool);
    free(h);
    return st;
}

uint16_t dvppd_http_port(const dvppd_http *h)
{
    return h->port;
}

void dvppd_http_leave(dvppd_http *h)
{
    if (h)
        atomic_store(&h->leaving, true);
}

void dvppd_http_drain(dvppd_http *h)
{
    MHD_socket fd;

    if (!h || atomic_exchange(&h->draining, true))
        return;
    http_trace_cancel(h); /* a GET /v1/trace answers now, not at its N seconds */
    fd = MHD_quiesce_daemon(h->mhd);
    /* A worker may still be in poll() on the fd, so it must not be closed
     * before MHD_stop_daemon (libmicrohttpd's rule). A listener of our own is shut down now: new
     * connections are refused while the requests in flight drain. A passed
     * one is systemd's too (the same socket, not a copy): shutdown() would
     * end it for systemd as well ("Got POLLHUP on a listening socket", the
     * socket unit fails and activation stops), so it is only no longer
     * accepted from; new connections wait in its backlog for the next
     * daemon systemd starts. */
    if (fd != MHD_INVALID_SOCKET) {
        if (!h->listen_passed)
            shutdown(fd, SHUT_RDWR);
        h->quiesced_fd = fd;
    }
}

typedef struct pool_trim_args {
    http_pool *pool;
    uint64_t now_ns, idle_ns;
} pool_trim_args;

static size_t pool_trim(void *ctx)
{
    pool_trim_args *a = ctx;

    return http_pool_trim(a->pool, a->now_ns, a->idle_ns);
}

size_t dvppd_http_idle(dvppd_http *h, uint32_t idle_ms)
{
    pool_trim_args a;

    if (!h || !idle_ms)
        return 0;
    a = (pool_trim_args){&h->pool, dvpp_now_ns(), (uint64_t)idle_ms * 1000000u};
    /* Checked first: this runs every second, under load too, and a release
     * takes every arena's lock. */
    if (!http_pool_idle_bytes(&h->pool, a.now_ns, a.idle_ns))
        return 0;
    return dvpp_mem_release_idle(pool_trim, &a);
}

long dvppd_http_inflight(dvppd_http *h)
{
    return h ? atomic_load(&h->inflight) : 0;
}

/* Wait until @n reads 0, up to @deadline_ns. */
static bool wait_until_zero(atomic_long *n, uint64_t deadline_ns)
{
    struct timespec tick = {0, 10 * 1000 * 1000};

    while (atomic_load(n) > 0 && dvpp_now_ns() < deadline_ns)
        nanosleep(&tick, NULL);
    return atomic_load(n) == 0;
}

/* How long canceled jobs get to complete (they stop at their next check:
 * a frame, a strip, the stall hook) before a stop gives up on them. */
#define CANCEL_GRACE_NS 5000000000ull

/* How long, after the last canceled job resumed its connection, the answers
 * get to be queued and sent before MHD_stop_daemon closes what is left: a
 * resumed connection is answered on its own thread a moment later, and a
 * stop that came first would cut it without its 503. A slow reader is cut
 * after this. */
#define ANSWER_FLUSH_NS 1000000000ull

bool dvppd_http_stop(dvppd_http *h, unsigned timeout_s)
{
    if (!h)
        return true;
    dvppd_http_drain(h);
    if (!wait_until_zero(&h->inflight, dvpp_now_ns() + (uint64_t)timeout_s * 1000000000u)) {
        /* Past the drain time: cancel the device's work so that every
         * suspended request is resumed and answered (libmicrohttpd aborts
         * the process if stopped with a suspended connection). Requests
         * that are not waiting on a job (a body still arriving, an answer
         * a slow reader has not taken) are cut by MHD_stop_daemon below. */
        dvpp_log(DVPP_LOG_WARN, "http: %ld request(s) still open after %u s (%ld waiting "
                 "on the device); canceling their jobs and closing their connections",
                 atomic_load(&h->inflight), timeout_s, atomic_load(&h->suspended));
        dvpp_device_cancel_all(h->device);
        if (!wait_until_zero(&h->suspended, dvpp_now_ns() + CANCEL_GRACE_NS)) {
            /* A job that ignores its cancellation still owns a connection:
             * nothing this front end uses may be freed while it can run. */
            dvpp_log(DVPP_LOG_ERR, "http: %ld request(s) still wait on jobs that do not "
                     "end; the process must exit without freeing what they use",
                     atomic_load(&h->suspended));
            return false;
        }
        wait_until_zero(&h->inflight, dvpp_now_ns() + ANSWER_FLUSH_NS);
    }
    /* Connections idle in keep-alive, or still reading a body, or still
     * sending an answer, are closed here (each request freed through
     * on_completed); none is suspended (every job has completed, so
     * every connection was resumed). */
    http_trace_join(h); /* its timer has resumed its request (the drain canceled it) */
    MHD_stop_daemon(h->mhd);
    http_trace_fini(h); /* no libmicrohttpd thread reads h->capture any more */
    if (h->quiesced_fd >= 0)
        close(h->quiesced_fd);
    http_jobs_free(h->jobs);
    dvppd_dump_free(h->dump);
    http_pool_fini(&h->pool);
    free(h);
    return true;
}
