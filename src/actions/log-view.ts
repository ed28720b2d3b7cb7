// Job logs as the pages show them: ANSI colours turned into HTML (every character escaped; colours
// become classes, since the pages' Content-Security-Policy allows no inline style), and the log
// folded into steps. Runners write a header row when a step starts ("⭒ name" from `anvil runner`,
// "⭐ Run name" from Forgejo's runner); the rows before the first header are "Set up job".
import type { JobRow, TaskRow } from './tables.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

interface Style {
  bold: boolean;
  italic: boolean;
  underline: boolean;
  dim: boolean;
  fg: number | undefined;
  bg: number | undefined;
}

const PLAIN: Style = {
  bold: false,
  italic: false,
  underline: false,
  dim: false,
  fg: undefined,
  bg: undefined,
};

function classesOf(s: Style): string {
  const c: string[] = [];
  if (s.bold) c.push('ansi-bold');
  if (s.dim) c.push('ansi-dim');
  if (s.italic) c.push('ansi-italic');
  if (s.underline) c.push('ansi-underline');
  if (s.fg !== undefined) c.push(`ansi-fg-${s.fg}`);
  if (s.bg !== undefined) c.push(`ansi-bg-${s.bg}`);
  return c.join(' ');
}

/** Applies one SGR sequence's parameters to a style. */
function applySgr(style: Style, params: number[]): Style {
  const s = { ...style };
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p === 0) Object.assign(s, PLAIN);
    else if (p === 1) s.bold = true;
    else if (p === 2) s.dim = true;
    else if (p === 3) s.italic = true;
    else if (p === 4) s.underline = true;
    else if (p === 22) s.bold = s.dim = false;
    else if (p === 23) s.italic = false;
    else if (p === 24) s.underline = false;
    else if (p >= 30 && p <= 37) s.fg = p - 30;
    else if (p >= 90 && p <= 97) s.fg = p - 90 + 8;
    else if (p === 39) s.fg = undefined;
    else if (p >= 40 && p <= 47) s.bg = p - 40;
    else if (p >= 100 && p <= 107) s.bg = p - 100 + 8;
    else if (p === 49) s.bg = undefined;
    else if (p === 38 || p === 48) {
      // 256 colours (the first 16 kept, the others dropped) or true colour (dropped).
      const mode = params[i + 1];
      if (mode === 5) {
        const n = params[i + 2] ?? -1;
        const v = n >= 0 && n < 16 ? n : undefined;
        if (p === 38) s.fg = v;
        else s.bg = v;
        i += 2;
      } else if (mode === 2) {
        if (p === 38) s.fg = undefined;
        else s.bg = undefined;
        i += 4;
      }
    }
  }
  return s;
}

// eslint-disable-next-line no-control-regex -- terminal escape sequences
const ESCAPE = /\x1b\[([0-9;:?]*)([A-Za-z@`])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;
// eslint-disable-next-line no-control-regex -- other control characters are not shown
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * One log line as HTML: text escaped, SGR colours and weights as `ansi-*` classes, every other
 * escape sequence and control character dropped. A carriage return keeps what was written last.
 */
export function ansiToHtml(line: string): string {
  const cr = line.lastIndexOf('\r', line.length - 2);
  const text = cr >= 0 ? line.slice(cr + 1) : line;
  let out = '';
  let style = PLAIN;
  let open = false;
  let last = 0;
  const emit = (chunk: string) => {
    const clean = chunk.replace(CONTROL, '');
    if (!clean) return;
    const cls = classesOf(style);
    if (cls && !open) {
      out += `<span class="${cls}">`;
      open = true;
    }
    out += escapeHtml(clean);
  };
  const restyle = (next: Style) => {
    if (open) out += '</span>';
    open = false;
    style = next;
  };
  for (const m of text.matchAll(ESCAPE)) {
    emit(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] === 'm') {
      const params = (m[1] ?? '')
        .split(/[;:]/)
        .map((x) => (x === '' ? 0 : Number(x)))
        .filter((x) => Number.isFinite(x));
      restyle(applySgr(style, params.length ? params : [0]));
    }
  }
  emit(text.slice(last));
  if (open) out += '</span>';
  return out;
}

/** The kind of a workflow command line, for its class (error, warning, notice, debug, group). */
export function lineKind(content: string): string | undefined {
  const m = /^::(error|warning|notice|debug|group|endgroup)::/.exec(content);
  return m ? m[1] : undefined;
}

const HEADER = /^(?:\u2B52|\u2B50) (.*)$/;

/** A step's name when the row is a step's header. */
export function stepHeader(content: string): string | undefined {
  const m = HEADER.exec(content);
  return m ? m[1]!.replace(/^Run /, '').trim() || 'Step' : undefined;
}

export interface LogStep {
  name: string;
  /** First row (the header's, or 0 for "Set up job") and the row after the last. */
  start: number;
  end: number;
  startMs: number;
  endMs: number;
  status: string;
}

export interface LogMark {
  idx: number;
  time_ms: number;
  content: string;
}

/**
 * The steps of a task's log from its header rows and error rows (`marks`, in row order) and its
 * length. A step with an `::error::` row failed; the last one runs while the job runs.
 */
export function stepsOf(
  marks: LogMark[],
  task: Pick<TaskRow, 'log_length' | 'started_unix' | 'stopped_unix'> | undefined,
  job: Pick<JobRow, 'status'>,
  nowMs: number,
): LogStep[] {
  if (!task) return [];
  const total = Number(task.log_length);
  const endMs = task.stopped_unix ? Number(task.stopped_unix) * 1000 : nowMs;
  const steps: LogStep[] = [];
  const headers = marks.filter((m) => stepHeader(m.content) !== undefined);
  const firstHeader = headers[0]?.idx ?? total;
  if (firstHeader > 0 || headers.length === 0) {
    steps.push({
      name: 'Set up job',
      start: 0,
      end: firstHeader,
      startMs: Number(task.started_unix) * 1000,
      endMs: headers[0] ? Number(headers[0].time_ms) : endMs,
      status: 'success',
    });
  }
  headers.forEach((h, i) => {
    const next = headers[i + 1];
    steps.push({
      name: stepHeader(h.content)!,
      // The header row itself is the step's name, not one of its lines.
      start: Number(h.idx) + 1,
      end: next ? Number(next.idx) : total,
      startMs: Number(h.time_ms),
      endMs: next ? Number(next.time_ms) : endMs,
      status: 'success',
    });
  });
  for (const m of marks) {
    if (!m.content.startsWith('::error::')) continue;
    const s = steps.find((st) => m.idx >= st.start && m.idx < st.end);
    if (s) s.status = 'failure';
  }
  const last = steps[steps.length - 1];
  if (last && (job.status === 'running' || job.status === 'cancelled') && last.status !== 'failure') {
    last.status = job.status;
  }
  return steps;
}

/** A duration to the second as the pages print it ("4s", "1m 5s", "2h 3m"). */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
