/* http_console_assets.h: the web console's files, embedded at build time.
 *
 * The table is generated (tools/embed.c, a Makefile rule over
 * the files of dvppd/console/) into $(BUILD)/gen/dvppd_console_assets.c and linked
 * into dvppd; http_console.c serves only the names listed here. Every
 * field points to static, read-only data: nothing to own or free, safe to
 * read from any thread.
 */
#ifndef HTTP_CONSOLE_ASSETS_H
#define HTTP_CONSOLE_ASSETS_H

#include <stddef.h>

typedef struct http_console_asset {
    const char *name;          /* "index.html": the URL's last part */
    const char *content_type;  /* from the extension */
    const unsigned char *data; /* the bytes (a NUL follows them, not counted) */
    size_t len;
    const char *etag;          /* strong ETag, quoted: "\"<fnv1a64 hex>\"" */
} http_console_asset;

extern const http_console_asset http_console_assets[];
extern const unsigned http_console_asset_count;

#endif
