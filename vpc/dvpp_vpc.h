/* dvpp_vpc: VPC operations over dvpp_image descriptors.
 *
 * crop, resize, crop-resize, crop-and-paste, crop-resize-paste, make-border,
 * convert-colour and batch crop, for any supported format in and out, with
 * DVPP semantics: a crop ROI is inclusive (w = right - left + 1) and is
 * scaled to the whole output, or to the paste ROI, outside of which the
 * output's pixels are left untouched. Formats are converted implicitly
 * when input and output differ.
 *
 * Order of work, chosen for parity with the libraries users train with:
 * a YUV input going to an RGB-family output is converted first (only the
 * crop region) and then resized, as cv2.cvtColor + cv2.resize do; every
 * other pair is resized in the input's own planes and converted at the
 * output size. Same-format resizes of planar/semi-planar YUV resize each
 * plane (chroma at chroma size); packed 4:2:2 goes through 4:2:2 planes.
 *
 * Profiles: `native` accepts any size, alignment and ROI within the
 * limits. `ascend310` / `ascend310p` apply DVPP VPC's rules
 * (reference/dvpp-aipp.md §5) with its error texts: input/output format
 * sets, stride alignment and range, 10x6..4096x4096 sizes (8K for the
 * listed formats), ROI size/position/parity, paste left % 16, per-axis scale
 * in [1/32, 16], interpolation modes, at most 256 ROIs per batch, and
 * alpha 0 in RGBA-family outputs.
 *
 * A dvpp_vpc_ctx is per worker (it owns scratch memory and a small cache
 * of resize plans); use one per thread.
 */
#ifndef DVPP_VPC_H
#define DVPP_VPC_H

#include <stdbool.h>
#include <stdint.h>

#include "dvpp_border.h"
#include "dvpp_csc.h"
#include "dvpp_image.h"
#include "dvpp_profile.h"
#include "dvpp_resize.h"
#include "dvpp_scratch.h"
#include "dvpp_status.h"

/* Inclusive rectangle, as acldvppRoiConfig. */
typedef struct dvpp_roi {
    uint32_t left, top, right, bottom;
} dvpp_roi;

static inline uint32_t dvpp_roi_width(const dvpp_roi *r)
{
    return r->right - r->left + 1;
}

static inline uint32_t dvpp_roi_height(const dvpp_roi *r)
{
    return r->bottom - r->top + 1;
}

typedef struct dvpp_resize_opts {
    dvpp_parity parity;  /* default DVPP_PARITY_CV2 */
    dvpp_interp interp;  /* default DVPP_INTERP_BILINEAR */
    int ascend_mode;     /* DVPP_PARITY_ASCEND: VPC interpolation 0..4 (310),
                            0..2 (310P); 1 = cv2 bilinear, 2 = cv2 nearest,
                            3 = tf bilinear, 4 = tf nearest, 0 = the chip's
                            default (310: proprietary high-order filter,
                            emulated with cv2 bicubic and not bit-exact;
                            310P: bilinear) */
} dvpp_resize_opts;

void dvpp_resize_opts_init(dvpp_resize_opts *o);

/* The plans a context keeps: coefficient tables are reused when a stream
 * of calls repeats the same geometry. */
#define DVPP_VPC_PLAN_CACHE 8

typedef struct dvpp_vpc_plan_entry {
    dvpp_resize_plan *plan;
    dvpp_parity parity;
    dvpp_interp interp;
    uint32_t sw, sh, dw, dh;
    unsigned channels;
    uint64_t used;      /* LRU stamp */
} dvpp_vpc_plan_entry;

/* Intermediate images a context keeps (dvpp_vpc_temp_bytes counts them). */
#define DVPP_VPC_TEMPS 3

typedef struct dvpp_vpc_ctx {
    dvpp_profile profile;
    dvpp_csc csc;                /* matrix/range of implicit conversions */
    uint32_t max_batch_rois;     /* native limit on ROIs per batch */
    dvpp_scratch scratch;        /* per-worker temporary memory */
    dvpp_vpc_plan_entry plans[DVPP_VPC_PLAN_CACHE];
    uint64_t clock;
    dvpp_image tmp[DVPP_VPC_TEMPS]; /* intermediate images, reused */
} dvpp_vpc_ctx;

/* Defaults: @profile, BT.601 narrow (cv2) in native, BT.601 full range in
 * the ascend profiles (DVPP's default BT601_WIDE), 4096 ROIs per batch. */
void dvpp_vpc_ctx_init(dvpp_vpc_ctx *c, dvpp_profile profile);
void dvpp_vpc_ctx_fini(dvpp_vpc_ctx *c);

/* Crop @crop (NULL: all of @src) of @src, scale it to @paste (NULL: all of
 * @dst) and write it there; the rest of @dst is untouched. @dst's
 * descriptor and data are the caller's. crop, resize, crop-resize and
 * crop-and-paste are this call with NULL arguments. */
dvpp_status dvpp_vpc_crop_resize_paste(dvpp_vpc_ctx *c, const dvpp_image *src,
                                       const dvpp_roi *crop, dvpp_image *dst,
                                       const dvpp_roi *paste,
                                       const dvpp_resize_opts *o, dvpp_err *err);

/* The context temporaries dvpp_vpc_crop_resize_paste uses for a @src_fmt
 * @src_w x @src_h source, @crop (NULL: all of it), a @dst_fmt @dst_w x
 * @dst_h destination and @paste (NULL: all of it) with @o: raises each
 * @slots[i] to the bytes temporary i needs (a slot keeps its largest use,
 * so a caller sums the slots after a sequence of calls). What memory
 * accounting counts besides the two images; an upper bound (a fused path
 * may need none). Saturates at SIZE_MAX. */
void dvpp_vpc_temp_bytes(dvpp_pixfmt src_fmt, uint32_t src_w, uint32_t src_h,
                         const dvpp_roi *crop, dvpp_pixfmt dst_fmt, uint32_t dst_w,
                         uint32_t dst_h, const dvpp_roi *paste, const dvpp_resize_opts *o,
                         size_t slots[DVPP_VPC_TEMPS]);

/* Bytes of a tight @fmt image of @w x @h (SIZE_MAX when it overflows or
 * the format is unknown). */
size_t dvpp_vpc_image_bytes(dvpp_pixfmt fmt, uint32_t w, uint32_t h);

/* The resize plan @o runs for a @sw x @sh -> @dw x @dh plane of @channels
 * bytes per pixel, from the context's cache (valid until the context is
 * finalised or the cache evicts it, i.e. until the next call that makes a
 * plan). For callers that drive dvpp_resize_* themselves (fused chains). */
dvpp_status dvpp_vpc_plan(dvpp_vpc_ctx *c, const dvpp_resize_opts *o,
                          uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh,
                          unsigned channels, const dvpp_resize_plan **out,
                          dvpp_err *err);

/* Convert @src to @dst's format (same size) with the context's matrix. */
dvpp_status dvpp_vpc_convert(dvpp_vpc_ctx *c, const dvpp_image *src,
                             dvpp_image *dst, dvpp_err *err);

/* Make-border into @dst (src size + margins, same format). */
dvpp_status dvpp_vpc_make_border(dvpp_vpc_ctx *c, const dvpp_image *src,
                                 dvpp_image *dst, const dvpp_border *b,
                                 dvpp_err *err);

/* acldvppVpcBatchCropResizePasteAsync: @nsrc inputs, @roi_nums[i] ROIs
 * cut from input i; @crops, @dsts and @pastes (NULL: whole outputs) hold
 * sum(roi_nums) entries in input-major order. Stops at the first failing
 * ROI and reports its index in the message (the outputs before it are
 * written). */
dvpp_status dvpp_vpc_batch_crop_resize_paste(dvpp_vpc_ctx *c,
                                             const dvpp_image *srcs,
                                             uint32_t nsrc,
                                             const uint32_t *roi_nums,
                                             const dvpp_roi *crops,
                                             dvpp_image *dsts,
                                             const dvpp_roi *pastes,
                                             const dvpp_resize_opts *o,
                                             dvpp_err *err);

/* --- named resize modes ----------------------------------------------------- */

typedef enum dvpp_resize_mode {
    DVPP_RESIZE_STRETCH = 0,  /* exactly W x H, aspect ignored */
    DVPP_RESIZE_FIT = 1,      /* keep ratio, inside W x H (output smaller) */
    DVPP_RESIZE_FILL = 2,     /* keep ratio, cover W x H, centre-crop */
    DVPP_RESIZE_LETTERBOX = 3,/* keep ratio, inside, padded to W x H */
    DVPP_RESIZE_SHORTER = 4,  /* shorter side = W, keep ratio */
    DVPP_RESIZE_LONGER = 5,   /* longer side = W, keep ratio */
} dvpp_resize_mode;

const char *dvpp_resize_mode_name(dvpp_resize_mode m);
bool dvpp_resize_mode_parse(const char *s, dvpp_resize_mode *out);

/* What a named mode does to a src_w x src_h image, and how to map a point
 * back: source = (output - pad) / scale, per axis. */
typedef struct dvpp_resize_geom {
    uint32_t out_w, out_h; /* the output image */
    dvpp_roi crop;         /* source region that is resized */
    dvpp_roi paste;        /* where it lands in the output */
    double scale_x, scale_y; /* output pixels per source pixel */
    double pad_x, pad_y;     /* output offset of source (0, 0) */
} dvpp_resize_geom;

/* Plan @mode for a @src_w x @src_h source and the request @w x @h (for
 * SHORTER/LONGER only @w is used). DVPP_EINVAL on zero sizes. */
dvpp_status dvpp_resize_geometry(uint32_t src_w, uint32_t src_h,
                                 dvpp_resize_mode mode, uint32_t w, uint32_t h,
                                 dvpp_resize_geom *g, dvpp_err *err);

/* Resize @src by @g into @dst (g->out_w x g->out_h, format chosen by the
 * caller, allocated by the caller); letterbox padding is filled with the
 * colour @pad, given as R, G, B whatever @dst's format (alpha 255): YUV and
 * grey outputs get it converted with @c's CSC matrix and range. */
dvpp_status dvpp_vpc_resize_mode(dvpp_vpc_ctx *c, const dvpp_image *src,
                                 const dvpp_resize_geom *g, dvpp_image *dst,
                                 const uint8_t pad[3],
                                 const dvpp_resize_opts *o, dvpp_err *err);

#endif
