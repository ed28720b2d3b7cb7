// The pill that shows one label: scoped labels as `scope | name`, the color as an SVG dot (the
// pages' Content-Security-Policy allows no inline style).
import type { VNode } from 'preact';
import { labelScope } from './service.js';
import type { LabelRow } from './tables.js';

export function LabelPill(props: { label: LabelRow; href?: string | undefined }): VNode {
  const { label } = props;
  const scope = label.exclusive ? labelScope(label.name) : '';
  const inner = (
    <>
      <svg width="10" height="10" viewBox="0 0 10 10" aria-hidden="true">
        <circle cx="5" cy="5" r="5" fill={/^#[0-9a-fA-F]{6}$/.test(label.color) ? label.color : '#888888'} />
      </svg>
      {scope ? (
        <>
          <span class="scope">{scope}</span>
          {label.name.slice(scope.length + 1)}
        </>
      ) : (
        label.name
      )}
    </>
  );
  const cls = `pill label-pill${scope ? ' scoped' : ''}`;
  return props.href ? (
    <a class={cls} href={props.href} title={label.description || undefined}>
      {inner}
    </a>
  ) : (
    <span class={cls} title={label.description || undefined}>
      {inner}
    </span>
  );
}
