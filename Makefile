# The two commands of the README: `make run` and `make test`. Both install what is missing,
# configure and build with CMake, then run the tour or the whole suite under ctest.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
# Debian 12 packages the build and the tests need (third_party/README.md says why).
PACKAGES := cmake gcc make pkg-config lua5.4 liblua5.4-dev libseccomp-dev libmicrohttpd-dev \
            libcurl4-openssl-dev lua-cjson lua-busted git curl python3 procps iproute2 \
            bubblewrap hyperfine util-linux sudo openssh-client

.PHONY: all deps build run test test-asan bench clean

all: build

deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make: run as root to install: $$missing" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

run: build
	@sh docs/tour.sh $(BUILD)/cordon

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j1

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs it once).
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DENABLE_ASAN_UBSAN=ON -DCI_BUILD=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j1

bench: build
	sh bench/startup.sh $(BUILD)/cordon

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
