/* acl_dvpp_mem.c: acldvppMalloc / acldvppFree over the runtime's registered
 * memory (ACLI_MEM_DVPP: (size + 63) / 32 * 32 bytes, 128-byte aligned,
 * zeroed). */
#include "acl_dvpp_int.h"

aclError acldvppMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppMalloc: devPtr is NULL");
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppMalloc: size is 0");
    return acli_mem_alloc(devPtr, size, ACLI_MEM_DVPP);
}

aclError acldvppFree(void *devPtr)
{
    if (!devPtr)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppFree: devPtr is NULL");
    return acli_mem_free(devPtr, ACLI_MEM_DVPP);
}
