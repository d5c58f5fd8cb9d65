/* http_framelist: the frame lists of a video decode's answer, exactly
 * sized (docs/http-api.md, POST /v1/video/decode).
 *
 * A decode answers with four comma-separated lists, one entry per kept
 * frame: X-Dvpp-Frame-Index (decoded frame numbers), X-Dvpp-Frame-Pts
 * (pts in the stream's time base, any int64), X-Dvpp-Frame-Time (seconds,
 * "%.6f" of any double: a container may claim a time of -9.2e15 s or
 * 9e18 s) and X-Dvpp-Key-Frames (the frame numbers of the key frames);
 * with the geometry (a stream whose resolution changes: its frames' maps
 * differ), two more, one "x,y" entry per frame separated by ';' as
 * X-Dvpp-Scale and X-Dvpp-Pad write one: X-Dvpp-Frame-Scales and
 * X-Dvpp-Frame-Pads.
 * Each entry is formatted into a buffer that holds any value of its type
 * and appended to a growing buffer, so no entry is assumed to fit a
 * guessed width; the lists together are held to a byte budget (headers
 * live in libmicrohttpd's per-connection memory) and refused as a whole
 * when they would pass it.
 *
 * Ownership: http_frame_lists_make fills a caller-owned struct whose
 * lists it owns until http_frame_lists_fini. Thread-safety: plain data;
 * no shared state.
 */
#ifndef HTTP_FRAMELIST_H
#define HTTP_FRAMELIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/dvpp_videojob.h"
#include "dvpp_mem.h"
#include "dvpp_status.h"

/* The lists, in the order of http_frame_list_names: the four frame lists,
 * then the two geometry lists (empty unless asked for). */
#define HTTP_FRAME_LISTS 6
#define HTTP_FRAME_GEOM_LIST 4 /* the first geometry list */

/* "%.6f" of any double: DBL_MAX has 309 integer digits, then the sign,
 * the point, 6 decimals and the NUL. */
#define HTTP_FRAME_TIME_MAX 320

typedef struct http_frame_lists {
    dvpp_buf list[HTTP_FRAME_LISTS]; /* NUL-terminated text; len excludes the NUL */
    size_t total;                     /* bytes of the lists together */
} http_frame_lists;

/* The header names, in list order ("X-Dvpp-Frame-Index", ...). */
extern const char *const http_frame_list_names[HTTP_FRAME_LISTS];

/* Build the lists of frames @f[0..n-1] (@f may be NULL when n is 0), the
 * geometry lists too when @geometry. DVPP_ELIMIT (field
 * "http.connection_memory") as soon as the lists together would pass
 * @max_bytes, DVPP_ENOMEM; on failure nothing is kept (the lists are
 * empty, @l needs no fini but may have one). */
dvpp_status http_frame_lists_make(const dvpp_video_frame_info *f, uint64_t n, bool geometry,
                                   size_t max_bytes, http_frame_lists *l, dvpp_err *err);

/* Whether frames @f[0..n-1] do not all map back to their frame alike (a
 * stream whose resolution changes): the answer then needs the geometry
 * lists. */
bool http_frame_geometry_varies(const dvpp_video_frame_info *f, uint64_t n);

/* Free the lists (a zeroed or failed struct is fine). */
void http_frame_lists_fini(http_frame_lists *l);

/* A frame time as the lists and the JPEG parts write it ("%.6f") into
 * @buf; its length. */
size_t http_frame_time_format(char buf[HTTP_FRAME_TIME_MAX], double t);

#endif
