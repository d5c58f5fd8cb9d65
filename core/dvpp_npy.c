#include "dvpp_npy.h"

#include <stdio.h>
#include <string.h>

size_t dvpp_npy_header(char *out, const char *descr, const int64_t *shape,
                       int ndim)
{
    char dict[DVPP_NPY_HEADER_MAX];
    size_t n, total;
    int len;

    if (ndim < 1 || ndim > 5)
        return 0;
    len = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, "
                   "'shape': (", descr);
    for (int i = 0; i < ndim && len > 0 && (size_t)len < sizeof(dict); i++)
        len += snprintf(dict + len, sizeof(dict) - (size_t)len, "%lld%s",
                        (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
    if (len <= 0 || (size_t)len + 4 >= sizeof(dict))
        return 0;
    len += snprintf(dict + len, sizeof(dict) - (size_t)len, "), }");
    n = (size_t)len;
    /* magic(6) + version(2) + header length(2) + dict + spaces + '\n'. */
    total = (10 + n + 1 + 63) / 64 * 64;
    if (total > DVPP_NPY_HEADER_MAX)
        return 0;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)((total - 10) & 0xff);
    out[9] = (char)((total - 10) >> 8);
    memcpy(out + 10, dict, n);
    memset(out + 10 + n, ' ', total - 10 - n - 1);
    out[total - 1] = '\n';
    return total;
}
