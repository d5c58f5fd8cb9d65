/* dvppctl against a running dvppd (--socket PATH or $DVPPD_SOCKET).
 *
 * Every remote command is an entry (ctl_remote_cmd) of one runner's table
 * (ctl_remote_run): the runner checks the flags, connects, runs the
 * command's steps, reports a failure and cleans up, so no command has its
 * own copy of that.
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
    const char *preset;     /* preprocess --preset: the spec sent is
                               {"preset": NAME} (borrowed); @pipe is the
                               preset resolved here, for planning only */
    bool size_unknown;      /* @pipe is not what the daemon runs (a preset
                               only it knows): the output's size is not
                               planned, a ring slot of the largest size
                               (at most CTL_UNSIZED_SLOT) takes it */
    const char *trace;      /* --trace FILE: submitted traced, the daemon's
                               trace of it written there (borrowed) */
} ctl_job;

/* The slot of an output whose size is unknown here. */
#define CTL_UNSIZED_SLOT ((size_t)256 << 20)

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

/* --trace FILE with --socket (ctl_trace.c): trace @id of the daemon
 * (TraceGet) written to @path. */
dvpp_status ctl_trace_fetch(dvppc_conn *c, uint64_t id, const char *path, dvpp_err *err);

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

/* Send --scale as the daemon's "scale" (blobFromImage's multiplier), not
 * as the std the offline path turns it into: for jobs whose pipeline came
 * from ctl_preprocess_pipeline. */
void ctl_job_scale(ctl_job *j, const ctl_args *a);

/* A tensor out: op @index of the aipp_op config @text (@op: that op,
 * parsed here), in @layout/@dtype. */
void ctl_job_aipp(ctl_job *j, const char *text, unsigned index,
                  const dvpp_aipp_op *op, dvpp_layout layout, dvpp_dtype dtype);

/* The JSON spec of @j (docs/http-api.md). Caller frees with free(); NULL
 * when out of memory. */
char *ctl_spec_json(const ctl_job *j);

/* --- ctl_remote.c: the runner ------------------------------------------------------- */

/* ctl_remote_cmd.flags */
#define CTL_REMOTE_SPEC 1u      /* refuse the flags the spec cannot carry first
                                   (ctl_spec_check with the command's name) */
#define CTL_REMOTE_FAIL_NAME 2u /* a failure reads "dvppctl: NAME: ..." (else
                                   the first input names it) */
#define CTL_REMOTE_CONNECT_BARE 4u /* a connection that fails reads
                                      "dvppctl: dvppd at PATH: ... (STATUS)" */

/* A command run by a daemon, as steps the runner calls in order with the
 * command's state (state_bytes, zeroed by the runner, freed after fini):
 * prepare (read the inputs, build the jobs, refuse what the daemon cannot
 * do; before connecting), talk (submit and wait; connected), finish
 * (write the output, print; still connected, so results are still held),
 * release (give slots back; called whenever a connection was made, even
 * after a failure), fini (free what the state holds; always). A hook may
 * be NULL. The runner prints the one line of a failure. */
typedef struct ctl_remote_cmd {
    const char *name;           /* the command, as the user types it */
    unsigned flags;             /* CTL_REMOTE_* */
    size_t state_bytes;         /* the command's state */
    /* 0, 1 (failed: @err says why) or 2 (a usage error, printed) */
    int (*prepare)(ctl_args *a, void *state, dvpp_err *err);
    dvpp_status (*talk)(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err);
    dvpp_status (*finish)(ctl_args *a, void *state, dvpp_err *err);
    void (*release)(dvppc_conn *c, void *state);
    void (*fini)(void *state);
} ctl_remote_cmd;

/* Run the command @name (an entry of the runner's table) with @a parsed
 * and checked as the offline command does: its exit status (0, 1 after
 * one line on stderr, 2 for a usage error). */
int ctl_remote_run(const char *name, ctl_args *a);

/* The table's entries, beside the offline commands they mirror. */
extern const ctl_remote_cmd ctl_remote_decode_cmd;      /* ctl_remote_jobs.c */
extern const ctl_remote_cmd ctl_remote_resize_cmd;
extern const ctl_remote_cmd ctl_remote_crop_cmd;
extern const ctl_remote_cmd ctl_remote_convert_cmd;
extern const ctl_remote_cmd ctl_remote_border_cmd;
extern const ctl_remote_cmd ctl_remote_batch_crop_cmd;
extern const ctl_remote_cmd ctl_remote_preprocess_cmd;
extern const ctl_remote_cmd ctl_remote_aipp_cmd;
extern const ctl_remote_cmd ctl_remote_batch_cmd;        /* ctl_batch.c */
extern const ctl_remote_cmd ctl_remote_video_decode_cmd; /* ctl_video.c */
extern const ctl_remote_cmd ctl_remote_video_encode_cmd; /* ctl_venc.c */
extern const ctl_remote_cmd ctl_remote_version_cmd;      /* ctl_daemon.c */
extern const ctl_remote_cmd ctl_remote_stats_cmd;
extern const ctl_remote_cmd ctl_remote_bench_cmd;

/* --- ctl_remote.c: what the commands share -------------------------------------------- */

/* Connect to a->socket (the handshake included): DVPP_OK with *c set (the
 * caller closes it, dvppc_close), or the failure in @err (field "socket"). */
dvpp_status ctl_remote_open(const ctl_args *a, dvppc_conn **c, dvpp_err *err);

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

/* --- ctl_daemon.c: the daemon's own commands ----------------------------------- */

/* stats (the daemon's counters) and bench (one preprocess job, many times). */
int ctl_cmd_stats(int argc, char **argv);
int ctl_cmd_bench(int argc, char **argv);

#endif
