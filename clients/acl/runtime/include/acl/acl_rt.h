/* acl_rt.h: the AscendCL runtime (this project's own header, written from
 * the public API facts; docs/acl.md).
 *
 * Devices, contexts, streams, events, memory, host callbacks. Here a
 * device is one libdvpp device model, a stream an in-order task queue on
 * it, and "device" memory ordinary memory of the calling process (every
 * aclrtMemcpyKind is a plain copy). Implemented by libascendcl.so; every
 * function returns an aclError and sets the thread's message
 * (aclGetRecentErrMsg) when it fails.
 */
#ifndef DVPP_ACL_RT_H
#define DVPP_ACL_RT_H

#include <stdint.h>
#include <stddef.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtRunMode {
    ACL_DEVICE = 0, /* the program runs on the accelerator's own CPU */
    ACL_HOST = 1    /* the program runs on a PCIe host */
} aclrtRunMode;

typedef enum aclrtCallbackBlockType {
    ACL_CALLBACK_NO_BLOCK = 0,
    ACL_CALLBACK_BLOCK = 1 /* later tasks of the stream wait for the callback */
} aclrtCallbackBlockType;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4 /* the runtime infers the direction */
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    /* band-width flags, OR-able with the values above */
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
} aclrtMemMallocPolicy;

/* A host callback: runs inside the subscribed thread's aclrtProcessReport. */
typedef void (*aclrtCallback)(void *userData);

/* --- run mode ------------------------------------------------------------------ */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);

/* --- devices --------------------------------------------------------------------
 * aclrtSetDevice binds the device to the calling thread, creating (on the
 * first reference) its default context and stream and making that context
 * current; references are counted and aclrtResetDevice drops one. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/* --- contexts --------------------------------------------------------------------
 * A created context becomes current on the calling thread; the current
 * context is per thread. aclrtDestroyContext takes explicit contexts only. */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

/* --- streams ---------------------------------------------------------------------
 * aclrtSynchronizeStream waits for every queued task and returns the first
 * task error since the last sync. The timeout is in ms, -1 waits forever. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);

/* --- events ------------------------------------------------------------------------ */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);

/* --- memory ----------------------------------------------------------------------------
 * Size 0 and NULL pointers are ACL_ERROR_INVALID_PARAM. Every policy value
 * is accepted (an unknown one means the default). The caller frees what it
 * allocated with the matching free. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/* Synchronous; count > destMax is a runtime error (ACL_ERROR_RT_*). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream);
/* Fills @count bytes with the byte @value. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream);

/* --- host callbacks -----------------------------------------------------------------------
 * @threadId is a pthread_t as uint64_t. aclrtProcessReport runs the calling
 * thread's pending callbacks; @timeout in ms, -1 forever (0 and < -1 are
 * ACL_ERROR_INVALID_PARAM). */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
