// The expressions of workflows (`${{ ... }}` and `if:` conditions) as `anvil runner` evaluates
// them: literals, context paths (github.ref, secrets.NAME, steps.x.outputs.y, matrix['k']), the
// operators ! == != < <= > >= && || and parentheses, and the functions success(), failure(),
// always(), cancelled(), contains, startsWith, endsWith, format, join, toJSON and fromJSON.
// Comparisons follow GitHub's rules: strings compare without case, mixed types as numbers.

export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

export interface ExprContext {
  /** The contexts by name: github, env, secrets, vars, matrix, needs, steps, inputs, runner, job. */
  contexts: Record<string, Value>;
  /** Whether a previous step failed, and whether the job was cancelled (for status functions). */
  failed: boolean;
  cancelled: boolean;
}

export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionError';
  }
}

type Token =
  { t: 'str'; v: string } | { t: 'num'; v: number } | { t: 'id'; v: string } | { t: 'op'; v: string };

/** The tokens of `src`; `spans`, when given, gets each token's [start, end) offsets. */
function tokenize(src: string, spans?: Array<[number, number]>): Token[] {
  const out: Token[] = [];
  let i = 0;
  let start = 0;
  while (i < src.length) {
    // The token read last ended here.
    if (spans && spans.length < out.length) spans.push([start, i]);
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    start = i;
    if (c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new ExpressionError('unterminated string');
        if (src[i] === "'") {
          if (src[i + 1] === "'") {
            s += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += src[i++];
      }
      out.push({ t: 'str', v: s });
      continue;
    }
    const two = src.slice(i, i + 2);
    if (['==', '!=', '<=', '>=', '&&', '||'].includes(two)) {
      out.push({ t: 'op', v: two });
      i += 2;
      continue;
    }
    if ('!<>()[].,*'.includes(c)) {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    const num = /^(?:0x[0-9a-f]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(src.slice(i));
    if (num && (c === '-' || /\d/.test(c))) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][\w-]*/.exec(src.slice(i));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    throw new ExpressionError(`unexpected character ${JSON.stringify(c)}`);
  }
  if (spans && spans.length < out.length) spans.push([start, i]);
  return out;
}

export function truthy(v: Value | undefined): boolean {
  return !(v === undefined || v === null || v === false || v === 0 || v === '' || Number.isNaN(v));
}

function toNum(v: Value | undefined): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return v.trim() === '' ? 0 : Number(v);
  return NaN;
}

export function show(v: Value | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v, null, 2);
}

function compare(a: Value | undefined, b: Value | undefined, op: string): boolean {
  if (typeof a === 'string' && typeof b === 'string') {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    switch (op) {
      case '==':
        return x === y;
      case '!=':
        return x !== y;
      case '<':
        return x < y;
      case '<=':
        return x <= y;
      case '>':
        return x > y;
      default:
        return x >= y;
    }
  }
  if (typeof a === 'object' && a !== null) return op === '==' ? a === b : op === '!=' ? a !== b : false;
  const x = toNum(a ?? null);
  const y = toNum(b ?? null);
  switch (op) {
    case '==':
      return x === y;
    case '!=':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x >= y;
  }
}

class Parser {
  private i = 0;
  /** Whether a status function (success, failure, always, cancelled) was called. */
  usedStatus = false;

  constructor(
    private readonly tokens: Token[],
    private readonly ctx: ExprContext,
  ) {}

  parse(): Value {
    const v = this.or();
    if (this.i < this.tokens.length) throw new ExpressionError('unexpected text after the expression');
    return v;
  }

  private peek(v: string): boolean {
    const t = this.tokens[this.i];
    return t?.t === 'op' && t.v === v;
  }

  private expect(v: string): void {
    if (!this.peek(v)) throw new ExpressionError(`expected ${v}`);
    this.i++;
  }

  private or(): Value {
    let v = this.and();
    while (this.peek('||')) {
      this.i++;
      const r = this.and();
      if (!truthy(v)) v = r;
    }
    return v;
  }

  private and(): Value {
    let v = this.eq();
    while (this.peek('&&')) {
      this.i++;
      const r = this.eq();
      if (truthy(v)) v = r;
    }
    return v;
  }

  private eq(): Value {
    let v = this.rel();
    while (this.peek('==') || this.peek('!=')) {
      const op = (this.tokens[this.i++] as { v: string }).v;
      v = compare(v, this.rel(), op);
    }
    return v;
  }

  private rel(): Value {
    let v = this.unary();
    while (this.peek('<') || this.peek('<=') || this.peek('>') || this.peek('>=')) {
      const op = (this.tokens[this.i++] as { v: string }).v;
      v = compare(v, this.unary(), op);
    }
    return v;
  }

  private unary(): Value {
    if (this.peek('!')) {
      this.i++;
      return !truthy(this.unary());
    }
    return this.postfix(this.primary());
  }

  private primary(): Value {
    const t = this.tokens[this.i++];
    if (!t) throw new ExpressionError('unexpected end of expression');
    if (t.t === 'str' || t.t === 'num') return t.v;
    if (t.t === 'op' && t.v === '(') {
      const v = this.or();
      this.expect(')');
      return v;
    }
    if (t.t !== 'id') throw new ExpressionError(`unexpected ${t.v}`);
    const lower = t.v.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    if (lower === 'null') return null;
    if (this.peek('(')) {
      this.i++;
      const args: Value[] = [];
      while (!this.peek(')')) {
        args.push(this.or());
        if (!this.peek(')')) this.expect(',');
      }
      this.i++;
      return this.call(lower, args);
    }
    return Object.hasOwn(this.ctx.contexts, lower) ? this.ctx.contexts[lower]! : null;
  }

  private postfix(v: Value): Value {
    for (;;) {
      if (this.peek('.')) {
        this.i++;
        const t = this.tokens[this.i++];
        if (t?.t === 'op' && t.v === '*') {
          v = Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : [];
          continue;
        }
        if (!t || (t.t !== 'id' && t.t !== 'num')) throw new ExpressionError('expected a property name');
        v = prop(v, String(t.v));
      } else if (this.peek('[')) {
        this.i++;
        const key = this.or();
        this.expect(']');
        v = prop(v, show(key));
      } else {
        return v;
      }
    }
  }

  private call(name: string, args: Value[]): Value {
    const s = (i: number) => show(args[i]).toLowerCase();
    switch (name) {
      case 'success':
        this.usedStatus = true;
        return !this.ctx.failed && !this.ctx.cancelled;
      case 'failure':
        this.usedStatus = true;
        return this.ctx.failed;
      case 'always':
        this.usedStatus = true;
        return true;
      case 'cancelled':
        this.usedStatus = true;
        return this.ctx.cancelled;
      case 'contains':
        return Array.isArray(args[0]) ? args[0].some((x) => compare(x, args[1], '==')) : s(0).includes(s(1));
      case 'startswith':
        return s(0).startsWith(s(1));
      case 'endswith':
        return s(0).endsWith(s(1));
      case 'format':
        return show(args[0]).replace(/\{(\d+)\}/g, (_, n: string) => show(args[Number(n) + 1]));
      case 'join':
        return Array.isArray(args[0])
          ? args[0].map(show).join(args[1] === undefined ? ',' : show(args[1]))
          : show(args[0]);
      case 'tojson':
        return JSON.stringify(args[0] ?? null, null, 2);
      case 'fromjson':
        try {
          return JSON.parse(show(args[0])) as Value;
        } catch {
          throw new ExpressionError('fromJSON: not JSON');
        }
      case 'hashfiles':
        return '';
      default:
        throw new ExpressionError(`unknown function ${name}()`);
    }
  }
}

function prop(v: Value, key: string): Value {
  if (Array.isArray(v)) {
    if (/^\d+$/.test(key)) return v[Number(key)] ?? null;
    return v.map((x) => prop(x, key));
  }
  if (v && typeof v === 'object') {
    if (Object.hasOwn(v, key)) return v[key]!;
    // Context keys are case-insensitive (secrets.token is secrets.TOKEN).
    const found = Object.keys(v).find((k) => k.toLowerCase() === key.toLowerCase());
    return found === undefined ? null : v[found]!;
  }
  return null;
}

/** The value of an expression (without `${{ }}`). */
export function evaluate(expr: string, ctx: ExprContext): Value {
  return new Parser(tokenize(expr), ctx).parse();
}

/** `text` with every `${{ expression }}` replaced by its value. */
export function interpolate(text: string, ctx: ExprContext): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => show(evaluate(e, ctx)));
}

/**
 * An `if:` condition: `${{ }}` may wrap it; without a status function it holds only while
 * nothing failed (GitHub's implicit success()).
 */
export function condition(cond: unknown, ctx: ExprContext): boolean {
  if (cond === undefined || cond === null || cond === '') return !ctx.failed && !ctx.cancelled;
  if (typeof cond === 'boolean') return cond && !ctx.failed && !ctx.cancelled;
  let src = String(cond).trim();
  const wrapped = /^\$\{\{([\s\S]*)\}\}$/.exec(src);
  if (wrapped) src = wrapped[1]!;
  const p = new Parser(tokenize(src), ctx);
  const v = truthy(p.parse());
  return p.usedStatus ? v : v && !ctx.failed && !ctx.cancelled;
}

/** A reference to a context in an expression: its name (lower case) and the key after it, if any. */
export interface ContextRef {
  name: string;
  key: string | undefined;
  /** Offsets in the expression of the reference (with its key). */
  start: number;
  end: number;
}

/**
 * The contexts an expression reads (`inputs.x`, `inputs['x']`, `github`), in order; not function
 * names nor properties. Throws ExpressionError when it cannot be read.
 */
export function contextRefs(expr: string): ContextRef[] {
  const spans: Array<[number, number]> = [];
  const t = tokenize(expr, spans);
  const isOp = (i: number, v: string) => t[i]?.t === 'op' && t[i]!.v === v;
  const refs: ContextRef[] = [];
  for (let i = 0; i < t.length; i++) {
    const tok = t[i]!;
    if (tok.t !== 'id' || isOp(i - 1, '.') || isOp(i + 1, '(')) continue;
    const name = tok.v.toLowerCase();
    if (name === 'true' || name === 'false' || name === 'null') continue;
    let key: string | undefined;
    let last = i;
    const next = t[i + 2];
    if (isOp(i + 1, '.') && next && (next.t === 'id' || next.t === 'num')) {
      key = String(next.v);
      last = i + 2;
    } else if (isOp(i + 1, '[') && next?.t === 'str' && isOp(i + 3, ']')) {
      key = next.v;
      last = i + 3;
    }
    refs.push({ name, key, start: spans[i]![0], end: spans[last]![1] });
  }
  return refs;
}

/** A value written as an expression literal. */
export function literal(v: Value | undefined): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return `'${v.replace(/'/g, "''")}'`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return `fromJSON('${JSON.stringify(v).replace(/'/g, "''")}')`;
}

/**
 * `expr` with the context `name` replaced by literals of `values`: `name.key` and `name['key']` by
 * the key's value (keys without case, as contexts read them; null when there is none), `name`
 * alone by the whole object. Throws ExpressionError when the expression cannot be read.
 */
export function bindContext(expr: string, name: string, values: Record<string, Value>): string {
  let out = '';
  let at = 0;
  for (const ref of contextRefs(expr)) {
    if (ref.name !== name) continue;
    const v = ref.key === undefined ? values : prop(values, ref.key);
    out += `${expr.slice(at, ref.start)}${literal(v)}`;
    at = ref.end;
  }
  return out + expr.slice(at);
}
