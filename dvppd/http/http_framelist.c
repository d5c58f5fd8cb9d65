/* http_framelist: exactly sized frame lists of a video decode. */
#include "http_framelist.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *const http_frame_list_names[HTTP_FRAME_LISTS] = {
    "X-Dvpp-Frame-Index", "X-Dvpp-Frame-Pts", "X-Dvpp-Frame-Time", "X-Dvpp-Key-Frames",
    "X-Dvpp-Frame-Scales", "X-Dvpp-Frame-Pads"};

/* Longest entry of an integer list: "-9223372036854775808" or
 * "18446744073709551615", and the NUL. */
#define INT_ENTRY_MAX 24
/* Longest geometry entry: two "%.17g" of a double ("-2.2250738585072014e-308",
 * 24 characters each), the comma and the NUL. */
#define GEOM_ENTRY_MAX 64

size_t http_frame_time_format(char buf[HTTP_FRAME_TIME_MAX], double t)
{
    int n = snprintf(buf, HTTP_FRAME_TIME_MAX, "%.6f", t);

    /* Cannot happen for a double (see HTTP_FRAME_TIME_MAX); stay exact. */
    if (n < 0 || n >= HTTP_FRAME_TIME_MAX)
        n = snprintf(buf, HTTP_FRAME_TIME_MAX, "%s", "nan");
    return (size_t)n;
}

/* Append ",@s" (no comma for the first entry; ';' in the geometry lists,
 * whose entries hold a comma) to list @k, within budget. */
static dvpp_status append_entry(http_frame_lists *l, int k, const char *s, size_t n,
                                size_t max_bytes, dvpp_err *err)
{
    dvpp_buf *b = &l->list[k];
    bool comma = b->len > 0;
    const char *sep = k >= HTTP_FRAME_GEOM_LIST ? ";" : ",";

    if (l->total + n + comma > max_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "http.connection_memory",
                            "the frame lists pass %zu bytes (a quarter of "
                            "http.connection_memory holds the answer's headers)",
                            max_bytes);
    if ((comma && dvpp_buf_append(b, sep, 1) != DVPP_OK) || dvpp_buf_append(b, s, n) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for the frame lists");
    l->total += n + comma;
    return DVPP_OK;
}

/* Every list NUL-terminated (the terminator is not counted in len). */
static dvpp_status terminate(http_frame_lists *l, dvpp_err *err)
{
    for (int k = 0; k < HTTP_FRAME_LISTS; k++) {
        if (dvpp_buf_reserve(&l->list[k], 1) != DVPP_OK)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for the frame lists");
        l->list[k].data[l->list[k].len] = '\0';
    }
    return DVPP_OK;
}

static dvpp_status add_frame(http_frame_lists *l, const dvpp_video_frame_info *f,
                             size_t max_bytes, dvpp_err *err)
{
    char num[INT_ENTRY_MAX], t[HTTP_FRAME_TIME_MAX];
    size_t n;
    dvpp_status st;

    n = (size_t)snprintf(num, sizeof(num), "%" PRIu64, f->index);
    st = append_entry(l, 0, num, n, max_bytes, err);
    if (st == DVPP_OK) {
        n = (size_t)snprintf(num, sizeof(num), "%" PRId64, f->pts);
        st = append_entry(l, 1, num, n, max_bytes, err);
    }
    if (st == DVPP_OK) {
        n = http_frame_time_format(t, f->time_s);
        st = append_entry(l, 2, t, n, max_bytes, err);
    }
    if (st == DVPP_OK && f->key) {
        n = (size_t)snprintf(num, sizeof(num), "%" PRIu64, f->index);
        st = append_entry(l, 3, num, n, max_bytes, err);
    }
    return st;
}

/* A geometry entry as X-Dvpp-Scale / X-Dvpp-Pad write it. */
static size_t geom_entry(char buf[GEOM_ENTRY_MAX], double x, double y)
{
    int n = snprintf(buf, GEOM_ENTRY_MAX, "%.17g,%.17g", x, y);

    return n > 0 && n < GEOM_ENTRY_MAX ? (size_t)n : 0; /* cannot fail (see the size) */
}

static dvpp_status add_geometry(http_frame_lists *l, const dvpp_video_frame_info *f,
                                size_t max_bytes, dvpp_err *err)
{
    char e[GEOM_ENTRY_MAX];
    size_t n = geom_entry(e, f->geom.scale_x, f->geom.scale_y);
    dvpp_status st = append_entry(l, HTTP_FRAME_GEOM_LIST, e, n, max_bytes, err);

    if (st == DVPP_OK) {
        n = geom_entry(e, f->geom.pad_x, f->geom.pad_y);
        st = append_entry(l, HTTP_FRAME_GEOM_LIST + 1, e, n, max_bytes, err);
    }
    return st;
}

bool http_frame_geometry_varies(const dvpp_video_frame_info *f, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++)
        if (f[i].geom.scale_x != f[0].geom.scale_x || f[i].geom.scale_y != f[0].geom.scale_y ||
            f[i].geom.pad_x != f[0].geom.pad_x || f[i].geom.pad_y != f[0].geom.pad_y)
            return true;
    return false;
}

dvpp_status http_frame_lists_make(const dvpp_video_frame_info *f, uint64_t n, bool geometry,
                                   size_t max_bytes, http_frame_lists *l, dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    memset(l, 0, sizeof(*l));
    for (int k = 0; k < HTTP_FRAME_LISTS; k++)
        dvpp_buf_init(&l->list[k]);
    for (uint64_t i = 0; st == DVPP_OK && i < n; i++) {
        st = add_frame(l, &f[i], max_bytes, err);
        if (st == DVPP_OK && geometry)
            st = add_geometry(l, &f[i], max_bytes, err);
    }
    if (st == DVPP_OK)
        st = terminate(l, err);
    if (st != DVPP_OK)
        http_frame_lists_fini(l);
    return st;
}

void http_frame_lists_fini(http_frame_lists *l)
{
    for (int k = 0; k < HTTP_FRAME_LISTS; k++)
        dvpp_buf_fini(&l->list[k]);
    l->total = 0;
}
