# shellcheck shell=bash
# Sourced by docs/hardware/h100-firefox.sh and the lease scripts: `harness run`'s arguments for Debian's
# Chromium 156 on the GPU machine, unpacked under /tmp/gpu/chromium (h100-firefox.sh pack-chromium), with the
# seven flags that get it the GPU rather than SwiftShader (h100-chrome.md). Whoever runs it puts
# /tmp/gpu/chromium-lib on the library path.
# shellcheck disable=SC2034
cr=(--browser chrome --browser-path chrome=/tmp/gpu/chromium/chromium --driver-path chrome=/tmp/gpu/chromium/chromedriver
  --browser-arg=--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan --browser-arg=--use-vulkan=native
  --browser-arg=--disable-vulkan-surface --browser-arg=--ignore-gpu-blocklist --browser-arg=--disable-gpu-sandbox
  --browser-arg=--use-angle=vulkan)
