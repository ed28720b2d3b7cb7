// The install commands a package's page shows for each format Anvil serves (what people copy), built
// from the owner's registry URL under /api/packages/{owner}/{type}.
import type { VNode } from 'preact';

export interface InstallTarget {
  /** The site's root URL without a trailing slash. */
  root: string;
  owner: string;
  type: string;
  name: string;
  version: string;
}

/** Each block: a caption and the text to copy. */
export function installCommands(t: InstallTarget): { caption: string; code: string }[] {
  const reg = `${t.root}/api/packages/${t.owner}/${t.type}`;
  const host = t.root.replace(/^https?:\/\//, '');
  const { name, version } = t;
  switch (t.type) {
    case 'npm': {
      const scope = name.startsWith('@') ? name.split('/')[0] : '';
      const key = scope ? `${scope}:registry` : 'registry';
      return [
        { caption: 'Registry setup (.npmrc)', code: `${key}=${reg}/` },
        { caption: 'Install', code: `npm install ${name}@${version}` },
      ];
    }
    case 'pypi':
      return [
        {
          caption: 'Install with pip',
          code: `pip install --index-url ${reg}/simple/ ${name}==${version}`,
        },
      ];
    case 'maven': {
      const [group = name, artifact = name] = name.split(':');
      return [
        {
          caption: 'Registry setup (pom.xml)',
          code: `<repositories>\n  <repository>\n    <id>anvil</id>\n    <url>${reg}</url>\n  </repository>\n</repositories>`,
        },
        {
          caption: 'Dependency (pom.xml)',
          code: `<dependency>\n  <groupId>${group}</groupId>\n  <artifactId>${artifact}</artifactId>\n  <version>${version}</version>\n</dependency>`,
        },
        {
          caption: 'Install',
          code: `mvn dependency:get -DremoteRepositories=${reg} -Dartifact=${group}:${artifact}:${version}`,
        },
      ];
    }
    case 'cargo':
      return [
        {
          caption: 'Registry setup (~/.cargo/config.toml)',
          code: `[registries.anvil]\nindex = "sparse+${reg}/"`,
        },
        { caption: 'Install', code: `cargo add ${name}@${version} --registry anvil` },
      ];
    case 'conda':
      return [{ caption: 'Install', code: `conda install --channel ${reg} ${name}=${version}` }];
    case 'container':
      return [
        { caption: 'Pull with docker', code: `docker pull ${host}/${t.owner}/${name}:${version}` },
        { caption: 'Pull with podman', code: `podman pull ${host}/${t.owner}/${name}:${version}` },
      ];
    case 'composer':
      return [
        {
          caption: 'Registry setup (composer.json)',
          code: `{"repositories": [{"type": "composer", "url": "${reg}"}]}`,
        },
        { caption: 'Install', code: `composer require ${name}:${version}` },
      ];
    case 'go':
      return [{ caption: 'Install', code: `GOPROXY=${reg} go install ${name}@${version}` }];
    case 'debian':
      return [
        {
          caption: 'Registry setup',
          code: `echo "deb ${reg} <distribution> <component>" | sudo tee -a /etc/apt/sources.list.d/anvil.list\nsudo curl ${reg}/repository.key -o /etc/apt/trusted.gpg.d/anvil.asc\nsudo apt update`,
        },
        { caption: 'Install', code: `sudo apt install ${name}=${version}` },
      ];
    case 'conan':
      return [
        { caption: 'Registry setup', code: `conan remote add anvil ${reg}` },
        { caption: 'Install', code: `conan install --remote anvil --requires ${name}/${version}` },
      ];
    case 'alpine':
      return [
        {
          caption: 'Registry setup',
          code: `cd /etc/apk/keys && curl -JO ${reg}/key\necho "${reg}/<branch>/<repository>" >> /etc/apk/repositories\napk update`,
        },
        { caption: 'Install', code: `apk add ${name}=${version}` },
      ];
    case 'alt':
      return [
        {
          caption: 'Registry setup (root group; a group `g/h`: g/h.repo)',
          code: `sudo apt-repo add rpm ${reg}/alt.repo <architecture> classic\nsudo apt-get update`,
        },
        { caption: 'Install', code: `sudo apt-get install ${name}` },
      ];
    case 'nuget':
      return [
        { caption: 'Registry setup', code: `dotnet nuget add source --name anvil ${reg}/index.json` },
        { caption: 'Install', code: `dotnet add package --source anvil --version ${version} ${name}` },
      ];
    case 'rubygems':
      return [{ caption: 'Install', code: `gem install --source "${reg}" ${name} --version "${version}"` }];
    case 'chef':
      return [
        { caption: 'Registry setup (~/.chef/config.rb)', code: `knife[:supermarket_site] = '${reg}'` },
        { caption: 'Install', code: `knife supermarket install ${name} ${version}` },
      ];
    case 'swift':
      return [
        { caption: 'Registry setup', code: `swift package-registry set ${reg}` },
        {
          caption: 'Dependency (Package.swift)',
          code: `dependencies: [\n    .package(id: "${name}", from: "${version}")\n]`,
        },
        { caption: 'Install', code: 'swift package resolve' },
      ];
    case 'generic':
      return [
        {
          caption: 'Download',
          code: `curl -OJ ${reg}/${encodeURIComponent(name)}/${encodeURIComponent(version)}/<file>`,
        },
      ];
    default:
      return [];
  }
}

export function InstallBlocks(props: { target: InstallTarget }): VNode {
  const blocks = installCommands(props.target);
  return (
    <section aria-labelledby="install-heading">
      <h3 id="install-heading">Installation</h3>
      {blocks.length === 0 ? <p class="muted">No install instructions for this type.</p> : null}
      {blocks.map((b) => (
        <div class="install">
          <p class="muted">{b.caption}</p>
          <pre>
            <code data-install={b.caption}>{b.code}</code>
          </pre>
        </div>
      ))}
    </section>
  );
}
