/* acl_dvpp_int.h: what the acl_dvpp_*.c files of libacl_dvpp.so share.
 *
 * The descriptor structs behind acl/ops/acl_dvpp.h's opaque types, and the
 * helpers every *Async call uses: reading a picture description into a
 * libdvpp image with the bytes really there, mapping libdvpp statuses to
 * ACL codes with DVPP's texts, the per-stream work state, and writing a
 * task's results back into an output description.
 *
 * Every descriptor is registered with acli_handle_add under its kind and
 * checked with acli_handle_ok before use; a NULL or destroyed one is
 * ACL_ERROR_INVALID_PARAM (setters, calls) or the default (getters).
 * Part D's aclvdec/aclvenc code may read these structs too (same library).
 */
#ifndef ACL_DVPP_INT_H
#define ACL_DVPP_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "acl_int.h"
#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_profile.h"
#include "dvpp_status.h"
#include "dvpp_vpc.h"

/* --- descriptors ------------------------------------------------------------- */

struct acldvppPicDesc {
    void *data;                /* borrowed: the program's (DVPP) memory */
    uint32_t size;
    acldvppPixelFormat format;
    uint32_t width, height;
    uint32_t width_stride, height_stride;
    uint32_t ret_code;
    acldvppBatchPicDesc *batch; /* non-NULL: an element lent by this batch */
    atomic_uint refs;           /* the program's 1 + queued tasks writing into
                                   it (a lent element: its batch's count) */
};

struct acldvppBatchPicDesc {
    uint32_t count;       /* 1..ACLI_BATCH_MAX */
    acldvppPicDesc *pics; /* owned; each element registered as a pic desc */
    atomic_uint refs;     /* as a picture's: the last release frees */
};

#define ACLI_BATCH_MAX 256u
#define ACLI_ROI_MAX 65535u

struct acldvppRoiConfig {
    uint32_t left, right, top, bottom; /* inclusive */
};

struct acldvppResizeConfig {
    uint32_t interpolation;
};

struct acldvppJpegeConfig {
    uint32_t level; /* 0..100; 0 is the best quality */
};

#define ACLI_BORDER_VALUES 4u

struct acldvppBorderConfig {
    double value[ACLI_BORDER_VALUES];
    acldvppBorderType type;
    uint32_t top, bottom, left, right;
};

#define ACLI_LUT_DIMS 3u
#define ACLI_LUT_LEN 256u

struct acldvppLutMap {
    uint32_t dims;
    uint8_t data[ACLI_LUT_DIMS][ACLI_LUT_LEN];
};

#define ACLI_HIST_DIMS 3u
#define ACLI_HIST_LEN 256u

struct acldvppHist {
    uint32_t dims;
    uint32_t data[ACLI_HIST_DIMS][ACLI_HIST_LEN];
    uint32_t ret_code;
};

struct acldvppStreamDesc {
    void *data; /* borrowed */
    uint32_t size;
    acldvppStreamFormat format;
    uint64_t timestamp;
    uint32_t ret_code;
    uint8_t eos;
};

#define ACLI_CHNMODE_ALL 15u

struct acldvppChannelDesc {
    uint32_t mode;       /* acldvppChannelMode flags; default all four */
    uint32_t csc_matrix; /* acldvppCscMatrix; default BT601_WIDE */
    uint64_t channel_id; /* 0 until acldvppCreateChannel */
    uint32_t width, height;
    uint32_t precision_mode; /* acldvppJpegdPrecisionMode (accepted, kept) */
    bool created;
};

/* --- status mapping ---------------------------------------------------------- */

/* The aclError for libdvpp's @st with @err's text as the thread's message.
 * On top of acli_from_dvpp: a refused format (field "format") is
 * ACL_ERROR_FORMAT_NOT_MATCH. @what prefixes the message ("acldvppVpcResizeAsync"). */
aclError acli_dvpp_fail(const char *what, dvpp_status st, const dvpp_err *err);

/* The code of a JPEG that libdvpp's Ascend JPEGD rules refuse for its
 * flavour (field "jpeg"): ACL_ERROR_UNSUPPORTED_JPEG for progressive,
 * arithmetic, lossless and 12-bit data, FORMAT_NOT_MATCH for a colour
 * space or sampling JPEGD has no output for. */
aclError acli_dvpp_jpeg_refusal(const dvpp_jpeg_info *in);

/* --- pictures -------------------------------------------------------------------- */

/* A picture description read at call time, with the bytes really there. */
typedef struct acli_pic {
    dvpp_image img;   /* format and geometry; data and size = the declared */
    size_t declared;  /* the description's size */
    size_t avail;     /* acli_mem_avail(data); 0 outside registered memory */
    size_t usable;    /* min(declared, avail) where avail is known */
    size_t total;     /* bytes of the whole layout (strides x rows) */
    size_t needed;    /* bytes up to the last one read or written */
} acli_pic;

/* True when @d is a live picture description (standalone or lent). */
bool acli_pic_ok(const acldvppPicDesc *d);

/* A task that writes into @d (a live description; its batch for a lent
 * element) holds it from the call to its fini: a Destroy before then
 * unregisters it at once but frees it at the last release, so the task
 * never writes into freed memory or into a new description made at the
 * same address (acli_pic_write_back skips it: no longer live). NULL: no-op. */
void acli_pic_hold(acldvppPicDesc *d);
void acli_pic_release(acldvppPicDesc *d);

/* Read @d (a live pic desc) into @p, checking its format has a layout
 * (ACL_ERROR_FORMAT_NOT_MATCH), its data is set and its geometry is
 * coherent (ACL_ERROR_INVALID_PARAM with the numbers). @what and @side
 * ("input"/"output") name it in messages. The bytes are checked
 * separately (acli_pic_check_bytes) once the geometry is final. */
aclError acli_pic_read(const acldvppPicDesc *d, const char *what, const char *side,
                       acli_pic *p);

/* @p's layout, from its geometry: total and needed bytes. */
aclError acli_pic_layout(acli_pic *p, const char *what, const char *side);

/* The declared size and the memory really there both cover what is read
 * or written (ACL_ERROR_INVALID_PARAM otherwise, naming the numbers). An
 * over-declared heightStride whose last rows are not there is accepted:
 * only the rows that exist are touched (acli_pic_bind bounces). */
aclError acli_pic_check_bytes(const acli_pic *p, const char *what, const char *side);

/* At run time: @img becomes @p's image with its whole layout addressable.
 * When the usable bytes cover the layout it is the program's memory;
 * otherwise a zeroed bounce buffer holding the usable bytes (*bounce, the
 * caller passes it to acli_pic_unbind). DVPP_ENOMEM on failure. */
dvpp_status acli_pic_bind(const acli_pic *p, dvpp_image *img, uint8_t **bounce,
                          dvpp_err *err);
/* Copy a bounced output's usable bytes back (@write_back) and free it. */
void acli_pic_unbind(const acli_pic *p, uint8_t *bounce, bool write_back);

/* Write what the chip writes back into an output description (when it is
 * still live): format, geometry, size and retCode. */
void acli_pic_write_back(acldvppPicDesc *d, const dvpp_image *img, uint32_t size,
                         uint32_t ret_code);
/* Only the retCode (a failed task). */
void acli_pic_write_ret(acldvppPicDesc *d, uint32_t ret_code);

/* The dvpp_pixfmt of an ACL pixel format value (identical numbering);
 * DVPP_PIXEL_UNKNOWN-valued ACL UNKNOWN stays UNKNOWN; values outside
 * ACL's enum map to -1 cast (no layout). */
dvpp_pixfmt acli_dvpp_pixfmt(acldvppPixelFormat f);

/* --- channels, streams, tasks ----------------------------------------------------- */

/* What a task keeps of its channel. */
typedef struct acli_dvpp_chan {
    dvpp_profile profile;
    dvpp_csc_matrix matrix;
    bool full_range;
} acli_dvpp_chan;

/* Check @cd is a live, created channel description whose mode includes
 * @mode_flag (a DVPP_CHNMODE_* bit) and snapshot it. */
aclError acli_dvpp_channel_use(const acldvppChannelDesc *cd, uint32_t mode_flag,
                          const char *what, acli_dvpp_chan *out);

/* The per-stream work state: a VPC context and the JPEG decoder's strips
 * and temporaries, kept between tasks so a steady stream of decodes
 * allocates (and first-touches) nothing (tasks of one stream run one at a
 * time, so no lock). NULL when it cannot be made. */
typedef struct acli_dvpp_state {
    dvpp_vpc_ctx vpc;
    dvpp_scratch jpeg;
} acli_dvpp_state;

acli_dvpp_state *acli_dvpp_state_get(acli_task *t);

/* The VPC context of @t's stream set up for @ch (profile and CSC). */
dvpp_vpc_ctx *acli_dvpp_vpc(acli_task *t, const acli_dvpp_chan *ch);

/* Resolve @stream and submit run/fini with @ctx on @engine. On failure
 * @fini is called with the error (so @ctx is always consumed) and the
 * error is returned. */
aclError acli_dvpp_submit(aclrtStream stream, int engine, acli_run_fn run,
                          acli_fini_fn fini, void *ctx);

/* The ACL code a task reports for libdvpp's failure, as retCode. */
static inline uint32_t acli_ret_code(aclError e)
{
    return e == ACL_SUCCESS ? 0u : (uint32_t)e;
}

#endif
