import type { Workload } from '../workload.ts';
import { appendWorkload } from './append.ts';
import { chatWorkload } from './chat.ts';
import { diskWorkload } from './disk.ts';
import { restartWorkload } from './restart.ts';
import { liveWorkload } from './live.ts';
import { rssWorkload } from './rss.ts';
import { searchWorkload } from './search.ts';
import { tailWorkload } from './tail.ts';

/** Every workload, in run order. */
export const WORKLOADS: readonly Workload[] = [appendWorkload, tailWorkload, chatWorkload, restartWorkload, rssWorkload, liveWorkload, searchWorkload, diskWorkload];
