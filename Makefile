# The commands of the README: `make run` and `make test` install what is missing (`make run`
# only what the build and the tour need, `make test` what the tests need too), configure and
# build with CMake, then run the tour or the whole suite under ctest; `make install`
# copies the build to PREFIX (DESTDIR=/staging prepends a staging root, as packagers expect).
# `make lint` (luacheck) runs in CI before the tests.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
PREFIX     ?= /usr/local
# The MCP TypeScript SDK the `cordon mcp` spec drives it with, from the npm registry at the
# version spec/fixtures/mcp/package-lock.json pins; never committed (the build tree's).
NPM_PREFIX ?= build-deps/npm
# The Kubernetes API's OpenAPI schema as the npm package kubernetes-models carries it, at the
# version deploy/kubernetes/schema/package-lock.json pins: the pod spec's offline check
# (deploy/kubernetes/schema/validate.mjs); never committed.
K8S_SCHEMA ?= build-deps/k8s-schema
# Debian 12 packages (third_party/README.md says why), each list installed when missing by
# build-aux/apt-need.sh. RUN_PACKAGES: what `make build` and `make run` need, the build and the
# programs the tour (docs/tour.sh) runs inside the sandbox; nothing that starts a daemon.
RUN_PACKAGES  := cmake gcc make pkg-config lua5.4 liblua5.4-dev libseccomp-dev libmicrohttpd-dev \
                 libssl-dev git curl python3 procps
# TEST_PACKAGES: what only the tests, the lint and the benchmarks need (nftables: nft(8), with
# which a spec reads the transparent mode's rule, which init itself sends over netlink,
# docs/network-rules.md; apparmor: the parser that checks dist/apparmor/cordon; openssh-server
# and tinyproxy: the specs start their own, apt-need.sh keeps apt from starting the services).
# Node's npm is checked as a command (it may come from elsewhere than Debian's npm package).
# mypy: a spec type-checks the Python client (py.typed) and a program using its options.
# golang-go and default-jdk-headless: a Go and a Java client reach a credential's host through TLS
# termination (spec/04-engine/run_tls_spec.lua; the JDK brings ca-certificates-java's store).
TEST_PACKAGES := lua-cjson lua-busted lua-check iproute2 util-linux bubblewrap hyperfine sudo \
                 openssh-client openssh-server openssl tinyproxy nftables ccache python3-venv \
                 podman runc debootstrap gnupg gpg-agent apparmor zsh mypy golang-go \
                 default-jdk-headless
# BUILD_TESTING for CMake (the C units and the specs, which need busted at configure time):
# ON where busted is installed, so `make build` works with RUN_PACKAGES alone; `make test`
# passes ON.
TESTING ?= $$(command -v busted >/dev/null 2>&1 && echo ON || echo OFF)

# `make profile-keys` rewrites lua/cordon/profile_keys.lua from engine/sandbox/profile_keys.c's
# table (the build fails while they differ).
.PHONY: all deps run-deps client-deps build run lint profile-keys test test-asan test-kernels bench install clean \
        container-image deb image

all: build

run-deps:
	@sh build-aux/apt-need.sh $(RUN_PACKAGES)

deps: run-deps
	@sh build-aux/apt-need.sh $(TEST_PACKAGES)
	@command -v npm >/dev/null || sh build-aux/apt-need.sh nodejs npm
	@if [ ! -f $(NPM_PREFIX)/node_modules/@modelcontextprotocol/sdk/package.json ] || \
	    ! cmp -s spec/fixtures/mcp/package-lock.json $(NPM_PREFIX)/package-lock.json; then \
	  echo "installing: @modelcontextprotocol/sdk (npm, into $(NPM_PREFIX))"; \
	  mkdir -p $(NPM_PREFIX) && \
	  cp spec/fixtures/mcp/package.json spec/fixtures/mcp/package-lock.json $(NPM_PREFIX)/ && \
	  npm ci --prefix $(NPM_PREFIX) --no-audit --no-fund --silent; \
	fi
	@if ! cmp -s deploy/kubernetes/schema/package-lock.json $(K8S_SCHEMA)/package-lock.json; then \
	  echo "installing: kubernetes-models (npm, into $(K8S_SCHEMA))"; \
	  mkdir -p $(K8S_SCHEMA) && \
	  cp deploy/kubernetes/schema/package.json deploy/kubernetes/schema/package-lock.json $(K8S_SCHEMA)/ && \
	  (cd $(K8S_SCHEMA) && npm ci --no-audit --no-fund --silent --loglevel=error) || \
	    { rm -f $(K8S_SCHEMA)/package-lock.json; exit 1; }; \
	fi

# tsc and Node's types for checking the TypeScript client's declarations (clients/typescript;
# spec/04-engine/session_clients_spec.lua runs it), from the npm registry into build-deps/ (never
# committed), at the versions of clients/typescript/package.json. Skipped when present.
client-deps:
	@[ -f build-deps/node_modules/typescript/package.json ] && [ -f build-deps/node_modules/@types/node/package.json ] || \
	  npm install --prefix build-deps --no-save --no-audit --no-fund --loglevel=error \
	    $$(node -e 'const d=require("./clients/typescript/package.json").devDependencies; \
	      console.log(Object.entries(d).map(([k,v])=>k+"@"+v).join(" "))')

build: run-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=$(TESTING) >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

profile-keys: build
	cmake --build $(BUILD) --target profile_keys_lua

run: build
	@sh docs/tour.sh $(BUILD)/cordon

# luacheck over every Lua file (settings and the policy environment's names: .luacheckrc).
lint: deps
	luacheck --no-color --quiet lua policies profiles spec

# The Debian image spec/04-engine/run_container_spec.lua runs cordon in: debootstrapped once per
# machine (a minute or two, cached in build-deps/), here rather than within the specs' time limit.
container-image: deps
	@if [ "$$(id -u)" = 0 ]; then \
	  sh spec/fixtures/container/build-image.sh build-deps/container-rootfs cordon-test-image; \
	else echo "make: not root: no container image (its spec is skipped)"; fi

test: deps client-deps container-image pod-image
	@$(MAKE) --no-print-directory build TESTING=ON
	ctest --test-dir $(BUILD) --output-on-failure -j1

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs it once).
test-asan: deps client-deps container-image
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DENABLE_ASAN_UBSAN=ON -DCI_BUILD=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j1

# The kernel matrix (docs/kernels.md): Debian's cloud kernels of bullseye (5.10), bookworm (6.1)
# and trixie (6.12), fetched by package name through a private apt state, each booted under qemu
# (TCG, never KVM) on a debootstrapped Debian 12 root file system with this build installed, and
# this machine's kernel: spec/kernels/smoke.sh as root and as an unprivileged user, one table per
# kernel. Everything is cached in build-deps-kernels/. Needs root.
KERNEL_PACKAGES := qemu-system-x86 busybox-static cpio e2fsprogs debootstrap kmod xz-utils \
                   debian-archive-keyring
KERNELS         ?= host bullseye bookworm trixie

test-kernels: deps
	@if [ "$$(id -u)" != 0 ]; then echo "make: test-kernels boots qemu images it builds as root: run as root" >&2; exit 1; fi
	@sh build-aux/apt-need.sh --no-install-recommends $(KERNEL_PACKAGES)
	@$(MAKE) --no-print-directory build TESTING=ON
	sh spec/kernels/matrix.sh $(BUILD) $(KERNELS)

bench: deps build
	bash bench/startup.sh $(BUILD)/cordon
	bash bench/proxy.sh $(BUILD)/cordon
	bash bench/policy.sh $(BUILD)/cordon
	bash bench/session.sh $(BUILD)/cordon
	bash bench/output.sh $(BUILD)/cordon
	bash bench/rename.sh $(BUILD)/cordon
	bash bench/home_beside.sh $(BUILD)/cordon
	bash bench/remove.sh $(BUILD)/cordon
	bash bench/create.sh $(BUILD)/cordon
	bash bench/review.sh $(BUILD)/cordon

# The tree the Debian package has too: PREFIX/bin/cordon, PREFIX/libexec/cordon/cordon-session,
# PREFIX/share/cordon/{policies,profiles} (where the installed cordon finds them, not in this
# checkout), the manual pages and the bash and zsh completions (CMakeLists.txt's install
# rules). CMake's install reads DESTDIR from the environment: pass make's on.
install: build
	DESTDIR='$(DESTDIR)' cmake --install $(BUILD) --prefix '$(PREFIX)'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# The Debian package (debian/), built with dpkg-buildpackage from a copy of the checkout's
# files (tracked and new, build-deps/ left out) in $(DEB_DIR), where the .deb lands; then
# lintian, which fails on an error; then debian/check-install.sh installs the .deb into a
# fresh Debian 12 container and runs it (skipped, saying why, where it cannot: exit 77).
DEB_DIR      ?= $(BUILD)/deb
DEB_PACKAGES := debhelper dh-apparmor dpkg-dev lintian cmake gcc make pkg-config lua5.4 liblua5.4-dev \
                libseccomp-dev libmicrohttpd-dev libssl-dev podman runc debootstrap
deb:
	@sh build-aux/apt-need.sh $(DEB_PACKAGES)
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/cordon
	git ls-files -co --exclude-standard | grep -v '^build-deps$$' | tar -cf - -T - | tar -xf - -C $(DEB_DIR)/cordon
	cd $(DEB_DIR)/cordon && DEB_BUILD_OPTIONS="parallel=$(JOBS)" dpkg-buildpackage -us -uc -b
	lintian --fail-on error $(DEB_DIR)/cordon_*.changes
	@rc=0; sh debian/check-install.sh $$(ls $(DEB_DIR)/cordon_*_*.deb | grep -v dbgsym) || rc=$$?; \
	if [ $$rc = 77 ]; then echo "make: the package was built but not tried in a container (above: why)"; \
	elif [ $$rc != 0 ]; then exit $$rc; fi

# The image cordon's pod runs (deploy/kubernetes/cordon-pod.yaml): localhost/cordon:VERSION and
# :latest, made without any registry from the Debian 12 root file system of the container specs
# (debootstrap, cached in build-deps/container-rootfs) and the package of `make deb` (built when
# $(DEB_DIR) has none of this version); kept when neither the package nor the scripts changed.
# To push it to a team's registry: podman tag localhost/cordon:VERSION REGISTRY/cordon:VERSION,
# then podman push REGISTRY/cordon:VERSION (docs/fleet.md).
VERSION := $(shell grep -m1 -o 'cordon VERSION [0-9.]*' CMakeLists.txt | cut -d' ' -f3)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
image:
	@[ "$$(id -u)" = 0 ] || { echo "make: image needs root (rootful podman, debootstrap)" >&2; exit 1; }
	@[ -f $(DEB_DIR)/cordon_$(VERSION)_$(DEB_ARCH).deb ] || $(MAKE) --no-print-directory deb
	sh deploy/kubernetes/build-image.sh $(DEB_DIR)/cordon_$(VERSION)_$(DEB_ARCH).deb build-deps/container-rootfs

# `make test` as root builds the image for the pod's spec (spec/04-engine/pod_podman_spec.lua);
# otherwise that spec is skipped and so is this.
pod-image: deps
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory image; \
	else echo "make: not root: no pod image (its spec is skipped)"; fi

# libFuzzer targets for the proxy's parsers and the case-file JSON reader (engine/fuzz/README.md),
# each run for a bounded time from the seed corpus in engine/fuzz/corpus/<target>/; new inputs
# go to $(FUZZ_BUILD).
# Kept out of the CMake build: they need clang's libFuzzer, the product does not.
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
FUZZ_BUILD    ?= build-fuzz
FUZZ_CC       ?= clang-14
FUZZ_CFLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -Iengine
# Each target is NAME:SOURCES, the sources comma-separated.
FUZZ_TARGETS  := http_request:engine/base/http_parse.c socks5:engine/proxy/socks5.c rules: \
                 dns:engine/proxy/dns_msg.c sni:engine/proxy/sni_parse.c \
                 cred_rewrite:engine/proxy/cred_rewrite.c,engine/base/http_parse.c \
                 cred_scan:engine/proxy/cred_scan.c,engine/proxy/cred_rewrite.c,engine/base/http_parse.c \
                 json_read:engine/base/json_read.c,engine/base/json_write.c,engine/base/log.c \
                 tls_mint:engine/proxy/tls_mint.c,engine/proxy/tls_ca.c \
                 git_config:engine/base/git_config.c init_wire:engine/sandbox/init_wire.c,engine/base/fdpass.c \
                 record:engine/base/record.c,engine/policy/profile_cache.c,engine/policy/trust.c,engine/base/cordon_dirs.c,engine/base/util.c,engine/base/log.c,engine/base/sha256.c,engine/base/json_read.c,engine/base/json_write.c
# The rule-language target runs lua/cordon/allowlist.lua in a plain Lua state; the kept files'
# target reads the profile cache's table dumps into one.
# The certificate minting target links Debian's OpenSSL.
FUZZ_TLS_FLAGS   := -lssl -lcrypto
FUZZ_RULES_FLAGS := -I/usr/include/lua5.4 -DCORDON_LUA_DIR=\"$(CURDIR)/lua\" -llua5.4

.PHONY: fuzz
fuzz:
	@sh build-aux/apt-need.sh $(FUZZ_PACKAGES)
	@mkdir -p $(FUZZ_BUILD)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  name=$${t%%:*}; src=$$(echo "$${t#*:}" | tr , ' '); \
	  echo "fuzz: building fuzz_$$name"; \
	  extra=; case $$name in rules|record) extra='$(FUZZ_RULES_FLAGS)';; tls_mint) extra='$(FUZZ_TLS_FLAGS)';; esac; \
	  eval $(FUZZ_CC) $(FUZZ_CFLAGS) -o $(FUZZ_BUILD)/fuzz_$$name engine/fuzz/fuzz_$$name.c $$src $$extra; \
	done
	@set -e; for t in $(FUZZ_TARGETS); do \
	  name=$${t%%:*}; mkdir -p $(FUZZ_BUILD)/corpus-$$name; \
	  echo "fuzz: running fuzz_$$name for $${FUZZ_SECONDS:-30}s"; \
	  ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_$$name -max_total_time=$${FUZZ_SECONDS:-30} \
	    -max_len=65536 -timeout=10 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	    $$([ -f engine/fuzz/$$name.dict ] && echo -dict=engine/fuzz/$$name.dict) \
	    $(FUZZ_BUILD)/corpus-$$name engine/fuzz/corpus/$$name; \
	done
