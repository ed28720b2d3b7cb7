// The Maven format's pure parts: the repository layout of request paths, POM metadata, and the
// generated artifact-level maven-metadata.xml. No I/O here.
import type * as FastXml from 'fast-xml-parser';
import { lazyModule } from '../../lazy.js';
import { badRequest } from '../../errors.js';

export const METADATA_FILE = 'maven-metadata.xml';
export const CHECKSUMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
export type Checksum = (typeof CHECKSUMS)[number];

/** A path below /api/packages/{owner}/maven/, in Maven's repository layout. */
export interface MavenPath {
  groupId: string;
  artifactId: string;
  /** Absent for the artifact-level maven-metadata.xml (and its checksums). */
  version?: string;
  /** The file named (with a checksum extension when one is asked for). */
  fileName: string;
  /** The file the checksum is of: `fileName` without `.sha1` etc. */
  baseName: string;
  checksum?: Checksum;
  /** maven-metadata.xml or one of its checksums. */
  isMetadata: boolean;
}

/** Maven's own rule for groupId and artifactId (its model validator's ID_REGEX). */
const ID = /^[A-Za-z0-9_.-]+$/;
/** Forgejo's characters refused in versions and file names, and control characters. */
// eslint-disable-next-line no-control-regex
const ILLEGAL = /[\\/:"<>|?*\u0000-\u001f\u007f]/;
const MAX = 255;

export const isSnapshot = (version: string) => version.endsWith('-SNAPSHOT');

function checkId(kind: string, value: string): void {
  if (!ID.test(value) || /^\.+$/.test(value) || value.length > MAX) {
    throw badRequest(`invalid Maven ${kind} [${kind}: ${value}]: letters, digits, -, _ and . only`);
  }
}

function checkFree(kind: string, value: string): void {
  if (!value || ILLEGAL.test(value) || /^\.+$/.test(value) || value !== value.trim() || value.length > MAX) {
    throw badRequest(`invalid Maven ${kind} [${kind}: ${value}]`);
  }
}

/**
 * Splits a repository path: `{group/as/path}/{artifactId}/{version}/{file}`, or
 * `{group/as/path}/{artifactId}/maven-metadata.xml[.sha1...]` (a version directory holds
 * maven-metadata.xml only for a SNAPSHOT, as in Forgejo). 400 for anything else.
 */
export function parsePath(path: string): MavenPath {
  const parts = path.split('/');
  if (parts.some((p) => p === '')) throw badRequest(`invalid Maven path [path: ${path}]: empty segment`);
  const fileName = parts.pop()!;
  const ext = /\.(md5|sha1|sha256|sha512)$/i.exec(fileName)?.[1]?.toLowerCase() as Checksum | undefined;
  const baseName = ext ? fileName.slice(0, -ext.length - 1) : fileName;
  const isMetadata = baseName === METADATA_FILE;
  let version: string | undefined;
  if (!isMetadata || (parts.length > 0 && isSnapshot(parts[parts.length - 1]!))) version = parts.pop();
  if (parts.length < 2) {
    throw badRequest(`invalid Maven path [path: ${path}]: expected {group}/{artifact}/{version}/{file}`);
  }
  const artifactId = parts.pop()!;
  for (const segment of parts) checkId('groupId', segment);
  checkId('artifactId', artifactId);
  const groupId = parts.join('.');
  if (groupId.length > MAX) throw badRequest(`invalid Maven groupId [groupId: ${groupId}]: too long`);
  if (version !== undefined) checkFree('version', version);
  checkFree('file name', fileName);
  return {
    groupId,
    artifactId,
    ...(version !== undefined ? { version } : {}),
    fileName,
    baseName,
    ...(ext ? { checksum: ext } : {}),
    isMetadata,
  };
}

/** The package name of a coordinate, as Forgejo names Maven packages. */
export const packageName = (groupId: string, artifactId: string) => `${groupId}:${artifactId}`;

/** What a POM tells about its version (Forgejo's Maven metadata, same JSON keys). */
export interface PomMetadata {
  group_id: string;
  artifact_id: string;
  name: string;
  description: string;
  project_url: string;
  licenses: string[];
  dependencies: Array<{ group_id: string; artifact_id: string; version: string }>;
}

/** fast-xml-parser, loaded with the first POM (not at start-up). */
const fastXml = lazyModule<typeof FastXml>('fast-xml-parser');
let parser: FastXml.XMLParser | undefined;
const pomParser = () =>
  (parser ??= new (fastXml().XMLParser)({
    ignoreAttributes: true,
    parseTagValue: false,
    processEntities: true,
    htmlEntities: false,
    trimValues: true,
    isArray: (name, jpath) =>
      jpath === 'project.licenses.license' || jpath === 'project.dependencies.dependency',
  }));

type Node = Record<string, unknown>;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const node = (v: unknown): Node => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const list = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : []);

/** The metadata of a POM; 400 when it is not well-formed XML with a <project> root. */
export function parsePom(xml: Buffer): PomMetadata {
  const source = xml.toString('utf8').replace(/^\uFEFF/, '');
  // A POM has no DOCTYPE; refusing one keeps entity expansion out.
  if (/<!DOCTYPE/i.test(source)) throw badRequest('the POM must not have a DOCTYPE');
  if (fastXml().XMLValidator.validate(source) !== true) throw badRequest('the POM is not well-formed XML');
  const doc = pomParser().parse(source) as Node;
  if (!('project' in doc)) throw badRequest('the POM must have a <project> root element');
  const project = node(doc['project']);
  const url = text(project['url']);
  return {
    group_id: text(project['groupId']) || text(node(project['parent'])['groupId']),
    artifact_id: text(project['artifactId']),
    name: text(project['name']),
    description: text(project['description']),
    project_url: /^https?:\/\/[^\s]+$/i.test(url) ? url : '',
    licenses: list(node(project['licenses'])['license'])
      .map((l) => text(l['name']))
      .filter((n) => n !== ''),
    dependencies: list(node(project['dependencies'])['dependency']).map((d) => ({
      group_id: text(d['groupId']),
      artifact_id: text(d['artifactId']),
      version: text(d['version']),
    })),
  };
}

const escape = (s: string) =>
  s.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!,
  );

/** `yyyyMMddHHmmss` in UTC, Maven's lastUpdated. */
function mavenTimestamp(unix: number): string {
  return new Date(unix * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * The artifact-level maven-metadata.xml: versions in the order they were created (Maven and
 * Gradle read them so), `latest` the newest, `release` the newest that is no SNAPSHOT.
 */
export function renderMetadata(
  groupId: string,
  artifactId: string,
  versions: Array<{ version: string; created_unix: number }>,
): string {
  const latest = versions[versions.length - 1];
  const release = [...versions].reverse().find((v) => !isSnapshot(v.version));
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<metadata>',
    `  <groupId>${escape(groupId)}</groupId>`,
    `  <artifactId>${escape(artifactId)}</artifactId>`,
    '  <versioning>',
  ];
  if (latest) lines.push(`    <latest>${escape(latest.version)}</latest>`);
  if (release) lines.push(`    <release>${escape(release.version)}</release>`);
  lines.push('    <versions>');
  for (const v of versions) lines.push(`      <version>${escape(v.version)}</version>`);
  lines.push('    </versions>');
  if (latest) lines.push(`    <lastUpdated>${mavenTimestamp(latest.created_unix)}</lastUpdated>`);
  lines.push('  </versioning>', '</metadata>', '');
  return lines.join('\n');
}

/**
 * For a SNAPSHOT file asked for by its plain name (`lib-1.0-SNAPSHOT.jar`), the timestamped
 * name pattern of its builds (`lib-1.0-20240101.120000-3.jar`), capturing the build number.
 */
export function snapshotPattern(artifactId: string, version: string, fileName: string): RegExp | undefined {
  const plain = `${artifactId}-${version}`;
  if (!isSnapshot(version) || !fileName.toLowerCase().startsWith(plain.toLowerCase())) return undefined;
  const rest = fileName.slice(plain.length);
  const base = version.slice(0, -'-SNAPSHOT'.length);
  const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${quote(`${artifactId}-${base}-`)}\\d{8}\\.\\d{6}-(\\d+)${quote(rest)}$`, 'i');
}
