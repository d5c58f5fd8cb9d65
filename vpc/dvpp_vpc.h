/* dvpp_vpc: VPC operations over dvpp_image descriptors.
 *
 * crop, resize, crop-resize, crop-and-paste, crop-resize-paste, make-border,
 * convert-colour, flip and batch crop, for any supported format in and out, with
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
    uint32_t wx, wy, ww, wh; /* output window (ww 0: the whole output) */
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
/* Release the intermediates and scratch blocks larger than @keep bytes
 * (plans stay cached); the context stays usable. Returns the bytes released. */
size_t dvpp_vpc_ctx_trim(dvpp_vpc_ctx *c, size_t keep);

/* Crop @crop (NULL: all of @src) of @src, scale it to @paste (NULL: all of
 * @dst) and write it there; the rest of @dst is untouched. @dst's
 * descriptor and data are the caller's. crop, resize, crop-resize and
 * crop-and-paste are this call with NULL arguments.
 * A crop may start on any pixel of a subsampled source: resized or copied
 * in YUV, its chroma grid restarts at the crop's first pixel (output
 * sample k is source sample floor(left / 2) + k, as a crop of 4:2:0 stays
 * 4:2:0); converted to RGB, every pixel keeps its own colour (as the whole
 * image converted, then cropped). A paste starts on @dst's chroma grid
 * (dvpp_vpc_paste_grid), DVPP_EINVAL "paste" otherwise. */
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

/* A resize of a whole @full_w x @full_h source to @out_w x @out_h of
 * which only the window @win is kept: exactly the bytes of that resize
 * followed by a crop to @win (the plan of the whole resize cut to the
 * window, dvpp_resize_plan_window), without computing the rest. @src
 * holds the source from its pixel (@sx, @sy) on (a decoded region) and
 * must cover the rectangle the window reads (dvpp_vpc_window_source);
 * @dst is @win's size, same format. Packed formats of one plane without
 * subsampling only (RGB, BGR, grey; 4-byte alpha formats except under pil
 * parity, which premultiplies): DVPP_EFORMAT otherwise, DVPP_EINVAL for a
 * source that does not cover the rectangle. The caller checks the profile
 * (native: the ascend profiles' VPC has no such call). */
dvpp_status dvpp_vpc_resize_window(dvpp_vpc_ctx *c, const dvpp_image *src, uint32_t sx,
                                   uint32_t sy, uint32_t full_w, uint32_t full_h,
                                   uint32_t out_w, uint32_t out_h, const dvpp_roi *win,
                                   dvpp_image *dst, const dvpp_resize_opts *o,
                                   dvpp_err *err);

/* True when dvpp_vpc_resize_window takes @fmt under @o. */
bool dvpp_vpc_window_format_ok(dvpp_pixfmt fmt, const dvpp_resize_opts *o);

/* The source rectangle (x, y, w, h) that window @win of that resize
 * reads, from the plan the context caches for it. */
dvpp_status dvpp_vpc_window_source(dvpp_vpc_ctx *c, const dvpp_resize_opts *o,
                                   uint32_t full_w, uint32_t full_h, uint32_t out_w,
                                   uint32_t out_h, unsigned channels, const dvpp_roi *win,
                                   uint32_t rect[4], dvpp_err *err);

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

/* --- flip -------------------------------------------------------------------- */

/* Mirror axes (bit 0: left-right, bit 1: top-bottom). */
typedef enum dvpp_flip {
    DVPP_FLIP_HORIZONTAL = 1,  /* x -> w - 1 - x (torchvision hflip) */
    DVPP_FLIP_VERTICAL = 2,    /* y -> h - 1 - y (torchvision vflip) */
    DVPP_FLIP_BOTH = 3,        /* both: a 180 degree rotation */
} dvpp_flip;

/* "horizontal" / "vertical" / "both" (also "h", "v", "hv"). */
bool dvpp_flip_parse(const char *s, dvpp_flip *out);
const char *dvpp_flip_name(dvpp_flip f);

/* The checks of dvpp_vpc_flip (data may be NULL): @dst has @src's format
 * and size; a known flip; a format whose samples can be mirrored exactly:
 * any packed format (RGB family, grey, packed 4:4:4), planar and
 * semi-planar YUV when the flipped axis holds whole chroma samples (an
 * even width for a horizontal flip of 4:2:x, an even height for a vertical
 * flip of 4:2:0 / 4:4:0: an odd side would move the chroma grid by half a
 * sample, DVPP_EINVAL "flip" saying to convert to rgb first) and packed
 * 4:2:2 of even width. DVPP_EPROFILE under the ascend profiles: DVPP's VPC
 * has no flip. */
dvpp_status dvpp_vpc_check_flip(dvpp_profile prof, const dvpp_image *src,
                                const dvpp_image *dst, dvpp_flip f, dvpp_err *err);

/* Mirror @src into @dst (same format and size, caller's data; not in
 * place): an exact permutation of the samples, every meaningful byte of
 * @dst written. Packed 4:2:2 mirrors its pixel pairs and swaps the two
 * luma samples of each pair. */
dvpp_status dvpp_vpc_flip(dvpp_vpc_ctx *c, const dvpp_image *src, dvpp_image *dst,
                          dvpp_flip f, dvpp_err *err);

/* The checks each call above makes before it reads a pixel, on image
 * descriptors whose data may be NULL (geometry only: format, size,
 * strides), with a context of profile @prof: the profile's rules and
 * texts, the regions, the interpolation, the conversions, the margins.
 * The calls run the same checks (and then that the data is there), so a
 * planner that gives these the descriptors the run will use refuses,
 * before anything is allocated, exactly what the run would refuse, with
 * the same status and message. Pure functions. */
dvpp_status dvpp_vpc_check_crop_resize_paste(dvpp_profile prof, const dvpp_image *src,
                                             const dvpp_roi *crop, const dvpp_image *dst,
                                             const dvpp_roi *paste,
                                             const dvpp_resize_opts *o, dvpp_err *err);
dvpp_status dvpp_vpc_check_convert(dvpp_profile prof, const dvpp_image *src,
                                   const dvpp_image *dst, dvpp_err *err);
dvpp_status dvpp_vpc_check_make_border(dvpp_profile prof, const dvpp_image *src,
                                       const dvpp_image *dst, const dvpp_border *b,
                                       dvpp_err *err);

/* @img's geometry (data NULL) for a @fmt picture of @w x @h as VPC
 * outputs are laid out under @prof: tight in native; the ascend
 * profiles' DVPP strides (reference §5: ALIGN(w, 16) pixels per row, at
 * least 32 bytes, 4:2:0 and 4:4:0 heights ALIGN(h, 2)). */
dvpp_status dvpp_vpc_image_init(dvpp_image *img, dvpp_profile prof, dvpp_pixfmt fmt,
                                uint32_t w, uint32_t h, dvpp_err *err);

/* The bytes a buffer of @img's layout needs for VPC under @prof: the
 * layout's, and in the ascend profiles at least ACL's CalcImageSize
 * (widthStride * heightStride * {3/2 for 4:2:0 and YUV400, 2 for 4:2:2
 * and 4:4:0 semi-planar, 3 for 4:4:4}). SIZE_MAX for a bad layout. */
size_t dvpp_vpc_buffer_bytes(dvpp_profile prof, const dvpp_image *img);

/* Whether a picture laid out as @img (its geometry; data and size are not
 * read) meets @prof's VPC rules (always in native): strides, and a
 * layout whose bytes cover dvpp_vpc_buffer_bytes. One that does not is
 * copied into dvpp_vpc_image_init's layout first, as DVPP users copy host
 * pixels into acldvppMalloc buffers. */
bool dvpp_vpc_layout_ok(dvpp_profile prof, const dvpp_image *img);

/* Where a region may start, and which sizes it may have, in a picture of
 * one format under one profile: its left and top offsets are multiples of
 * x and y, and with even_size its width and height are even. */
typedef struct dvpp_roi_grid {
    uint32_t x, y;  /* 1, 2 or 16 */
    bool even_size;
} dvpp_roi_grid;

/* The grid of a paste into a @fmt picture under @prof. A chroma sample
 * cannot belong both to the paste and to the pixels around it, which a
 * paste leaves untouched: the origin is a multiple of @fmt's subsampling
 * on each axis (every profile: this is how the paste is written). The
 * ascend profiles add DVPP's rules (reference/dvpp-aipp.md §5): the left
 * offset a multiple of 16; ascend310 with YUV420SP output, left and top
 * even, right and bottom odd (an even width and height). */
void dvpp_vpc_paste_grid(dvpp_profile prof, dvpp_pixfmt fmt, dvpp_roi_grid *g);

/* The grid of a crop from a @fmt picture under @prof: any origin and size
 * (dvpp_vpc_crop_resize_paste takes crops at odd offsets of subsampled
 * chroma), except ascend310 with a YUV420SP input: left and top even,
 * right and bottom odd. */
void dvpp_vpc_crop_grid(dvpp_profile prof, dvpp_pixfmt fmt, dvpp_roi_grid *g);

/* @a becomes a grid that meets both @a and @b (multiples are powers of
 * two, so the larger one). */
void dvpp_roi_grid_join(dvpp_roi_grid *a, const dvpp_roi_grid *b);

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

/* How SHORTER/LONGER size the side they do not fix, W * other / side:
 * NEAREST rounds half up (dvppd's default), FLOOR truncates as
 * torchvision's Resize(int) and transformers' get_resize_output_image_size
 * do (int(size * long / short)); exact integer arithmetic either way, and
 * never below 1. Other modes take only NEAREST. */
typedef enum dvpp_resize_round {
    DVPP_RESIZE_ROUND_NEAREST = 0,
    DVPP_RESIZE_ROUND_FLOOR = 1,
} dvpp_resize_round;

const char *dvpp_resize_round_name(dvpp_resize_round r);
bool dvpp_resize_round_parse(const char *s, dvpp_resize_round *out);

/* Plan @mode for a @src_w x @src_h source and the request @w x @h (for
 * SHORTER/LONGER only @w is used), rounding as DVPP_RESIZE_ROUND_NEAREST.
 * DVPP_EINVAL on zero sizes. */
dvpp_status dvpp_resize_geometry(uint32_t src_w, uint32_t src_h,
                                 dvpp_resize_mode mode, uint32_t w, uint32_t h,
                                 dvpp_resize_geom *g, dvpp_err *err);

/* dvpp_resize_geometry with the rounding @round of SHORTER/LONGER's other
 * side; DVPP_EINVAL (field "round") for FLOOR on another mode or an
 * unknown @round. */
dvpp_status dvpp_resize_geometry_rounded(uint32_t src_w, uint32_t src_h,
                                         dvpp_resize_mode mode, uint32_t w, uint32_t h,
                                         dvpp_resize_round round, dvpp_resize_geom *g,
                                         dvpp_err *err);

/* Put what @mode placed inside @g onto the grids: a letterbox's paste
 * onto @paste, a fill's centre crop onto @crop (either NULL: anywhere).
 * Offsets are rounded down to the grid's multiples and, where it asks for
 * even sizes, sizes down to even, as DVPP's users normalise ROIs (ACLLite:
 * lt = (x >> 1) << 1, rb = ((x >> 1) << 1) - 1); a crop or paste that is
 * the whole image stays, so no mode grows bars of its own. The scales and
 * offsets are recomputed from the rounded rectangles: boxes still map
 * back exactly. */
void dvpp_resize_geometry_snap(dvpp_resize_geom *g, const dvpp_roi_grid *crop,
                               const dvpp_roi_grid *paste);

/* The checks of dvpp_vpc_resize_mode (as dvpp_vpc_check_crop_resize_paste,
 * and the pad colour's conversion into @dst's format). */
dvpp_status dvpp_vpc_check_resize_mode(dvpp_profile prof, const dvpp_image *src,
                                       const dvpp_resize_geom *g, const dvpp_image *dst,
                                       const dvpp_resize_opts *o, dvpp_err *err);

/* Resize @src by @g into @dst (g->out_w x g->out_h, format chosen by the
 * caller, allocated by the caller); letterbox padding is filled with the
 * colour @pad, given as R, G, B whatever @dst's format (alpha 255): YUV and
 * grey outputs get it converted with @c's CSC matrix and range. */
dvpp_status dvpp_vpc_resize_mode(dvpp_vpc_ctx *c, const dvpp_image *src,
                                 const dvpp_resize_geom *g, dvpp_image *dst,
                                 const uint8_t pad[3],
                                 const dvpp_resize_opts *o, dvpp_err *err);

#endif
