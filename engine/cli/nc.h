/* nc.h — `cordon nc HOST PORT`: a stdin/stdout relay to HOST:PORT through the sandbox's SOCKS5
 * listener, for ssh's ProxyCommand and anything else that speaks raw TCP.
 * Owns only the client side of one SOCKS5 CONNECT and the relay; uses the proxy's listener on
 * the sandbox loopback (sandbox/init.h). Runs inside the sandbox; the proxy judges HOST:PORT as
 * every SOCKS request is judged, by the `tcp://` rules. Must never connect anywhere but the
 * sandbox's own proxy, or resolve HOST itself (the proxy resolves, and judges the name). */
#ifndef CORDON_NC_H
#define CORDON_NC_H
/* argv[0] is the first word after "nc". Returns the exit status. */
int nc_main(int argc, char **argv);
#endif
