/* session_main.c — the `cordon-session` program: the controller of a long-lived session.
 * `cordon session start ...` execs it with the same arguments (it links libmicrohttpd, which
 * the static `cordon` does not). */
#include <stdio.h>
#include <string.h>

#include "base/cli_opt.h"
#include "controller/run_options.h"
#include "session/session_start.h"

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "session") == 0 && strcmp(argv[2], "start") == 0)
        return session_start_main(argc - 3, argv + 3);
    return cli_usage_error("session",
                           "cordon-session only starts sessions (cordon session start NAME)");
}
