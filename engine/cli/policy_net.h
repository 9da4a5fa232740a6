/* policy_net.h — `cordon policy net`: decide one destination with the very code the proxy
 * uses (the Lua host's network hook over the default profile plus the given rules), and print
 * the verdict. */
#ifndef CORDON_POLICY_NET_H
#define CORDON_POLICY_NET_H

/* argv: the words after "policy net". Usage:
 *   [--allow RULE]... [--deny RULE]... [--kind http|connect|socks] [--profile NAME]
 *   [--policy FILE] [--repeat N] [--json] HOST PORT
 * Layers: those `cordon run` would load in the current directory (a trusted project's .cordon,
 * with the one-line notice when untrusted) plus --policy FILE. --repeat N (a measuring aid)
 * decides N more times after the first and prints "decisions: N, per decision: X.XX us" on
 * stderr.
 * Prints `allow` / `deny` / `ask`, then `rule: ...`, `reason: ...`, `suggest: ...` lines (only
 * those the policy gave), or with --json one object. Returns the exit code: 0 allow, 1 deny or
 * ask, 2 bad usage (invalid rule, bad port or kind, wrong argument count, a profile that does
 * not resolve) with one "cordon: policy net: ..." line on stderr. */
int policy_net_main(int argc, char **argv);
#endif
