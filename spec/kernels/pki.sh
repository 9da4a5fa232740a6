#!/bin/sh
# pki.sh — the test certificates of the smoke suite's TLS row (smoke.sh cred_tls): a CA and a
# server certificate for 127.0.0.2 it signed, each good for two days.
#
# Usage: pki.sh DIR
# Writes DIR/ca.pem, DIR/srv.pem and DIR/srv.key (EC P-256), readable by every user (they are
# throwaway test keys: the unprivileged pass's server reads srv.key). matrix.sh makes them on the
# machine, where openssl is, for the guests (their root file system has no openssl); smoke.sh
# makes them itself when run alone.
# Uses: openssl. Never: writes outside DIR.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
    -out ca.pem -days 2 -subj /CN=cordon-smoke-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key \
    -out srv.csr -subj /CN=127.0.0.2 2>/dev/null
printf 'subjectAltName=IP:127.0.0.2\n' >ip.ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 \
    -extfile ip.ext 2>/dev/null
rm -f ca.key ca.srl srv.csr ip.ext
chmod 755 "$dir"
chmod 644 ca.pem srv.pem srv.key
