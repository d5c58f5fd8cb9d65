/* dvppd_metrics: the daemon's counters and their Prometheus text.
 *
 * Requests by route and status, latency histograms per route and per
 * stage, in-flight requests, pixels processed and front-end rejections are
 * counted here with relaxed atomics (any thread may record); the device's
 * own gauges and counters (queue depth, running, jobs, admission
 * rejections) are read from dvpp_device_get_counters when rendering.
 *
 * Ownership: the caller owns the dvppd_metrics (plain data, zeroed by
 * dvppd_metrics_init, nothing to free). Thread-safety: every function may
 * run concurrently with the others.
 */
#ifndef DVPPD_METRICS_H
#define DVPPD_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "device/dvpp_device.h"
#include "dvpp_mem.h"
#include "dvppd_errlog.h"

typedef enum dvppd_route {
    DVPPD_ROUTE_PREPROCESS,
    DVPPD_ROUTE_IMAGE,
    DVPPD_ROUTE_DECODE,
    DVPPD_ROUTE_BATCH,
    DVPPD_ROUTE_JOBS,        /* POST /v1/jobs */
    DVPPD_ROUTE_JOB,         /* GET/DELETE /v1/jobs/{id} */
    DVPPD_ROUTE_JOB_RESULT,  /* GET /v1/jobs/{id}/result */
    DVPPD_ROUTE_HEALTHZ,
    DVPPD_ROUTE_READYZ,
    DVPPD_ROUTE_METRICS,
    DVPPD_ROUTE_INFO,
    DVPPD_ROUTE_VIDEO_DECODE, /* POST /v1/video/decode */
    DVPPD_ROUTE_VIDEO_ENCODE, /* POST /v1/video/encode */
    DVPPD_ROUTE_PRESETS,     /* GET /v1/presets */
    DVPPD_ROUTE_STATS,       /* GET /v1/stats (the console's JSON) */
    DVPPD_ROUTE_CONSOLE,     /* GET / and /console/<file> */
    DVPPD_ROUTE_TRACE,       /* GET /v1/trace?seconds=N */
    DVPPD_ROUTE_TRACES,      /* GET /v1/traces/{id} */
    DVPPD_ROUTE_OTHER,       /* 404s */
    DVPPD_ROUTE_COUNT
} dvppd_route;

const char *dvppd_route_name(dvppd_route r);

typedef enum dvppd_stage {
    DVPPD_STAGE_READ,   /* headers to the last body byte */
    DVPPD_STAGE_QUEUE,  /* admitted to started */
    DVPPD_STAGE_DECODE,
    DVPPD_STAGE_VPC,
    DVPPD_STAGE_POST,   /* normalise/AIPP or encode */
    DVPPD_STAGE_TOTAL,  /* headers to the answer */
    DVPPD_STAGE_COUNT
} dvppd_stage;

/* Front-end refusals, beside the device's admission reasons. */
typedef enum dvppd_reject {
    DVPPD_REJECT_BODY,     /* body above the limit (413) */
    DVPPD_REJECT_DEADLINE, /* request cut at its deadline */
    DVPPD_REJECT_COUNT
} dvppd_reject;

#define DVPPD_HIST_BUCKETS 15
#define DVPPD_CODES 20

typedef struct dvppd_hist {
    atomic_uint_fast64_t bucket[DVPPD_HIST_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t sum_ns;
    atomic_uint_fast64_t count;
} dvppd_hist;

typedef struct dvppd_metrics {
    atomic_uint_fast64_t requests[DVPPD_ROUTE_COUNT][DVPPD_CODES];
    dvppd_hist route[DVPPD_ROUTE_COUNT];
    dvppd_hist stage[DVPPD_STAGE_COUNT];
    atomic_uint_fast64_t rejected[DVPPD_REJECT_COUNT];
    atomic_uint_fast64_t pixels;
    atomic_int_fast64_t inflight;
    atomic_int_fast64_t suspended;        /* requests waiting on their device job */
    atomic_int_fast64_t result_bytes;     /* HTTP result buffers alive */
    atomic_uint_fast64_t results;         /* HTTP result buffers made */
    atomic_uint_fast64_t reloads[2];      /* [0] ok, [1] failed */
    atomic_uint_fast64_t generation;      /* settings generation in use */
    dvppd_errlog errors;                  /* the last error answers (console) */
} dvppd_metrics;

void dvppd_metrics_init(dvppd_metrics *m);

/* One answered request: its route, HTTP status and total time. */
void dvppd_metrics_request(dvppd_metrics *m, dvppd_route r, unsigned code,
                           uint64_t ns);
void dvppd_metrics_stage(dvppd_metrics *m, dvppd_stage s, uint64_t ns);
void dvppd_metrics_reject(dvppd_metrics *m, dvppd_reject why);
void dvppd_metrics_pixels(dvppd_metrics *m, uint64_t n);
/* An HTTP result buffer of @bytes made (> 0) or freed (< 0). */
void dvppd_metrics_result(dvppd_metrics *m, int64_t bytes);
/* +1 when a request starts, -1 when it ends. */
void dvppd_metrics_inflight(dvppd_metrics *m, int delta);
/* +1 when a request's connection is suspended on its submitted job, -1
 * when the job's end resumes it. */
void dvppd_metrics_suspended(dvppd_metrics *m, int delta);

/* Histogram bucket @b's upper bound in ns (b < DVPPD_HIST_BUCKETS). */
uint64_t dvppd_hist_bound_ns(int b);
/* Quantile @q (0..1) of the counts @bucket[DVPPD_HIST_BUCKETS + 1] (not
 * cumulative), in seconds, interpolated linearly inside its bucket (the
 * +Inf bucket reads as its lower bound); 0 when there are none. */
double dvppd_hist_quantile(const uint64_t *bucket, double q);
/* The label of front-end refusal @why ("body_too_large", "deadline"). */
const char *dvppd_reject_label(dvppd_reject why);

/* A reload (SIGHUP): applied (@ok, now at settings @generation) or refused. */
void dvppd_metrics_reload(dvppd_metrics *m, bool ok, uint64_t generation);

/* Labels of dvppd_build_info. */
typedef struct dvppd_build_info {
    const char *version, *simd, *jpeg;
} dvppd_build_info;

/* Append the Prometheus text exposition (version 0.0.4) to @out: our
 * counters and, when @dev is not NULL, the device's. DVPP_ENOMEM. */
dvpp_status dvppd_metrics_render(dvppd_metrics *m, dvpp_device *dev,
                                 const dvppd_build_info *bi, dvpp_buf *out);

#endif
