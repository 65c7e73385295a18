/**
 * How a gen server receives calls and infos: wrapped, so its logic can tell them from casts
 * (which arrive bare) without inspecting user fields. Machines never see these.
 */
import type { From } from './from.ts';
import type { Message } from './pid.ts';

export class CallEnvelope {
  constructor(
    readonly type: string,
    readonly request: Message,
    readonly from: From,
  ) {}
}

export class InfoEnvelope {
  readonly type: string;
  constructor(readonly message: Message) {
    this.type = message.type;
  }
}
