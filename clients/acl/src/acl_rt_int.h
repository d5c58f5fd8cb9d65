/* acl_rt_int.h: what the modules of libascendcl's runtime (acl_rt_*.c)
 * share with each other; nothing here is seen by libacl_dvpp (that is
 * acl_int.h).
 *
 * The process state. AscendCL's API is process-wide by definition (aclInit,
 * devices, contexts, the handles a program holds), so the runtime keeps one
 * mutable global: the static `acli_process` of acl_rt_init.c, reached with
 * acli_proc(). It is made of one part per module, each guarded by its own
 * mutex:
 *
 *   mu              settings, the initialised flag, the device slots, every
 *                   device's reference counts and context list, every
 *                   context's stream list                    (acl_rt_device.c)
 *   handles.mu      the handle hash set                      (acl_rt_handle.c)
 *   mem.mu          the memory block tree                    (acl_rt_mem.c)
 *   reports.mu      subscriptions and per-thread queues      (acl_rt_report.c)
 *   ev_mu           event records                            (acl_rt_stream.c)
 *
 * and one mutex per live device (acli_device.mu: its streams' task
 * counters and first errors, back-pressure). Lock order: mu, then a
 * device's mu, then handles.mu or mem.mu; reports.mu and ev_mu are taken
 * alone. No lock is held while a task runs, a fini runs, a callback runs or
 * libdvpp's device is freed.
 *
 * Two thread-locals belong to the API's per-thread semantics: the recent
 * error message (acl_rt_err.c) and the current context (acl_rt_device.c).
 */
#ifndef ACL_RT_INT_H
#define ACL_RT_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl_int.h"
#include "dvpp_device.h"

/* Devices a configuration may ask for (DVPP_ACL_DEVICES, "dvpp.devices"). */
#define ACLI_MAX_DEVICES 64u
/* The largest "dvpp.queue_depth": libdvpp makes every job record up front. */
#define ACLI_MAX_QUEUE_DEPTH 65536u
/* The DVPP pool's cap (DVPP_ACL_POOL_BYTES, "dvpp.pool_bytes"): the default,
 * and the most a setting may ask for (as much as any device holds). */
#define ACLI_DEFAULT_POOL_BYTES ((size_t)256 << 20)
#define ACLI_MAX_POOL_BYTES ((size_t)64 << 30)
/* Longest recent-error message kept, with its NUL. */
#define ACLI_MSG_LEN 512

/* The runtime's own tasks (aclrtMemcpyAsync, aclrtMemsetAsync, event
 * records, host callbacks) run on the engine no V1 DVPP call uses. A BLOCK
 * callback holds its worker until the program's report thread ran it, so
 * the engine gets a few channels of its own whatever the DVPP counts are. */
#define ACLI_RT_ENGINE DVPP_ENGINE_AIPP
#define ACLI_RT_ENGINE_CHANNELS 4u

/* Handle kinds of the runtime's own objects (after acli_kind's values):
 * checked through the same registry as the DVPP descriptors. */
enum {
    ACLI_RT_CONTEXT = 64,
    ACLI_RT_STREAM,         /* aclrtCreateStream */
    ACLI_RT_PRIVATE_STREAM, /* acli_stream_create: never accepted by aclrt* */
    ACLI_RT_EVENT,
};

/* Log levels of ASCEND_GLOBAL_LOG_LEVEL. */
enum { ACLI_LOG_DEBUG = 0, ACLI_LOG_INFO = 1, ACLI_LOG_WARN = 2, ACLI_LOG_ERROR = 3 };

/* What aclInit chose (the JSON's "dvpp" section over the environment). */
typedef struct acli_settings {
    int profile;                          /* DVPP_PROFILE_ASCEND310(P) */
    unsigned devices;                     /* 1..ACLI_MAX_DEVICES */
    unsigned channels[DVPP_ENGINE_COUNT]; /* per engine, >= 1 */
    unsigned queue_depth;                 /* per engine, >= 1 */
    size_t pool_bytes;                    /* the DVPP pool's cap; 0: none */
} acli_settings;

typedef struct acli_device acli_device;
typedef struct acli_ctx acli_ctx;

/* One ACL device while it is open: one libdvpp device. Made by the first
 * aclrtSetDevice / aclrtCreateContext, torn down when its last reference
 * goes (then its pending tasks are canceled). */
struct acli_device {
    int32_t id;              /* the slot */
    dvpp_device *dd;         /* owned */
    pthread_mutex_t mu;      /* the fields marked (dev) and every stream's
                                counters on this device */
    pthread_cond_t cv;       /* a task completed; a stream is closing */
    unsigned depth;          /* tasks an engine takes before submits wait */
    unsigned queued[DVPP_ENGINE_COUNT]; /* (dev) submitted, not completed */
    acli_stream *streams;    /* (dev) every stream of the device */
    unsigned set_refs;       /* (mu) aclrtSetDevice references */
    unsigned explicit_ctxs;  /* (mu) live aclrtCreateContext contexts */
    acli_ctx *def_ctx;       /* (mu) the default context, while set_refs */
    acli_ctx *ctxs;          /* (mu) every context of the device */
};

struct acli_ctx {
    acli_device *dev;        /* borrowed */
    uint64_t serial;         /* tells a thread's stale pointer from a new
                                context at the same address */
    bool is_default;         /* made by aclrtSetDevice */
    acli_stream *def_stream; /* owned; also on @streams */
    acli_stream *streams;    /* (mu) owned: default, program's, private */
    acli_ctx *next;          /* (mu) the device's list */
};

struct acli_stream {
    acli_device *dev;        /* NULL once the device went (private only) */
    acli_ctx *ctx;           /* NULL likewise */
    dvpp_stream *ds;         /* owned (freed with the libdvpp device when
                                that goes first) */
    bool is_private;         /* acli_stream_create */
    bool is_default;         /* a context's default stream */
    atomic_bool canceled;    /* the device is being torn down */
    bool closing;            /* (dev) being destroyed: no new tasks */
    uint64_t submitted;      /* (dev) */
    uint64_t completed;      /* (dev) */
    unsigned waiters;        /* (dev) threads in submit or sync on it */
    aclError first_code;     /* (dev) first task error since the last sync */
    char first_msg[ACLI_MSG_LEN]; /* (dev) its message */
    void *state;             /* acli_task_state: tasks of the stream only */
    void (*state_free)(void *state);
    acli_stream *ctx_next;   /* (mu) the context's list */
    acli_stream *dev_prev;   /* (dev) the device's list */
    acli_stream *dev_next;
};

/* --- the handle registry (acl_rt_handle.c) --------------------------------- */
typedef struct acli_handle_slot {
    const void *p; /* NULL: empty */
    int kind;
} acli_handle_slot;

typedef struct acli_handles {
    pthread_mutex_t mu;
    acli_handle_slot *slots; /* open addressing, linear probing */
    size_t cap;              /* power of two, or 0 */
    size_t count;
} acli_handles;

/* --- the memory registry (acl_rt_mem.c) -------------------------------------- */
typedef struct acli_mem_node acli_mem_node;

typedef struct acli_mem_registry {
    pthread_mutex_t mu;
    acli_mem_node *root; /* AVL tree keyed by block start */
    size_t count;
    /* The DVPP pool: freed acldvppMalloc blocks kept for reuse while
     * pool_on (aclInit to aclFinalize), off the live tree. */
    bool pool_on;
    size_t pool_cap;            /* bytes it may hold */
    size_t pool_bytes;          /* bytes it holds */
    size_t pool_count;          /* blocks it holds */
    uint64_t pool_seq;          /* the last pooled free's number */
    acli_mem_node *pool_root;   /* AVL tree keyed by (size, seq) */
    acli_mem_node *pool_oldest; /* free order, least recent first */
    acli_mem_node *pool_newest;
} acli_mem_registry;

/* --- reports (acl_rt_report.c) ------------------------------------------------ */
typedef struct acli_report_thread acli_report_thread;
typedef struct acli_report_sub acli_report_sub;

typedef struct acli_reports {
    pthread_mutex_t mu;
    pthread_cond_t sub_cv;   /* a subscription was made */
    pthread_cond_t done_cv;  /* a BLOCK callback ran, or its wait is over */
    acli_report_thread *threads;
    acli_report_sub *subs;
} acli_reports;

/* --- the process ------------------------------------------------------------------ */
typedef struct acli_process {
    pthread_mutex_t mu;
    atomic_bool initialized;  /* between aclInit and aclFinalize */
    atomic_int profile;       /* settings.profile while initialised */
    acli_settings settings;   /* (mu) */
    atomic_uint_fast64_t next_id;
    uint64_t next_serial;     /* (mu) context serials */
    acli_device *devices[ACLI_MAX_DEVICES]; /* (mu) open devices */
    acli_handles handles;
    acli_mem_registry mem;
    acli_reports reports;
    pthread_mutex_t ev_mu;    /* every event's counters */
    pthread_cond_t ev_cv;     /* an event record completed */
} acli_process;

/* The one process state (acl_rt_init.c); its condition variables are made
 * (on CLOCK_MONOTONIC) on the first call. */
acli_process *acli_proc(void);

/* --- init and settings (acl_rt_init.c) --- */

/* The settings from the environment alone (DVPP_ACL_*, defaults for what
 * is unset): ACL_ERROR_INVALID_PARAM naming the variable for a bad value. */
aclError acli_settings_from_env(acli_settings *s);

/* One log line at @level (ACLI_LOG_*), after ASCEND_GLOBAL_LOG_LEVEL and
 * ASCEND_SLOG_PRINT_TO_STDOUT: to stdout when that is 1, otherwise errors
 * only, to stderr. */
void acli_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As acli_log, the line's module tag (the "ACL" of "[ERROR] ACL(pid): ")
 * being @module: aclAppLog's lines are "APP". */
void acli_vlog(const char *module, int level, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* --- memory (acl_rt_mem.c) --- */

/* aclInit: pool freed DVPP blocks up to @cap bytes from now on (0: none). */
void acli_mem_pool_start(size_t cap);
/* aclFinalize: release every pooled block; frees go to the heap again. */
void acli_mem_pool_stop(void);

/* --- errors (acl_rt_err.c) --- */

/* As acli_fail, without the error log line: for outcomes a program polls
 * (aclrtProcessReport's timeout, a sync's timeout). */
aclError acli_fail_quiet(aclError code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clear the calling thread's message (a worker, before a task runs). */
void acli_msg_clear(void);
/* The calling thread's message, or NULL. */
const char *acli_msg_get(void);

/* --- devices and contexts (acl_rt_device.c) --- */

/* The calling thread's current context, NULL when it has none (or it was
 * destroyed). Under acli_proc()->mu. */
acli_ctx *acli_ctx_current_locked(void);
/* Tear down every open device (aclFinalize): their tasks are canceled. */
void acli_devices_reset_all(void);

/* --- streams (acl_rt_stream.c) --- */

/* A new stream on @ctx (under mu): listed on the context and the device;
 * registered as @kind unless it is the default stream. */
aclError acli_stream_make_locked(acli_ctx *ctx, bool is_default, bool is_private,
                                 acli_stream **out);
/* Wait for the stream's tasks and free it (a private stream: only its
 * work; the struct stays for acli_stream_destroy). Already off the
 * context's list and the handle registry; no lock held. */
void acli_stream_close(acli_stream *s);
/* Cancel every task of @dev's streams and wait for all of them (the fini
 * of each has run), for a teardown. No lock held. */
void acli_device_cancel_streams(acli_device *dev);
/* After the libdvpp device was freed: release @s's state, forget it
 * (private: orphaned, freed by acli_stream_destroy). */
void acli_stream_release_orphan(acli_stream *s);
/* Wait for every stream of @dev; the first error among them (kept on its
 * stream). */
aclError acli_device_sync(acli_device *dev);
/* Wait on @s with @timeout_ms (-1 forever). */
aclError acli_stream_wait(acli_stream *s, int32_t timeout_ms);

/* --- reports (acl_rt_report.c) --- */

/* The thread subscribed for @key; false when none. */
bool acli_report_key_thread(const void *key, uint64_t *thread_id);
/* Drop every subscription for @key (its stream is going). */
void acli_report_forget_key(const void *key);
/* Queue fn(arg) for @thread_id as acli_report_post does; @drop(arg) runs
 * instead of @fn when the post is thrown away unrun (aclFinalize). */
aclError acli_report_post_drop(uint64_t thread_id, void (*fn)(void *arg),
                               void (*drop)(void *arg), void *arg);
/* Wake every BLOCK callback task waiting for its callback (a teardown:
 * they look at their cancellation). */
void acli_report_wake_blocked(void);
/* Drop every subscription and pending post (aclFinalize). */
void acli_reports_reset(void);

/* --- time (acli_cond_init and acli_deadline_ms: acl_int.h) --- */
/* True when @ts (an acli_deadline_ms deadline) has passed. */
bool acli_deadline_passed(const struct timespec *ts);

#endif
