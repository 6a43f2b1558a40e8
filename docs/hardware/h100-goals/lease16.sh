#!/usr/bin/env bash
# Lease 16, on an H100 (nvidia-h100-x1): issue 27's goal table where the issue names it. Each call stashes
# what it carried (Chromium's five parts, Firefox's three, MiniLM's four, harness, onnxruntime-web, the
# Vulkan loader, the variant bundles), unpacks each once whole, then runs its step:
#   ab           Chrome: ViT-B/16 and Whisper-tiny at batch 1 and 8, webgpu alone, the tensor-core tiles
#                padded (this build) and not (var6/head, 835135b), in turn, twice each
#   STEP         a step of docs/hardware/h100-firefox.sh (ort-chrome, ort-perception, cold-chrome, ...)
#   head         from here on, this build's bundle is var6/head's
set -u
start=$(date +%s)
mkdir -p /tmp/gpu /tmp/gpu-pack /tmp/cpk /tmp/r16/chrome
cp target/gpu-pack2/cpart.* /tmp/cpk/ 2>/dev/null
cp target/gpu-pack5/* /tmp/gpu-pack/ 2>/dev/null
p=target/gpu-pack
[ -f $p/natlib.tar.xz ] && [ ! -f /tmp/gpu/lib/libvulkan.so.1 ] && tar xJf $p/natlib.tar.xz -C /tmp/gpu
[ -f $p/harness.tar.xz ] && [ ! -x /tmp/gpu/harness/harness ] && tar xJf $p/harness.tar.xz -C /tmp/gpu
[ -f $p/ort.tar.xz ] && [ ! -d /tmp/gpu/ort ] && { mkdir -p /tmp/gpu/ort && tar xJf $p/ort.tar.xz -C /tmp/gpu/ort; }
[ -f $p/var6.tar.xz ] && [ ! -d /tmp/gpu/var6 ] && tar xJf $p/var6.tar.xz -C /tmp/gpu
if [ ! -x /tmp/gpu/chromium/chromium ] && [ "$(ls /tmp/cpk | wc -l)" -ge 5 ]; then
  cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu && echo "Chromium unpacked" >> $OUT/rc.txt; fi
if [ ! -x /tmp/gpu/firefox/firefox-esr ] && [ "$(ls /tmp/gpu-pack/firefox.tar.xz.* 2>/dev/null | wc -l)" -ge 3 ] &&
   [ "$(cat /tmp/gpu-pack/firefox.tar.xz.* | sha256sum | cut -c1-64)" = "$(cat /tmp/gpu-pack/firefox.sha256)" ]; then
  cat /tmp/gpu-pack/firefox.tar.xz.* | xz -d | tar xf - -C /tmp/gpu && echo "Firefox unpacked" >> $OUT/rc.txt; fi
if [ ! -d /tmp/gpu/all-MiniLM-L6-v2 ] && [ "$(ls /tmp/gpu-pack/minilm.tar.* 2>/dev/null | wc -l)" -ge 4 ]; then
  cat /tmp/gpu-pack/minilm.tar.* | tar xf - -C /tmp/gpu && echo "MiniLM unpacked" >> $OUT/rc.txt; fi
ls /tmp/gpu /tmp/cpk /tmp/gpu-pack > $OUT/stash.txt 2>&1
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source $p/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run --samples 10 --max-time 1 --timeout 200 --retries 0 "${cr[@]}" "$@" --out /tmp/r16/$n \
      > /tmp/r16/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
for step in "$@"; do
  case $step in
  ab)
    pm=(--platform webgpu --model whisper,vit --batch 1,8 --no-ops)
    one chrome/pad-1 /tmp/gpu/harness/bundle "${pm[@]}"
    one chrome/head-1 /tmp/gpu/var6/head "${pm[@]}"
    one chrome/pad-2 /tmp/gpu/harness/bundle "${pm[@]}"
    one chrome/head-2 /tmp/gpu/var6/head "${pm[@]}"
    ( cd /tmp/r16 && tar czf $OUT/r16.tgz chrome ) ;;
  ort2)
    one chrome/ort2 /tmp/gpu/harness/bundle --platform webgpu,ort --ort-dir /tmp/gpu/ort --no-ops --model whisper,vit --batch 1,8
    ( cd /tmp/r16 && tar czf $OUT/r16.tgz chrome ) ;;
  head)
    [ -d /tmp/gpu/harness/bundle.pad ] || mv /tmp/gpu/harness/bundle /tmp/gpu/harness/bundle.pad
    rm -rf /tmp/gpu/harness/bundle && cp -a /tmp/gpu/var6/head /tmp/gpu/harness/bundle ;;
  *)
    t0=$(date +%s); bash docs/hardware/h100-firefox.sh "$step" > /tmp/r16/$step.log 2>&1
    echo "$step rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt; cat /tmp/evidence/$step/exit-codes.txt >> $OUT/rc.txt 2>/dev/null ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
