# folio: two commands on a fresh Debian 12 machine.
#   make run   install what is missing, build, start NATS + ingest + edge,
#              publish examples/vault and print the URL to open (Ctrl-C stops)
#   make test  build and run every test (unit + integration)
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build test run bench clean asan

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j 1 --timeout 600

asan:
	@$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DFOLIO_SANITIZE=ON"

run: build
	@bash scripts/run-local.sh $(BUILD)

bench: build
	@FOLIO_BENCH_DEPS=1 bash scripts/install-deps.sh
	@bash loadtest/push-bench.sh $(BUILD)
	@bash loadtest/serve-bench.sh $(BUILD)
	@bash loadtest/storage-bench.sh $(BUILD)
	@QUICK=1 bash loadtest/search-bench.sh

clean:
	rm -rf build build-asan
