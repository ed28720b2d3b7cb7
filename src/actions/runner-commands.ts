// What the steps of `anvil runner` tell the runner: workflow commands printed on their output
// (`::name key=value,...::message`, GitHub's syntax and escapes) and the key=value files they write
// (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE). Commands understood: add-mask (the value is masked
// from then on and the line not shown), group/endgroup (kept for the log view), error, warning
// and notice (kept, with their file and line), debug (shown when ACTIONS_STEP_DEBUG is true),
// save-state and the legacy set-output, stop-commands/<token> and echo; set-env and add-path are
// refused as on GitHub. Any other line is logged as it is.

/** Parses `key=value` lines and `key<<DELIMITER` blocks (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE). */
export function parseKeyValueFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, key, delim] = heredoc;
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
      out[key!.trim()] = value.join('\n');
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return out;
}

export interface WorkflowCommand {
  name: string;
  props: Record<string, string>;
  value: string;
}

const unescapeData = (s: string) => s.replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/%25/g, '%');
const unescapeProp = (s: string) =>
  s
    .replace(/%0D/gi, '\r')
    .replace(/%0A/gi, '\n')
    .replace(/%3A/gi, ':')
    .replace(/%2C/gi, ',')
    .replace(/%25/g, '%');

/** A workflow command line (`::name k=v,k2=v2::message`, leading blanks allowed), or undefined. */
export function parseCommand(line: string): WorkflowCommand | undefined {
  const m = /^\s*::([A-Za-z][\w-]*)(?:\s+([^:]*(?::(?!:)[^:]*)*))?::([\s\S]*)$/.exec(line);
  if (!m) return undefined;
  const props: Record<string, string> = {};
  for (const part of (m[2] ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) props[part.slice(0, eq).trim()] = unescapeProp(part.slice(eq + 1));
  }
  return { name: m[1]!.toLowerCase(), props, value: unescapeData(m[3]!) };
}

export interface CommandHost {
  /** Logs a line (masked). */
  log(line: string): void;
  addMask(value: string): void;
}

/** Where an annotation points: `file:line:col: ` (or nothing). */
function location(props: Record<string, string>): string {
  const file = props['file'];
  if (!file) return '';
  const line = props['line'] ?? props['startLine'];
  const col = props['col'] ?? props['startColumn'];
  return `${file}${line ? `:${line}${col ? `:${col}` : ''}` : ''}: `;
}

/** Reads the output lines of one process: runs its workflow commands, logs the rest. */
export class CommandReader {
  /** `::set-output name=x::v` (legacy; GITHUB_OUTPUT is read separately). */
  readonly outputs: Record<string, string> = {};
  /** `::save-state name=x::v` (legacy; GITHUB_STATE is read separately). */
  readonly state: Record<string, string> = {};
  private stopToken: string | undefined;

  constructor(
    private readonly host: CommandHost,
    private readonly debug = false,
  ) {}

  line(raw: string): void {
    if (this.stopToken !== undefined) {
      if (raw.trim() === `::${this.stopToken}::`) this.stopToken = undefined;
      else this.host.log(raw);
      return;
    }
    const cmd = parseCommand(raw);
    if (!cmd) {
      this.host.log(raw);
      return;
    }
    const name = cmd.props['name'];
    switch (cmd.name) {
      case 'add-mask':
        this.host.addMask(cmd.value);
        return;
      case 'set-output':
        if (name) this.outputs[name] = cmd.value;
        return;
      case 'save-state':
        if (name) this.state[name] = cmd.value;
        return;
      case 'debug':
        if (this.debug) this.lines('::debug::', cmd.value);
        return;
      case 'error':
      case 'warning':
      case 'notice': {
        const title = cmd.props['title'] ? `${cmd.props['title']}: ` : '';
        this.lines(`::${cmd.name}::`, `${location(cmd.props)}${title}${cmd.value}`);
        return;
      }
      case 'group':
        this.host.log(`::group::${cmd.value.split('\n', 1)[0]}`);
        return;
      case 'endgroup':
        this.host.log('::endgroup::');
        return;
      case 'stop-commands':
        if (cmd.value) this.stopToken = cmd.value;
        return;
      case 'echo':
        return;
      case 'set-env':
      case 'add-path':
        this.host.log(
          `::error::The \`${cmd.name}\` command is disabled: write to the file in ${cmd.name === 'set-env' ? 'GITHUB_ENV' : 'GITHUB_PATH'} instead`,
        );
        return;
      default:
        this.host.log(raw);
    }
  }

  /** A message of several lines: the prefix on the first. */
  private lines(prefix: string, text: string): void {
    const [first, ...rest] = text.split(/\r?\n/);
    this.host.log(`${prefix}${first ?? ''}`);
    for (const l of rest) this.host.log(l);
  }
}
