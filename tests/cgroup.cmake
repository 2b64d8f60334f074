# The default worker count under cgroup CPU quotas (src/platform.c), label "cgroup": one entry
# per case of tests/test_cgroup.c. "real" makes a cgroup under /sys/fs/cgroup and exits 77
# (skipped, with the reason printed) where the machine does not allow it.
foreach(c v2_nested malformed missing v1 mount_root real)
  ws_add_test(test_cgroup SOURCES test_cgroup.c TIMEOUT 120 LABELS cgroup ARGS ${c})
endforeach()
set_tests_properties(test_cgroup_real PROPERTIES SKIP_RETURN_CODE 77)
