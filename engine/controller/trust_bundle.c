/* trust_bundle.c — the sandbox's CA bundle file and the variables that name it. */
#include "controller/trust_bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "controller/trust_java.h"

/* The variables the usual clients read a CA bundle from: OpenSSL (and Go, Python's ssl, Ruby),
 * curl, Python's requests and pip, Node (added to its own store), git. */
static const char *const bundle_vars[] = {"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
                                          "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO"};

static void env_put(struct str_list *env, const char *name, const char *value)
{
    size_t n = strlen(name);
    size_t w = 0;
    for (size_t i = 0; i < env->len; i++) {
        if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=')
            free(env->items[i]);
        else
            env->items[w++] = env->items[i];
    }
    env->len = w;
    str_list_push_owned(env, xasprintf("%s=%s", name, value));
}

/* An empty file at path, mode 0644 (certificates: readable by whoever init is, in whatever
 * user namespace). 0, or -1 with one line in err. */
static int make_empty(const char *path, const char *what, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot make the sandbox's %s %s: %s", what, path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

/* Java's store is made only where the host has a Java store for it to cover. */
static bool host_has_java_store(void)
{
    static const char *const stores[] = {SANDBOX_JAVA_STORE_DEBIAN, SANDBOX_JAVA_STORE_RHEL};
    struct stat st;
    for (size_t i = 0; i < ARRAY_LEN(stores); i++)
        if (stat(stores[i], &st) == 0 && S_ISREG(st.st_mode))
            return true;
    return false;
}

int trust_bundle_reserve(struct trust_bundle *b, struct sandbox_config *cfg, char *err,
                         size_t errlen)
{
    memset(b, 0, sizeof *b);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    snprintf(b->dir, sizeof b->dir, "%s/cordon-ca-bundle-XXXXXX", tmp);
    if (!mkdtemp(b->dir)) {
        snprintf(err, errlen, "cannot make a folder for the sandbox's CA bundle in %s: %s", tmp,
                 strerror(errno));
        b->dir[0] = '\0';
        return -1;
    }
    /* certificates only: readable by whoever init is, in whatever user namespace */
    (void)chmod(b->dir, 0755);
    snprintf(b->file, sizeof b->file, "%s/ca-bundle.crt", b->dir);
    if (make_empty(b->file, "CA bundle", err, errlen) < 0) {
        trust_bundle_remove(b);
        return -1;
    }
    if (host_has_java_store()) {
        snprintf(b->java, sizeof b->java, "%s/java-cacerts", b->dir);
        if (make_empty(b->java, "Java trust store", err, errlen) < 0) {
            b->java[0] = '\0';
            trust_bundle_remove(b);
            return -1;
        }
        str_list_push_owned(&cfg->grant_binds, xasprintf("f%s\t%s", SANDBOX_JAVA_CACERTS, b->java));
    }
    struct stat st;
    b->target = stat(SANDBOX_SYSTEM_CA_BUNDLE, &st) == 0 && S_ISREG(st.st_mode)
                    ? SANDBOX_SYSTEM_CA_BUNDLE
                    : SANDBOX_CA_BUNDLE;
    str_list_push_owned(&cfg->grant_binds, xasprintf("f%s\t%s", SANDBOX_CA_BUNDLE, b->file));
    for (size_t i = 0; i < ARRAY_LEN(bundle_vars); i++)
        env_put(&cfg->env, bundle_vars[i], b->target);
    return 0;
}

int trust_bundle_fill(struct trust_bundle *b, const char *ca_pem, char *err, size_t errlen)
{
    int fd = open(b->file, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the sandbox's CA bundle %s: %s", b->file,
                 strerror(errno));
        return -1;
    }
    int r = 0;
    int sys = open(SANDBOX_SYSTEM_CA_BUNDLE, O_RDONLY | O_CLOEXEC);
    if (sys >= 0) {
        char buf[65536];
        ssize_t n;
        while (r == 0 && (n = read(sys, buf, sizeof buf)) > 0)
            r = write_all(fd, buf, (size_t)n);
        close(sys);
        if (r == 0)
            r = write_all(fd, "\n", 1);
    }
    if (r == 0)
        r = write_all(fd, ca_pem, strlen(ca_pem));
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r < 0) {
        snprintf(err, errlen, "cannot write the sandbox's CA bundle %s: %s", b->file, strerror(-r));
        return -1;
    }
    if (!b->java[0])
        return 0;
    fd = open(b->java, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the sandbox's Java trust store %s: %s", b->java,
                 strerror(errno));
        return -1;
    }
    r = trust_java_write(fd, ca_pem, err, errlen);
    if (close(fd) < 0 && r == 0) {
        snprintf(err, errlen, "cannot write the sandbox's Java trust store %s: %s", b->java,
                 strerror(errno));
        r = -1;
    }
    return r;
}

void trust_bundle_remove(struct trust_bundle *b)
{
    if (!b->dir[0])
        return;
    if (b->file[0])
        (void)unlink(b->file);
    if (b->java[0])
        (void)unlink(b->java);
    (void)rmdir(b->dir);
    b->dir[0] = b->file[0] = b->java[0] = '\0';
}
