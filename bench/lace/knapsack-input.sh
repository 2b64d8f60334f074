#!/bin/sh
# bench/lace/knapsack-input.sh N: prints a knapsack input of N items in the format of Lace's
# knapsack benchmark ("N CAPACITY", then a line "VALUE WEIGHT" per item). Item i weighs
# 10 + h % 91 and is worth its weight + (h >> 8) % 47, with h = i * 2654435761 mod 2^32 (the
# formula of examples/knapsack.c); the capacity is half the total weight.
set -eu
awk -v n="${1:?usage: knapsack-input.sh N}" 'BEGIN {
    for (i = 0; i < n; i++) {
        h = (i * 2654435761) % 4294967296
        w[i] = 10 + h % 91
        v[i] = w[i] + int(h / 256) % 47
        total += w[i]
    }
    print n, int(total / 2)
    for (i = 0; i < n; i++)
        print v[i], w[i]
}'
