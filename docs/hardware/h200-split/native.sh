#!/usr/bin/env bash
# Native A/B on the GPU machine: runs "name:binary:ENV=V,ENV=V" in turn until $1 seconds have passed.
set -u
start=$(date +%s); budget=$1; shift
mkdir -p /tmp/gpu /tmp/r
[ -x /tmp/gpu/harness/harness ] || [ ! -f target/gpu-pack/harness.tar.xz ] || tar xJf target/gpu-pack/harness.tar.xz -C /tmp/gpu
[ -x /tmp/gpu/gelu/harness-var ] || [ ! -f target/gpu-pack/xd.tar.xz ] || tar xJf target/gpu-pack/xd.tar.xz -C /tmp/gpu
[ -x /tmp/gpu/split/harness-split ] || [ ! -f target/gpu-pack/xe.tar.xz ] || tar xJf target/gpu-pack/xe.tar.xz -C /tmp/gpu
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=/tmp/gpu/lib HARNESS_BUNDLE=/tmp/nobundle
nvidia-smi -L > $OUT/smi.txt 2>&1
o=(--platform native --samples 10 --max-time 1 --timeout 200 --retries 0 --model whisper,vit --batch 1,8 --no-ops)
for spec in "$@"; do
  n=${spec%%:*}; rest=${spec#*:}; bin=${rest%%:*}; envs=${rest#*:}
  [ -f /tmp/r/$n/results.json ] && continue
  [ $(( $(date +%s) - start )) -lt "$budget" ] || { echo "$n: out of time" >> $OUT/rc.txt; continue; }
  t0=$(date +%s)
  ( cd /tmp; [ -n "$envs" ] && for e in ${envs//,/ }; do export "$e"; done
    timeout 300 $bin run "${o[@]}" --out /tmp/r/$n > /tmp/r/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt )
done
cd /tmp/r && tar czf $OUT/native.tgz */results.json *.log
cat $OUT/rc.txt
