/* libFuzzer target: what the HTTP front end builds from untrusted values
 * without a connection (dvppd/dvppd_framelist.h).
 *
 * Input: a budget (2 bytes, x 4: 0..262140 bytes, the quarter of
 * http.connection_memory the lists get), then frames of 17 bytes each:
 * index (8, big-endian), pts (8, big-endian, any int64), then a flag byte
 * (bit 0: key frame; bit 1: the time is the next 8 bytes as a raw double,
 * any bit pattern: NaN, infinities, 1e308; else pts x 1/90000). The frame
 * lists of a video decode's answer are built from them and checked
 * against the frames: every entry of every list parses back to the
 * frame's value (the times compare as the "%.6f" text), the lists hold
 * exactly the frames in order and fit the budget; a refusal must mean
 * that the exact lists would not have fitted. Lists are built in growing
 * buffers, so ASan sees any write past them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvppd_framelist.h"
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
    char e[DVPPD_FRAME_TIME_MAX];

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
    char e[DVPPD_FRAME_TIME_MAX], want[DVPPD_FRAME_TIME_MAX];

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

/* The bytes the four lists need, counted without the module. */
static size_t needed(const dvpp_video_frame_info *f, size_t n)
{
    char b[DVPPD_FRAME_TIME_MAX];
    size_t total = 0, keys = 0;

    for (size_t i = 0; i < n; i++) {
        total += (size_t)snprintf(b, sizeof(b), "%" PRIu64, f[i].index) +
                 (size_t)snprintf(b, sizeof(b), "%" PRId64, f[i].pts) +
                 (size_t)snprintf(b, sizeof(b), "%.6f", f[i].time_s) + 3 * (i > 0);
        if (f[i].key)
            total += (size_t)snprintf(b, sizeof(b), "%" PRIu64, f[i].index) + (keys++ > 0);
    }
    return total;
}

static void frame_lists(fuzz_reader *r)
{
    static dvpp_video_frame_info f[MAX_FRAMES];
    static uint64_t idx[MAX_FRAMES], pts[MAX_FRAMES], keys[MAX_FRAMES];
    static double times[MAX_FRAMES];
    size_t budget = (size_t)fuzz_u16(r) * 4, n = 0, nk = 0;
    dvppd_frame_lists l;
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
        idx[n] = f[n].index, pts[n] = (uint64_t)f[n].pts, times[n] = f[n].time_s;
        if (f[n].key)
            keys[nk++] = f[n].index;
        n++;
    }
    st = dvppd_frame_lists_make(n ? f : NULL, n, budget, &l, NULL);
    if (st == DVPP_ELIMIT) {
        if (needed(f, n) <= budget)
            abort(); /* refused lists that fit */
        dvppd_frame_lists_fini(&l);
        return;
    }
    if (st != DVPP_OK)
        return; /* out of memory */
    if (l.total != needed(f, n) || l.total > budget)
        abort();
    check_int_list((const char *)l.list[0].data, l.list[0].len, idx, n, false);
    check_int_list((const char *)l.list[1].data, l.list[1].len, pts, n, true);
    check_times((const char *)l.list[2].data, l.list[2].len, times, n);
    check_int_list((const char *)l.list[3].data, l.list[3].len, keys, nk, false);
    dvppd_frame_lists_fini(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size};

    frame_lists(&r);
    return 0;
}
