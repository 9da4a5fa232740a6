/* mcp.h — `cordon mcp`: the sandbox as a Model Context Protocol server on stdio, the entry
 * point cli/main.c dispatches to. Owns nothing beyond it (mcp_main.c has the server). Uses
 * client/ (the session's API) and base/. Must never: run a command outside a session's
 * sandbox, or write anything but protocol messages on stdout. */
#ifndef CORDON_MCP_H
#define CORDON_MCP_H

/* argv[0..argc) are the words after `mcp`; version is cordon's, for serverInfo. The exit
 * status: 0 after stdin ended or a TERM/INT/HUP, 1 when the session could not be started or
 * reached (or stopped), 2 for a usage error. */
int mcp_main(int argc, char **argv, const char *version);
#endif
