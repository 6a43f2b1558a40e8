#!/usr/bin/env bash
# Lease 13: matmul on subgroup matrices with tiles 64 deep in its 64x64 block ("new"), against bb08a42 ("base"),
# and bb08a42 with attention in chunks of 8 tiles for up to 2048 workgroups ("chunks8"); profiles in each.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r13/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
tar xJf target/gpu-pack/var4.tar.xz -C /tmp/gpu || exit 4
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
NEW=/tmp/gpu/harness/bundle BASE=/tmp/gpu/var4/base CH8=/tmp/gpu/var4/chunks8
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run "${o[@]}" "${cr[@]}" --platform ${PLAT:-webgpu} "$@" --out /tmp/r13/$n > /tmp/r13/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r13 && tar czf $OUT/r13.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops)
mini=(--model whisper:frames=256,heads=12,layers=6 --batch 8 --no-ops)
case "${1:-a}" in
a)
  one chrome/warm $NEW "${pm[@]}"; save
  for i in 1 2; do
    one chrome/base-$i $BASE "${pm[@]}"
    one chrome/new-$i $NEW "${pm[@]}"
    one chrome/chunks8-$i $CH8 "${pm[@]}"
    one chrome/mini-base-$i $BASE "${mini[@]}"
    one chrome/mini-new-$i $NEW "${mini[@]}"
    save
  done
  left 420 && { one chrome/ops-new $NEW --model whisper --batch 1; save; }
  ;;
esac
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
