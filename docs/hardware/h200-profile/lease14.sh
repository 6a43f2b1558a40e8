#!/usr/bin/env bash
# Lease 14: Firefox ESR 153 beside onnxruntime-web (both providers) and natively, steady batches nudged (the
# default), ViT-B/16 and Whisper-tiny's encoder at batch 1 and 8, each case profiled (--profile).
set -u
start=$(date +%s)
bash target/gpu-pack/gpu.sh stash > $OUT/stash.txt 2>&1
[ -x /tmp/gpu/firefox/firefox-esr ] || { echo "no Firefox" >> $OUT/rc.txt; exit 3; }
[ -d /tmp/gpu/ort ] || bash docs/hardware/h100-firefox.sh stash-ort > /dev/null || exit 5
nvidia-smi -L > $OUT/smi.txt 2>&1
mkdir -p /tmp/r14/firefox
( source target/gpu-pack/gpu.sh env; cd /tmp
  t0=$(date +%s)
  timeout 560 harness run --browser firefox --browser-path "firefox=$FIREFOX" --platform webgpu,ort,native --no-ops \
    --samples 10 --max-time 2 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --model vit,whisper --batch 1,8 --profile \
    --out /tmp/r14/firefox/perception > /tmp/r14/firefox/perception.log 2>&1
  echo "perception rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt )
( cd /tmp/r14 && tar czf $OUT/r14.tgz firefox )
echo "elapsed $(( $(date +%s) - start ))" >> $OUT/rc.txt
cat $OUT/rc.txt
