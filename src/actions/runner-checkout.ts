// `uses: actions/checkout@...` as `anvil runner` does it, natively: the repository (or
// `with.repository`) at the run's commit (or `with.ref`), cloned from Anvil over HTTP with the job
// token, which stays in the checkout's git configuration (as actions/checkout leaves it) so later
// steps can push.
import fs from 'node:fs';
import path from 'node:path';
import type { ExprContext, Value } from './expressions.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import type { JobHost, StepOutcome } from './runner-types.js';

export async function checkout(
  host: JobHost,
  withArgs: Record<string, string>,
  ctx: ExprContext,
  workspace: string,
  env: NodeJS.ProcessEnv,
  deadline: number,
): Promise<StepOutcome> {
  const github = ctx.contexts['github'] as Record<string, Value>;
  const secrets = (ctx.contexts['secrets'] ?? {}) as Record<string, string>;
  const server = String(github['server_url'] ?? '');
  const repository = withArgs['repository'] || String(github['repository'] ?? '');
  const token = withArgs['token'] || secrets['GITHUB_TOKEN'] || String(github['token'] ?? '');
  const dest = path.resolve(workspace, withArgs['path'] ?? '.');
  if (dest !== workspace && !dest.startsWith(workspace + path.sep))
    throw new Error('checkout path must be inside the workspace');
  fs.mkdirSync(dest, { recursive: true });
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  host.addMask(basic);
  const sameRepo = repository === github['repository'];
  const wanted = withArgs['ref'] || (sameRepo ? String(github['sha'] ?? '') : '');
  const ref = sameRepo && !withArgs['ref'] ? String(github['ref'] ?? '') : '';
  const depth =
    withArgs['fetch-depth'] === '0' ? [] : [`--depth=${Number(withArgs['fetch-depth'] || 1) || 1}`];
  const gitEnv = { ...env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
  const git = (args: string[]) => host.exec(['git', ...args], dest, gitEnv, deadline);
  const url = `${server}/${repository}.git`;
  host.log(`Checking out ${repository} (${wanted || 'default branch'}) from ${url}`);
  const steps: string[][] = [
    ['init', '-q'],
    ['config', '--local', `http.${server}/.extraheader`, `AUTHORIZATION: basic ${basic}`],
    ['remote', 'add', 'origin', url],
  ];
  if (ref.startsWith('refs/heads/') && /^[0-9a-f]{40,64}$/.test(wanted)) {
    const branch = ref.slice('refs/heads/'.length);
    steps.push(['fetch', '--no-tags', '-q', ...depth, 'origin', `+${wanted}:refs/remotes/origin/${branch}`]);
    steps.push(['checkout', '-q', '-B', branch, `refs/remotes/origin/${branch}`]);
  } else {
    steps.push(['fetch', '--no-tags', '-q', ...depth, 'origin', wanted || 'HEAD']);
    steps.push(['checkout', '-q', '--detach', 'FETCH_HEAD']);
  }
  for (const args of steps) {
    const code = await git(args);
    if (code !== 0) {
      host.log(`::error::git ${args[0]} failed with exit code ${code}`);
      return { result: Result.FAILURE, outputs: {} };
    }
  }
  return { result: Result.SUCCESS, outputs: {} };
}
