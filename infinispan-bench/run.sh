#!/usr/bin/env bash
# The Infinispan store benchmarks: htod beside SoftIndexFileStore and Infinispan's RocksDB store,
# through the cache API of one node (JMH). Usage: infinispan-bench/run.sh [quick|full]
#
# Two runs, because Maven Central has no RocksDB store for Infinispan 16 (the newest is 15.2.6.Final,
# which does not load on infinispan-core 16): on 16.0.9, htod and SoftIndexFileStore; on
# 15.2.6.Final, all three. Results (JMH JSON and text) go to infinispan-bench/results/<mode>/.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
case "$mode" in
  quick) size=(-p entries=20000); restart=(-p entries=100000 -i 1); iters=(-wi 0 -i 1 -r 3s) ;;
  full)  size=(); restart=(); iters=() ;;
  *) echo "usage: $0 [quick|full]" >&2; exit 2 ;;
esac
out=infinispan-bench/results/$mode
mkdir -p "$out"
mvn -B -ntp -q -pl core,htod,infinispan install -DskipTests

bench() { # infinispan version, stores, label, then JMH arguments
  local version=$1 stores=$2 label=$3; shift 3
  mvn -B -ntp -q -f infinispan-bench/pom.xml package -Dbench.infinispan.version="$version"
  local cp="infinispan-bench/target/classes:$(cat infinispan-bench/target/classpath.txt)"
  java -cp "$cp" org.openjdk.jmh.Main "$@" -p store="$stores" -rf json -rff "$out/$label.json" | tee "$out/$label.txt"
}

bench 16.0.9 HTOD,SIFS throughput-16.0.9 CacheThroughputBenchmark "${size[@]}" "${iters[@]}"
bench 16.0.9 HTOD,SIFS restart-16.0.9 RestartBenchmark "${restart[@]}"
bench 15.2.6.Final HTOD,SIFS,ROCKSDB throughput-15.2.6 CacheThroughputBenchmark "${size[@]}" "${iters[@]}"
bench 15.2.6.Final HTOD,SIFS,ROCKSDB restart-15.2.6 RestartBenchmark "${restart[@]}"
