// The project's vitest config (its global setup included), running only pg-hold.fixture.ts.
import { resolve } from 'node:path';
import base from '../../vitest.config.ts';

export default { ...base, root: resolve(import.meta.dirname, '../..'), test: { ...base.test, include: ['test/programs/pg-hold.fixture.ts'] } };
