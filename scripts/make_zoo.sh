#!/usr/bin/env bash
# Re-export the model zoo in graphs/ with `python3 -m remat_torch export` and rewrite
# the provenance table of graphs/README.md.  Needs scripts/bootstrap-torch.sh.
# Usage: scripts/make_zoo.sh [MODEL...]   (default: every model below)
# Takes ~15 minutes and ~8 GB of memory on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# file            model               batch  input shape (without the batch)
zoo=(
  "resnet18           resnet18            32  3,224,224"
  "resnet101          resnet101            8  3,224,224"
  "vgg11              vgg11               16  3,224,224"
  "vgg19              vgg19               16  3,224,224"
  "mobilenet_v3_large mobilenet_v3_large  32  3,224,224"
  "densenet169        densenet169          8  3,224,224"
  "regnet_x_3_2gf     regnet_x_3_2gf      16  3,224,224"
  "convnext_tiny      convnext_tiny       16  3,224,224"
  "vit_b_16           vit_b_16             8  3,224,224"
  "gpt2_small         gpt2-small           1  1024"
  "unet               unet                 4  3,256,256"
  "lstm64             lstm64              64  64,50"
)

for line in "${zoo[@]}"; do
  read -r file model batch shape <<<"$line"
  if [ $# -gt 0 ] && [[ " $* " != *" $file "* ]]; then
    continue
  fi
  /usr/bin/python3 -m remat_torch export "$model" --batch "$batch" --input-shape "$shape" \
    --threads 2 --name "$file-train-b$batch" -o "graphs/$file.json"
done
/usr/bin/python3 scripts/zoo_table.py graphs
