/* mcp.h — `cordon mcp`: the sandbox as a Model Context Protocol server on stdio. */
#ifndef CORDON_MCP_H
#define CORDON_MCP_H

/* argv[0..argc) are the words after `mcp`; version is cordon's, for serverInfo. The exit
 * status. */
int mcp_main(int argc, char **argv, const char *version);
#endif
