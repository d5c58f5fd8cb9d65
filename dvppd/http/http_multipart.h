/* http_multipart: multipart/form-data bodies (RFC 7578 over RFC 2046),
 * split once the whole body has arrived.
 *
 * The HTTP front end holds every body in memory before it runs a request,
 * so it parses a multipart body in one pass over the finished buffer: the
 * parts it finds depend only on the bytes, never on how TCP cut them into
 * segments (libmicrohttpd's streaming post processor reports a part's
 * first bytes at offset 0 after an empty first call at offset 0 when a
 * segment ends right after the part's headers, which looks like two
 * parts). The parts point into the body: nothing is copied.
 *
 * Grammar accepted: an optional preamble, then "--BOUNDARY" at the start
 * of the body or after CRLF; after each delimiter optional spaces/tabs
 * and CRLF, then the part's header lines (CRLF or LF each, at most
 * HTTP_MULTIPART_HEADER_MAX bytes together), an empty line, and the
 * part's bytes up to CRLF "--BOUNDARY"; "--" right after a delimiter
 * closes the body (the epilogue is ignored). A part's name is the name
 * parameter of its Content-Disposition header (quoted or a token, cut to
 * 63 bytes), "" without one.
 *
 * Ownership: the parts borrow the body. Thread-safety: pure functions.
 */
#ifndef HTTP_MULTIPART_H
#define HTTP_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"

/* RFC 2046: a boundary is 1 to 70 characters. */
#define HTTP_BOUNDARY_MAX 70
/* The header lines of one part, together. */
#define HTTP_MULTIPART_HEADER_MAX 8192

typedef struct http_mpart {
    char name[64];          /* Content-Disposition name, "" without one */
    const uint8_t *data;    /* into the body (non-NULL, may be empty) */
    size_t len;
} http_mpart;

/* The boundary parameter of a multipart Content-Type value ("multipart/
 * form-data; boundary=xyz" or boundary="x y z") into @out (NUL-terminated,
 * @cap > HTTP_BOUNDARY_MAX). False when there is none, it is empty,
 * longer than 70 characters or has characters RFC 2046 does not allow. */
bool http_multipart_boundary(const char *content_type, char *out, size_t cap);

/* Split @body (@len bytes) into its parts. With @parts NULL only count
 * them. More than @max parts: DVPP_ELIMIT (field "parts"), *n = @max + 1.
 * DVPP_EINVAL (field "body") for a body that is not multipart/form-data
 * with @boundary: no delimiter, a part without the empty line after its
 * headers, headers above HTTP_MULTIPART_HEADER_MAX, no close delimiter.
 * *n is the number of parts found (filled into @parts when not NULL). */
dvpp_status http_multipart_parse(const uint8_t *body, size_t len, const char *boundary,
                                  http_mpart *parts, unsigned max, unsigned *n,
                                  dvpp_err *err);

#endif
