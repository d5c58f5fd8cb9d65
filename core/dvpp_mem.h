/* dvpp_mem: the one allocation path, aligned buffers and checked size maths.
 *
 * Every allocation dvppd makes for pixels, tensors and codec state goes
 * through dvpp_malloc()/dvpp_free(), which call the process allocator. The
 * allocator is a dispatch table that may be replaced once, before any worker
 * thread starts (tests replace it to fail allocation N or to record the
 * largest request). Blocks are aligned to DVPP_ALIGN bytes so SIMD kernels
 * may use aligned loads on row starts they allocated themselves.
 *
 * Sizes that come from outside (headers, requests) must be computed with
 * dvpp_size_mul()/dvpp_size_add(): they report overflow instead of wrapping.
 */
#ifndef DVPP_MEM_H
#define DVPP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"

/* Alignment of every dvpp_malloc() block: one AVX-512 register / cache line. */
#define DVPP_ALIGN 64

/* Blocks at least this large are advised onto transparent huge pages: on
 * VMs first-touch page faults cost ~10 us per 4 KiB page (env.md §0). */
#define DVPP_HUGEPAGE_MIN ((size_t)2 << 20)

typedef struct dvpp_allocator {
    /* Return @size bytes aligned to @align (a power of two >= sizeof(void*))
     * or NULL. @size is never 0. */
    void *(*alloc)(void *ctx, size_t size, size_t align);
    /* Release a block from alloc(); never called with NULL. */
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} dvpp_allocator;

/* Replace the process allocator; NULL restores the default (posix_memalign).
 * Not thread-safe: call before any thread allocates, or from a test. */
void dvpp_replace_allocator(const dvpp_allocator *a);

/* The allocator in force (a copy). */
dvpp_allocator dvpp_current_allocator(void);

/* Allocate @size bytes aligned to DVPP_ALIGN; NULL on failure or size 0.
 * Caller owns the block; release it with dvpp_free() passing the same size. */
void *dvpp_malloc(size_t size);

/* Same, zero-filled. */
void *dvpp_calloc(size_t n, size_t elem);

/* Release a block from dvpp_malloc()/dvpp_calloc(); NULL is a no-op. */
void dvpp_free(void *ptr, size_t size);

/* Give freed heap memory back to the system when idle. @release (may be
 * NULL) frees what the caller no longer keeps and returns its bytes, with
 * glibc's trim threshold lowered to 128 KiB while it runs; malloc_trim(0)
 * then returns the free pages of every arena, and the trim threshold goes
 * back to its load value (64 MiB: work under load keeps its heap). Measured
 * (bench/soak.py --quick, idle_keep_bytes 0, fresh daemon 7.3 MiB): at rest
 * 12.1 MiB with malloc_trim alone, 9.2-9.5 MiB so. Setting a threshold ends
 * glibc's dynamic rule, which would leave the mmap threshold wherever it
 * stood (128 KiB in a daemon that has freed no big block yet: every later
 * block above it mapped and faulted in afresh), so the first call fixes it
 * at 32 MiB, where the dynamic rule stops. Every idle worker runs this, not
 * only one that freed a buffer (the blocks its codecs freed under load are
 * in its arena). Calls are serialised (the thresholds are the process's);
 * without glibc only @release runs. Returns what @release returned. Not
 * for a path under load: malloc_trim takes every arena's lock in turn. */
size_t dvpp_mem_release_idle(size_t (*release)(void *ctx), void *ctx);

/* a * b into *out; false (and *out untouched) when it overflows. */
static inline bool dvpp_size_mul(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

/* a + b into *out; false when it overflows. */
static inline bool dvpp_size_add(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

/* a * b * c into *out; false when any step overflows. */
static inline bool dvpp_size_mul3(size_t a, size_t b, size_t c, size_t *out)
{
    size_t ab;
    return dvpp_size_mul(a, b, &ab) && dvpp_size_mul(ab, c, out);
}

/* Round @v up to a multiple of @a (a > 0, not necessarily a power of two).
 * Values near SIZE_MAX saturate to 0 so callers' limit checks reject them. */
static inline uint64_t dvpp_align_up(uint64_t v, uint64_t a)
{
    uint64_t r;
    if (a <= 1)
        return v;
    if (__builtin_add_overflow(v, a - 1, &r))
        return 0;
    return r / a * a;
}

/* A heap byte buffer with its capacity: the unit the codecs hand back for
 * encoded output. Owned by whoever holds it; release with dvpp_buf_fini(). */
typedef struct dvpp_buf {
    uint8_t *data; /* NULL when empty */
    size_t len;    /* bytes in use */
    size_t cap;    /* bytes allocated */
} dvpp_buf;

/* Make @b empty without allocating. */
void dvpp_buf_init(dvpp_buf *b);

/* Ensure room for @extra more bytes beyond len (grows geometrically).
 * DVPP_ENOMEM / DVPP_EOVERFLOW on failure, @b unchanged. */
dvpp_status dvpp_buf_reserve(dvpp_buf *b, size_t extra);

/* Append @n bytes from @src. */
dvpp_status dvpp_buf_append(dvpp_buf *b, const void *src, size_t n);

/* Release the storage and make @b empty. */
void dvpp_buf_fini(dvpp_buf *b);

/* Read a whole file into @b (replacing its contents). Files larger than
 * @max_bytes fail with DVPP_ELIMIT before anything is read. */
dvpp_status dvpp_buf_read_file(dvpp_buf *b, const char *path, size_t max_bytes,
                               dvpp_err *err);

/* Write all @n bytes to @fd (retrying short writes and EINTR); @name is
 * the file's name for the error. The fd stays open either way. */
dvpp_status dvpp_write_all(int fd, const char *name, const void *data, size_t n,
                           dvpp_err *err);

/* Write @n bytes to @path (created or truncated, mode 0644). */
dvpp_status dvpp_write_file(const char *path, const void *data, size_t n,
                            dvpp_err *err);

#endif
