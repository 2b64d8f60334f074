# The recycled job records of src/records.c (label: external): reuse through a worker's list and
# the pool's stack, the trim of an idle pool's stack, the lists of exiting threads, and
# exactly-once under churn with more workers than cores.
foreach(mode reuse trim exit)
  ws_add_test(test_records SOURCES test_records.c TIMEOUT 60 LABELS external ARGS ${mode})
endforeach()
foreach(p 1 2 4)
  ws_add_test(test_records SOURCES test_records.c TIMEOUT 180 LABELS external ARGS churn ${p})
endforeach()
