/* mcp_wire.h — the MCP server's side of JSON-RPC 2.0 on stdio: writing one message a line on
 * stdout (from any thread, one whole line at a time), the error and result envelopes, the
 * requests the server sends to the client (elicitation/create) and the wait for their answers,
 * and writing a parsed JSON value back out.
 * Uses json_buf, json_read, pthreads. Must never: write anything but protocol messages on
 * stdout (diagnostics go to stderr), or block the reader of stdin on an answer. */
#ifndef CORDON_MCP_WIRE_H
#define CORDON_MCP_WIRE_H
#include <stdbool.h>
#include <stddef.h>

#include "base/json_write.h"
#include "base/json_read.h"

/* JSON-RPC error codes (JSON-RPC 2.0, section 5.1). */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603

/* Write msg[0..len) and a '\n' to stdout as one message. 0, or -errno (the client is gone). */
int mcp_send(const char *msg, size_t len);
/* {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}; id is the request's id as
 * JSON text ("null" when it had none that could be read). */
void mcp_send_error(const char *id, int code, const char *message);
/* {"jsonrpc":"2.0","id":ID,"result":RESULT}, RESULT being JSON text. */
void mcp_send_result(const char *id, const char *result, size_t len);

/* The id of a request as JSON text (free it), or NULL when it is not a string or a number. */
char *mcp_id_text(const struct json_value *id);
/* Append v to b as JSON. */
void mcp_write_value(struct json_buf *b, const struct json_value *v);

/* Send the request {"jsonrpc":"2.0","id":N,"method":METHOD,"params":PARAMS} and wait up to
 * timeout_s seconds for its answer. 0 with the whole answer's tree in *result (json_free it),
 * or -1 with why in err (an error answer, no answer in time, cancelled, the server shutting
 * down; for the last three the client gets notifications/cancelled for it). tag (not 0) is
 * the caller's key for mcp_request_cancel. */
int mcp_request(const char *method, const char *params, long long tag, double timeout_s,
                struct json_value **result, char *err, size_t errlen);
/* Ask the person one question through elicitation/create: message, and a required string
 * "answer" from choices (n of them; description, when not NULL, says what each means), waited
 * for up to timeout_s under tag as in mcp_request. -1 with why in err when the request failed;
 * else 0 with the choice the person accepted in *answer (one of choices, static), or NULL when
 * they declined, cancelled or gave anything else. */
int mcp_elicit_choice(const char *message, const char *description, const char *const *choices,
                      size_t n, long long tag, double timeout_s, const char **answer, char *err,
                      size_t errlen);
/* Give up waiting in the mcp_request of that tag (reason is a static string, its err and the
 * client's notifications/cancelled reason). Whether one was waiting. */
bool mcp_request_cancel(long long tag, const char *reason);
/* An answer from the client to one of our requests (a message with an id and no method):
 * hands it to the waiting mcp_request. Takes msg (the whole message's tree) in all cases. */
void mcp_answer(struct json_value *msg);
/* Stop all output (the process is about to exit): a message being written is finished (given
 * two seconds), none starts after. */
void mcp_wire_close(void);
/* Wake every waiting mcp_request with a failure (the server is stopping). */
void mcp_wire_shutdown(void);
#endif
