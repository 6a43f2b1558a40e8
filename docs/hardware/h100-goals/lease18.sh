#!/usr/bin/env bash
# Lease 18, on an H100 (nvidia-h100-x1): two kernels tried in Chrome, neither kept (lease18/tensor-attention.patch,
# then lease18/one-accumulator.patch, each built on 6711530 and carried as harness.tar.xz), against 7638a5a's bundle
# (harness-base.tar.xz, the same kernels as 6711530); then, on 7638a5a's bundle, the cold starts not yet measured on
# the H100. Each call stashes what it carried (harness, the base bundle, onnxruntime-web, the Vulkan loader,
# Chromium's five parts, Firefox's four, MiniLM's four), unpacks each once whole, then runs its steps:
#   ab           Chrome: ViT-B/16 and Whisper-tiny at batch 1 and 8, webgpu alone, --profile, the tried build's
#                bundle (tc-*) and 7638a5a's (base-*), same binary, in turn, twice each
#   base         from here on, the h100-firefox.sh steps run 7638a5a's bundle
#   whisper30    Chrome: Whisper-tiny at batch 1 beside onnxruntime-web, 30 samples, twice (not run)
#   STEP         a step of docs/hardware/h100-firefox.sh (cold-decoder-chrome, cold-chrome, cold-firefox, ...)
# Run as: ab (twice, once a build); base cold-decoder-chrome; MINILM=skip ... cold-chrome; MINILM=skip ... cold-firefox.
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/gpu-pack /tmp/cpk /tmp/r18/chrome /tmp/gpu/base
cp target/gpu-pack2/cpart.* /tmp/cpk/ 2>/dev/null
cp target/gpu-pack5/firefox* target/gpu-pack6/* /tmp/gpu-pack/ 2>/dev/null
p=target/gpu-pack
[ -f $p/natlib.tar.xz ] && [ ! -f /tmp/gpu/lib/libvulkan.so.1 ] && tar xJf $p/natlib.tar.xz -C /tmp/gpu
[ -f $p/harness.tar.xz ] && [ ! -x /tmp/gpu/harness/harness ] && tar xJf $p/harness.tar.xz -C /tmp/gpu
[ -f $p/harness-base.tar.xz ] && [ ! -d /tmp/gpu/base/harness/bundle ] && tar xJf $p/harness-base.tar.xz -C /tmp/gpu/base
[ -f $p/ort.tar.xz ] && [ ! -d /tmp/gpu/ort ] && { mkdir -p /tmp/gpu/ort && tar xJf $p/ort.tar.xz -C /tmp/gpu/ort; }
if [ ! -x /tmp/gpu/chromium/chromium ] && [ "$(ls /tmp/cpk | wc -l)" -ge 5 ]; then
  cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu && echo "Chromium unpacked" >> $OUT/rc.txt; fi
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
    HARNESS_BUNDLE=$b timeout 280 harness run --timeout 200 --retries 0 "${cr[@]}" "$@" --out /tmp/r18/$n \
      > /tmp/r18/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
save() { ( cd /tmp/r18 && tar czf $OUT/r18.tgz chrome ); }
NEW=/tmp/gpu/harness/bundle; [ -d /tmp/gpu/harness/bundle.new ] && NEW=/tmp/gpu/harness/bundle.new
BASE=/tmp/gpu/base/harness/bundle
for step in "$@"; do
  case $step in
  ab)
    pm=(--platform webgpu --model whisper,vit --batch 1,8 --no-ops --samples 10 --max-time 1 --profile)
    one chrome/tc-1 $NEW "${pm[@]}"; save
    one chrome/base-1 $BASE "${pm[@]}"; one chrome/tc-2 $NEW "${pm[@]}"; one chrome/base-2 $BASE "${pm[@]}"; save ;;
  whisper30)
    w=(--platform webgpu,ort --ort-dir /tmp/gpu/ort --model whisper --batch 1 --no-ops --samples 30 --max-time 6)
    one chrome/whisper30-1 $NEW "${w[@]}"; one chrome/whisper30-2 $NEW "${w[@]}"; save ;;
  base)
    [ -d /tmp/gpu/harness/bundle.new ] || mv /tmp/gpu/harness/bundle /tmp/gpu/harness/bundle.new
    rm -rf /tmp/gpu/harness/bundle && cp -a $BASE /tmp/gpu/harness/bundle ;;
  *)
    t0=$(date +%s); bash docs/hardware/h100-firefox.sh "$step" > /tmp/r18/$step.log 2>&1
    echo "$step rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt; cat /tmp/evidence/$step/exit-codes.txt >> $OUT/rc.txt 2>/dev/null ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
