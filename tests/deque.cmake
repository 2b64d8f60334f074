# The deque suite (tests/test_deque.c): every test runs against both implementations, the
# lock-free Chase-Lev deque (lockfree) and the mutex baseline (locked); the workers' split deque
# (split) runs the tests whose contract it shares (stress, lastrace) and its own (splitseq).
foreach(impl lockfree locked)
  foreach(t sequential growth enomem)
    ws_add_test(test_deque SOURCES test_deque.c ARGS ${t} ${impl} TIMEOUT 300 LABELS deque)
  endforeach()
  # Exactly-once under contention, with more threads than this machine's 2 cores.
  foreach(thieves 1 2 4)
    ws_add_test(test_deque SOURCES test_deque.c ARGS stress ${impl} ${thieves}
                TIMEOUT 300 LABELS deque stress)
  endforeach()
  foreach(thieves 1 3)
    ws_add_test(test_deque SOURCES test_deque.c ARGS lastrace ${impl} ${thieves}
                TIMEOUT 300 LABELS deque stress)
  endforeach()
endforeach()
ws_add_test(test_deque SOURCES test_deque.c ARGS splitseq split TIMEOUT 60 LABELS deque)
ws_add_test(test_deque SOURCES test_deque.c ARGS shrink split TIMEOUT 60 LABELS deque)
ws_add_test(test_deque SOURCES test_deque.c ARGS requests split TIMEOUT 60 LABELS deque)
foreach(thieves 1 2 4)
  ws_add_test(test_deque SOURCES test_deque.c ARGS stress split ${thieves}
              TIMEOUT 300 LABELS deque stress)
endforeach()
foreach(thieves 1 3)
  ws_add_test(test_deque SOURCES test_deque.c ARGS lastrace split ${thieves}
              TIMEOUT 300 LABELS deque stress)
endforeach()
