#!/usr/bin/env bash
# Lease 10, call A: attention on tensor cores. Whisper at batch 1 with its ops (attention alone),
# with tensor cores and without; a 4-layer TinyLlama prefill (causal, GQA) and ViT/Whisper batch 1,8.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r10/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
one() { local n=$1; shift; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    timeout 280 harness run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r10/$n > /tmp/r10/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r10 && tar czf $OUT/r10.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
case "${1:-a}" in
a)
  one chrome/whisper-ops-tensor --model whisper --batch 1; save
  one chrome/whisper-ops-notensor --model whisper --batch 1 --no-tensor-cores; save
  left 430 && { one chrome/tinyllama-tensor --model tinyllama --layers 4 --context 128 --no-ops; save; }
  ;;
b)
  one chrome/perception-tensor --model whisper,vit --batch 1,8 --no-ops; save
  one chrome/perception-notensor --model whisper,vit --batch 1,8 --no-ops --no-tensor-cores; save
  left 330 && { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /dev/null 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; cp -r /tmp/evidence/ort-chrome /tmp/r10/chrome/ort 2>/dev/null; save; }
  ;;
esac
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
