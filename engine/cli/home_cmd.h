/* home_cmd.h — `cordon home [--diff | --reset] [DIR]`: where the workspace DIR's copy-on-write
 * home layer is and how big; what commands wrote there (--diff: added, changed, removed); or
 * discard it (--reset, refused while a sandbox of the workspace uses it). The layer itself is
 * sandbox/home_view.h's. */
#ifndef CORDON_HOME_CMD_H
#define CORDON_HOME_CMD_H
/* argv: the words after "home". Exit code: 0 done, 1 failed (one "cordon: home: ..." line),
 * 2 bad usage. */
int home_cmd_main(int argc, char **argv);
#endif
