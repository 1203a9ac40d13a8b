# The README's two commands: `make run` and `make test`. Both install what is
# missing (scripts/install-deps, as root or via sudo), then build.
BUILD     ?= build
BUILDTYPE ?= RelWithDebInfo
WERROR    ?= $(if $(CI),ON,OFF)
ARGS      ?=
JOBS      ?= $(shell nproc)
# ccache, where the machine has it, makes rebuilds of other checkouts cheap.
LAUNCHER  ?= $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

ASAN_BUILD   ?= build-asan
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
# Every sanitizer report fails the run; leaks included.
SANITIZER_ENV = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: deps configure build test test-asan fuzz run bench bench-store bench-tls mutants clean

deps:
	@scripts/install-deps

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILDTYPE) -DGISTPROXY_WERROR=$(WERROR) $(LAUNCHER)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# The whole suite (unit, integration against the real binary, SDKs) built
# with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGISTPROXY_SANITIZE=ON -DGISTPROXY_WERROR=$(WERROR) $(LAUNCHER)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SANITIZER_ENV) ctest --output-on-failure --timeout 600 -j $(JOBS)

# libFuzzer targets (clang, ASan + UBSan), each run FUZZ_SECONDS on its corpus.
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DGISTPROXY_FUZZ=ON -DGISTPROXY_WERROR=$(WERROR)
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	$(SANITIZER_ENV) scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

run: build
	$(BUILD)/gistproxy serve $(ARGS)

bench: build
	scripts/bench $(BUILD)

bench-store: build
	scripts/bench-store $(BUILD)

# gistproxy's TLS listener beside nginx's (HTTP/1.1 and h2 over TLS), h2load.
bench-tls: build
	scripts/bench-tls $(BUILD)

# One-line defects the suite must catch (scripts/mutants.txt): one
# incremental build per mutant, so not part of CI; run before a stop.
mutants: build
	scripts/mutants $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
