# The README's two commands: `make run` and `make test`. Both install what is
# missing (scripts/install-deps, as root or via sudo), then build.
BUILD     ?= build
BUILDTYPE ?= RelWithDebInfo
WERROR    ?= $(if $(CI),ON,OFF)
ARGS      ?=
JOBS      ?= $(shell nproc)

.PHONY: deps configure build test run bench clean

deps:
	@scripts/install-deps

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILDTYPE) -DGISTPROXY_WERROR=$(WERROR)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 300 -j 1

run: build
	$(BUILD)/gistproxy serve $(ARGS)

bench: build
	scripts/bench $(BUILD)

clean:
	rm -rf $(BUILD)
