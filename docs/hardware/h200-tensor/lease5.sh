#!/usr/bin/env bash
# Tensor cores in Chrome: how far K splits on them. Page bundles of one build with SPLIT_FILL 792
# (committed), 396 and 256, in turn, twice; the plain bundle once; ViT-B/16 at batch 8 op by op.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r7/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
tar xJf target/gpu-pack/var.tar.xz -C /tmp/gpu || exit 4
rm -rf /tmp/gpu/plain && cp -a /tmp/gpu/harness/bundle /tmp/gpu/plain
sed -i 's/^  arm() {$/  arm() { return;/' /tmp/gpu/plain/subgroup-matrix.js
grep -c "arm() { return;" /tmp/gpu/plain/subgroup-matrix.js > $OUT/plain-check.txt
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
H=/tmp/gpu/harness/harness
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 300 $H run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r7/$n > /tmp/r7/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r7 && tar czf $OUT/r7.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops)
# The first run computes the references (and its batch-1 cases ran slow in both earlier leases): not counted.
one chrome/warm /tmp/gpu/harness/bundle "${pm[@]}"; save
for i in 1 2; do
  one chrome/split792-$i /tmp/gpu/harness/bundle "${pm[@]}"
  one chrome/split396-$i /tmp/gpu/var/split396 "${pm[@]}"
  one chrome/split256-$i /tmp/gpu/var/split256 "${pm[@]}"
  save
done
one chrome/plain /tmp/gpu/plain "${pm[@]}"; save
left 420 && one chrome/vit8-ops /tmp/gpu/harness/bundle --model vit --batch 8 --max-time 2
save
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
