#!/bin/bash
# The A/B of the waiters' adaptive yield, as run (see README.md beside it).
# Usage, from the repository root, after building the benchmark jar (B):
#   ab.sh A_CLASSES OUT
# A_CLASSES: the classes of Log and Waiters before the change (org/htod/core/log/...), compiled
# against core's classes; they go first on the class path. OUT: where results go.
set -e
A=$1; OUT=$2; mkdir -p "$OUT"
J=benchmarks/target/benchmarks.jar
for round in 1 2; do
 for v in A B; do
  for t in 64 4; do
   cp=$J; [ $v = A ] && cp=$A:$J
   java -cp $cp org.openjdk.jmh.Main DurablePutBenchmark -t $t -p store=htod-log,htod-log-alone -p valueSize=200 \
     -wi 2 -w 8s -i 3 -r 8s -f 1 -jvmArgsAppend "-Dhtod.bench.durable.stats=$OUT/io-$v-$t-$round.txt" \
     -rf json -rff "$OUT/$v-t$t-r$round.json" > "$OUT/$v-t$t-r$round.log" 2>&1
  done
 done
done
