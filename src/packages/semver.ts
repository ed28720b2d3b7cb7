// Semantic versions (semver.org), as Cargo and Go modules (with a leading `v`) name their versions.

/** semver.org's regular expression. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const isSemver = (version: string) => version.length <= 256 && SEMVER.test(version);

/** Whether a valid semantic version is a pre-release (`1.0.0-rc.1`). */
export const isPrerelease = (version: string) => SEMVER.exec(version)?.[4] !== undefined;

/** Orders two valid semantic versions (build metadata ignored, pre-releases below releases). */
export function compareSemver(a: string, b: string): number {
  const parse = (v: string) => {
    const m = SEMVER.exec(v);
    if (!m) return { core: [0, 0, 0], pre: [] as string[] };
    return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! - y.core[i]!;
  if (!x.pre.length || !y.pre.length) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i]!;
    const q = y.pre[i]!;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return x.pre.length - y.pre.length;
}
