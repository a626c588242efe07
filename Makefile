# folio: two commands on a fresh Debian 12 machine.
#   make run   install what is missing, build, start NATS + ingest + edge,
#              publish examples/vault and print the URL to open (Ctrl-C stops)
#   make test  build and run every test (unit + integration)
#   make fuzz  build the libFuzzer targets with clang into build-fuzz and run
#              each for FUZZ_SECONDS (default 60; tests/fuzz/README.md)
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

FUZZ_SECONDS ?= 60

.PHONY: all deps build test run bench clean asan fuzz

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

fuzz: deps
	@CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFOLIO_FUZZ=ON >/dev/null
	@cmake --build build-fuzz --target fuzz -j $(JOBS)
	@bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

run: build
	@bash scripts/run-local.sh $(BUILD)

bench: build
	@FOLIO_BENCH_DEPS=1 bash scripts/install-deps.sh
	@bash loadtest/push-bench.sh $(BUILD)
	@bash loadtest/push-bench.sh $(BUILD) --growth 2000
	@bash loadtest/watch-bench.sh $(BUILD)
	@bash loadtest/propagation-bench.sh $(BUILD)
	@bash loadtest/serve-bench.sh $(BUILD)
	@bash loadtest/storage-bench.sh $(BUILD)
	@QUICK=1 bash loadtest/search-bench.sh
	@python3 loadtest/plots.py

clean:
	rm -rf build build-asan build-fuzz
