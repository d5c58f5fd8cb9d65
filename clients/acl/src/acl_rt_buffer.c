/* acl_rt_buffer.c: aclDataBuffer, a registered (data, size) pair. It never
 * owns the bytes it describes. */
#include <stdlib.h>

#include "acl_rt_int.h"

struct aclDataBuffer {
    void *data;
    size_t size;
};

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *b = malloc(sizeof(*b));

    /* (NULL, 0) is legal: an output buffer to be filled in later. */
    if (!b) {
        acli_fail(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer: no memory");
        return NULL;
    }
    b->data = data;
    b->size = size;
    if (!acli_handle_add(b, ACLI_DATA_BUFFER)) {
        free(b);
        acli_fail(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer: no memory to register it");
        return NULL;
    }
    return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    if (!acli_handle_remove(dataBuffer, ACLI_DATA_BUFFER))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclDestroyDataBuffer: %p is not a live data buffer",
                         (const void *)dataBuffer);
    free((aclDataBuffer *)dataBuffer);
    return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    if (!acli_handle_ok(dataBuffer, ACLI_DATA_BUFFER)) {
        acli_fail(ACL_ERROR_INVALID_PARAM, "aclGetDataBufferAddr: %p is not a live data buffer",
                  (const void *)dataBuffer);
        return NULL;
    }
    return dataBuffer->data;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    if (!acli_handle_ok(dataBuffer, ACLI_DATA_BUFFER)) {
        acli_fail(ACL_ERROR_INVALID_PARAM,
                  "aclGetDataBufferSizeV2: %p is not a live data buffer",
                  (const void *)dataBuffer);
        return 0;
    }
    return dataBuffer->size;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    size_t n = aclGetDataBufferSizeV2(dataBuffer);

    /* The deprecated 32-bit getter: a larger size saturates rather than
     * wrapping to a small, plausible-looking number. */
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}
