// Which strings the runner hides in a job's log for one secret value: the value, each of its
// lines (a multi-line secret reaches the log a line at a time), and its base64 forms at the three
// byte alignments it can have inside a longer encoded text (as GitHub's runner does: only the
// characters that depend on the secret's bytes alone, so a match holds wherever it starts).

const MIN_LENGTH = 3;

/** The strings to mask for `value` (none shorter than 3 characters). */
export function maskForms(value: string): string[] {
  const forms = new Set<string>();
  for (const part of [value, ...value.split(/\r?\n/)]) {
    const t = part.trim();
    if (t.length >= MIN_LENGTH) forms.add(t);
  }
  const bytes = Buffer.from(value, 'utf8');
  for (const skip of [0, 1, 2]) {
    const rest = bytes.subarray(skip);
    const whole = rest.subarray(0, rest.length - (rest.length % 3));
    const enc = whole.toString('base64');
    if (enc.length >= 4 && whole.length >= MIN_LENGTH) forms.add(enc);
  }
  return [...forms];
}

/** Replaces every mask in `line` with `***`, longest first (so a value hides its own parts). */
export function applyMasks(line: string, masks: Iterable<string>): string {
  let out = line;
  for (const m of [...masks].sort((a, b) => b.length - a.length)) {
    if (m && out.includes(m)) out = out.split(m).join('***');
  }
  return out;
}
