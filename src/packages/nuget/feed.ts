// The answers of the NuGet registry, shaped as Forgejo's: the v2 OData/Atom documents (service
// document, $metadata, feeds and entries of V2FeedPackage) and the v3 JSON resources (service
// index, search, registration index and leaves, version lists). `base` is
// {ROOT_URL}api/packages/{owner}/nuget. Pure functions: no HTTP, no SQL.
import { compareSemver } from '../semver.js';
import type { NugetMetadata } from './nuspec.js';

/** A version as the answers need it. */
export interface NugetVersion {
  name: string;
  version: string;
  metadata: NugetMetadata;
  createdUnix: number;
  downloads: number;
  size: number;
}

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace('.000Z', 'Z');
const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n';
const ATOM = 'http://www.w3.org/2005/Atom';
const NS_D = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
const NS_M = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

/** Orders versions as NuGet does (semantic versions; four-segment ones compared segment-wise). */
export function compareNugetVersions(a: string, b: string): number {
  const core = (v: string) => v.split(/[-+]/)[0]!.split('.').map(Number);
  const x = core(a);
  const y = core(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  const strip = (v: string) => `0.0.0${v.replace(/^[^-+]*/, '')}`;
  return compareSemver(strip(a), strip(b));
}

export const links = (base: string) => ({
  registrationIndex: (id: string) => `${base}/registration/${id}/index.json`,
  registrationLeaf: (id: string, v: string) => `${base}/registration/${id}/${v}.json`,
  download: (id: string, v: string) => `${base}/package/${id}/${v}/${id}.${v}.nupkg`,
  entry: (id: string, v: string) => `${base}/Packages(Id='${id}',Version='${v}')`,
});

// v2

export function serviceDocument(base: string): string {
  return (
    XML_HEADER +
    `<service xml:base="${esc(base)}" xmlns="http://www.w3.org/2007/app" xmlns:atom="${ATOM}">` +
    '<workspace><atom:title type="text">Default</atom:title>' +
    '<collection href="Packages"><atom:title type="text">Packages</atom:title></collection>' +
    '</workspace></service>'
  );
}

const PROPERTIES: Array<[string, string, boolean?]> = [
  ['Id', 'Edm.String'],
  ['Version', 'Edm.String'],
  ['NormalizedVersion', 'Edm.String', true],
  ['Authors', 'Edm.String', true],
  ['Created', 'Edm.DateTime'],
  ['Dependencies', 'Edm.String'],
  ['Description', 'Edm.String'],
  ['DownloadCount', 'Edm.Int64'],
  ['LastUpdated', 'Edm.DateTime'],
  ['Published', 'Edm.DateTime'],
  ['PackageSize', 'Edm.Int64'],
  ['ProjectUrl', 'Edm.String', true],
  ['ReleaseNotes', 'Edm.String', true],
  ['RequireLicenseAcceptance', 'Edm.Boolean'],
  ['Title', 'Edm.String', true],
  ['VersionDownloadCount', 'Edm.Int64'],
];

/** The $metadata document (the EDMX of V2FeedPackage and the Search and FindPackagesById functions). */
export function metadataDocument(): string {
  const props = PROPERTIES.map(
    ([name, type, nullable]) =>
      `<Property Name="${name}" Type="${type}" Nullable="${nullable ? 'true' : 'false'}"/>`,
  ).join('');
  const fn = (name: string, param: string) =>
    `<FunctionImport Name="${name}" ReturnType="Collection(NuGetGallery.OData.V2FeedPackage)" EntitySet="Packages">` +
    `<Parameter Name="${param}" Type="Edm.String"/></FunctionImport>`;
  return (
    XML_HEADER +
    '<edmx:Edmx xmlns:edmx="http://schemas.microsoft.com/ado/2007/06/edmx" Version="1.0">' +
    `<edmx:DataServices xmlns:m="${NS_M}" m:DataServiceVersion="2.0" m:MaxDataServiceVersion="2.0">` +
    '<Schema xmlns="http://schemas.microsoft.com/ado/2006/04/edm" Namespace="NuGetGallery.OData">' +
    '<EntityType Name="V2FeedPackage" m:HasStream="true"><Key><PropertyRef Name="Id"/><PropertyRef Name="Version"/></Key>' +
    props +
    '</EntityType></Schema>' +
    '<Schema xmlns="http://schemas.microsoft.com/ado/2006/04/edm" Namespace="NuGetGallery">' +
    '<EntityContainer Name="V2FeedContext" m:IsDefaultEntityContainer="true">' +
    '<EntitySet Name="Packages" EntityType="NuGetGallery.OData.V2FeedPackage"/>' +
    fn('Search', 'searchTerm') +
    fn('FindPackagesById', 'id') +
    '</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>'
  );
}

/** `id:version:framework` of every dependency, `|`-separated (the v2 Dependencies property). */
export function dependencyString(m: NugetMetadata): string {
  return Object.entries(m.dependencies)
    .flatMap(([framework, deps]) => deps.map((d) => `${d.id}:${d.version}:${framework}`))
    .join('|');
}

function entry(base: string, v: NugetVersion, withNamespaces: boolean): string {
  const l = links(base);
  const id = esc(l.entry(v.name, v.version));
  const created = iso(v.createdUnix);
  const date = `<d:Created m:type="Edm.DateTime">${created}</d:Created>`;
  const m = v.metadata;
  const ns = withNamespaces
    ? ` xmlns="${ATOM}" xmlns:d="${NS_D}" xmlns:m="${NS_M}" xml:base="${esc(base)}"`
    : '';
  return (
    `<entry${ns}><id>${id}</id>` +
    '<category term="NuGetGallery.OData.V2FeedPackage" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme"></category>' +
    `<link rel="self" href="${id}"></link><link rel="edit" href="${id}"></link>` +
    `<title type="text">${esc(v.name)}</title><updated>${created}</updated>` +
    `<author><name>${esc(m.authors)}</name></author><summary></summary>` +
    '<m:properties>' +
    `<d:Version>${esc(v.version)}</d:Version><d:NormalizedVersion>${esc(v.version)}</d:NormalizedVersion>` +
    `<d:Authors>${esc(m.authors)}</d:Authors><d:Dependencies>${esc(dependencyString(m))}</d:Dependencies>` +
    `<d:Description>${esc(m.description)}</d:Description>` +
    `<d:VersionDownloadCount m:type="Edm.Int64">${v.downloads}</d:VersionDownloadCount>` +
    `<d:DownloadCount m:type="Edm.Int64">${v.downloads}</d:DownloadCount>` +
    `<d:PackageSize m:type="Edm.Int64">${v.size}</d:PackageSize>` +
    date +
    date.replaceAll('d:Created', 'd:LastUpdated') +
    date.replaceAll('d:Created', 'd:Published') +
    (m.project_url ? `<d:ProjectUrl>${esc(m.project_url)}</d:ProjectUrl>` : '') +
    (m.release_notes ? `<d:ReleaseNotes>${esc(m.release_notes)}</d:ReleaseNotes>` : '') +
    `<d:RequireLicenseAcceptance m:type="Edm.Boolean">${m.require_license_acceptance}</d:RequireLicenseAcceptance>` +
    `<d:Title>${esc(v.name)}</d:Title></m:properties>` +
    // Self-closing: the NuGet client reads it with XmlReader.IsEmptyElement.
    `<content type="application/zip" src="${esc(l.download(v.name, v.version))}"/></entry>`
  );
}

/** One V2FeedPackage entry (Packages(Id=,Version=)). */
export function entryDocument(base: string, v: NugetVersion): string {
  return XML_HEADER + entry(base, v, true);
}

/** A feed of entries; `next` is the URL of the following page when there may be one. */
export function feedDocument(base: string, total: number, versions: NugetVersion[], next?: string): string {
  return (
    XML_HEADER +
    `<feed xmlns="${ATOM}" xmlns:d="${NS_D}" xmlns:m="${NS_M}" xml:base="${esc(base)}">` +
    `<id>http://schemas.datacontract.org/2004/07/</id><title></title><updated>${iso(Date.now() / 1000)}</updated>` +
    `<link rel="self" href="${esc(base)}"></link>` +
    (next ? `<link rel="next" href="${esc(next)}"></link>` : '') +
    versions.map((v) => entry(base, v, false)).join('') +
    `<m:count>${total}</m:count></feed>`
  );
}

// v3

export function serviceIndex(base: string) {
  const r = (id: string, type: string) => ({ '@id': id, '@type': type });
  return {
    version: '3.0.0',
    resources: [
      r(`${base}/query`, 'SearchQueryService'),
      r(`${base}/query`, 'SearchQueryService/3.0.0-beta'),
      r(`${base}/query`, 'SearchQueryService/3.0.0-rc'),
      r(`${base}/registration`, 'RegistrationsBaseUrl'),
      r(`${base}/registration`, 'RegistrationsBaseUrl/3.0.0-beta'),
      r(`${base}/registration`, 'RegistrationsBaseUrl/3.0.0-rc'),
      r(`${base}/package`, 'PackageBaseAddress/3.0.0'),
      r(base, 'PackagePublish/2.0.0'),
      r(`${base}/symbolpackage`, 'SymbolPackagePublish/4.9.0'),
    ],
  };
}

function dependencyGroups(m: NugetMetadata) {
  return Object.entries(m.dependencies).map(([targetFramework, deps]) => ({
    targetFramework,
    dependencies: deps.map((d) => ({ id: d.id, range: d.version })),
  }));
}

/** The registration index of a package's versions (one page holding them all). */
export function registrationIndex(base: string, versions: NugetVersion[]) {
  const l = links(base);
  const sorted = [...versions].sort((a, b) => compareNugetVersions(a.version, b.version));
  const name = sorted[0]!.name;
  const items = sorted.map((v) => ({
    '@id': l.registrationLeaf(v.name, v.version),
    packageContent: l.download(v.name, v.version),
    catalogEntry: {
      '@id': l.registrationLeaf(v.name, v.version),
      packageContent: l.download(v.name, v.version),
      id: v.name,
      version: v.version,
      description: v.metadata.description,
      releaseNotes: v.metadata.release_notes,
      authors: v.metadata.authors,
      requireLicenseAcceptance: v.metadata.require_license_acceptance,
      projectURL: v.metadata.project_url,
      dependencyGroups: dependencyGroups(v.metadata),
    },
  }));
  return {
    '@id': l.registrationIndex(name),
    '@type': ['catalog:CatalogRoot', 'PackageRegistration', 'catalog:Permalink'],
    count: 1,
    items: [
      {
        '@id': l.registrationIndex(name),
        lower: sorted[0]!.version,
        upper: sorted[sorted.length - 1]!.version,
        count: sorted.length,
        items,
      },
    ],
  };
}

export function registrationLeaf(base: string, v: NugetVersion) {
  const l = links(base);
  return {
    '@id': l.registrationLeaf(v.name, v.version),
    '@type': ['Package', 'http://schema.nuget.org/catalog#Permalink'],
    listed: true,
    packageContent: l.download(v.name, v.version),
    published: iso(v.createdUnix),
    registration: l.registrationIndex(v.name),
  };
}

/** The v3 search answer: one result per package (its versions grouped), by name. */
export function searchResult(base: string, totalHits: number, versions: NugetVersion[]) {
  const l = links(base);
  const grouped = new Map<string, NugetVersion[]>();
  for (const v of versions) grouped.set(v.name, [...(grouped.get(v.name) ?? []), v]);
  const names = [...grouped.keys()].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  return {
    totalHits,
    data: names.map((name) => {
      const vs = grouped.get(name)!;
      const latest = vs.reduce((a, b) => (compareNugetVersions(a.version, b.version) >= 0 ? a : b));
      return {
        id: latest.name,
        version: latest.version,
        versions: vs.map((v) => ({
          '@id': l.registrationLeaf(v.name, v.version),
          version: v.version,
          downloads: v.downloads,
        })),
        description: latest.metadata.description,
        authors: latest.metadata.authors,
        projectURL: latest.metadata.project_url,
        registration: l.registrationIndex(latest.name),
      };
    }),
  };
}
