#!/usr/bin/env bash
# The report.html screenshots of docs/evaluation.md: trains a tiny wide run (configs/wide.yaml, the factors set,
# 28 features) and a tiny conditional run (configs/sines_classes.yaml), 200 steps each, evaluates each, loads its
# report.html in headless Chromium with no network and writes the top of the page, in 256 colours, to
# docs/img/report-wide.png and docs/img/report-conditional.png.
#
#   scripts/report_screenshots.sh [RUN_DIR]   RUN_DIR: a folder for the two runs (default: a new temporary one)
#
# About 10 minutes on 2 cores. CHROMIUM picks the browser (default: chromium), VENV the environment (.venv).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=$(realpath -m "${1:-$(mktemp -d /tmp/report_shots.XXXXXX)}")
BIN=${VENV:-.venv}/bin
CHROMIUM=${CHROMIUM:-chromium}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$RUNS" docs/img

shoot() {  # NAME CONFIG HEIGHT: train and evaluate run NAME, keep the top HEIGHT pixels of its report.html
  local name=$1 config=$2 height=$3 png=docs/img/${1//_/-}.png
  "$BIN/gan-sru" train --config "$config" --set train.steps=200 --set name="$name" --set run_dir="$RUNS" \
      --no-progress
  "$BIN/gan-sru" evaluate --run "$RUNS/$name" --num 500 --repeats 2 --no-progress
  # every host name unresolvable and a dead proxy: the page must render from the file alone
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
      --disable-background-networking --user-data-dir="$RUNS/chromium-profile" \
      --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server=127.0.0.1:9 --proxy-bypass-list="<-loopback>" \
      --window-size=1280,"$height" --screenshot="$RUNS/$name.png" "file://$RUNS/$name/evaluation/report.html"
  "$BIN/python" -c 'import sys; from PIL import Image
Image.open(sys.argv[1]).convert("RGB").quantize(256).save(sys.argv[2], optimize=True)' \
      "$RUNS/$name.png" "$png"
  echo "$png: $(du -k "$png" | cut -f1) KB, from $RUNS/$name/evaluation/report.html"
}

# the heights end each picture below the shared 2-D embedding (PCA and t-SNE)
shoot report_wide configs/wide.yaml 1892
shoot report_conditional configs/sines_classes.yaml 3475
