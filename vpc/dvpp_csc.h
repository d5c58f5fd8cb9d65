/* dvpp_csc: colour conversion between dvppd's pixel formats.
 *
 * Converts a whole image between any two of: NV12, NV21, I420, YV12,
 * YUV422SP, YVU422SP, YUV444SP, YVU444SP, YUV400, GRAY, YUYV, UYVY, YVYU,
 * VYUY, RGB, BGR, RGBA, BGRA, ARGB, ABGR, at the same width and height,
 * honouring both images' strides. YUV <-> RGB uses BT.601 or BT.709, full
 * ("JPEG") or narrow ("video", 16..235/240) range, in 20-bit fixed
 * point (OpenCV's scheme); chroma is upsampled by replication (each sample
 * covers its 2x2 / 2x1 block, as OpenCV and DVPP do) and, YUV -> YUV,
 * downsampled by the rounded mean of the samples it covers. YUV <-> YUV
 * never passes through RGB; RGB-family reorders never pass through YUV.
 * Grey from RGB is the luma of the chosen matrix; RGB from grey
 * replicates.
 *
 * Grey and YUV400 (details in dvpp_csc.c): GRAY is full-range luma, so
 * RGB -> GRAY is the chosen matrix's full-range luma whatever the range
 * (BT.601: cv2 COLOR_RGB2GRAY exactly) and GRAY -> RGB replicates. YUV400
 * is a Y plane in the chosen range: to and from RGB it is YUV with neutral
 * chroma. Between YUV formats and GRAY/YUV400 the Y plane is copied and
 * chroma dropped or set to 128 (cv2 COLOR_YUV2GRAY_*). RGB -> subsampled
 * YUV takes each block's chroma from its top-left pixel, as OpenCV's
 * RGB2YUV420p does (that is what COLOR_RGB2YUV_I420 parity needs).
 * Odd widths and heights are allowed everywhere; subsampled chroma covers
 * ceil(w/2) x ceil(h/2) samples.
 *
 * Parity contract (tests/e2e against cv2.cvtColor): NV12/NV21/I420/YV12 ->
 * RGB/BGR(A) with BT.601 narrow within max |diff| 1 of COLOR_YUV2RGB_NV12 and
 * friends (bit-exact is the aim: OpenCV's 20-bit ITU-R BT.601 constants);
 * RGB -> I420/NV12 with BT.601 narrow within 1 of COLOR_RGB2YUV_I420;
 * YUYV/UYVY -> RGB within 1 of COLOR_YUV2RGB_YUYV/UYVY.
 *
 * Kernels (YUV->RGB rows, RGB->YUV rows, channel reorders) are dispatch
 * tables per SIMD level, bit-exact with their scalar references.
 * Thread-safe: no shared mutable state; scratch comes from the caller.
 */
#ifndef DVPP_CSC_H
#define DVPP_CSC_H

#include <stdbool.h>
#include <stdint.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "dvpp_image.h"
#include "dvpp_scratch.h"
#include "dvpp_status.h"

typedef enum dvpp_csc_matrix {
    DVPP_CSC_BT601 = 0,
    DVPP_CSC_BT709 = 1,
} dvpp_csc_matrix;

typedef struct dvpp_csc {
    dvpp_csc_matrix matrix;
    bool full_range;    /* true: Y 0..255 (JPEG); false: Y 16..235 */
    int alpha;          /* alpha written to outputs with alpha when the source
                           has none (0..255); -1 = 255. A source alpha is
                           carried over when both sides have one. */
    dvpp_simd_level level; /* kernels to use; DVPP_SIMD_BEST or the
                              active level means "best available" */
    bool pil_luma;      /* RGB -> GRAY with Pillow's weights instead of the
                           matrix's: Image.convert('L'), (19595 R + 38470 G +
                           7471 B + 2^15) >> 16 (Pillow 9.4 Convert.c L24),
                           which differs from cv2's by 1 on some pixels */
} dvpp_csc;

/* BT.601 narrow, opaque alpha, best kernels, cv2's grey: what
 * cv2.cvtColor does for NV12/I420 and the native default. */
void dvpp_csc_init(dvpp_csc *c);

/* "bt601" / "bt709" (also "601" / "709"), case-insensitive. */
bool dvpp_csc_parse_matrix(const char *s, dvpp_csc_matrix *out);

/* "full" (or "jpeg") -> true, "narrow" (or "limited", "video") -> false. */
bool dvpp_csc_parse_range(const char *s, bool *full_range);

/* True when dvpp_csc_convert handles @from -> @to. */
bool dvpp_csc_supported(dvpp_pixfmt from, dvpp_pixfmt to);

/* Convert @src into @dst (same width and height; both descriptors fully
 * set, dst->data allocated by the caller; the buffers must not overlap).
 * Borrows both images for the call and writes only the meaningful bytes of
 * @dst's rows (stride padding is left as it was). @scratch supplies
 * temporary rows (slot 4; grown on first use, reused after); NULL makes
 * the call allocate and free its own. DVPP_EFORMAT for an unsupported
 * pair, DVPP_EINVAL for a size mismatch or bad options, DVPP_ESTRIDE /
 * ENOSPC from the layouts, DVPP_ENOMEM when the scratch cannot grow. */
dvpp_status dvpp_csc_convert(const dvpp_image *src, dvpp_image *dst,
                             const dvpp_csc *c, dvpp_scratch *scratch,
                             dvpp_err *err);

/* A row converter for fused pipelines: one row of a 4:2:0 YUV image
 * (NV12, NV21, I420, YV12) to one packed RGB-family row, computed only
 * when a consumer asks for it (e.g. the rows a resize actually reads).
 * Bytes are identical to dvpp_csc_convert's. Plain data; the image must
 * outlive it. */
typedef struct dvpp_csc_rows {
    const dvpp_image *src;
    dvpp_planes planes;
    const void *kern;   /* the CSC kernel table */
    const void *coef;   /* the matrix in fixed point */
    uint8_t pix[8];     /* output pixel layout (kernel view) */
    bool v_first;
    bool planar;
} dvpp_csc_rows;

/* Prepare @r for @src -> @dst_fmt with @c. DVPP_EFORMAT unless @src is
 * 4:2:0 YUV and @dst_fmt an RGB-family format. */
dvpp_status dvpp_csc_rows_init(dvpp_csc_rows *r, const dvpp_image *src,
                               dvpp_pixfmt dst_fmt, const dvpp_csc *c,
                               dvpp_err *err);

/* Convert @w pixels from (@x, @y) of the source (x even) into @out. */
void dvpp_csc_rows_get(const dvpp_csc_rows *r, uint32_t x, uint32_t y,
                       uint32_t w, uint8_t *out);

#endif
