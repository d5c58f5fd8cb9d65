/* dvpp_dump: the dump writer (dvpp_dump.h). Images become PNG or .npy
 * files in the dump's folder as the run shows them; the manifest is JSON
 * written by hand (libdvpp has no JSON library), every string escaped;
 * retention lists a root directory and removes whole dump folders, oldest
 * name first. Every file is named by this module and opened relative to a
 * directory descriptor. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device/dvpp_dump.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"

/* --- notes and the file list ---------------------------------------------------- */

static void dump_note(dvpp_dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dump_note(dvpp_dump *d, const char *fmt, ...)
{
    va_list ap;

    if (d->nnotes == DVPP_DUMP_MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(d->notes[d->nnotes++], DVPP_DUMP_NOTE_LEN, fmt, ap);
    va_end(ap);
}

/* The next entry of the list, or NULL (noted) when it is full. */
static dvpp_dump_file *dump_entry(dvpp_dump *d, const char *name, const char *stage,
                                  int index)
{
    dvpp_dump_file *f;

    if (d->nfiles == DVPP_DUMP_MAX_FILES) {
        dump_note(d, "more than %d files: %s not written", DVPP_DUMP_MAX_FILES, name);
        return NULL;
    }
    f = &d->files[d->nfiles++];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->stage, sizeof(f->stage), "%s", stage);
    f->index = index;
    f->format = DVPP_PIXEL_UNKNOWN;
    return f;
}

/* --- writing files ------------------------------------------------------------------ */

/* Create @name in the dump's folder and write @head then @data. */
static dvpp_status write_at(dvpp_dump *d, const char *name, const void *head, size_t head_len,
                            const void *data, size_t len, dvpp_err *err)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
                (d->replace ? O_TRUNC : O_EXCL);
    int fd = openat(d->dirfd, name, flags, 0600);
    dvpp_status st;

    if (fd < 0)
        return dvpp_err_set(err, DVPP_EIO, "dump", "%s: %s", name, strerror(errno));
    st = dvpp_write_all(fd, name, head, head_len, err);
    if (st == DVPP_OK)
        st = dvpp_write_all(fd, name, data, len, err);
    if (close(fd) != 0 && st == DVPP_OK)
        st = dvpp_err_set(err, DVPP_EIO, "dump", "%s: %s", name, strerror(errno));
    if (st != DVPP_OK)
        unlinkat(d->dirfd, name, 0); /* no half file is left to be mistaken for data */
    return st;
}

/* Room for @n more bytes under the bound, less what the manifest keeps. */
static bool dump_has_room(const dvpp_dump *d, uint64_t n)
{
    uint64_t cap = d->max_bytes - d->reserve; /* reserve <= max_bytes (manifest_reserve) */

    return n <= cap && d->written <= cap - n;
}

dvpp_status dvpp_dump_bytes(dvpp_dump *d, const char *name, const char *stage,
                            const void *head, size_t head_len, const void *data,
                            size_t len, dvpp_err *err)
{
    dvpp_dump_file *f = dump_entry(d, name, stage, -1);
    uint64_t n = (uint64_t)head_len + len;
    dvpp_status st;

    if (!f)
        return dvpp_err_set(err, DVPP_ELIMIT, "dump", "too many files");
    if (!dump_has_room(d, n)) {
        f->skipped = true;
        dump_note(d, "%s: %" PRIu64 " bytes would pass the dump's bound of %" PRIu64
                  " bytes: skipped", name, n, d->max_bytes);
        return dvpp_err_set(err, DVPP_ELIMIT, "dump", "%s over the dump's bound", name);
    }
    st = write_at(d, name, head, head_len, data, len, err);
    if (st != DVPP_OK) {
        f->skipped = true;
        dump_note(d, "%s: not written: %s", name, err ? err->msg : dvpp_strerror(st));
        return st;
    }
    f->bytes = n;
    d->written += n;
    return DVPP_OK;
}

/* A format PNG holds exactly (8-bit RGB/RGBA in some order, or grey). */
static bool format_is_png(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_RGB || f == DVPP_PIXEL_BGR || f == DVPP_PIXEL_RGBA ||
           f == DVPP_PIXEL_BGRA || f == DVPP_PIXEL_GRAY || f == DVPP_PIXEL_YUV400;
}

/* @img as .npy into @out: multi-plane formats as laid out (rows of
 * width_stride bytes, every plane), packed ones H x W x C without padding
 * (the convention of dvppctl's .npy writer and dvppd's /v1/decode). */
static dvpp_status npy_of_image(const dvpp_image *img, const dvpp_planes *pl, dvpp_buf *out)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    int64_t shape[3];
    dvpp_status st;
    size_t hl = dvpp_npy_header(hdr, "|u1", shape, dvpp_npy_image_shape(img, pl, shape));

    st = dvpp_buf_append(out, hdr, hl);
    if (pl->count > 1)
        return st == DVPP_OK ? dvpp_buf_append(out, img->data, pl->total) : st;
    for (uint32_t y = 0; y < img->height && st == DVPP_OK; y++)
        st = dvpp_buf_append(out, dvpp_image_row(img, pl, 0, y), pl->p[0].row_bytes);
    return st;
}

/* The file of @img (PNG or .npy) into @out; its extension into *@ext. */
static dvpp_status encode_image(const dvpp_image *img, const dvpp_planes *pl, dvpp_buf *out,
                                const char **ext, dvpp_err *err)
{
    dvpp_png_encode_opts po = {.level = -1};

    if (format_is_png(img->format)) {
        *ext = "png";
        return dvpp_png_encode(img, &po, out, err);
    }
    *ext = "npy";
    return npy_of_image(img, pl, out) == DVPP_OK
               ? DVPP_OK
               : dvpp_err_set(err, DVPP_ENOMEM, "dump", "out of memory for the .npy");
}

/* PNG adds its signature, chunks and zlib's worst case (a few bytes per
 * 16 KiB) to the raw samples: what an image may take, checked before any
 * encoding buffer is allocated. */
static uint64_t image_file_bound(const dvpp_planes *pl)
{
    return (uint64_t)pl->total + pl->total / 1024 + 4096;
}

void dvpp_dump_image(dvpp_dump *d, const char *stage, int index, const dvpp_image *img)
{
    char name[40];
    const char *ext = "npy";
    dvpp_planes pl;
    dvpp_buf buf;
    dvpp_err err;
    dvpp_dump_file *f;
    unsigned nn = d->seq++;

    dvpp_err_clear(&err);
    if (d->dirfd < 0 || dvpp_image_planes(img, &pl, &err) != DVPP_OK) {
        dump_note(d, "%02u-%s: not written: %s", nn, stage, err.msg);
        return;
    }
    snprintf(name, sizeof(name), "%02u-%s.%s", nn, stage,
             format_is_png(img->format) ? "png" : "npy");
    if (!(f = dump_entry(d, name, stage, index)))
        return;
    f->format = img->format;
    f->width = img->width, f->height = img->height;
    f->width_stride = img->width_stride, f->height_stride = img->height_stride;
    if (!dump_has_room(d, image_file_bound(&pl))) {
        f->skipped = true;
        dump_note(d, "%s: a %ux%u %s image (%zu bytes) would pass the dump's bound of "
                  "%" PRIu64 " bytes: skipped", name, img->width, img->height,
                  dvpp_pixfmt_name(img->format), pl.total, d->max_bytes);
        return;
    }
    dvpp_buf_init(&buf);
    if (encode_image(img, &pl, &buf, &ext, &err) == DVPP_OK &&
        write_at(d, name, NULL, 0, buf.data, buf.len, &err) == DVPP_OK) {
        f->bytes = buf.len;
        d->written += buf.len;
    } else {
        f->skipped = true;
        dump_note(d, "%s: not written: %s", name, err.msg);
    }
    (void)ext;
    dvpp_buf_fini(&buf);
}

static void watch_image(void *ctx, const char *name, int index, uint32_t item,
                        const dvpp_image *img)
{
    (void)item;
    dvpp_dump_image(ctx, name, index, img);
}

const dvpp_pipe_watch *dvpp_dump_watch(dvpp_dump *d)
{
    d->watch = (dvpp_pipe_watch){.ctx = d, .span = NULL, .image = watch_image};
    return &d->watch;
}

/* --- the folder ------------------------------------------------------------------------ */

/* The most a manifest takes without its spec: every file entry, note and
 * the error at their longest (each byte escaped as \u00XX), the fixed
 * fields. Kept inside the bound so that a folder's files plus its manifest
 * stay within max_bytes, which retention counts. */
#define DUMP_MANIFEST_BASE                                                                \
    (2048u + DVPP_DUMP_MAX_FILES * 320u + DVPP_DUMP_MAX_NOTES * (DVPP_DUMP_NOTE_LEN * 6u + 4u) + \
     DVPP_ERR_LEN * 6u)

uint64_t dvpp_dump_manifest_reserve(uint64_t max_bytes, size_t spec_len)
{
    uint64_t want = DUMP_MANIFEST_BASE + (uint64_t)spec_len;

    return want <= max_bytes / 4 ? want : 0;
}

void dvpp_dump_reserve_spec(dvpp_dump *d, size_t spec_len)
{
    d->reserve = dvpp_dump_manifest_reserve(d->max_bytes, spec_len);
}

dvpp_status dvpp_dump_open(dvpp_dump *d, int parent_fd, const char *name, bool replace,
                           uint64_t max_bytes, dvpp_err *err)
{
    memset(d, 0, sizeof(*d));
    d->dirfd = -1;
    d->replace = replace;
    d->max_bytes = max_bytes;
    dvpp_dump_reserve_spec(d, 0);
    if (!replace && (!name[0] || strchr(name, '/') || strstr(name, "..")))
        return dvpp_err_set(err, DVPP_EINVAL, "dump", "not a folder name: '%.64s'", name);
    if (mkdirat(parent_fd, name, 0700) != 0 && !(replace && errno == EEXIST))
        return dvpp_err_set(err, DVPP_EIO, "dump", "cannot make %.200s: %s", name,
                            strerror(errno));
    d->dirfd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->dirfd < 0)
        return dvpp_err_set(err, DVPP_EIO, "dump", "cannot open %.200s: %s", name,
                            strerror(errno));
    dvpp_dump_watch(d);
    return DVPP_OK;
}

dvpp_status dvpp_dump_reopen(dvpp_dump *d, int parent_fd, const char *name, dvpp_err *err)
{
    if (d->dirfd >= 0)
        return DVPP_OK;
    d->dirfd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->dirfd < 0)
        return dvpp_err_set(err, DVPP_EIO, "dump", "cannot open %.200s: %s", name,
                            strerror(errno));
    return DVPP_OK;
}

void dvpp_dump_close(dvpp_dump *d)
{
    if (d->dirfd >= 0)
        close(d->dirfd);
    d->dirfd = -1;
}

/* --- the manifest ------------------------------------------------------------------- */

static void put(dvpp_buf *b, bool *ok, const char *s)
{
    *ok = *ok && dvpp_buf_append(b, s, strlen(s)) == DVPP_OK;
}

static void putf(dvpp_buf *b, bool *ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void putf(dvpp_buf *b, bool *ok, const char *fmt, ...)
{
    char s[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s, sizeof(s), fmt, ap);
    va_end(ap);
    put(b, ok, s);
}

/* @v as a JSON number; JSON has no NaN or infinity: those are null. */
static void put_num(dvpp_buf *b, bool *ok, const char *key, double v)
{
    putf(b, ok, "\"%s\": ", key);
    if (isfinite(v))
        putf(b, ok, "%.17g", v);
    else
        put(b, ok, "null");
}

/* @s as a JSON string; bytes outside printable ASCII as \u00XX escapes, so
 * the manifest is valid UTF-8 whatever the request held. */
static void put_str(dvpp_buf *b, bool *ok, const char *s)
{
    put(b, ok, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char e[8];
        if (*p == '"' || *p == '\\')
            snprintf(e, sizeof(e), "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            snprintf(e, sizeof(e), "\\u%04x", *p);
        else
            e[0] = (char)*p, e[1] = '\0';
        put(b, ok, e);
    }
    put(b, ok, "\"");
}

static void put_files(dvpp_buf *b, bool *ok, const dvpp_dump *d)
{
    put(b, ok, ",\n  \"files\": [");
    for (unsigned i = 0; i < d->nfiles; i++) {
        const dvpp_dump_file *f = &d->files[i];
        put(b, ok, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        put_str(b, ok, f->name);
        put(b, ok, ", \"stage\": ");
        put_str(b, ok, f->stage);
        putf(b, ok, ", \"index\": %d", f->index);
        if (f->format != DVPP_PIXEL_UNKNOWN) {
            put(b, ok, ", \"format\": ");
            put_str(b, ok, dvpp_pixfmt_name(f->format));
            putf(b, ok, ", \"width\": %u, \"height\": %u, \"width_stride\": %u, "
                 "\"height_stride\": %u", f->width, f->height, f->width_stride,
                 f->height_stride);
        }
        putf(b, ok, ", \"bytes\": %" PRIu64 "%s}", f->bytes,
             f->skipped ? ", \"skipped\": true" : "");
    }
    put(b, ok, "]");
}

static void put_tensor(dvpp_buf *b, bool *ok, const dvpp_tensor *t)
{
    put(b, ok, ",\n  \"tensor\": ");
    if (!t) {
        put(b, ok, "null");
        return;
    }
    put(b, ok, "{\"shape\": [");
    for (unsigned i = 0; i < t->ndim; i++)
        putf(b, ok, "%s%" PRId64, i ? ", " : "", (int64_t)t->shape[i]);
    put(b, ok, "], \"dtype\": ");
    put_str(b, ok, dvpp_dtype_name(t->dtype));
    put(b, ok, ", \"layout\": ");
    put_str(b, ok, dvpp_layout_name(t->layout));
    put(b, ok, "}");
}

/* ISO 8601 UTC with microseconds, of the realtime clock now. */
static void time_now(char out[96])
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, 96, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             ts.tv_nsec / 1000);
}

static void put_manifest(dvpp_buf *b, bool *ok, const dvpp_dump *d, const dvpp_dump_meta *m)
{
    char now[96];

    time_now(now);
    put(b, ok, "{\n  \"request\": ");
    put_str(b, ok, m->request);
    put(b, ok, ",\n  \"time\": ");
    put_str(b, ok, now);
    put(b, ok, ",\n  \"spec\": ");
    put(b, ok, m->spec_json ? m->spec_json : "null");
    put(b, ok, ",\n  \"input\": {\"format\": ");
    put_str(b, ok, m->input_format ? m->input_format : "unknown");
    putf(b, ok, ", \"width\": %u, \"height\": %u, \"bytes\": %" PRIu64 "}", m->input_width,
         m->input_height, m->input_bytes);
    put_files(b, ok, d);
    put_tensor(b, ok, m->tensor);
    put(b, ok, ",\n  \"geometry\": ");
    if (m->geom) {
        put(b, ok, "{");
        put_num(b, ok, "scale_x", m->geom->scale_x);
        put(b, ok, ", ");
        put_num(b, ok, "scale_y", m->geom->scale_y);
        put(b, ok, ", ");
        put_num(b, ok, "pad_x", m->geom->pad_x);
        put(b, ok, ", ");
        put_num(b, ok, "pad_y", m->geom->pad_y);
        put(b, ok, "}");
    } else
        put(b, ok, "null");
    put(b, ok, ",\n  \"error\": ");
    if (m->error)
        put_str(b, ok, m->error);
    else
        put(b, ok, "null");
    putf(b, ok, ",\n  \"bytes\": %" PRIu64 ", \"max_bytes\": %" PRIu64 ",\n  \"notes\": [",
         d->written, d->max_bytes);
    for (unsigned i = 0; i < d->nnotes; i++) {
        put(b, ok, i ? ", " : "");
        put_str(b, ok, d->notes[i]);
    }
    put(b, ok, "]\n}\n");
}

dvpp_status dvpp_dump_finish(dvpp_dump *d, const dvpp_dump_meta *m, dvpp_err *err)
{
    dvpp_buf b;
    bool ok = true;
    dvpp_status st;

    if (d->dirfd < 0)
        return dvpp_err_set(err, DVPP_EIO, "dump", "the dump is closed");
    dvpp_buf_init(&b);
    put_manifest(&b, &ok, d, m);
    st = ok ? write_at(d, "manifest.json", NULL, 0, b.data, b.len, err)
            : dvpp_err_set(err, DVPP_ENOMEM, "dump", "out of memory for the manifest");
    dvpp_buf_fini(&b);
    dvpp_dump_close(d);
    return st;
}

/* --- names and retention ------------------------------------------------------------- */

void dvpp_dump_name(char *out, uint64_t unix_ns, uint64_t counter)
{
    time_t s = (time_t)(unix_ns / 1000000000u);
    char full[128];
    struct tm tm;

    gmtime_r(&s, &tm);
    /* Years past 9999 would lengthen the name: it is cut to its fixed size
     * (and then not a valid name, so such a folder is never pruned). */
    snprintf(full, sizeof(full), "%04d%02d%02dT%02d%02d%02d.%06uZ-%08u",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
             tm.tm_sec, (unsigned)(unix_ns % 1000000000u / 1000u),
             (unsigned)(counter % 100000000u));
    memcpy(out, full, DVPP_DUMP_NAME_LEN - 1);
    out[DVPP_DUMP_NAME_LEN - 1] = '\0';
}

bool dvpp_dump_name_is_valid(const char *name)
{
    static const char pattern[] = "ddddddddTdddddd.ddddddZ-dddddddd";
    size_t i;

    for (i = 0; pattern[i]; i++) {
        char c = name[i];
        if (pattern[i] == 'd' ? (c < '0' || c > '9') : c != pattern[i])
            return false;
    }
    return name[i] == '\0';
}

/* Bytes of the regular files under folder @fd, one level of subfolders
 * (a batch's item-N) included. */
static uint64_t folder_bytes(int fd, int depth)
{
    uint64_t total = 0;
    struct dirent *e;
    int dfd = dup(fd);
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;

    if (!dir) {
        if (dfd >= 0)
            close(dfd);
        return 0;
    }
    rewinddir(dir);
    while ((e = readdir(dir))) {
        struct stat sb;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(sb.st_mode)) {
            total += (uint64_t)sb.st_size;
        } else if (S_ISDIR(sb.st_mode) && depth > 0) {
            int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                total += folder_bytes(sub, depth - 1);
                close(sub);
            }
        }
    }
    closedir(dir);
    return total;
}

/* Remove folder @name of @parent_fd and what it holds (files, one level of
 * subfolders); never follows a link. */
static void folder_remove(int parent_fd, const char *name, int depth)
{
    struct dirent *e;
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

    if (!dir) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(dir))) {
        struct stat sb;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(sb.st_mode) && depth > 0)
            folder_remove(fd, e->d_name, depth - 1);
        else if (!S_ISDIR(sb.st_mode))
            unlinkat(fd, e->d_name, 0);
    }
    closedir(dir);
    unlinkat(parent_fd, name, AT_REMOVEDIR);
}

typedef struct dump_dirent {
    char name[DVPP_DUMP_NAME_LEN];
    uint64_t bytes;
} dump_dirent;

static int dirent_cmp(const void *a, const void *b)
{
    return strcmp(((const dump_dirent *)a)->name, ((const dump_dirent *)b)->name);
}

/* The dump folders under @root_fd into *@out (sorted by name; caller
 * frees), with their bytes. */
static dvpp_status list_dumps(int root_fd, dump_dirent **out, size_t *n, dvpp_err *err)
{
    dump_dirent *list = NULL;
    size_t cap = 0, count = 0;
    struct dirent *e;
    int dfd = dup(root_fd);
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;

    if (!dir) {
        if (dfd >= 0)
            close(dfd);
        return dvpp_err_set(err, DVPP_EIO, "dump.dir", "cannot list: %s", strerror(errno));
    }
    rewinddir(dir); /* the duplicate shares its offset with the root's fd */
    while ((e = readdir(dir))) {
        int fd;
        if (!dvpp_dump_name_is_valid(e->d_name))
            continue;
        if (count == cap) {
            size_t nc = cap ? cap * 2 : 64;
            dump_dirent *nl = realloc(list, nc * sizeof(*nl));
            if (!nl) {
                free(list);
                closedir(dir);
                return dvpp_err_set(err, DVPP_ENOMEM, "dump.dir", "out of memory");
            }
            list = nl, cap = nc;
        }
        memcpy(list[count].name, e->d_name, DVPP_DUMP_NAME_LEN); /* valid: 32 + NUL */
        fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue; /* not a folder (or gone): not a dump */
        list[count++].bytes = folder_bytes(fd, 1);
        close(fd);
    }
    closedir(dir);
    if (count)
        qsort(list, count, sizeof(*list), dirent_cmp);
    *out = list;
    *n = count;
    return DVPP_OK;
}

dvpp_status dvpp_dump_prune(int root_fd, uint32_t max_requests, uint64_t max_bytes,
                            dvpp_dump_keep_fn keep, void *keep_ctx, unsigned *removed,
                            dvpp_err *err)
{
    dump_dirent *list = NULL;
    size_t n = 0, left;
    uint64_t total = 0;
    dvpp_status st = list_dumps(root_fd, &list, &n, err);

    if (removed)
        *removed = 0;
    if (st != DVPP_OK)
        return st;
    left = n;
    for (size_t i = 0; i < n; i++)
        total += list[i].bytes;
    /* Oldest first; a kept folder (in progress, or the one just finished)
     * still counts but is passed over, so the bounds may stay exceeded
     * until it is no longer kept. */
    for (size_t i = 0; i < n && (left > max_requests || total > max_bytes); i++) {
        if (keep && keep(keep_ctx, list[i].name))
            continue;
        folder_remove(root_fd, list[i].name, 1);
        total -= list[i].bytes;
        left--;
        if (removed)
            (*removed)++;
    }
    free(list);
    return DVPP_OK;
}
