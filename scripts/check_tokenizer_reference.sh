#!/usr/bin/env bash
# Compares `lazygrad tokenize` with the JavaScript reference (scripts/tokenizer_reference.js) on
# whole files, byte for byte as read from disk. Default: the whole Brown text of
# scripts/fetch_data.sh as one file (documents separated by blank lines) and the two JSON-lines files
# themselves. Exit status 0 when every file agrees.
#   bash scripts/check_tokenizer_reference.sh [FILE...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${LG_DATA_DIR:-$root/data}
lazygrad=${LAZYGRAD:-$root/build/lazygrad}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  node -e '
    const fs = require("fs");
    const texts = [];
    for (const split of ["train", "validation"])
      for (const line of fs.readFileSync(process.argv[1] + "/brown-" + split + ".jsonl", "utf8").split("\n"))
        if (line) texts.push(JSON.parse(line).text);
    fs.writeFileSync(process.argv[2] + "/brown.txt", texts.join("\n\n"));
  ' "$data/brown" "$tmp"
  files=("$tmp/brown.txt" "$data/brown/brown-train.jsonl" "$data/brown/brown-validation.jsonl")
fi
bad=0
for f in "${files[@]}"; do
  "$lazygrad" tokenize --tokenizer "$data/tokenizer" < "$f" > "$tmp/ours"
  node "$root/scripts/tokenizer_reference.js" "$data/js" --raw "$f" > "$tmp/reference"
  cmp -s "$tmp/ours" "$tmp/reference" || { echo "differs: $f"; bad=$((bad + 1)); }
done
echo "check_tokenizer_reference: ${#files[@]} files, $bad differ"
[ "$bad" -eq 0 ]
