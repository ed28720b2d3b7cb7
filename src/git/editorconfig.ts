// EditorConfig (https://editorconfig.org): the definitions a root `.editorconfig` gives a path, as
// Forgejo answers them (editorconfig-core-go): sections in file order, later ones winning; a glob
// without a slash matches the file name at any depth, one with a slash is relative to the root.
// Only the properties Forgejo's JSON carries are returned.
import picomatch from 'picomatch';

interface Section {
  glob: string;
  props: Map<string, string>;
}

/** Properties whose values are case-insensitive (lower-cased, as the specification says). */
const LOWERED = new Set([
  'indent_style',
  'indent_size',
  'tab_width',
  'end_of_line',
  'charset',
  'trim_trailing_whitespace',
  'insert_final_newline',
]);

/** The properties Forgejo's Definition serializes (charset, indent_style, indent_size, end_of_line). */
const SERIALIZED = ['charset', 'indent_style', 'indent_size', 'end_of_line'] as const;

export function parseEditorConfig(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[(.*)\]$/.exec(line);
    if (sec) {
      current = { glob: sec[1]!.trim(), props: new Map() };
      sections.push(current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || !current) continue; // the preamble (root = true) says nothing about files
    const key = line.slice(0, eq).trim().toLowerCase();
    let value = line.slice(eq + 1).trim();
    if (LOWERED.has(key)) value = value.toLowerCase();
    if (key) current.props.set(key, value);
  }
  return sections;
}

/**
 * An EditorConfig glob as picomatch reads it: `**` inside a path segment matches across slashes
 * (picomatch only knows it as a whole segment), and `[!...]` is a negated class.
 */
function toPicomatch(glob: string): string {
  return glob
    .replace(/\*\*+/g, (m: string, off: number, str: string) => {
      const before = off === 0 || str[off - 1] === '/';
      const after = off + m.length === str.length || str[off + m.length] === '/';
      if (before && after) return '**';
      if (before) return '**/*';
      return after ? '{*,*/**}' : '{*,*/**/*}';
    })
    .replace(/\[!/g, '[^');
}

function matcher(glob: string): (p: string) => boolean {
  let g = toPicomatch(glob);
  if (g.includes('/')) g = g.replace(/^\//, '');
  else g = `**/${g}`;
  try {
    return picomatch(g, { dot: true });
  } catch {
    return () => false;
  }
}

/** The definitions for `filePath` (no leading slash), with editorconfig's derived values. */
export function definitionFor(sections: Section[], filePath: string): Record<string, string> {
  const p = filePath.replace(/^\/+/, '');
  const props = new Map<string, string>();
  for (const s of sections) {
    if (!matcher(s.glob)(p)) continue;
    for (const [k, v] of s.props) props.set(k, v);
  }
  // As editorconfig-core-go: indent_style=tab implies indent_size=tab; indent_size=tab takes
  // tab_width when one is set.
  if (props.get('indent_style') === 'tab' && !props.has('indent_size')) props.set('indent_size', 'tab');
  if (props.get('indent_size') === 'tab' && props.has('tab_width'))
    props.set('indent_size', props.get('tab_width')!);
  const out: Record<string, string> = {};
  for (const k of SERIALIZED) {
    const v = props.get(k);
    if (v) out[k] = v;
  }
  return out;
}
