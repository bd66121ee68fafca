#!/bin/bash
# A/B of one sync at a time on a file device (see README.md beside it), as run on 2 cores.
# Usage, from the repository root, after building the benchmark jar (B):
#   ab.sh A_CLASSES OUT
# A_CLASSES: LockedChannel with its syncs side by side, compiled against core's classes:
#   mkdir -p A/src && sed 's/        synchronized (syncs) {/        synchronized (new Object()) {/' \
#       core/src/main/java/org/htod/core/device/LockedChannel.java > A/src/LockedChannel.java \
#     && javac -nowarn -cp core/target/classes -d A A/src/LockedChannel.java
set -e
A=$1; OUT=$2; mkdir -p "$OUT"
java=${AB_JAVA:-java}
J=${AB_JAR:-benchmarks/target/benchmarks.jar}
read -r -a jmh <<< "${AB_JMH:--wi 1 -w 5s -i 2 -r 5s -f 1}"
for round in 1 2; do
 for v in A B; do
  for t in ${AB_THREADS:-16 4}; do
   cp=$J; [ $v = A ] && cp=$A:$J
   "$java" -cp "$cp" org.openjdk.jmh.Main DurablePutBenchmark -t "$t" -p store=htod-log-placed -p valueSize=4000 \
     "${jmh[@]}" -rf json -rff "$OUT/$v-t$t-r$round.json" > "$OUT/$v-t$t-r$round.log" 2>&1
  done
 done
done
