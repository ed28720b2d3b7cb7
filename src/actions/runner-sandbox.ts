// The sandbox `anvil runner` runs a job's processes in (bubblewrap): the job's own directory
// (workspace, temp, home) read-write at the same path, a read-only view of the host's system
// (/usr, /etc, the /bin and /lib links, /opt, the Node binary), the actions cache read-only and
// the tool cache read-write, a private /tmp, /proc and /dev of its own, its own PID namespace and
// killed with the runner; the network is the host's (jobs talk to the server). Everything else
// (the runner's .runner file and data directory, other jobs' directories, /home, /root) is absent.
import fs from 'node:fs';
import path from 'node:path';

export type SandboxMode = 'bwrap' | 'none';
export const SANDBOX_MODES: SandboxMode[] = ['bwrap', 'none'];

const SYSTEM = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];

/** The path of the bwrap binary on PATH, if installed. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'bwrap');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface SandboxPaths {
  /** The job's own directory (workspace, temp, home): read-write. */
  jobDir: string;
  /** Read-only extras (the actions cache). */
  readOnly: string[];
  /** Read-write extras (the tool cache). */
  readWrite: string[];
}

const under = (p: string, dirs: string[]) => dirs.some((d) => p === d || p.startsWith(d + path.sep));

/** The bwrap arguments that run `argv` in `cwd` inside the sandbox. */
export function sandboxArgv(bwrap: string, argv: string[], cwd: string, paths: SandboxPaths): string[] {
  const args = [bwrap, '--unshare-pid', '--unshare-ipc', '--die-with-parent'];
  for (const p of SYSTEM) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  const system = SYSTEM.map((p) => fs.realpathSync.native(fs.existsSync(p) ? p : '/'));
  // The Node binary actions run with, and /etc/resolv.conf's target, when outside the system dirs.
  for (const file of [process.execPath, '/etc/resolv.conf']) {
    try {
      const real = fs.realpathSync.native(file);
      if (!under(real, system)) args.push('--ro-bind', path.dirname(real), path.dirname(real));
    } catch {
      // absent
    }
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  for (const p of paths.readOnly) if (fs.existsSync(p)) args.push('--ro-bind', p, p);
  for (const p of paths.readWrite) if (fs.existsSync(p)) args.push('--bind', p, p);
  args.push('--bind', paths.jobDir, paths.jobDir, '--chdir', cwd, '--', ...argv);
  return args;
}
