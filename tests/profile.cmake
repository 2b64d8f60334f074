ws_add_test(test_profile SOURCES test_profile.c TIMEOUT 300 LABELS profile)
