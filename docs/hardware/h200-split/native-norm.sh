#!/usr/bin/env bash
# Natively: 79d0a77's build with HARNESS_NO_NORM (the norm apart, as 4988cd5) or without, in turn, twice.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/r4
tar xJf target/gpu-pack/xh.tar.xz -C /tmp/gpu && tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=/tmp/gpu/lib HARNESS_BUNDLE=/tmp/nobundle
nvidia-smi -L > $OUT/smi.txt 2>&1
H=/tmp/gpu/norm/harness-norm
o=(--platform native --samples 10 --max-time 1 --timeout 200 --retries 0 --no-ops)
one() { local n=$1; shift; local t0=$(date +%s); ( cd /tmp; timeout 250 $H run "${o[@]}" "$@" --out /tmp/r4/$n > /tmp/r4/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ); }
for i in 1 2; do
  one normed-$i --model whisper,vit --batch 1,8
  ( export HARNESS_NO_NORM=1; one apart-$i --model whisper,vit --batch 1,8 )
  one prefill-normed-$i --model tinyllama --layers 4 --context 128
  ( export HARNESS_NO_NORM=1; one prefill-apart-$i --model tinyllama --layers 4 --context 128 )
  one encoder-normed-$i --model whisper:frames=256,heads=12,layers=1 --batch 8
  ( export HARNESS_NO_NORM=1; one encoder-apart-$i --model whisper:frames=256,heads=12,layers=1 --batch 8 )
done
cd /tmp/r4 && tar czf $OUT/r4.tgz */results.json *.log
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt; cat $OUT/rc.txt
