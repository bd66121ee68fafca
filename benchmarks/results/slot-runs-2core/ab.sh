#!/bin/bash
# The A/B of slot runs, as run on 2 cores (see README.md beside it). A.jar: the benchmark jar
# built at ef89e8c (before the change); B.jar: at 8f1c653 (with it); both copied to /tmp.
# Runs A then B, twice, each at 64 writers with 200- and 4,000-byte values.
cd /tmp/ab
for round in 1 2; do
 for v in A B; do
  java -Dhtod.bench.dir=/tmp/bx -jar /tmp/$v.jar DurablePutBenchmark -t 64 -p store=htod-log -p valueSize=200,4000 \
    -wi 2 -w 6s -i 2 -r 6s -f 1 -jvmArgsAppend "-Dhtod.bench.durable.stats=/tmp/ab/io-$v-$round.txt" \
    -rf json -rff /tmp/ab/$v-r$round.json > /tmp/ab/$v-r$round.log 2>&1
 done
done
echo done > /tmp/ab/finished
