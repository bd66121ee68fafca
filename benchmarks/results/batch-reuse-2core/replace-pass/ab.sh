#!/bin/bash
# As run on the 2-core machine: /tmp/jarA.jar is benchmarks.jar built at 8a058b5 (no batch reuse),
# /tmp/jarB.jar at 9d9ad88 (batch reuse), /tmp/jarC.jar and /tmp/jarD.jar with variants/C.diff and D.diff on B.
cd /tmp/rp
for r in 1 2; do for j in A B; do
  timeout 600 java -jar /tmp/jar$j.jar ReplacePassBenchmark -p store=htod -p corpus=olympic,proxy -p objects=20000 -p durability=NONE -wi 1 -i 3 -f 1 -rf json -rff /tmp/rp/$j-r$r.json > /tmp/rp/$j-r$r.txt 2>&1
done; done
echo done > /tmp/rp/done
