/* run.h — `cordon run`: the controller in the foreground for one command. It resolves the
 * profile through the policy, builds the seccomp filter, creates the namespaces with init as
 * PID 1, relays the pty when stdin is a terminal, forwards the caller's signals, and exits with
 * the command's status (printing the JSON result with --json). */
#ifndef CORDON_RUN_H
#define CORDON_RUN_H
/* argv[0] is the first word after "run". Returns the process exit status. */
int run_main(int argc, char **argv);
#endif
