# The WS_STATS=1 report: pool names and spare workers.
ws_add_test(test_stats_report SOURCES test_stats_report.c TIMEOUT 120 LABELS sched)
