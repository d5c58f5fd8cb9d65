/* dvpp_pipeline: the one canonical description of a job, its validator,
 * its planner and a synchronous executor.
 *
 * A front end (HTTP, socket, dvppctl) translates its request syntax into a
 * dvpp_pipeline and calls dvpp_pipeline_validate(); front ends never
 * validate on their own. The device model admits the job and a worker runs
 * it with dvpp_pipeline_run():
 *
 *   decode (JPEG / PNG) or wrap raw pixels
 *     -> up to DVPP_PIPE_MAX_OPS VPC ops (crop, resize, convert, border,
 *        flip), each on the image the op before it made
 *     -> optional normalise spec or AIPP op, written straight into image n
 *        of a caller tensor (a batch slice or a ring slot)
 *     -> or an output image (raw pixels into a caller buffer, or JPEG/PNG
 *        appended to a caller dvpp_buf).
 *
 * Fusions the planner picks (dvpp_pipeline_plan):
 *   - shrink-on-load: the JPEG is decoded with DCT scaling n/8, the largest
 *     reduction that keeps the first resize a downscale
 *     (dvpp_jpeg_shrink_scale on that resize's target); none under the
 *     ascend profiles, whose JPEGD has no DCT scaling;
 *   - resize + normalise: when the last VPC op is a resize and a normalise
 *     spec follows, the two run as one dvpp_preprocess_run into the
 *     destination tensor (no intermediate image of the pipeline). Any op
 *     after the last resize (a flip, a border) ends the fusion: the ops
 *     run as written and the normalisation reads their result 1:1.
 *
 * Ownership: dvpp_pipeline is plain data owned by the caller; it holds no
 * pointers (the AIPP op is copied by value). The input bytes, the output
 * tensor data, the output image buffer and the encoded dvpp_buf are the
 * caller's; the run only writes into them.
 *
 * Thread-safety: validate and plan are pure functions. A dvpp_worker is
 * per thread (it owns scratch memory, decode and intermediate buffers):
 * use one worker per thread; different workers may run concurrently.
 * Buffers are grown on demand and kept, so a run that repeats the geometry
 * of an earlier run on the same worker allocates nothing new.
 */
#ifndef DVPP_PIPELINE_H
#define DVPP_PIPELINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_aipp.h"
#include "dvpp_aipp_cfg.h"
#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"
#include "dvpp_profile.h"
#include "dvpp_status.h"
#include "dvpp_tensor.h"
#include "dvpp_vpc.h"

#define DVPP_PIPE_MAX_OPS 8

typedef enum dvpp_pipe_input {
    DVPP_PIPE_IN_AUTO = 0, /* sniff the magic: JPEG (FF D8) or PNG */
    DVPP_PIPE_IN_JPEG = 1,
    DVPP_PIPE_IN_PNG = 2,
    DVPP_PIPE_IN_RAW = 3,  /* pixels laid out as @raw describes */
} dvpp_pipe_input;

/* Raw pixel input: the dvpp_image geometry of the input bytes. */
typedef struct dvpp_pipe_raw {
    dvpp_pixfmt format;
    uint32_t width, height;
    uint32_t width_stride;  /* bytes of plane 0; 0 = tight */
    uint32_t height_stride; /* rows; 0 = height */
} dvpp_pipe_raw;

typedef struct dvpp_pipe_decode {
    dvpp_pixfmt format;   /* DVPP_PIXEL_UNKNOWN = auto: what the next stage
                             wants (AIPP's input, the output image's format,
                             else RGB) */
    bool shrink_on_load;  /* JPEG: DCT scaling before the first resize */
    bool has_roi;         /* JPEG: decode only @roi (output pixels) */
    dvpp_jpeg_roi roi;
    bool no_orient;       /* ignore EXIF orientation */
    uint8_t scale_denom;  /* JPEG: 0 = none (or shrink_on_load's), 1, 2, 4, 8:
                             decode at the DCT scale 1/scale_denom, as PIL's
                             Image.draft does (output side ceil(side / d)) */
    bool allow_partial;   /* accept truncated/corrupt JPEG data */
    dvpp_profile profile; /* codecs and VPC */
} dvpp_pipe_decode;

typedef enum dvpp_pipe_op_kind {
    DVPP_PIPE_OP_CROP = 0,
    DVPP_PIPE_OP_RESIZE = 1,
    DVPP_PIPE_OP_CONVERT = 2,
    DVPP_PIPE_OP_BORDER = 3,
    DVPP_PIPE_OP_FLIP = 4,    /* mirror the current image (dvpp_vpc_flip) */
} dvpp_pipe_op_kind;

typedef struct dvpp_pipe_resize {
    dvpp_resize_mode mode;
    uint32_t w, h;          /* SHORTER/LONGER use w only */
    dvpp_resize_opts opts;  /* parity, interp, ascend_mode */
    uint8_t pad[3];         /* letterbox colour, R,G,B (converted for YUV) */
    dvpp_resize_round round;/* SHORTER/LONGER's other side (0 = NEAREST);
                               FLOOR on another mode is refused */
} dvpp_pipe_resize;

/* How a centre crop rounds its offset when the image and the crop differ
 * by an odd number of pixels (per axis, d = image side - crop side >= 0):
 *   FLOOR: d // 2 (Hugging Face image_transforms.center_crop);
 *   EVEN:  Python's round(d / 2), ties to even (torchvision CenterCrop's
 *          int(round((L - C) / 2.0))): d // 2 when that is even, else
 *          d // 2 + 1 for an odd d. */
typedef enum dvpp_pipe_crop_round {
    DVPP_PIPE_CROP_FLOOR = 0,
    DVPP_PIPE_CROP_EVEN = 1,
} dvpp_pipe_crop_round;

/* A crop op's centre form: @w x @h cut from the middle of the image the op
 * gets, the rectangle resolved at plan time (dvpp_pipeline_plan.crop[i]).
 * A crop larger than that image is refused ("ops[i].crop"), not padded. */
typedef struct dvpp_pipe_center {
    uint32_t w, h;                /* 0 x 0: not a centre crop */
    dvpp_pipe_crop_round round;
} dvpp_pipe_center;

typedef struct dvpp_pipe_op {
    dvpp_pipe_op_kind kind;
    union {
        dvpp_roi crop;            /* inclusive, in the current image */
        dvpp_pipe_resize resize;
        dvpp_pixfmt convert;      /* target format */
        dvpp_border border;
        dvpp_flip flip;
    } u;
    /* CONVERT to GRAY from the RGB family: DVPP_PARITY_PIL is
     * Pillow's convert('L') (dvpp_csc.pil_luma), DVPP_PARITY_CV2 (0, the
     * default) cv2's COLOR_RGB2GRAY; no other value. Unused by other ops. */
    dvpp_parity convert_parity;
    /* CROP: center.w nonzero makes it a centre crop (u.crop is then
     * ignored); both sides nonzero. Unused by other ops. */
    dvpp_pipe_center center;
} dvpp_pipe_op;

/* Whether @op is a centre crop (its rectangle known only at plan time). */
static inline bool dvpp_pipe_op_is_center_crop(const dvpp_pipe_op *op)
{
    return op->kind == DVPP_PIPE_OP_CROP && (op->center.w || op->center.h);
}

/* The offset of a centre crop of side @c in a side @l (c <= l), rounded as
 * @r says. */
uint32_t dvpp_pipe_center_offset(uint32_t l, uint32_t c, dvpp_pipe_crop_round r);

/* "floor" / "even" <-> dvpp_pipe_crop_round (parse: false when unknown). */
bool dvpp_pipe_crop_round_parse(const char *s, dvpp_pipe_crop_round *out);
const char *dvpp_pipe_crop_round_name(dvpp_pipe_crop_round r);

typedef enum dvpp_pipe_post {
    DVPP_PIPE_POST_NONE = 0,
    DVPP_PIPE_POST_NORM = 1,  /* @norm: (x / scale - mean) / std */
    DVPP_PIPE_POST_AIPP = 2,  /* @aipp (static op), tensor in @aipp_layout,
                                 @aipp_dtype */
} dvpp_pipe_post;

typedef enum dvpp_pipe_output {
    DVPP_PIPE_OUT_TENSOR = 0,
    DVPP_PIPE_OUT_IMAGE = 1,
} dvpp_pipe_output;

typedef enum dvpp_pipe_encoding {
    DVPP_PIPE_ENC_NONE = 0,  /* raw pixels, tight layout */
    DVPP_PIPE_ENC_JPEG = 1,
    DVPP_PIPE_ENC_PNG = 2,
} dvpp_pipe_encoding;

/* Watches a run, for traces and dumps (dvppd's ?trace=1 and ?dump=1).
 * Both hooks are optional and called synchronously on the worker's thread
 * (a batch's items run on several workers at once: the hooks must be
 * thread-safe); @item is the run's dvpp_pipeline_out.n. A run without a
 * watch pays one pointer test per stage.
 *   span:  a stage ran from @t0_ns to @t1_ns (dvpp_now_ns). @name is
 *          "run" (the whole dvpp_pipeline_run, every other span nests in
 *          it), "plan" (validate, probe, plan), "decode", the op's kind
 *          ("crop", "resize", "convert", "border", "flip"; @index the op's
 *          index, -1 for the others), "normalise", "aipp", "image"
 *          (output conversion, copy or encoding).
 *   image: an intermediate, borrowed for the call: "decoded" (or the raw
 *          input, @index -1), after op @index (named by its kind), and
 *          "post_input" (what normalise/AIPP/the output step reads, @index
 *          -1). With an image hook the run makes every op's output: the
 *          windowed resize+crop and the decode window are not planned
 *          (they change no output byte), and the last resize the
 *          normalisation does itself is also run alone, for the hook only,
 *          so the tensor is the very one a run without the watch makes. */
typedef struct dvpp_pipe_watch {
    void *ctx;
    void (*span)(void *ctx, const char *name, int index, uint32_t item, uint64_t t0_ns,
                 uint64_t t1_ns);
    void (*image)(void *ctx, const char *name, int index, uint32_t item,
                  const dvpp_image *img);
} dvpp_pipe_watch;

/* The name of an op kind ("crop", "resize", "convert", "border", "flip"). */
const char *dvpp_pipe_op_kind_name(dvpp_pipe_op_kind k);

typedef struct dvpp_pipeline {
    dvpp_pipe_input input;
    dvpp_pipe_raw raw;            /* DVPP_PIPE_IN_RAW only */
    dvpp_pipe_decode decode;
    dvpp_pipe_op ops[DVPP_PIPE_MAX_OPS];
    uint32_t nops;
    dvpp_pipe_post post;
    dvpp_norm_spec norm;          /* dtype/layout of the tensor */
    dvpp_aipp_op aipp;            /* copied by value */
    dvpp_layout aipp_layout;      /* default NC1HWC0 */
    dvpp_dtype aipp_dtype;        /* default F16 */
    dvpp_pipe_output output;
    dvpp_pixfmt out_format;       /* image: UNKNOWN keeps the last format */
    dvpp_pipe_encoding encoding;
    int quality;                  /* JPEG 1..100 (ascend310 also 0) */
    /* Unencoded image output: rows hold ALIGN(width, out_align_w) pixels,
     * planes ALIGN(height, out_align_h) rows (0 or 1 = tight; at most
     * DVPP_PIPE_MAX_ALIGN), as dvpp_image_init aligns. */
    uint32_t out_align_w, out_align_h;
    /* Borrowed, NULL by default: must outlive every run of this pipeline.
     * A pipeline shared between jobs (a cache) must be copied before one
     * job sets it. */
    const dvpp_pipe_watch *watch;
} dvpp_pipeline;

#define DVPP_PIPE_MAX_ALIGN 4096u

/* Defaults: AUTO input, auto decode format, native, no ops, no post step,
 * image output in the last format, unencoded; norm spec and AIPP tensor
 * defaults as dvpp_norm_spec_init / ATC (NC1HWC0 f16); quality 95. */
void dvpp_pipeline_init(dvpp_pipeline *p);

/* Append an op; DVPP_EINVAL ("ops") when DVPP_PIPE_MAX_OPS are there. */
dvpp_status dvpp_pipeline_add_op(dvpp_pipeline *p, const dvpp_pipe_op *op,
                                 dvpp_err *err);

/* The one validator (NULL @lim: defaults). Checks everything that needs
 * no pixels, naming the field in err->field:
 *   DVPP_EINVAL   "input", "raw.format", "raw.width", "raw.height",
 *                 "raw.width_stride", "decode.format", "decode.roi",
 *                 "decode.shrink_on_load" (needs a resize as first op and
 *                 no ROI), "decode.profile", "nops", "ops[i].crop",
 *                 "ops[i].resize.*", "ops[i].convert", "ops[i].border",
 *                 "ops[i].flip",
 *                 "ops[i].kind", "post", "norm.*", "aipp.*", "output",
 *                 "out_format", "encoding", "quality";
 *                 "post" also for tensor output without normalise/AIPP
 *                 and for image output with one;
 *   DVPP_ELIMIT   raw geometry or a resize target above @lim;
 *   DVPP_EPROFILE ascend profiles: resize target outside 10x6..4096x4096,
 *                 ascend_mode outside 0..4 (310) / 0..2 (310P).
 *   DVPP_EUNSUPPORTED a dynamic AIPP op ("aipp.mode"). */
dvpp_status dvpp_pipeline_validate(const dvpp_pipeline *p,
                                   const dvpp_limits *lim, dvpp_err *err);

/* What the planner needs to know about the input. */
typedef struct dvpp_pipe_source {
    bool is_jpeg;
    dvpp_jpeg_info jpeg;         /* is_jpeg: from dvpp_jpeg_probe */
    uint32_t width, height;      /* otherwise: PNG/raw size */
    dvpp_png_info png;           /* a probed PNG (zero otherwise: an 8-bit
                                    RGB picture of width x height) */
    /* Set by dvpp_pipeline_probe: the limits the input was checked
     * against, which the planner holds the output of every op to. A
     * source filled by hand has none (false): its plan sizes an output,
     * and dvpp_pipeline_run, which always probes, checks before it
     * allocates. */
    bool has_limits;
    dvpp_limits limits;
} dvpp_pipe_source;

/* Read the header of @input (no pixel decoded; cheap enough for a front
 * end's own thread) into @src, after the encoded-size limit of @lim (NULL:
 * defaults). DVPP_EUNSUPPORTED ("input") when @p's input is AUTO and the
 * bytes are neither JPEG nor PNG; the probe errors of the codecs
 * (DVPP_ECORRUPT, DVPP_ELIMIT, ...). With dvpp_pipeline_plan_make it tells
 * a front end the output's size before the job runs. */
dvpp_status dvpp_pipeline_probe(const dvpp_pipeline *p, const uint8_t *input,
                                size_t len, const dvpp_limits *lim,
                                dvpp_pipe_source *src, dvpp_err *err);

/* Maps an output point back to the source image (displayed orientation,
 * before DCT scaling): source = (output - pad) / scale, per axis, in
 * pixel-edge coordinates. A flip makes its axis' scale negative. */
typedef struct dvpp_pipe_geom {
    double scale_x, scale_y;
    double pad_x, pad_y;
} dvpp_pipe_geom;

typedef struct dvpp_pipeline_plan {
    dvpp_pixfmt decode_format;   /* concrete decoder output */
    uint8_t scale_num;           /* DCT scale n/8 (8 = none) */
    uint32_t src_w, src_h;       /* the image the ops start from */
    dvpp_resize_geom resize[DVPP_PIPE_MAX_OPS]; /* per resize op */
    /* Per crop op: the rectangle it cuts (inclusive, in the image it gets):
     * the op's own, or a centre crop's as resolved for this source. What
     * the run, the fusions and the decode window use. */
    dvpp_roi crop[DVPP_PIPE_MAX_OPS];
    uint32_t img_w, img_h;       /* after the ops */
    dvpp_pixfmt img_format;      /* after the ops (before AIPP/output) */
    bool fuse_resize_norm;       /* last resize + normalise in one call */
    /* Fusions that change no output byte (native profile; the
     * environment variable DVPP_NO_FUSE=1 turns them off, for tests that
     * compare): a STRETCH resize op i followed by a crop computes only
     * the pixels the crop keeps (dvpp_vpc_resize_window; op i + 1 is not
     * run), and a JPEG decode is limited to what op 0 reads (the crop,
     * or the rectangle that windowed resize reads: decode_window). */
    bool window_resize[DVPP_PIPE_MAX_OPS];
    bool decode_window;
    /* tensor output: N=1 image shape; image output: c = 0 */
    uint32_t c, h, w;
    dvpp_dtype dtype;
    dvpp_layout layout;
    dvpp_pixfmt out_format;      /* image output */
    size_t out_bytes;            /* image output, with the out_align strides */
    /* The memory the run's intermediates take on its worker besides the
     * input and the caller's output (the decoded image, the op outputs in
     * their two alternating buffers, VPC/AIPP temporaries, the last
     * conversion): what admission counts for a running job
     * (dvpp_pipejob_submit and batch items add it to their bytes); the
     * result buffer is the caller's to count (e.g. against
     * limits.max_output_bytes). An upper bound. */
    size_t work_bytes;
    dvpp_pipe_geom geom;
} dvpp_pipeline_plan;

/* Resolve the steps of a validated @p for @src. DVPP_EINVAL for a crop or
 * border that does not fit the image it applies to ("ops[i].crop"; a
 * centre crop larger than its image too: its rectangle, resolved here,
 * is plan.crop[i] and then follows every rule a fixed one does),
 * errors of dvpp_resize_geometry (as "ops[i].resize"), DVPP_EFORMAT when
 * the AIPP op cannot take the image. With @src's limits (a probed
 * source): DVPP_ELIMIT "ops[i].<kind>" when the image an op makes (a
 * border, a SHORTER/LONGER resize...) passes max_side or max_pixels, the
 * message naming the limit; nothing is allocated.
 *
 * A plan that succeeds runs: every check dvpp_pipeline_run makes before
 * it touches a pixel is made here first, on the image descriptors the run
 * will hold. The decoder's (dvpp_jpeg_decode_geometry_info,
 * dvpp_png_decode_geometry_info: its own status and field); each VPC
 * call's (dvpp_vpc_check_*: the profile's rules and texts, regions,
 * conversions, margins) as "ops[i].<kind>", the message "ops[i].<kind>:
 * <the rule>"; the normalisation's resize ("norm", or the fused
 * "ops[i].resize"), AIPP's ("aipp": its input conversion, its own
 * checks), the output's conversion ("out_format") and encoder
 * ("encoding"). An encoded output that keeps the last format gets one its
 * encoder takes (PNG: the RGB family or grey; JPEG: 4:2:0, packed 4:2:2,
 * RGB/BGR or grey, JPEGE of the ascend profiles YUV420SP or packed 4:2:2;
 * else RGB, RGBA or NV12).
 *
 * Placement: a letterbox's picture starts on the grid of every format it
 * is pasted or delivered in (dvpp_vpc_paste_grid: the chroma grid of 4:2:0
 * and 4:2:2, and DVPP's rules in the ascend profiles: left % 16, ascend310
 * YUV420SP even top and even sizes), rounded down from the centre; a
 * fill's centre crop on the ascend310 YUV420SP ROI parity; plan.resize[i]
 * and plan.geom report where the picture really is.
 *
 * The decode format, when the pipeline leaves it to the planner, is what
 * the next stage wants (AIPP's input, the output image's format, else
 * RGB) as a format the decoder writes (no packed YUV from JPEG: its
 * semi-planar twin; JPEGD of the ascend profiles: NV12/NV21; PNG: the RGB
 * family or grey); an op that cannot run in it (an odd border of 4:2:0
 * chroma) is refused saying so (decode.format chooses another). */
dvpp_status dvpp_pipeline_plan_make(const dvpp_pipeline *p,
                                    const dvpp_pipe_source *src,
                                    dvpp_pipeline_plan *plan, dvpp_err *err);

#define DVPP_PIPE_BUFS 4

/* Limits shared by the workers of one device and replaceable while they
 * run (a daemon reload): each worker takes a copy at the start of a run
 * when the generation has moved. Owned by whoever made the workers. */
typedef struct dvpp_limits_feed {
    pthread_mutex_t mu;
    dvpp_limits limits;
    atomic_uint gen;
} dvpp_limits_feed;

/* A feed starting at @lim (NULL: defaults). */
void dvpp_limits_feed_init(dvpp_limits_feed *f, const dvpp_limits *lim);
void dvpp_limits_feed_fini(dvpp_limits_feed *f);
/* Replace the limits: runs starting from now use @lim. */
void dvpp_limits_feed_set(dvpp_limits_feed *f, const dvpp_limits *lim);

/* Per-worker state. Plain data after init; owns its buffers. */
typedef struct dvpp_worker {
    dvpp_aipp_ctx aipp;           /* its .vpc runs the VPC ops */
    dvpp_limits limits;           /* read dvpp_worker_limits() at a run's start */
    dvpp_limits_feed *feed;       /* borrowed, may be NULL: fixed limits */
    unsigned feed_gen;
    uint8_t *buf[DVPP_PIPE_BUFS]; /* decode + ping-pong images */
    size_t cap[DVPP_PIPE_BUFS];
    dvpp_scratch decode_scratch;  /* JPEG strips, kept across runs */
    /* A second worker's buffers, for a helper thread of this worker's job
     * (dvpp_video_run's overlapped per-frame pipeline): made on first use
     * by dvpp_worker_aux, trimmed and freed with @w (owned). */
    struct dvpp_worker *aux;
} dvpp_worker;

/* Make a worker with @lim (NULL: defaults). Allocates nothing. */
void dvpp_worker_init(dvpp_worker *w, const dvpp_limits *lim);
/* Take limits from @feed from now on (borrowed; it outlives @w). */
void dvpp_worker_follow(dvpp_worker *w, dvpp_limits_feed *feed);
/* @w's limits for the run it is starting: the feed's newest, if it has one.
 * Call on the worker's own thread. */
const dvpp_limits *dvpp_worker_limits(dvpp_worker *w);
/* Release every buffer of @w. */
void dvpp_worker_fini(dvpp_worker *w);
/* Release the buffers of @w larger than @keep bytes (images, strips,
 * intermediates); @w stays usable and grows them again on demand. Returns
 * the bytes released. On the worker's own thread, between runs. */
size_t dvpp_worker_trim(dvpp_worker *w, size_t keep);
/* @w's aux worker (made on the first call; NULL: out of memory) with
 * @w's current limits, for one helper thread while @w's job runs: the
 * caller's thread must not run pipelines on it meanwhile. */
dvpp_worker *dvpp_worker_aux(dvpp_worker *w);

/* Stages a run is timed in: decode (or raw wrap), the VPC ops, the rest
 * (normalise/AIPP, or output conversion + copy/encode). */
typedef enum dvpp_pipe_stage {
    DVPP_PIPE_STAGE_DECODE,
    DVPP_PIPE_STAGE_VPC,
    DVPP_PIPE_STAGE_POST,
    DVPP_PIPE_STAGES
} dvpp_pipe_stage;

typedef struct dvpp_pipeline_out {
    /* Tensor output: a descriptor with data (the caller's: a batch tensor
     * or a ring slot) whose C, H, W, dtype and layout match the plan;
     * image @n is written, every other image is untouched. */
    dvpp_tensor tensor;
    uint32_t n;
    /* Image output, no encoding: @image.data/@image.size are the caller's
     * buffer (at least plan.out_bytes); the geometry is filled (strides as
     * out_align_w/h ask). */
    dvpp_image image;
    /* Image output, JPEG/PNG: the encoded bytes replace @encoded's content
     * (len reset to 0, capacity kept); caller owns it (dvpp_buf_fini). */
    dvpp_buf encoded;
    /* Filled by the run. */
    dvpp_pipeline_plan plan;
    dvpp_pipe_geom geom;
    uint64_t stage_ns[DVPP_PIPE_STAGES]; /* time per stage, for metrics */
} dvpp_pipeline_out;

/* Run @p (validated here too) on @input/@len with worker @w. Errors:
 * those of dvpp_pipeline_validate; DVPP_ECORRUPT/ELIMIT/EUNSUPPORTED from
 * the decoders (DVPP_ECORRUPT also for raw bytes shorter than the layout;
 * DVPP_EUNSUPPORTED for an input that is neither JPEG nor PNG with
 * DVPP_PIPE_IN_AUTO); plan
 * errors; DVPP_EINVAL "tensor" for a tensor that does not match the plan
 * or n >= N; DVPP_ENOSPC "image" for an image buffer below out_bytes;
 * DVPP_ENOMEM; VPC/AIPP/encoder errors. On error the worker stays usable
 * and nothing leaks; the destination may be partly written. */
dvpp_status dvpp_pipeline_run(dvpp_worker *w, const dvpp_pipeline *p,
                              const uint8_t *input, size_t len,
                              dvpp_pipeline_out *out, dvpp_err *err);

#endif
