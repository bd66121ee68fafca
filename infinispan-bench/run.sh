#!/usr/bin/env bash
# The Infinispan store benchmarks: htod beside SoftIndexFileStore and Infinispan's RocksDB store,
# through the cache API of one node (JMH). Usage: infinispan-bench/run.sh [quick|full] [16|15|all]
#
# Two runs, because Maven Central has no RocksDB store for Infinispan 16 (the newest is 15.2.6.Final,
# which does not load on infinispan-core 16): on 16.0.9 ("16"), htod and SoftIndexFileStore; on
# 15.2.6.Final ("15"), all three; "all" (the default) runs both. Results (JMH JSON and text) go to
# infinispan-bench/results/<mode>/. The modules are built through the reactor, so nothing is
# installed into the local Maven repository; MVN_FLAGS adds flags to each mvn call (MVN_FLAGS=-o:
# offline).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
versions=${2:-all}
case "$mode" in
  quick) size=(-p entries=20000); restart=(-p entries=100000 -i 1); iters=(-wi 0 -i 1 -r 3s) ;;
  full)  size=(); restart=(); iters=() ;;
  *) echo "usage: $0 [quick|full] [16|15|all]" >&2; exit 2 ;;
esac
case "$versions" in
  16|15|all) ;;
  *) echo "usage: $0 [quick|full] [16|15|all]" >&2; exit 2 ;;
esac
out=infinispan-bench/results/$mode
mkdir -p "$out"

bench() { # infinispan version, stores, label, then JMH arguments
  local version=$1 stores=$2 label=$3; shift 3
  # shellcheck disable=SC2086
  mvn -B -ntp -q ${MVN_FLAGS:-} -pl infinispan-bench -am package -DskipTests -Dbench.infinispan.version="$version"
  local cp="infinispan-bench/target/classes:$(cat infinispan-bench/target/classpath.txt)"
  java -cp "$cp" org.openjdk.jmh.Main "$@" -p store="$stores" -rf json -rff "$out/$label.json" | tee "$out/$label.txt"
}

if [ "$versions" != 15 ]; then
  bench 16.0.9 HTOD,SIFS throughput-16.0.9 CacheThroughputBenchmark "${size[@]}" "${iters[@]}"
  bench 16.0.9 HTOD,SIFS restart-16.0.9 RestartBenchmark "${restart[@]}"
fi
if [ "$versions" != 16 ]; then
  bench 15.2.6.Final HTOD,SIFS,ROCKSDB throughput-15.2.6 CacheThroughputBenchmark "${size[@]}" "${iters[@]}"
  bench 15.2.6.Final HTOD,SIFS,ROCKSDB restart-15.2.6 RestartBenchmark "${restart[@]}"
fi
