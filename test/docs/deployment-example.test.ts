import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkExposure, parseCliOptions } from '../../src/cli/index.ts';
import { isLoopbackHost } from '../../src/server/loopback-host.ts';

// examples/docker-compose/ cannot run here (no Docker): this keeps what it says true of the
// code. Each server's command and environment is one `mnemo` accepts, on PostgreSQL, reachable
// beyond loopback with a token; the balancer names every server; the image runs the compiled CLI.
const DIR = fileURLToPath(new URL('../../examples/docker-compose/', import.meta.url));

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  entrypoint?: string[];
}

describe('examples/docker-compose', () => {
  const compose = parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
  const servers = Object.entries(compose.services).filter(([name]) => name.startsWith('mnemo-'));

  it('runs three mnemo servers, each a command mnemo accepts, on PostgreSQL, beyond loopback with a token', () => {
    expect(servers.map(([name]) => name)).toEqual(['mnemo-1', 'mnemo-2', 'mnemo-3']);
    for (const [, service] of servers) {
      const [first, ...rest] = service.command!;
      expect(first).toBe('serve');
      const options = parseCliOptions(rest, service.environment ?? {}, '/app');
      expect(options.postgres).toEqual({ url: 'postgres://mnemo:mnemo@postgres:5432/mnemo', schema: 'mnemo' });
      expect(options.host).toBe('0.0.0.0');
      expect(options.token).not.toBeNull();
      expect(() => checkExposure(options, 0, isLoopbackHost)).not.toThrow();
    }
  });

  it('balances over every server, and builds an image whose entry point is the compiled CLI', () => {
    const nginx = readFileSync(join(DIR, 'nginx.conf'), 'utf8');
    for (const [name] of servers) expect(nginx).toContain(`server ${name}:8000`);
    const dockerfile = readFileSync(join(DIR, 'Dockerfile'), 'utf8');
    const entry = /ENTRYPOINT \["node", "([^"]+)"\]/.exec(dockerfile)?.[1];
    expect(entry).toBe('dist/esm/src/cli/main.js');
    // scripts/build.mjs writes dist/esm/src/... from src/...: the entry's source exists.
    expect(readFileSync(fileURLToPath(new URL(`../../${entry!.replace('dist/esm/', '').replace(/\.js$/, '.ts')}`, import.meta.url)), 'utf8')).toContain('main()');
  });
});
