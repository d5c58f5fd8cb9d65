/* dvppd_http: the HTTP front end (libmicrohttpd), docs/http-api.md.
 *
 * It translates requests into dvpp_pipeline specs (dvppd_spec), runs them
 * on the device model and answers with .npy tensors, images or JSON. It
 * never processes pixels itself: its threads read bodies, probe headers
 * (no pixel decoded), submit and answer. A request waiting for the device
 * suspends its connection; the job's completion resumes it, so long jobs
 * never hold a server thread.
 *
 * Threads: libmicrohttpd's poll() thread pool (http.threads). Completion
 * callbacks run on device workers and only resume connections.
 *
 * Settings: each request takes the current dvppd_live snapshot when it
 * starts and keeps it to the end (a reload never changes a request's
 * limits); restart-only keys come from env->cfg at start.
 *
 * Ownership: dvppd_http_start borrows the device, the metrics and the
 * settings holder until dvppd_http_stop returns; a passed listen_fd is
 * owned from the call on (closed at stop, or at once on failure). Result buffers come from a
 * small pool of reusable buffers (first-touch page faults are expensive),
 * handed to libmicrohttpd with a release callback.
 */
#ifndef DVPPD_HTTP_H
#define DVPPD_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "device/dvpp_device.h"
#include "dvppd_live.h"
#include "dvppd_config.h"
#include "dvppd_metrics.h"
#include "dvppd_sock.h"
#include "dvppd_trace.h"

typedef struct dvppd_http dvppd_http;

typedef struct dvppd_http_env {
    const dvppd_config *cfg;       /* copied */
    dvpp_device *device;           /* a pipe device, borrowed */
    dvppd_metrics *metrics;        /* borrowed */
    dvppd_live *live;              /* borrowed: limits, AIPP configs, ... */
    int listen_fd;                 /* a listening socket passed by systemd, or -1 */
    dvppd_sock *sock;              /* named rings for ?ring=NAME; may be NULL */
    dvppd_trace_store *traces;     /* ?trace=1, /v1/trace(s); may be NULL (off); borrowed */
} dvppd_http_env;

/* Bind http.listen (or serve env->listen_fd) and start serving. Ready
 * (/readyz 200) from the first connection until a stop begins: the daemon
 * starts HTTP last, after everything /readyz vouches for, so a connection
 * queued before it ran (socket activation) is answered 200.
 * DVPP_ESYS when the address cannot be bound, DVPP_ENOMEM. */
dvpp_status dvppd_http_start(const dvppd_http_env *env, dvppd_http **out,
                             dvpp_err *err);

/* The bound port (useful with port 0). */
uint16_t dvppd_http_port(const dvppd_http *h);

/* The first stage of a stop (service.drain_delay_s): /readyz answers 503
 * and every answer carries Connection: close, so that load balancers take
 * this daemon out of rotation and close their keep-alive connections
 * while it still serves everything, new connections included. */
void dvppd_http_leave(dvppd_http *h);

/* Stop accepting connections; requests that arrive on open connections
 * are answered 503 with Connection: close. Requests in flight go on. */
void dvppd_http_drain(dvppd_http *h);

/* Requests being read, processed or answered. */
long dvppd_http_inflight(dvppd_http *h);

/* The main loop's tick: the body/result pool's buffers unused for @idle_ms
 * are freed (a 256-item batch's 154 MB tensor is not kept for ever) and
 * the allocator's free pages returned. 0: never.
 * Returns the bytes freed. Thread-safe; NULL is a no-op. */
size_t dvppd_http_idle(dvppd_http *h, uint32_t idle_ms);

/* Wait up to @timeout_s for requests in flight to be answered; past it,
 * cancel the device's work (requests waiting on jobs are answered 503)
 * and close the connections still reading a body or sending an answer.
 * Then stop the server and free everything: true; no request of this
 * front end runs any more, so what it borrowed (the device, the socket
 * front end's rings, the settings, the metrics) may be freed after it.
 * False when a job ignored its cancellation for 5 s: its connection stays
 * suspended, libmicrohttpd cannot be stopped, and the caller must end the
 * process without freeing anything the front end borrowed (h is left as
 * it is). NULL is a no-op (true). */
bool dvppd_http_stop(dvppd_http *h, unsigned timeout_s);

#endif
