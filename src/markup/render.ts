// The one markdown renderer (READMEs, issue and pull request text, /markdown and /markup):
// GitHub-flavoured markdown by markdown-it (tables, strikethrough, autolinks, task lists; raw HTML
// is shown as text, not interpreted), heading ids as Forgejo makes them (`user-content-` slugs),
// Forgejo's references linked (`#12` and `owner/repo#12` to issues, `@user` to accounts that
// exist, full commit ids to commits), fenced code highlighted server-side by highlight.js (class
// names only), then passed through sanitize-html's allow-list, so no script, event attribute or
// javascript: URL survives.
//
// The libraries (some 40 MB once loaded) are loaded on the first render, not at start-up: a
// server that only serves the API, git or packages never pays for them.
import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';
import type TaskLists from 'markdown-it-task-lists';
import type { HLJSApi } from 'highlight.js';
import type MarkdownIt from 'markdown-it';
import type Anchor from 'markdown-it-anchor';
import type SanitizeHtml from 'sanitize-html';

type Md = InstanceType<typeof MarkdownIt>;
type Token = ReturnType<Md['parse']>[number];
type CoreRule = Parameters<Md['core']['ruler']['push']>[1];
type CoreState = Parameters<CoreRule>[0];

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** What the references of a text link to. */
export interface RenderOptions {
  /** Newlines are line breaks (comments, as Forgejo renders them). */
  breaks?: boolean;
  /** The site's root URL (ends in /): references are linked under it. */
  rootUrl?: string;
  /** The repository `#12` and commit ids refer to. */
  repo?: { owner: string; name: string };
  /** Lower-cased names of the accounts `@name` links to (those that exist and may be shown). */
  mentions?: ReadonlySet<string>;
}

/** Forgejo's heading ids: lower case, spaces as '-', other punctuation dropped, `user-content-` first. */
export function headingId(text: string): string {
  const slug = text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
  return `user-content-${slug}`;
}

// `#12`, `owner/repo#12`, `@name` and 40- or 64-digit commit ids, each standing alone.
const REFERENCE =
  /(^|[^\w/@.-])(?:(?:([A-Za-z0-9][\w.-]*)\/([\w.-]+))?#(\d+)|@([A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)|([0-9a-f]{40}|[0-9a-f]{64}))(?![\w-])/g;

/** The `@names` a text mentions (lower-cased, once each), for looking them up in one query. */
export function mentionedNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(REFERENCE)) if (m[5]) names.add(m[5].toLowerCase());
  return [...names];
}

/** Replaces the text tokens of inline content with text and link tokens for their references. */
function linkReferences(md: Md): void {
  md.core.ruler.push('forgejo_references', (state: CoreState) => {
    const opts = state.env as RenderOptions;
    if (!opts.rootUrl) return;
    const root = opts.rootUrl;
    const link = (href: string, cls: string, children: Token[]): Token[] => {
      const open = new state.Token('link_open', 'a', 1);
      open.attrs = [
        ['href', href],
        ['class', cls],
      ];
      return [open, ...children, new state.Token('link_close', 'a', -1)];
    };
    const text = (content: string): Token => {
      const t = new state.Token('text', '', 0);
      t.content = content;
      return t;
    };
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      const out: Token[] = [];
      let inLink = 0;
      for (const t of block.children) {
        if (t.type === 'link_open') inLink++;
        if (t.type === 'link_close') inLink--;
        if (t.type !== 'text' || inLink > 0) {
          out.push(t);
          continue;
        }
        let last = 0;
        for (const m of t.content.matchAll(REFERENCE)) {
          const [whole, lead = '', owner, repo, index, user, sha] = m;
          const start = m.index + lead.length;
          let replacement: Token[] | undefined;
          if (index && owner && repo) {
            replacement = link(`${root}${owner}/${repo}/issues/${index}`, 'ref-issue', [
              text(`${owner}/${repo}#${index}`),
            ]);
          } else if (index && opts.repo) {
            const { owner: o, name } = opts.repo;
            replacement = link(`${root}${o}/${name}/issues/${index}`, 'ref-issue', [text(`#${index}`)]);
          } else if (user && opts.mentions?.has(user.toLowerCase())) {
            replacement = link(`${root}${user}`, 'mention', [text(`@${user}`)]);
          } else if (sha && opts.repo) {
            const code = new state.Token('code_inline', 'code', 0);
            code.content = sha.slice(0, 10);
            const { owner: o, name } = opts.repo;
            replacement = link(`${root}${o}/${name}/commit/${sha}`, 'commit', [code]);
          }
          if (!replacement) continue;
          if (start > last) out.push(text(t.content.slice(last, start)));
          out.push(...replacement);
          last = m.index + whole.length;
        }
        if (last === 0) out.push(t);
        else if (last < t.content.length) out.push(text(t.content.slice(last)));
      }
      block.children = out;
    }
  });
}

function renderer(l: Pick<Libs, 'hljs' | 'MarkdownIt' | 'anchor' | 'taskLists'>, breaks: boolean): Md {
  const { hljs } = l;
  const md = new l.MarkdownIt({
    html: false,
    linkify: true,
    typographer: false,
    breaks,
    highlight(code, lang) {
      const language = lang && hljs.getLanguage(lang) ? lang : undefined;
      const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escape(code);
      return `<pre><code class="hljs${language ? ` language-${escape(language)}` : ''}">${body}</code></pre>`;
    },
  });
  md.use(l.taskLists, { enabled: false, label: false });
  md.use(l.anchor, { slugify: headingId, tabIndex: false });
  linkReferences(md);
  return md;
}

const sanitizeOptions = (sanitizeHtml: typeof SanitizeHtml): SanitizeHtml.IOptions => ({
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
    a: ['href', 'title', 'rel', 'id', 'class'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    code: ['class'],
    span: ['class'],
    pre: ['class'],
    th: ['align', 'style'],
    td: ['align', 'style'],
    input: ['type', 'checked', 'disabled'],
    '*': ['id'],
  },
  allowedClasses: {
    a: ['ref-issue', 'mention', 'commit'],
    code: ['hljs', /^language-[\w+#.-]+$/],
    span: [/^hljs-[\w-]+$/, /^[a-z]+_$/, /^language-[\w-]+$/],
    li: ['task-list-item'],
    ul: ['contains-task-list'],
    ol: ['contains-task-list'],
    input: ['task-list-item-checkbox'],
  },
  allowedStyles: { '*': { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  transformTags: {
    // Links out of the site do not pass reputation; references (a class of their own) stay in it.
    a: (tagName, attribs) => ({
      tagName,
      attribs:
        /^https?:/i.test(attribs['href'] ?? '') && !attribs['class']
          ? { ...attribs, rel: 'nofollow noopener' }
          : attribs,
    }),
  },
});

interface Libs {
  hljs: HLJSApi;
  MarkdownIt: typeof MarkdownIt;
  anchor: typeof Anchor;
  taskLists: typeof TaskLists;
  sanitizeHtml: typeof SanitizeHtml;
}

let loaded: { hljs: HLJSApi; documents: Md; comments: Md; sanitize: (html: string) => string } | undefined;

/** The renderers, built on first use. */
function libs() {
  if (loaded) return loaded;
  const load = createRequire(import.meta.url);
  const l: Libs = {
    hljs: load('highlight.js') as HLJSApi,
    MarkdownIt: load('markdown-it') as typeof MarkdownIt,
    anchor: (load('markdown-it-anchor') as { default: typeof Anchor }).default,
    taskLists: load('markdown-it-task-lists') as typeof TaskLists,
    sanitizeHtml: load('sanitize-html') as typeof SanitizeHtml,
  };
  const options = sanitizeOptions(l.sanitizeHtml);
  loaded = {
    hljs: l.hljs,
    documents: renderer(l, false),
    comments: renderer(l, true),
    sanitize: (html) => l.sanitizeHtml(html, options),
  };
  return loaded;
}

/** Markdown to sanitized HTML, references linked as `opts` allows. */
export function renderMarkdown(text: string, opts: RenderOptions = {}): string {
  const { comments, documents, sanitize } = libs();
  const md = opts.breaks ? comments : documents;
  return sanitize(md.render(text, { ...opts }));
}

/**
 * Highlighted files by content id: a blob's highlighting never changes, and highlighting a large
 * file costs far more than reading it. Bounded by the size of the HTML kept.
 */
const highlighted = new LRUCache<string, string[]>({
  maxSize: 64 * 1024 * 1024,
  sizeCalculation: (lines) => lines.reduce((n, l) => n + l.length + 16, 16),
});

/**
 * Source code to highlighted, escaped HTML lines (one string per line, spans closed per line).
 * `contentId` (a blob id) lets the result be kept for the next view of the same content.
 */
export function highlightLines(code: string, fileName: string, contentId?: string): string[] {
  if (!contentId) return highlight(code, fileName);
  const key = `${contentId}\0${fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase()}`;
  let lines = highlighted.get(key);
  if (!lines) {
    lines = highlight(code, fileName);
    highlighted.set(key, lines);
  }
  return lines;
}

/** Larger files are shown as plain text (as Forgejo's highlighter does). */
const HIGHLIGHT_MAX = 1024 * 1024;

function highlight(code: string, fileName: string): string[] {
  const ext = fileName.includes('.') ? fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase() : '';
  const { hljs } = libs();
  const language = ext && code.length <= HIGHLIGHT_MAX && hljs.getLanguage(ext) ? ext : undefined;
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
