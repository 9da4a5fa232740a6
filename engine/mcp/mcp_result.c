/* mcp_result.c — see mcp_call.h. A tool's result as MCP sends it: its text as one content
 * item, its structuredContent, isError. */
#include "mcp/mcp_call.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp/mcp_wire.h"

void mcp_result_send(const char *id, struct result *r)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
    json_buf_string(&b, r->text.data ? r->text.data : "", r->text.len);
    json_buf_lit(&b, "}]");
    if (r->structured.len && !r->is_error) {
        json_buf_lit(&b, ",\"structuredContent\":");
        json_buf_raw(&b, r->structured.data, r->structured.len);
    }
    if (r->is_error)
        json_buf_lit(&b, ",\"isError\":true");
    else
        json_buf_lit(&b, ",\"isError\":false");
    json_buf_lit(&b, "}");
    mcp_send_result(id, b.data, b.len);
    json_buf_free(&b);
    json_buf_free(&r->text);
    json_buf_free(&r->structured);
}

/* A result with isError true and one line saying why. */
void mcp_result_error(const char *id, struct result *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->text.len = 0;
    json_buf_raw(&r->text, line, strlen(line));
    r->is_error = true;
    mcp_result_send(id, r);
}

/* The answer's object, trimmed, as structuredContent. */
void mcp_result_object(struct result *r, const struct json_value *v)
{
    mcp_write_value(&r->structured, v);
}
