#!/usr/bin/env bash
# A/B on the 16-core machine: A = main's write layer (a-mob.jar first on the class path), B = the working tree's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
J=${J:-$here/java}; JAR=$here/benchmarks.jar; A=$here/a-mob.jar
O=${1:-/tmp/ab}; mkdir -p "$O"; D=$(mktemp -d /tmp/hd.XXXXXX)
read -r -a jmh <<< "${AB_JMH:--wi 1 -w 4s -i 2 -r 4s -f 1}"
budget=${AB_BUDGET:-280}
"$J" -version 2>&1 | head -1 | tee "$O/machine.txt"; nproc >> "$O/machine.txt"
run() {
    local name=$1 cp=$2; shift 2
    if [ "$SECONDS" -ge "$budget" ]; then echo "skip $name"; return; fi
    echo "== $name ($SECONDS s): $*"
    timeout 150 "$J" "-Dhtod.bench.dir=$D" "-Dhtod.bench.durable.stats=$O/durable-io.txt" -cp "$cp" org.openjdk.jmh.Main \
        DurablePutBenchmark "$@" "${jmh[@]}" -rf json -rff "$O/$name.json" > "$O/$name.log" 2>&1
    grep -E '^DurablePut' "$O/$name.log" | sed "s/^/$name /"
    echo "durable-io after $name" >> "$O/durable-io.txt"
}
prof() { echo "async:libPath=$here/libasyncProfiler.so;output=collapsed;dir=$O/$1;event=wall;threads=true;interval=1000000"; }
run A-t64-200 "$A:$JAR" -t 64 -p store=htod-log -p valueSize=200
run B-t64-200 "$JAR" -t 64 -p store=htod-log -p valueSize=200
run A-t64-4000 "$A:$JAR" -t 64 -p store=htod-log -p valueSize=4000
run B-t64-4000 "$JAR" -t 64 -p store=htod-log -p valueSize=4000
run alone "$JAR" -t 64 -p store=htod-log-alone,rocksdb -p valueSize=200,4000
run B-t16 "$JAR" -t 16 -p store=htod-log -p valueSize=200,4000
run A-t16-200 "$A:$JAR" -t 16 -p store=htod-log -p valueSize=200
run alone-t16 "$JAR" -t 16 -p store=htod-log-alone -p valueSize=200
run profB-t64-200 "$JAR" -t 64 -p store=htod-log -p valueSize=200 -prof "$(prof profB)"
run profA-t64-200 "$A:$JAR" -t 64 -p store=htod-log -p valueSize=200 -prof "$(prof profA)"
rm -rf "$D"
echo "ab done ($SECONDS s)"
