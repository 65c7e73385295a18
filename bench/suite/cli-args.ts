import { fileURLToPath } from 'node:url';
import { WORKLOAD_IDS, type WorkloadId } from './result-types.ts';
import { ADAPTER_IDS, type AdapterId } from './types.ts';

/**
 * The command line of `npm run bench`. Kept free of the stores' modules, so a bad option is
 * refused before anything heavy loads.
 */
export interface CliOptions {
  mode: 'quick' | 'full';
  only?: WorkloadId[];
  adapters?: AdapterId[];
  outDir: string;
  /** The ranked-search workload's corpus size, when not the mode's. */
  rankedSize?: number;
  help: boolean;
}

export const USAGE = `usage: npm run bench -- [--quick|--full] [--only w1,w2] [--adapters a1,a2] [--out dir]
  --quick       small sizes, under two minutes (CI smoke); default is --full (the issue's sizes)
  --only        workloads: ${WORKLOAD_IDS.join(', ')}
  --adapters    stores: ${ADAPTER_IDS.join(', ')}
  --out         results directory (default bench/results)
  --ranked-size corpus of the ranked workload (default 1000000; --quick 20000)
`;

export class UsageError extends Error {}

function listOf<T extends string>(value: string, known: readonly T[], what: string): T[] {
  return value.split(',').map((raw) => {
    const s = raw.trim();
    if (!(known as readonly string[]).includes(s)) throw new UsageError(`unknown ${what} '${s}' (one of: ${known.join(', ')})`);
    return s as T;
  });
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const options: CliOptions = { mode: 'full', outDir: fileURLToPath(new URL('../results', import.meta.url)), help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--quick') options.mode = 'quick';
    else if (arg === '--full') options.mode = 'full';
    else if (arg === '--only') options.only = [...(options.only ?? []), ...listOf(value(), WORKLOAD_IDS, 'workload')];
    else if (arg === '--adapters') options.adapters = [...(options.adapters ?? []), ...listOf(value(), ADAPTER_IDS, 'adapter')];
    else if (arg === '--out') options.outDir = value();
    else if (arg === '--ranked-size') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1000) throw new UsageError('--ranked-size must be an integer of at least 1000');
      options.rankedSize = n;
    }
    else if (arg === '--help' || arg === '-h') options.help = true;
    else throw new UsageError(`unknown option ${arg}`);
  }
  return options;
}
