# The two commands of the README:
#   make demo   builds (Release) and runs the benchmark demo
#   make test   builds and runs every test in three builds: normal, ThreadSanitizer, ASan+UBSan
# and a shorter demo, make demo-quick (the headline comparison only).
# Only gcc, cmake and make are assumed.

JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
CTEST_FLAGS ?= --output-on-failure --no-tests=error -j $(JOBS)
DEMO_ARGS ?=
# make test runs its three suites one after another, each using every core, unless there are
# enough cores (6 or more) for all three side by side with two cores each; a suite's own tests
# already keep two cores busy, so side by side only pays when the cores are there.
TEST_SUITES ?= $(shell [ $(JOBS) -ge 6 ] && echo 3 || echo 1)

.PHONY: all build demo demo-quick test test-suites test-normal test-tsan test-asan bench-check \
        format format-check install clean models mutants

all: build

build:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build build -j $(JOBS)

# The demo builds only the benchmark programs it runs, so that a fresh clone shows results soon.
demo:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_BENCH=ON
	$(CMAKE) --build build -j $(JOBS) --target ws-bench ws-bench-locked bench_loop bench_external \
	    bench_phases
	./build/bench/ws-bench $(DEMO_ARGS)

# The headline comparison only: fib and nqueens (a join per node) on every scheduler.
demo-quick:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_BENCH=ON
	$(CMAKE) --build build -j $(JOBS) --target ws-bench ws-bench-locked
	./build/bench/ws-bench --workloads fib,nqueens $(DEMO_ARGS)

# WS_TEST_LONG=1 make test runs the long stress tests at their full length (tests/test.h).
# Every suite runs whatever another's outcome (make -k); then one summary names the suites and
# tests that failed and the reason of each skipped test, and sets the exit code
# (tests/suites_summary.sh).
SUITE_DIRS = test-normal=build test-tsan=build-tsan test-asan=build-asan
test:
	@rm -f $(foreach s,$(SUITE_DIRS),$(lastword $(subst =, ,$(s)))/ws-suite-result)
	@$(MAKE) --no-print-directory -k -j $(TEST_SUITES) $(if $(filter-out 1,$(TEST_SUITES)),-O) \
	    JOBS=$$(( $(JOBS) / $(TEST_SUITES) > 0 ? $(JOBS) / $(TEST_SUITES) : 1 )) test-suites || true
	@bash tests/suites_summary.sh $(SUITE_DIRS)

test-suites: test-normal test-tsan test-asan

test-normal:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=ON
	$(CMAKE) --build build -j $(JOBS)
	CTEST=$(CTEST) bash tests/ctest_suite.sh build $(CTEST_FLAGS)

test-tsan:
	$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWS_SANITIZE=thread -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=OFF
	$(CMAKE) --build build-tsan -j $(JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" CTEST=$(CTEST) bash tests/ctest_suite.sh build-tsan $(CTEST_FLAGS)

test-asan:
	$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWS_SANITIZE=address -DWS_WERROR=ON -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=OFF
	$(CMAKE) --build build-asan -j $(JOBS)
	ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" CTEST=$(CTEST) bash tests/ctest_suite.sh build-asan $(CTEST_FLAGS)

# Not part of make test (timing on a shared machine is noisy): ratio benchmarks against
# bench/bench-baseline.txt (bench/bench-check.sh says how they are compared).
bench-check:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_BENCH=ON
	$(CMAKE) --build build -j $(JOBS) --target bench_external bench_join
	bash bench/bench-check.sh build

# Every case of the GenMC models, the long ones included (make test runs each model's cases
# that take seconds; tests/genmc_model.sh): about an hour on 2 cores.
models:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_TESTS=ON
	GENMC_LONG=1 $(CTEST) --test-dir build -L model $(CTEST_FLAGS)

# Not part of make test (an hour or more): the mutation test of the GenMC models
# (tests/mutants/README.md), e.g. make mutants MUTANTS_ARGS="-j 1 park".
MUTANTS_ARGS ?= -j $(JOBS)
mutants:
	GENMC_LONG=1 bash tests/mutants/run.sh $(MUTANTS_ARGS)

format:
	clang-format -i include/*.h include/*.hpp src/*.[ch] src/mpi/*.[ch] tests/*.[ch] tests/*.cpp bench/*.[ch] bench/lace/*.[ch] bench/*.cpp examples/*.c examples/*.cpp examples/mpi/*.[ch]

format-check:
	clang-format --dry-run --Werror include/*.h include/*.hpp src/*.[ch] src/mpi/*.[ch] tests/*.[ch] tests/*.cpp bench/*.[ch] bench/lace/*.[ch] bench/*.cpp examples/*.c examples/*.cpp examples/mpi/*.[ch]

install: build
	$(CMAKE) --install build

clean:
	rm -rf build build-tsan build-asan
