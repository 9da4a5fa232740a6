/* layer_dirs.h — where the controller finds its policy layers: the built-in data directory
 * (policies/ and profiles/), the user's config directory ($XDG_CONFIG_HOME/cordon, else
 * ~/.config/cordon), and a project's .cordon when the user trusts it (trust.h).
 *
 * The data directory is found at run time, never baked in at build time, so that a cordon
 * copied or installed anywhere keeps working and no source path is compiled into it:
 *   1. $CORDON_DATADIR when set and not empty (data kept elsewhere, a test's fixtures), as is;
 *   2. else, with DIR the directory of the running binary (readlink /proc/self/exe):
 *      a. DIR/share/cordon    — a build tree: build/cordon beside build/share/cordon, whose
 *                               policies/ and profiles/ link to the checkout's (CMakeLists.txt
 *                               makes the links at configure time), so an edit in the
 *                               checkout applies at the next run without a rebuild;
 *      b. DIR/../share/cordon — an installed cordon: PREFIX/bin/cordon and
 *                               PREFIX/share/cordon (`make install`, the package); for a
 *                               helper in PREFIX/libexec/cordon/ (cordon-session),
 *                               PREFIX/share/cordon too.
 *      The nearest one wins: (a) is a directory beside the binary, which no install layout
 *      has (PREFIX/bin/share), while (b) of a build tree is CHECKOUT/share/cordon, which an
 *      install into the checkout itself would create. The first that holds a policies/
 *      directory is used.
 * When neither holds one, cordon stops with one line naming both places (die(): a set-up
 * failure, before any command runs). */
#ifndef CORDON_LAYER_DIRS_H
#define CORDON_LAYER_DIRS_H
#include "policy/lua_host.h"

/* Fills opt with pointers into static storage or the environment; no project, no --policy.
 * The data directory is looked up once per process (above) and kept; stops the process with
 * one "cordon: ..." line when it cannot be found. */
void layer_dirs_default(struct lh_options *opt);

/* Add the project layer of workspace (its .cordon) to opt when the user trusts it. When the
 * workspace has a .cordon that is not trusted, print the one line
 * "cordon: project policy in DIR/.cordon is not trusted (why); review it and run: cordon trust DIR"
 * on stderr and leave opt->project_dir NULL (the lower layers still apply). opt->project_dir
 * and opt->project_files (the trusted files' bytes, which the project layer is loaded from)
 * point into static storage, kept until the next call. */
void layer_dirs_add_project(struct lh_options *opt, const char *workspace);
#endif
