// The site's icons: small inline SVGs drawn with the text colour (no icon font, no emoji), hidden
// from screen readers (the text beside them says what they mean).
import type { VNode } from 'preact';

const SHAPES = {
  /** An open issue: a ring with a dot. */
  'issue-open': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <circle cx="8" cy="8" r="1.25" fill="currentColor" />
    </>
  ),
  /** A closed issue: a ring with a tick. */
  'issue-closed': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M5.25 8.25 7.1 10.1 10.75 6.25" />
    </>
  ),
  /** A pull request: two commits on a branch and the arrow back into the base. */
  pull: (
    <>
      <circle cx="4" cy="3.5" r="1.75" />
      <circle cx="4" cy="12.5" r="1.75" />
      <path d="M4 5.25v5.5" />
      <circle cx="12" cy="12.5" r="1.75" />
      <path d="M12 10.75V6.5a2 2 0 0 0-2-2H8.25" />
      <path d="M9.75 3 8.25 4.5 9.75 6" />
    </>
  ),
  /** A merged pull request: a branch joining the line. */
  merged: (
    <>
      <circle cx="4" cy="3.5" r="1.75" />
      <circle cx="4" cy="12.5" r="1.75" />
      <circle cx="12" cy="9" r="1.75" />
      <path d="M4 5.25v5.5" />
      <path d="M4 5.25c0 2.75 2.5 3.75 6.25 3.75" />
    </>
  ),
  /** A repository: a book. */
  repo: (
    <>
      <path d="M3.5 13.5V3a1 1 0 0 1 1-1h8v10h-7.5a1.5 1.5 0 0 0-1.5 1.5Zm0 0a1.5 1.5 0 0 0 1.5 1h1" />
      <path d="M9 12.5V15l1-.75 1 .75v-2.5" />
    </>
  ),
  /** Notifications: a bell. */
  bell: (
    <>
      <path d="M4 11.5V7a4 4 0 0 1 8 0v4.5l1.25 1.25H2.75Z" />
      <path d="M6.5 14.25a1.5 1.5 0 0 0 3 0" />
    </>
  ),
  /** Pinned: a pin. */
  pin: (
    <>
      <path d="M6 2h4l-.5 4.25 2.25 2.5h-7.5L6.5 6.25Z" />
      <path d="M8 8.75V14.5" />
    </>
  ),
  /** A note on a project board: a sheet with a folded corner and lines. */
  note: (
    <>
      <path d="M3.5 2.5h6l3 3v8h-9Z" />
      <path d="M9.5 2.5v3h3M5.5 8.5h5M5.5 11h3.5" />
    </>
  ),
  /** Done / read: a tick. */
  check: <path d="M3 8.5 6.5 12 13 4.5" />,
  /** Watching: an eye. */
  eye: (
    <>
      <path d="M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8Z" />
      <circle cx="8" cy="8" r="2" />
    </>
  ),
  /** A package: a box with its lid. */
  package: (
    <>
      <path d="M8 1.5 14 4.5v7L8 14.5 2 11.5v-7z" />
      <path d="M2 4.5 8 7.5l6-3M8 7.5v7" />
    </>
  ),
  /** A milestone: a signpost. */
  milestone: (
    <>
      <path d="M8 1.5v13" />
      <path d="M3 3.5h8.5L13.5 5.5 11.5 7.5H3Z" />
    </>
  ),
  /** Actions: a run that succeeded (a ringed tick). */
  'run-success': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M5.25 8.25 7.1 10.1 10.75 6.25" />
    </>
  ),
  /** Actions: a run that failed (a ringed cross). */
  'run-failure': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="m5.75 5.75 4.5 4.5m0-4.5-4.5 4.5" />
    </>
  ),
  /** Actions: a run in progress (a ring, three quarters drawn). */
  'run-running': (
    <>
      <path d="M8 1.75A6.25 6.25 0 1 1 1.75 8" />
      <circle cx="8" cy="8" r="1.5" fill="currentColor" />
    </>
  ),
  /** Actions: a run waiting (a clock). */
  'run-waiting': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M8 4.5V8l2.25 1.5" />
    </>
  ),
  /** Actions: a run cancelled or blocked (a ringed slash). */
  'run-cancelled': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="m3.6 12.4 8.8-8.8" />
    </>
  ),
  /** Actions: a job skipped (a ringed dash). */
  'run-skipped': (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M5 8h6" />
    </>
  ),
  /** Reactions (issues/thread.tsx): a thumb up. */
  'thumbs-up': (
    <>
      <path d="M2.25 7h2.5v6.5h-2.5Z" />
      <path d="M4.75 7 7.5 1.75a1.4 1.4 0 0 1 2 1.5L9 6h3.5a1.25 1.25 0 0 1 1.2 1.6l-1.5 4.9a1.5 1.5 0 0 1-1.45 1H4.75" />
    </>
  ),
  /** Reactions: a thumb down. */
  'thumbs-down': (
    <g transform="rotate(180 8 8)">
      <path d="M2.25 7h2.5v6.5h-2.5Z" />
      <path d="M4.75 7 7.5 1.75a1.4 1.4 0 0 1 2 1.5L9 6h3.5a1.25 1.25 0 0 1 1.2 1.6l-1.5 4.9a1.5 1.5 0 0 1-1.45 1H4.75" />
    </g>
  ),
  /** Reactions: a laughing face. */
  laugh: (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M5.75 6.25h.01M10.25 6.25h.01" />
      <path d="M5 9h6a3 3 0 0 1-6 0Z" />
    </>
  ),
  /** Reactions: a party popper (hooray). */
  hooray: (
    <>
      <path d="M2 14 5.25 5.25l5.5 5.5Z" />
      <path d="M9 1.75v1.5M12.5 3.5l-1.25 1.25M14.25 7h-1.5M10 7.5c.5-1.5 1.5-2 3-2" />
    </>
  ),
  /** Reactions: a confused face. */
  confused: (
    <>
      <circle cx="8" cy="8" r="6.25" />
      <path d="M5.75 6.25h.01M10.25 6.25h.01" />
      <path d="M5.25 11c1.25-1.25 2.25.25 3.25-.5s1.5-.75 2.25-.25" />
    </>
  ),
  /** Reactions: a heart. */
  heart: (
    <path d="M8 13.75S1.75 10.25 1.75 5.9A3.1 3.1 0 0 1 8 4.6a3.1 3.1 0 0 1 6.25 1.3C14.25 10.25 8 13.75 8 13.75Z" />
  ),
  /** Reactions: a rocket. */
  rocket: (
    <>
      <path d="M8 1.25c2.5 1.75 3.5 4.5 2.75 8L9.5 11h-3L5.25 9.25C4.5 5.75 5.5 3 8 1.25Z" />
      <circle cx="8" cy="5.75" r="1" />
      <path d="M5.25 8.25 3 10.5l.5 2 2.5-1.25M10.75 8.25 13 10.5l-.5 2-2.5-1.25M7 13l1 1.75L9 13" />
    </>
  ),
  /** Reactions: a pair of eyes. */
  eyes: (
    <>
      <ellipse cx="5" cy="8" rx="2.75" ry="4.75" />
      <ellipse cx="11" cy="8" rx="2.75" ry="4.75" />
      <circle cx="5.75" cy="8.75" r="1" fill="currentColor" />
      <circle cx="11.75" cy="8.75" r="1" fill="currentColor" />
    </>
  ),
  /** Add: a plus. */
  plus: <path d="M8 3v10M3 8h10" />,
  /** More actions: three dots in a row. */
  more: (
    <>
      <circle cx="3.5" cy="8" r="1" fill="currentColor" />
      <circle cx="8" cy="8" r="1" fill="currentColor" />
      <circle cx="12.5" cy="8" r="1" fill="currentColor" />
    </>
  ),
  /** A project board's columns: three bars of falling height. */
  columns: <path d="M2.5 3.5h3v9h-3ZM6.5 3.5h3v6h-3ZM10.5 3.5h3v4h-3Z" />,
} as const;

export type IconName = keyof typeof SHAPES;

/** A 16 px icon in the current text colour. */
export function Icon(props: { name: IconName; class?: string }): VNode {
  return (
    <svg
      class={props.class ? `icon line ${props.class}` : 'icon line'}
      width="16"
      height="16"
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      stroke-width="1.5"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {SHAPES[props.name]}
    </svg>
  );
}
