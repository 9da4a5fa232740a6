/* cordon_dirs.h — where cordon's own folders are (cdir_*): the configuration (user policy,
 * profiles, trust records), the state (audit log, home layers, walk records), the cache
 * (resolved profiles) and the home they default under. The one place that reads HOME and
 * the XDG base-directory variables for them, so every file that writes, reads or hides one of
 * these folders names the same place.
 * Rules (the XDG Base Directory specification): $XDG_CONFIG_HOME, $XDG_STATE_HOME and
 * $XDG_CACHE_HOME count only when absolute ("If an implementation encounters a relative path
 * in any of these variables it should consider the path invalid and ignore it"); otherwise
 * ~/.config, ~/.local/state and ~/.cache under an absolute HOME; otherwise there is none.
 * A relative value would name a different place from every current folder (the workspace
 * among them, where a command could write the audit log or plant a trust record).
 * The runtime folder (session sockets) has its own rule in session_socket.c, which takes
 * cdir_runtime() as its input.
 * Uses getenv and the string helpers. Must never: create a folder, return a relative path. */
#ifndef CORDON_CORDON_DIRS_H
#define CORDON_CORDON_DIRS_H

enum cdir_kind {
    CDIR_CONFIG, /* $XDG_CONFIG_HOME/cordon, ~/.config/cordon */
    CDIR_STATE,  /* $XDG_STATE_HOME/cordon, ~/.local/state/cordon */
    CDIR_CACHE,  /* $XDG_CACHE_HOME/cordon, ~/.cache/cordon */
};

/* HOME when it is absolute, else NULL. */
const char *cdir_home(void);
/* XDG_RUNTIME_DIR when it is absolute, else NULL. */
const char *cdir_runtime(void);
/* The base folder of kind without "/cordon" ($XDG_..._HOME, else ~/.config etc.), newly
 * allocated, or NULL when neither is absolute. */
char *cdir_base(enum cdir_kind kind);
/* cordon's folder of kind, with "/sub" appended when sub is non-NULL, newly allocated, or
 * NULL (no absolute XDG variable and no absolute HOME). */
char *cdir_path(enum cdir_kind kind, const char *sub);
/* A workspace's own folder under cordon's folder of kind: "sub/<sha256 of workspace>" (the
 * home's and the review's layers), newly allocated, or NULL as cdir_path. */
char *cdir_workspace_path(enum cdir_kind kind, const char *sub, const char *workspace);
/* The same from one source only: the XDG variable (NULL when it is unset or relative), or
 * HOME's default place (NULL when HOME is not absolute). For the hiding of cordon's folders,
 * which lists both since the next run may be started with either. */
char *cdir_xdg_path(enum cdir_kind kind, const char *sub);
char *cdir_home_path(enum cdir_kind kind, const char *sub);
#endif
