#!/bin/sh
# The documentation check: docs/api.md and include/worksteal.h name the same API, and the
# environment variables the library reads are documented.
#   - every public function of the header (WS_API or static inline, a ws_ name) is declared in
#     a code block of docs/api.md, as `ws_name(`;
#   - every ws_ / WS_ name docs/api.md mentions exists in the header, or is an environment
#     variable the library reads;
#   - every environment variable the library reads ("WS_..." in src/) is in docs/api.md
#     and in the README's environment table;
#   - every example (examples/*.c and *.cpp, each built and run by the tests) is named in the
#     README;
#   - defaults: each "(default N)" of a ws_mpi_config field (include/worksteal_mpi.h) is the
#     value src/mpi/run.c fills in, and docs/distributed.md's "`field` (N" agrees; the default
#     stack size's rule (src/pool.c) and the trace ring (src/trace.c) are the ones the header and
#     the docs state;
#   - required fields: the ws_mpi_work fields run.c rejects when unset are the ones the header
#     marks "required";
#   - every trace event src/trace.c writes is a row of docs/profiling.md's event table;
#   - no doc but docs/benchmarks.md mentions a machine's load or a date (file:line for each).
# On a failure it says what to add or fix, and where. usage: doc_check.sh SOURCE_DIR
set -eu
src=$1
header=$src/include/worksteal.h
api=$src/docs/api.md
readme=$src/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The header's public functions: declarations after WS_API or `static inline`, on one line or
# several (the header is joined into one line first).
tr '\n' ' ' < "$header" |
    grep -oE '(WS_API|static inline)[^;{}()]*[^a-zA-Z0-9_]ws_[a-z][a-zA-Z0-9_]*[[:space:]]*\(' |
    grep -oE 'ws_[a-z][a-zA-Z0-9_]*[[:space:]]*\($' | sed 's/[[:space:](]//g' | sort -u > "$tmp/functions"
# Every identifier of the header (functions, types, fields, macros).
grep -oE '\b(ws|WS)_[A-Za-z0-9_]+' "$header" | sort -u > "$tmp/header_names"
# The environment variables the library reads: the "WS_..." string literals of src/ (getenv
# calls and the messages that name a variable they ignore).
cat "$src"/src/*.c | grep -oE '"WS_[A-Z0-9_]+"' | tr -d '"' | sort -u > "$tmp/env"

# ... and src/pool.c's list of them (WS_ENV_VARIABLES), which the unknown-variable warning uses:
# every variable read in src/ or src/mpi/ must be on it.
sed -n '/^#define WS_ENV_VARIABLES/,/^[^ #]/p' "$src"/src/pool.c | grep -oE 'X\(WS_[A-Z0-9_]+\)' |
    sed -E 's/X\((.*)\)/\1/' | sort -u > "$tmp/env_list"
cat "$src"/src/*.c "$src"/src/mpi/*.c | grep -oE '"WS_[A-Z0-9_]+"' | tr -d '"' | sort -u |
    while read -r var; do
        if ! grep -qx "$var" "$tmp/env_list"; then
            echo "src/pool.c: the library reads $var, which WS_ENV_VARIABLES does not list: add it"
            echo "  (else setting it draws the unknown-variable warning)."
            echo x >> "$tmp/env_list_bad"
        fi
    done
[ ! -e "$tmp/env_list_bad" ] || fail=1

if [ ! -s "$tmp/functions" ]; then
    echo "doc_check: found no public function in $header: the check itself needs fixing"
    exit 1
fi

while read -r f; do
    if ! grep -qE "(^|[^a-zA-Z0-9_])$f\(" "$api"; then
        echo "docs/api.md: $f is declared in include/worksteal.h but not documented."
        echo "  Add its declaration to the code block of its section in docs/api.md, and say"
        echo "  from which threads it may be called, what it returns or which errors, and whether"
        echo "  it blocks."
        fail=1
    fi
done < "$tmp/functions"

# Left out: the misspelt name in the example of the unknown-variable warning, and the tests'
# reserved prefix WS_TEST_*, which name no variable of the library.
sed -E 's/unknown environment variable WS_[A-Z0-9_]+//g; s/`WS_TEST_\*`//g' "$api" |
    grep -oE '\b(ws|WS)_[A-Za-z0-9_]+' | grep -v '^ws__' | sort -u > "$tmp/doc_names"
while read -r name; do
    if ! grep -qx "$name" "$tmp/header_names" && ! grep -qx "$name" "$tmp/env"; then
        echo "docs/api.md: names $name, which is neither in include/worksteal.h nor an"
        echo "  environment variable the library reads (renamed or removed?): fix docs/api.md."
        fail=1
    fi
done < "$tmp/doc_names"

while read -r var; do
    if ! grep -q "\b$var\b" "$api"; then
        echo "docs/api.md: the library reads the environment variable $var (src/), but"
        echo "  docs/api.md does not document it: add it to the environment section of docs/api.md."
        fail=1
    fi
    if ! grep -qE "^\| \`$var[=\`]" "$readme"; then
        echo "README.md: the library reads the environment variable $var (src/), but the"
        echo "  README's environment table does not list it: add a row."
        fail=1
    fi
done < "$tmp/env"

for ex in "$src"/examples/*.c "$src"/examples/*.cpp; do
    [ -e "$ex" ] || continue
    name=$(basename "$ex")
    if ! grep -q "\`$name\`" "$readme"; then
        echo "README.md: examples/$name is not named in the README's list of examples: add it,"
        echo "  with what it shows."
        fail=1
    fi
done

# ---- defaults and required fields, against the code ----
mpi_header=$src/include/worksteal_mpi.h
run_c=$src/src/mpi/run.c
dist=$src/docs/distributed.md
# run.c fills each default as "c.FIELD = c.FIELD ? c.FIELD : N;" (config_with_defaults).
grep -oE 'c\.[a-z_]+ = c\.[a-z_]+ \? c\.[a-z_]+ : [0-9]+' "$run_c" |
    sed -E 's/^c\.([a-z_]+) .* ([0-9]+)$/\1 \2/' > "$tmp/mpi_defaults"
# The header states it in the field's comment, which may span lines: "FIELD; /* ... (default N".
tr '\n' ' ' < "$mpi_header" | grep -oE '[a-z_]+; +/\*([^*]|\*[^/])*\(default [0-9]+' |
    sed -E 's/^([a-z_]+);.*\(default ([0-9]+)$/\1 \2/' > "$tmp/mpi_header_defaults"
if [ ! -s "$tmp/mpi_defaults" ] || [ ! -s "$tmp/mpi_header_defaults" ]; then
    echo "doc_check: found no ws_mpi_config default in $run_c or $mpi_header: fix the check"
    exit 1
fi
while read -r field value; do
    stated=$(awk -v f="$field" '$1 == f { print $2 }' "$tmp/mpi_header_defaults")
    if [ "$stated" != "$value" ]; then
        echo "include/worksteal_mpi.h: ws_mpi_config.$field defaults to $value in src/mpi/run.c,"
        echo "  but its comment says \"(default ${stated:-nothing})\": make them agree."
        fail=1
    fi
    grep -oE "\`$field\` \(([0-9]+)" "$dist" | grep -oE '[0-9]+$' | while read -r doc; do
        if [ "$doc" != "$value" ]; then
            echo "docs/distributed.md: says \`$field\` ($doc, but src/mpi/run.c's default is $value."
            echo x >> "$tmp/dist_bad"
        fi
    done
done < "$tmp/mpi_defaults"
[ ! -e "$tmp/dist_bad" ] || fail=1
# Required: the fields check_call rejects when unset (its "if (!work || ... !work->FIELD"), and
# the fields the header's ws_mpi_work comments call "required".
grep -E 'if \(!work \|\|' "$run_c" | grep -oE '!work->[a-z_]+' | sed 's/!work->//' | sort -u \
    > "$tmp/mpi_required_code"
sed -n '/typedef struct ws_mpi_work/,/} ws_mpi_work;/p' "$mpi_header" | tr '\n' ' ' |
    grep -oE '[a-z_]+; +/\*([^*]|\*[^/])*required' | sed -E 's/;.*//' | sort -u \
    > "$tmp/mpi_required_doc"
if ! cmp -s "$tmp/mpi_required_code" "$tmp/mpi_required_doc"; then
    echo "include/worksteal_mpi.h: the ws_mpi_work fields src/mpi/run.c rejects when unset are"
    echo "  $(tr '\n' ' ' < "$tmp/mpi_required_code")but the header marks as required:"
    echo "  $(tr '\n' ' ' < "$tmp/mpi_required_doc")(write \"required\" in each one's comment)."
    fail=1
fi
# The default stack size: "STACK_PER_MAIN N" and "MAX_DEFAULT_STACK (... (size_t)1 << K" in
# pool.c are "N times the main thread's stack limit" and "at most 2^(K-30) GiB" in the header and
# docs/api.md, and "(default N times the main thread's stack limit, at most MG)" for WS_STACK_SIZE
# in docs/api.md and the README.
times=$(grep -oE '#define STACK_PER_MAIN +[0-9]+' "$src/src/pool.c" | grep -oE '[0-9]+$')
gib=$(grep -E '#define MAX_DEFAULT_STACK' "$src/src/pool.c" | grep -oE '\(size_t\)1 << [0-9]+' |
    head -1 | grep -oE '[0-9]+$')
gib=$((1 << (gib - 30)))
for f in "$header" "$api"; do
    tr '\n' ' ' < "$f" | tr -s ' ' | grep -qE "else $times times the main thread's stack limit .{0,60}at most $gib GiB" || {
        echo "$f: does not state the default stack size as \"else $times times the main thread's"
        echo "  stack limit ..., at most $gib GiB\" (src/pool.c)."
        fail=1
    }
done
for f in "$api" "$readme"; do
    grep -E '^\| `WS_STACK_SIZE`' "$f" |
        grep -q "(default $times times the main thread's stack limit, at most ${gib}G)" || {
        echo "$f: WS_STACK_SIZE's row does not say \"(default $times times the main thread's stack"
        echo "  limit, at most ${gib}G)\" (src/pool.c)."
        fail=1
    }
done
# The trace ring: "DEFAULT_EVENTS = 1u << K" in trace.c is "(default 2^K" for WS_TRACE_EVENTS.
k=$(grep -oE 'DEFAULT_EVENTS = 1u << [0-9]+' "$src/src/trace.c" | grep -oE '[0-9]+$')
events=$((1 << k))
for f in "$api" "$readme" "$src/docs/profiling.md"; do
    grep -E 'WS_TRACE_EVENTS' "$f" | grep -q "(default $events" || {
        echo "$f: WS_TRACE_EVENTS is not given its default, \"(default $events\" (src/trace.c)."
        fail=1
    }
done

# ---- trace events against docs/profiling.md's table ----
# The names trace.c writes: put_head's with a category, its name_* strings, and the tasks'
# `what` strings passed to the running functions or set by the steal (src/*.c).
{
    grep -oE 'put_head\("[a-z_]+", "[a-z]+"' "$src/src/trace.c" | sed -E 's/put_head\("([a-z_]+)".*/\1/'
    grep -oE 'static const char name_[a-z]+\[\] = "[a-z]+"' "$src/src/trace.c" | grep -oE '"[a-z]+"'
    cat "$src"/src/*.c |
        grep -oE '(ws__task_run_taken|ws__run_traced|ws__run_child)\([^;"]*"[a-z]+"|join_finish\([^;]*"[a-z]+"\)|static const char from_[a-z]+\[\] = "[a-z]+"|\*what = "[a-z]+"' |
        grep -oE '"[a-z]+"'
} | tr -d '"' | grep -v '^ws_' | sort -u > "$tmp/trace_events"
while read -r ev; do
    if ! grep -qE "^\| \`$ev\` \|" "$src/docs/profiling.md"; then
        echo "docs/profiling.md: the trace has \"$ev\" events (src/), but the event table has no"
        echo "  row for them: add one."
        fail=1
    fi
done < "$tmp/trace_events"

# ---- the reference docs carry no logbook ----
# A figure measured on a particular day on a loaded machine belongs in docs/benchmarks.md, beside
# its command and the date and load of its run; the other docs state the design and point there.
# So outside docs/benchmarks.md: no "load average", no "load N", no dates.
logbook_exempt="docs/benchmarks.md"
# Docs that still carry such figures and are not checked yet; the check covers each one as soon
# as its name is taken off this list.
logbook_pending=""
months='Jan(uary)?|Feb(ruary)?|Mar(ch)?|Apr(il)?|May|June?|July?|Aug(ust)?|Sep(t(ember)?)?|Oct(ober)?|Nov(ember)?|Dec(ember)?'
logbook_pattern="[Ll]oad average|\\b[Ll]oad [0-9]|\\b20[0-9][0-9]-[01][0-9]-[0-3][0-9]\\b|\\b($months)\\.? +([0-9]{1,2}(st|nd|rd|th)?|20[0-9][0-9])\\b|\\b[0-9]{1,2} +($months)\\b"
for f in "$src"/README.md "$src"/docs/*.md; do
    rel=${f#"$src"/}
    case " $logbook_exempt $logbook_pending " in *" $rel "*) continue ;; esac
    grep -nE "$logbook_pattern" "$f" | cut -c1-120 | sed "s|^|$rel:|" > "$tmp/logbook" || true
    if [ -s "$tmp/logbook" ]; then
        cat "$tmp/logbook"
        echo "$rel: a machine load or a date (above) outside docs/benchmarks.md: move the figure to"
        echo "  a section of docs/benchmarks.md, with its command, and link to it."
        fail=1
    fi
done

if [ "$fail" -ne 0 ]; then
    echo "doc_check: the docs and the code disagree, or a doc carries a logbook figure; see above."
    exit 1
fi
echo "doc_check: $(wc -l < "$tmp/functions") public functions and $(wc -l < "$tmp/env")" \
    "environment variables, all documented in docs/api.md; $(wc -l < "$tmp/mpi_defaults")" \
    "worksteal_mpi defaults, its required fields and $(wc -l < "$tmp/trace_events") trace events" \
    "agree with the code; no load or date outside docs/benchmarks.md"
