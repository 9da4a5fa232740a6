/* config_wire.c — see config_wire.h. */
#include "sandbox/config_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

static void put(FILE *f, char tag, const char *value)
{
    fputc(tag, f);
    fputs(value, f);
    fputc('\0', f);
}

static void put_list(FILE *f, char tag, const struct str_list *l)
{
    for (size_t i = 0; i < l->len; i++)
        put(f, tag, l->items[i]);
}

int config_wire_write(int fd, const struct sandbox_config *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -errno;
    put(f, 'w', cfg->workspace);
    put(f, 'c', cfg->cwd);
    char flags[16];
    snprintf(flags, sizeof flags, "%d%d%d%d", cfg->workspace_readonly, cfg->net_unrestricted,
             cfg->net_loopback, (int)cfg->home_mode);
    put(f, 'F', flags);
    if (cfg->net_transparent != NET_TRANSPARENT_OFF)
        put(f, 'X', cfg->net_transparent == NET_TRANSPARENT_REQUIRED ? "2" : "1");
    if (cfg->home)
        put(f, 'h', cfg->home);
    if (cfg->home_layer)
        put(f, 'l', cfg->home_layer);
    put_list(f, 'D', &cfg->home_tool_dirs);
    put_list(f, 'W', &cfg->writable);
    put_list(f, 'H', &cfg->hidden);
    put_list(f, 'S', &cfg->hidden_except); /* hide.h: "DIR\tPATTERN..." */
    if (cfg->exec_per_command) /* init shares its view with each exec's fresh sandbox */
        put(f, 'x', "1");
    put_list(f, 'R', &cfg->readonly_in_workspace);
    put_list(f, 'B', &cfg->run_binds);
    put_list(f, 'P', &cfg->protected_paths);
    put_list(f, 'E', &cfg->env);
    put_list(f, 'G', &cfg->grant_binds); /* grants.h: "KIND TARGET\tSOURCE" */
    put_list(f, 'V', &cfg->shift_binds); /* root_writes.h: a shifted root caller's binds */
    for (size_t i = 0; i < cfg->n_host_ports; i++) {
        char port[8];
        snprintf(port, sizeof port, "%u", cfg->host_ports[i]);
        put(f, 'T', port);
    }
    for (size_t i = 0; i < cfg->n_rlimits; i++) {
        char r[80];
        snprintf(r, sizeof r, "%d %llu %llu", cfg->rlimits[i].resource, cfg->rlimits[i].soft,
                 cfg->rlimits[i].hard);
        put(f, 'L', r);
    }
    char sizes[48];
    snprintf(sizes, sizeof sizes, "%llu %llu", cfg->tmp_size, cfg->shm_size);
    put(f, 'Z', sizes);
    fclose(f);
    int rc = write_all(fd, buf, len);
    free(buf);
    return rc;
}

int config_wire_read(int fd, struct sandbox_config *cfg, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > 64 * 1024 * 1024) {
        snprintf(err, errlen, "sandbox set-up: the configuration from the controller is missing");
        return -1;
    }
    size_t len = (size_t)st.st_size;
    char *buf = xmalloc(len + 1);
    ssize_t n = pread(fd, buf, len, 0);
    if (n != (ssize_t)len || buf[len - 1] != '\0') {
        free(buf);
        snprintf(err, errlen, "sandbox set-up: the configuration from the controller is truncated");
        return -1;
    }
    for (size_t off = 0; off < len;) {
        char tag = buf[off];
        const char *v = buf + off + 1;
        off += strlen(v) + 2;
        switch (tag) {
        case 'w':
            cfg->workspace = xstrdup(v);
            break;
        case 'c':
            cfg->cwd = xstrdup(v);
            break;
        case 'F':
            cfg->workspace_readonly = v[0] == '1';
            cfg->net_unrestricted = v[0] && v[1] == '1';
            cfg->net_loopback = v[0] && v[1] && v[2] == '1';
            if (v[0] && v[1] && v[2] && v[3] >= '0' && v[3] <= '2')
                cfg->home_mode = (enum sandbox_home)(v[3] - '0');
            break;
        case 'X':
            cfg->net_transparent = v[0] == '2' ? NET_TRANSPARENT_REQUIRED : NET_TRANSPARENT_ON;
            break;
        case 'h':
            free(cfg->home);
            cfg->home = xstrdup(v);
            break;
        case 'l':
            free(cfg->home_layer);
            cfg->home_layer = xstrdup(v);
            break;
        case 'D':
            str_list_push(&cfg->home_tool_dirs, v);
            break;
        case 'W':
            str_list_push(&cfg->writable, v);
            break;
        case 'H':
            str_list_push(&cfg->hidden, v);
            break;
        case 'S':
            str_list_push(&cfg->hidden_except, v);
            break;
        case 'x':
            cfg->exec_per_command = true;
            break;
        case 'R':
            str_list_push(&cfg->readonly_in_workspace, v);
            break;
        case 'B':
            str_list_push(&cfg->run_binds, v);
            break;
        case 'P':
            str_list_push(&cfg->protected_paths, v);
            break;
        case 'E':
            str_list_push(&cfg->env, v);
            break;
        case 'G':
            str_list_push(&cfg->grant_binds, v);
            break;
        case 'V':
            str_list_push(&cfg->shift_binds, v);
            break;
        case 'T': {
            char *end;
            unsigned long port = strtoul(v, &end, 10);
            if (*end || port == 0 || port > 65535 || cfg->n_host_ports >= SANDBOX_MAX_HOST_PORTS)
                goto bad;
            cfg->host_ports[cfg->n_host_ports++] = (unsigned short)port;
            break;
        }
        case 'L': {
            struct sandbox_rlimit r;
            if (cfg->n_rlimits >= SANDBOX_MAX_RLIMITS ||
                sscanf(v, "%d %llu %llu", &r.resource, &r.soft, &r.hard) != 3)
                goto bad;
            cfg->rlimits[cfg->n_rlimits++] = r;
            break;
        }
        case 'Z':
            if (sscanf(v, "%llu %llu", &cfg->tmp_size, &cfg->shm_size) != 2)
                goto bad;
            break;
        default:
            goto bad;
        }
    }
    free(buf);
    if (!cfg->workspace || !cfg->cwd) {
        snprintf(err, errlen,
                 "sandbox set-up: the configuration from the controller has no workspace");
        return -1;
    }
    return 0;
bad:
    free(buf);
    snprintf(err, errlen, "sandbox set-up: the configuration from the controller is malformed");
    return -1;
}
