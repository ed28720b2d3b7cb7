// Rendering for the API (/markdown, /markdown/raw, /markup) and the web pages: the mode decides
// line breaks and whether references to issues and commits are linked; mentions are linked to the
// accounts that exist and the viewer may see, looked up in one query per document.
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import { invalidField } from '../errors.js';
import { mentionedNames, renderMarkdown } from './render.js';

export const MODES = ['markdown', 'gfm', 'comment', 'wiki', 'file'] as const;
export type Mode = (typeof MODES)[number];

/** File names rendered as markdown in `file` mode (Forgejo's markdown extensions). */
const MARKDOWN_FILE = /\.(md|markdown|mdown|mkd|mkdn|mdwn|livemd)$/i;

export interface RenderRequest {
  text: string;
  mode?: string | undefined;
  /** `owner/repo` (or a URL ending in it) that `#12` and commit ids refer to. */
  context?: string | undefined;
  filePath?: string | undefined;
}

export interface MarkupServiceDeps {
  /** Which mentioned accounts exist and the viewer may see. */
  users: Pick<UserService, 'visibleNames'>;
  rootUrl: string;
}

export class MarkupService {
  constructor(private readonly deps: MarkupServiceDeps) {}

  async render(req: RenderRequest, viewer: Viewer | null): Promise<string> {
    const mode = (req.mode || 'markdown') as Mode;
    if (!MODES.includes(mode)) throw invalidField('Mode', `unknown mode: ${req.mode}`);
    if (mode === 'file' && !MARKDOWN_FILE.test(req.filePath ?? '')) {
      const ext = /\.[^./]*$/.exec(req.filePath ?? '')?.[0] ?? '';
      throw invalidField('FilePath', `Unsupported render extension: ${ext || req.filePath || '(none)'}`);
    }
    const repo = mode === 'gfm' || mode === 'comment' || mode === 'wiki' ? repoOf(req.context) : undefined;
    const mentions = await this.deps.users.visibleNames(mentionedNames(req.text), viewer);
    return renderMarkdown(req.text, {
      breaks: mode === 'comment',
      rootUrl: this.deps.rootUrl,
      repo,
      mentions,
    });
  }
}

/** The repository a Context names: `owner/repo`, or a URL or path ending in it. */
function repoOf(context: string | undefined): { owner: string; name: string } | undefined {
  const parts = (context ?? '').replace(/\/+$/, '').split('/').filter(Boolean);
  if (parts.length < 2) return undefined;
  const [owner, name] = parts.slice(-2) as [string, string];
  const plain = /^[\w.-]+$/;
  return plain.test(owner) && plain.test(name) ? { owner, name } : undefined;
}
