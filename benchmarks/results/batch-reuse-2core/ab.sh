#!/bin/bash
# A/B of batch reuse: A.jar built at 8b452a4 (before), B.jar with the change; A B A B,
# 64 writers, 200- and 4,000-byte values.
cd /tmp/ab  # A.jar and B.jar copied there
for round in 1 2; do
 for v in A B; do
  java -Dhtod.bench.dir=/tmp/bx -jar /tmp/ab/$v.jar DurablePutBenchmark -t 64 -p store=htod-log -p valueSize=200,4000 \
    -wi 2 -w 6s -i 2 -r 6s -f 1 -jvmArgsAppend "-Dhtod.bench.durable.stats=/tmp/ab/io-$v-$round.txt" \
    -rf json -rff /tmp/ab/$v-r$round.json > /tmp/ab/$v-r$round.log 2>&1
 done
done
echo done > /tmp/ab/finished
