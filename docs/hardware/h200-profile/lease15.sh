#!/usr/bin/env bash
# Lease 15: matmul on subgroup matrices with one accumulator a product and lo unscaled ("new": half the epilogue),
# against dbfc5cf ("base"); every run profiled.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r15/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
tar xJf target/gpu-pack/var5.tar.xz -C /tmp/gpu || exit 4
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
NEW=/tmp/gpu/harness/bundle BASE=/tmp/gpu/var5/base
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run "${o[@]}" "${cr[@]}" --platform ${PLAT:-webgpu} "$@" --out /tmp/r15/$n > /tmp/r15/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r15 && tar czf $OUT/r15.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops --profile)
mini=(--model whisper:frames=256,heads=12,layers=6 --batch 8 --no-ops --profile)
case "${1:-a}" in
a)
  one chrome/warm $NEW "${pm[@]}"; save
  for i in 1 2; do
    one chrome/base-$i $BASE "${pm[@]}"
    one chrome/new-$i $NEW "${pm[@]}"
    one chrome/mini-base-$i $BASE "${mini[@]}"
    one chrome/mini-new-$i $NEW "${mini[@]}"
    save
  done
  ;;
esac
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
