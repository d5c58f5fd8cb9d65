#include "dvpp_npy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_mem.h"

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

/* Find "'key':" in the header dict and return what follows it. */
static const char *dict_value(const char *dict, const char *key)
{
    char pat[32];
    const char *p;

    snprintf(pat, sizeof(pat), "'%s':", key);
    p = strstr(dict, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    return p;
}

static dvpp_status parse_shape(const char *p, int64_t *shape, int max_dims,
                               int *ndim, dvpp_err *err)
{
    int n = 0;

    if (*p++ != '(')
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy shape is not a tuple");
    for (;;) {
        char *end;
        long long v;
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        if (!isdigit((unsigned char)*p))
            return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy shape is malformed");
        v = strtoll(p, &end, 10);
        if (n == max_dims)
            return dvpp_err_set(err, DVPP_EUNSUPPORTED, "npy",
                                ".npy has more than %d dimensions", max_dims);
        shape[n++] = v;
        p = end;
    }
    *ndim = n;
    return DVPP_OK;
}

dvpp_status dvpp_npy_parse(const uint8_t *data, size_t len, char *descr,
                           size_t descr_len, int64_t *shape, int max_dims,
                           int *ndim, size_t *data_offset, dvpp_err *err)
{
    char dict[4096];
    size_t hlen, start, elems = 1, esize;
    const char *v, *q;
    dvpp_status st;

    if (len < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy", "not a .npy file");
    if (data[6] == 1) {
        hlen = data[8] | (size_t)data[9] << 8;
        start = 10;
    } else if ((data[6] == 2 || data[6] == 3) && len >= 12) {
        hlen = data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
               (size_t)data[11] << 24;
        start = 12;
    } else {
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "npy",
                            ".npy format version %u is not supported", data[6]);
    }
    if (hlen >= sizeof(dict) || hlen > len - start)
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy header is truncated");
    memcpy(dict, data + start, hlen);
    dict[hlen] = '\0';
    v = dict_value(dict, "descr");
    if (!v || *v != '\'' || !(q = strchr(v + 1, '\'')) ||
        (size_t)(q - v - 1) >= descr_len)
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy header has no descr");
    memcpy(descr, v + 1, (size_t)(q - v - 1));
    descr[q - v - 1] = '\0';
    v = dict_value(dict, "fortran_order");
    if (!v || strncmp(v, "False", 5) != 0)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "npy",
                            ".npy must be C-ordered (fortran_order False)");
    v = dict_value(dict, "shape");
    if (!v)
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy header has no shape");
    st = parse_shape(v, shape, max_dims, ndim, err);
    if (st != DVPP_OK)
        return st;
    /* descr is byte order, kind, item size: "|u1", "<f4". */
    esize = strlen(descr) >= 3 && isalpha((unsigned char)descr[1])
                ? (size_t)atoi(descr + 2) : 0;
    for (int i = 0; i < *ndim; i++)
        if (shape[i] < 0 || !dvpp_size_mul(elems, (size_t)shape[i], &elems))
            return dvpp_err_set(err, DVPP_ECORRUPT, "npy", ".npy shape overflows");
    if (!esize || !dvpp_size_mul(elems, esize, &elems) || elems > len - start - hlen)
        return dvpp_err_set(err, DVPP_ECORRUPT, "npy",
                            ".npy data is shorter than its shape says");
    *data_offset = start + hlen;
    return DVPP_OK;
}

int dvpp_npy_image_shape(const dvpp_image *img, const dvpp_planes *pl,
                         int64_t shape[3])
{
    if (dvpp_pixfmt_get(img->format)->planes > 1) {
        shape[0] = (int64_t)(pl->total / img->width_stride);
        shape[1] = img->width_stride;
        return 2;
    }
    shape[0] = img->height;
    shape[1] = img->width;
    shape[2] = pl->p[0].row_bytes / img->width;
    return shape[2] == 1 ? 2 : 3;
}
