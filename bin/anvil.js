#!/usr/bin/env -S node --max-semi-space-size=16
// Entry point of the `anvil` command: builds first (scripts/build.js) when the bundled CLI is
// missing or older than the TypeScript sources, then runs it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist', 'bundle', 'cli.js');

function newest(dir) {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

const srcDir = path.join(root, 'src');
const stale = !fs.existsSync(entry) || (fs.existsSync(srcDir) && newest(srcDir) > fs.statSync(entry).mtimeMs);
if (stale && fs.existsSync(srcDir)) {
  process.stderr.write('anvil: building...\n');
  const { buildAll } = await import(pathToFileURL(path.join(root, 'scripts', 'build.js')).href);
  const status = await buildAll();
  if (status !== 0) process.exit(status);
  fs.utimesSync(entry, new Date(), new Date());
}
await import(pathToFileURL(entry).href);
