/* home_cmd.c — see home_cmd.h. Owns the command's syntax, usage text and output. Reads the
 * layer's upper directory as overlayfs left it: a character device 0:0 is a whiteout (a file of
 * the real home that commands removed); any other entry was written by a command, "changed"
 * when the real home has that path too, else "added".
 * Uses: sandbox/home_view.h (where the layer is, whether a sandbox holds it).
 * Must never: write to the real home, or remove a layer a running sandbox has mounted (its
 * overlay would go on writing into removed directories, and its view would be undefined). */
#include "cli/home_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/cli_opt.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/util.h"
#include "base/visible.h"
#include "sandbox/home_layers.h"
#include "sandbox/home_view.h"

#define SYNOPSIS "cordon home [--diff | --reset] [--json] [DIR]"

static void usage(void)
{
    fputs("usage: " SYNOPSIS "\n"
          "Show the copy-on-write home layer of workspace DIR (default: the current directory):\n"
          "where it is and how big. Commands in the sandbox see the real home read-only beneath\n"
          "it (profile key home = \"overlay\"); what they write lands in this layer, kept across\n"
          "runs and sessions of the workspace. The layer takes only what tools write on their\n"
          "own: the home's dot-entries (~/.cache, ~/.gitconfig, a new ~/.foo) and the folders\n"
          "the profile key home_tool_dirs names (coding: ~/go, ~/sdk, ~/perl5, ~/R). Everything\n"
          "else in the home outside the workspace and the writable paths (other projects, bare\n"
          "repositories, a new ~/notes.txt) is read-only, as the rest of the host is: a write\n"
          "there fails with the usual refusal line. --diff lists what they wrote (added, changed:\n"
          "the real home has it too, removed; \"(pending)\": written by a sandbox beside the one\n"
          "holding the layer, merged into it by the next one that holds it); --reset discards\n"
          "the layer and the pending writes (refused while a sandbox of the workspace runs).\n"
          "--json prints one JSON object instead of the lines (with --diff, its \"changes\"\n"
          "array: {\"change\", \"path\", \"dir\", \"pending\"} each).\n",
          stdout);
}

struct walk {
    int home_fd;     /* the real home, for "changed"; -1 when there is none */
    bool diff;       /* print each entry */
    const char *tag; /* after each entry: "" for the layer, " (pending)" for a pending upper */
    struct json_buf *json; /* with --json: the "changes" array's items, collected */
    unsigned long long bytes, entries;
};

/* One line "<what> ~/<path><suffix>": the names were chosen by sandboxed commands, so they go
 * through the one renderer (control, C1, bidi and zero-width characters shown as escapes).
 * With --json, one item {"change", "path" (relative to the home), "dir", "pending"}
 * (json_write escapes what JSON needs). */
static void print_entry(const struct walk *w, const char *what, const char *path,
                        const char *suffix)
{
    if (w->json) {
        json_buf_printf(w->json, "%s{\"change\":\"%s\",\"path\":", w->json->len ? "," : "", what);
        json_buf_string(w->json, path, strlen(path));
        json_buf_printf(w->json, ",\"dir\":%s,\"pending\":%s}", suffix[0] ? "true" : "false",
                        w->tag[0] ? "true" : "false");
        return;
    }
    char *shown = visible_dup(path);
    printf("%s ~/%s%s%s\n", what, shown, suffix, w->tag);
    free(shown);
}

/* Walk directory dfd (rel: its path below the layer's root, "" for the root). */
static int walk_dir(struct walk *w, int dfd, const char *rel)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -errno;
    }
    int r = 0;
    struct dirent *de;
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        struct stat st, hs;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            r = -errno;
        } else {
            bool in_home =
                w->home_fd >= 0 && fstatat(w->home_fd, sub, &hs, AT_SYMLINK_NOFOLLOW) == 0;
            w->entries++;
            w->bytes += (unsigned long long)st.st_blocks * 512;
            if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
                if (w->diff)
                    print_entry(w, "removed", sub, "");
            } else if (S_ISDIR(st.st_mode)) {
                int sfd =
                    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sfd < 0) {
                    r = -errno;
                } else {
                    unsigned long long before = w->entries;
                    r = walk_dir(w, sfd, sub);
                    /* A new empty directory is a change of its own. */
                    if (r == 0 && w->diff && !in_home && w->entries == before)
                        print_entry(w, "added", sub, "/");
                }
            } else if (w->diff) {
                print_entry(w, in_home ? "changed" : "added", sub, "");
            }
        }
        free(sub);
    }
    closedir(d);
    return r;
}

int home_cmd_main(int argc, char **argv)
{
    bool diff = false, reset = false, json = false;
    const char *dir = NULL;
    struct json_buf changes = {0};
    int n_dirs, status;
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    const struct cli_flag flags[] = {{"--diff", &diff}, {"--reset", &reset}, {"--json", &json}};
    if ((status = cli_read_words(argc, argv, "home", SYNOPSIS, flags, ARRAY_LEN(flags), &dir, 1,
                                 &n_dirs)) >= 0)
        return status;
    if (diff && reset)
        return cli_usage_error("home",
                               "--diff and --reset exclude each other (usage: " SYNOPSIS ")");
    int rc = CORDON_EXIT_SETUP, lock_fd = -1, layer_fd = -1;
    char *layer = NULL, *upper = NULL, *home = NULL;
    char *ws = realpath(dir ? dir : ".", NULL);
    if (!ws) {
        fprintf(stderr, "cordon: home: %s: %s\n", dir ? dir : ".", strerror(errno));
        goto out;
    }
    if (!(layer = home_view_layer_dir(ws))) {
        fprintf(
            stderr,
            "cordon: home: no folder for home layers (set HOME or XDG_STATE_HOME to an absolute path)\n");
        goto out;
    }
    upper = xasprintf("%s/upper", layer);
    struct stat st;
    if (lstat(layer, &st) < 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "cordon: home: %s: %s\n", layer, strerror(errno));
            goto out;
        }
        if (json) {
            fputs("{\"workspace\":", stdout);
            json_write_string(stdout, ws);
            fputs(diff    ? ",\"layer\":null,\"changes\":[]}\n"
                  : reset ? ",\"layer\":null,\"reset\":false}\n"
                          : ",\"layer\":null,\"bytes\":0,\"entries\":0,\"in_use\":false}\n",
                  stdout);
        } else if (!diff) {
            printf("%s: no home layer (nothing written to the home yet)\n", ws);
        }
        rc = 0;
        goto out;
    }
    /* Held while the layer is removed, so that no sandbox mounts it meanwhile; only tried
     * otherwise (a sandbox starting now would take this for another one's). */
    lock_fd = home_view_layer_lock(layer);
    bool busy = lock_fd == -EBUSY;
    if (lock_fd < 0 && !busy) {
        fprintf(stderr, "cordon: home: %s: %s\n", layer, strerror(-lock_fd));
        goto out;
    }
    if (!reset && lock_fd >= 0) {
        close(lock_fd);
        lock_fd = -1;
    }
    /* Sandboxes beside the one holding the layer write pending uppers (home_layers.h). */
    layer_fd = open(layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (layer_fd < 0) {
        fprintf(stderr, "cordon: home: %s: %s\n", layer, strerror(errno));
        goto out;
    }
    busy = busy || hl_any_live(layer_fd);
    if (reset) {
        if (busy) {
            fprintf(stderr,
                    "cordon: home: a sandbox of %s is using its home layer: stop it "
                    "(cordon session stop NAME) and reset again\n",
                    ws);
            goto out;
        }
        /* Out of the way in one rename first: a sandbox starting meanwhile makes a fresh layer
         * (and its pending upper) instead of writing into one being removed. */
        char *gone = xasprintf("%s.reset-%d", layer, (int)getpid());
        int r = rename(layer, gone) < 0 ? -errno : hl_remove_tree(AT_FDCWD, gone);
        if (r < 0)
            fprintf(stderr, "cordon: home: removing %s: %s\n", layer, strerror(-r));
        free(gone);
        if (r < 0)
            goto out;
        if (json) {
            fputs("{\"workspace\":", stdout);
            json_write_string(stdout, ws);
            fputs(",\"layer\":", stdout);
            json_write_string(stdout, upper);
            fputs(",\"reset\":true}\n", stdout);
        } else {
            printf("reset: the home layer of %s is discarded\n", ws);
        }
        rc = 0;
        goto out;
    }
    const char *h = cdir_home();
    home = h ? realpath(h, NULL) : NULL;
    struct walk w = {.home_fd = home ? open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1,
                     .diff = diff,
                     .tag = "",
                     .json = json ? &changes : NULL};
    int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int r = ufd < 0 ? -errno : walk_dir(&w, ufd, "");
    if (r == -ENOENT)
        r = 0;
    /* Then each pending upper: written by a sandbox beside the holder, merged into the layer
     * by the next sandbox that holds it. */
    struct str_list pending = {0};
    hl_list(layer_fd, &pending);
    w.tag = " (pending)";
    for (size_t i = 0; r == 0 && i < pending.len; i++) {
        char *p = xasprintf("pending/%s/upper", pending.items[i]);
        int pfd = openat(layer_fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        free(p);
        r = pfd < 0 ? (errno == ENOENT ? 0 : -errno) : walk_dir(&w, pfd, "");
    }
    str_list_free(&pending);
    if (w.home_fd >= 0)
        close(w.home_fd);
    if (r < 0) {
        fprintf(stderr, "cordon: home: reading %s: %s\n", upper, strerror(-r));
        goto out;
    }
    if (json) {
        fputs("{\"workspace\":", stdout);
        json_write_string(stdout, ws);
        fputs(",\"layer\":", stdout);
        json_write_string(stdout, upper);
        if (diff)
            printf(",\"changes\":[%.*s]}\n", (int)changes.len, changes.data ? changes.data : "");
        else
            printf(",\"bytes\":%llu,\"entries\":%llu,\"in_use\":%s}\n", w.bytes, w.entries,
                   busy ? "true" : "false");
    } else if (!diff) {
        printf("workspace: %s\nlayer: %s\nsize: %llu bytes in %llu entries\nin use: %s\n", ws,
               upper, w.bytes, w.entries, busy ? "yes (a sandbox of the workspace runs)" : "no");
    }
    rc = 0;
out:
    json_buf_free(&changes);
    if (layer_fd >= 0)
        close(layer_fd);
    if (lock_fd >= 0)
        close(lock_fd);
    free(home);
    free(upper);
    free(layer);
    free(ws);
    return rc;
}
