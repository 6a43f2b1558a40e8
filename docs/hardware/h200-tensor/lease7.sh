#!/usr/bin/env bash
# Lease 7: the committed build (cd8980c): tensor cores against --no-tensor-cores, in turn, twice, after a
# first run that computes the references; onnxruntime-web beside it.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r9/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0 --no-ops --model whisper,vit --batch 1,8)
one() { local n=$1; shift; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    timeout 300 harness run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r9/$n > /tmp/r9/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r9 && tar czf $OUT/r9.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
one chrome/warm; save
for i in 1 2; do
  one chrome/tensor-$i
  one chrome/notensor-$i --no-tensor-cores
  save
done
left 420 && { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /dev/null 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; }
save
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
