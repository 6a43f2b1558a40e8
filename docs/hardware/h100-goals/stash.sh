# shellcheck shell=bash
# Sourced by the lease scripts here (lease16.sh, lease17.sh, lease18.sh), on the GPU machine from the project's
# root, with OUT set: stashes the parts a call carried under /tmp and unpacks each thing once it is whole
# (Chromium in five parts of 27 MB, cpart.*, or six of 23 MB, cq.*; Firefox's parts; MiniLM's weights), and
# what target/gpu-pack holds (the Vulkan loader, harness, a base harness or bundle, onnxruntime-web, lease 16's
# variant bundles); then Chromium's flags (`cr`) and `one`.
p=target/gpu-pack
mkdir -p /tmp/gpu /tmp/gpu-pack /tmp/cpk /tmp/gpu/base
cp target/gpu-pack2/cpart.* target/gpu-pack7/cq.* /tmp/cpk/ 2>/dev/null
cp target/gpu-pack5/* target/gpu-pack6/* /tmp/gpu-pack/ 2>/dev/null
[ -f $p/natlib.tar.xz ] && [ ! -f /tmp/gpu/lib/libvulkan.so.1 ] && tar xJf $p/natlib.tar.xz -C /tmp/gpu
[ -f $p/harness.tar.xz ] && [ ! -x /tmp/gpu/harness/harness ] && tar xJf $p/harness.tar.xz -C /tmp/gpu
[ -f $p/harness-base.tar.xz ] && [ ! -x /tmp/gpu/base/harness/harness ] && tar xJf $p/harness-base.tar.xz -C /tmp/gpu/base
[ -f $p/ort.tar.xz ] && [ ! -d /tmp/gpu/ort ] && { mkdir -p /tmp/gpu/ort && tar xJf $p/ort.tar.xz -C /tmp/gpu/ort; }
[ -f $p/var6.tar.xz ] && [ ! -d /tmp/gpu/var6 ] && tar xJf $p/var6.tar.xz -C /tmp/gpu
for parts in cq.:6 cpart.:5; do
  if [ ! -x /tmp/gpu/chromium/chromium ] && [ "$(ls /tmp/cpk/${parts%:*}* 2>/dev/null | wc -l)" -ge "${parts#*:}" ]; then
    cat /tmp/cpk/${parts%:*}* | xz -d | tar xf - -C /tmp/gpu && echo "Chromium unpacked" >> $OUT/rc.txt; fi
done
if [ ! -x /tmp/gpu/firefox/firefox-esr ] && [ "$(ls /tmp/gpu-pack/firefox.tar.xz.* 2>/dev/null | wc -l)" -ge 3 ] &&
   [ "$(cat /tmp/gpu-pack/firefox.tar.xz.* | sha256sum | cut -c1-64)" = "$(cat /tmp/gpu-pack/firefox.sha256)" ]; then
  cat /tmp/gpu-pack/firefox.tar.xz.* | xz -d | tar xf - -C /tmp/gpu && echo "Firefox unpacked" >> $OUT/rc.txt; fi
# MiniLM's weights in four parts of 30.5 MB (minilm.tar.*), or of 23 MB (minilm2.tar.*).
for parts in minilm2.tar. minilm.tar.; do
  if [ ! -d /tmp/gpu/all-MiniLM-L6-v2 ] && [ "$(ls /tmp/gpu-pack/$parts* 2>/dev/null | wc -l)" -ge 4 ]; then
    cat /tmp/gpu-pack/$parts* | tar xf - -C /tmp/gpu && echo "MiniLM unpacked" >> $OUT/rc.txt; fi
done
ls /tmp/gpu /tmp/cpk /tmp/gpu-pack > $OUT/stash.txt 2>&1
nvidia-smi -L > $OUT/smi.txt 2>&1
source docs/hardware/chrome-flags.sh
# one NAME BUNDLE ARGS: `harness run` in Chrome with BUNDLE and ARGS (after the lease's ONE, if it set any),
# results and log under R (the lease's folder).
one() { local n=$1 b=$2; shift 2; local t0=$(date +%s)
  ( source $p/gpu.sh env; export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH; cd /tmp
    HARNESS_BUNDLE=$b timeout 280 harness run ${ONE[@]+"${ONE[@]}"} --timeout 200 --retries 0 "${cr[@]}" "$@" --out $R/$n \
      > $R/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt ) ; }
# use_bundle KEEP FROM: from here on, harness's bundle is FROM's (its own kept as bundle.KEEP).
use_bundle() { [ -d /tmp/gpu/harness/bundle.$1 ] || mv /tmp/gpu/harness/bundle /tmp/gpu/harness/bundle.$1
  rm -rf /tmp/gpu/harness/bundle && cp -a "$2" /tmp/gpu/harness/bundle ; }
# step STEP: a step of docs/hardware/h100-firefox.sh, its log under R, its exit codes into rc.txt.
step() { local t0=$(date +%s); bash docs/hardware/h100-firefox.sh "$1" > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 ))s" >> $OUT/rc.txt; cat /tmp/evidence/$1/exit-codes.txt >> $OUT/rc.txt 2>/dev/null ; }
