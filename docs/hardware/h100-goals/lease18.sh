#!/usr/bin/env bash
# Leases 18 to 20, on an H100 (nvidia-h100-x1): kernels tried in Chrome, none kept (lease18/tensor-attention.patch
# and lease18/one-accumulator.patch in lease 18, lease19/depth64.patch in lease 19, lease20/presplit-b.patch in
# lease 20, each built on main and carried as harness.tar.xz), against a bundle of main's kernels
# (harness-base.tar.xz: 7638a5a's in leases 18 and 19, 6d43453's in lease 20); then, in lease 18, on 7638a5a's
# bundle, the cold starts not yet measured on the H100. Each call stashes what it carried (harness, the base
# bundle, onnxruntime-web, the Vulkan loader, Chromium's parts, Firefox's four, MiniLM's four), unpacks each once
# whole, then runs its steps:
#   ab, ab1      Chrome: Whisper-tiny and ViT-B/16 at batch 1 and 8 (ab1: 1 alone), webgpu alone, --profile, the
#                tried build's bundle (tc-*) and the base bundle (base-*), same binary, in turn, twice each
#   base         from here on, the h100-firefox.sh steps run the base bundle
#   whisper30    Chrome: Whisper-tiny at batch 1 beside onnxruntime-web, 30 samples, twice (not run)
#   STEP         a step of docs/hardware/h100-firefox.sh (cold-decoder-chrome, cold-chrome, cold-firefox, ...)
# Lease 18 ran: ab (once a build); base cold-decoder-chrome; MINILM=skip ... cold-chrome; MINILM=skip ... cold-firefox.
# Lease 19 ran: ab1. Lease 20 ran `R=/tmp/r20 bash lease18.sh ab` (its results in r20.tgz).
set -u
start=$(date +%s)
R=${R:-/tmp/r18}; mkdir -p $R/chrome
source docs/hardware/h100-goals/stash.sh
save() { ( cd $R && tar czf $OUT/$(basename $R).tgz chrome ); }
NEW=/tmp/gpu/harness/bundle; [ -d /tmp/gpu/harness/bundle.new ] && NEW=/tmp/gpu/harness/bundle.new
BASE=/tmp/gpu/base/harness/bundle
for step in "$@"; do
  case $step in
  ab | ab1)
    batches=1,8; [ "$step" = ab1 ] && batches=1
    pm=(--platform webgpu --model whisper,vit --batch $batches --no-ops --samples 10 --max-time 1 --profile)
    one chrome/tc-1 $NEW "${pm[@]}"; save
    one chrome/base-1 $BASE "${pm[@]}"; one chrome/tc-2 $NEW "${pm[@]}"; one chrome/base-2 $BASE "${pm[@]}"; save ;;
  whisper30)
    w=(--platform webgpu,ort --ort-dir /tmp/gpu/ort --model whisper --batch 1 --no-ops --samples 30 --max-time 6)
    one chrome/whisper30-1 $NEW "${w[@]}"; one chrome/whisper30-2 $NEW "${w[@]}"; save ;;
  base)
    use_bundle new $BASE ;;
  *) step "$step" ;;
  esac
done
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt 2>/dev/null
