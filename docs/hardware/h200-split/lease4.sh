#!/usr/bin/env bash
# This session's second Chrome lease: 6aee359 (base6: binary and page bundle) against 4988cd5 (harness.tar.xz),
# natively in turn twice; in Chrome both bundles under 4988cd5's binary, twice; onnxruntime-web beside 4988cd5.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r3/chrome /tmp/r3/native
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } && bash target/gpu-pack/gpu.sh stash >/dev/null && bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 3
[ -d /tmp/gpu/base6 ] || tar xJf target/gpu-pack/xg.tar.xz -C /tmp/gpu || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0 --no-ops)
F=/tmp/gpu/harness/harness; B=/tmp/gpu/base6/harness
one() { local n=$1 h=$2 b=$3; shift 3; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 $h run "${o[@]}" "$@" --out /tmp/r3/$n > /tmp/r3/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r3 && tar czf $OUT/r3.tgz chrome native ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8)
for i in 1 2; do
  one native/base-$i $B /tmp/nobundle --platform native "${pm[@]}"
  one native/head-$i $F /tmp/nobundle --platform native "${pm[@]}"
done
save
one chrome/base-1 $F /tmp/gpu/base6/bundle "${cr[@]}" --platform webgpu "${pm[@]}"
one chrome/head-1 $F /tmp/gpu/harness/bundle "${cr[@]}" --platform webgpu "${pm[@]}"
save
left 420 && { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /dev/null 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; }
left 500 && one chrome/base-2 $F /tmp/gpu/base6/bundle "${cr[@]}" --platform webgpu "${pm[@]}"
left 520 && one chrome/head-2 $F /tmp/gpu/harness/bundle "${cr[@]}" --platform webgpu "${pm[@]}"
for m in "--model tinyllama --layers 4 --context 128" "--model whisper:frames=256,heads=12,layers=1 --batch 8"; do
  left 540 || break
  n=$(echo "$m" | cut -d' ' -f2 | cut -d: -f1)
  one native/$n-base $B /tmp/nobundle --platform native $m
  one native/$n-head $F /tmp/nobundle --platform native $m
done
save
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
