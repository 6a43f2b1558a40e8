#!/usr/bin/env bash
# Lease 17, on an H100 (nvidia-h100-x1): flash attention's tiles with a key's parts interleaved (this
# build, harness.tar.xz) against 7638a5a (harness-base.tar.xz): Whisper-tiny's encoder at batch 1
# natively, in turn, twice each, with --profile; then, once Chromium's five parts are stashed, in Chrome
# beside onnxruntime-web (30 samples), and the 7638a5a bundle in Chrome.
#   native | chrome | chrome-base     (steps, in the order given; none: stash only)
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/cpk /tmp/r17/native /tmp/r17/chrome /tmp/gpu/base
source docs/hardware/h100-goals/stash.sh
# one NAME DIR args: harness from DIR (its binary and bundle), whisper at batch 1, whole passes only
one() { local n=$1 d=$2; shift 2; local t0=$(date +%s)
  ( source $p/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH:/usr/local/nvidia/lib64; cd /tmp
    HARNESS_BUNDLE=$d/bundle timeout 250 $d/harness run --model whisper --batch 1 --no-ops --timeout 200 --retries 0 "$@" --out /tmp/r17/$n \
      > /tmp/r17/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r17 && tar czf $OUT/r17.tgz native chrome ); }
NEW=/tmp/gpu/harness BASE=/tmp/gpu/base/harness
for step in "$@"; do
  case $step in
  native)
    o=(--platform native --samples 10 --max-time 1 --profile)
    one native/new-1 $NEW "${o[@]}"; one native/base-1 $BASE "${o[@]}"; one native/new-2 $NEW "${o[@]}"; one native/base-2 $BASE "${o[@]}"; save ;;
  chrome|chrome2|chrome3)
    one chrome/base-ort30-$step $BASE "${cr[@]}" --platform webgpu,ort --ort-dir /tmp/gpu/ort --samples 30 --max-time 6 --profile; save ;;
  chrome-base)
    one chrome/base $BASE "${cr[@]}" --platform webgpu --samples 10 --max-time 1 --profile; save
    one chrome/new $NEW "${cr[@]}" --platform webgpu --samples 10 --max-time 1 --profile; save ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
