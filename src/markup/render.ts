// The one markdown renderer (READMEs, issue and pull request text): GitHub-flavoured markdown by
// markdown-it (tables, strikethrough, autolinks; raw HTML is shown as text, not interpreted), fenced
// code highlighted server-side by highlight.js (class names only), then passed through
// sanitize-html's allow-list, so no script, event attribute or javascript: URL survives.
import hljs from 'highlight.js';
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const md = new MarkdownIt({
  html: false,
  linkify: true,
  typographer: false,
  highlight(code, lang) {
    const language = lang && hljs.getLanguage(lang) ? lang : undefined;
    const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escape(code);
    return `<pre><code class="hljs${language ? ` language-${escape(language)}` : ''}">${body}</code></pre>`;
  },
});

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags.filter((t) => t !== 'iframe'),
    'img',
    'del',
    's',
    'input',
    'details',
    'summary',
    'kbd',
    'sup',
    'sub',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'id'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    code: ['class'],
    span: ['class'],
    pre: ['class'],
    th: ['align', 'style'],
    td: ['align', 'style'],
    input: ['type', 'checked', 'disabled'],
    '*': ['id'],
  },
  allowedStyles: { '*': { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  transformTags: {
    a: (tagName, attribs) => ({
      tagName,
      attribs: /^https?:/i.test(attribs['href'] ?? '') ? { ...attribs, rel: 'nofollow noopener' } : attribs,
    }),
  },
};

/** Markdown to sanitized HTML. */
export function renderMarkdown(text: string): string {
  return sanitizeHtml(md.render(text), SANITIZE);
}

/** Source code to highlighted, escaped HTML lines (one string per line, spans closed per line). */
export function highlightLines(code: string, fileName: string): string[] {
  const ext = fileName.includes('.') ? fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase() : '';
  const language = ext && hljs.getLanguage(ext) ? ext : undefined;
  const html = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escape(code);
  // Spans may cross lines: close the open ones at each line end and reopen them on the next.
  const out: string[] = [];
  const open: string[] = [];
  for (const line of html.split('\n')) {
    let rendered = open.join('') + line;
    for (const m of line.matchAll(/<span[^>]*>|<\/span>/g)) {
      if (m[0] === '</span>') open.pop();
      else open.push(m[0]);
    }
    rendered += '</span>'.repeat(open.length);
    out.push(rendered);
  }
  if (out.length && out[out.length - 1] === '') out.pop();
  return out;
}
