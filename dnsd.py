# dnsd.py ADDR: answers every A query with 127.0.0.2 at once (a local resolver's floor).
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
while True:
    m, a = s.recvfrom(4096)
    if len(m) < 12: continue
    r = m[:2] + b"\\x81\\x80" + m[4:6] + b"\\x00\\x01\\x00\\x00\\x00\\x00" + m[12:] + b"\\xc0\\x0c\\x00\\x01\\x00\\x01\\x00\\x00\\x00\\x1e\\x00\\x04\\x7f\\x00\\x00\\x02"
    s.sendto(r, a)
