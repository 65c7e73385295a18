/** The supervisors' clock (restart intensity): monotonic by default (src/clock.ts). */
export { monotonicClock, type Clock } from '../clock.ts';
