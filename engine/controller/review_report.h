/* review_report.h — a review layer's pending changes as the person reads them: each change's
 * host-trusted reason (host_trusted.h, plus a bare repository made in review mode) and the JSON
 * of `cordon review --json`, which GET /v1/review and the MCP tool review_changes answer too.
 * Uses: review_layer.h, host_trusted.h, json_write.h. Must never: change the layer (it records
 * the host's copies as review_layer_record does, nothing else). */
#ifndef CORDON_REVIEW_REPORT_H
#define CORDON_REVIEW_REPORT_H
#include <stddef.h>
#include "base/json_write.h"
#include "sandbox/review_layer.h"

/* "added", "changed", "removed". */
const char *review_change_name(enum review_change c);
/* Why the host will later run or trust e's path (NULL: it will not); l is the whole list. */
const char *review_why(const struct review_entry *e, const struct review_list *l);
/* One change as an object of the "changes" array (a ',' first when j holds something). */
void review_json_entry(struct json_buf *j, const struct review_entry *e, const char *why);
/* {"workspace": ws, "layer": layer, "fork": NAME|null, "changes": [...]} of layer over ws, its
 * paths recorded first (an absent layer has no changes); fork: the layer is that fork's (cordon review --fork
 * NAME reads it), NULL the workspace's own. 0, or -1 with one line in err. */
int review_report_json(const char *ws, const char *layer, const char *fork, struct json_buf *out,
                       char *err, size_t errlen);
#endif
