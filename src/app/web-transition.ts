// Transitional (issue 26): the page modules not yet turned into factories that take their
// collaborators (`fooPages(deps): PageRoutes`) still read the application context as `web.ctx`.
// `Web` itself no longer carries it (web/plugin.tsx); the root hands it over here, and this file
// goes once every page module names what it uses.
import type { AppContext } from './context.js';
import type { Web } from '../web/plugin.js';

declare module '../web/plugin.js' {
  interface Web {
    /** @deprecated Only for page modules not yet converted: name the collaborators instead. */
    readonly ctx: AppContext;
  }
}

/** Gives the pages not yet converted the context they still read. */
export function withLegacyContext(web: Web, ctx: AppContext): Web {
  Object.defineProperty(web, 'ctx', { value: ctx });
  return web;
}
