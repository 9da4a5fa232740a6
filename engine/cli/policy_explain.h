/* policy_explain.h — `cordon policy explain`: which layer decided, and why. Owns the argument
 * syntax and the output (every line it prints); the per-layer evaluation is the Lua host's
 * (lh_explain_network, lh_explain_profile, lh_explain_refusals in policy/lua_explain.c), which
 * returns each layer's answer. Must never decide anything itself. */
#ifndef CORDON_POLICY_EXPLAIN_H
#define CORDON_POLICY_EXPLAIN_H

/* argv[0..argc) are the words after "explain". Exit code: 0 allow (or a profile or a recorded
 * result explained, or --help), 1 deny / a layer failed, 2 bad usage or a bad case file. */
int policy_explain_main(int argc, char **argv);
#endif
