/* policy_detect.h — `cordon policy detect`: run refusal detection and the escalation decision
 * on a recorded command result, with the very code the controller runs after a foreground
 * command (the Lua host's `refusal` and `escalate` hooks over the resolved profile). */
#ifndef CORDON_POLICY_DETECT_H
#define CORDON_POLICY_DETECT_H

/* argv: the words after "policy detect". Usage:
 *   --input FILE [--json] [--profile NAME]
 * FILE holds one JSON object (lua/HOOKS.md "cordon policy detect"). Prints one line per
 * refusal ("KIND PATH: REASON") or "no refusal", or with --json exactly
 * {"ask":BOOL,"refusals":[{"kind":..,"path":..,"line":..,"reason":..}]}. Returns 0; 1 when a
 * policy failed (detection reports no refusal, the message on stderr); 2 for bad usage or a bad
 * case file (one "cordon: policy detect: ..." line naming the field or the byte offset). */
int policy_detect_main(int argc, char **argv);
#endif
