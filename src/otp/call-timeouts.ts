/**
 * Call timeouts without a timer per call. Calls that share a timeout value expire in the
 * order they were made, so each value gets one FIFO of pending calls and one timer armed for
 * the oldest deadline. A call answered in time is only flagged; it leaves the queue when it
 * reaches the head. The timer keeps the event loop alive only while some call is pending
 * (`unref` when the queue empties), so a script does not linger after its last call.
 */

export interface Expirable {
  readonly pending: boolean;
  deadline: number;
  expire(): void;
}

export class TimeoutQueue {
  private items: (Expirable | undefined)[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(private readonly timeoutMs: number) {}

  add(call: Expirable): void {
    call.deadline = performance.now() + this.timeoutMs;
    this.dropAnswered();
    this.items.push(call);
    if (this.timer === undefined) this.arm(call.deadline);
    else this.timer.ref();
  }

  /** A call of this queue was answered: let the process exit if nothing is pending any more. */
  settled(): void {
    this.dropAnswered();
    if (this.head === this.items.length) this.timer?.unref();
  }

  private dropAnswered(): void {
    const items = this.items;
    while (this.head < items.length && (items[this.head] as Expirable).pending === false) items[this.head++] = undefined;
    if (this.head === items.length) {
      items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > items.length) {
      items.splice(0, this.head);
      this.head = 0;
    }
  }

  private arm(deadline: number): void {
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(deadline - performance.now())));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    const items = this.items;
    while (this.head < items.length) {
      const call = items[this.head] as Expirable;
      if (call.pending && call.deadline > now) break;
      items[this.head++] = undefined;
      if (call.pending) call.expire();
    }
    this.dropAnswered();
    if (this.head < items.length) this.arm((items[this.head] as Expirable).deadline);
  };
}

const queues = new Map<number, TimeoutQueue>();

/** Expire `call` after `timeoutMs` unless it is answered first. */
export function expireAfter(call: Expirable, timeoutMs: number): TimeoutQueue {
  let queue = queues.get(timeoutMs);
  if (queue === undefined) {
    queue = new TimeoutQueue(timeoutMs);
    queues.set(timeoutMs, queue);
  }
  queue.add(call);
  return queue;
}
