/* policy_test.h — `cordon policy test [DIR]`: the project's own table-driven policy cases,
 * DIR/.cordon/tests/NAME.json, run against the layers `cordon run` would load with the project
 * layer loaded as if trusted (the project is testing its own rules). Owns the case format and
 * the report; decisions are the hooks' (lh_network_decide, lh_resolve_sandbox).
 * Must never: skip a case silently, or pass a case whose decision failed. */
#ifndef CORDON_POLICY_TEST_H
#define CORDON_POLICY_TEST_H

/* Exit code: 0 all passed, 1 a case failed (or a layer did not load), 2 bad usage or a case
 * file that is not valid (file and offset named). */
int policy_test_main(int argc, char **argv);
#endif
