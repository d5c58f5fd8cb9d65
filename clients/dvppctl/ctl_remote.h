/* dvppctl against a running dvppd (--socket PATH or $DVPPD_SOCKET).
 *
 * The commands that process pixels describe their work as one dvpp_pipeline
 * (the structure the daemon runs), send it as the JSON spec of
 * docs/http-api.md over libdvppclient, and write what comes back with the
 * offline writers (ctl_write_image, ctl_write_tensor), so a file made
 * through the daemon is byte-identical to the one the offline command
 * makes from the same flags. The pipeline is also planned here (headers
 * only, no pixels) to size the output before it exists and to print the
 * geometry the offline commands print. Flags the spec cannot carry are
 * refused with "not available with --socket" (exit 2).
 *
 * Memory: every struct here is owned by the command that fills it and
 * released with its _fini; results point into a ring slot or an inline
 * buffer of libdvppclient until ctl_out_fini.
 */
#ifndef DVPPCTL_CTL_REMOTE_H
#define DVPPCTL_CTL_REMOTE_H

#include "ctl.h"
#include "device/dvpp_pipeline.h"
#include "dvppclient.h"

/* One job for the daemon. */
typedef struct ctl_job {
    dvpp_pipeline pipe;     /* what the daemon will run */
    dvppc_kind kind;        /* TENSOR or PIXELS */
    const char *aipp_text;  /* POST_AIPP: the aipp_op config text, sent as
                               the request's aipp_config (borrowed) */
    unsigned aipp_op;       /* POST_AIPP: the op of that config */
    bool norm_mult;         /* normalise as blobFromImage, (x - mean) * mult:
                               sent as "scale" so the daemon computes the
                               same 1/mult the offline path does */
    double mult;
} ctl_job;

/* The input as the daemon gets it: JPEG and PNG files as they are, raw
 * and .npy pixels read here and sent as raw pixels with their layout. */
typedef struct ctl_source {
    ctl_input_kind kind;
    dvpp_buf file;          /* the file's bytes */
    dvpp_image pixels;      /* RAW/NPY: the pixels (owned) */
    const uint8_t *data;    /* what is sent (into file or pixels) */
    size_t len;
    dvpp_pixfmt format;     /* the image the command works on: the format
                               the offline command decodes to, or the raw
                               pixels' format */
} ctl_source;

/* A finished job. */
typedef struct ctl_out {
    dvppc_result res;       /* the daemon's answer (data valid until fini) */
    dvppc_ring *ring;       /* the ring it came through, or NULL (inline) */
    dvpp_pipeline_plan plan;/* planned here */
    bool planned;           /* plan is valid (the header could be read) */
} ctl_out;

/* --- ctl_spec.c: flags -> pipeline -> JSON ---------------------------------- */

/* Refuse the flags the daemon cannot express for @cmd (ctl_args fields the
 * spec has no key for). Returns 0, or 2 after printing which flag. */
int ctl_spec_check(const ctl_args *a, const char *cmd);

/* Start @j: @s's input and the decode options of @a, output @kind (images
 * in @s->format, unaligned, until ctl_job_pixels sets them). */
void ctl_job_init(ctl_job *j, const ctl_args *a, const ctl_source *s,
                  dvppc_kind kind);

/* Append an op; DVPP_EINVAL past DVPP_PIPE_MAX_OPS. */
dvpp_status ctl_job_crop(ctl_job *j, const dvpp_roi *roi, dvpp_err *err);
dvpp_status ctl_job_resize(ctl_job *j, const ctl_args *a, dvpp_resize_mode mode,
                           uint32_t w, uint32_t h, dvpp_err *err);
dvpp_status ctl_job_convert(ctl_job *j, dvpp_pixfmt to, dvpp_err *err);
dvpp_status ctl_job_border(ctl_job *j, const dvpp_border *b, dvpp_err *err);

/* Pixels out in @fmt with rows of ALIGN(width, align_w) pixels and planes
 * of ALIGN(height, align_h) rows (0 = tight). */
void ctl_job_pixels(ctl_job *j, dvpp_pixfmt fmt, uint32_t align_w,
                    uint32_t align_h);

/* A tensor out: the normalise spec of the preprocess flags. */
void ctl_job_normalize(ctl_job *j, const ctl_args *a);

/* A tensor out: op @index of the aipp_op config @text (@op: that op,
 * parsed here), in @layout/@dtype. */
void ctl_job_aipp(ctl_job *j, const char *text, unsigned index,
                  const dvpp_aipp_op *op, dvpp_layout layout, dvpp_dtype dtype);

/* The JSON spec of @j (docs/http-api.md). Caller frees with free(); NULL
 * when out of memory. */
char *ctl_spec_json(const ctl_job *j);

/* --- ctl_remote.c: talking to the daemon --------------------------------------- */

/* Connect to a->socket (the handshake included): DVPP_OK with *c set (the
 * caller closes it, dvppc_close), or the failure in @err (field "socket"). */
dvpp_status ctl_remote_open(const ctl_args *a, dvppc_conn **c, dvpp_err *err);

/* ctl_remote_open, printing why not: 0, or 1. */
int ctl_remote_connect(const ctl_args *a, dvppc_conn **c);

/* Read input @path for a command that wants its pixels in @want. */
dvpp_status ctl_source_load(const char *path, const ctl_args *a, dvpp_pixfmt want,
                            ctl_source *s, dvpp_err *err);
void ctl_source_fini(ctl_source *s);

/* Plan @j on @s here: the output's geometry and size. */
dvpp_status ctl_job_plan(const ctl_job *j, const ctl_source *s,
                         dvpp_pipeline_plan *plan, dvpp_err *err);

/* The bytes @j's output takes (0 when @plan is NULL: unknown). */
size_t ctl_job_out_bytes(const ctl_job *j, const dvpp_pipeline_plan *plan);

/* A ring of @slots slots for outputs of @bytes, or none (*ring NULL) when
 * they fit inline (Welcome.max_inline). Close with dvppc_ring_close. */
dvpp_status ctl_ring_for(dvppc_conn *c, size_t bytes, unsigned slots,
                         dvppc_ring **ring, dvpp_err *err);

/* Run @j on @s and wait: 0, or a dvpp status with @err set. The output is
 * inline when it fits Welcome.max_inline, else in a ring of one slot made
 * for it. Release @out with ctl_out_fini (also after a failure). */
dvpp_status ctl_job_run(dvppc_conn *c, const ctl_job *j, const ctl_source *s,
                        ctl_out *out, dvpp_err *err);
void ctl_out_fini(dvppc_conn *c, ctl_out *out);

/* The result's pixels as an image view (no copy) / its tensor. */
dvpp_status ctl_out_image(const dvppc_result *r, dvpp_image *img, dvpp_err *err);
dvpp_status ctl_out_tensor(const dvppc_result *r, dvpp_tensor *t, dvpp_err *err);

/* A libdvppclient error as a dvpp_err (same status numbers). */
dvpp_status ctl_from_client(const dvppc_error *e, dvpp_err *err);

/* The commands, with @a parsed and checked as the offline command does. */
int ctl_remote_decode(ctl_args *a);
int ctl_remote_resize(ctl_args *a);
int ctl_remote_crop(ctl_args *a);
int ctl_remote_convert(ctl_args *a);
int ctl_remote_make_border(ctl_args *a);
int ctl_remote_batch_crop(ctl_args *a);
int ctl_remote_preprocess(ctl_args *a);
int ctl_remote_aipp(ctl_args *a);

/* --- ctl_daemon.c: the daemon's own commands ----------------------------------- */

/* Print the daemon's Welcome after the local version lines; 1 when it
 * cannot be reached. */
int ctl_remote_version(const ctl_args *a);
int ctl_cmd_stats(int argc, char **argv);
int ctl_cmd_bench(int argc, char **argv);

#endif
