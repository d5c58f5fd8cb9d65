/* libFuzzer target: what the HTTP front end builds from untrusted bytes
 * without a connection: the frame lists of a video decode's answer
 * (dvppd/http/http_framelist.h) and multipart/form-data bodies
 * (dvppd/http/http_multipart.h).
 *
 * Input: a mode byte, then (mode % 3)
 *   0  frame lists: a budget (2 bytes, x 4: 0..262140 bytes, the quarter
 *      of http.connection_memory the lists get), then frames of 17 bytes:
 *      index (8, big-endian), pts (8, big-endian, any int64), a flag byte
 *      (bit 0: key frame; bit 1: the time is the next 8 bytes as a raw
 *      double, any bit pattern: NaN, infinities, 1e308; else pts/90000;
 *      bit 2 of the first frame's: the geometry lists too; bit 3: the
 *      frame's scale and pad are the next 32 bytes as four raw doubles,
 *      else made from its index).
 *      The lists are checked against the frames: every entry parses back
 *      to the frame's value (times compare as the "%.6f" text, geometry
 *      entries as "%.17g,%.17g" joined by ';'), the lists hold exactly the
 *      frames in order and fit the budget; a refusal must mean the exact
 *      lists would not have fitted.
 *   1  a multipart body as it comes: a boundary length byte and that many
 *      boundary bytes (mapped to RFC 2046 characters), a part limit byte,
 *      then the body. Counting and splitting must agree, every part must
 *      lie inside the body, in order, without overlap.
 *   2  a multipart body made from parts: a boundary as in 1, then parts
 *      (a name length byte, the name, a data length byte x 8, the data;
 *      bytes that would form the delimiter are changed), written as
 *      Python's and curl's clients write them; the parse must give back
 *      exactly those parts.
 * Lists and parts are built in exactly sized or growing buffers, so ASan
 * sees any access past them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_framelist.h"
#include "http/http_multipart.h"
#include "fuzz_util.h"

#define MAX_FRAMES 4096

static uint64_t be64(fuzz_reader *r)
{
    uint64_t hi = fuzz_u32(r);
    return hi << 32 | fuzz_u32(r);
}

/* The next entry of list @s at *@pos (up to ',' or the end) into @out. */
static size_t next_entry(const char *s, size_t *pos, char *out, size_t cap)
{
    size_t n = strcspn(s + *pos, ",");

    if (n >= cap)
        abort(); /* no entry is longer than a formatted double */
    memcpy(out, s + *pos, n);
    out[n] = '\0';
    *pos += n + (s[*pos + n] == ',');
    return n;
}

static void check_int_list(const char *s, size_t len, const uint64_t *want, size_t n,
                           bool is_signed)
{
    size_t pos = 0;
    char e[HTTP_FRAME_TIME_MAX];

    if (strlen(s) != len || (n == 0) != (len == 0))
        abort();
    for (size_t i = 0; i < n; i++) {
        char *end;
        next_entry(s, &pos, e, sizeof(e));
        if (is_signed ? (uint64_t)strtoll(e, &end, 10) != want[i]
                      : strtoull(e, &end, 10) != want[i])
            abort();
        if (*end)
            abort();
    }
    if (pos != len)
        abort();
}

static void check_times(const char *s, size_t len, const double *t, size_t n)
{
    size_t pos = 0;
    char e[HTTP_FRAME_TIME_MAX], want[HTTP_FRAME_TIME_MAX];

    if (strlen(s) != len)
        abort();
    for (size_t i = 0; i < n; i++) {
        next_entry(s, &pos, e, sizeof(e));
        snprintf(want, sizeof(want), "%.6f", t[i]);
        if (strcmp(e, want))
            abort();
    }
    if (pos != len)
        abort();
}

/* The bytes the lists need, counted without the module. */
static size_t needed(const dvpp_video_frame_info *f, size_t n, bool geometry)
{
    char b[HTTP_FRAME_TIME_MAX];
    size_t total = 0, keys = 0;

    for (size_t i = 0; i < n; i++) {
        total += (size_t)snprintf(b, sizeof(b), "%" PRIu64, f[i].index) +
                 (size_t)snprintf(b, sizeof(b), "%" PRId64, f[i].pts) +
                 (size_t)snprintf(b, sizeof(b), "%.6f", f[i].time_s) + 3 * (i > 0);
        if (f[i].key)
            total += (size_t)snprintf(b, sizeof(b), "%" PRIu64, f[i].index) + (keys++ > 0);
        if (geometry)
            total += (size_t)snprintf(b, sizeof(b), "%.17g,%.17g", f[i].geom.scale_x,
                                      f[i].geom.scale_y) +
                     (size_t)snprintf(b, sizeof(b), "%.17g,%.17g", f[i].geom.pad_x,
                                      f[i].geom.pad_y) + 2 * (i > 0);
    }
    return total;
}

/* A geometry list as the module must write it, built here with snprintf
 * into a buffer of its own: scales (@pads false) or pads of @f[0..n-1]. */
static void check_geometry(const char *s, size_t len, const dvpp_video_frame_info *f, size_t n,
                           bool pads)
{
    size_t pos = 0;
    char e[64];

    if (strlen(s) != len)
        abort();
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(e, sizeof(e), "%s%.17g,%.17g", i ? ";" : "",
                         pads ? f[i].geom.pad_x : f[i].geom.scale_x,
                         pads ? f[i].geom.pad_y : f[i].geom.scale_y);
        if (k <= 0 || (size_t)k >= sizeof(e) || pos + (size_t)k > len ||
            memcmp(s + pos, e, (size_t)k))
            abort();
        pos += (size_t)k;
    }
    if (pos != len)
        abort();
}

static double raw_double(fuzz_reader *r)
{
    uint64_t bits = be64(r);
    double d;

    memcpy(&d, &bits, sizeof(d));
    return d;
}

static void frame_lists(fuzz_reader *r)
{
    static dvpp_video_frame_info f[MAX_FRAMES];
    static uint64_t idx[MAX_FRAMES], pts[MAX_FRAMES], keys[MAX_FRAMES];
    static double times[MAX_FRAMES];
    size_t budget = (size_t)fuzz_u16(r) * 4, n = 0, nk = 0;
    bool geometry = false;
    http_frame_lists l;
    dvpp_status st;

    while (r->n >= 17 && n < MAX_FRAMES) {
        unsigned flags;
        f[n].index = be64(r);
        f[n].pts = (int64_t)be64(r);
        flags = fuzz_u8(r);
        f[n].key = flags & 1;
        if (flags & 2) {
            uint64_t bits = be64(r);
            memcpy(&f[n].time_s, &bits, sizeof(bits));
        } else {
            f[n].time_s = (double)f[n].pts / 90000.0;
        }
        if (n == 0)
            geometry = flags & 4;
        if (flags & 8) {
            f[n].geom.scale_x = raw_double(r), f[n].geom.scale_y = raw_double(r);
            f[n].geom.pad_x = raw_double(r), f[n].geom.pad_y = raw_double(r);
        } else {
            f[n].geom = (dvpp_pipe_geom){1.0 / (double)(f[n].index % 7 + 1), 0.3,
                                         (double)(f[n].index % 9), 0.5};
        }
        idx[n] = f[n].index, pts[n] = (uint64_t)f[n].pts, times[n] = f[n].time_s;
        if (f[n].key)
            keys[nk++] = f[n].index;
        n++;
    }
    st = http_frame_lists_make(n ? f : NULL, n, geometry, budget, &l, NULL);
    if (st == DVPP_ELIMIT) {
        if (needed(f, n, geometry) <= budget)
            abort(); /* refused lists that fit */
        http_frame_lists_fini(&l);
        return;
    }
    if (st != DVPP_OK)
        return; /* out of memory */
    if (l.total != needed(f, n, geometry) || l.total > budget)
        abort();
    check_int_list((const char *)l.list[0].data, l.list[0].len, idx, n, false);
    check_int_list((const char *)l.list[1].data, l.list[1].len, pts, n, true);
    check_times((const char *)l.list[2].data, l.list[2].len, times, n);
    check_int_list((const char *)l.list[3].data, l.list[3].len, keys, nk, false);
    check_geometry((const char *)l.list[4].data, l.list[4].len, f, geometry ? n : 0, false);
    check_geometry((const char *)l.list[5].data, l.list[5].len, f, geometry ? n : 0, true);
    http_frame_lists_fini(&l);
}

#define MAX_PARTS 64

static const char k_bchars[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";

/* A boundary of 1..70 RFC 2046 characters from the input. */
static void read_boundary(fuzz_reader *r, char *b)
{
    size_t n = fuzz_u8(r) % HTTP_BOUNDARY_MAX + 1;

    for (size_t i = 0; i < n; i++)
        b[i] = k_bchars[fuzz_u8(r) % (sizeof(k_bchars) - 1)];
    b[n] = '\0';
}

/* An exact-size copy (ASan sees reads past the body). */
static uint8_t *copy_of(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);

    if (!c)
        abort();
    if (n)
        memcpy(c, p, n);
    return c;
}

static void multipart_raw(fuzz_reader *r)
{
    static http_mpart parts[MAX_PARTS];
    char boundary[HTTP_BOUNDARY_MAX + 1];
    unsigned max, n1 = 0, n2 = 0;
    dvpp_status s1, s2;
    uint8_t *body;
    size_t len;

    read_boundary(r, boundary);
    max = fuzz_u8(r) % MAX_PARTS;
    body = copy_of(r->p, r->n);
    len = r->n;
    s1 = http_multipart_parse(body, len, boundary, NULL, max, &n1, NULL);
    s2 = http_multipart_parse(body, len, boundary, parts, max, &n2, NULL);
    if (s1 != s2 || n1 != n2 || n1 > max + 1 || (s1 == DVPP_ELIMIT) != (n1 == max + 1))
        abort();
    for (unsigned i = 0; s2 == DVPP_OK && i < n2; i++) {
        if (parts[i].data < body || parts[i].len > len ||
            parts[i].data + parts[i].len > body + len || strlen(parts[i].name) >= 64)
            abort();
        if (i && parts[i].data < parts[i - 1].data + parts[i - 1].len)
            abort();
    }
    free(body);
}

static void multipart_made(fuzz_reader *r)
{
    static http_mpart parts[MAX_PARTS];
    static char names[MAX_PARTS][64];
    static size_t offs[MAX_PARTS], lens[MAX_PARTS];
    char boundary[HTTP_BOUNDARY_MAX + 1];
    dvpp_buf b;
    unsigned n = 0, got = 0;
    dvpp_status st;
    uint8_t *body;

    read_boundary(r, boundary);
    dvpp_buf_init(&b);
    while (r->n && n < MAX_PARTS) {
        size_t nl = fuzz_u8(r) % 40, dl = (size_t)fuzz_u8(r) * 8, got_len;
        const uint8_t *name = fuzz_take(r, nl, &nl), *data;
        char head[400]; /* the boundary (70) and the name (39) fit */
        int hn;
        for (size_t i = 0; i < nl; i++) /* a token: no quote, backslash or CR/LF */
            names[n][i] = k_bchars[name[i] % 62];
        names[n][nl] = '\0';
        data = fuzz_take(r, dl, &got_len);
        hn = snprintf(head, sizeof(head), "--%s\r\nContent-Disposition: form-data; "
                      "name=\"%s\"; filename=\"f\"\r\nContent-Type: application/"
                      "octet-stream\r\n\r\n", boundary, names[n]);
        if (hn < 0 || (size_t)hn >= sizeof(head) || dvpp_buf_append(&b, head, (size_t)hn))
            abort();
        offs[n] = b.len;
        lens[n] = got_len;
        if (dvpp_buf_append(&b, data, got_len) != DVPP_OK || dvpp_buf_append(&b, "\r\n", 2))
            abort();
        /* a CR in the data could start a delimiter: make it a LF */
        for (size_t i = offs[n]; i < offs[n] + got_len; i++)
            if (b.data[i] == '\r')
                b.data[i] = '\n';
        n++;
    }
    if (dvpp_buf_append(&b, "--", 2) || dvpp_buf_append(&b, boundary, strlen(boundary)) ||
        dvpp_buf_append(&b, "--\r\n", 4))
        abort();
    body = copy_of(b.data, b.len);
    st = http_multipart_parse(body, b.len, boundary, parts, MAX_PARTS, &got, NULL);
    if (n == 0 ? st != DVPP_OK || got != 0 : st != DVPP_OK || got != n)
        abort();
    for (unsigned i = 0; i < got; i++)
        if (strcmp(parts[i].name, names[i]) || parts[i].len != lens[i] ||
            parts[i].data != body + offs[i] || memcmp(parts[i].data, b.data + offs[i], lens[i]))
            abort();
    free(body);
    dvpp_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size};

    switch (fuzz_u8(&r) % 3) {
    case 0: frame_lists(&r); break;
    case 1: multipart_raw(&r); break;
    default: multipart_made(&r); break;
    }
    return 0;
}
