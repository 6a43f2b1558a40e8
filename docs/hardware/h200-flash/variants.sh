#!/usr/bin/env bash
# How the variant runs of h200-flash.md were made, on the GPU machine, from a build that read two
# temporary overrides (not kept in the code): HARNESS_ATTENTION (`one`: the one-row kernel for every
# attention; `flash:R:S`: the flash kernel with R rows a workgroup and S invocations a row; unset: the
# rule of the day, one row a workgroup and tiled at ViT-B/16 batch 8) and HARNESS_MIN_SPLIT_K (the
# least K that splits, 1024 then). Carried: that build's harness.tar.xz (pack.sh harness) and the Vulkan
# loader with libglvnd (libvulkan.so.1, libGLdispatch.so.0, libGLX.so.0, libGL.so.1, libEGL.so.1 from
# Debian 12, in natlib.tar.xz under lib/). The kept code is flash 32 × 4 with K split from 768: with
# today's binary the same runs are `harness run --platform native ...` as below, no variables.
mkdir -p /tmp/gpu && tar xJf target/gpu-pack/harness.tar.xz -C /tmp/gpu && tar xJf target/gpu-pack/natlib.tar.xz -C /tmp/gpu
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=/tmp/gpu/lib PATH=/tmp/gpu/harness:$PATH HARNESS_BUNDLE=/tmp/gpu/harness/bundle
cd /tmp || exit 2
o=(--platform native --samples 10 --max-time 1 --timeout 120 --retries 0)
# Attention variants (attention-*-results.json; K split from 1024).
for v in default one flash:32:4 flash:32:2 flash:16:8 flash:32:8 flash:16:4 flash:32:1 flash:8:8; do
  export HARNESS_ATTENTION=$([ $v = default ] || echo $v) HARNESS_MIN_SPLIT_K=1024
  harness run "${o[@]}" --model vit,whisper --batch 1,8 --no-ops --out /tmp/res/${v//:/-}
  harness run "${o[@]}" --model tinyllama --layers 4 --context 128 --no-ops --out /tmp/res/${v//:/-}-llama
done
# Least K that splits (splitk-*-vit1-results.json; flash 32 × 4): ViT-B/16 at batch 1 and each op of a layer.
for k in 1024 768 512; do
  HARNESS_ATTENTION=flash:32:4 HARNESS_MIN_SPLIT_K=$k harness run "${o[@]}" --model vit --batch 1 --out /tmp/res/vit1-$k
done
