#!/usr/bin/env bash
# Tensor cores (subgroup matrices) in Chrome: the new bundle ("tensor") against the same bundle with
# subgroup-matrix.js never arming ("plain"), in turn, twice; onnxruntime-web beside "tensor"; the
# prefill and the MiniLM-shaped encoder layer both ways.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r5/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
[ -x /tmp/gpu/harness/harness ] || tar xJf /tmp/cpk/harness.tar.xz -C /tmp/gpu || exit 4
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null || exit 5
rm -rf /tmp/gpu/plain && cp -a /tmp/gpu/harness/bundle /tmp/gpu/plain
sed -i 's/^  arm() {$/  arm() { return;/' /tmp/gpu/plain/subgroup-matrix.js
grep -c "arm() { return;" /tmp/gpu/plain/subgroup-matrix.js > $OUT/plain-check.txt
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0 --no-ops)
H=/tmp/gpu/harness/harness
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 300 $H run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r5/$n > /tmp/r5/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r5 && tar czf $OUT/r5.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8)
one chrome/tensor-1 /tmp/gpu/harness/bundle "${pm[@]}"; save
one chrome/plain-1 /tmp/gpu/plain "${pm[@]}"; save
left 330 && { PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /dev/null 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt; }
left 430 && one chrome/tensor-2 /tmp/gpu/harness/bundle "${pm[@]}"
left 470 && one chrome/plain-2 /tmp/gpu/plain "${pm[@]}"
save
for m in "--model tinyllama --layers 4 --context 128" "--model whisper:frames=256,heads=12,layers=1 --batch 8"; do
  n=$(echo "$m" | cut -d' ' -f2 | cut -d: -f1)
  left 520 || break
  one chrome/$n-tensor /tmp/gpu/harness/bundle $m
  one chrome/$n-plain /tmp/gpu/plain $m
done
save
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
