#!/usr/bin/env bash
# Measures the restart of the publishing server after SIGKILL: starts it on a fresh store with the
# demo site (and N archive fragments with --filler N), publishes and reads under the load generator,
# kills the server with SIGKILL in the middle of the load, starts it again on the same store and
# prints what the second start says (recovery, time to ready). Needs `mvn -DskipTests package` first.
# Usage: deploy-sample/restart-after-kill.sh [--filler N]
set -euo pipefail
cd "$(dirname "$0")/.."
jar=deploy-sample/target/htod-sample.jar
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
extra=("$@")

start() { # $1: name; starts the server in the background, waits until its port file exists
    java -jar "$jar" --data "$dir/site.htod" --port 0 --port-file "$dir/$1.port" --demo "${extra[@]}" \
        >"$dir/$1.log" 2>&1 &
    pid=$!
    while [ ! -f "$dir/$1.port" ]; do
        kill -0 "$pid" 2>/dev/null || { cat "$dir/$1.log"; exit 1; }
        sleep 0.05
    done
}

start first
echo "first start:"; sed 's/^/  /' "$dir/first.log"
port=$(cat "$dir/first.port")
java -jar "$jar" --load --target "http://127.0.0.1:$port/" --seconds 30 >"$dir/load.log" 2>&1 &
load=$!
sleep 5
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
wait "$load" 2>/dev/null || true
t0=$(date +%s%N)
start second
t1=$(date +%s%N)
echo "after SIGKILL under load, second start ($(( (t1 - t0) / 1000000 )) ms from exec to a served port, JVM start included):"
sed 's/^/  /' "$dir/second.log"
curl -s "http://127.0.0.1:$(cat "$dir/second.port")/stats" | sed -n 's/.*"detail":"\([^"]*\)".*/  store: \1/p'
echo
kill -TERM "$pid"
wait "$pid" 2>/dev/null || true
