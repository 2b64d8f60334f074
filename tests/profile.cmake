ws_add_test(test_profile SOURCES test_profile.c TIMEOUT 300 LABELS profile)
# The same shapes on a deterministic clock: work and span exact to the nanosecond, and a stall
# found (tests/test_profile_exact.c).
ws_add_test(test_profile_exact SOURCES test_profile_exact.c TIMEOUT 300 LABELS profile)
# WS_PROFILE_CYCLES=1 behind its runtime check: the PMU's cycles where there is one, the
# detector with a line on stderr where there is none (tests/test_profile_cycles.c).
ws_add_test(test_profile_cycles SOURCES test_profile_cycles.c TIMEOUT 120 LABELS profile)
