// A new password as every form takes it (sign-up, change, reset by mail, settings): the two
// fields, `password` and `retype` (Forgejo's names), and the rules they are checked by.
import type { VNode } from 'preact';
import { Field } from '../web/layout.js';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 255;

/** What is wrong with a password's length, or undefined. */
export function passwordLengthError(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`;
  return undefined;
}

/** The errors of a new password and its confirmation, by field (empty when both are fine). */
export function newPasswordErrors(password: string, retype: string): Record<string, string> {
  const length = passwordLengthError(password);
  if (length) return { password: length };
  return password === retype ? {} : { retype: 'The passwords do not match.' };
}

/** The new password and its confirmation, with their errors beside them. */
export function NewPasswordFields(props: {
  errors: Record<string, string | undefined>;
  label?: string;
  autofocus?: boolean;
}): VNode {
  return (
    <>
      <Field
        label={props.label ?? 'New password'}
        name="password"
        type="password"
        required
        autocomplete="new-password"
        autofocus={props.autofocus}
        error={props.errors['password']}
      />
      <Field
        label="Confirm password"
        name="retype"
        type="password"
        required
        autocomplete="new-password"
        error={props.errors['retype']}
      />
    </>
  );
}
