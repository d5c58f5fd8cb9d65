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

/* What aclrtGetMemInfo reports on. "Device" memory is the process's own
 * memory here, so every kind reports the same: the machine's RAM. */
typedef enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
    ACL_DDR_MEM_P2P_HUGE = 6,
    ACL_DDR_MEM_P2P_NORMAL = 7,
    ACL_HBM_MEM_P2P_HUGE = 8,
    ACL_HBM_MEM_P2P_NORMAL = 9
} aclrtMemAttr;

/* aclrtQueryEvent's answer (deprecated with it). */
typedef enum aclrtEventStatus {
    ACL_EVENT_STATUS_COMPLETE = 0,
    ACL_EVENT_STATUS_NOT_READY = 1,
    ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

/* aclrtQueryEventStatus's answer. */
typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* aclrtCreateEventWithFlag's flags (OR-able). Only an event with
 * ACL_EVENT_TIME_LINE (or one from aclrtCreateEvent) keeps the time its
 * records complete, which aclrtEventElapsedTime needs. */
#define ACL_EVENT_SYNC 0x00000001u
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002u
#define ACL_EVENT_TIME_LINE 0x00000008u

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
/* @flag: 0 or an OR of ACL_EVENT_* (any other bit is
 * ACL_ERROR_INVALID_PARAM). */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
/* COMPLETE when no record of the event is pending (never recorded
 * included), else NOT_READY; never waits. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus *status);
ACL_DEPRECATED_MESSAGE("aclrtQueryEvent is deprecated, use aclrtQueryEventStatus instead")
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
/* Milliseconds between the completion of @startEvent's last record and
 * @endEvent's (negative when the end completed first). Each must have a
 * completed record (never recorded: ACL_ERROR_INVALID_PARAM; still
 * pending: ACL_ERROR_RT_EVENT_NOT_COMPLETE) and keep times. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent);

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
/* The machine's free and total RAM in bytes, whatever @attr (a valid
 * aclrtMemAttr): "device" memory is this process's memory. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeSize,
                                             size_t *totalSize);

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
