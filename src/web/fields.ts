// Which form field an error belongs beside. Services and the API's validation name the field of
// bad input as Forgejo's binding errors do, "[Name]: reason"; a page maps that name to its own
// form field, and shows anything else beside `fallback`.
import type { AppError } from '../errors.js';

/**
 * The form field an error names and its text: `fields` maps the bracketed name to the field (a
 * record, or a function for a rule such as lower-casing); a message naming no field, or a name
 * not mapped, goes to `fallback` whole or without its bracket.
 */
export function errorField(
  err: AppError,
  fields: Record<string, string> | ((name: string) => string | undefined),
  fallback: string,
): [string, string] {
  const m = /^\[(\w+)\]: (.*)$/s.exec(err.message);
  if (!m) return [fallback, err.message];
  const field = typeof fields === 'function' ? fields(m[1]!) : fields[m[1]!];
  return [field ?? fallback, m[2]!];
}
