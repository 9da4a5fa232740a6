/* grant_words.h — the words a person types for a grant (`cordon grant`, `cordon approve ID
 * for=D`) and the session checks again: a duration ("90", "90s", "10m", "2h", "1d") and one
 * destination ("HOST:PORT", "[V6]:PORT"). Shared by the client, which refuses bad words before
 * it asks, and the session's API, which never trusts a client. Knows no session, no proxy. */
#ifndef CORDON_GRANT_WORDS_H
#define CORDON_GRANT_WORDS_H
#include <stdbool.h>
#include <stddef.h>

/* The longest grant: a week. */
#define GRANT_FOR_MAX_S (7 * 24 * 3600.0)

/* "N", "Ns", "Nm", "Nh", "Nd" (N decimal digits) -> seconds, more than 0 and at most
 * GRANT_FOR_MAX_S; false for anything else. */
bool gw_parse_duration(const char *s, double *seconds);
/* "HOST:PORT" or "[IPV6]:PORT": one exact host (a name of letters, digits, '-', '_' and '.',
 * or an IP literal; no wildcard, no scheme) and a port 1..65535. host gets the name without
 * brackets, lower-cased (at most n-1 bytes); false (nothing promised in host) otherwise. */
bool gw_parse_destination(const char *s, char *host, size_t n, unsigned *port);
#endif
