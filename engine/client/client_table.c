/* client_table.c — see client_table.h. */
#include "client/client_table.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, size_t ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    for (size_t i = 0; i < ncols; i++)
        table_cell(t, header[i]);
}

void table_cell(struct table *t, const char *s)
{
    str_list_push(&t->cells, s);
}

/* Characters of UTF-8 text: bytes that do not continue a sequence. */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

void table_print(const struct table *t, FILE *out)
{
    assert(t->ncols > 0 && t->cells.len % t->ncols == 0);
    size_t *width = xcalloc(t->ncols, sizeof *width);
    for (size_t i = 0; i < t->cells.len; i++) {
        size_t w = text_width(t->cells.items[i]);
        if (w > width[i % t->ncols])
            width[i % t->ncols] = w;
    }
    for (size_t i = 0; i < t->cells.len; i++) {
        size_t col = i % t->ncols;
        const char *s = t->cells.items[i];
        fputs(s, out);
        if (col + 1 == t->ncols) {
            fputc('\n', out);
        } else {
            for (size_t pad = text_width(s); pad < width[col] + 2; pad++)
                fputc(' ', out);
        }
    }
    free(width);
}

void table_free(struct table *t)
{
    str_list_free(&t->cells);
}
