/**
 * The `mnemo` command (`npm start`, `bin/mnemo.js`): reads its options (`--help` lists them),
 * then serves the HTTP API and chat page over the runtime (see `serve.ts`). `--version` prints
 * package.json's version. Exit codes: 0 after a clean stop, 1 when the start or the stop failed,
 * 2 for bad options. `mnemo compact` compacts a stopped server's data directory instead
 * (compact-command.ts); `mnemo migrate` creates or updates the tables in PostgreSQL
 * (migrate-command.ts); `mnemo mcp` serves one user's memory over stdio as an MCP server
 * (mcp-command.ts).
 *
 * The server and everything under it load only after the options are read, so `--help` and a
 * bad option answer at once instead of after loading storage, the LLM client and fastify.
 */
import { HELP_TEXT, checkExposure, parseCliOptions } from './cli-options.ts';
import { ConfigError } from './cli-errors.ts';
import { readUserTokensFile } from './user-tokens-file.ts';
import { isLoopbackHost } from '../server/loopback-host.ts';
import { loadLlmSettings } from './llm-config.ts';
import { loadEmbeddingsSettings } from './embeddings-config.ts';
import type { EmbeddingsOptions } from '../recall/embeddings/embeddings-options.ts';
import { mnemoVersion } from '../version.ts';

async function main(): Promise<void> {
  if (process.argv[2] === 'compact') {
    const { parseCompactOptions, runCompact } = await import('./compact-command.ts');
    try {
      process.exitCode = await runCompact(parseCompactOptions(process.argv.slice(3), process.env, process.cwd()));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`mnemo: ${err.message}\n`);
      process.exitCode = 2;
    }
    return;
  }
  if (process.argv[2] === 'migrate') {
    const { parseMigrateOptions, runMigrate } = await import('./migrate-command.ts');
    try {
      process.exitCode = await runMigrate(parseMigrateOptions(process.argv.slice(3), process.env));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`mnemo: ${err.message}\n`);
      process.exitCode = 2;
    }
    return;
  }
  if (process.argv[2] === 'mcp') {
    const { parseMcpOptions, runMcp } = await import('./mcp-command.ts');
    try {
      process.exitCode = await runMcp(parseMcpOptions(process.argv.slice(3), process.env, process.cwd()));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`mnemo: ${err.message}\n`);
      process.exitCode = 2;
    }
    return;
  }
  let options;
  let llm;
  let userTokens = new Map<string, string>();
  let embeddings: EmbeddingsOptions | undefined;
  try {
    // `mnemo serve ...` is `mnemo ...`: the name deployments and process managers spell out.
    options = parseCliOptions(process.argv.slice(process.argv[2] === 'serve' ? 3 : 2), process.env, process.cwd());
    if (options.help) {
      process.stdout.write(HELP_TEXT);
      return;
    }
    if (options.version) {
      process.stdout.write(`${mnemoVersion()}\n`);
      return;
    }
    if (options.userTokensPath !== null) {
      const loaded = readUserTokensFile(options.userTokensPath, options);
      for (const warning of loaded.warnings) process.stderr.write(`mnemo: warning: ${warning}\n`);
      userTokens = loaded.tokens;
    }
    checkExposure(options, userTokens.size, isLoopbackHost);
    llm = loadLlmSettings({
      configPath: options.llmConfigPath,
      required: options.llmConfigExplicit,
      env: process.env,
      overrides: { timeoutMs: options.llmTimeoutMs, maxRetries: options.llmMaxRetries, factsModel: options.factsModel },
    });
    embeddings = loadEmbeddingsSettings({ configPath: options.llmConfigPath, env: process.env, overrides: options.embeddings });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`mnemo: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const { serve, logLine } = await import('./serve.ts');
  try {
    await serve(options, llm, userTokens, embeddings);
  } catch (err) {
    logLine('error', `mnemo failed to start: ${err instanceof Error ? err.message : String(err)}`, {
      err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err,
    });
    process.exitCode = 1;
  }
}

void main();
