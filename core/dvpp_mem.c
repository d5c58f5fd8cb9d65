#define _GNU_SOURCE
#include "dvpp_mem.h"

#include <errno.h>
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void *default_alloc(void *ctx, size_t size, size_t align)
{
    void *p = NULL;

    (void)ctx;
    if (posix_memalign(&p, align, size) != 0)
        return NULL;
    /* Large pixel buffers are touched once per row; huge pages turn ~500
     * first-touch faults per 2 MiB into one (env.md §5). */
    if (size >= DVPP_HUGEPAGE_MIN)
        (void)madvise((void *)((uintptr_t)p & ~(uintptr_t)4095), size,
                      MADV_HUGEPAGE);
    return p;
}

static void default_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    free(ptr);
}

/* The allocator dispatch table: written only by dvpp_replace_allocator(),
 * which the contract restricts to single-threaded start-up and tests. */
static dvpp_allocator g_allocator = {default_alloc, default_free, NULL};

void dvpp_replace_allocator(const dvpp_allocator *a)
{
    if (a)
        g_allocator = *a;
    else
        g_allocator = (dvpp_allocator){default_alloc, default_free, NULL};
}

dvpp_allocator dvpp_current_allocator(void)
{
    return g_allocator;
}

void *dvpp_malloc(size_t size)
{
    if (size == 0)
        return NULL;
    return g_allocator.alloc(g_allocator.ctx, size, DVPP_ALIGN);
}

void *dvpp_calloc(size_t n, size_t elem)
{
    size_t size;
    void *p;

    if (!dvpp_size_mul(n, elem, &size))
        return NULL;
    p = dvpp_malloc(size);
    if (p)
        memset(p, 0, size);
    return p;
}

void dvpp_free(void *ptr, size_t size)
{
    if (ptr)
        g_allocator.free(g_allocator.ctx, ptr, size);
}

/* glibc keeps an arena's top up to the trim threshold: the values in force
 * under load and while an idle release frees. */
#define LOAD_TRIM_THRESHOLD (64 << 20)
#define IDLE_TRIM_THRESHOLD (128 << 10)
#define FIXED_MMAP_THRESHOLD (32 << 20)

/* Serialises idle releases: the thresholds they lower and restore are the
 * process's. */
static pthread_mutex_t g_release_mu = PTHREAD_MUTEX_INITIALIZER;

size_t dvpp_mem_release_idle(size_t (*release)(void *ctx), void *ctx)
{
    size_t freed = 0;

    pthread_mutex_lock(&g_release_mu);
#if defined(__GLIBC__)
    (void)mallopt(M_MMAP_THRESHOLD, FIXED_MMAP_THRESHOLD);
    (void)mallopt(M_TRIM_THRESHOLD, IDLE_TRIM_THRESHOLD);
    if (release)
        freed = release(ctx);
    (void)malloc_trim(0);
    (void)mallopt(M_TRIM_THRESHOLD, LOAD_TRIM_THRESHOLD);
#else
    if (release)
        freed = release(ctx);
#endif
    pthread_mutex_unlock(&g_release_mu);
    return freed;
}

void dvpp_buf_init(dvpp_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

dvpp_status dvpp_buf_reserve(dvpp_buf *b, size_t extra)
{
    size_t need, cap;
    uint8_t *p;

    if (!dvpp_size_add(b->len, extra, &need))
        return DVPP_EOVERFLOW;
    if (need <= b->cap)
        return DVPP_OK;
    cap = b->cap ? b->cap : 4096;
    while (cap < need) {
        if (!dvpp_size_mul(cap, 2, &cap))
            return DVPP_EOVERFLOW;
    }
    p = dvpp_malloc(cap);
    if (!p)
        return DVPP_ENOMEM;
    if (b->len)
        memcpy(p, b->data, b->len);
    dvpp_free(b->data, b->cap);
    b->data = p;
    b->cap = cap;
    return DVPP_OK;
}

dvpp_status dvpp_buf_append(dvpp_buf *b, const void *src, size_t n)
{
    dvpp_status st;

    if (n == 0)
        return DVPP_OK;
    st = dvpp_buf_reserve(b, n);
    if (st != DVPP_OK)
        return st;
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return DVPP_OK;
}

void dvpp_buf_fini(dvpp_buf *b)
{
    dvpp_free(b->data, b->cap);
    dvpp_buf_init(b);
}

dvpp_status dvpp_buf_read_file(dvpp_buf *b, const char *path, size_t max_bytes,
                               dvpp_err *err)
{
    struct stat sb;
    dvpp_status st;
    size_t size;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dvpp_err_set(err, DVPP_EIO, "file", "cannot open %s: %s", path,
                            strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = dvpp_err_set(err, DVPP_EIO, "file", "%s is not a regular file",
                          path);
        goto out_close;
    }
    size = (size_t)sb.st_size;
    if (size > max_bytes) {
        st = dvpp_err_set(err, DVPP_ELIMIT, "max_encoded_bytes",
                          "%s is %zu bytes, over the limit of %zu", path, size,
                          max_bytes);
        goto out_close;
    }
    b->len = 0;
    st = dvpp_buf_reserve(b, size ? size : 1);
    if (st != DVPP_OK) {
        dvpp_err_set(err, st, "file", "cannot allocate %zu bytes for %s", size,
                     path);
        goto out_close;
    }
    while (b->len < size) {
        ssize_t n = read(fd, b->data + b->len, size - b->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            st = dvpp_err_set(err, DVPP_EIO, "file", "short read on %s", path);
            goto out_close;
        }
        b->len += (size_t)n;
    }
    st = DVPP_OK;
out_close:
    close(fd);
    return st;
}

dvpp_status dvpp_write_all(int fd, const char *name, const void *data, size_t n,
                           dvpp_err *err)
{
    const uint8_t *p = data;

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) /* 0: nothing written and no errno; the device is full */
            return dvpp_err_set(err, DVPP_EIO, "output", "write to %s: %s", name,
                                strerror(w < 0 ? errno : ENOSPC));
        p += w;
        n -= (size_t)w;
    }
    return DVPP_OK;
}

dvpp_status dvpp_write_file(const char *path, const void *data, size_t n,
                            dvpp_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0)
        return dvpp_err_set(err, DVPP_EIO, "output", "cannot create %s: %s",
                            path, strerror(errno));
    if (dvpp_write_all(fd, path, data, n, err) != DVPP_OK) {
        close(fd);
        return DVPP_EIO;
    }
    if (close(fd) != 0)
        return dvpp_err_set(err, DVPP_EIO, "output", "close %s: %s", path,
                            strerror(errno));
    return DVPP_OK;
}
