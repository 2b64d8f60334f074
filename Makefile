# The two commands of the README:
#   make demo   builds (Release) and runs the benchmark demo
#   make test   builds and runs every test in three builds: normal, ThreadSanitizer, ASan+UBSan
# Only gcc, cmake and make are assumed.

JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
CTEST_FLAGS ?= --output-on-failure --no-tests=error -j $(JOBS)
DEMO_ARGS ?=

.PHONY: all build demo test test-normal test-tsan test-asan format format-check install clean

all: build

build:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build build -j $(JOBS)

# The demo builds only the benchmark programs it runs, so that a fresh clone shows results soon.
demo:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build build -j $(JOBS) --target ws-bench ws-bench-locked bench_loop bench_external
	./build/bench/ws-bench $(DEMO_ARGS)

test: test-normal test-tsan test-asan

test-normal:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=ON
	$(CMAKE) --build build -j $(JOBS)
	$(CTEST) --test-dir build $(CTEST_FLAGS)

test-tsan:
	$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWS_SANITIZE=thread -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=OFF
	$(CMAKE) --build build-tsan -j $(JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(CTEST) --test-dir build-tsan $(CTEST_FLAGS)

test-asan:
	$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWS_SANITIZE=address -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=OFF
	$(CMAKE) --build build-asan -j $(JOBS)
	ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" $(CTEST) --test-dir build-asan $(CTEST_FLAGS)

format:
	clang-format -i include/*.h src/*.[ch] tests/*.[ch] tests/*.cpp bench/*.[ch] examples/*.c

format-check:
	clang-format --dry-run --Werror include/*.h src/*.[ch] tests/*.[ch] tests/*.cpp bench/*.[ch] examples/*.c

install: build
	$(CMAKE) --install build

clean:
	rm -rf build build-tsan build-asan
