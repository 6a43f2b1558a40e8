#!/usr/bin/env bash
# Lease 11: a linear layer whose 64x64 blocks are too few (32x32 plain) on tensor cores in 64x64 blocks.
# Page bundles of this build ("new") and of 0981e2f ("head"), in turn; Whisper's ops at batch 1 with each;
# then onnxruntime-web beside the new bundle (perception, Chrome).
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r11/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
tar xJf target/gpu-pack/var3.tar.xz -C /tmp/gpu || exit 4
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
NEW=/tmp/gpu/harness/bundle HEAD=/tmp/gpu/var3/head
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r11/$n > /tmp/r11/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r11 && tar czf $OUT/r11.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops)
mini=(--model whisper:frames=256,heads=12,layers=6 --batch 8 --no-ops)
case "${1:-a}" in
a)
  # The first run of a lease: Chromium's first start, the references computed; not counted.
  one chrome/warm $NEW "${pm[@]}"; save
  for i in 1 2; do
    one chrome/new-$i $NEW "${pm[@]}"
    one chrome/head-$i $HEAD "${pm[@]}"
    one chrome/mini-new-$i $NEW "${mini[@]}"
    one chrome/mini-head-$i $HEAD "${mini[@]}"
    save
  done
  left 470 && { one chrome/ops-new $NEW --model whisper --batch 1; save; }
  left 520 && { one chrome/ops-head $HEAD --model whisper --batch 1; save; }
  ;;
b)
  { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /tmp/r11/ort.log 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; cp -r /tmp/evidence/ort-chrome /tmp/r11/chrome/ort 2>/dev/null; save; }
  ;;
esac
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
