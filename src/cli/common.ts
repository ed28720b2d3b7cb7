// The configuration as the commands of `anvil` load it.
import { loadConfig, type Config } from '../config/config.js';

/** The configuration; `overrides` are ANVIL__SECTION__KEY settings that win over the environment. */
export function config(
  opts: { config?: string },
  forServer = false,
  overrides: NodeJS.ProcessEnv = {},
): Config {
  return loadConfig({
    configPath: opts.config,
    persistSecretKey: forServer,
    env: { ...process.env, ...overrides },
  });
}
