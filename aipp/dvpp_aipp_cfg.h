/* dvpp_aipp_cfg: ATC AIPP configuration files, the dynamic AIPP parameter
 * blob, and the simple normalise spec, all parsed into one dvpp_aipp_op.
 *
 * ATC files are protobuf text of domi.InsertNewOps: one or more
 * `aipp_op { field : value ... }` blocks, `#` comments, every field of
 * reference/dvpp-aipp.md §7 (enum values by name or number, bools as
 * true/false/1/0). Parsing fills ATC's defaults as GE's
 * SetCscDefaultValue/SetDtcDefaultValue do, field by field: with
 * csc_switch on, each matrix entry not given takes the default of the
 * input (YUV420SP_U8: BT.601 narrow YUV->BGR 298/516/0 / 298/-100/-208 /
 * 298/0/409; other inputs: RGB->YUV 66/129/25 / -38/-74/112 / 112/-94/-18)
 * and each bias not given takes 16,128,128 (input and output); var_reci
 * 1.0; crop/resize/padding sizes zeroed when switched off (static mode).
 * It validates ranges, required fields and duplicates. Every error names the
 * line and the field: "line 7: matrix_r0c1: given twice".
 *
 * Thread-safe, no global state; the parser never reads past @len.
 */
#ifndef DVPP_AIPP_CFG_H
#define DVPP_AIPP_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"
#include "dvpp_tensor.h"

#define DVPP_AIPP_MAX_OPS 8

typedef enum dvpp_aipp_mode {
    DVPP_AIPP_UNDEFINED = 0,
    DVPP_AIPP_STATIC = 1,
    DVPP_AIPP_DYNAMIC = 2,
} dvpp_aipp_mode;

/* Numbered as the proto's InputFormat (and aclAippInputFormat). */
typedef enum dvpp_aipp_format {
    DVPP_AIPP_FMT_UNDEFINED = 0,
    DVPP_AIPP_YUV420SP_U8 = 1,
    DVPP_AIPP_XRGB8888_U8 = 2,
    DVPP_AIPP_RGB888_U8 = 3,
    DVPP_AIPP_YUV400_U8 = 4,
    DVPP_AIPP_NC1HWC0DI_FP16 = 5,
    DVPP_AIPP_NC1HWC0DI_S8 = 6,
    DVPP_AIPP_ARGB8888_U8 = 7,
    DVPP_AIPP_YUYV_U8 = 8,
    DVPP_AIPP_YUV422SP_U8 = 9,
    DVPP_AIPP_AYUV444_U8 = 10,
    DVPP_AIPP_RAW10 = 11,
    DVPP_AIPP_RAW12 = 12,
    DVPP_AIPP_RAW16 = 13,
    DVPP_AIPP_RAW24 = 14,
    DVPP_AIPP_RGB16 = 15,
    DVPP_AIPP_RGB20 = 16,
    DVPP_AIPP_RGB24 = 17,
    DVPP_AIPP_RGB8_IR = 18,
    DVPP_AIPP_RGB16_IR = 19,
    DVPP_AIPP_RGB24_IR = 20,
} dvpp_aipp_format;

/* One aipp_op block, with ATC's defaults filled in. */
typedef struct dvpp_aipp_op {
    dvpp_aipp_mode mode;
    int32_t related_input_rank;
    char related_input_name[64];
    uint32_t input_edge_idx[8];
    uint8_t n_input_edge_idx;
    uint32_t max_src_image_size;   /* dynamic only */
    bool support_rotation;
    dvpp_aipp_format input_format;
    uint32_t src_image_size_w, src_image_size_h; /* 0: the model's W/H */
    bool crop;
    uint32_t load_start_pos_w, load_start_pos_h;
    uint32_t crop_size_w, crop_size_h;
    bool resize;
    uint32_t resize_output_w, resize_output_h;
    bool padding;
    uint32_t left_padding_size, right_padding_size;
    uint32_t top_padding_size, bottom_padding_size;
    float padding_value;
    bool csc_switch, rbuv_swap_switch, ax_swap_switch, single_line_mode;
    float cpadding_value;
    int16_t matrix[3][3];           /* matrix_rXcY */
    uint8_t output_bias[3], input_bias[3];
    int32_t mean_chn[4];
    float min_chn[4];
    float var_reci_chn[4];
    uint32_t raw_rgbir_to_f16_n;
    uint32_t first_line;            /* line of the block's opening brace */
} dvpp_aipp_op;

typedef struct dvpp_aipp_config {
    dvpp_aipp_op ops[DVPP_AIPP_MAX_OPS];
    unsigned nops;
} dvpp_aipp_config;

/* Parse ATC config text. DVPP_EINVAL with "line N: field: reason" in
 * err->msg and the field in err->field, for: unknown field, bad enum,
 * out-of-range value, a field given twice, a missing required field
 * (input_format when static, max_src_image_size when dynamic), an
 * unterminated block or stray text, more than DVPP_AIPP_MAX_OPS blocks. */
dvpp_status dvpp_aipp_parse(const char *text, size_t len, dvpp_aipp_config *out,
                            dvpp_err *err);

/* Write @op with every field (defaults included) in ATC's syntax into
 * @buf (NUL-terminated, truncated to @size): what `dvppctl aipp-check`
 * prints. Returns the length it needed. */
size_t dvpp_aipp_format_op(const dvpp_aipp_op *op, char *buf, size_t size);

/* "YUV420SP_U8" for DVPP_AIPP_YUV420SP_U8, "UNDEFINED" otherwise. */
const char *dvpp_aipp_format_name(dvpp_aipp_format f);

/* Where an op crops, what it resizes to and what it outputs, per axis:
 *   crop   = load_start_pos, crop_size (0: the rest of the source; the
 *            whole source without crop);
 *   resize = resize_output (0 or resize off: the crop's size);
 *   out    = resize + padding (ATC's model input size).
 * A size that needs an unknown source size is 0. */
typedef struct dvpp_aipp_geom {
    uint32_t x0, y0;           /* crop origin in the source */
    uint32_t crop_w, crop_h;   /* 0: unknown or outside the source */
    uint32_t resize_w, resize_h;
    uint32_t out_w, out_h;
} dvpp_aipp_geom;

/* The geometry of @op on a @src_w x @src_h source (0: unknown). */
void dvpp_aipp_geometry(const dvpp_aipp_op *op, uint32_t src_w, uint32_t src_h,
                        dvpp_aipp_geom *g);

/* Output size of the model input this op produces: crop size (or source
 * size) + padding, as ATC computes it (test vector C: 85 x 95); the
 * geometry on src_image_size (0 where that is needed and unknown). */
void dvpp_aipp_output_size(const dvpp_aipp_op *op, uint32_t *w, uint32_t *h);

/* @op for a @w x @h image: a source size the config leaves 0 (the model's)
 * is the image's, side by side, so the output size is known with or
 * without a crop (crop_size 0 crops the rest of the image). The one rule
 * for the pipeline and dvppctl's offline aipp. */
void dvpp_aipp_op_for_image(dvpp_aipp_op *op, uint32_t w, uint32_t h);

/* --- dynamic AIPP ------------------------------------------------------------ */

/* Size of the dynamic parameter blob for @batch images: 64 + 96 * batch. */
size_t dvpp_aipp_dynamic_size(uint32_t batch);

/* Per-image dynamic parameters (kAippDynamicBatchPara). */
typedef struct dvpp_aipp_dyn_batch {
    bool crop, scf, padding;
    uint8_t rotate;                /* 0..3 */
    int32_t crop_x, crop_y, crop_w, crop_h;
    int32_t scf_in_w, scf_in_h, scf_out_w, scf_out_h;
    int32_t pad_top, pad_bottom, pad_left, pad_right;
    int16_t mean[4];
    float min[4];                  /* stored as fp16 bit patterns */
    float var_reci[4];             /* stored as fp16 bit patterns */
} dvpp_aipp_dyn_batch;

/* The whole blob (kAippDynamicPara + N batch entries). */
typedef struct dvpp_aipp_dyn {
    dvpp_aipp_format input_format;
    bool csc_switch, rbuv_swap, ax_swap;
    uint8_t batch_num;
    int32_t src_w, src_h;
    int16_t matrix[3][3];
    uint8_t output_bias[3], input_bias[3];
    dvpp_aipp_dyn_batch batch[DVPP_AIPP_MAX_OPS * 4];
} dvpp_aipp_dyn;

/* Serialise @d into @blob (little endian, exact ACL layout; min/var_reci
 * rounded to fp16 as numpy does). DVPP_ENOSPC when @len is below
 * dvpp_aipp_dynamic_size(batch_num); DVPP_EINVAL for out-of-range values. */
dvpp_status dvpp_aipp_dynamic_build(const dvpp_aipp_dyn *d, uint8_t *blob,
                                    size_t len, dvpp_err *err);

/* Parse a blob back (validating batch_num against @len and every range). */
dvpp_status dvpp_aipp_dynamic_parse(const uint8_t *blob, size_t len,
                                    dvpp_aipp_dyn *d, dvpp_err *err);

/* One image's parameters of a dynamic blob as a static op (for execution). */
dvpp_status dvpp_aipp_dynamic_op(const dvpp_aipp_dyn *d, uint32_t index,
                                 dvpp_aipp_op *op, dvpp_err *err);

/* --- the simple spec ------------------------------------------------------------- */

/* torchvision/OpenCV-style normalisation: out = (x / scale - mean) / std
 * per channel in @order, then @layout and @dtype. */
typedef struct dvpp_norm_spec {
    double mean[3];     /* default 0 */
    double std[3];      /* default 1 */
    double scale;       /* divisor applied first; default 255 */
    bool bgr;           /* channel order of the tensor; default rgb */
    unsigned channels;  /* 3 (default) or 1: one grey channel (the pipeline's
                           grey image, mean[0] and std[0]) */
    dvpp_layout layout; /* default NCHW */
    dvpp_dtype dtype;   /* default f32 */
} dvpp_norm_spec;

void dvpp_norm_spec_init(dvpp_norm_spec *s);

/* Parse "0.485,0.456,0.406" (1 or 3 numbers; one is repeated). */
dvpp_status dvpp_norm_spec_triple(const char *s, double out[3], const char *field,
                                  dvpp_err *err);

#endif
