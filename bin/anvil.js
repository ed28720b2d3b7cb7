#!/usr/bin/env -S node --max-semi-space-size=4
// Entry point of the `anvil` command: compiles the TypeScript sources first when the build is
// missing or older than them, then runs the CLI.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist', 'src', 'cli.js');

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
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  process.stderr.write('anvil: building...\n');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  fs.utimesSync(entry, new Date(), new Date());
}
await import(pathToFileURL(entry).href);
