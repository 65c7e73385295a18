import type { Workload } from '../workload.ts';
import { appendWorkload } from './append.ts';
import { chatWorkload } from './chat.ts';
import { commitWorkload } from './commit.ts';
import { diskWorkload } from './disk.ts';
import { restartWorkload } from './restart.ts';
import { startupWorkload } from './startup.ts';
import { liveWorkload } from './live.ts';
import { rssWorkload } from './rss.ts';
import { searchWorkload } from './search.ts';
import { rankedWorkload } from './ranked.ts';
import { indexBuildWorkload } from './index-build.ts';
import { tailWorkload } from './tail.ts';
import { turnFsyncsWorkload } from './turn-fsyncs.ts';
import { turnCostWorkload } from './turn-cost.ts';
import { upkeepWorkload } from './upkeep.ts';

/** Every workload, in run order. */
export const WORKLOADS: readonly Workload[] = [
  appendWorkload,
  tailWorkload,
  chatWorkload,
  restartWorkload,
  startupWorkload,
  rssWorkload,
  liveWorkload,
  searchWorkload,
  diskWorkload,
  commitWorkload,
  turnFsyncsWorkload,
  rankedWorkload,
  indexBuildWorkload,
  upkeepWorkload,
  turnCostWorkload,
];
