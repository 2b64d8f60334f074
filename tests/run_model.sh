#!/usr/bin/env bash
# Runs a GenMC model under RC11 with liveness checking.
#   run_model.sh GENMC SRC_DIR MODEL.c pass|fail [clang -D options...]
# pass: the checker must verify the model; fail: it must report an error (a weakened model,
# which proves the check can fail). Exit 77 (ctest: skipped) when GENMC is not installed.
set -u
genmc=$1 src=$2 model=$3 expect=$4
shift 4
if [[ ! -x $genmc ]]; then
  echo "SKIPPED: GenMC not found at $genmc (the model is not checked)"
  exit 77
fi
out=$("$genmc" --rc11 --check-liveness --disable-estimation -- -I"$src" "$@" "$model" 2>&1)
status=$?
echo "$out" | grep -E "Error|violation|Non-terminating|executions explored|blocked executions|wall-clock"
if [[ $expect == pass ]]; then
  if ((status == 0)) && grep -q "Verification complete" <<<"$out"; then
    echo "model verified, as expected"
    exit 0
  fi
  echo "FAIL: the model should have been verified"
  echo "$out" | head -60
  exit 1
fi
if ((status != 0)) && grep -q "Verification unsuccessful" <<<"$out"; then
  echo "the weakened model fails, as expected"
  exit 0
fi
echo "FAIL: the weakened model should have failed"
exit 1
