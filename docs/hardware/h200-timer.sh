#!/usr/bin/env bash
# Makes the evidence of docs/hardware/h200-timer.md (issue 56): the page GPU timer on an H200 in Chrome.
# Whether it agrees with harness's own timestamps on every model case, what it costs, and the GPU busy and
# span times it gives onnxruntime-web (both providers), TensorFlow.js and transformers.js beside harness's own.
#
#   here:  cargo build --release -p harness && target/release/harness run --suite quick --samples 2 --filter add
#          bash docs/hardware/h200-timer.sh pack      the harness binary and bundle, onnxruntime-web, TensorFlow.js,
#                                                     transformers.js and MiniLM, in parts under target/gpu-pack
#          (Chromium's parts: Debian's chromium, chromium-common and chromium-driver with the libraries
#          Chromium links, as h100-firefox.sh pack-chromium makes them, in parts of 17.5 MB)
#   there, one call a part, each carrying `.gl` (the device README) and the parts named:
#          bash docs/hardware/h200-timer.sh stash
#   then:  bash docs/hardware/h200-timer.sh stash && bash docs/hardware/h200-timer.sh STEP...
#   STEP: own, page (MiniLM, ViT-B/16 and Whisper-tiny's encoder at batch 1 and 8, `--platform webgpu`, by
#   harness's timestamps or by the page timer alone, its cost measured), engines (`--platform webgpu,ort`,
#   the timer's cost on ORT measured), tfjs (catalogue matmul and softmax), text (MiniLM from text on
#   transformers.js); own-firefox, page-firefox and engines-firefox the same in Firefox (its parts as
#   ../shared/gpu/pack.sh firefox makes them, split again in parts of 17.5 MB); burn, burn-firefox and
#   burn-native: examples/bench-burn (burn on its wgpu backend, with the catalogue's matmul beside it in
#   the same page) and `harness run` of the catalogue's matmul at 1024³ and 4096³, in Chrome, Firefox
#   and natively (pack takes the bench binary and bundle that `harness bench` built here, in
#   examples/bench-burn/target); onnx and onnx-firefox: your own ONNX files (issue 57, h200-onnx.md),
#   all-MiniLM-L6-v2 as examples/onnx/export_minilm.py exports it (f32 and int8), ViT-B/16 and Whisper-tiny's
#   encoder as export_vit.py and export_whisper_encoder.py export them (their graphs, and their weights
#   regenerated there from a manifest by onnx-weights.py), on ort-webgpu, ort-jsep and ort-wasm, warm at batch
#   1 and 8, and onnx-cold and onnx-firefox-cold cold at batch 1 (`pack-onnx` packs them, in parts of 17.5 MB,
#   from /tmp/minilm-onnx and /tmp/onnx-exports); hf and hf-firefox: the tests' Hugging Face folders (tiny
#   BERT, ViT, Wav2Vec2) through transformers.js's pipelines; history (issue 58): the quick suite 8 times in
#   a row in Chrome. Each leaves $OUT/STEP.tar.gz: results, logs, nvidia-smi's clocks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pack="$top/target/gpu-pack"
case "${1:-}" in
pack)
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$pack" "$work/harness"
  cp "$top/target/release/harness" "$(command -v geckodriver)" "$work/harness/" && cp -a "$top/target/harness-bundle" "$work/harness/bundle"
  tar cf - -C "$work" harness | xz -T0 -6 > "$pack/harness.tar.xz"
  tar cJf "$pack/ort.tar.xz" -C "$top/target/ort" node_modules/onnxruntime-web/package.json \
    $(cd "$top/target/ort" && ls node_modules/onnxruntime-web/dist/ort.min.js node_modules/onnxruntime-web/dist/ort.webgpu.min.js \
      node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.jsep.* node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.*)
  tar cJf "$pack/transformers.tar.xz" -C "$top/target/transformers" node_modules/@huggingface/transformers/package.json \
    node_modules/@huggingface/transformers/dist/transformers.min.js node_modules/onnxruntime-web/package.json \
    node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm
  tar cJf "$pack/tfjs.tar.xz" -C "$top/target/tfjs" \
    node_modules/@tensorflow/tfjs-core/package.json node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js \
    node_modules/@tensorflow/tfjs-backend-webgpu/package.json node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js
  burn=$top/examples/bench-burn/target
  if ls "$burn"/release/deps/burn-* >/dev/null 2>&1; then
    mkdir -p "$work/burn" && cp "$(ls -t "$burn"/release/deps/burn-* | grep -v '\.d$' | head -1)" "$work/burn/burn"
    [ ! -d "$burn/harness-bench/burn" ] || cp -a "$burn/harness-bench/burn" "$work/burn/bundle"
    rm -f "$pack"/burn.tar.xz.*
    tar cf - -C "$work" burn | xz -T0 -6 | split -b 17500000 - "$pack/burn.tar.xz."
  fi
  m=all-MiniLM-L6-v2
  tar cf - -C "$top/models" $m/config.json $m/model.safetensors $m/tokenizer.json $m/tokenizer_config.json \
    $m/special_tokens_map.json $m/vocab.txt | split -b 17500000 - "$pack/minilm.tar."
  ls -la "$pack"
  exit 0
  ;;
pack-onnx)
  mkdir -p "$pack"
  rm -f "$pack"/onnx.tar.* "$pack"/onnx-*.json
  tar cf - -C /tmp minilm-onnx onnx-exports/vit/model.onnx onnx-exports/whisper/model.onnx | split -b 17500000 - "$pack/onnx.tar."
  for m in vit whisper; do python3 "$top/docs/hardware/onnx-weights.py" manifest /tmp/onnx-exports/$m/model.onnx "$pack/onnx-$m.json"; done
  ls -la "$pack"
  exit 0
  ;;
stash)
  mkdir -p /tmp/gpu-pack
  cp "$pack"/* /tmp/gpu-pack/ 2>/dev/null
  ls /tmp/gpu-pack
  exit 0
  ;;
own | page | engines | tfjs | text | own-firefox | page-firefox | engines-firefox | ort-firefox | burn | burn-firefox | burn-native | onnx | onnx-firefox | onnx-cold | onnx-firefox-cold | hf | hf-firefox | history) ;;
*) sed -n 2,18p "$0"; exit 2 ;;
esac

# Everything carried is unpacked once.
mkdir -p /tmp/gpu
g=/tmp/gpu-pack
[ -x /tmp/gpu/chromium/chromium ] || cat $g/chromium.tar.xz.* | xz -d | tar xf - -C /tmp/gpu
# Firefox as ../shared/gpu/pack.sh packs it (firefox/ and its libraries in lib/), where carried.
[ -x /tmp/gpu/firefox/firefox-esr ] || ! ls $g/firefox.tar.xz.* >/dev/null 2>&1 || cat $g/firefox.tar.xz.* | xz -d | tar xf - -C /tmp/gpu
[ -x /tmp/gpu/harness/harness ] || tar xJf $g/harness.tar.xz -C /tmp/gpu
[ -d /tmp/gpu/ort ] || { mkdir -p /tmp/gpu/ort && tar xJf $g/ort.tar.xz -C /tmp/gpu/ort; }
[ -d /tmp/gpu/tfjs ] || { mkdir -p /tmp/gpu/tfjs && tar xJf $g/tfjs.tar.xz -C /tmp/gpu/tfjs; }
[ -d /tmp/gpu/transformers ] || { mkdir -p /tmp/gpu/transformers && tar xJf $g/transformers.tar.xz -C /tmp/gpu/transformers; }
[ -d /tmp/gpu/all-MiniLM-L6-v2 ] || ! ls $g/minilm.tar.* >/dev/null 2>&1 || cat $g/minilm.tar.* | tar xf - -C /tmp/gpu
[ -d /tmp/gpu/burn ] || ! ls $g/burn.tar.xz.* >/dev/null 2>&1 || cat $g/burn.tar.xz.* | xz -d | tar xf - -C /tmp/gpu
[ -d /tmp/gpu/minilm-onnx ] || ! ls $g/onnx.tar.* >/dev/null 2>&1 || cat $g/onnx.tar.* | tar xf - -C /tmp/gpu
for m in vit whisper; do
  # onnx-weights.py beside this script (both are carried in target/gpu-pack).
  [ -f /tmp/gpu/onnx-exports/$m/model.onnx.data ] || [ ! -f $g/onnx-$m.json ] || python3 "$(dirname "$0")/onnx-weights.py" fill $g/onnx-$m.json /tmp/gpu/onnx-exports/$m
done
# The libraries a desktop would have (the device README): libglvnd's and the Vulkan loader.
for f in "$top"/.gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:/tmp/gpu/lib:/usr/local/nvidia/lib64 PATH=/tmp/gpu/harness:$PATH HARNESS_BUNDLE=/tmp/gpu/harness/bundle
chrome=(--browser chrome --browser-path chrome=/tmp/gpu/chromium/chromium --driver-path chrome=/tmp/gpu/chromium/chromedriver --headless)
firefox=(--browser firefox --browser-path firefox=/tmp/gpu/firefox/firefox-esr --driver-path firefox=/tmp/gpu/harness/geckodriver --headless)
models=(--model minilm,vit,whisper --no-ops --weights /tmp/gpu/all-MiniLM-L6-v2 --samples 10 --max-time 2 --timeout 180 --retries 0)
cd /tmp || exit 2
for step in "$@"; do
  dir=/tmp/evidence/$step
  mkdir -p "$dir"
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 200 > "$dir/nvidia-smi.csv" 2>&1 &
  smi=$!
  run() { # name, harness args... (`harness bench` where the first is `bench`)
    local name=$1 command=run; shift
    [ "$1" = bench ] && { command=bench; shift; }
    local t0=$SECONDS
    harness $command "$@" --out "$dir/$name" > "$dir/$name.log" 2>&1
    echo "$name: exit $? in $((SECONDS - t0)) s: harness $command $*" | tee -a "$dir/exit-codes.txt"
  }
  # burn's bench and the catalogue's matmul at the same shapes, with the same sampling.
  burn() { # harness args for the browser or platform
    local same=(--samples 30 --warmup 5 --max-time 5 --timeout 300 --retries 0)
    run bench bench --bench-binary /tmp/gpu/burn/burn --bundle /tmp/gpu/burn/bundle "$@" "${same[@]}"
    run catalogue "$@" --suite full --filter matmul@1024x1024x1024,matmul@4096x4096x4096 "${same[@]}"
  }
  case $step in
  own) run own "${chrome[@]}" --platform webgpu "${models[@]}" --gpu-timer harness ;;
  page) run page "${chrome[@]}" --platform webgpu "${models[@]}" --gpu-timer page --gpu-timer-cost ;;
  engines) run engines "${chrome[@]}" --platform webgpu,ort "${models[@]}" --gpu-timer-cost --ort-dir /tmp/gpu/ort ;;
  own-firefox) run own "${firefox[@]}" --platform webgpu "${models[@]}" --gpu-timer harness ;;
  page-firefox) run page "${firefox[@]}" --platform webgpu "${models[@]}" --gpu-timer page --gpu-timer-cost ;;
  engines-firefox) run engines "${firefox[@]}" --platform webgpu,ort "${models[@]}" --gpu-timer-cost --ort-dir /tmp/gpu/ort ;;
  # ORT alone in Firefox, no cost (page-firefox's cost rounds took 4 minutes behind Firefox's timer).
  ort-firefox) run ort "${firefox[@]}" --platform ort "${models[@]}" --ort-dir /tmp/gpu/ort ;;
  tfjs) run tfjs "${chrome[@]}" --platform webgpu,tfjs --suite default --filter 'matmul_tiled*,softmax*' --samples 10 --max-time 2 --tfjs-dir /tmp/gpu/tfjs ;;
  burn) burn "${chrome[@]}" --platform webgpu ;;
  burn-firefox) burn "${firefox[@]}" --platform webgpu ;;
  burn-native) burn --platform native ;;
  # Your own ONNX files: warm at batch 1 and 8 (onnx, onnx-firefox), or cold at batch 1, 3 fresh pages each
  # (onnx-cold, onnx-firefox-cold).
  onnx | onnx-firefox | onnx-cold | onnx-firefox-cold)
    b=("${chrome[@]}"); case $step in onnx-firefox*) b=("${firefox[@]}") ;; esac
    files=/tmp/gpu/minilm-onnx/model.onnx,/tmp/gpu/minilm-onnx/model_int8.onnx,/tmp/gpu/onnx-exports/vit/model.onnx,/tmp/gpu/onnx-exports/whisper/model.onnx
    own=(--onnx $files --dim sequence_length=128 --platform ort-webgpu,ort-jsep,ort-wasm --timeout 180 --retries 0 --ort-dir /tmp/gpu/ort)
    case $step in
    *cold) run cold "${b[@]}" "${own[@]}" --dim batch_size=1 --cold-start 3 ;;
    *) run warm "${b[@]}" "${own[@]}" --dim batch_size=1,8 --samples 10 --max-time 2 ;;
    esac ;;
  # Hugging Face folders through transformers.js's pipelines: the tests' tiny BERT, ViT and Wav2Vec2 (CTC).
  hf | hf-firefox)
    b=("${chrome[@]}"); [ $step = hf-firefox ] && b=("${firefox[@]}")
    t=$top/harness/tests/onnx-models
    run hf "${b[@]}" --hf-model $t/tiny-bert,$t/tiny-vit,$t/tiny-wav2vec2 --platform transformers --batch 1,8 --samples 10 --max-time 2 \
      --timeout 180 --retries 0 --transformers-dir /tmp/gpu/transformers ;;
  # Issue 58: the same quick suite run 8 times in a row, for the run-to-run spread of each case's median
  # that `harness history check`'s rule is tuned to, and a real history to import.
  history) for n in 01 02 03 04 05 06 07 08; do
      run run-$n "${chrome[@]}" --platform webgpu --suite quick --samples 10 --max-time 0.5 --timeout 60 --retries 0
    done ;;
  text) run text "${chrome[@]}" --platform webgpu,transformers --model minilm --from-text --weights /tmp/gpu/all-MiniLM-L6-v2 --samples 10 --transformers-dir /tmp/gpu/transformers ;;
  esac
  kill $smi
  tar czf "$OUT/$step.tar.gz" -C /tmp/evidence "$step"
done
