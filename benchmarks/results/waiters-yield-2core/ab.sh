#!/bin/bash
# The A/B of the waiters' yield, as run on 2 cores (see README.md beside it).
# Usage, from the repository root, after building the benchmark jar (B):
#   ab.sh A_CLASSES OUT
# A_CLASSES: the waiters without their yield (org/htod/core/log/Waiters*.class), compiled against
# core's classes; they go first on the class path. OUT: where results go. As run on 2 cores, A was
# Log and Waiters of 5a99eb7; Log has changed since (placed values, wait counts), so A is now
# today's Waiters with its yield turned off, which leaves the rest of the build alike. For the
# 16-core machine (after device-pack.sh, which empties target/devpkg):
#   mkdir -p target/devpkg/A/src && sed 's/MAX_YIELD_NANOS = 100_000;/MAX_YIELD_NANOS = -1;/' \
#       core/src/main/java/org/htod/core/log/Waiters.java > target/devpkg/A/src/Waiters.java \
#     && grep -q 'MAX_YIELD_NANOS = -1;' target/devpkg/A/src/Waiters.java \
#     && javac -nowarn -cp core/target/classes -d target/devpkg/A target/devpkg/A/src/Waiters.java
#   there: AB_JAVA=target/devpkg/java AB_JAR=target/devpkg/benchmarks.jar AB_THREADS="64 16" \
#       AB_JMH="-wi 1 -w 4s -i 2 -r 4s -f 1" ab.sh target/devpkg/A "$OUT"
set -e
A=$1; OUT=$2; mkdir -p "$OUT"
java=${AB_JAVA:-java}
J=${AB_JAR:-benchmarks/target/benchmarks.jar}
read -r -a jmh <<< "${AB_JMH:--wi 2 -w 8s -i 3 -r 8s -f 1}"
for round in 1 2; do
 for v in A B; do
  for t in ${AB_THREADS:-64 4}; do
   cp=$J; [ $v = A ] && cp=$A:$J
   "$java" -cp "$cp" org.openjdk.jmh.Main DurablePutBenchmark -t "$t" -p store=htod-log,htod-log-alone -p valueSize=200 \
     "${jmh[@]}" -jvmArgsAppend "-Dhtod.bench.durable.stats=$OUT/io-$v-$t-$round.txt" \
     -rf json -rff "$OUT/$v-t$t-r$round.json" > "$OUT/$v-t$t-r$round.log" 2>&1
  done
 done
done
