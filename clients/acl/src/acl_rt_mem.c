/* acl_rt_mem.c: "device" memory (aclrtMalloc/Free, aclrtMallocHost/
 * FreeHost, the acli_mem_* bridge behind acldvppMalloc), copies and fills.
 *
 * Every block is ordinary memory of this process (programs fwrite
 * acldvppMalloc pointers), zeroed at allocation, and registered in an AVL
 * tree keyed by its start, so acli_mem_avail (how many bytes really follow
 * any pointer into a block) is O(log n) and a free of an interior, foreign
 * or wrong-kind pointer is refused instead of corrupting the heap. Nodes
 * live outside the blocks: a program writing past its block cannot damage
 * the registry.
 *
 * The DVPP pool: the chip's acldvppMalloc memory comes from a reserved
 * hugepage pool, so a freed block stays mapped and is handed out again.
 * Real programs lean on that (Ascend/samples' venc sample frees its input
 * buffer after the first frame and keeps filling and encoding it), and a
 * fresh block costs first-touch page faults on every frame. So between
 * aclInit and aclFinalize a freed DVPP block is kept (no longer live:
 * off the block tree) in a pool of at most pool_cap bytes, released least
 * recently freed first beyond it, and a DVPP allocation first takes the
 * OLDEST pooled block of its rounded size: the block a program freed last
 * (and may still be writing) is the last one reused.
 */
#include <stdlib.h>
#include <string.h>

#include "acl_rt_int.h"
#include "dvpp_mem.h"

/* Block starts: DVPP's pool gives 128-byte aligned addresses; the other
 * kinds get the same, which no program can mind. */
#define ACLI_MEM_ALIGN 128u
/* The largest block: more than any Ascend 310/310P device holds (8 to 48
 * GiB), so a size that is really a negative number or an overflow is
 * refused before the allocator is asked. */
#define ACLI_MEM_MAX_BLOCK ((size_t)64 << 30)

struct acli_mem_node {
    uintptr_t start;
    size_t size;           /* bytes of the block (the rounded size for DVPP) */
    acli_mem_kind kind;
    int height;            /* AVL: 1 for a leaf */
    acli_mem_node *left;
    acli_mem_node *right;
    /* Pooled only (a freed DVPP block): seq numbers the frees (0 while
     * live), the pool tree is ordered by (size, seq), and older/newer link
     * the pool's free order (also a release chain through newer). */
    uint64_t seq;
    acli_mem_node *older;
    acli_mem_node *newer;
};

/* --- the AVL tree (mem.mu held) ----------------------------------------------- */

static int height_of(const acli_mem_node *n)
{
    return n ? n->height : 0;
}

static void fix_height(acli_mem_node *n)
{
    int l = height_of(n->left), r = height_of(n->right);
    n->height = (l > r ? l : r) + 1;
}

static acli_mem_node *rotate_right(acli_mem_node *n)
{
    acli_mem_node *l = n->left;

    n->left = l->right;
    l->right = n;
    fix_height(n);
    fix_height(l);
    return l;
}

static acli_mem_node *rotate_left(acli_mem_node *n)
{
    acli_mem_node *r = n->right;

    n->right = r->left;
    r->left = n;
    fix_height(n);
    fix_height(r);
    return r;
}

static acli_mem_node *rebalance(acli_mem_node *n)
{
    int bal;

    fix_height(n);
    bal = height_of(n->left) - height_of(n->right);
    if (bal > 1) {
        if (height_of(n->left->left) < height_of(n->left->right))
            n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (bal < -1) {
        if (height_of(n->right->right) < height_of(n->right->left))
            n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

/* One tree holds live nodes (ordered by start: unique, live blocks do not
 * overlap) or pooled ones (by size, then free order: unique too). */
static bool node_before(const acli_mem_node *a, const acli_mem_node *b)
{
    if (a->seq == 0)
        return a->start < b->start;
    return a->size < b->size || (a->size == b->size && a->seq < b->seq);
}

static acli_mem_node *tree_insert(acli_mem_node *root, acli_mem_node *n)
{
    if (!root)
        return n;
    if (node_before(n, root))
        root->left = tree_insert(root->left, n);
    else
        root->right = tree_insert(root->right, n);
    return rebalance(root);
}

static acli_mem_node *tree_unlink_min(acli_mem_node *root, acli_mem_node **min)
{
    if (!root->left) {
        *min = root;
        return root->right;
    }
    root->left = tree_unlink_min(root->left, min);
    return rebalance(root);
}

/* Unlink the node ordered as @key (into *out; NULL when none). */
static acli_mem_node *tree_remove(acli_mem_node *root, const acli_mem_node *key,
                                  acli_mem_node **out)
{
    acli_mem_node *succ;

    if (!root) {
        *out = NULL;
        return NULL;
    }
    if (node_before(key, root)) {
        root->left = tree_remove(root->left, key, out);
    } else if (node_before(root, key)) {
        root->right = tree_remove(root->right, key, out);
    } else {
        *out = root;
        if (!root->left || !root->right)
            return root->left ? root->left : root->right;
        root->right = tree_unlink_min(root->right, &succ);
        succ->left = root->left;
        succ->right = root->right;
        return rebalance(succ);
    }
    return rebalance(root);
}

/* The block holding @a: the last start <= a, if a lies inside it. */
static const acli_mem_node *tree_find_holding(const acli_mem_node *n, uintptr_t a)
{
    const acli_mem_node *best = NULL;

    while (n) {
        if (n->start <= a) {
            best = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    return best && a - best->start < best->size ? best : NULL;
}

static const acli_mem_node *tree_find_start(const acli_mem_node *n, uintptr_t a)
{
    while (n && n->start != a)
        n = a < n->start ? n->left : n->right;
    return n;
}

/* --- the DVPP pool (mem.mu held) --------------------------------------------------- */

/* The oldest pooled block of exactly @size: the first node of the pool
 * tree not ordered before (size, 0). */
static acli_mem_node *pool_find_oldest(acli_mem_node *n, size_t size)
{
    acli_mem_node *first = NULL;

    while (n) {
        if (n->size >= size) {
            first = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return first && first->size == size ? first : NULL;
}

/* Take @n out of the pool; it leaves as a bare node (a leaf, seq 0). */
static void pool_unlink(acli_mem_registry *M, acli_mem_node *n)
{
    acli_mem_node *out;

    M->pool_root = tree_remove(M->pool_root, n, &out);
    if (n->older)
        n->older->newer = n->newer;
    else
        M->pool_oldest = n->newer;
    if (n->newer)
        n->newer->older = n->older;
    else
        M->pool_newest = n->older;
    M->pool_bytes -= n->size;
    M->pool_count--;
    n->seq = 0;
    n->height = 1;
    n->left = n->right = n->older = n->newer = NULL;
}

/* A block of @size from the pool, unlinked; NULL when it holds none. */
static acli_mem_node *pool_take(acli_mem_registry *M, size_t size)
{
    acli_mem_node *n = M->pool_on ? pool_find_oldest(M->pool_root, size) : NULL;

    if (n)
        pool_unlink(M, n);
    return n;
}

/* Keep the freed DVPP block @n (off the block tree) in the pool when it
 * fits under the cap. Returns what to release (no lock held): a chain
 * through ->newer of @n itself (no pool, or larger than the whole cap) or
 * of the least recently freed blocks now beyond the cap. */
static acli_mem_node *pool_put(acli_mem_registry *M, acli_mem_node *n)
{
    acli_mem_node *chain = NULL;

    if (!M->pool_on || n->size > M->pool_cap)
        return n;
    n->seq = ++M->pool_seq;
    n->height = 1;
    n->left = n->right = n->newer = NULL;
    M->pool_root = tree_insert(M->pool_root, n);
    n->older = M->pool_newest;
    if (M->pool_newest)
        M->pool_newest->newer = n;
    else
        M->pool_oldest = n;
    M->pool_newest = n;
    M->pool_bytes += n->size;
    M->pool_count++;
    /* @n alone fits, so it is never the one released. */
    while (M->pool_bytes > M->pool_cap) {
        acli_mem_node *old = M->pool_oldest;

        pool_unlink(M, old);
        old->newer = chain;
        chain = old;
    }
    return chain;
}

/* Give blocks and their nodes back to the heap (no lock held). */
static void release_chain(acli_mem_node *chain)
{
    dvpp_allocator a = dvpp_current_allocator();

    while (chain) {
        acli_mem_node *next = chain->newer;

        a.free(a.ctx, (void *)chain->start, chain->size);
        free(chain);
        chain = next;
    }
}

void acli_mem_pool_start(size_t cap)
{
    acli_mem_registry *M = &acli_proc()->mem;

    pthread_mutex_lock(&M->mu);
    M->pool_cap = cap;
    M->pool_on = cap > 0;
    pthread_mutex_unlock(&M->mu);
}

void acli_mem_pool_stop(void)
{
    acli_mem_registry *M = &acli_proc()->mem;
    acli_mem_node *chain;

    pthread_mutex_lock(&M->mu);
    /* The free-order list already chains every pooled node through newer. */
    chain = M->pool_oldest;
    M->pool_on = false;
    M->pool_root = M->pool_oldest = M->pool_newest = NULL;
    M->pool_bytes = M->pool_count = 0;
    pthread_mutex_unlock(&M->mu);
    release_chain(chain);
}

void acli_mem_pool_stat(size_t *blocks, size_t *bytes)
{
    acli_mem_registry *M = &acli_proc()->mem;

    pthread_mutex_lock(&M->mu);
    if (blocks)
        *blocks = M->pool_count;
    if (bytes)
        *bytes = M->pool_bytes;
    pthread_mutex_unlock(&M->mu);
}

/* --- the bridge ------------------------------------------------------------------------ */

static const char *kind_name(acli_mem_kind k)
{
    switch (k) {
    case ACLI_MEM_DEVICE:
        return "aclrtMalloc";
    case ACLI_MEM_HOST:
        return "aclrtMallocHost";
    case ACLI_MEM_DVPP:
        return "acldvppMalloc";
    }
    return "unknown";
}

/* The call a refused free reports: the program called it, not the allocator. */
static const char *free_name(acli_mem_kind k)
{
    switch (k) {
    case ACLI_MEM_DEVICE:
        return "aclrtFree";
    case ACLI_MEM_HOST:
        return "aclrtFreeHost";
    case ACLI_MEM_DVPP:
        return "acldvppFree";
    }
    return "unknown";
}

aclError acli_mem_alloc(void **p, size_t size, acli_mem_kind kind)
{
    acli_mem_registry *M = &acli_proc()->mem;
    dvpp_allocator a = dvpp_current_allocator();
    acli_mem_node *n;
    size_t bytes = size;
    void *b;

    if (!p)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the pointer to fill is NULL",
                         kind_name(kind));
    *p = NULL;
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: size 0", kind_name(kind));
    if (kind != ACLI_MEM_DEVICE && kind != ACLI_MEM_HOST && kind != ACLI_MEM_DVPP)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "memory kind %d unknown", (int)kind);
    if (size > ACLI_MEM_MAX_BLOCK)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: %zu bytes is more than a device has (%zu)",
                         kind_name(kind), size, ACLI_MEM_MAX_BLOCK);
    if (kind == ACLI_MEM_DVPP) {
        /* DVPP's pool hands out ALIGN_UP(size, 32) + 32 bytes. */
        bytes = (size + 63) / 32 * 32;
    }
    n = NULL;
    if (kind == ACLI_MEM_DVPP) {
        pthread_mutex_lock(&M->mu);
        n = pool_take(M, bytes);
        pthread_mutex_unlock(&M->mu);
    }
    if (n) {
        /* Mapped already: zeroing it again costs no page fault. */
        b = (void *)n->start;
    } else {
        n = malloc(sizeof(*n));
        if (!n)
            return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory for the block record",
                             kind_name(kind));
        b = a.alloc(a.ctx, bytes, ACLI_MEM_ALIGN);
        if (!b) {
            free(n);
            return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: cannot allocate %zu bytes",
                             kind_name(kind), bytes);
        }
        *n = (acli_mem_node){.start = (uintptr_t)b, .size = bytes, .kind = kind, .height = 1};
    }
    /* First touch here rather than in a codec's inner loop. */
    memset(b, 0, bytes);
    pthread_mutex_lock(&M->mu);
    M->root = tree_insert(M->root, n);
    M->count++;
    pthread_mutex_unlock(&M->mu);
    *p = b;
    return ACL_SUCCESS;
}

aclError acli_mem_free(void *p, acli_mem_kind kind)
{
    acli_mem_registry *M = &acli_proc()->mem;
    const acli_mem_node key = {.start = (uintptr_t)p};
    const acli_mem_node *found;
    acli_mem_node *n = NULL, *release = NULL;
    acli_mem_kind found_kind = 0;

    if (!p)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: free of NULL", free_name(kind));
    pthread_mutex_lock(&M->mu);
    found = tree_find_start(M->root, (uintptr_t)p);
    if (found)
        found_kind = found->kind;
    if (found && found->kind == kind) {
        M->root = tree_remove(M->root, &key, &n);
        M->count--;
        release = kind == ACLI_MEM_DVPP ? pool_put(M, n) : n;
    }
    pthread_mutex_unlock(&M->mu);
    if (n) {
        /* A pooled @n may be another thread's already: only @release is ours. */
        release_chain(release);
        return ACL_SUCCESS;
    }
    if (found)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %p was allocated by %s; free it there",
                         free_name(kind), p, kind_name(found_kind));
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %p is not the start of a live block",
                     free_name(kind), p);
}

size_t acli_mem_avail(const void *p)
{
    acli_mem_registry *M = &acli_proc()->mem;
    const acli_mem_node *n;
    size_t left = 0;

    if (!p)
        return 0;
    pthread_mutex_lock(&M->mu);
    n = tree_find_holding(M->root, (uintptr_t)p);
    if (n)
        left = n->size - ((uintptr_t)p - n->start);
    pthread_mutex_unlock(&M->mu);
    return left;
}

/* --- aclrtMalloc and friends ------------------------------------------------------------- */

/* Allocation needs a device, as on the chip: without a current context the
 * call fails as there (a report thread that forgot aclrtSetCurrentContext). */
static aclError need_context(const char *fn)
{
    acli_process *P = acli_proc();
    bool ok;

    if (!atomic_load(&P->initialized))
        return acli_fail(ACL_ERROR_UNINITIALIZE, "%s: aclInit has not been called", fn);
    pthread_mutex_lock(&P->mu);
    ok = acli_ctx_current_locked() != NULL;
    pthread_mutex_unlock(&P->mu);
    if (!ok)
        return acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                         "%s: the thread has no current context (aclrtSetDevice or "
                         "aclrtSetCurrentContext first)", fn);
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    aclError rc;

    /* Every policy (and OR'd band-width flag) means the same here. */
    (void)policy;
    if (!devPtr)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
    *devPtr = NULL;
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size 0");
    rc = need_context("aclrtMalloc");
    return rc ? rc : acli_mem_alloc(devPtr, size, ACLI_MEM_DEVICE);
}

aclError aclrtFree(void *devPtr)
{
    return acli_mem_free(devPtr, ACLI_MEM_DEVICE);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    aclError rc;

    if (!hostPtr)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is NULL");
    *hostPtr = NULL;
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size 0");
    rc = need_context("aclrtMallocHost");
    return rc ? rc : acli_mem_alloc(hostPtr, size, ACLI_MEM_HOST);
}

aclError aclrtFreeHost(void *hostPtr)
{
    return acli_mem_free(hostPtr, ACLI_MEM_HOST);
}

/* --- copies and fills ------------------------------------------------------------------------ */

/* The checks every copy makes before a byte moves. A pointer inside a
 * registered block must have @count bytes left in it: a copy past a
 * block's end is refused rather than done into the heap. */
static aclError copy_check(const char *fn, void *dst, size_t destMax, const void *src,
                           size_t count, aclrtMemcpyKind kind)
{
    size_t left;

    if (!dst || !src)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", fn, dst ? "src" : "dst");
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_DEFAULT)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: kind %d is not an aclrtMemcpyKind", fn,
                         (int)kind);
    if (count > destMax)
        return acli_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu > destMax %zu", fn, count,
                         destMax);
    left = acli_mem_avail(dst);
    if (left && count > left)
        return acli_fail(ACL_ERROR_RT_PARAM_INVALID,
                         "%s: count %zu > the %zu bytes left in the destination block", fn,
                         count, left);
    left = acli_mem_avail(src);
    if (left && count > left)
        return acli_fail(ACL_ERROR_RT_PARAM_INVALID,
                         "%s: count %zu > the %zu bytes left in the source block", fn, count,
                         left);
    return ACL_SUCCESS;
}

static aclError fill_check(const char *fn, void *dst, size_t maxCount, size_t count)
{
    size_t left;

    if (!dst)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", fn);
    if (count > maxCount)
        return acli_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu > maxCount %zu", fn, count,
                         maxCount);
    left = acli_mem_avail(dst);
    if (left && count > left)
        return acli_fail(ACL_ERROR_RT_PARAM_INVALID,
                         "%s: count %zu > the %zu bytes left in the block", fn, count, left);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind)
{
    aclError rc = copy_check("aclrtMemcpy", dst, destMax, src, count, kind);

    if (rc)
        return rc;
    /* Every kind, ACL_MEMCPY_DEFAULT included, is a copy within this
     * process; memmove so an overlapping copy is defined too. */
    if (count)
        memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    aclError rc = fill_check("aclrtMemset", devPtr, maxCount, count);

    if (rc)
        return rc;
    if (count)
        memset(devPtr, (int)(unsigned char)value, count);
    return ACL_SUCCESS;
}

/* An async copy or fill: the task does it when its turn on the stream
 * comes (the bytes are the program's until the sync, as on the chip). */
typedef struct mem_task {
    void *dst;
    const void *src; /* NULL: a fill */
    size_t count;
    int value;
} mem_task;

static aclError mem_task_run(void *ctx, acli_task *t)
{
    mem_task *m = ctx;

    (void)t;
    if (m->count) {
        if (m->src)
            memmove(m->dst, m->src, m->count);
        else
            memset(m->dst, m->value, m->count);
    }
    return ACL_SUCCESS;
}

static void mem_task_fini(void *ctx, aclError status)
{
    (void)status;
    free(ctx);
}

static aclError mem_task_submit(const char *fn, aclrtStream stream, const mem_task *m)
{
    acli_stream *s;
    mem_task *copy;
    aclError rc = acli_stream_get(stream, &s);

    if (rc)
        return rc;
    copy = malloc(sizeof(*copy));
    if (!copy)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory for the task", fn);
    *copy = *m;
    rc = acli_submit(s, ACLI_RT_ENGINE, mem_task_run, mem_task_fini, copy);
    if (rc)
        free(copy);
    return rc;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream)
{
    aclError rc = copy_check("aclrtMemcpyAsync", dst, destMax, src, count, kind);

    if (rc)
        return rc;
    return mem_task_submit("aclrtMemcpyAsync", stream, &(mem_task){dst, src, count, 0});
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream)
{
    aclError rc = fill_check("aclrtMemsetAsync", devPtr, maxCount, count);

    if (rc)
        return rc;
    return mem_task_submit("aclrtMemsetAsync", stream,
                           &(mem_task){devPtr, NULL, count, (int)(unsigned char)value});
}
