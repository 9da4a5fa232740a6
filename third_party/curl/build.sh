#!/usr/bin/env bash
# third_party/curl/build.sh OUT — a static libcurl for the `cordon` CLI, built from Debian 12's
# own curl source package (the version of the installed libcurl4-openssl-dev, Debian's patches
# applied), with HTTP over Unix sockets and nothing else: no TLS, no other protocols, no
# compression, no IDN. Debian ships libcurl.a only together with 30-odd shared libraries it
# needs (OpenSSL, GnuTLS, Kerberos, LDAP, ...); loading them costs more than a whole `bash -c
# true` here, and every `cordon exec` would pay it. Why and how: third_party/README.md.
#
# Leaves OUT/include/curl/*.h and OUT/lib/libcurl.a; does nothing when OUT already holds this
# build (OUT/.stamp). The source comes through apt from deb.debian.org (apt checks it against
# the archive's signed index); needs dpkg-dev for dpkg-source.
set -euo pipefail

out=$1
version=$(dpkg-query -W -f='${Version}' libcurl4-openssl-dev)
want="curl $version $(sha256sum "$0" | cut -c1-16)"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want" ]; then
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/parts"
cat >"$work/parts/debian-src.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt=(apt-get -qq -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/parts"
     -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
echo "curl: fetching the source of curl $version (Debian 12)"
"${apt[@]}" update
cd "$work"
# The installed library's version first; the archive's current one if that is gone.
"${apt[@]}" source --download-only "curl=$version" >/dev/null 2>&1 ||
    "${apt[@]}" source --download-only curl >/dev/null
dpkg-source --no-check -x curl_*.dsc src >/dev/null

echo "curl: building a static libcurl (HTTP over Unix sockets only; a minute or two)"
cd src
./configure --quiet --disable-shared --enable-static --with-pic \
    --without-ssl --without-zlib --without-brotli --without-zstd --without-libpsl \
    --without-libidn2 --without-nghttp2 --without-libssh2 --without-librtmp --without-libgsasl \
    --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp --disable-dict \
    --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb --disable-smtp \
    --disable-gopher --disable-mqtt --disable-manual --disable-ntlm --disable-cookies \
    --disable-alt-svc --disable-hsts --disable-doh --disable-netrc --disable-proxy \
    --disable-ipv6 --disable-threaded-resolver --disable-verbose --disable-crypto-auth \
    --disable-tls-srp --without-ca-bundle --without-ca-path >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; exit 1; }
make -s -j"$(nproc)" -C lib >>"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/include/curl" "$out/lib"
cp include/curl/*.h "$out/include/curl/"
cp lib/.libs/libcurl.a "$out/lib/"
echo "$want" >"$out/.stamp"
echo "curl: $out/lib/libcurl.a"
