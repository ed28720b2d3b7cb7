// Project boards: drag a card to another place or column; the new order of the column it lands in
// is POSTed as Forgejo's {"issues":[{"issueID","sorting"}]} to the column's data-move URL (a note
// as {"noteID","sorting"}). Without this script each card's "Move to" form does the same.
// The board's menus (<details>) work without it; with it, a click elsewhere (another menu too) or
// Escape closes them, and "New column" and a column's "+" put the cursor in their first field.
(() => {
  const MENUS = 'details.board-pop, details.column-add, details.column-menu, details.card-menu';
  document.addEventListener(
    'toggle',
    (event) => {
      const menu = event.target;
      if (!(menu instanceof Element) || !menu.matches('.column-add, .board-pop') || !menu.open) return;
      const field =
        menu.querySelector('[aria-invalid="true"]') ?? menu.querySelector('input:not([type=hidden]), select');
      field?.focus();
    },
    true,
  );
  document.addEventListener('click', (event) => {
    const inside = event.target instanceof Element ? event.target.closest(MENUS) : null;
    for (const menu of document.querySelectorAll(`:is(${MENUS})[open]`)) {
      if (menu !== inside && !menu.contains(inside)) menu.open = false;
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    for (const menu of document.querySelectorAll(`:is(${MENUS})[open]`)) {
      menu.open = false;
      menu.querySelector('summary')?.focus();
    }
  });

  const token = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';
  let dragged = null;

  const after = (list, y) => {
    let best = null;
    let bestOffset = Number.NEGATIVE_INFINITY;
    for (const card of list.querySelectorAll('.board-card:not(.dragging)')) {
      const box = card.getBoundingClientRect();
      const offset = y - box.top - box.height / 2;
      if (offset < 0 && offset > bestOffset) {
        bestOffset = offset;
        best = card;
      }
    }
    return best;
  };

  const save = (list) => {
    const issues = [...list.querySelectorAll('.board-card')].map((card, sorting) =>
      card.hasAttribute('data-note')
        ? { noteID: Number(card.getAttribute('data-note')), sorting }
        : { issueID: Number(card.getAttribute('data-issue')), sorting },
    );
    const column = list.closest('.board-column');
    for (const select of list.querySelectorAll('select[name="column"]')) {
      select.value = column?.getAttribute('data-column') || select.value;
    }
    for (const col of document.querySelectorAll('.board-column')) {
      const count = col.querySelector('.count');
      if (count) count.textContent = String(col.querySelectorAll('.board-card').length);
    }
    fetch(list.getAttribute('data-move') || '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': token },
      body: JSON.stringify({ issues }),
    }).then(
      (r) => {
        if (!r.ok) window.location.reload();
      },
      () => window.location.reload(),
    );
  };

  // A card whose menu is open is not draggable: selecting text in its fields (a note being
  // edited) would drag the card instead.
  document.addEventListener(
    'toggle',
    (event) => {
      const menu =
        event.target instanceof Element && event.target.tagName === 'DETAILS' ? event.target : null;
      const card = menu && menu.matches('.card-menu') ? menu.closest('.board-card[draggable]') : null;
      if (card) card.setAttribute('draggable', menu.hasAttribute('open') ? 'false' : 'true');
    },
    true,
  );
  document.addEventListener('dragstart', (event) => {
    const card =
      event.target instanceof Element ? event.target.closest('.board-card[draggable="true"]') : null;
    if (!card) return;
    dragged = card;
    card.classList.add('dragging');
    event.dataTransfer?.setData(
      'text/plain',
      card.getAttribute('data-issue') || card.getAttribute('data-note') || '',
    );
    if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
  });
  document.addEventListener('dragend', () => {
    dragged?.classList.remove('dragging');
    dragged = null;
  });
  document.addEventListener('dragover', (event) => {
    const list =
      event.target instanceof Element
        ? event.target.closest('.board-column')?.querySelector('.board-cards[data-move]')
        : null;
    if (!dragged || !list) return;
    event.preventDefault();
  });
  document.addEventListener('drop', (event) => {
    const list =
      event.target instanceof Element
        ? event.target.closest('.board-column')?.querySelector('.board-cards[data-move]')
        : null;
    if (!dragged || !list) return;
    event.preventDefault();
    const next = after(list, event.clientY);
    if (next) list.insertBefore(dragged, next);
    else list.appendChild(dragged);
    dragged.classList.remove('dragging');
    save(list);
    dragged = null;
  });
})();
