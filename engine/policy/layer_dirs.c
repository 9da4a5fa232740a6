/* layer_dirs.c — see layer_dirs.h. Uses /proc/self/exe to find the data directory beside
 * the running binary; never a path fixed at build time. */
#include "policy/layer_dirs.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/log.h"
#include "policy/trust.h"

/* dir holds a policies/ directory (a symlink to one counts: the build tree's are links). */
static bool holds_policies(const char *dir)
{
    char path[PATH_MAX + 16];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/policies", dir) >= sizeof path)
        return false;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The data directory beside the running binary (layer_dirs.h says where and in which order),
 * found once per process; dies with one line naming both places when neither holds one. */
static const char *datadir_beside_binary(void)
{
    static char found[PATH_MAX + 32];
    if (found[0])
        return found;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        die_errno("cannot find the data directory: cannot read /proc/self/exe");
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        die("cannot find the data directory: /proc/self/exe is %s", self);
    *slash = '\0'; /* self: the binary's directory */
    char build_tree[PATH_MAX + 32], installed[PATH_MAX + 32];
    snprintf(build_tree, sizeof build_tree, "%s/share/cordon", self);
    /* The parent by name, not "..": messages then show PREFIX/share/cordon. A helper
     * program installed in PREFIX/libexec/cordon/ (cordon-session) has PREFIX two up. */
    static const char libexec[] = "/libexec/cordon";
    size_t self_len = strlen(self);
    int parent_len;
    if (self_len >= sizeof libexec - 1 &&
        strcmp(self + self_len - (sizeof libexec - 1), libexec) == 0) {
        parent_len = (int)(self_len - (sizeof libexec - 1));
    } else {
        slash = strrchr(self, '/');
        parent_len = slash ? (int)(slash - self) : 0;
    }
    snprintf(installed, sizeof installed, "%.*s/share/cordon", parent_len, self);
    if (holds_policies(build_tree))
        memcpy(found, build_tree, sizeof found);
    else if (holds_policies(installed))
        memcpy(found, installed, sizeof found);
    else
        die("cannot find policies/ and profiles/: looked in %s and %s (set CORDON_DATADIR to the "
            "directory holding them)",
            build_tree, installed);
    return found;
}

void layer_dirs_default(struct lh_options *opt)
{
    static char user_dir[4096];
    const char *datadir = getenv("CORDON_DATADIR");
    opt->datadir = datadir && *datadir ? datadir : datadir_beside_binary();
    opt->user_config_dir = NULL;
    opt->project_dir = NULL;
    opt->project_files = NULL;
    opt->extra_policy = NULL;
    char *dir = cdir_path(CDIR_CONFIG, NULL);
    if (!dir)
        return;
    snprintf(user_dir, sizeof user_dir, "%s", dir);
    free(dir);
    opt->user_config_dir = user_dir;
}

void layer_dirs_add_project(struct lh_options *opt, const char *workspace)
{
    static char project[PATH_MAX + 16];
    /* The bytes trust hashed, kept for the run: the project layer is loaded from them. */
    static struct trust_set files;
    char root[PATH_MAX], why[1024];
    opt->project_dir = NULL;
    opt->project_files = NULL;
    trust_set_free(&files);
    switch (trust_check_files(opt->user_config_dir, workspace, root, why, sizeof why, &files)) {
    case TRUST_NO_PROJECT:
        break;
    case TRUST_TRUSTED:
        snprintf(project, sizeof project, "%s/.cordon", root);
        opt->project_dir = project;
        opt->project_files = &files;
        break;
    case TRUST_UNTRUSTED:
        fprintf(stderr,
                "cordon: project policy in %s/.cordon is not trusted (%s); review it and "
                "run: cordon trust %s\n",
                root, why, root);
        break;
    }
}
