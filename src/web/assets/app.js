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
