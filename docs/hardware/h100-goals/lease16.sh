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
R=/tmp/r16; mkdir -p $R/chrome
ONE=(--samples 10 --max-time 1)
source docs/hardware/h100-goals/stash.sh
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
    use_bundle pad /tmp/gpu/var6/head ;;
  *) step "$step" ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
