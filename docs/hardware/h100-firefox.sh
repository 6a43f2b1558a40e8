#!/usr/bin/env bash
# Makes the evidence of docs/hardware/h100-firefox.md: harness in Firefox ESR (and natively) on the
# GPU machine's H100. Builds on ../shared/gpu (README.md there: pack once, then commands on the
# GPU machine while it stays warm). From the project root:
#
#   here:  bash ../shared/gpu/pack.sh firefox                       (once)
#          cargo build --release -p harness && target/release/harness run --suite quick --samples 2
#          bash ../shared/gpu/pack.sh harness                       (the binary, geckodriver, the bundle)
#          bash docs/hardware/h100-firefox.sh pack-model            (MiniLM's files, in two parts)
#   there, one command each, carrying the files named:
#     1. gpu.sh firefox.sha256 firefox.tar.xz.aa harness.tar.xz   bash target/gpu-pack/gpu.sh stash
#     2. gpu.sh firefox.sha256 firefox.tar.xz.ab                  bash target/gpu-pack/gpu.sh stash &&
#                                                                  bash docs/hardware/h100-firefox.sh suite
#     3. minilm.tar.aa                                            bash docs/hardware/h100-firefox.sh stash-model
#     4. minilm.tar.ab                                            bash docs/hardware/h100-firefox.sh stash-model &&
#                                                                  bash docs/hardware/h100-firefox.sh models
#   (all under target/gpu-pack/). Each leaves $OUT/<step>.tar.gz: results, logs, nvidia-smi's clocks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pack="$top/target/gpu-pack"
case "${1:-}" in
pack-model)
  tar cf - -C "$top/models" all-MiniLM-L6-v2 | split -b 46000000 - "$pack/minilm.tar."
  ls -la "$pack"/minilm.tar.*
  exit 0
  ;;
stash-model)
  mkdir -p /tmp/gpu-pack /tmp/gpu
  cp "$pack"/minilm.tar.* /tmp/gpu-pack/ 2>/dev/null
  if [ -f /tmp/gpu-pack/minilm.tar.aa ] && [ -f /tmp/gpu-pack/minilm.tar.ab ] && [ ! -d /tmp/gpu/all-MiniLM-L6-v2 ]; then
    cat /tmp/gpu-pack/minilm.tar.* | tar xf - -C /tmp/gpu && echo "h100-firefox.sh: MiniLM unpacked"
  fi
  exit 0
  ;;
suite | models) ;;
*) sed -n 2,19p "$0"; exit 2 ;;
esac

step=$1
# shellcheck source=/dev/null
source "$pack/gpu.sh" env
dir=/tmp/evidence/$step
mkdir -p "$dir"
cd /tmp || exit 2
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > "$dir/nvidia-smi.csv" 2>&1 &
smi=$!
run() { # name, command...: stdout in $dir/name.out, stderr in name.log, exit status in exit-codes.txt
  local name=$1; shift
  echo "\$ $*" > "$dir/$name.log"
  local t0=$SECONDS
  "$@" > "$dir/$name.out" 2>> "$dir/$name.log"
  echo "$name: exit $? in $((SECONDS - t0)) s" | tee -a "$dir/exit-codes.txt"
}
ff=(--browser firefox --browser-path "firefox=$FIREFOX")
case $step in
suite)
  run verify-firefox harness verify --browser firefox --browser-path "$FIREFOX" --json
  run verify-native harness verify --platform native --json
  run default harness run "${ff[@]}" --platform webgpu,native --suite default --out "$dir/default"
  run isolated harness run "${ff[@]}" --platform webgpu,native --suite default --sampling isolated \
    --filter 'matmul_tiled,add,softmax' --out "$dir/isolated"
  ;;
models)
  run models harness run "${ff[@]}" --platform webgpu,native --model minilm,tinyllama --context 128 \
    --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 --out "$dir/models"
  ;;
esac
kill "$smi" 2>/dev/null
tar czf "${OUT:-/tmp}/$step.tar.gz" -C /tmp/evidence "$step"
ls -la "${OUT:-/tmp}"
