/* policy_explain.h — `cordon policy explain`: which layer decided, and why. Owns the argument
 * syntax and the output; the per-layer evaluation is lua_host's (lh_explain_network,
 * lh_explain_profile, lh_explain_refusals). Must never decide anything itself. */
#ifndef CORDON_POLICY_EXPLAIN_H
#define CORDON_POLICY_EXPLAIN_H

/* argv[0..argc) are the words after "explain". Exit code: 0 allow (or a profile or a recorded
 * result explained), 1 deny / a layer failed, 2 bad usage or a bad case file. */
int policy_explain_main(int argc, char **argv);
#endif
