/**
 * A fresh npm project that installs Mnemo the way a user does, without a network: `npm pack`
 * of this checkout (prepack builds dist/), then `npm ci --offline` of a project whose lock
 * file is cut from this repository's own package-lock.json. npm ci filled the npm cache with
 * exactly those tarballs, and npm ci looks them up by integrity, so nothing is fetched.
 *
 * The consumer's lock holds the tarball, every package Mnemo's `dependencies` (and optional
 * dependencies) reach, and the extra packages the test asks for (typescript, @types/node, the
 * LangGraph peers), each at the place and version this repository's lock has it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));

interface LockEntry {
  version?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [key: string]: unknown;
}

interface Lock {
  packages: Record<string, LockEntry>;
}

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

/** `npm pack` of the checkout into `dir`; returns the tarball's path. */
export function packCheckout(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: REPO,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  const [packed] = JSON.parse(out.slice(out.indexOf('['))) as [{ filename: string }];
  return join(dir, packed.filename);
}

/** Where `name` resolves from the package at lock path `from` (Node's lookup, in lock paths). */
function locate(packages: Lock['packages'], from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

/**
 * Writes package.json and package-lock.json for a project that depends on the tarball and on
 * `extras` (names in this repository's lock), then runs `npm ci --offline` there.
 */
export function installConsumer(dir: string, tarball: string, extras: readonly string[], type: 'module' | 'commonjs'): void {
  mkdirSync(dir, { recursive: true });
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as Lock;
  const mnemo = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as PackageJson;
  const src = repoLock.packages;
  const packages: Lock['packages'] = {};

  const visit = (path: string): void => {
    if (packages[path] !== undefined) return;
    const entry = src[path];
    if (entry === undefined) throw new Error(`${path} is not in package-lock.json`);
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    packages[path] = kept;
    const deps = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const name of Object.keys(deps)) {
      const at = locate(src, path, name);
      if (at !== undefined) visit(at);
      else if (entry.optionalDependencies?.[name] === undefined) throw new Error(`${name} (for ${path}) is not in the lock`);
    }
  };

  const tarballSpec = `file:${tarball}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const { dependencies = {}, optionalDependencies = {} } = mnemo;
  for (const name of [...Object.keys(dependencies), ...Object.keys(optionalDependencies)]) {
    const at = locate(src, '', name);
    if (at !== undefined) visit(at);
  }
  for (const name of extras) visit(`node_modules/${name}`);

  const rootDeps: Record<string, string> = { mnemo: tarballSpec };
  for (const name of extras) rootDeps[name] = src[`node_modules/${name}`]?.version ?? '*';
  packages['node_modules/mnemo'] = {
    version: mnemo.version,
    resolved: tarballSpec,
    integrity,
    dependencies,
    ...(Object.keys(optionalDependencies).length > 0 ? { optionalDependencies } : {}),
    ...(mnemo['peerDependencies'] !== undefined ? { peerDependencies: mnemo['peerDependencies'] as Record<string, string> } : {}),
    ...(mnemo['peerDependenciesMeta'] !== undefined ? { peerDependenciesMeta: mnemo['peerDependenciesMeta'] } : {}),
    ...(mnemo['bin'] !== undefined ? { bin: mnemo['bin'] } : {}),
    ...(mnemo['engines'] !== undefined ? { engines: mnemo['engines'] } : {}),
  };
  const pkg = { name: 'mnemo-consumer', version: '1.0.0', private: true, type, dependencies: rootDeps };
  packages[''] = { name: pkg.name, version: pkg.version, dependencies: rootDeps };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
  execFileSync('npm', ['ci', '--offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
}

/** Every installed package's name, version and `engines.node` (nested ones included). */
export function installedPackages(dir: string): { name: string; version: string; node: string | undefined }[] {
  const found: { name: string; version: string; node: string | undefined }[] = [];
  const walk = (modules: string): void => {
    let names: string[];
    try {
      names = readdirSync(modules);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      if (name.startsWith('@')) {
        for (const sub of readdirSync(join(modules, name))) visitPackage(join(modules, name, sub));
      } else visitPackage(join(modules, name));
    }
  };
  const visitPackage = (path: string): void => {
    let pkg: { name?: string; version?: string; engines?: { node?: string } };
    try {
      pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as typeof pkg;
    } catch {
      return;
    }
    found.push({ name: pkg.name ?? path, version: pkg.version ?? '?', node: pkg.engines?.node });
    walk(join(path, 'node_modules'));
  };
  walk(resolve(dir, 'node_modules'));
  return found;
}
