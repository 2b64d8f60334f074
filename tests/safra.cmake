# The termination rules of worksteal_mpi (src/mpi/safra.c) under random simulated schedules.
# No MPI is involved, so this runs in every build, whether MPI is installed or not.
ws_add_test(test_mpi_safra SOURCES test_mpi_safra.c ${PROJECT_SOURCE_DIR}/src/mpi/safra.c
            TIMEOUT 300 LABELS mpi)
target_include_directories(test_mpi_safra PRIVATE ${PROJECT_SOURCE_DIR}/src/mpi)

# The progress thread's back-off (src/mpi/backoff.h): its sequence, and the bound on the steal
# requests of an idle rank. No MPI either.
ws_add_test(test_mpi_backoff SOURCES test_mpi_backoff.c TIMEOUT 60 LABELS mpi)
target_include_directories(test_mpi_backoff PRIVATE ${PROJECT_SOURCE_DIR}/src/mpi)
