#!/usr/bin/env bash
# Lease 19, on an H100 (nvidia-h100-x1), after lease 18 in the same session: the tensor-core GEMM's 64x64 block
# with tiles 64 deep (lease19/depth64.patch on f7e2099, harness.tar.xz) against 7638a5a's bundle
# (harness-base.tar.xz), one binary, Whisper-tiny and ViT-B/16 at batch 1, in turn, twice each:
#   bash lease19.sh ab1
# Each call stashes what it carried (harness, the base bundle, the Vulkan loader, Chromium in six parts of 23 MB).
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/gpu-pack /tmp/cpk /tmp/r19/chrome /tmp/gpu/base
cp target/gpu-pack7/cq.* /tmp/cpk/ 2>/dev/null; rm -f /tmp/cpk/cpart.*
cp target/gpu-pack5/firefox* target/gpu-pack6/* /tmp/gpu-pack/ 2>/dev/null
p=target/gpu-pack
[ -f $p/natlib.tar.xz ] && [ ! -f /tmp/gpu/lib/libvulkan.so.1 ] && tar xJf $p/natlib.tar.xz -C /tmp/gpu
[ -f $p/harness.tar.xz ] && [ ! -x /tmp/gpu/harness/harness ] && tar xJf $p/harness.tar.xz -C /tmp/gpu
[ -f $p/harness-base.tar.xz ] && [ ! -d /tmp/gpu/base/harness/bundle ] && tar xJf $p/harness-base.tar.xz -C /tmp/gpu/base
[ -f $p/ort.tar.xz ] && [ ! -d /tmp/gpu/ort ] && { mkdir -p /tmp/gpu/ort && tar xJf $p/ort.tar.xz -C /tmp/gpu/ort; }
if [ ! -x /tmp/gpu/chromium/chromium ] && [ "$(ls /tmp/cpk | wc -l)" -ge 6 ]; then
  cat /tmp/cpk/cq.* | xz -d | tar xf - -C /tmp/gpu && echo "Chromium unpacked" >> $OUT/rc.txt; fi
if [ ! -x /tmp/gpu/firefox/firefox-esr ] && [ "$(ls /tmp/gpu-pack/firefox.tar.xz.* 2>/dev/null | wc -l)" -ge 3 ] &&
   [ "$(cat /tmp/gpu-pack/firefox.tar.xz.* | sha256sum | cut -c1-64)" = "$(cat /tmp/gpu-pack/firefox.sha256)" ]; then
  cat /tmp/gpu-pack/firefox.tar.xz.* | xz -d | tar xf - -C /tmp/gpu && echo "Firefox unpacked" >> $OUT/rc.txt; fi
if [ ! -d /tmp/gpu/all-MiniLM-L6-v2 ] && [ "$(ls /tmp/gpu-pack/minilm2.tar.* 2>/dev/null | wc -l)" -ge 4 ]; then
  cat /tmp/gpu-pack/minilm2.tar.* | tar xf - -C /tmp/gpu && echo "MiniLM unpacked" >> $OUT/rc.txt; fi
ls /tmp/gpu /tmp/cpk /tmp/gpu-pack > $OUT/stash.txt 2>&1
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source $p/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run --timeout 200 --retries 0 "${cr[@]}" "$@" --out /tmp/r19/$n \
      > /tmp/r19/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r19 && tar czf $OUT/r19.tgz chrome ); }
NEW=/tmp/gpu/harness/bundle; [ -d /tmp/gpu/harness/bundle.new ] && NEW=/tmp/gpu/harness/bundle.new
BASE=/tmp/gpu/base/harness/bundle
for step in "$@"; do
  case $step in
  ab)
    pm=(--platform webgpu --model whisper,vit --batch 1,8 --no-ops --samples 10 --max-time 1 --profile)
    one chrome/tc-1 $NEW "${pm[@]}"; save
    one chrome/base-1 $BASE "${pm[@]}"; one chrome/tc-2 $NEW "${pm[@]}"; one chrome/base-2 $BASE "${pm[@]}"; save ;;
  ab1)
    pm=(--platform webgpu --model whisper,vit --batch 1 --no-ops --samples 10 --max-time 1 --profile)
    one chrome/new-1 $NEW "${pm[@]}"; one chrome/base-1 $BASE "${pm[@]}"; one chrome/new-2 $NEW "${pm[@]}"; one chrome/base-2 $BASE "${pm[@]}"; save ;;
  whisper30)
    w=(--platform webgpu,ort --ort-dir /tmp/gpu/ort --model whisper --batch 1 --no-ops --samples 30 --max-time 6)
    one chrome/whisper30-1 $NEW "${w[@]}"; one chrome/whisper30-2 $NEW "${w[@]}"; save ;;
  base)
    [ -d /tmp/gpu/harness/bundle.new ] || mv /tmp/gpu/harness/bundle /tmp/gpu/harness/bundle.new
    rm -rf /tmp/gpu/harness/bundle && cp -a $BASE /tmp/gpu/harness/bundle ;;
  *)
    t0=$(date +%s); bash docs/hardware/h100-firefox.sh "$step" > /tmp/r19/$step.log 2>&1
    echo "$step rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt; cat /tmp/evidence/$step/exit-codes.txt >> $OUT/rc.txt 2>/dev/null ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
