#!/usr/bin/env bash
# Tensor cores in Chrome: a split GEMM's chunks in 128x128 blocks where they fill the SMs (splitlarge)
# against 64x64 always (split792), in turn, three times; ViT-B/16 at batch 8 op by op.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r8/chrome
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
{ [ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; }; } || exit 3
tar xJf target/gpu-pack/var2.tar.xz -C /tmp/gpu || exit 4
rm -rf /tmp/gpu/plain && cp -a /tmp/gpu/harness/bundle /tmp/gpu/plain
sed -i 's/^  arm() {$/  arm() { return;/' /tmp/gpu/plain/subgroup-matrix.js
grep -c "arm() { return;" /tmp/gpu/plain/subgroup-matrix.js > $OUT/plain-check.txt
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
o=(--samples 10 --max-time 1 --timeout 200 --retries 0)
H=/tmp/gpu/harness/harness
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source target/gpu-pack/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 300 $H run "${o[@]}" "${cr[@]}" --platform webgpu "$@" --out /tmp/r8/$n > /tmp/r8/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r8 && tar czf $OUT/r8.tgz chrome ); }
left() { [ $(( $(date +%s) - start )) -lt "$1" ]; }
pm=(--model whisper,vit --batch 1,8 --no-ops)
# The first run computes the references (and its batch-1 cases ran slow in both earlier leases): not counted.
one chrome/warm /tmp/gpu/harness/bundle "${pm[@]}"; save
for i in 1 2 3; do
  one chrome/split792-$i /tmp/gpu/harness/bundle "${pm[@]}"
  one chrome/splitlarge-$i /tmp/gpu/var2/splitlarge "${pm[@]}"
  save
done
one chrome/tinyllama-792 /tmp/gpu/harness/bundle --model tinyllama --layers 4 --context 128
one chrome/tinyllama-large /tmp/gpu/var2/splitlarge --model tinyllama --layers 4 --context 128
if left 400; then
  [ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort >/dev/null
  rm -rf /tmp/gpu/harness/bundle && cp -a /tmp/gpu/var2/splitlarge /tmp/gpu/harness/bundle
  PERCEPTION=only bash docs/hardware/h100-firefox.sh ort-chrome > /dev/null 2>&1; cat /tmp/evidence/ort-chrome/exit-codes.txt >> $OUT/rc.txt
fi
left 480 && one chrome/vit8-ops /tmp/gpu/var2/splitlarge --model vit --batch 8
save
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
