/* nc.h — `cordon nc HOST PORT`: a stdin/stdout relay to HOST:PORT through the sandbox's HTTP
 * proxy (a CONNECT tunnel), for ssh's ProxyCommand and anything else that speaks raw TCP.
 * Runs inside the sandbox; the proxy decides whether HOST:PORT may be reached. */
#ifndef CORDON_NC_H
#define CORDON_NC_H
/* argv[0] is the first word after "nc". Returns the exit status. */
int nc_main(int argc, char **argv);
#endif
