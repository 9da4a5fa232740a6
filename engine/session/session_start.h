/* Runs in: controller (cordon-session: the starter, then the controller it forks). */
/* session_start.h — `cordon session start NAME [OPTIONS] [--detach]` (see session_start.c). */
#ifndef CORDON_SESSION_START_H
#define CORDON_SESSION_START_H
/* argv[0] is the first word after "start". Returns the starter's exit status. */
int session_start_main(int argc, char **argv);
#endif
