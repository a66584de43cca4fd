#!/usr/bin/env bash
# End-to-end checks of `lazygrad tokenize` and `lazygrad preprocess` with the Llama 3.1 tokenizer.
# usage: cli_data_test.sh LAZYGRAD DATA_DIR; exits 77 (ctest: skipped) without the fetched tokenizer.
set -uo pipefail
lazygrad=$1
data=$2
if [ ! -f "$data/tokenizer/tokenizer.json" ]; then
  echo "skipped: $data/tokenizer/tokenizer.json absent (run scripts/fetch_data.sh)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

[ "$(printf 'Hello world' | "$lazygrad" tokenize --tokenizer "$data/tokenizer")" = "9906 1917" ] || fail "tokenize"
[ "$(printf 'Hello world' | "$lazygrad" tokenize --tokenizer "$data/tokenizer" --bos)" = "128000 9906 1917" ] || fail "--bos"
[ "$(echo '9906 1917' | "$lazygrad" tokenize --tokenizer "$data/tokenizer/tokenizer.json" --decode)" = "Hello world" ] || fail "--decode"
echo "1 x" | "$lazygrad" tokenize --tokenizer "$data/tokenizer" --decode 2>"$tmp/err" && fail "--decode accepted a word"
grep -q 'word 2 of standard input' "$tmp/err" || fail "--decode error message: $(cat "$tmp/err")"

printf '{"text": "Hello world"}\n{"bad json\n{"text": ""}\n{"text": "x"}\n' > "$tmp/in.jsonl"
"$lazygrad" preprocess --input "$tmp/in.jsonl" --tokenizer "$data/tokenizer" --output-prefix "$tmp/out" \
    --append-eod --workers 2 >"$tmp/log" 2>&1 || fail "preprocess: $(cat "$tmp/log")"
grep -q "in.jsonl:2: invalid JSON" "$tmp/log" || fail "bad line not reported: $(cat "$tmp/log")"
grep -q "2 documents, 5 tokens (1 empty and 1 bad lines skipped)" "$tmp/log" || fail "summary: $(cat "$tmp/log")"
# .bin: int32 9906 1917 128001 87 128001
[ "$(od -An -tu4 -v "$tmp/out_text_document.bin" | tr -s ' \n' ' ')" = " 9906 1917 128001 87 128001 " ] || fail ".bin content"
[ "$(stat -c %s "$tmp/out_text_document.idx")" = "$((34 + 12 * 2 + 8 * 3))" ] || fail ".idx size"
"$lazygrad" preprocess --input "$tmp/in.jsonl" --tokenizer "$data/tokenizer" --output-prefix "$tmp/strict" \
    --strict >"$tmp/log" 2>&1 && fail "--strict accepted a bad line"
grep -q "in.jsonl:2: invalid JSON" "$tmp/log" || fail "--strict message: $(cat "$tmp/log")"
[ ! -e "$tmp/strict_text_document.idx" ] && [ ! -e "$tmp/strict_text_document.bin" ] || fail "--strict left output"
ls "$tmp" | grep -q tmp && fail "temporary files left: $(ls "$tmp")"
echo "cli data checks passed"
