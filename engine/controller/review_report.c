/* review_report.c — see review_report.h. */
#include "controller/review_report.h"

#include <string.h>
#include <sys/stat.h>

#include "controller/host_trusted.h"

static const char *const change_name[] = {
    [REVIEW_ADDED] = "added", [REVIEW_CHANGED] = "changed", [REVIEW_REMOVED] = "removed"};

const char *review_change_name(enum review_change c)
{
    return change_name[c];
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : S_ISREG(m) ? "file" : m ? "special" : "none";
}

/* Is dir a git dir among the pending changes (a HEAD file and an objects folder in it, pending):
 * a bare repository a command made, whose hooks and config no name flags. */
static bool pending_git_dir(void *ctx, const char *dir)
{
    const struct review_list *l = ctx;
    bool head = false, objects = false;
    size_t n = strlen(dir);
    for (size_t i = 0; i < l->len && !(head && objects); i++) {
        const struct review_entry *x = &l->items[i];
        if (x->change == REVIEW_REMOVED || strncmp(x->path, dir, n) != 0 || x->path[n] != '/')
            continue;
        head = head || (strcmp(x->path + n + 1, "HEAD") == 0 && S_ISREG(x->mode));
        objects = objects || (strcmp(x->path + n + 1, "objects") == 0 && S_ISDIR(x->mode));
    }
    return head && objects;
}

const char *review_why(const struct review_entry *e, const struct review_list *l)
{
    const char *why = host_trusted_why(e->path, e->mode, e->host_mode, e->link);
    if (!why && e->change != REVIEW_REMOVED)
        why = host_trusted_git_dir_why(e->path, pending_git_dir, (void *)l);
    return why;
}

void review_json_entry(struct json_buf *j, const struct review_entry *e, const char *why)
{
    json_buf_printf(j, "%s{\"path\":", j->len ? "," : "");
    json_buf_string(j, e->path, strlen(e->path));
    json_buf_printf(j, ",\"change\":\"%s\",\"host_trusted\":%s,\"why\":", change_name[e->change],
                    why ? "true" : "false");
    json_buf_cstr_or_null(j, why);
    json_buf_printf(j, ",\"kind\":\"%s\"", kind_of(e->mode ? e->mode : e->host_mode));
    if (e->mode)
        json_buf_printf(j, ",\"mode\":\"%04o\"", (unsigned)(e->mode & 07777));
    else
        json_buf_printf(j, ",\"mode\":null");
    if (e->host_mode)
        json_buf_printf(j, ",\"host_mode\":\"%04o\"", (unsigned)(e->host_mode & 07777));
    else
        json_buf_printf(j, ",\"host_mode\":null");
    json_buf_printf(j, ",\"link\":");
    json_buf_cstr_or_null(j, e->link);
    json_buf_printf(j, "}");
}

int review_report_json(const char *ws, const char *layer, const char *fork, struct json_buf *out,
                       char *err, size_t errlen)
{
    struct review_list l = {0};
    if (review_layer_exists(layer)) {
        if (review_layer_list(layer, ws, &l, err, errlen) < 0)
            return -1;
        review_layer_record(layer, ws, &l);
    }
    struct json_buf j = {0};
    for (size_t i = 0; i < l.len; i++)
        review_json_entry(&j, &l.items[i], review_why(&l.items[i], &l));
    json_buf_lit(out, "{\"workspace\":");
    json_buf_string(out, ws, strlen(ws));
    json_buf_lit(out, ",\"layer\":");
    json_buf_string(out, layer, strlen(layer));
    json_buf_lit(out, ",\"fork\":");
    json_buf_cstr_or_null(out, fork);
    json_buf_lit(out, ",\"changes\":[");
    json_buf_raw(out, j.data ? j.data : "", j.len);
    json_buf_lit(out, "]}");
    json_buf_free(&j);
    review_list_free(&l);
    return 0;
}
