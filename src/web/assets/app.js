// Progressive enhancement for Anvil's pages: everything works without it.
// - [data-copy]: a button that copies the text of the element it names (clone URLs).
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') || '');
  const text = source && ('value' in source ? source.value : source.textContent);
  if (!text || !navigator.clipboard) return;
  navigator.clipboard.writeText(text).then(() => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = label), 1500);
  });
});

// - .line-comment (a diff line's "+"): fills the review form's file and line, then focuses it.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('.line-comment') : null;
  const path = document.getElementById('review-path');
  const line = document.getElementById('review-line');
  const text = document.getElementById('review-line-body');
  if (!button || !path || !line || !text) return;
  path.value = button.getAttribute('data-path') || '';
  line.value = button.getAttribute('data-line') || '';
  text.scrollIntoView({ block: 'center' });
  text.focus();
});

// - [data-preview]: shows (or hides) the rendered markdown of the text box it names, rendered by
//   the server's one sanitizing renderer.
for (const button of document.querySelectorAll('[data-preview]')) button.hidden = false;
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-preview]') : null;
  if (!button) return;
  const id = button.getAttribute('data-preview') || '';
  const source = document.getElementById(id);
  const preview = document.getElementById(`${id}-preview`);
  if (!source || !preview) return;
  if (!preview.hidden) {
    preview.hidden = true;
    button.textContent = 'Preview';
    return;
  }
  const token = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';
  const res = await fetch('/-/markup', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': token },
    body: new URLSearchParams({ text: source.value }),
  });
  if (!res.ok) return;
  preview.innerHTML = await res.text();
  preview.hidden = false;
  button.textContent = 'Hide preview';
});

// - form[data-confirm]: a destructive form asks before it is sent.
document.addEventListener('submit', (event) => {
  const form = event.target instanceof Element && event.target.tagName === 'FORM' ? event.target : null;
  const question = form && form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) event.preventDefault();
});

// - details.menu (header menus): work without script; with it, a click elsewhere or Escape closes them.
document.addEventListener('click', (event) => {
  const inside = event.target instanceof Element ? event.target.closest('details.menu') : null;
  for (const menu of document.querySelectorAll('details.menu[open]')) if (menu !== inside) menu.open = false;
});
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape') return;
  for (const menu of document.querySelectorAll('details.menu[open]')) {
    menu.open = false;
    menu.querySelector('summary')?.focus();
  }
});
