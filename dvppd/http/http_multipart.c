/* http_multipart: multipart/form-data split over the whole body. */
#include "http_multipart.h"

#include <string.h>
#include <strings.h>

/* RFC 2046 bchars (space only inside). */
static bool is_bchar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("'()+_,-./:=? ", c));
}

/* The value of parameter @key (case-insensitive) in a header value of
 * ';'-separated parameters, quoted or a token, into @out (cut to fit).
 * False when absent. @v is @n bytes, not NUL-terminated. */
static bool header_param(const char *v, size_t n, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key), i = 0;

    while (i < n) {
        size_t o = 0;
        bool quoted;
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ';'))
            i++;
        if (n - i > klen && !strncasecmp(v + i, key, klen) && v[i + klen] == '=') {
            i += klen + 1;
            quoted = i < n && v[i] == '"';
            i += quoted;
            while (i < n && (quoted ? v[i] != '"' : v[i] != ';' && v[i] != ' ' && v[i] != '\t')) {
                if (quoted && v[i] == '\\' && i + 1 < n)
                    i++;
                if (o + 1 < cap)
                    out[o++] = v[i];
                i++;
            }
            out[o] = '\0';
            return true;
        }
        /* skip this parameter (a quoted value may hold ';') */
        quoted = false;
        while (i < n && (quoted || v[i] != ';')) {
            if (v[i] == '"')
                quoted = !quoted;
            else if (quoted && v[i] == '\\')
                i++;
            i++;
        }
    }
    return false;
}

bool http_multipart_boundary(const char *content_type, char *out, size_t cap)
{
    const char *p = content_type;
    size_t n = 0;

    if (!p || cap <= HTTP_BOUNDARY_MAX)
        return false;
    /* the parameters start after the media type */
    p = strchr(p, ';');
    if (!p || !header_param(p, strlen(p), "boundary", out, cap))
        return false;
    n = strlen(out);
    if (n == 0 || n > HTTP_BOUNDARY_MAX || out[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_bchar(out[i]))
            return false;
    return true;
}

/* The first @pat (@m bytes) in @s[from..len), or SIZE_MAX. Candidates
 * start at the pattern's first byte, which occurs nowhere else in it (a
 * CR before "--boundary"), so the scan is linear. */
static size_t find(const uint8_t *s, size_t len, size_t from, const uint8_t *pat, size_t m)
{
    while (from < len && len - from >= m) {
        const uint8_t *c = memchr(s + from, pat[0], len - from - m + 1);
        if (!c)
            return SIZE_MAX;
        if (!memcmp(c, pat, m))
            return (size_t)(c - s);
        from = (size_t)(c - s) + 1;
    }
    return SIZE_MAX;
}

static dvpp_status malformed(dvpp_err *err, const char *why)
{
    return dvpp_err_set(err, DVPP_EINVAL, "body", "malformed multipart/form-data: %s", why);
}

/* The part's headers from @pos: where its data starts (*data) and its name.
 * @pos is just after the delimiter line. */
static dvpp_status part_headers(const uint8_t *b, size_t len, size_t pos, size_t *data,
                                char *name, size_t cap, dvpp_err *err)
{
    size_t start = pos;

    name[0] = '\0';
    for (;;) {
        const uint8_t *nl = pos < len ? memchr(b + pos, '\n', len - pos) : NULL;
        size_t end, line;
        if (!nl || (size_t)(nl - b) - start > HTTP_MULTIPART_HEADER_MAX)
            return nl || len - start > HTTP_MULTIPART_HEADER_MAX
                       ? dvpp_err_set(err, DVPP_EINVAL, "body", "malformed multipart/form-"
                                      "data: a part's headers pass %d bytes",
                                      HTTP_MULTIPART_HEADER_MAX)
                       : malformed(err, "a part's headers do not end");
        end = (size_t)(nl - b);
        line = end - pos - (end > pos && b[end - 1] == '\r');
        if (line == 0) {
            *data = end + 1;
            return DVPP_OK;
        }
        if (line > 20 && !strncasecmp((const char *)b + pos, "Content-Disposition:", 20))
            header_param((const char *)b + pos + 20, line - 20, "name", name, cap);
        pos = end + 1;
    }
}

dvpp_status http_multipart_parse(const uint8_t *body, size_t len, const char *boundary,
                                  http_mpart *parts, unsigned max, unsigned *n,
                                  dvpp_err *err)
{
    uint8_t delim[HTTP_BOUNDARY_MAX + 4] = "\r\n--";
    size_t blen = strlen(boundary), dlen = blen + 4, pos;
    unsigned count = 0;

    *n = 0;
    if (blen == 0 || blen > HTTP_BOUNDARY_MAX)
        return malformed(err, "no boundary");
    memcpy(delim + 4, boundary, blen);
    /* the first delimiter: at the start (no CRLF before it) or after a preamble */
    if (len >= dlen - 2 && !memcmp(body, delim + 2, dlen - 2))
        pos = dlen - 2;
    else if ((pos = find(body, len, 0, delim, dlen)) != SIZE_MAX)
        pos += dlen;
    else
        return malformed(err, "no boundary line");
    for (;;) {
        size_t data = 0, next;
        char name[sizeof(parts->name)];
        dvpp_status st;
        if (len - pos >= 2 && body[pos] == '-' && body[pos + 1] == '-') {
            *n = count;
            return DVPP_OK; /* the close delimiter; the epilogue is ignored */
        }
        while (pos < len && (body[pos] == ' ' || body[pos] == '\t'))
            pos++;
        if (len - pos >= 2 && body[pos] == '\r' && body[pos + 1] == '\n')
            pos += 2;
        else if (pos < len && body[pos] == '\n')
            pos += 1;
        else
            return malformed(err, pos >= len ? "no closing boundary" : "a boundary line "
                             "goes on after the boundary");
        st = part_headers(body, len, pos, &data, name, sizeof(name), err);
        if (st != DVPP_OK)
            return st;
        /* the part's data ends where the next delimiter (its CRLF) starts */
        next = find(body, len, data, delim, dlen);
        if (next == SIZE_MAX)
            return malformed(err, "no closing boundary");
        if (count == max) {
            *n = max + 1;
            return dvpp_err_set(err, DVPP_ELIMIT, "parts", "more than %u parts", max);
        }
        if (parts) {
            memcpy(parts[count].name, name, sizeof(name));
            parts[count].data = body + data;
            parts[count].len = next - data;
        }
        count++;
        pos = next + dlen;
    }
}
