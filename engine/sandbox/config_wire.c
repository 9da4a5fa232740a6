/* config_wire.c — see config_wire.h. */
#include "sandbox/config_wire.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/profile_keys.h"

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

/* The profile keys init gets (to_init in the table of profile keys), each value one record
 * "NAME=VALUE" under tag 'K', typed by the key's kind: a boolean "0" or "1"; a list one record
 * per item; home and network.transparent the enum's number; a port or a size in decimal.
 * rlimits.* go as the 'L' records of cfg->rlimits, which holds them all. */
static void put_key(FILE *f, const struct profile_key *k, const struct sandbox_config *cfg)
{
    const void *field = (const char *)cfg + k->field;
    switch (k->kind) {
    case PK_BOOLEAN:
        fprintf(f, "K%s=%d%c", k->name, *(const bool *)field ? 1 : 0, '\0');
        break;
    case PK_LIST:
    case PK_ABSLIST:
    case PK_EXCEPTMAP: {
        const struct str_list *l = field;
        for (size_t i = 0; i < l->len; i++)
            fprintf(f, "K%s=%s%c", k->name, l->items[i], '\0');
        break;
    }
    case PK_HOME:
        fprintf(f, "K%s=%d%c", k->name, (int)*(const enum sandbox_home *)field, '\0');
        break;
    case PK_TRANSPARENT:
        fprintf(f, "K%s=%d%c", k->name, (int)*(const enum net_transparent *)field, '\0');
        break;
    case PK_PORTLIST:
        for (size_t i = 0; i < cfg->n_host_ports; i++)
            fprintf(f, "K%s=%u%c", k->name, cfg->host_ports[i], '\0');
        break;
    case PK_SIZE:
        fprintf(f, "K%s=%llu%c", k->name, *(const unsigned long long *)field, '\0');
        break;
    case PK_RLIMIT: /* the 'L' records */
    case PK_STRING:
    case PK_NAME:
    case PK_NUMBER:
    case PK_INTEGER:
    case PK_STRMAP:
    case PK_GRANTMAP:
    case PK_CREDMAP:
    case PK_DURATION:
    case PK_SIZE_OR_UNLIMITED:
    case PK_PIDS:
    case PK_DEPTH:
        assert(k->kind == PK_RLIMIT); /* no other kind goes to init: a new one needs a case */
        break;
    }
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
    for (size_t i = 0; i < profile_keys_len; i++)
        if (profile_keys[i].to_init)
            put_key(f, &profile_keys[i], cfg);
    if (cfg->home)
        put(f, 'h', cfg->home);
    if (cfg->home_layer)
        put(f, 'l', cfg->home_layer);
    put_list(f, 'P', &cfg->protected_paths);
    put_list(f, 'E', &cfg->env);
    put_list(f, 'G', &cfg->grant_binds); /* grants.h: "KIND TARGET\tSOURCE" */
    put_list(f, 'V', &cfg->shift_binds); /* root_writes.h: a shifted root caller's binds */
    for (size_t i = 0; i < cfg->n_rlimits; i++) {
        char r[80];
        snprintf(r, sizeof r, "%d %llu %llu", cfg->rlimits[i].resource, cfg->rlimits[i].soft,
                 cfg->rlimits[i].hard);
        put(f, 'L', r);
    }
    fclose(f);
    int rc = write_all(fd, buf, len);
    free(buf);
    return rc;
}

/* One 'K' record "NAME=VALUE" into its key's field; false when the name is no key init gets or
 * the value is not of its kind. *last: the row of the record before (a list's records follow
 * each other). */
static bool get_key(const char *rec, const struct profile_key **last, struct sandbox_config *cfg)
{
    const char *eq = strchr(rec, '=');
    if (!eq)
        return false;
    size_t nlen = (size_t)(eq - rec);
    const struct profile_key *k = *last;
    if (!k || strlen(k->name) != nlen || strncmp(k->name, rec, nlen) != 0) {
        k = NULL;
        for (size_t i = 0; i < profile_keys_len && !k; i++)
            if (strlen(profile_keys[i].name) == nlen &&
                strncmp(profile_keys[i].name, rec, nlen) == 0)
                k = &profile_keys[i];
    }
    if (!k || !k->to_init)
        return false;
    *last = k;
    const char *v = eq + 1;
    void *field = (char *)cfg + k->field;
    char *end;
    switch (k->kind) {
    case PK_BOOLEAN:
        if ((v[0] != '0' && v[0] != '1') || v[1])
            return false;
        *(bool *)field = v[0] == '1';
        return true;
    case PK_LIST:
    case PK_ABSLIST:
    case PK_EXCEPTMAP:
        str_list_push(field, v);
        return true;
    case PK_HOME:
        if (v[0] < '0' || v[0] > '0' + SANDBOX_HOME_TMPFS || v[1])
            return false;
        *(enum sandbox_home *)field = (enum sandbox_home)(v[0] - '0');
        return true;
    case PK_TRANSPARENT:
        if (v[0] < '0' || v[0] > '0' + NET_TRANSPARENT_REQUIRED || v[1])
            return false;
        *(enum net_transparent *)field = (enum net_transparent)(v[0] - '0');
        return true;
    case PK_PORTLIST: {
        unsigned long port = strtoul(v, &end, 10);
        if (*end || port == 0 || port > 65535 || cfg->n_host_ports >= SANDBOX_MAX_HOST_PORTS)
            return false;
        cfg->host_ports[cfg->n_host_ports++] = (unsigned short)port;
        return true;
    }
    case PK_SIZE:
        if (v[0] < '0' || v[0] > '9')
            return false;
        *(unsigned long long *)field = strtoull(v, &end, 10);
        return *end == '\0';
    case PK_RLIMIT:
    case PK_STRING:
    case PK_NAME:
    case PK_NUMBER:
    case PK_INTEGER:
    case PK_STRMAP:
    case PK_GRANTMAP:
    case PK_CREDMAP:
    case PK_DURATION:
    case PK_SIZE_OR_UNLIMITED:
    case PK_PIDS:
    case PK_DEPTH:
        return false;
    }
    return false;
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
    const struct profile_key *last = NULL;
    for (size_t off = 0; off < len;) {
        char tag = buf[off];
        const char *v = buf + off + 1;
        off += strlen(v) + 2;
        switch (tag) {
        case 'K':
            if (!get_key(v, &last, cfg))
                goto bad;
            break;
        case 'w':
            cfg->workspace = xstrdup(v);
            break;
        case 'c':
            cfg->cwd = xstrdup(v);
            break;
        case 'h':
            free(cfg->home);
            cfg->home = xstrdup(v);
            break;
        case 'l':
            free(cfg->home_layer);
            cfg->home_layer = xstrdup(v);
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
        case 'L': {
            struct sandbox_rlimit r;
            if (cfg->n_rlimits >= SANDBOX_MAX_RLIMITS ||
                sscanf(v, "%d %llu %llu", &r.resource, &r.soft, &r.hard) != 3)
                goto bad;
            cfg->rlimits[cfg->n_rlimits++] = r;
            break;
        }
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
