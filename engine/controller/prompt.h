/* prompt.h — asking the person at the caller's terminal: one question, answered with one key.
 * Used by the question after a refusal (escalate.c, the terminal put out of canonical mode for
 * the key) and by the network questions shown while a command runs (run.c, whose terminal the
 * pty relay already holds raw). The default answer, a key the question does not offer, is deny.
 * Never reads more than the one key of the answer, never leaves the terminal changed. */
#ifndef CORDON_PROMPT_H
#define CORDON_PROMPT_H
#include <stdbool.h>
#include <stddef.h>

enum prompt_answer { PROMPT_DENY, PROMPT_ONCE, PROMPT_SESSION };

/* One key from fd (a terminal) within timeout_s seconds (0, negative or more than a day: a
 * day), with canonical input and echo off meanwhile; the terminal's mode is restored before it
 * returns. 0 when no key came in time (or fd is not readable). */
char prompt_read_key(int fd, double timeout_s);

/* What key means for a question that offers once_keys for "allow once" (or "for this
 * command") and session_keys for "allow for the session"; any other key denies. */
enum prompt_answer prompt_answer_of(char key, const char *once_keys, const char *session_keys);

/* The words said after the answer: "no answer in time: denied" (!answered), "allowed",
 * "denied". */
const char *prompt_outcome(bool answered, enum prompt_answer a);

/* Write the whole of text to fd (cordon's own words, an outcome); a terminal gone away is
 * ignored. */
void prompt_say(int fd, const char *text);
/* A question on a raw terminal: "cordon: TEXT." on a line of its own, then keys (cordon's
 * words, ending where the key is typed). TEXT names what a command chose (a host, a command
 * line): it goes through the one renderer (base/visible.h), so no byte of it acts on the
 * terminal. */
void prompt_show(int fd, const char *text, const char *keys);
#endif
