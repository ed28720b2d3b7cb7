// `node scripts/check-doc-links.js`: every relative link in README.md and docs/*.md must name a file
// that exists and, with a #fragment, a heading of that file (GitHub's anchors: lower case, spaces
// as `-`, punctuation dropped, `-1`, `-2`... for repeats). Links inside code are not links. External
// links (http:, https:, mailto:) are not checked. Prints each broken link and exits 1 if there is one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The markdown files checked: README.md and everything under docs/. */
function files() {
  const docs = path.join(root, 'docs');
  const found = [path.join(root, 'README.md')];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) found.push(p);
    }
  };
  if (fs.existsSync(docs)) walk(docs);
  return found;
}

/** The text outside fenced code blocks, line by line (fenced lines become empty). */
function prose(text) {
  let fence = null;
  return text.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
      return '';
    }
    if (m) {
      fence = m[1];
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text. */
function slug(heading) {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map();
function anchors(file) {
  if (!anchorCache.has(file)) {
    const seen = new Map();
    const set = new Set();
    for (const line of prose(fs.readFileSync(file, 'utf8'))) {
      const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      const base = slug(m[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      set.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, set);
  }
  return anchorCache.get(file);
}

const broken = [];
let checked = 0;
for (const file of files()) {
  const lines = prose(fs.readFileSync(file, 'utf8'));
  // Join the lines so that a link's text may wrap; inline code spans are blanked out first.
  const text = lines.join('\n').replace(/`[^`]*`/g, (s) => ' '.repeat(s.length));
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    checked++;
    const line = text.slice(0, m.index).split('\n').length;
    const where = `${path.relative(root, file)}:${line}`;
    const [rel, fragment] = target.split('#', 2);
    const dest = rel ? path.resolve(path.dirname(file), decodeURIComponent(rel)) : file;
    if (!fs.existsSync(dest)) {
      broken.push(`${where}: ${target}: no such file`);
      continue;
    }
    if (fragment !== undefined && dest.endsWith('.md') && !anchors(dest).has(fragment)) {
      broken.push(`${where}: ${target}: no heading #${fragment} in ${path.relative(root, dest)}`);
    }
  }
}
for (const b of broken) console.error(b);
console.log(`${checked} relative links checked, ${broken.length} broken`);
process.exit(broken.length ? 1 : 0);
