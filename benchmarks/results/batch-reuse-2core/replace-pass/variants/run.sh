#!/bin/bash
# As run on the 2-core machine: /tmp/jarA.jar is benchmarks.jar built at 8a058b5 (no batch reuse),
# /tmp/jarB.jar at 9d9ad88 (batch reuse), /tmp/jarC.jar and /tmp/jarD.jar with variants/C.diff and D.diff on B.
cd /tmp/rp3
for j in C D A B C D; do
  sync; sleep 5
  n=$(ls $j-*.txt 2>/dev/null | wc -l)
  timeout 400 java -jar /tmp/jar$j.jar ReplacePassBenchmark -p store=htod -p corpus=olympic -p objects=20000 -p durability=NONE -wi 1 -i 3 -f 1 -rf json -rff /tmp/rp3/$j-$n.json > /tmp/rp3/$j-$n.txt 2>&1
done
echo done > /tmp/rp3/done
