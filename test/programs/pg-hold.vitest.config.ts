// The project's vitest config (its global setup included), running only pg-hold.fixture.ts
// (not its projects: they would bring every test file back in).
import { resolve } from 'node:path';
import base from '../../vitest.config.ts';

const { projects: _projects, ...test } = base.test ?? {};
export default { ...base, root: resolve(import.meta.dirname, '../..'), test: { ...test, include: ['test/programs/pg-hold.fixture.ts'] } };
