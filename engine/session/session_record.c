/* session_record.c — see session_record.h. Uses session_paths (where), json_write. */
#include "session/session_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "session/session_jobs.h"
#include "session/session_paths.h"

void session_record_write(struct session *s)
{
    char path[600], tmp[620];
    if (session_file(s->p.name, "record.json", path, sizeof path) < 0)
        return;
    const char *reason = s->ended ? session_end_name(s->end_reason) : NULL;
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"name\":");
    json_buf_cstr_or_null(&b, s->p.name);
    json_buf_printf(&b, ",\"pid\":%d,\"profile\":", (int)getpid());
    json_buf_cstr_or_null(&b, s->p.cfg->profile);
    json_buf_lit(&b, ",\"workspace\":");
    json_buf_cstr_or_null(&b, s->p.cfg->workspace);
    json_buf_printf(&b, ",\"started\":%.3f,\"ended\":", s->started);
    if (s->ended)
        json_buf_printf(&b, "%.3f", clock_wall_s());
    else
        json_buf_lit(&b, "null");
    json_buf_lit(&b, ",\"reason\":");
    json_buf_cstr_or_null(&b, reason);
    json_buf_lit(&b, ",\"argv\":[");
    for (size_t i = 0; s->p.start_argv && s->p.start_argv[i]; i++) {
        if (i)
            json_buf_lit(&b, ",");
        json_buf_cstr_or_null(&b, s->p.start_argv[i]);
    }
    json_buf_lit(&b, "],\"review_layer\":");
    json_buf_cstr_or_null(&b, s->p.cfg->review ? s->p.cfg->review_layer : NULL);
    json_buf_lit(&b, "}\n");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || write_all(fd, b.data, b.len) < 0 || rename(tmp, path) < 0)
        LOG_W("session", "saving the session's record to %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    json_buf_free(&b);
}
