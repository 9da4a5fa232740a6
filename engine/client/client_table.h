/* client_table.h — the human forms' aligned columns (`jobs`, `session list`): a header row and
 * rows of cells, each column as wide as its widest cell (in characters, not bytes), two spaces
 * between columns, the last column not padded. Uses util. Must never: truncate a cell. */
#ifndef CORDON_CLIENT_TABLE_H
#define CORDON_CLIENT_TABLE_H
#include <stddef.h>
#include <stdio.h>
#include "base/util.h"

struct table {
    size_t ncols;
    struct str_list cells; /* row-major; the first row is the header */
};

void table_init(struct table *t, size_t ncols, const char *const *header);
/* Append the next cell (copied), filling rows left to right. */
void table_cell(struct table *t, const char *s);
void table_print(const struct table *t, FILE *out);
void table_free(struct table *t);
#endif
