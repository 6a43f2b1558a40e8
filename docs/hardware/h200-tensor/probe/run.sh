#!/usr/bin/env bash
# The subgroup-matrix probe in Chromium on the GPU machine (Chromium parts stashed in /tmp/cpk).
set -u
start=$(date +%s)
mkdir -p /tmp/gpu
[ -f /tmp/gpu/lib/libvulkan.so.1 ] || tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
[ -x /tmp/gpu/chromium/chromium ] || { cat /tmp/cpk/cpart.* | xz -d | tar xf - -C /tmp/gpu; } || exit 3
nvidia-smi -L > $OUT/smi.txt 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=/tmp/gpu/chromium-lib:/tmp/gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fl=(--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan --use-vulkan=native --use-angle=vulkan --disable-vulkan-surface
  --ignore-gpu-blocklist --disable-gpu-sandbox --enable-dawn-features=vulkan_enable_f16_on_nvidia)
cp -r target/gpu-pack/probe /tmp/probe
(cd /tmp/probe && python3 -m http.server ${HP:-8766} >/tmp/http.log 2>&1 &) ; sleep 1; URL=http://127.0.0.1:${HP:-8766}/probe.html SCRIPT_MS=${SCRIPT_MS:-300000} timeout 360 bash /tmp/probe/drive.sh /tmp/gpu/chromium/chromium /tmp/gpu/chromium/chromedriver $OUT/probe.json "${fl[@]}"
echo "probe rc=$? $(( $(date +%s) - start ))s" >> $OUT/rc.txt
cp /tmp/probe-driver.log $OUT/ 2>/dev/null
head -c 3000 $OUT/probe.json; echo; cat $OUT/probe.json.log; cat $OUT/rc.txt
