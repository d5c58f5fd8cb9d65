/* http_int.h: what the modules of the HTTP front end share (private to
 * dvppd/http/; the public API is dvppd_http.h).
 *
 * Modules (notes at the top of each file):
 *   http_server   lifecycle (start, drain, stop), libmicrohttpd's callbacks,
 *                 routes, dispatch, the request record, completion
 *   http_body     body intake and its budget, the buffer pool (bodies and
 *                 counted result buffers), multipart glue, query and spec
 *   http_reply    status mapping, JSON errors, headers, worker-made bodies
 *   http_image    /v1/preprocess, /v1/image, /v1/decode, ?ring= answers
 *   http_batch    /v1/batch and /v1/jobs
 *   http_video    /v1/video/decode and /v1/video/encode: the job, the answer
 *   http_vparams  the video routes' query parameters
 *   http_ops      /healthz, /readyz, /metrics, /v1/info
 *   http_console  GET / and /console/<file> (embedded files), /v1/stats
 *   http_jobs       the /v1/jobs registry (its own header)
 *   http_multipart  multipart/form-data split (its own header; fuzz_http)
 *   http_framelist  a video decode's frame lists (its own header; fuzz_http)
 *
 * Threads: every function here runs on one of libmicrohttpd's threads
 * unless its comment says otherwise; a request record is used by one
 * thread at a time (libmicrohttpd serialises a connection's callbacks),
 * except for the fields under http_req.mu, which a device worker's
 * completion (http_finish) writes.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/dvpp_batchjob.h"
#include "device/dvpp_videojob.h"
#include "dvpp_npy.h"
#include "dvpp_video.h"
#include "dvppd_http.h"
#include "dvppd_sock.h"
#include "dvppd_dump.h"
#include "dvppd_spec.h"
#include "dvppd_trace.h"
#include "http_jobs.h"
#include "http_multipart.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

/* Query parameters one request may have. */
#define HTTP_MAX_QUERY_ARGS 64
/* Query parameters of the front end itself (http_body.c's list: "dump", "trace"),
 * set aside before the spec parser, which refuses unknown ones, sees the
 * query. */
#define HTTP_FRONT_KEYS 2
/* Item errors listed in X-Dvpp-Item-Errors and a job's "items". */
#define HTTP_ERRORS_LISTED 32

/* --- the server ------------------------------------------------------------------ */

struct http_blob;

/* Reusable buffers (http_body.c): a free list, bounded in count and bytes. */
typedef struct http_pool {
    pthread_mutex_t mu;            /* guards the three below; a leaf lock */
    struct http_blob *free;
    unsigned count;
    size_t bytes;
} http_pool;

struct dvppd_http {
    struct MHD_Daemon *mhd;
    dvppd_http_config cfg;             /* as started: restart-only keys */
    dvppd_live *live;                  /* the settings a reload replaces */
    dvpp_device *device;               /* borrowed */
    dvppd_metrics *metrics;            /* borrowed */
    dvppd_sock *sock;                  /* named rings (?ring=), may be NULL; borrowed */
    http_jobs *jobs;                   /* owned: /v1/jobs */
    http_pool pool;
    atomic_bool draining;
    atomic_bool leaving;               /* a stop began: /readyz 503, Connection: close */
    int quiesced_fd;                   /* the listen fd MHD_quiesce_daemon gave
                                          back: shut down at drain (unless
                                          passed), closed after
                                          MHD_stop_daemon; -1 = none */
    bool listen_passed;                /* the listener is systemd's (socket
                                          activation), not ours */
    atomic_long inflight;              /* request records alive */
    atomic_long suspended;             /* connections waiting on a job */
    atomic_uint_fast64_t body_bytes;   /* reserved by bodies being received */
    uint16_t port;
    unsigned queue_depth;
    dvppd_dump *dump;                  /* dump.dir; NULL: dumps off; owned */
    dvppd_trace_store *traces;         /* NULL: tracing off; borrowed */
    struct http_capture *capture;      /* GET /v1/trace's timer; owned (http_trace.c) */
};

/* --- the request record (http_server.c makes and frees it) ------------------------ */

typedef enum http_req_state {
    HTTP_REQ_READING,   /* headers seen, body arriving */
    HTTP_REQ_RUNNING,   /* submitted to the device */
    HTTP_REQ_ANSWERED,
} http_req_state;

/* A multipart part: its name and bytes, pointing into the request's body. */
typedef http_mpart http_part;

typedef struct http_video http_video;

/* One request, from its first handler call to libmicrohttpd's completion
 * callback (on_completed frees it with everything it still owns: body,
 * parts, inputs, stream, batch job, video job, result buffer, an unused
 * ring slot, its settings reference). */
typedef struct http_req {
    dvppd_http *h;
    const dvppd_settings *set;         /* referenced: this request's settings */
    struct MHD_Connection *conn;
    dvppd_route route;
    uint64_t job_id;                   /* job routes */
    uint64_t t_start, t_read, deadline;
    http_req_state state;
    /* body (http_body.c) */
    uint64_t limit, received;
    uint64_t reserved;                 /* of dvppd_http.body_bytes */
    uint8_t *body;                     /* a pool buffer: the whole body; owned */
    size_t body_cap, body_len;
    bool multipart;                    /* multipart/form-data: split at dispatch */
    char boundary[HTTP_BOUNDARY_MAX + 1];
    http_part *parts;                  /* into @body; owned array */
    unsigned nparts, max_parts;
    /* the job */
    dvppd_spec spec;
    dvpp_stream *stream;               /* owned */
    dvpp_pipejob pj;
    dvpp_pipeline_out out;             /* out.encoded owned */
    uint8_t *result;                   /* http_result_get: .npy header + data; one ref */
    size_t result_len, header_len;
    dvpp_batchjob *bj;                 /* owned */
    dvpp_batchjob_input *inputs;       /* owned array, pointing into @body */
    size_t ninputs;
    dvppd_ring_ticket ticket;          /* ?ring=NAME: the slot written */
    http_video *vid;                   /* the video routes' job, else NULL; owned */
    struct http_dump *dump;            /* ?dump=1: this request's dump, else NULL; owned */
    uint64_t t_submit;
    dvppd_trace_job tj;                /* ?trace=1 and the capture's sinks (http_trace.c) */
    uint64_t trace_id;                 /* GET /v1/traces/{id} */
    const struct http_console_asset *asset; /* DVPPD_ROUTE_CONSOLE: the file, NULL
                                          = not embedded (404) */
    pthread_mutex_t mu;                /* guards the three below (http_finish) */
    bool suspended, done;
    dvpp_status status;
    dvpp_err err;
} http_req;

/* Route predicates: a route that takes a body (the POST routes); a batch
 * route (/v1/batch, /v1/jobs: many parts). */
bool http_route_has_body(dvppd_route r);
bool http_route_is_batch(dvppd_route r);

/* The job of @r finished with @st (@err its detail): record it and resume
 * the connection if it is suspended. Called once per job, from any thread
 * (device workers); @r may be freed as soon as it returns. */
void http_finish(http_req *r, dvpp_status st, const dvpp_err *err);

/* --- buffers (http_body.c) ------------------------------------------------------- */

/* A body buffer (or a result buffer's last reference) back to the pool, or
 * freed; what it held of the device's budget is released. NULL is a no-op. */
void http_buf_put(dvppd_http *h, void *data);

/* A result buffer of @size bytes into *@out: checked against
 * limits.max_output_bytes and held against the device's byte budget
 * before anything is allocated; one reference, owned by the caller.
 * DVPP_ELIMIT ("max_output_bytes"), the device's DVPP_EAGAIN ("bytes") /
 * DVPP_ELIMIT ("too_large"), DVPP_ENOMEM; *@out is NULL then. */
dvpp_status http_result_get(dvppd_http *h, const dvpp_limits *lim, size_t size, void **out,
                            dvpp_err *err);

/* Another reference to a result buffer (the caller holds one). */
void *http_result_ref(const void *data);

/* Drop a reference; the last one gives the buffer and its held bytes back. */
void http_result_unref(void *data);

/* The jobs registry's release of a job's body and result (http_buf_release). */
void http_result_release_job(void *ctx, void *data);

/* A response whose body is @len bytes of result buffer @data, taking the
 * caller's reference (dropped by libmicrohttpd once sent: no copy). NULL
 * when out of memory: the caller keeps its reference. */
struct MHD_Response *http_result_response(void *data, size_t len);

/* r->result (r->result_len bytes) as a response body: the request's
 * reference passes to libmicrohttpd and r->result is NULL; on failure
 * (NULL) the request keeps it. */
struct MHD_Response *http_req_result_response(http_req *r);

void http_pool_init(http_pool *p);
/* Free the pooled buffers (none may be in use). */
void http_pool_fini(http_pool *p);
/* Free the pooled buffers that have waited on the free list for @idle_ns
 * or more by @now_ns (each is stamped when put back: a steady stream
 * reuses its buffers, a burst's big one goes even while small requests
 * keep coming); returns the bytes freed. */
size_t http_pool_trim(http_pool *p, uint64_t now_ns, uint64_t idle_ns);
/* The bytes http_pool_trim would free now. */
size_t http_pool_idle_bytes(http_pool *p, uint64_t now_ns, uint64_t idle_ns);

/* --- body intake (http_body.c) ---------------------------------------------------- */

/* The single-image body limit: http.max_body_bytes, 0 = limits.max_encoded_bytes. */
uint64_t http_max_body(const dvppd_settings *set);

/* Headers are in: decide the body's fate before reading any of it (limit,
 * budget, multipart boundary, the buffer for a Content-Length). *@answered
 * is true when it answered (an error) and the body is to be ignored. */
enum MHD_Result http_body_start(http_req *r, bool *answered);

/* One chunk of body. MHD_NO (close the connection) when it passes the
 * deadline, the limit or the budget: a response cannot be queued mid-body. */
enum MHD_Result http_body_take(http_req *r, const char *data, size_t size);
/* A chunk of body after an early answer: ignored, but held to the deadline
 * as any body is (past it: counted a deadline rejection, MHD_NO closes). */
enum MHD_Result http_body_skip(http_req *r);

/* The parts of a complete multipart body into r->parts (pointing into
 * r->body). DVPP_ELIMIT ("parts"), DVPP_EINVAL, DVPP_ENOMEM. */
dvpp_status http_body_split(http_req *r, dvpp_err *err);

/* The one image (or video) of a single-input request: the body, or its one
 * part that is not "spec" or "aipp". Borrowed from the body. DVPP_EINVAL
 * ("body") when there is none or more than one. */
dvpp_status http_body_input(const http_req *r, const uint8_t **in, size_t *len,
                            dvpp_err *err);

/* A "spec" or "aipp" part (not an input). */
bool http_part_is_control(const http_part *p);

/* --- query and spec (http_body.c) ------------------------------------------------- */

/* The query's parameters (borrowed from libmicrohttpd's connection), the
 * "spec" one set aside. */
typedef struct http_query {
    dvppd_kv kv[HTTP_MAX_QUERY_ARGS];
    size_t n;
    bool overflow;
    const char *spec;
    const char *front[HTTP_FRONT_KEYS]; /* the front end's own keys, by list order */
} http_query;

/* The value of front-end key @key ("dump") in @q, NULL when absent. */
const char *http_query_front(const http_query *q, const char *key);

/* Read the query of @r into @q. DVPP_EINVAL ("query") past
 * HTTP_MAX_QUERY_ARGS parameters. */
dvpp_status http_query_read(http_req *r, http_query *q, dvpp_err *err);

/* The request's one JSON spec (the query's spec=, the X-Dvpp-Spec header
 * or the "spec" part) into *@json, *@len (NULL, 0 without one) and the
 * inline AIPP config of the "aipp" part into @env; all borrowed from the
 * request. DVPP_EINVAL ("spec") when more than one spec is given. */
dvpp_status http_spec_source(http_req *r, const http_query *q, dvppd_spec_env *env,
                             const char **json, size_t *len, dvpp_err *err);

/* r->spec for a @kind endpoint, from the query or the one JSON spec. */
dvpp_status http_spec_build(http_req *r, dvppd_spec_kind kind, dvpp_err *err);

/* --- answers (http_reply.c) ------------------------------------------------------- */

/* A JSON string of @s; bytes that are not printable ASCII become '?'. */
json_t *http_json_str(const char *s);

/* libmicrohttpd copies header names and values. */
void http_header(struct MHD_Response *resp, const char *k, const char *v);
void http_header_printf(struct MHD_Response *resp, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Queue @resp with @code on r's connection and count it; takes @resp
 * (NULL: out of memory, MHD_NO drops the connection). */
enum MHD_Result http_answer(http_req *r, unsigned code, struct MHD_Response *resp);

/* A compact JSON body (takes @body); NULL when out of memory. */
struct MHD_Response *http_json_response(json_t *body);
enum MHD_Result http_answer_json(http_req *r, unsigned code, json_t *body);

/* {"error":{"code","message","field"}} with @code (Retry-After on 429/503;
 * on 405 Allow is @field). */
enum MHD_Result http_answer_error_code(http_req *r, unsigned code, dvpp_status st,
                                       const char *field, const char *msg);
/* The same with the HTTP status that @e's status (and field) maps to. */
enum MHD_Result http_answer_error(http_req *r, const dvpp_err *e);
enum MHD_Result http_answer_status(http_req *r, dvpp_status st, const char *field,
                                   const char *msg);

/* Nanoseconds to whole microseconds (X-Dvpp-Timing). */
uint64_t http_us(uint64_t ns);

/* X-Dvpp-Shape of @t ("1,3,224,224"). */
void http_shape_header(struct MHD_Response *resp, const dvpp_tensor *t);
/* X-Dvpp-Shape, X-Dvpp-Dtype and X-Dvpp-Layout of tensor @t. */
void http_tensor_headers(struct MHD_Response *resp, const dvpp_tensor *t);
/* X-Dvpp-Scale and X-Dvpp-Pad: the letterbox geometry. */
void http_geometry_headers(struct MHD_Response *resp, const dvpp_pipe_geom *g);

/* An answer's body made while the job ran (a video's frames, tensor,
 * stream or multipart; an encoded image), owned by the request until
 * http_vout_response hands it to libmicrohttpd, which frees it with the
 * response (never copied). While it is being sent its bytes are held
 * against the device's byte budget. */
typedef struct http_vout {
    dvppd_http *h;                   /* set when handed over */
    uint64_t held;                   /* bytes of the budget held */
    char head[DVPP_NPY_HEADER_MAX];  /* the .npy header */
    size_t head_len;                 /* 0: no header */
    dvpp_buf body;                   /* frames, tensor, stream, multipart, image */
} http_vout;

/* Free @o (a heap http_vout, or NULL) and release what it holds. */
void http_vout_free(void *o);

/* Hand *@o to libmicrohttpd: the header and the body as two buffers, freed
 * with the response (no copy), held against the budget meanwhile. *@o is
 * NULL on success; on failure (NULL returned) it is still the caller's. */
struct MHD_Response *http_vout_response(dvppd_http *h, http_vout **o);

/* --- routes (http_image.c, http_batch.c, http_video.c, http_ops.c) --------------- */

/* /v1/preprocess, /v1/image, /v1/decode: validate, probe, size the
 * answer, submit (http_finish follows once it is admitted). */
dvpp_status http_image_submit(http_req *r, dvpp_err *err);
/* Answer a finished single-image job. */
enum MHD_Result http_image_answer(http_req *r);

/* Where tensor @t goes: a slot of the named ring (r->spec.ring), or one
 * result buffer in r->result (the .npy header unless raw, then the
 * tensor); t->data points there. */
dvpp_status http_tensor_destination(http_req *r, dvpp_tensor *t, dvpp_err *err);

/* ?ring=NAME: lease the slot to the ring's consumer (it gets a notice)
 * and a JSON answer saying where tensor @t is (@g: its geometry, or NULL).
 * NULL with @err set (the ring closed) or NULL when out of memory. */
struct MHD_Response *http_ring_response(http_req *r, const dvpp_tensor *t,
                                        const dvpp_pipe_geom *g, dvpp_err *err);

/* /v1/batch: the N-image tensor as one batch job. */
dvpp_status http_batch_submit(http_req *r, dvpp_err *err);
enum MHD_Result http_batch_answer(http_req *r);

/* POST /v1/jobs: start a job that keeps its result and answer 202. */
enum MHD_Result http_batch_job_create(http_req *r);
/* GET/DELETE /v1/jobs/{id}, GET /v1/jobs/{id}/result. */
enum MHD_Result http_batch_job_serve(http_req *r, const char *method);

/* /v1/video/decode and /v1/video/encode (http_video.c). */
dvpp_status http_video_submit(http_req *r, dvpp_err *err);
enum MHD_Result http_video_answer(http_req *r);
/* Free r->vid (NULL is a no-op). */
void http_video_free(http_video *v);

/* /healthz, /readyz, /metrics, /v1/info (http_ops.c). */
enum MHD_Result http_ops_serve(http_req *r);

/* GET /v1/presets (http_presets.c). */
enum MHD_Result http_presets_serve(http_req *r);

/* --- the web console (http_console.c) -------------------------------------------- */

/* "/" or "/console/<file>": r->route = DVPPD_ROUTE_CONSOLE and r->asset the
 * embedded file (NULL when not embedded); false for any other @url. */
bool http_console_route(http_req *r, const char *url);
/* GET / and /console/<file> (404 when the console is off or no such file). */
enum MHD_Result http_console_serve(http_req *r);
/* GET /v1/stats: the console's JSON. */
enum MHD_Result http_stats_serve(http_req *r);

/* --- traces (http_trace.c) ------------------------------------------------------- */

typedef struct http_capture http_capture;

/* A job route's trace flag (?trace=1, X-Dvpp-Trace: 1) and the running
 * capture into r->tj. DVPP_EINVAL ("trace") for a bad flag value. */
dvpp_status http_trace_begin(http_req *r, dvpp_err *err);
/* Set r->tj's watch on @p (the request's own pipeline), wrapping its watch. */
void http_trace_watch(http_req *r, dvpp_pipeline *p);
/* Around MHD_queue_response (http_answer): the trace headers and the write
 * span's start (0: not traced); then the front end's spans, and the trace
 * stored. */
uint64_t http_trace_answer_start(http_req *r, struct MHD_Response *resp);
void http_trace_answer_done(http_req *r, uint64_t t_write);
/* GET /v1/traces/{id}. */
enum MHD_Result http_traces_serve(http_req *r);
/* GET /v1/trace?seconds=N: start the capture and its timer (the request is
 * then suspended as a job; http_finish resumes it), and its answer. */
dvpp_status http_trace_capture_submit(http_req *r, dvpp_err *err);
enum MHD_Result http_trace_capture_answer(http_req *r);
/* The capture's timer state (start), a drain's early end (no capture
 * starts after it), the join of the timer (stop, while libmicrohttpd still
 * runs: the timer resumes its request), and the free (after
 * MHD_stop_daemon, when no thread can read h->capture; joins too). */
dvpp_status http_trace_init(dvppd_http *h, dvpp_err *err);
void http_trace_cancel(dvppd_http *h);
void http_trace_join(dvppd_http *h);
void http_trace_fini(dvppd_http *h);

/* --- dumps (http_dump.c) ---------------------------------------------------------- */

/* ?dump=1 or X-Dvpp-Dump: 1 on a single-image request whose input @src
 * (@len bytes) is probed: refuse (DVPP_EUNSUPPORTED "dump", 403) when dumps
 * are off or the caller may not, else make the request's folder and watch
 * its pipeline. DVPP_OK and nothing done without the flag. */
dvpp_status http_dump_start(http_req *r, const dvpp_pipe_source *src, size_t len,
                            dvpp_err *err);

/* The job of a dumping request finished: write the answer's bytes and the
 * manifest (also after a failure), then apply retention. Call before any
 * response takes the result (no-op without a dump). */
void http_dump_finish(http_req *r);

/* ?dump=1 on /v1/batch, once the inputs are known: the folder (as
 * http_dump_start) with a subfolder item-NNNN per input, each item's
 * images written into its own by the watch on its worker. */
dvpp_status http_dump_batch_start(http_req *r, dvpp_err *err);

/* The batch finished with @st (@e its detail): each item's tensor slice
 * and manifest, the batch's tensor and the top manifest, retention. Call
 * before any response takes the result (no-op without a dump). */
void http_dump_batch_finish(http_req *r, dvpp_status st, const dvpp_err *e);

/* A route that cannot dump (/v1/jobs, video): DVPP_EINVAL ("dump") when
 * the request asks for a dump, so it is never silently ignored. */
dvpp_status http_dump_refuse(http_req *r, dvpp_err *err);

/* X-Dvpp-Dump: the folder's name (relative to dump.dir) on @resp. */
void http_dump_header(http_req *r, struct MHD_Response *resp);

/* The request failed (@e) after its dump began and before its job ran (a
 * plan error, a limit, a full queue): the folder's manifest with the error,
 * the item folders' too, retention. No-op without a dump or once finished. */
void http_dump_abort(http_req *r, const dvpp_err *e);

/* Free a request's dump (NULL is a no-op); one never finished nor aborted
 * is aborted first, so its folder still gets a manifest. */
void http_dump_free(struct http_dump *d);

/* --- video requests (http_video.c, http_vparams.c) -------------------------------- */

typedef enum http_vout_kind {
    HTTP_VOUT_NPY,   /* .npy of the frames or the tensor */
    HTTP_VOUT_RAW,   /* the same bytes without the header */
    HTTP_VOUT_JPEG,  /* multipart/mixed of JPEG frames */
} http_vout_kind;

/* One video request: its parameters (parsed on the HTTP thread), then what
 * the job made (written on the worker, read after http_finish). */
struct http_video {
    bool encode;                    /* /v1/video/encode */
    const uint8_t *in;              /* the video or the frames (borrowed body) */
    size_t in_len;                  /* bytes at @in */
    http_vout *out;                 /* the answer's body; NULL once handed over */
    dvpp_task *task;                /* the running job (decode: polled per frame) */
    uint64_t started_ns;            /* when the job started on its worker */
    uint64_t run_ns;                /* how long it ran */
    /* decode */
    http_vout_kind kind;            /* out= */
    int quality;                    /* out=jpeg: JPEG quality */
    dvpp_video_request rq;          /* sampling, frame format, pipeline */
    dvpp_video_result res;          /* the stream, T, geometry, frame list */
    char boundary[48];              /* out=jpeg: the multipart boundary */
    /* encode */
    dvpp_venc_opts eo;              /* the encoder's settings */
    dvpp_image frame;               /* one input frame's geometry (data NULL) */
    size_t frame_bytes;             /* bytes of one input frame */
    uint64_t nframes;               /* T frames in */
    bool *idr;                      /* [nframes]: frames forced to IDR; owned */
    bool rc_set;                    /* rc= given */
    bool bitrate_set;               /* bitrate= given */
    bool crf_set;                   /* crf= given */
    uint64_t packets;               /* packets out */
    uint64_t keyframes;             /* of them, key frames */
};

/* A decode's parameters (sampling, output, the frames' pipeline) into @v,
 * from the query or a JSON spec; DVPP_EINVAL naming the parameter. */
dvpp_status http_vparams_decode(http_req *r, http_video *v, dvpp_err *err);

/* An encode's parameters into @v and the .npy header of the frames at
 * v->in (v->in, v->in_len move to the pixels; nothing is copied). */
dvpp_status http_vparams_encode(http_req *r, http_video *v, dvpp_err *err);

#endif
