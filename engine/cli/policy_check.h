/* policy_check.h — `cordon policy check [DIR | FILE]`: validate policy layers and profiles
 * before a run needs them. Owns the argument syntax and the report (one "file:line: message"
 * per problem, then "policy check: N problems"); the checking is the Lua host's (lh_check_all,
 * lh_check_file in policy/lua_explain.c). Must never: load a project's .cordon from the current
 * directory unless the user trusts it (DIR and FILE are checked as named: the user asked). */
#ifndef CORDON_POLICY_CHECK_H
#define CORDON_POLICY_CHECK_H

/* argv[0..argc) are the words after "check". No argument: every layer `cordon run` would load
 * here, and every profile. DIR: DIR's .cordon (trusted or not) over the built-in and user
 * layers. FILE: that one policy or profile file (lh_check_file). Exit code: 0 no problem (or
 * --help), 1 a problem, 2 bad usage. */
int policy_check_main(int argc, char **argv);
#endif
