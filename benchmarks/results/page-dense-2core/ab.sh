#!/bin/bash
# ab.sh JAR LABEL: one trial of DurablePutBenchmark (htod-log; T writers, default 64; V-byte values,
# default 200) from JAR, and, over one 15-second window of its measured iteration, what the disk
# did (bytes written and write requests, from /proc/diskstats of DISK, default vda) and the
# flusher thread's processor time (/proc/PID/task/TID/stat), each a put. One line to stdout.
set -euo pipefail
jar=$1 label=$2 disk=${DISK:-vda}
ds() { awk -v d="$disk" '$3==d{printf "%.0f %.0f\n", $10*512, $8}' /proc/diskstats; }
fl() { awk '{print $14+$15}' "$(grep -l 'htod-flusher' /proc/"$1"/task/*/comm | head -1 | xargs dirname)/stat"; }
log=$(mktemp)
java -jar "$jar" DurablePutBenchmark -t "${T:-64}" -p store=htod-log -p valueSize="${V:-200}" \
    -wi 1 -w 10s -i 1 -r 25s -f 1 > "$log" 2>&1 &
sleep 18 # the fork's warmup (10 s) and the start of its measured iteration
pid=$(pgrep -f ForkedMain | head -1)
a=$(ds); fa=$(fl "$pid"); sleep 15; b=$(ds); fb=$(fl "$pid"); wait
r=$(grep -E '^DurablePut' "$log" | awk '{print $(NF-1)}'); rm -f "$log"
python3 -c "
a='$a'.split(); b='$b'.split(); r=float('$r'); hz=100.0
w=int(b[0])-int(a[0]); ios=int(b[1])-int(a[1]); f=(int('$fb')-int('$fa'))/hz
print('$label V=${V:-200} T=${T:-64}: puts/s %.0f  disk bytes/put %.0f  write reqs/s %.0f  flusher cores %.2f  flusher us/put %.2f'
      % (r, w/15/r, ios/15, f/15, f/15/r*1e6))"
