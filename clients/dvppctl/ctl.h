/* dvppctl internals shared by its command files. */
#ifndef DVPPCTL_CTL_H
#define DVPPCTL_CTL_H

#include <stdbool.h>
#include <stdio.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"
#include "dvpp_status.h"
#include "dvpp_aipp_cfg.h"
#include "dvpp_tensor.h"
#include "dvpp_video.h"
#include "dvpp_vpc.h"

#define CTL_MAX_INPUTS 64
#define CTL_MAX_ROIS 4096
/* The longest list batch builds from its FILES|DIRS before --shard picks
 * its block (a block of any length up to it runs CTL_MAX_INPUTS at a
 * time); also the largest shard count. */
#define CTL_MAX_LISTED (1u << 20)

/* Everything any command accepts; each command reads what it needs. */
typedef struct ctl_args {
    const char *inputs[CTL_MAX_INPUTS];
    unsigned ninputs;
    const char *out;
    /* decoding of JPEG/PNG inputs */
    dvpp_jpeg_decode_opts jpeg;
    dvpp_png_decode_opts png;
    dvpp_limits lim;
    bool format_set;           /* --format given */
    dvpp_pixfmt format;        /* --format: output format */
    bool decode_format_set;
    dvpp_pixfmt decode_format; /* --decode-format */
    const char *input_spec;    /* --input FMT[:WxH] for .npy / raw inputs */
    unsigned shrink_w, shrink_h;
    bool shrink_on_load;
    int quality;
    /* VPC */
    unsigned size_w, size_h;   /* --size */
    bool size_set;
    dvpp_resize_mode mode;
    dvpp_resize_round round;   /* --round nearest|floor (shorter/longer) */
    dvpp_resize_opts resize;
    bool interp_set;
    uint8_t pad[3];            /* --pad RRGGBB (letterbox) */
    dvpp_csc_matrix matrix;
    int range;                 /* -1 profile default, 0 narrow, 1 full */
    dvpp_roi rois[CTL_MAX_ROIS];
    unsigned roi_input[CTL_MAX_ROIS];
    unsigned nrois;
    dvpp_border border;
    bool margins_set;
    /* AIPP / normalise */
    const char *config;        /* --config aipp.cfg */
    const char *dynamic;       /* --dynamic blob file */
    unsigned op_index;         /* --op N */
    double mean[3], std[3];    /* --mean, --std */
    bool std_set, norm_scale_set;
    bool scale_is_norm;        /* the command reads --scale as a multiplier */
    unsigned channels;         /* batch: --channels N (0 = CPUs) */
    bool strict;               /* batch: --strict */
    unsigned shard_index;      /* batch: --shard I/N (I < N) */
    unsigned shard_count;      /* N; 0 without --shard */
    unsigned shard_first;      /* batch: the list index of inputs[0], so
                                  reports give an item's index in the
                                  whole (unsharded) list */
    const char **block;        /* batch: this run's whole list (its --shard
                                  block), run in chunks of at most
                                  CTL_MAX_INPUTS through inputs[]; the array
                                  is ctl_cmd_batch's, the names borrowed */
    unsigned nblock;
    unsigned block_first;      /* the list index of block[0] */
    bool list_inputs;          /* batch: the parser stops filling inputs at
                                  CTL_MAX_INPUTS instead of refusing; the
                                  command lists operands itself */
    char **operands;           /* every non-option argument (argv's) */
    unsigned noperands;
    double norm_scale;         /* preprocess --scale (multiplier) */
    bool bgr;                  /* --order bgr */
    bool layout_set, dtype_set;
    dvpp_layout layout;
    dvpp_dtype dtype;
    /* the daemon */
    const char *socket;        /* --socket PATH, else $DVPPD_SOCKET; NULL or
                                  "" runs in-process */
    unsigned long long count;  /* bench: -n N jobs */
    unsigned concurrency;      /* bench: --concurrency K jobs in flight */
    /* video (video-decode, video-encode) */
    dvpp_vdec_opts vdec;       /* --every --fps --keyframes --start --end
                                  --max-frames --threads (sampling) */
    dvpp_venc_opts venc;       /* --codec --bitrate --gop --fps --rc --crf
                                  --profile --threads (encoder) */
    bool codec_set;            /* --codec given */
    bool rc_set;               /* --rc given */
    bool bitrate_set;          /* --bitrate given */
    bool crf_set;              /* --crf given */
    bool profile_is_codec;     /* the command reads --profile as the codec's
                                  profile (video-encode), not dvpp_profile */
    const char *idr;           /* --idr N,N,...: frames forced to IDR */
    const char *dump;          /* --dump DIR: preprocess runs the pipeline
                                  here, its intermediates into DIR (ctl_dump.c) */
    const char *trace;         /* --trace FILE: the job's Chrome trace JSON: the
                                  daemon's (--socket) or preprocess's own run
                                  here (ctl_trace.c) */
    const char *preset;        /* --preset NAME: preprocess runs that preset
                                  (ctl_preset_run.c) */
    const char *pipeline_flag; /* the first flag given that describes the
                                  pipeline ("--size", ...), which --preset
                                  refuses; NULL when none */
} ctl_args;

/* Parse @argv (argv[0] is the command name) into @a. Returns 0, or 2 after
 * printing why the command line is wrong. */
int ctl_parse_args(int argc, char **argv, ctl_args *a);

/* Like ctl_parse_args, for commands that may run without an input or -o
 * (version, stats, bench). */
int ctl_parse_options(int argc, char **argv, ctl_args *a);

/* True when @a sends the work to a daemon (--socket or $DVPPD_SOCKET). */
bool ctl_use_socket(const ctl_args *a);

/* Print "dvppctl: @what: message (NAME)" and return 1. */
int ctl_fail(const char *what, const dvpp_err *err);

/* What an input file holds, from its magic (and, for a damaged signature,
 * its extension). */
typedef enum ctl_input_kind {
    CTL_INPUT_RAW,  /* raw pixels (--input FMT:WxH) */
    CTL_INPUT_JPEG,
    CTL_INPUT_PNG,
    CTL_INPUT_NPY,
} ctl_input_kind;

ctl_input_kind ctl_sniff(const dvpp_buf *b, const char *path);

/* The format ctl_load_image decodes a JPEG or PNG input to when the
 * command wants @want (--decode-format wins). */
dvpp_pixfmt ctl_decode_format(ctl_input_kind kind, const ctl_args *a,
                              dvpp_pixfmt want);

/* Load @path as an image: JPEG/PNG are decoded (format: --decode-format,
 * else @want when the decoder can write it, else rgb); .npy and raw files
 * are read as pixels (see --input). Caller owns @img (dvpp_image_free). */
dvpp_status ctl_load_image(const char *path, const ctl_args *a, dvpp_pixfmt want,
                           dvpp_image *img, dvpp_err *err);

/* Write @img to @path, the container chosen by the extension:
 * .npy (uint8 array: HxWxC packed, HxW grey, rows x width_stride for
 * multi-plane YUV), .png, .jpg/.jpeg (at @quality), anything else raw bytes
 * exactly as laid out in memory (strides included). */
dvpp_status ctl_write_image(const char *path, const dvpp_image *img,
                            int quality, dvpp_err *err);

/* Write @n images of one format and size as one stacked .npy
 * (N x ...same layout as ctl_write_image). */
dvpp_status ctl_write_stack(const char *path, const dvpp_image *imgs,
                            unsigned n, dvpp_err *err);

/* Write @n images as one stacked .npy, or one file each when @pattern has
 * a %d (ctl_write_image, at @quality). */
dvpp_status ctl_write_batch(const char *pattern, const dvpp_image *imgs,
                            unsigned n, int quality, dvpp_err *err);

/* Parse "WxH" into two positive numbers. */
bool ctl_parse_size(const char *s, unsigned *w, unsigned *h);

/* Parse a non-negative decimal integer that fits 64 bits. */
bool ctl_parse_u64(const char *s, unsigned long long *out);

/* The geometry of a resize as resize prints it: one JSON line (mode,
 * output size, scale and offsets, crop and paste rectangles). */
void ctl_print_geometry(const dvpp_resize_geom *g, dvpp_resize_mode m);

/* The VPC commands (ctl_vpc.c). */
int ctl_cmd_resize(int argc, char **argv);
int ctl_cmd_crop(int argc, char **argv);
int ctl_cmd_convert(int argc, char **argv);
int ctl_cmd_make_border(int argc, char **argv);
int ctl_cmd_batch_crop(int argc, char **argv);

/* The AIPP commands (ctl_aipp.c). */
int ctl_cmd_aipp(int argc, char **argv);
int ctl_cmd_aipp_check(int argc, char **argv);
/* preset import: a Hugging Face preprocessor_config.json -> a dvppd preset
 * on stdout (ctl_preset.c). */
int ctl_cmd_preset(int argc, char **argv);
int ctl_cmd_preprocess(int argc, char **argv);

/* The pixel format the aipp command loads its input in for @op. */
dvpp_pixfmt ctl_aipp_pixfmt(const dvpp_aipp_op *op);

/* The device-model commands (ctl_batch.c). */
int ctl_cmd_batch(int argc, char **argv);

/* The pipeline the preprocess flags describe (--size, --mode, --interp,
 * --parity, --pad, the normalise flags) into a tensor; the input fields
 * are left for the caller (ctl_batch.c). */
dvpp_status ctl_preprocess_pipeline(const ctl_args *a, dvpp_pipeline *p, dvpp_err *err);

/* The video commands (ctl_video.c: video-info, video-decode; ctl_venc.c:
 * video-encode): libdvpp's VDEC/VENC in-process, or (video-decode,
 * video-encode with --socket) a dvppd video channel. */
int ctl_cmd_video_info(int argc, char **argv);
int ctl_cmd_video_decode(int argc, char **argv);
int ctl_cmd_video_encode(int argc, char **argv);

/* Parse the command line of a video command into @a (caller-allocated):
 * one input FILE, and -o OUT when @need_out. Returns 0, or 2 after
 * printing why. */
int ctl_video_args(int argc, char **argv, ctl_args *a, bool need_out);

/* A batch's progress bar on stderr, redrawn in place. */
void ctl_draw_progress(size_t total, size_t done, size_t failed);

/* The normalise spec the preprocess flags describe (--mean/--std, or
 * --mean/--scale, --order, --layout, --dtype). */
void ctl_norm_spec(const ctl_args *a, dvpp_norm_spec *spec);

/* Write tensor @t (data set) as .npy with its stored shape and dtype. */
dvpp_status ctl_write_tensor(const char *path, const dvpp_tensor *t,
                             dvpp_err *err);

void ctl_usage(FILE *f);

/* --- preprocess's local pipeline run (ctl_local.c) -------------------------------
 * The daemon's pipeline for the preset (--preset) or the preprocess flags,
 * run here: --preset, --dump and --trace without a daemon. */
typedef struct ctl_local {
    dvpp_pipeline p;            /* its watch is the caller's to set before the run */
    dvpp_buf file;              /* the input */
    dvpp_worker w;
    dvpp_pipeline_out out;      /* out.tensor points into @npy */
    dvpp_pipe_source src;       /* the input's probe */
    uint8_t *npy;               /* .npy header + tensor, as dvppd answers; owned */
    size_t npy_len;
    uint64_t read_t0, read_t1;  /* dvpp_now_ns around the input's read */
} ctl_local;

/* Ready @l (a worker with a->lim); ctl_local_fini frees all it holds. */
void ctl_local_init(ctl_local *l, const ctl_args *a);
void ctl_local_fini(ctl_local *l);
/* The pipeline, the input (a->inputs[0]) read, validated, probed and
 * planned, the tensor allocated behind its .npy header. */
dvpp_status ctl_local_prepare(ctl_local *l, const ctl_args *a, dvpp_err *err);
/* The run, on this thread, watched by l->p.watch (NULL: none). */
dvpp_status ctl_local_run(ctl_local *l, dvpp_err *err);

/* preprocess --dump DIR (ctl_dump.c): the pipeline of the preprocess flags
 * run here, watched, every intermediate written into DIR (made 0700 if
 * missing, files replaced) as dvppd's ?dump=1 writes them, the tensor to -o
 * and DIR/tensor.npy. Exit status 0 or 1 (the reason printed). */
int ctl_dump_preprocess(const ctl_args *a);

/* preprocess --trace FILE without a daemon (ctl_trace.c): the pipeline of
 * the preset or the preprocess flags (as --dump) run here on one worker, recorded with
 * dvppd's trace recorder ("preprocess" around "read", the pipeline's
 * watch spans, "write"), the tensor to -o, the trace JSON to FILE.
 * Returns the exit code. */
int ctl_trace_preprocess(const ctl_args *a);

/* --- presets (ctl_preset_run.c) ------------------------------------------------
 * preprocess --preset NAME resolves NAME as dvppd does: the shipped presets
 * (dvppd/dvppd_presets.c, linked in), then, with --config FILE, the
 * "presets" of that dvppd config file, which add and replace. */

/* Refuse what cannot go with --preset in @cmd: a pipeline flag (named).
 * Returns 0, or 2 after printing why. */
int ctl_preset_check(const ctl_args *a, const char *cmd);

/* The pipeline of preset a->preset (a tensor preset) into @p, exactly
 * the one dvppd builds for ?preset=NAME. DVPP_EINVAL (field "preset")
 * naming an unknown preset or one for another endpoint; a bad --config
 * file names itself. */
dvpp_status ctl_preset_pipeline(const ctl_args *a, dvpp_pipeline *p, dvpp_err *err);

/* preprocess --preset NAME without a daemon: the preset's pipeline run
 * here on one worker, the tensor to -o as dvppd's .npy answer (same
 * bytes), its geometry printed as preprocess prints it. Exit status. */
int ctl_preset_preprocess(const ctl_args *a);

/* preset list: the presets (shipped, plus --config FILE's) as
 * "NAME<TAB>KIND<TAB>DESCRIPTION" lines, in name order. Exit status. */
int ctl_preset_list(int argc, char **argv);

#endif
