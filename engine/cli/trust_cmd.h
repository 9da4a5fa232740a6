/* trust_cmd.h — `cordon trust [--revoke] [DIR]`: review and pin a project's .cordon policy
 * files (what each one changes, its SHA-256), or forget them. The mechanism (the scan, the
 * record, the comparison) is policy/trust.h's; this is the command that prints. */
#ifndef CORDON_TRUST_CMD_H
#define CORDON_TRUST_CMD_H
/* argv: the words after "trust". Exit code: 0 trusted (or revoked), 1 not trusted (a file that
 * is refused, a policy.lua that does not load, a record that cannot be written), 2 bad usage
 * with one "cordon: trust: ..." line naming the usage. */
int trust_cmd_main(int argc, char **argv);
#endif
