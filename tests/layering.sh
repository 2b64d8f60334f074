#!/bin/sh
# The library's files call one another in one direction only: each file may use what the files
# of lower layers define, never what a higher layer defines (docs/scheduler.md, "Layers"). The
# check reads the symbols each object of the static library defines and uses (nm), maps each
# use to the file that defines it, and fails on every use that goes up or sideways within a
# layer; it prints the edges it found, so a failure names the call to move.
# usage: tests/layering.sh libworksteal.a
set -eu
lib=${1:?usage: layering.sh libworksteal.a}

# Lowest first; files on one line form a layer and may not use one another.
layers='
platform error
group_check overflow
deque deque_locked injector topology trace records profile
stats
idle
worker
spare
wait
pool
join
group future
frames
loop
profile_pool
'

rank() { # file -> "layer index" or nothing
    echo "$layers" | awk -v f="$1" 'NF { n++; for (i = 1; i <= NF; i++) if ($i == f) print n }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "member symbol" pairs: what each object defines, what it uses (nm -A: lib.a:member.c.o: ...)
nm -A --defined-only -g "$lib" | sed -n 's/^[^:]*:\([a-z_]*\)\.c\.o: *[0-9a-f]* [A-Za-z] \(.*\)$/\2 \1/p' |
    sort >"$tmp/defs"
nm -A -u "$lib" | sed -n 's/^[^:]*:\([a-z_]*\)\.c\.o: *U \(.*\)$/\2 \1/p' | sort >"$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/edges"

bad=0
for f in $(cut -d' ' -f1,2 "$tmp/edges" | tr ' ' '\n' | sort -u); do
    if [ -z "$(rank "$f")" ]; then
        echo "layering: src/$f.c is in no layer (add it to tests/layering.sh)"
        bad=1
    fi
done
while read -r from to sym; do
    rf=$(rank "$from")
    rt=$(rank "$to")
    [ -n "$rf" ] && [ -n "$rt" ] || continue
    if [ "$rt" -ge "$rf" ]; then
        echo "layering: src/$from.c (layer $rf) uses $sym of src/$to.c (layer $rt)"
        bad=1
    fi
done <"$tmp/edges"
echo "layering: $(wc -l <"$tmp/edges") uses between files checked"
exit $bad
