/* shell_quote.h — a command's argv as one shell line (each word quoted only when it must be),
 * as the policy hooks and the audit log see it: the refusal detectors split it again with
 * lua/cordon/shell.lua. */
#ifndef CORDON_SHELL_QUOTE_H
#define CORDON_SHELL_QUOTE_H
/* A new string; argv is NULL-terminated. */
char *shell_join(char *const *argv);
#endif
