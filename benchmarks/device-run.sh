#!/usr/bin/env bash
# The figures that need a machine with 16 or more cores, in one run on a machine without Java or
# Maven: durable puts from 1, 4, 16 and 64 writers (htod in log mode, RocksDB with sync=true, and
# the disk's own durable write rate, disk-dsync; at 1 and 64 writers also htod's log alone,
# htod-log-alone), values of 200 and 4,000 bytes; log mode with placed values
# (htod-log-placed) at 4,000 bytes from 1, 16 and 64 writers; then SQLite and direct mode at the
# same writers; then random reads of the Olympic corpus in memory from 1, 4 and 16 threads (htod,
# RocksDB, H2 MVStore, a file per object). On 2026-11-27 (16 cores, DEVICE_JMH="-wi 1 -w 3s -i 2
# -r 3s -f 1") the durable trials before SQLite took about 5 minutes and SQLite and direct mode
# at 1 to 16 writers 2 more; all of it, with the reads, more than 10.
#
# On the development machine, from the project root:
#   mvn -B -ntp -pl benchmarks -am package -DskipTests && ../shared/tools/device-pack.sh
# On the other machine, from the project root, with target/devpkg carried along:
#   benchmarks/device-run.sh OUT          # JMH JSON and logs, machine.txt, fsync.txt (with the bandwidth) under OUT
# It ends by writing the durable tables to OUT/durable-table.md (DurableReport); again by hand:
#   java -cp benchmarks/target/benchmarks.jar org.htod.bench.report.DurableReport \
#       --io OUT/durable-io.txt OUT/durable-t*.json
#
# DEVICE_JMH replaces the JMH options of every trial (default "-wi 1 -w 2s -i 2 -r 2s -f 1");
# DEVICE_JAVA and DEVICE_JAR the runtime and the jar (default the packed ones in target/devpkg);
# DEVICE_DATA the folder the stores are made under (default /tmp; removed at the end);
# DEVICE_BUDGET the seconds after which no further trial starts (default: none), so that a run
# fits a machine lent for a fixed time: the trials run in order of need, rivals SQLite and direct
# mode and the read trials last.
set -euo pipefail
out=${1:?usage: benchmarks/device-run.sh OUT}
cd "$(dirname "$0")/.."
java=${DEVICE_JAVA:-target/devpkg/java}
jar=${DEVICE_JAR:-target/devpkg/benchmarks.jar}
read -r -a jmh <<< "${DEVICE_JMH:--wi 1 -w 2s -i 2 -r 2s -f 1}"
mkdir -p "$out"
data=$(mktemp -d "${DEVICE_DATA:-/tmp}/htod-device.XXXXXX")
trap 'rm -rf "$data"' EXIT

{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "cores: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
    echo "disk: $(df -T "$data" | awk 'NR == 2 {print $2 " on " $1}')"
    "$java" -version 2>&1 | head -n 1
} > "$out/machine.txt"
cat "$out/machine.txt"

# The disk's rate of 4 KiB overwrites each durable before the next, as run.sh durable measures it.
fsync_rate() {
    dd if=/dev/zero of="$data/ddtest" bs=4k count=2000 2> /dev/null
    sync
    echo "$1: $(dd if=/dev/zero of="$data/ddtest" bs=4k count=2000 oflag=dsync conv=notrunc 2>&1 | tail -n 1)" \
        | tee -a "$out/fsync.txt"
    rm -f "$data/ddtest"
}

# The disk's sequential write bandwidth: 512 MiB in 1 MiB writes past the page cache, then one
# sync. At 4,000-byte values every store writes a value at least once (htod's log mode twice, its
# log record and its install), so bytes a put times puts/s meets this bound before the sync rate.
write_bandwidth() {
    echo "bandwidth: $(dd if=/dev/zero of="$data/bwtest" bs=1M count=512 oflag=direct conv=fdatasync 2>&1 \
        | tail -n 1)" | tee -a "$out/fsync.txt"
    rm -f "$data/bwtest"
}

budget=${DEVICE_BUDGET:-0}
run() {
    local name=$1
    shift
    if [ "$budget" -gt 0 ] && [ "$SECONDS" -ge "$budget" ]; then
        echo "== $name: skipped, past DEVICE_BUDGET=${budget}s" | tee -a "$out/skipped.txt"
        return 0
    fi
    echo "== $name: $* ${jmh[*]}"
    "$java" "-Dhtod.bench.dir=$data" "-Dhtod.bench.durable.stats=$out/durable-io.txt" -jar "$jar" "$@" "${jmh[@]}" \
        -rf json -rff "$out/$name.json" > "$out/$name.log" 2>&1 || echo "   $name failed: see $out/$name.log"
    grep -E '^(DurablePut|ReadThreads)Benchmark' "$out/$name.log" || true
}

fsync_rate before
write_bandwidth
for t in 1 4 16 64; do
    # htod's log alone at 1 and 64 writers: it splits htod's shortfall between the log and the rest
    # of log mode (at 64 writers on 16 cores it showed the log's waking as the limit, 2026-11-27).
    stores=htod-log,rocksdb,disk-dsync
    case $t in 1 | 64) stores=htod-log,htod-log-alone,rocksdb,disk-dsync ;; esac
    run "durable-t$t" DurablePutBenchmark -t "$t" -p store=$stores -p valueSize=200,4000
done
# Placed values (placeValuesFrom): each 4,000-byte value written once, two syncs a commit. On 2
# cores it lost (0.41 to 0.76 of htod-log, benchmarks/results/placed-2core); it is meant for a disk
# whose bandwidth binds first, as the 16-core one's seemed to at 64 writers.
for t in 1 16 64; do
    run "durable-t$t-placed" DurablePutBenchmark -t "$t" -p store=htod-log-placed -p valueSize=4000
done
fsync_rate after
# The issue's other rivals, after the trials its goals are judged by.
for t in 1 4 16 64; do
    run "durable-t$t-more" DurablePutBenchmark -t "$t" -p store=sqlite,htod-direct -p valueSize=200,4000
done
for t in 1 4 16; do
    run "reads-t$t" ReadThreadsBenchmark -t "$t" -p store=htod,rocksdb,h2-mvstore,file-per-object \
        -p corpus=olympic -p objects=20000 -p durability=NONE
done
# The durable tables, rendered where the run was (Machine.describe names this machine).
notes=()
while IFS= read -r l; do notes+=(--note "Disk, $l."); done < "$out/fsync.txt"
"$java" -cp "$jar" org.htod.bench.report.DurableReport --command "benchmarks/device-run.sh (DEVICE_JMH=\"${jmh[*]}\")" \
    "${notes[@]}" --io "$out/durable-io.txt" "$out"/durable-t*.json > "$out/durable-table.md" 2> "$out/durable-table.log" \
    || echo "   the durable tables failed: see $out/durable-table.log"
echo "device run done: $out"
