#!/usr/bin/env bash
# Runs the benchmark suite and renders its results: JMH JSON, a PNG chart per workload and a
# Markdown table of htod's speed relative to each store.
#
#   benchmarks/run.sh quick   # minutes: 1,000 objects, every store, both durabilities
#   benchmarks/run.sh full    # 1 h 20 min on 2 cores: the paper's sizes, a scaled run, a run larger than the
#                             # cache, disk space; writes the tables into README.md
#   benchmarks/run.sh durable # about 42 min: durable puts (DurablePutBenchmark) at 1, 4, 16 and 64 writer
#                             # threads, values of 200 and 4000 bytes, beside the disk's 4 KiB write+fsync rate (dd), which the
#                             # run also measures itself (store disk-dsync), and htod's log alone (htod-log-alone)
#   benchmarks/run.sh reopen  # about 20 min: reopen after SIGKILL (CrashReopenBenchmark) of 1 and 10 million
#                             # entries, page cache warm and dropped (root), and direct mode at 1 million
#
# durable reads two variables: DURABLE_THREADS (default "1 4 16 64") and DURABLE_JMH, the JMH
# options of each run (default "-wi 2 -w 5s -i 3 -r 10s -f 1"; shorter on a busy machine, e.g.
# "-wi 1 -w 3s -i 3 -r 5s -f 1"); any further arguments go to JMH (-p store=htod-log,rocksdb).
#
# Run from anywhere; builds benchmarks/target/benchmarks.jar when it is missing. Results go to
# benchmarks/results/<mode>/, or $HTOD_RESULTS_DIR. Stores are created under $HTOD_BENCH_DIR (default
# benchmarks/target/bench-data) and deleted after each trial.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
    quick|full|durable|reopen) ;;
    *) echo "usage: benchmarks/run.sh quick|full|durable|reopen" >&2; exit 2 ;;
esac
shift

jar=benchmarks/target/benchmarks.jar
if [ ! -f "$jar" ]; then
    mvn -B -ntp -q -pl benchmarks -am package -DskipTests
fi
# HTOD_RESULTS_DIR: where the results go instead (a partial run kept beside the full ones).
out=${HTOD_RESULTS_DIR:-benchmarks/results/$mode}
mkdir -p "$out"
rm -f "$out"/*.json
data=${HTOD_BENCH_DIR:-benchmarks/target/bench-data}
mkdir -p "$data"
# A copy, so that a rebuild during a long run does not change the code under test.
cp "$jar" "$data/run-$mode.jar"
jar=$data/run-$mode.jar
java_flags=(@benchmarks/jvm-flags.txt "-Dhtod.bench.dir=$data")

machine() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "cores: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
        echo "disk: $(df -T "$data" | awk 'NR == 2 {print $2 " on " $1}')"
        java -version 2>&1 | head -n 1
    } > "$out/machine.txt"
}

# jmh NAME ARGS...: one JMH run, its results in $out/NAME.json
jmh() {
    local name=$1
    shift
    echo "== $name: java -jar $jar $*"
    java "-Dhtod.bench.dir=$data" -jar "$jar" "$@" -rf json -rff "$out/$name.json"
}

# report MARKER README FILES...: charts for FILES, and their table written between the markers
report() {
    local marker=$1 readme=$2
    shift 2
    java "${java_flags[@]}" -cp "$jar" org.htod.bench.report.ResultsReport --out "$out/charts" \
        --marker "$marker" --readme "$readme" --command "benchmarks/run.sh $mode" "$@"
}

# A cgroup (v1 or v2) that caps memory, page cache included; empty when this machine has none to give.
memory_cgroup() {
    local limit=$1 cg=""
    if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        cg=/sys/fs/cgroup/htod-bench
        mkdir -p "$cg" && echo "$limit" > "$cg/memory.max" || cg=""
    else
        local own
        own=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup 2>/dev/null)
        if [ -n "$own" ] && [ -d "/sys/fs/cgroup/memory$own" ]; then
            cg=/sys/fs/cgroup/memory$own/htod-bench
            { mkdir -p "$cg" && echo "$limit" > "$cg/memory.limit_in_bytes"; } 2>/dev/null || cg=""
        fi
    fi
    echo "$cg"
}

# fsync_rate LABEL: the disk's rate of 4 KiB writes each made durable before the next (dd with
# O_DSYNC, 2,000 writes), first appending to a new file (each write also commits the file's new
# size), then overwriting the same blocks (data only, as a log or table written in place does); one
# line appended to $out/fsync.txt and printed.
fsync_rate() {
    local label=$1 append overwrite
    append=$(dd_seconds)
    overwrite=$(dd_seconds conv=notrunc)
    rm -f "$data/ddtest"
    local line="$label: \`dd if=/dev/zero of=\$dir/ddtest bs=4k count=2000 oflag=dsync\`: appending"
    line+=" $(awk -v s="$append" 'BEGIN {printf "%.0f", 2000 / s}') writes/s ($append s),"
    line+=" overwriting (conv=notrunc) $(awk -v s="$overwrite" 'BEGIN {printf "%.0f", 2000 / s}') writes/s ($overwrite s)"
    echo "$line" | tee -a "$out/fsync.txt"
}

# dd_seconds [DD-ARGS]: seconds dd takes for 2,000 4 KiB writes with O_DSYNC to $data/ddtest
dd_seconds() {
    dd if=/dev/zero of="$data/ddtest" bs=4k count=2000 oflag=dsync "$@" 2>&1 \
        | awk '/copied/ {for (i = 1; i <= NF; i++) if ($i ~ /^s,?$/) print $(i - 1)}'
}

machine
iterations=(-wi 1 -w 1s -i 2 -r 1s -f 1)

if [ "$mode" = durable ]; then
    rm -f "$out/fsync.txt" "$out/durable-io.txt"
    read -r -a threads <<< "${DURABLE_THREADS:-1 4 16 64}"
    read -r -a options <<< "${DURABLE_JMH:--wi 2 -w 5s -i 3 -r 10s -f 1}"
    fsync_rate before
    for t in "${threads[@]}"; do
        echo "== durable-t$t: java -jar $jar DurablePutBenchmark -t $t ${options[*]} $*"
        java "-Dhtod.bench.dir=$data" "-Dhtod.bench.durable.stats=$out/durable-io.txt" -jar "$jar" \
            DurablePutBenchmark -t "$t" "${options[@]}" "$@" -rf json -rff "$out/durable-t$t.json"
    done
    fsync_rate after
    notes=()
    while IFS= read -r l; do notes+=(--note "Disk, $l."); done < "$out/fsync.txt"
    java "${java_flags[@]}" -cp "$jar" org.htod.bench.report.DurableReport \
        --command "benchmarks/run.sh durable (DURABLE_THREADS=\"${threads[*]}\" DURABLE_JMH=\"${options[*]}\")${*:+ $*}" \
        "${notes[@]}" --io "$out/durable-io.txt" "$out"/durable-t*.json | tee "$out/table.md"
    echo "durable pass done: $out/table.md"
    exit 0
fi

if [ "$mode" = reopen ]; then
    # Each trial loads its store in a child JVM and kills it: minutes at 10 million entries
    # (about 6 GB on disk, twice: the crashed store and the copy each pass reopens).
    jmh reopen-log CrashReopenBenchmark -p entries=1000000,10000000 -p mode=log -p cache=warm,cold "$@"
    jmh reopen-direct CrashReopenBenchmark -p entries=1000000 -p mode=direct -p cache=warm "$@"
    echo "reopen pass done: $out/reopen-log.json, $out/reopen-direct.json"
    exit 0
fi

if [ "$mode" = quick ]; then
    jmh stores 'ReadBenchmark|ReplaceBenchmark|WriteBenchmark.wp' -p objects=1000 -p corpus=olympic \
        "${iterations[@]}"
    echo "<!-- benchmarks:begin -->" > "$out/table.md"
    echo "<!-- benchmarks:end -->" >> "$out/table.md"
    report benchmarks "$out/table.md" "$out/stores.json"
    echo "quick pass done: $out/table.md, charts in $out/charts"
    exit 0
fi

iterations=(-wi 1 -w 2s -i 3 -r 2s -f 1)
paper='htod,htod-raw,file-per-object,sqlite,h2-mvstore,rocksdb,mapdb,lmdb,chronicle-map'
scaled='htod,file-per-object,sqlite,rocksdb,lmdb'

# The paper's tests at its Olympic size (Tables 1 and 2, §3.1), at both durabilities; the
# single-shot passes at SYNC on 2,000 objects, since every store then syncs once per object.
jmh olympic 'ReadBenchmark|ReplaceBenchmark' -p store=$paper -p corpus=olympic -p objects=27800 "${iterations[@]}"
jmh olympic-passes 'WriteBenchmark|IterateBenchmark|ReplacePassBenchmark' -p store=$paper -p corpus=olympic -p objects=27800 \
    -p durability=NONE -wi 1 -i 2 -f 1
jmh olympic-sync-writes 'WriteBenchmark' -p store=$paper -p corpus=olympic -p objects=2000 -p durability=SYNC \
    -wi 1 -i 2 -f 1
# The proxy-log corpus: larger objects (mean 15.2 KiB).
jmh proxy 'ReadBenchmark|ReplaceBenchmark' -p store=$paper -p corpus=proxy -p objects=20000 "${iterations[@]}"
jmh proxy-passes 'ReplacePassBenchmark' -p store=$paper -p corpus=proxy -p objects=20000 -p durability=NONE \
    -wi 1 -i 2 -f 1
# The hashtable alone: get, put and remove at 10 thousand, 1 million and 10 million entries.
jmh hashtable HashtableBenchmark -wi 1 -w 2s -i 3 -r 3s -f 1
rm -f "$data"/hashtable-*.htod

# Scaled: replacements among a million objects (about 3.7 GB, the page cache warm), so that
# cost growth shows; reads at this size are the cache-limited run below.
jmh scaled 'ReplaceBenchmark' -p store=$scaled -p corpus=olympic -p objects=1000000 -p durability=NONE \
    "${iterations[@]}"
report benchmarks README.md "$out"/olympic*.json "$out"/proxy*.json "$out/scaled.json"

# Larger than the cache: a million objects read with the process and the page cache held to
# 2 GiB together by a memory cgroup, so no store can keep the data in memory.
cg=$(memory_cgroup $((2 << 30)))
if [ -n "$cg" ]; then
    echo "== cache-limited runs in $cg (memory limit 2 GiB, page cache included)"
    (
        echo "$BASHPID" > "$cg/cgroup.procs"
        # 'bench.ReadBenchmark', not 'ReadBenchmark', which also matches ConcurrentReadBenchmark
        # and loaded the million objects three more times per store
        jmh cache-limited 'bench.ReadBenchmark' -p store=$scaled,htod-raw -p corpus=olympic -p objects=1000000 \
            -p durability=NONE -jvmArgsAppend "$(tr '\n' ' ' < benchmarks/jvm-flags.txt) -Xms512m -Xmx1g" \
            "${iterations[@]}"
    )
    rmdir "$cg" 2>/dev/null || true
    report benchmarks-cache README.md "$out/cache-limited.json"
else
    echo "== no memory cgroup can be made here (needs root and a memory controller): larger-than-cache run skipped"
fi

# Disk space after the same load (Table 3).
java "${java_flags[@]}" -cp "$jar" org.htod.bench.DiskSpace --corpus all --objects 20000 | tee "$out/disk-space.txt"
echo "full pass done: results in $out, tables in README.md"
