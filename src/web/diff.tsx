// Diffs as the web pages show them (a commit, a comparison, a pull request's files): git's unified
// diff parsed into files and numbered lines, drawn unified or side by side, with the review
// comments of a line shown under it and, where reviewing is possible, a button per line that the
// page's script turns into "comment on this line" (the review form works without it).
import type { ComponentChildren, VNode } from 'preact';

export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'hunk';
  text: string;
  /** Line number on the old side (deleted and context lines). */
  old?: number;
  /** Line number on the new side (added and context lines). */
  new?: number;
}

export interface DiffFile {
  name: string;
  oldName: string;
  binary: boolean;
  lines: DiffLine[];
}

/** A unified diff (`git diff` output) split into files and numbered lines. */
export function parseDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let cur: DiffFile | undefined;
  let oldNo = 0;
  let newNo = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      cur = { name: m?.[2] ?? line.slice(11), oldName: m?.[1] ?? '', binary: false, lines: [] };
      files.push(cur);
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      oldNo = Number(m?.[1] ?? 0);
      newNo = Number(m?.[2] ?? 0);
      cur.lines.push({ kind: 'hunk', text: line });
    } else if (cur.lines.length === 0) {
      // The header lines before the first hunk: names, modes, index.
      if (line.startsWith('Binary files ')) cur.binary = true;
      else if (line.startsWith('rename from ')) cur.oldName = line.slice(12);
    } else if (line.startsWith('+')) cur.lines.push({ kind: 'add', text: line.slice(1), new: newNo++ });
    else if (line.startsWith('-')) cur.lines.push({ kind: 'del', text: line.slice(1), old: oldNo++ });
    else if (line.startsWith(' '))
      cur.lines.push({ kind: 'ctx', text: line.slice(1), old: oldNo++, new: newNo++ });
  }
  return files;
}

/** Forgejo's signed line of a review comment: the new side's number, or minus the old side's. */
export const signedLine = (l: DiffLine): number => (l.kind === 'del' ? -(l.old ?? 0) : (l.new ?? 0));

/** How much of a diff a page shows ([git] MAX_GIT_DIFF_LINES, _LINE_CHARACTERS, _FILES). */
export interface DiffLimits {
  lines: number;
  lineCharacters: number;
  files: number;
}

/** The limits a page applies: none when it was asked for the whole diff (`?full=1`). */
export const diffLimits = (limits: DiffLimits, query: unknown): DiffLimits | undefined =>
  (query as Record<string, string> | undefined)?.['full'] === '1' ? undefined : limits;

/** The same page with the whole diff (`?full=1`, the view mode kept). */
export const fullDiffHref = (path: string, query: unknown): string =>
  `${path}?full=1${diffMode(query) === 'split' ? '&style=split' : ''}`;

export interface DiffOptions {
  mode: 'unified' | 'split';
  /** Cut the diff at these limits, saying so with a link to {@link fullHref}; whole when absent. */
  limits?: DiffLimits | undefined;
  /** The page with the whole diff. */
  fullHref?: string | undefined;
  /** What to show under a line: by file name, then by signed line. */
  notes?: Map<string, Map<number, ComponentChildren>> | undefined;
  /** Show a "comment on this line" button on every line (a pull request's reviewers). */
  commentable?: boolean | undefined;
}

const sign = { add: '+', del: '-', ctx: ' ', hunk: '' } as const;

function CommentButton(props: { file: string; line: DiffLine }): VNode | null {
  if (props.line.kind === 'hunk') return null;
  return (
    <button
      type="button"
      class="line-comment"
      data-path={props.file}
      data-line={String(signedLine(props.line))}
      aria-label={`Comment on line ${props.line.kind === 'del' ? props.line.old : props.line.new} of ${props.file}`}
    >
      +
    </button>
  );
}

function Unified(props: { file: DiffFile; opts: DiffOptions }): VNode {
  const { file, opts } = props;
  const notes = opts.notes?.get(file.name);
  const rows: VNode[] = [];
  for (const l of file.lines) {
    rows.push(
      <tr class={`dl ${l.kind}`}>
        <td class="ln">{l.old ?? ''}</td>
        <td class="ln">{l.new ?? ''}</td>
        <td class="code">
          {opts.commentable ? <CommentButton file={file.name} line={l} /> : null}
          <span class="sign">{sign[l.kind]}</span>
          {l.text}
        </td>
      </tr>,
    );
    const note = l.kind === 'hunk' ? undefined : notes?.get(signedLine(l));
    if (note)
      rows.push(
        <tr class="note">
          <td colSpan={3}>{note}</td>
        </tr>,
      );
  }
  return <Chunked rows={rows} class="diff-table" />;
}

/** Rows per table of a diff: the browser lays out and paints only the tables in view. */
const CHUNK = 128;

/**
 * A diff's rows as tables of {@link CHUNK} rows (the columns have fixed widths, so they line up),
 * each after the first in a block the style sheet marks `content-visibility: auto`: a diff of
 * thousands of lines costs the browser the blocks on screen.
 */
function Chunked(props: { rows: VNode[]; class: string }): VNode {
  const { rows } = props;
  if (rows.length <= CHUNK)
    return (
      <table class={props.class}>
        <tbody>{rows}</tbody>
      </table>
    );
  const blocks: VNode[] = [];
  for (let i = 0; i < rows.length; i += CHUNK)
    blocks.push(
      <div class="chunk">
        <table class={props.class}>
          <tbody>{rows.slice(i, i + CHUNK)}</tbody>
        </table>
      </div>,
    );
  return <div class="diff-rows">{blocks}</div>;
}

/** Side by side: deleted lines paired with the added lines that follow them. */
function Split(props: { file: DiffFile; opts: DiffOptions }): VNode {
  const { file, opts } = props;
  const notes = opts.notes?.get(file.name);
  const rows: VNode[] = [];
  const cell = (l: DiffLine | undefined, side: 'old' | 'new') =>
    l ? (
      <>
        <td class={`ln ${l.kind}`}>{side === 'old' ? l.old : l.new}</td>
        <td class={`code ${l.kind}`}>
          {opts.commentable ? <CommentButton file={file.name} line={l} /> : null}
          {l.text}
        </td>
      </>
    ) : (
      <>
        <td class="ln empty" />
        <td class="code empty" />
      </>
    );
  const pushNotes = (...ls: Array<DiffLine | undefined>) => {
    for (const l of ls) {
      const note = l ? notes?.get(signedLine(l)) : undefined;
      if (note)
        rows.push(
          <tr class="note">
            <td colSpan={4}>{note}</td>
          </tr>,
        );
    }
  };
  const ls = file.lines;
  for (let i = 0; i < ls.length;) {
    const l = ls[i]!;
    if (l.kind === 'hunk') {
      rows.push(
        <tr class="dl hunk">
          <td colSpan={4}>{l.text}</td>
        </tr>,
      );
      i++;
    } else if (l.kind === 'ctx') {
      rows.push(
        <tr class="dl ctx">
          {cell(l, 'old')}
          {cell(l, 'new')}
        </tr>,
      );
      pushNotes(l);
      i++;
    } else {
      const dels: DiffLine[] = [];
      const adds: DiffLine[] = [];
      while (i < ls.length && ls[i]!.kind === 'del') dels.push(ls[i++]!);
      while (i < ls.length && ls[i]!.kind === 'add') adds.push(ls[i++]!);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        rows.push(
          <tr class="dl pair">
            {cell(dels[k], 'old')}
            {cell(adds[k], 'new')}
          </tr>,
        );
        pushNotes(dels[k], adds[k]);
      }
    }
  }
  return <Chunked rows={rows} class="diff-table split" />;
}

/** The unified/split switch: links to the same page with `?style=`. */
export function DiffModeSwitch(props: { path: string; mode: 'unified' | 'split' }): VNode {
  return (
    <nav class="diff-mode" aria-label="Diff view">
      <a href={`${props.path}?style=unified`} aria-current={props.mode === 'unified' ? 'page' : undefined}>
        Unified
      </a>
      <a href={`${props.path}?style=split`} aria-current={props.mode === 'split' ? 'page' : undefined}>
        Split
      </a>
    </nav>
  );
}

export const diffMode = (q: unknown): 'unified' | 'split' =>
  (q as Record<string, string> | undefined)?.['style'] === 'split' ? 'split' : 'unified';

/** A file cut to the limits: its first lines, each cut to the characters allowed. */
function cutFile(f: DiffFile, limits: DiffLimits | undefined): { file: DiffFile; cut: boolean } {
  if (!limits) return { file: f, cut: false };
  const cut = f.lines.length > limits.lines;
  const max = limits.lineCharacters;
  const lines = (cut ? f.lines.slice(0, limits.lines) : f.lines).map((l) =>
    l.text.length > max ? { ...l, text: `${l.text.slice(0, max)}…` } : l,
  );
  return { file: { ...f, lines }, cut };
}

export function DiffView(props: { files: DiffFile[]; opts: DiffOptions }): VNode {
  const { files, opts } = props;
  const added = (f: DiffFile) => f.lines.filter((l) => l.kind === 'add').length;
  const deleted = (f: DiffFile) => f.lines.filter((l) => l.kind === 'del').length;
  const shown = opts.limits ? files.slice(0, opts.limits.files) : files;
  const whole = opts.fullHref ? <a href={opts.fullHref}>Show the whole diff</a> : null;
  return (
    <div class="diff">
      <p class="muted">
        {files.length} changed file{files.length === 1 ? '' : 's'} with{' '}
        {files.reduce((n, f) => n + added(f), 0)} additions and {files.reduce((n, f) => n + deleted(f), 0)}{' '}
        deletions
      </p>
      {shown.map((f, i) => {
        const { file, cut } = cutFile(f, opts.limits);
        return (
          <section class="diff-file" id={`diff-${i + 1}`}>
            <h3>
              {f.oldName && f.oldName !== f.name ? `${f.oldName} → ${f.name}` : f.name}{' '}
              <span class="muted">
                +{added(f)} −{deleted(f)}
              </span>
            </h3>
            {f.binary ? (
              <p class="muted">Binary file not shown.</p>
            ) : opts.mode === 'split' ? (
              <Split file={file} opts={opts} />
            ) : (
              <Unified file={file} opts={opts} />
            )}
            {cut ? (
              <p class="diff-cut muted">
                The first {opts.limits!.lines} of {f.lines.length} lines of this file are shown. {whole}
              </p>
            ) : null}
          </section>
        );
      })}
      {shown.length < files.length ? (
        <p class="diff-cut muted">
          {files.length - shown.length} more changed file{files.length - shown.length === 1 ? ' is' : 's are'}{' '}
          not shown. {whole}
        </p>
      ) : null}
    </div>
  );
}
