#!/usr/bin/env bash
# Lease 12: profiles (each dispatch alone between timestamps) of the perception passes in Chrome, beside
# onnxruntime-web JSEP's, and Whisper at batch 1 against onnxruntime-web with 30 samples.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r12/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
NEW=/tmp/gpu/harness/bundle HEAD=/tmp/gpu/var3/head
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run "${o[@]}" "${cr[@]}" --platform ${PLAT:-webgpu} "$@" --out /tmp/r12/$n > /tmp/r12/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r12 && tar czf $OUT/r12.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops)
mini=(--model whisper:frames=256,heads=12,layers=6 --batch 8 --no-ops)
case "${1:-a}" in
a)
  one chrome/warm $NEW "${pm[@]}"; save
  one chrome/pass-1 $NEW "${pm[@]}"; save
  one chrome/pass-2 $NEW "${pm[@]}"; save
  one chrome/ops $NEW --model whisper --batch 1; save
  one chrome/mini $NEW "${mini[@]}"; save
  ;;
b)
  { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /tmp/r12/ort.log 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; cp -r /tmp/evidence/ort-chrome /tmp/r12/chrome/ort 2>/dev/null; save; }
  left 330 && { o=(--samples 30 --max-time 6 --timeout 200 --retries 0 --ort-dir /tmp/gpu/ort); PLAT=webgpu,ort one chrome/whisper1-ort30 $NEW --model whisper --batch 1 --no-ops; save; }
  ;;
esac
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
