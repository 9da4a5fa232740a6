/* result_json.c — see result_json.h. */
#include "controller/result_json.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_write.h"
#include "base/util.h"
#include "controller/trusted_changes.h"
#include "policy/lua_host.h"

void result_json_print(FILE *out, const struct run_result *r)
{
    fprintf(out, "{\"exit_code\":%d,\"signal\":", r->exit_code);
    if (r->signal > 0) {
        const char *abbrev = sigabbrev_np(r->signal);
        char name[32];
        snprintf(name, sizeof name, "SIG%s", abbrev ? abbrev : "UNKNOWN");
        json_write_string(out, name);
    } else {
        fputs("null", out);
    }
    fprintf(out, ",\"duration_ms\":%.3f,\"detect_ms\":%.3f,\"profile\":", r->duration_ms,
            r->detect_ms);
    json_write_string(out, r->profile ? r->profile : "");
    fputs(",\"refusals\":[", out);
    for (size_t i = 0; i < r->n_refusals; i++) {
        const struct lh_refusal *f = &r->refusals[i];
        fputs(i ? ",{\"kind\":" : "{\"kind\":", out);
        json_write_string(out, f->kind);
        fputs(",\"path\":", out);
        if (f->path[0])
            json_write_string(out, f->path);
        else
            fputs("null", out);
        fputs(",\"line\":", out);
        json_write_string(out, f->line);
        fputs(",\"reason\":", out);
        json_write_string(out, f->reason);
        fputc('}', out);
    }
    fprintf(out, "],\"ran_outside\":%s,\"credentials\":[", r->ran_outside ? "true" : "false");
    for (size_t i = 0; r->credentials && i < r->credentials->len; i++) {
        /* "NAME\tHOST,HOST" */
        const char *item = r->credentials->items[i];
        size_t n = strcspn(item, "\t");
        char *name = xasprintf("%.*s", (int)n, item);
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        json_write_string(out, name);
        free(name);
        fputs(",\"hosts\":[", out);
        for (const char *h = item[n] ? item + n + 1 : item + n; *h;) {
            size_t k = strcspn(h, ",");
            char *host = xasprintf("%.*s", (int)k, h);
            if (h != item + n + 1)
                fputc(',', out);
            json_write_string(out, host);
            free(host);
            h += k + (h[k] == ',');
        }
        fputs("]}", out);
    }
    fputs("],\"host_trusted_changes\":[", out);
    for (size_t i = 0; r->trusted && i < r->trusted->len; i++) {
        const struct trusted_change *t = &r->trusted->items[i];
        fputs(i ? ",{\"path\":" : "{\"path\":", out);
        json_write_string(out, t->path);
        fputs(",\"change\":", out);
        json_write_string(out, t->change);
        fputs(",\"why\":", out);
        json_write_string(out, t->why);
        fputc('}', out);
    }
    fputc(']', out);
    if (r->trusted && r->trusted->truncated)
        fputs(",\"host_trusted_truncated\":true", out);
    fputs("}\n", out);
    fflush(out);
}
