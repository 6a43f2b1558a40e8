#!/usr/bin/env bash
# Makes the evidence of docs/hardware/h200-phases.md (issue 54, item 3): where a model case's time goes
# in Chrome and natively on the GPU machine, phase by phase, and how long the issue's run of TinyLlama,
# ViT and Whisper takes. Chromium gets the GPU with no browser flag of ours (harness adds its own), once
# libglvnd's libraries are there (the device README's `.gl` folder of Debian packages).
#
#   here:  cargo build --release -p harness && target/release/harness run --suite quick --samples 2
#          bash docs/hardware/h200-phases.sh pack     Chromium in parts that fit beside the working tree,
#                                                     and the harness binary with its page bundle
#   there, one call each, carrying `.gl` and the files named (all under target/gpu-pack/):
#     chromium.tar.xz.aa, then .ab, …      bash docs/hardware/h200-phases.sh stash
#     the last part and harness.tar.xz     bash docs/hardware/h200-phases.sh stash && bash docs/hardware/h200-phases.sh STEP
#   STEP: `three` (the issue's three cases: TinyLlama's prefill and decode and ViT, f32, 10 samples each,
#   in Chrome), `all` (TinyLlama, ViT and Whisper in f32, f16 and q4_0, batch 1 and 8, in Chrome and
#   natively, at harness's defaults), or `three all`. Each leaves $OUT/STEP.tar.gz: results, logs,
#   nvidia-smi's clocks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pack="$top/target/gpu-pack"
# Bytes a part: a call carries at most 64 MiB, the working tree (about 48 MB) included.
part=15000000
case "${1:-}" in
pack)
  mkdir -p "$pack"
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  # Chromium once (its parts are kept); the harness binary and bundle every time.
  if ! ls "$pack"/chromium.tar.xz.aa >/dev/null 2>&1; then
    PART=$part bash "$top/docs/hardware/h100-firefox.sh" pack-chromium
  fi
  mkdir -p "$work/harness"
  cp "$top/target/release/harness" "$work/harness/" && cp -a "$top/target/harness-bundle" "$work/harness/bundle"
  tar cf - -C "$work" harness | xz -T0 -6 > "$pack/harness.tar.xz"
  ls -la "$pack"
  exit 0
  ;;
stash)
  mkdir -p /tmp/gpu-pack /tmp/gpu
  cp "$pack"/chromium.tar.xz.* "$pack"/harness.tar.xz /tmp/gpu-pack/ 2>/dev/null
  if [ -f /tmp/gpu-pack/harness.tar.xz ] && [ ! -x /tmp/gpu/harness/harness ]; then
    tar xJf /tmp/gpu-pack/harness.tar.xz -C /tmp/gpu && echo "h200-phases.sh: harness unpacked"
  fi
  # The parts are whole once harness.tar.xz, carried with the last, is there.
  if [ -f /tmp/gpu-pack/harness.tar.xz ] && [ ! -x /tmp/gpu/chromium/chromium ]; then
    cat /tmp/gpu-pack/chromium.tar.xz.* | xz -d | tar xf - -C /tmp/gpu && echo "h200-phases.sh: Chromium unpacked"
  fi
  ls /tmp/gpu-pack
  exit 0
  ;;
three | all) ;;
*) sed -n 2,17p "$0"; exit 2 ;;
esac

export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:/usr/local/nvidia/lib64 PATH=/tmp/gpu/harness:$PATH HARNESS_BUNDLE=/tmp/gpu/harness/bundle
chrome=(--browser chrome --browser-path chrome=/tmp/gpu/chromium/chromium --driver-path chrome=/tmp/gpu/chromium/chromedriver)
cd /tmp || exit 2
mkdir -p /tmp/evidence/doctor
# Issue 54 item 2 on the machine itself: with only libvulkan1 and libglvnd0, doctor must name the ICD
# that does not load and libGLX.so.0's package; with all of libglvnd's libraries, every link holds.
if [ -z "${SKIP_DOCTOR:-}" ] && [ ! -e /usr/lib/x86_64-linux-gnu/libGLX.so.0 ]; then
  for f in "$top"/.gl/libvulkan1_*.deb "$top"/.gl/libglvnd0_*.deb; do dpkg -x "$f" /; done
  ldconfig
  harness doctor "${chrome[@]}" > /tmp/evidence/doctor/two-packages.txt 2>&1
  echo "doctor with libvulkan1 and libglvnd0 only: exit $?" | tee -a /tmp/evidence/doctor/exit-codes.txt
  # What the Vulkan loader itself says, and what NVIDIA's ICD links.
  VK_LOADER_DEBUG=error,warn,driver harness doctor --adapters-only > /tmp/evidence/doctor/loader.out 2> /tmp/evidence/doctor/loader.txt
  ldd "$(ldconfig -p | awk '/libGLX_nvidia.so.0/{print $NF; exit}')" > /tmp/evidence/doctor/ldd-libGLX_nvidia.txt 2>&1
fi
# The libraries a desktop would have (the device README): libglvnd's and the Vulkan loader.
for f in "$top"/.gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -z "${SKIP_DOCTOR:-}" ] && [ ! -f /tmp/evidence/doctor/all-packages.txt ]; then
  harness doctor "${chrome[@]}" > /tmp/evidence/doctor/all-packages.txt 2>&1
  echo "doctor with all seven packages: exit $?" | tee -a /tmp/evidence/doctor/exit-codes.txt
  tar czf "$OUT/doctor.tar.gz" -C /tmp/evidence doctor
fi
for step in "$@"; do
  dir=/tmp/evidence/$step
  mkdir -p "$dir"
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 200 > "$dir/nvidia-smi.csv" 2>&1 &
  smi=$!
  t0=$SECONDS
  case $step in
  three)
    harness run "${chrome[@]}" --platform webgpu --model tinyllama,vit --dtype f32 --batch 1 --no-ops --samples 10 \
      --out "$dir/run" > "$dir/run.out" 2> "$dir/run.log"
    ;;
  all)
    # Interrupted (and its results written) where it would outlast the call.
    timeout -s INT "${ALL_SECONDS:-480}" harness run "${chrome[@]}" --platform webgpu,native --model tinyllama,vit,whisper \
      --dtype f32,f16,q4_0 --batch 1,8 --out "$dir/run" > "$dir/run.out" 2> "$dir/run.log"
    ;;
  esac
  echo "$step: exit $? in $((SECONDS - t0)) s" | tee -a "$dir/exit-codes.txt"
  kill "$smi" 2>/dev/null
  tar czf "$OUT/$step.tar.gz" -C /tmp/evidence "$step"
done
