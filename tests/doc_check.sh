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
#     README.
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

grep -oE '\b(ws|WS)_[A-Za-z0-9_]+' "$api" | grep -v '^ws__' | sort -u > "$tmp/doc_names"
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

if [ "$fail" -ne 0 ]; then
    echo "doc_check: docs/api.md (or the README) and the code disagree; see above."
    exit 1
fi
echo "doc_check: $(wc -l < "$tmp/functions") public functions and $(wc -l < "$tmp/env")" \
    "environment variables, all documented in docs/api.md"
