/* client_reply.h — reading the session's answers: the JSON body of a 2xx answer, the error
 * line of a 4xx/5xx one, and typed members, each failure as the one line the CLI prints.
 * Uses json_read for parsing. Must never: talk to the session, or exit. */
#ifndef CORDON_CLIENT_REPLY_H
#define CORDON_CLIENT_REPLY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "client/client_http.h"
#include "base/json_read.h"

/* Parse the collected body of h's answer as a JSON object: a tree to json_free, or NULL after
 * printing "cordon: CMD: the session answered with malformed JSON: <why>". */
struct json_value *reply_json(const struct chttp *h);
/* For a non-2xx answer: "cordon: CMD: <its error member>" (or a line naming the status when
 * there is none); returns 125, the exit status. */
int reply_fail(const struct chttp *h);
/* One request whose answer is a JSON object: the tree (json_free it), or NULL with the line
 * printed (lost connection, error answer, malformed JSON) and the exit status in *status. */
struct json_value *reply_request_json(struct chttp *h, const char *method, const char *path,
                                      const char *body, size_t len, int *status);
/* "cordon: CMD: the session answered with malformed JSON: <what>"; returns 125. */
int reply_malformed(const char *cmd, const char *what);

/* obj's member key when it has that type; NULL / false otherwise. */
const char *reply_str(const struct json_value *obj, const char *key);
const struct json_value *reply_array(const struct json_value *obj, const char *key);
bool reply_int(const struct json_value *obj, const char *key, long long *out);
bool reply_num(const struct json_value *obj, const char *key, double *out);

/* Write text[0..len) to out as one line: trailing white space dropped, one '\n' added. */
void reply_print_line(FILE *out, const char *text, size_t len);
#endif
