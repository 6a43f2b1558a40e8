#!/usr/bin/env bash
# Makes the evidence of docs/hardware/h100-firefox.md: harness in Firefox ESR (and natively) on the
# GPU machine's H100. Builds on ../shared/gpu (README.md there: pack once, then commands on the
# GPU machine while it stays warm). From the project root:
#
#   here:  bash ../shared/gpu/pack.sh firefox                       (once)
#          cargo build --release -p harness && target/release/harness run --suite quick --samples 2
#          bash ../shared/gpu/pack.sh harness                       (the binary, geckodriver, the bundle)
#          bash docs/hardware/h100-firefox.sh pack-model            (MiniLM's files, in four parts)
#   there, one command each, carrying the files named:
#     1. gpu.sh firefox.sha256 firefox.tar.xz.aa harness.tar.xz   bash target/gpu-pack/gpu.sh stash
#     2. gpu.sh firefox.sha256 firefox.tar.xz.ab                  bash target/gpu-pack/gpu.sh stash &&
#                                                                  bash docs/hardware/h100-firefox.sh suite
#     3. minilm.tar.aa                                            bash docs/hardware/h100-firefox.sh stash-model
#     4. minilm.tar.ab                                            bash docs/hardware/h100-firefox.sh stash-model &&
#                                                                  bash docs/hardware/h100-firefox.sh models
#   (all under target/gpu-pack/). Each leaves $OUT/<step>.tar.gz: results, logs, nvidia-smi's clocks.
#   matmul (issue 14): after step 2, `tune-native`, then `tune-firefox`, then `matmul` (the tuned
#   kernel beside matmul_tiled); each step leaves the cache in its tarball as tune.json.
#   issue 14, kernels that compete (h100-kernels.md): here also `bash docs/hardware/h100-firefox.sh pack-tfjs`
#   and cp docs/hardware/h100-matmul/tune.json target/gpu-pack/; carry tfjs.tar.xz and tune.json with
#   call 1 and add `&& bash docs/hardware/h100-firefox.sh stash-tfjs`; then `kernels` and `decoder`
#   with call 2, `tfjs` with call 3 (after its stash-model), `minilm` with call 4.
#   subgroups (issue 14, native only: no browser can run them): `tune-matvec` and `decoder-native` after step 2. The Vulkan
#   loader and libGLdispatch alone were not enough for NVIDIA's ICD there (vkCreateInstance still
#   missing); the libraries of the Firefox pack are.
#   survive (issues 15 and 16): a lost device in Firefox and natively, a native soak, WebNN in Firefox; after step 2.
#   checks, wall (issue 23): the f16 roofline with the counting chain, the full-suite matmul natively with its
#   f64 references cold and then from the disk cache; then the default suite and the decoder re-run for wall >= GPU.
#   harness bench (issue 24, h100-bench.md): here build examples/bench-matmul (one `harness bench` of it in a
#   browser, with CARGO_TARGET_DIR=target/bench-crates) and `bash docs/hardware/h100-firefox.sh pack-bench`;
#   carry bench.tar.xz with call 2 and add `bash docs/hardware/h100-firefox.sh stash-bench &&` before `bench`
#   (native and Firefox); after Chromium's parts, `bench-chrome`.
#   out of the box (issue 25, h100-chrome.md): after Chromium's parts, `gpu-out-of-the-box` (doctor, verify and
#   the default suite with no browser flags and without gpu.sh's VK_DRIVER_FILES, then each link broken on
#   purpose), `gpu-hidden-icd` (the ICD where the loader does not look: harness sets VK_DRIVER_FILES); after
#   MiniLM's parts, `gpu-models`; then `gpu-tune` (Chrome's matmul and matvec winners, added
#   to h100-matmul/tune.json carried as target/gpu-pack/tune.json) and `gpu-matmul` (the full matmul/matvec
#   suite with each browser's winners).
#   MiniLM's floor (issue 26): after step 1 and MiniLM's parts (stash-model), `minilm-ops` (natively);
#   after Chromium's parts too, `gpu-minilm` (Chrome, Firefox and native).
#   Decode in few dispatches, quantized weights (issue 26, h100-decode.md): after step 2, `decode-dtypes f32,f16`
#   and `decode-dtypes q8_0,q4_0` (TinyLlama in Firefox and natively, with the roofline probes), then
#   `decode-profile` (natively: each op of a layer of prefill and decode alone) and `tune-quant` (the quantized
#   matvecs' variants, natively).
#   Image and audio encoders (issue 27, h100-perception.md): after step 2, `perception` (ViT-B/16 and
#   Whisper-tiny's encoder at batch 1 and 8, f32 and f16, in Firefox and natively, with the roofline probes).
#   Against onnxruntime-web (issue 27, h100-ort.md): here `bash docs/hardware/h100-firefox.sh pack-ort` and
#   pack-model; carry ort.tar.xz with harness.tar.xz (`stash && bash docs/hardware/h100-firefox.sh stash-ort`),
#   MiniLM's parts with stash-model, then `ort-minilm`, `ort-perception` and `ort-decoder` (Firefox and
#   native), one call each; after Chromium's parts, `ort-chrome`, `ort-decoder-chrome`, then `ort-profile` (JSEP's own profile in both).
#   Firefox's completion timer (issue 27, h200-nudge.md): with Firefox and ort.tar.xz stashed, `firefox-batches`
#   (steady batches of four lengths, not nudged), then `nudge-perception` and `nudge-decoder`; after MiniLM's parts, `nudge-minilm`.
#   Cold start (issue 27, h100-cold.md): with ort.tar.xz and MiniLM's parts stashed, `cold-firefox`,
#   `cold-perception-firefox` and `cold-decoder`; after Chromium's parts, `cold-chrome`, `cold-perception-chrome`
#   and `cold-decoder-chrome`.
#   From text (issue 27 item 3, h200-text.md): here `bash docs/hardware/h100-firefox.sh pack-transformers`; carry
#   transformers.tar.xz with harness.tar.xz (`stash && bash docs/hardware/h100-firefox.sh stash-transformers`), MiniLM's
#   parts with stash-model, then `text-firefox`; after Chromium's parts, `text-chrome`.
#   Chromium (an attempt; see h100-firefox.md): here `bash docs/hardware/h100-firefox.sh pack-chromium`,
#   there `stash-chromium` once per part carried (chromium.tar.xz.aa, .ab, …), then `chromium`, and
#   `chrome` for the suites in Chromium with the flags that got the GPU.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pack="$top/target/gpu-pack"
# Bytes a part: a call to the GPU machine carries at most 64 MiB, the working tree (about 29 MB) included
# (PART to choose: h200-phases.sh's calls carry a larger tree).
part=${PART:-27000000}
case "${1:-}" in
pack-model)
  tar cf - -C "$top/models" all-MiniLM-L6-v2 | split -b "$part" - "$pack/minilm.tar."
  ls -la "$pack"/minilm.tar.*
  exit 0
  ;;
pack-chromium)
  # Debian's Chromium, its chromedriver and every library Chromium links (not glibc or libstdc++).
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download chromium chromium-common chromium-driver >/dev/null 2>&1 &&
    for d in *.deb; do dpkg -x "$d" x; done)
  mkdir -p "$work/pack/chromium-lib"
  cp -a "$work/x/usr/lib/chromium" "$work/pack/chromium"
  cp -L "$work/x/usr/bin/chromedriver" "$work/pack/chromium/"
  ldd "$work/pack/chromium/chromium" | awk '/=> \//{print $3}' | sort -u \
    | grep -vE '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so|/ld-linux' | xargs -I{} cp -L {} "$work/pack/chromium-lib/"
  rm -f "$pack"/chromium.tar.xz.*
  tar cf - -C "$work/pack" . | xz -T0 -6 | split -b "$part" - "$pack/chromium.tar.xz."
  ls -la "$pack"/chromium.tar.xz.*
  exit 0
  ;;
stash-chromium)
  mkdir -p /tmp/gpu-pack /tmp/gpu
  cp "$pack"/chromium.tar.xz.* /tmp/gpu-pack/ 2>/dev/null
  n=$(ls /tmp/gpu-pack/chromium.tar.xz.* 2>/dev/null | wc -l)
  # `stash-chromium N`: unpack once N parts are there (5 by default, as pack-chromium makes them).
  if [ "$n" -ge "${2:-5}" ] && [ ! -x /tmp/gpu/chromium/chromium ]; then
    cat /tmp/gpu-pack/chromium.tar.xz.* | xz -d | tar xf - -C /tmp/gpu && echo "h100-firefox.sh: Chromium unpacked"
  fi
  ls /tmp/gpu-pack
  exit 0
  ;;
pack-tfjs)
  tar cJf "$pack/tfjs.tar.xz" -C "$top/target/tfjs" \
    node_modules/@tensorflow/tfjs-core/package.json node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js \
    node_modules/@tensorflow/tfjs-backend-webgpu/package.json node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js
  ls -la "$pack/tfjs.tar.xz"
  exit 0
  ;;
pack-bench)
  # The bench-matmul binary and its page bundle, as `harness bench` built them here.
  crates=$top/target/bench-crates
  exe=$(ls -t "$crates"/release/deps/matmul-* | grep -v '\.d$' | head -1)
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/bench"; cp "$exe" "$work/bench/matmul"; cp -a "$crates/harness-bench/matmul" "$work/bench/bundle"
  tar cJf "$pack/bench.tar.xz" -C "$work" bench
  ls -la "$pack/bench.tar.xz"
  exit 0
  ;;
stash-bench)
  mkdir -p /tmp/gpu && tar xJf "$pack/bench.tar.xz" -C /tmp/gpu && ls /tmp/gpu/bench
  exit 0
  ;;
pack-ort)
  tar cJf "$pack/ort.tar.xz" -C "$top/target/ort" node_modules/onnxruntime-web/package.json \
    $(cd "$top/target/ort" && ls node_modules/onnxruntime-web/dist/ort.min.js node_modules/onnxruntime-web/dist/ort.webgpu.min.js \
      node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.jsep.* node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.*)
  ls -la "$pack/ort.tar.xz"
  exit 0
  ;;
pack-transformers)
  tar cJf "$pack/transformers.tar.xz" -C "$top/target/transformers" node_modules/@huggingface/transformers/package.json \
    node_modules/@huggingface/transformers/dist/transformers.min.js node_modules/onnxruntime-web/package.json \
    node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm
  ls -la "$pack/transformers.tar.xz"
  exit 0
  ;;
stash-transformers)
  mkdir -p /tmp/gpu/transformers && tar xJf "$pack/transformers.tar.xz" -C /tmp/gpu/transformers && ls -R /tmp/gpu/transformers | head
  exit 0
  ;;
stash-ort)
  mkdir -p /tmp/gpu/ort && tar xJf "$pack/ort.tar.xz" -C /tmp/gpu/ort && ls /tmp/gpu/ort/node_modules/onnxruntime-web/dist
  exit 0
  ;;
stash-tfjs)
  mkdir -p /tmp/gpu/tfjs && tar xJf "$pack/tfjs.tar.xz" -C /tmp/gpu/tfjs && cp "$pack/tune.json" /tmp/gpu/tune.json
  exit 0
  ;;
stash-model)
  mkdir -p /tmp/gpu-pack /tmp/gpu
  cp "$pack"/minilm.tar.* /tmp/gpu-pack/ 2>/dev/null
  # `stash-model N`: unpack once N parts are there (4 by default, as pack-model makes them).
  if [ "$(ls /tmp/gpu-pack/minilm.tar.* 2>/dev/null | wc -l)" -ge "${2:-4}" ] && [ ! -d /tmp/gpu/all-MiniLM-L6-v2 ]; then
    cat /tmp/gpu-pack/minilm.tar.* | tar xf - -C /tmp/gpu && echo "h100-firefox.sh: MiniLM unpacked"
  fi
  exit 0
  ;;
firefox-batches | nudge-perception | nudge-minilm | nudge-decoder | text-firefox | text-chrome | cold-firefox | cold-chrome | cold-perception-firefox | cold-perception-chrome | cold-decoder | cold-decoder-chrome | ort-minilm | ort-perception | ort-decoder | ort-decoder-chrome | ort-chrome | ort-profile | perception | decode-dtypes | decode-profile | tune-quant | gpu-out-of-the-box | gpu-hidden-icd | gpu-minilm | gpu-tune | gpu-matmul | gpu-models | minilm-ops | suite | models | chromium | chrome | bench | bench-chrome | tune-native | tune-firefox | tune-matvec | decoder-native | matmul | kernels | decoder | tfjs | minilm | survive | checks | wall) ;;
*) sed -n 2,23p "$0"; exit 2 ;;
esac

step=$1
# shellcheck source=/dev/null
source "$pack/gpu.sh" env
# NVML (the clock probe) lives with the driver there; last on the path, so it shadows nothing.
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/nvidia/lib64
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
# Chromium with the flag set that got the H100 (see the chromium step); the steps that use it put
# /tmp/gpu/chromium-lib on the library path.
source "$top/docs/hardware/chrome-flags.sh"
# `where`: the browser of a step that runs in either, Chromium for a step named *-chrome (its libraries then
# on the library path), else Firefox; with `--platform` CHROME's or FIREFOX's where given.
browser() { # [CHROME FIREFOX]
  if [ "${step%-chrome}" != "$step" ]; then
    export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH
    where=("${cr[@]}" ${1:+--platform "$1"})
  else
    where=("${ff[@]}" ${2:+--platform "$2"})
  fi
}
case $step in
gpu-*)
  # A GPU machine as a user has it: the Vulkan loader and libglvnd on the library path (gpu.sh's
  # /tmp/gpu/lib stands in for libvulkan1 and libglvnd0), the browsers on PATH, and nothing else:
  # no VK_DRIVER_FILES (harness finds the driver's ICD), no --browser-arg.
  unset VK_DRIVER_FILES
  export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH PATH=/tmp/gpu/chromium:/tmp/gpu/firefox:$PATH
  cache=/tmp/gpu/tune.json; [ -f "$pack/tune.json" ] && [ ! -f "$cache" ] && cp "$pack/tune.json" "$cache"
  ;;
esac
case $step in
gpu-out-of-the-box)
  ls -la /usr/local/nvidia/lib64 /usr/local/nvidia/share/vulkan/icd.d /proc/driver/nvidia > "$dir/driver-folders.txt" 2>&1
  run doctor harness doctor
  run doctor-json harness doctor --json
  run verify-chrome harness verify --browser chrome --json
  run verify-firefox harness verify --browser firefox --json
  run default harness run --browser chrome,firefox --platform webgpu,native --suite default --out "$dir/default"
  # Each link broken on purpose: the ICD named where it is not, libGLdispatch gone, Chrome's GPU flags off.
  run broken-icd env VK_DRIVER_FILES=/nonexistent/nvidia_icd.json harness doctor --browser chrome
  mkdir -p /tmp/nogl && cp -a /tmp/gpu/lib/. /tmp/nogl/ && rm -f /tmp/nogl/libGLdispatch.so.0
  # libGLdispatch off the library path (the driver's folder too): harness should find the driver folder's copy.
  nogl=${LD_LIBRARY_PATH//\/tmp\/gpu\/lib/\/tmp\/nogl}
  run broken-gldispatch env LD_LIBRARY_PATH="${nogl//:\/usr\/local\/nvidia\/lib64/}" harness doctor --browser chrome
  run broken-flags harness doctor --browser chrome --gpu-flags off
  ;;
gpu-hidden-icd)
  # The ICD where the loader does not look (XDG_DATA_DIRS without /usr/share): harness must find the
  # driver's own copy in /usr/local/nvidia/share/vulkan/icd.d and set VK_DRIVER_FILES itself.
  cat /proc/driver/nvidia/version /proc/driver/nvidia/gpus/*/information > "$dir/proc-driver-nvidia.txt" 2>&1
  run doctor env XDG_DATA_DIRS=/nonexistent harness doctor
  run verify-native env XDG_DATA_DIRS=/nonexistent harness verify --platform native --json
  run verify-chrome env XDG_DATA_DIRS=/nonexistent harness verify --browser chrome --json
  ;;
gpu-tune)
  # Chrome's matmul and matvec winners and Firefox's matvec ones (Firefox's and native's matmul winners
  # are in the carried tune.json, h100-matmul.md). `gpu-tune chrome` or `gpu-tune firefox` runs one.
  for b in chrome firefox; do
    [ -n "${2:-}" ] && [ "$2" != "$b" ] && continue
    kernels=matvec; [ "$b" = chrome ] && kernels=matmul,matvec
    run "tune-$b" harness run --tune --browser "$b" --platform webgpu --filter "$kernels" --suite full --samples 10 \
      --warmup 5 --max-time 3 --timeout 120 --tune-cache "$cache" --out "$dir/tune-$b"
  done
  cp "$cache" "$dir/tune.json"
  ;;
gpu-matmul)
  run matmul harness run --browser chrome,firefox --platform webgpu,native --suite full --filter matmul,matvec \
    --samples 10 --max-time 2 --tune-cache "$cache" --timeout 120 --out "$dir/matmul"
  ;;
gpu-minilm)
  # Issue 26: MiniLM after the fix of its floor, in Chrome, Firefox and natively, f32 and f16, with
  # each op of its first layer alone at 1×16.
  run minilm harness run --browser chrome,firefox --platform webgpu,native --model minilm --dtype f32,f16 \
    --batch 1,8 --seq 16,128 --samples 10 --max-time 2 --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 --out "$dir/minilm"
  ;;
gpu-models)
  run models harness run --browser chrome,firefox --platform webgpu,native --model minilm,tinyllama --dtype f32,f16 \
    --context 128 --batch 1,8 --seq 16,128 --samples 10 --max-time 2 --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 \
    --out "$dir/models"
  ;;
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
chromium)
  # Dawn's Vulkan backend without /dev/dri: the GPU stack that makes Firefox work, plus the flag
  # sets that ask Chromium for Vulkan. Each attempt is a `harness verify`, evidence included.
  export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH
  chrome=(--browser chrome --browser-path /tmp/gpu/chromium/chromium --driver-path /tmp/gpu/chromium/chromedriver)
  vk=(--browser-arg=--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan --browser-arg=--use-vulkan=native
      --browser-arg=--disable-vulkan-surface --browser-arg=--ignore-gpu-blocklist --browser-arg=--disable-gpu-sandbox)
  run chromium-default harness verify "${chrome[@]}" --json
  run chromium-vulkan harness verify "${chrome[@]}" "${vk[@]}" --json
  run chromium-vulkan-angle harness verify "${chrome[@]}" "${vk[@]}" --browser-arg=--use-angle=vulkan --json
  run chromium-system-loader env LD_PRELOAD=/tmp/gpu/lib/libvulkan.so.1 harness verify "${chrome[@]}" "${vk[@]}" --json
  ;;
chrome)
  # The flag set that got the H100 (see the chromium step), for the same evidence as Firefox's.
  export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH
  run verify-chrome harness verify "${cr[@]/chrome=/}" --json
  run chrome-default harness run "${cr[@]}" --platform webgpu,native --suite default --out "$dir/default"
  run chrome-models harness run "${cr[@]}" --platform webgpu --model minilm,tinyllama --context 128 \
    --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 --out "$dir/models"
  ;;
bench | bench-chrome)
  # The catalogue's matmul at 1024³ and 4096³ timed twice over by `harness run` and as a GPU bench
  # through harness-bench's public API (examples/bench-matmul), alternating, with the same sampling.
  b=(--bench-binary /tmp/gpu/bench/matmul --bundle /tmp/gpu/bench/bundle)
  m=matmul@1024x1024x1024,matmul@4096x4096x4096
  same=(--samples 30 --warmup 5 --max-time 5 --timeout 300)
  if [ "$step" = bench ]; then
    where=(native "--platform native" firefox "${ff[*]} --platform webgpu")
  else
    export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH
    where=(chrome "${cr[*]} --platform webgpu")
  fi
  set -- "${where[@]}"
  while [ $# -gt 0 ]; do
    name=$1; read -r -a opts <<< "$(echo "$2" | tr '\n' ' ')"; shift 2
    for round in 1 2; do
      run "run-$name-$round" harness run "${opts[@]}" --suite full --filter "$m" "${same[@]}" --out "$dir/run-$name-$round"
      run "bench-$name-$round" harness bench "${b[@]}" "${opts[@]}" "${same[@]}" --out "$dir/bench-$name-$round"
    done
  done
  ;;
tune-native | tune-firefox)
  # Every matmul variant at the full suite's shapes (1024³, 2048³, 4096³); the winners go to the
  # cache that the matmul step then uses (take tune.json back there as target/gpu-pack/tune.json).
  where=(--platform native); [ "$step" = tune-firefox ] && where=("${ff[@]}" --platform webgpu)
  cache=/tmp/gpu/tune.json; [ -f "$pack/tune.json" ] && [ ! -f "$cache" ] && cp "$pack/tune.json" "$cache"
  run "$step" harness run --tune "${where[@]}" --filter matmul --suite full --samples 10 --warmup 5 --max-time 3 \
    --timeout 120 --tune-cache "$cache" --out "$dir/tune"
  cp "$cache" "$dir/tune.json"
  ;;
tune-matvec)
  # Every matvec variant, the subgroup ones included, natively at the full suite's shapes (TinyLlama's
  # and MiniLM's projections), f32 and f16.
  cache=/tmp/gpu/tune-matvec.json
  run tune-matvec harness run --tune --platform native --filter matvec,matvec_f16 --suite full --samples 10 --warmup 5 \
    --max-time 1 --timeout 120 --tune-cache "$cache" --out "$dir/tune"
  cp "$cache" "$dir/tune.json"
  ;;
matmul)
  # The tuned matmul beside the references it replaces, natively and in Firefox.
  cache=/tmp/gpu/tune.json; [ -f "$pack/tune.json" ] && [ ! -f "$cache" ] && cp "$pack/tune.json" "$cache"
  run matmul harness run "${ff[@]}" --platform webgpu,native --filter matmul,matmul_tiled --suite full \
    --timeout 120 --tune-cache "$cache" --out "$dir/matmul"
  ;;
kernels)
  # Issue 14: the roofline probes, then matmul and matvec in f32 and f16 (tuned matmul from the
  # cache of h100-matmul), natively and in Firefox.
  run kernels harness run "${ff[@]}" --platform webgpu,native --roofline --suite full \
    --filter 'matmul,matmul_f16,matvec,matvec_f16' --timeout 120 --tune-cache /tmp/gpu/tune.json --out "$dir/kernels"
  ;;
decoder)
  # TinyLlama's shape, 22 layers, context 128: prefill, decode and each op, f32 and f16 weights.
  run decoder harness run "${ff[@]}" --platform webgpu,native --roofline --suite full --model tinyllama --context 128 \
    --dtype f32,f16 --timeout 300 --out "$dir/decoder"
  ;;
decoder-native)
  # The decoder natively only, where its decode matvecs reduce through subgroups (a browser cannot).
  run decoder-native harness run --platform native --roofline --suite full --model tinyllama --context 128 \
    --dtype f32,f16 --timeout 300 --out "$dir/decoder"
  ;;
tfjs)
  # The tuned matmul beside TensorFlow.js 4.22's WebGPU backend in the same Firefox: 256 to 4096.
  export HARNESS_TFJS_DIR=/tmp/gpu/tfjs
  for suite in default full; do
    run "tfjs-$suite" harness run "${ff[@]}" --platform webgpu,tfjs --filter matmul --suite "$suite" --timeout 120 \
      --tune-cache /tmp/gpu/tune.json --out "$dir/$suite"
  done
  ;;
survive)
  # Issue 15 on the H100: a self-test that destroys its device (NVIDIA's driver reports the loss)
  # then the cases after it, in Firefox and natively; a 520-case native soak of the quick suite
  # with harness's memory; WebNN's availability in Firefox beside WebGPU (issue 16).
  run device-lost harness run "${ff[@]}" --platform webgpu,native --suite quick --filter selftest_lose_device,add \
    --repeat 2 --samples 5 --warmup 0 --out "$dir/device-lost"
  run soak-native harness run --platform native --suite quick --repeat 10 --samples 5 --warmup 0 --max-time 1 \
    --out "$dir/soak-native"
  run webnn harness run "${ff[@]}" --platform both --suite quick --filter add,matmul --samples 5 --out "$dir/webnn"
  ;;
checks)
  # Issue 23: the f16 FMA probe whose last chain counts, in Firefox and natively; harness's time beyond
  # the dispatches for the full-suite matmul (f64 references on every core, then from the disk cache).
  # Then step wall: the default suite and the decoder again, every wall median to be at least its GPU median.
  run roofline-f16 harness run "${ff[@]}" --platform webgpu,native --roofline --suite full --filter fma_chain_f16 \
    --timeout 120 --out "$dir/roofline"
  export HARNESS_REFERENCE_CACHE=/tmp/reference-cache
  rm -rf "$HARNESS_REFERENCE_CACHE"
  run matmul-cold harness run --platform native --suite full --filter matmul --timeout 300 --out "$dir/matmul-cold"
  run matmul-cached harness run --platform native --suite full --filter matmul --timeout 300 --out "$dir/matmul-cached"
  du -sh "$HARNESS_REFERENCE_CACHE" > "$dir/reference-cache.txt"; ls -la "$HARNESS_REFERENCE_CACHE" >> "$dir/reference-cache.txt"
  ;;
wall)
  run default harness run "${ff[@]}" --platform webgpu,native --suite default --out "$dir/default"
  run decoder harness run "${ff[@]}" --platform webgpu,native --model tinyllama --context 128 --timeout 300 \
    --out "$dir/decoder"
  ;;
decode-dtypes)
  run "models-${2//,/-}" harness run "${ff[@]}" --platform webgpu,native --roofline --suite full --model tinyllama \
    --dtype "$2" --context 128 --samples 10 --max-time 2 --timeout 300 --out "$dir/models-${2//,/-}"
  ;;
perception)
  run perception harness run "${ff[@]}" --platform webgpu,native --roofline --suite full --model vit,whisper \
    --dtype f32,f16 --batch 1,8 --samples 10 --max-time 2 --timeout 600 --out "$dir/perception"
  ;;
decode-profile)
  run profile harness run --platform native --model tinyllama --dtype f32,q4_0 --context 128 --prefill-ops \
    --samples 5 --max-time 1 --timeout 300 --out "$dir/profile"
  ;;
tune-quant)
  run tune-quant harness run --tune --platform native --filter matvec_q8_0,matvec_q4_0 --suite full --samples 10 \
    --warmup 5 --max-time 3 --timeout 120 --tune-cache /tmp/gpu/tune-quant.json --out "$dir/tune-quant"
  cp /tmp/gpu/tune-quant.json "$dir/tune-quant.json"
  ;;
ort-minilm | ort-perception | ort-chrome)
  # Issue 27: harness's models beside onnxruntime-web's two WebGPU execution providers, on the ONNX
  # file harness writes of each (same weights, inputs and check), whole passes only: MiniLM at
  # 1×16 and 8×128 (ort-minilm), ViT-B/16 and Whisper-tiny's encoder at batch 1 and 8
  # (ort-perception); in Firefox and natively, or all of them in Chromium (ort-chrome; PERCEPTION=only:
  # ViT-B/16 and Whisper's alone, MiniLM's weights not stashed; PERCEPTION=skip: MiniLM's alone).
  browser webgpu,ort webgpu,ort,native
  o=(--no-ops --samples 10 --max-time 2 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort)
  if [ "$step" != ort-perception ] && [ "${PERCEPTION:-}" != only ]; then
    run minilm-1x16 harness run "${where[@]}" "${o[@]}" --model minilm --batch 1 --seq 16 --weights /tmp/gpu/all-MiniLM-L6-v2 \
      --out "$dir/minilm-1x16"
    run minilm-8x128 harness run "${where[@]}" "${o[@]}" --model minilm --batch 8 --seq 128 --weights /tmp/gpu/all-MiniLM-L6-v2 \
      --out "$dir/minilm-8x128"
  fi
  if [ "$step" != ort-minilm ] && [ "${PERCEPTION:-}" != skip ]; then
    run perception harness run "${where[@]}" "${o[@]}" --model vit,whisper --batch 1,8 --out "$dir/perception"
  fi
  ;;
firefox-batches)
  # Issue 27: Firefox's wall clock against the length of a steady batch. harness sizes a batch so that
  # its samples span ten of Firefox's ~100 ms completion ticks (10 samples: batches of ~100 ms of GPU
  # time); fewer samples make longer batches (5: ~200 ms, 3: ~333, 2: 500, the length onnxruntime-web's
  # batches get with the wall clock alone). ORT's two providers once, beside the default. Not nudged
  # (--nudge off; the runs of h200-nudge.md came from a build from before nudging, which never did).
  o=(--no-ops --nudge off --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --model vit,whisper --batch 1,8)
  run samples10 harness run "${ff[@]}" --platform webgpu,ort "${o[@]}" --samples 10 --max-time 2 --out "$dir/samples10"
  for n in 5 3 2; do
    run "samples$n" harness run "${ff[@]}" --platform webgpu "${o[@]}" --samples $n --max-time 4 --out "$dir/samples$n"
  done
  ;;
nudge-perception | nudge-minilm | nudge-decoder)
  # Issue 27: Firefox's steady batches nudged (the default, --nudge auto: an empty submit every few
  # ms while a batch waits, for every engine) and not (--nudge off), harness beside onnxruntime-web's
  # two providers, both ways in one lease: ViT-B/16 and Whisper-tiny's encoder at batch 1 and 8
  # (nudge-perception); MiniLM at 1x16 and 8x128, its weights stashed (nudge-minilm); TinyLlama's
  # shape at 4 layers, prefill of 128 and a decode step (nudge-decoder). NUDGE=auto: only nudged.
  o=(--no-ops --samples 10 --max-time 2 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --platform webgpu,ort)
  for n in ${NUDGE:-auto off}; do
    if [ "$step" = nudge-perception ]; then
      run "perception-$n" harness run "${ff[@]}" "${o[@]}" --nudge $n --model vit,whisper --batch 1,8 --out "$dir/perception-$n"
    elif [ "$step" = nudge-decoder ]; then
      run "decoder-$n" harness run "${ff[@]}" "${o[@]}" --nudge $n --model tinyllama --layers 4 --context 128 --out "$dir/decoder-$n"
    else
      run "minilm-1x16-$n" harness run "${ff[@]}" "${o[@]}" --nudge $n --model minilm --batch 1 --seq 16 \
        --weights /tmp/gpu/all-MiniLM-L6-v2 --out "$dir/minilm-1x16-$n"
      run "minilm-8x128-$n" harness run "${ff[@]}" "${o[@]}" --nudge $n --model minilm --batch 8 --seq 128 \
        --weights /tmp/gpu/all-MiniLM-L6-v2 --out "$dir/minilm-8x128-$n"
    fi
  done
  ;;
ort-profile)
  # JSEP's own per-kernel GPU profile (engineProfile) of each model case, in Chrome and Firefox: few
  # samples, the profile is one run after them.
  export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:$LD_LIBRARY_PATH
  o=(--platform ort-jsep --no-ops --samples 2 --warmup 1 --max-time 0.5 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort)
  for b in chrome firefox; do
    if [ $b = chrome ]; then where=("${cr[@]}"); else where=("${ff[@]}"); fi
    run "profile-$b" harness run "${where[@]}" "${o[@]}" --model minilm,vit,whisper --batch 1,8 --seq 16,128 \
      --weights /tmp/gpu/all-MiniLM-L6-v2 --out "$dir/profile-$b"
  done
  ;;
text-firefox | text-chrome)
  # MiniLM from text (issue 27 item 3, h200-text.md): sentences to embeddings read back, each sample one
  # call split into tokenize, run and pool, on harness (tokenizing in the page's WASM) and transformers.js's
  # pipeline('feature-extraction'), 1 and 8 sentences; beside them the model alone at 1×16 and 8×16 on harness.
  browser
  run text harness run "${where[@]}" --platform webgpu,transformers --model minilm --from-text --no-ops --batch 1,8 --seq 16 \
    --samples 30 --max-time 3 --timeout 300 --retries 0 --transformers-dir /tmp/gpu/transformers --weights /tmp/gpu/all-MiniLM-L6-v2 \
    --out "$dir/text"
  ;;
cold-firefox | cold-chrome | cold-perception-firefox | cold-perception-chrome)
  # Cold start (issue 27, h100-cold.md): from a fresh page in a new profile to the first checked result,
  # in phases; harness's own pipelines created the usual way and precompiled, beside both of ORT's
  # execution providers. cold-*: MiniLM 1×16 and the CLIP-shaped pair (MiniLM beside a ViT-S/16-shaped
  # encoder, loaded in turn and at once; CLIP=skip: MiniLM alone; MINILM=skip: the pair alone), 5 pages a case;
  # cold-perception-*: ViT-B/16 and Whisper-tiny's encoder at batch 1, 3 pages a case.
  browser
  o=(--platform webgpu,ort --batch 1 --seq 16 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --weights /tmp/gpu/all-MiniLM-L6-v2)
  if [ "${step#cold-perception}" = "$step" ]; then
    [ "${MINILM:-}" = skip ] || run minilm harness run "${where[@]}" "${o[@]}" --model minilm --cold-start 5 --out "$dir/minilm"
    [ "${CLIP:-}" = skip ] || run clip harness run "${where[@]}" "${o[@]}" --model clip --cold-start 5 --out "$dir/clip"
  else
    run perception harness run "${where[@]}" "${o[@]}" --model vit,whisper --cold-start 3 --out "$dir/perception"
  fi
  ;;
cold-decoder | cold-decoder-chrome)
  # TinyLlama's shape cut to 4 layers (as ort-decoder), prefill of 128 tokens and a decode step, cold in
  # Firefox (or Chromium: cold-decoder-chrome), 3 pages a case.
  browser
  run decoder harness run "${where[@]}" --platform webgpu,ort --model tinyllama --layers 4 --context 128 --cold-start 3 \
    --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --out "$dir/decoder"
  ;;
ort-decoder | ort-decoder-chrome)
  # TinyLlama's shape cut to 4 layers (its 22 in f32 are 4.4 GB: past protobuf's 2 GB for one ONNX
  # file and the page's 4 GB of WASM memory), prefill of 128 tokens and one decode step; in Firefox
  # and natively, or in Chromium (ort-decoder-chrome).
  browser webgpu,ort webgpu,ort,native
  run decoder harness run "${where[@]}" --model tinyllama --layers 4 --context 128 --no-ops \
    --samples 10 --max-time 2 --timeout 120 --retries 0 --ort-dir /tmp/gpu/ort --out "$dir/decoder"
  ;;
minilm-ops)
  # Issue 26: MiniLM's floor. The pass at batch 1 and 8 × 16 and 128 tokens, then each op of its first
  # layer alone at 1×16, natively (the floor shows there too).
  run minilm-ops harness run --platform native --model minilm --batch 1,8 --seq 16,128 --samples 10 --max-time 2 \
    --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 --out "$dir/minilm-ops"
  ;;
minilm)
  run minilm harness run "${ff[@]}" --platform webgpu,native --roofline --suite full --model minilm --batch 8 --seq 128 \
    --dtype f32,f16 --weights /tmp/gpu/all-MiniLM-L6-v2 --timeout 300 --out "$dir/minilm"
  ;;
esac
kill "$smi" 2>/dev/null
tar czf "${OUT:-/tmp}/$step.tar.gz" -C /tmp/evidence "$step"
ls -la "${OUT:-/tmp}"
