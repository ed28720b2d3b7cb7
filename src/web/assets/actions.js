// Progressive enhancement of an actions job's page (actions/run-pages.tsx): while the job runs, asks
// the job's JSON (POST, Forgejo's logCursors) for the new lines of each step every second or two,
// adds steps as they start, follows the end of the log when the reader is there, and reloads the
// page once the run is done (its buttons and states then come from the server). Without it the
// page shows the log as it was when loaded.
(() => {
  const log = document.getElementById('job-log');
  if (!log || log.dataset.done === '1') return;
  const url = log.dataset.url;
  const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';
  const icons = document.getElementById('log-icons');

  const steps = () => [...log.querySelectorAll('details.log-step')];

  function icon(status) {
    const found = icons?.content.querySelector(`[data-status="${status}"] svg`);
    return found ? found.cloneNode(true) : document.createElement('span');
  }

  function makeStep(i) {
    const details = document.createElement('details');
    details.className = 'log-step';
    details.dataset.step = String(i);
    details.dataset.cursor = '0';
    const summary = document.createElement('summary');
    const name = document.createElement('span');
    name.className = 'log-step-name';
    const time = document.createElement('span');
    time.className = 'log-step-time muted';
    summary.append(icon('running'), ' ', name, time);
    const lines = document.createElement('div');
    lines.className = 'log-lines';
    details.append(summary, lines);
    log.append(details);
    document.getElementById('log-empty')?.remove();
    return details;
  }

  function updateStep(el, s, last) {
    el.querySelector('.log-step-name').textContent = s.summary;
    el.querySelector('.log-step-time').textContent = s.duration;
    if (el.dataset.status !== s.status) {
      el.dataset.status = s.status;
      el.querySelector('summary svg, summary > span:first-child')?.replaceWith(icon(s.status));
    }
    el.dataset.length = String(s.length);
    // The step running now is open, as is one that failed.
    if ((last && s.status === 'running') || s.status === 'failure') el.open = true;
  }

  function addLine(el, step, line) {
    const id = `jobstep-${step}-${line.index}`;
    const row = document.createElement('div');
    row.className = line.kind ? `log-line log-${line.kind}` : 'log-line';
    row.id = id;
    const num = document.createElement('a');
    num.className = 'log-num';
    num.href = `#${id}`;
    num.textContent = String(line.index);
    const t = new Date(line.timestamp * 1000);
    const time = document.createElement('time');
    time.className = 'log-time';
    time.dateTime = t.toISOString();
    time.textContent = t.toISOString().slice(11, 19);
    const msg = document.createElement('span');
    msg.className = 'log-msg';
    // `html` is the server's rendering of the line: every character escaped, colours as classes.
    msg.innerHTML = line.html;
    row.append(num, time, msg);
    el.querySelector('.log-lines').append(row);
  }

  let failures = 0;
  async function poll() {
    const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    const cursors = steps().map((el) => ({
      step: Number(el.dataset.step),
      cursor: Number(el.dataset.cursor),
      expanded: true,
    }));
    let data;
    try {
      const res = await fetch(url, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf },
        body: JSON.stringify({ logCursors: cursors }),
      });
      if (!res.ok) throw new Error(String(res.status));
      data = await res.json();
      failures = 0;
    } catch {
      if (++failures < 5) setTimeout(poll, 5000);
      return;
    }
    const job = data.state.currentJob;
    const head = document.querySelector('.act-job-head .run-state');
    if (head && head.dataset.status !== job.status) {
      head.dataset.status = job.status;
      head.className = `run-state ${job.status}`;
      head.replaceChildren(icon(job.status), ` ${job.detail}`);
    }
    const els = steps();
    job.steps.forEach((s, i) => updateStep(els[i] || makeStep(i), s, i === job.steps.length - 1));
    const now = steps();
    for (const sl of data.logs.stepsLog) {
      const el = now[sl.step];
      if (!el) continue;
      for (const line of sl.lines) addLine(el, sl.step, line);
      el.dataset.cursor = String(sl.cursor);
    }
    if (atEnd) window.scrollTo(0, document.body.scrollHeight);
    const behind = steps().some((el) => Number(el.dataset.cursor) < Number(el.dataset.length || 0));
    if (data.state.run.done && !behind) {
      window.location.reload();
      return;
    }
    setTimeout(poll, behind ? 200 : 1500);
  }
  setTimeout(poll, 1000);
})();
