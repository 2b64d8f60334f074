# Placement, victim order by topology level, pinning and thread names (src/topology.c), label
# "topology": one entry per case of tests/test_topology.c. The synthetic machines come from
# HWLOC_SYNTHETIC, set by the test itself; built without hwloc, the same cases check the
# CPU-set-only behaviour. Timeouts allow a ThreadSanitizer build with 16 workers on two cores.
foreach(c parse orders levels pin names env trace)
  ws_add_test(test_topology SOURCES test_topology.c TIMEOUT 180 LABELS topology ARGS ${c})
endforeach()
